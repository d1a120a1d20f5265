-- A per-chat change counter of the set of active memory vectors, so a process may keep a
-- chat's vectors in memory and know, with one index lookup, whether they are current
-- (memory.vectors). Each insert, delete, or update of a memory's status or embedding
-- appends a row here; the chat's version is its newest row's id. Appending takes no lock on
-- any shared row, so writers of one chat (extraction, lifecycle, an admin's apply) never
-- wait on or deadlock with each other through it. Lifecycle prunes all but the newest row
-- of each chat. A recall noting what it surfaced changes none of these columns.
CREATE TABLE memory_changes (
    user_id  text NOT NULL,
    chat_id  text NOT NULL,
    id       bigint GENERATED ALWAYS AS IDENTITY,
    PRIMARY KEY (user_id, chat_id, id)
);

CREATE FUNCTION memories_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO memory_changes (user_id, chat_id)
        SELECT DISTINCT user_id, chat_id FROM new_rows;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO memory_changes (user_id, chat_id)
        SELECT DISTINCT user_id, chat_id FROM old_rows;
    ELSE
        INSERT INTO memory_changes (user_id, chat_id) VALUES (NEW.user_id, NEW.chat_id);
    END IF;
    RETURN NULL;
END
$$;

-- Statement-level for inserts and deletes: one row per chat per statement, however many
-- rows a bulk load or an erase touches.
CREATE TRIGGER memories_changed_insert AFTER INSERT ON memories
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION memories_changed();
CREATE TRIGGER memories_changed_delete AFTER DELETE ON memories
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
    EXECUTE FUNCTION memories_changed();
CREATE TRIGGER memories_changed_update AFTER UPDATE OF status, embedding ON memories
    FOR EACH ROW
    WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.embedding IS DISTINCT FROM NEW.embedding)
    EXECUTE FUNCTION memories_changed();
