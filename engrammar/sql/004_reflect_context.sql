-- When each chat was last reflected on, so the weekly job only revisits chats that changed.
ALTER TABLE chats ADD COLUMN last_reflected_at timestamptz;

-- The short-term window's block summaries: pairs first_pair..last_pair of a chat, folded
-- into one summary. A block moves NOT_CREATED -> PENDING -> PREPARED -> ACTIVE -> ARCHIVED,
-- back to NOT_CREATED (row deleted) when its summary fails.
CREATE TABLE context_blocks (
    user_id     text NOT NULL,
    chat_id     text NOT NULL,
    block_no    integer NOT NULL,
    first_pair  integer NOT NULL,
    last_pair   integer NOT NULL,
    state       text NOT NULL CHECK (state IN ('PENDING', 'PREPARED', 'ACTIVE', 'ARCHIVED')),
    summary     text,
    tokens      integer,
    attempts    integer NOT NULL DEFAULT 0,
    error       text,
    updated_at  timestamptz NOT NULL,
    PRIMARY KEY (user_id, chat_id, block_no),
    CHECK (first_pair <= last_pair)
);
