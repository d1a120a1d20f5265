-- A per-chat counter of changes to the set of active memory vectors, so a process may keep
-- a chat's vectors in memory and know, with one key lookup, whether they are current
-- (memory.vectors). Bumped on insert and delete, and on updates that change a memory's
-- status or embedding; a recall noting what it surfaced does not bump it.
ALTER TABLE chats ADD COLUMN memories_version bigint NOT NULL DEFAULT 0;

CREATE FUNCTION memories_bump_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO chats (user_id, chat_id, memories_version)
        SELECT DISTINCT user_id, chat_id, 1 FROM new_rows
        ON CONFLICT (user_id, chat_id)
            DO UPDATE SET memories_version = chats.memories_version + 1;
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE chats c SET memories_version = c.memories_version + 1
        FROM (SELECT DISTINCT user_id, chat_id FROM old_rows) d
        WHERE c.user_id = d.user_id AND c.chat_id = d.chat_id;
    ELSE
        UPDATE chats SET memories_version = memories_version + 1
        WHERE user_id = NEW.user_id AND chat_id = NEW.chat_id;
    END IF;
    RETURN NULL;
END
$$;

-- Statement-level for inserts and deletes: one bump per chat per statement, however many
-- rows a bulk load or an erase touches.
CREATE TRIGGER memories_version_insert AFTER INSERT ON memories
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION memories_bump_version();
CREATE TRIGGER memories_version_delete AFTER DELETE ON memories
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
    EXECUTE FUNCTION memories_bump_version();
CREATE TRIGGER memories_version_update AFTER UPDATE OF status, embedding ON memories
    FOR EACH ROW
    WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.embedding IS DISTINCT FROM NEW.embedding)
    EXECUTE FUNCTION memories_bump_version();
