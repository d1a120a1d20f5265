-- What each recall surfaced, so a memory just spoken about is not raised again next turn.
CREATE TABLE recalls (
    user_id     text NOT NULL,
    chat_id     text NOT NULL,
    id          bigint GENERATED ALWAYS AS IDENTITY,
    at          timestamptz NOT NULL,
    query       text NOT NULL,
    memory_ids  bigint[] NOT NULL,
    spoken_ids  bigint[] NOT NULL,
    tokens      integer NOT NULL,
    PRIMARY KEY (user_id, chat_id, id)
);
