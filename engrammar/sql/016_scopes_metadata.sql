-- Scopes: a memory of a type the settings make user-wide (MEMORY_SCOPES__USER_WIDE) lives
-- in the user's own scope, the reserved chat id '' that no chat can take (a chat id is
-- 1-200 characters), so every per-chat structure (the covering indexes, the change log,
-- the per-process copies) serves it unchanged: recall reads the chat's scope and the
-- user's. A chat may opt out: it neither sees nor feeds the user's scope.
ALTER TABLE chats ADD COLUMN private boolean NOT NULL DEFAULT false;

-- Metadata an application attaches to what it records (topic, source, locale): a JSON
-- object, inherited by the memories drawn from the message. Memories already carry one.
ALTER TABLE messages ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}';
