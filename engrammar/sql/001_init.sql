-- The schema. Every table leads with user_id and every key is scoped to (user_id, chat_id),
-- so the tables distribute on Citus by user_id with no query crossing shards.

CREATE EXTENSION IF NOT EXISTS vector;

-- Settings of the store itself, such as the embedder its vectors came from.
CREATE TABLE store_meta (
    key   text PRIMARY KEY,
    value jsonb NOT NULL
);

-- One row per chat: the extraction watermark, and the row a worker locks to claim the chat.
CREATE TABLE chats (
    user_id            text NOT NULL,
    chat_id            text NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    extracted_through  bigint NOT NULL DEFAULT 0,
    last_extracted_at  timestamptz,
    PRIMARY KEY (user_id, chat_id)
);

-- The log: unbounded, append-only, the source of truth.
CREATE TABLE messages (
    user_id  text NOT NULL,
    chat_id  text NOT NULL,
    id       bigint GENERATED ALWAYS AS IDENTITY,
    role     text NOT NULL CHECK (role IN ('user', 'assistant', 'system')),
    content  text NOT NULL,
    at       timestamptz NOT NULL,
    PRIMARY KEY (user_id, chat_id, id)
);

CREATE TABLE memories (
    user_id             text NOT NULL,
    chat_id             text NOT NULL,
    id                  bigint GENERATED ALWAYS AS IDENTITY,
    type                text NOT NULL CHECK (type IN ('profile', 'preference', 'episodic',
                            'open_loop', 'shared_lore', 'protocol', 'reflection', 'ephemeral')),
    content             text NOT NULL,
    status              text NOT NULL DEFAULT 'active'
                            CHECK (status IN ('active', 'stale', 'archived', 'contradicted')),
    confidence          real NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    salience            real NOT NULL CHECK (salience BETWEEN 0 AND 1),
    pinned              boolean NOT NULL DEFAULT false,
    surface             text NOT NULL CHECK (surface IN ('speak', 'adapt', 'avoid', 'continue',
                            'factcheck', 'never')),
    slot                text,
    embedding           vector,
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL,
    last_reinforced_at  timestamptz,
    last_surfaced_at    timestamptz,
    due_at              timestamptz,
    status_changed_at   timestamptz,
    reinforce_count     integer NOT NULL DEFAULT 0,
    surface_count       integer NOT NULL DEFAULT 0,
    source_message_ids  bigint[] NOT NULL DEFAULT '{}',
    superseded_by       bigint,
    metadata            jsonb NOT NULL DEFAULT '{}',
    tsv                 tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED,
    PRIMARY KEY (user_id, chat_id, id)
);

-- Per-chat retrieval reads the chat's active rows only. No global HNSW index: with a user
-- filter it returns too few rows or runs slower than an exact scan of the chat's rows.
CREATE INDEX memories_active ON memories (user_id, chat_id) WHERE status = 'active';
CREATE INDEX memories_tsv ON memories USING gin (tsv);
CREATE INDEX memories_lifecycle ON memories (status, type) WHERE NOT pinned;

-- Every change to a memory, and every rejection by the gate (memory_id NULL).
CREATE TABLE memory_events (
    user_id             text NOT NULL,
    chat_id             text NOT NULL,
    id                  bigint GENERATED ALWAYS AS IDENTITY,
    memory_id           bigint,
    op                  text NOT NULL,
    before              jsonb,
    after               jsonb,
    reason              text,
    source              text NOT NULL,
    source_message_ids  bigint[] NOT NULL DEFAULT '{}',
    at                  timestamptz NOT NULL,
    PRIMARY KEY (user_id, chat_id, id)
);
CREATE INDEX memory_events_memory ON memory_events (user_id, chat_id, memory_id);

CREATE TABLE memory_links (
    user_id   text NOT NULL,
    chat_id   text NOT NULL,
    src_id    bigint NOT NULL,
    dst_id    bigint NOT NULL,
    kind      text NOT NULL CHECK (kind IN ('supersedes', 'contradicts', 'closes',
                  'derived_from')),
    at        timestamptz NOT NULL,
    PRIMARY KEY (user_id, chat_id, src_id, dst_id, kind)
);

CREATE TABLE summaries (
    user_id      text NOT NULL,
    chat_id      text NOT NULL,
    period       text NOT NULL CHECK (period IN ('day', 'week', 'month')),
    start_at     timestamptz NOT NULL,
    end_at       timestamptz NOT NULL,
    content      text NOT NULL,
    tokens       integer NOT NULL,
    -- Hash of what the summary was made from: a re-run with the same input changes nothing.
    source_hash  text NOT NULL,
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (user_id, chat_id, period, start_at)
);

CREATE TABLE job_runs (
    user_id      text NOT NULL DEFAULT '',
    id           bigint GENERATED ALWAYS AS IDENTITY,
    job          text NOT NULL,
    now_at       timestamptz NOT NULL,
    started_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    finished_at  timestamptz,
    status       text NOT NULL DEFAULT 'running',
    report       jsonb,
    PRIMARY KEY (user_id, id)
);

-- An audit of every model call, kept even when the chat's own transaction rolls back.
CREATE TABLE llm_calls (
    user_id            text NOT NULL DEFAULT '',
    chat_id            text NOT NULL DEFAULT '',
    id                 bigint GENERATED ALWAYS AS IDENTITY,
    purpose            text NOT NULL,
    model              text NOT NULL,
    request            jsonb NOT NULL,
    response           text,
    error              text,
    prompt_tokens      integer,
    completion_tokens  integer,
    duration_ms        real NOT NULL,
    at                 timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (user_id, chat_id, id)
);
