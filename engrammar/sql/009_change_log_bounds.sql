-- Two gaps in the change log of sql/008, and a correction.
--
-- Correction: 008 says a row still in flight is not pruned before a copy can see it. Not
-- so: a copy looks only when its chat is next recalled, maybe hours later. Lifecycle's
-- prune now adds a row naming no memory to each chat it pruned (memory/store/lifecycle.py),
-- so every copy of that chat reads it whole and nothing pruned unseen is lost.
--
-- 1. A statement inserting or deleting many memories of a chat (an import, an erase) wrote
--    one log row per memory, and each recall's probe counts the chat's rows until the
--    nightly prune. Above 64 memories of a chat in one statement, one row naming no memory
--    stands for all of them: copies read such a chat whole anyway.
-- 2. TRUNCATE fires no row triggers, so copies never heard of it. Now every known chat gets
--    a row naming no memory. (Identities must never restart: a copy takes equal change ids
--    for the same changes.)

CREATE OR REPLACE FUNCTION memories_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Per chat: a row per memory, or a single one naming none (i = 1) above 64 memories.
    IF TG_OP = 'INSERT' THEN
        INSERT INTO memory_changes (user_id, chat_id, memory_id)
        SELECT user_id, chat_id, CASE WHEN n <= 64 THEN id END
        FROM (SELECT user_id, chat_id, id, count(*) OVER w AS n, row_number() OVER w AS i
              FROM new_rows WINDOW w AS (PARTITION BY user_id, chat_id)) t
        WHERE n <= 64 OR i = 1;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO memory_changes (user_id, chat_id, memory_id)
        SELECT user_id, chat_id, CASE WHEN n <= 64 THEN id END
        FROM (SELECT user_id, chat_id, id, count(*) OVER w AS n, row_number() OVER w AS i
              FROM old_rows WINDOW w AS (PARTITION BY user_id, chat_id)) t
        WHERE n <= 64 OR i = 1;
    ELSE
        INSERT INTO memory_changes (user_id, chat_id, memory_id)
        VALUES (NEW.user_id, NEW.chat_id, NEW.id);
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION memories_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO memory_changes (user_id, chat_id)
    SELECT user_id, chat_id FROM chats
    UNION SELECT user_id, chat_id FROM memory_changes;
    RETURN NULL;
END
$$;

CREATE TRIGGER memories_changed_truncate AFTER TRUNCATE ON memories
    FOR EACH STATEMENT EXECUTE FUNCTION memories_truncated();
