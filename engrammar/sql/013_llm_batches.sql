-- Extraction through the OpenAI Batch API (memory.batch): a batch submitted one night is
-- collected hours later, so what each request was built from is kept until then.

-- One provider batch. Like job_runs it belongs to the store, not to a user: user_id is ''.
CREATE TABLE llm_batches (
    user_id         text NOT NULL DEFAULT '',
    id              bigint GENERATED ALWAYS AS IDENTITY,
    batch_id        text,          -- the provider's id; NULL until the batch is created
    input_file_id   text,
    output_file_id  text,
    error_file_id   text,
    model           text NOT NULL,
    -- preparing (ours, before the upload), then the provider's: validating, in_progress,
    -- finalizing, completed, failed, expired, cancelling, cancelled.
    status          text NOT NULL DEFAULT 'preparing',
    now_at          timestamptz NOT NULL,   -- the submit's clock, which the prompts carry
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    collected_at    timestamptz,            -- NULL while the batch is pending
    error           text,
    PRIMARY KEY (user_id, id)
);
CREATE UNIQUE INDEX llm_batches_batch_id ON llm_batches (batch_id) WHERE batch_id IS NOT NULL;
CREATE INDEX llm_batches_pending ON llm_batches (id) WHERE collected_at IS NULL;

-- One request of a batch: one chunk of one chat's messages past its watermark.
CREATE TABLE llm_batch_requests (
    user_id           text NOT NULL,
    chat_id           text NOT NULL,
    batch             bigint NOT NULL,
    chunk             integer NOT NULL,    -- 0-based; a chat applies when all chunks answer
    chunks            integer NOT NULL,
    custom_id         text NOT NULL,
    watermark         bigint NOT NULL,     -- the chat's extracted_through at submit
    first_message_id  bigint NOT NULL,     -- this chunk's messages
    last_message_id   bigint NOT NULL,
    through           bigint NOT NULL,     -- the last message of the chat's whole range
    handles           jsonb NOT NULL,      -- {"m1": memory id, ...} as the prompt listed them
    messages          jsonb NOT NULL,      -- the prompt sent, for the audit and to compare
    -- pending, applied, discarded (the chat moved on), failed, expired, malformed
    state             text NOT NULL DEFAULT 'pending',
    error             text,
    PRIMARY KEY (user_id, chat_id, batch, chunk)
);
CREATE UNIQUE INDEX llm_batch_requests_custom_id ON llm_batch_requests (batch, custom_id);
CREATE INDEX llm_batch_requests_pending ON llm_batch_requests (user_id, chat_id)
    WHERE state = 'pending';
