-- Recall keeps each chat's active memories whole in process memory (memory.snapshot), not
-- only their vectors, and brings its copy up to date by re-reading only the memories that
-- changed. So each change row now names its memory, and a change to any column recall
-- reads counts, not only status and embedding. Noting what a recall surfaced
-- (last_surfaced_at, surface_count) still changes nothing here: it happens on every turn.
--
-- A copy knows the set of change ids it reflects. It reads the change log before the rows,
-- so a change committed late (ids are taken at insert, not at commit) shows up later as
-- an id it has not seen, and its memory is re-read then. Rows from before this migration
-- name no memory (NULL): a copy meeting one reloads the whole chat.
ALTER TABLE memory_changes ADD COLUMN memory_id bigint;
-- Lifecycle prunes only rows older than an hour (and never a chat's newest), so a row
-- still in flight when a copy was taken is not pruned before the copy can see it.
ALTER TABLE memory_changes ADD COLUMN at timestamptz NOT NULL DEFAULT now();

CREATE OR REPLACE FUNCTION memories_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO memory_changes (user_id, chat_id, memory_id)
        SELECT user_id, chat_id, id FROM new_rows;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO memory_changes (user_id, chat_id, memory_id)
        SELECT user_id, chat_id, id FROM old_rows;
    ELSE
        INSERT INTO memory_changes (user_id, chat_id, memory_id)
        VALUES (NEW.user_id, NEW.chat_id, NEW.id);
    END IF;
    RETURN NULL;
END
$$;

DROP TRIGGER memories_changed_update ON memories;
-- Every column of store.RECALL_COLUMNS, and the embedding.
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
          OR OLD.last_reinforced_at IS DISTINCT FROM NEW.last_reinforced_at)
    EXECUTE FUNCTION memories_changed();

-- What the user asked never to be brought up is now a candidate of every recall, whatever
-- the query, as avoid already was: its topics are kept out of every layer of the prompt
-- (summaries too), not only when the query happens to be near it.
DROP INDEX memories_recall_always;
CREATE INDEX memories_recall_always ON memories (user_id, chat_id) INCLUDE (id)
    WHERE status = 'active'
      AND (pinned OR type IN ('profile', 'open_loop', 'protocol')
           OR surface IN ('avoid', 'never'));
