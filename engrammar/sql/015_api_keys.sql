-- The HTTP service (engrammar.service): API keys, retried posts, per-chat settings.

-- An API key: bound to one tenant and its scopes. Only the sha256 of the token is kept;
-- the token itself is shown once, when the key is made.
CREATE TABLE api_keys (
    id          text PRIMARY KEY,
    tenant      text NOT NULL CHECK (tenant ~ '^[a-z0-9_-]{1,32}$'),
    scopes      text[] NOT NULL CHECK (scopes <@ ARRAY['read', 'write', 'admin']
                                       AND cardinality(scopes) > 0),
    token_hash  bytea NOT NULL UNIQUE,
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz
);

-- A post under an Idempotency-Key: the first one's answer, which every retry of it gets
-- back instead of storing the messages again. Leads with user_id, so a user's erase
-- takes these rows too.
CREATE TABLE idempotency_keys (
    user_id       text NOT NULL,
    chat_id       text NOT NULL,
    key           text NOT NULL,
    request_hash  text NOT NULL,
    response      jsonb NOT NULL,
    at            timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, chat_id, key)
);

-- A chat's overrides of the window's settings (ContextSettings): absent keys take the
-- process's defaults.
CREATE TABLE chat_settings (
    user_id     text NOT NULL,
    chat_id     text NOT NULL,
    overrides   jsonb NOT NULL DEFAULT '{}',
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, chat_id)
);
