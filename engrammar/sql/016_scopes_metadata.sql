-- Scopes: a memory of a type the settings make user-wide (MEMORY_SCOPES__USER_WIDE) lives
-- in the user's own scope, the reserved chat id '' that no chat can take (a chat id is
-- 1-200 characters), so every per-chat structure (the covering indexes, the change log,
-- the per-process copies) serves it unchanged: recall reads the chat's scope and the
-- user's. A chat may opt out: it neither sees nor feeds the user's scope.
ALTER TABLE chats ADD COLUMN private boolean NOT NULL DEFAULT false;

-- Metadata an application attaches to what it records (topic, source, locale): a JSON
-- object, inherited by the memories drawn from the message. Memories already carry one.
ALTER TABLE messages ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}';

-- A memory's app metadata: inherited from the messages it rests on (their metadata merged,
-- a later message's value winning), apart from the library's own ``metadata`` (source,
-- closing reason), so an app's keys never collide with the library's. Recall filters on
-- it within the chat's own rows (the per-chat indexes bound every scan to the chat), so
-- recall reads it and a change to it is a change the per-process copies must see.
ALTER TABLE memories ADD COLUMN app_metadata jsonb NOT NULL DEFAULT '{}';

DROP TRIGGER memories_changed_update ON memories;
CREATE TRIGGER memories_changed_update AFTER UPDATE ON memories
    FOR EACH ROW
    WHEN (OLD.status IS DISTINCT FROM NEW.status
          OR OLD.embedding IS DISTINCT FROM NEW.embedding
          OR OLD.type IS DISTINCT FROM NEW.type
          OR OLD.surface IS DISTINCT FROM NEW.surface
          OR OLD.content IS DISTINCT FROM NEW.content
          OR OLD.pinned IS DISTINCT FROM NEW.pinned
          OR OLD.salience IS DISTINCT FROM NEW.salience
          OR OLD.confidence IS DISTINCT FROM NEW.confidence
          OR OLD.due_at IS DISTINCT FROM NEW.due_at
          OR OLD.created_at IS DISTINCT FROM NEW.created_at
          OR OLD.updated_at IS DISTINCT FROM NEW.updated_at
          OR OLD.last_reinforced_at IS DISTINCT FROM NEW.last_reinforced_at
          OR OLD.source_message_ids IS DISTINCT FROM NEW.source_message_ids
          OR OLD.app_metadata IS DISTINCT FROM NEW.app_metadata)
    EXECUTE FUNCTION memories_changed();
