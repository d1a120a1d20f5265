-- The short-term window in bounded reads (issue 25): a turn reads the newest pairs and the
-- active blocks, never the whole log, and the blocks job cuts each block from where the
-- previous one ended.

-- Each chat's pairs (its user messages), kept by statement triggers on messages, so a
-- turn learns how many pairs the chat has without counting its log: the sum of the chat's
-- rows here. A statement that writes messages adds a row of its own count and folds the
-- chat's other rows into one, passing over rows another transaction holds: two writers of
-- one chat never wait for each other (a slow app server's uncommitted message must not hold
-- up the next turn's), and a chat keeps a row or two. The count is derived
-- (store._userdata.DERIVED): neither exported nor restored, rebuilt as messages come back.
CREATE TABLE chat_pairs (
    user_id  text NOT NULL,
    chat_id  text NOT NULL,
    id       bigint GENERATED ALWAYS AS IDENTITY,
    pairs    bigint NOT NULL,
    PRIMARY KEY (user_id, chat_id, id)
);

INSERT INTO chat_pairs (user_id, chat_id, pairs)
SELECT user_id, chat_id, count(*) FROM messages WHERE role = 'user' GROUP BY user_id, chat_id;

CREATE FUNCTION chat_pairs_counted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO chat_pairs (user_id, chat_id, pairs)
        SELECT user_id, chat_id, count(*) FROM changed WHERE role = 'user'
        GROUP BY user_id, chat_id;
    ELSE
        INSERT INTO chat_pairs (user_id, chat_id, pairs)
        SELECT user_id, chat_id, -count(*) FROM changed WHERE role = 'user'
        GROUP BY user_id, chat_id;
    END IF;
    WITH picked AS (
        SELECT p.ctid AS row FROM chat_pairs p
        WHERE (p.user_id, p.chat_id) IN (SELECT user_id, chat_id FROM changed
                                         WHERE role = 'user')
        FOR UPDATE OF p SKIP LOCKED
    ), gone AS (
        DELETE FROM chat_pairs p USING picked WHERE p.ctid = picked.row
        RETURNING p.user_id, p.chat_id, p.pairs
    )
    INSERT INTO chat_pairs (user_id, chat_id, pairs)
    SELECT user_id, chat_id, sum(pairs) FROM gone GROUP BY user_id, chat_id;
    RETURN NULL;
END
$$;

CREATE FUNCTION chat_pairs_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM chat_pairs;
    RETURN NULL;
END
$$;

CREATE TRIGGER messages_pairs_inserted AFTER INSERT ON messages
    REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION chat_pairs_counted();
CREATE TRIGGER messages_pairs_deleted AFTER DELETE ON messages
    REFERENCING OLD TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION chat_pairs_counted();
CREATE TRIGGER messages_pairs_truncated AFTER TRUNCATE ON messages
    FOR EACH STATEMENT EXECUTE FUNCTION chat_pairs_truncated();

-- Where each block's pairs lie in the log: messages first_id..last_id (ids, inclusive), so
-- a block's messages, and the raw pairs between two blocks, are one index range away. The
-- next block starts at last_id + 1.
ALTER TABLE context_blocks ADD COLUMN first_id bigint, ADD COLUMN last_id bigint;

WITH numbered AS (
    SELECT m.user_id, m.chat_id, m.id,
           greatest(1, count(*) FILTER (WHERE m.role = 'user')
                       OVER (PARTITION BY m.user_id, m.chat_id ORDER BY m.id)) AS pair
    FROM messages m
    WHERE EXISTS (SELECT 1 FROM context_blocks b
                  WHERE b.user_id = m.user_id AND b.chat_id = m.chat_id)
), bounds AS (
    SELECT user_id, chat_id, pair, min(id) AS lo, max(id) AS hi
    FROM numbered GROUP BY user_id, chat_id, pair
)
UPDATE context_blocks b SET first_id = f.lo, last_id = l.hi
FROM bounds f, bounds l
WHERE f.user_id = b.user_id AND f.chat_id = b.chat_id AND f.pair = b.first_pair
  AND l.user_id = b.user_id AND l.chat_id = b.chat_id AND l.pair = b.last_pair;

-- A block over pairs the log no longer has could never be shown: its pairs go back to raw.
DELETE FROM context_blocks WHERE first_id IS NULL OR last_id IS NULL;
ALTER TABLE context_blocks ALTER COLUMN first_id SET NOT NULL,
                           ALTER COLUMN last_id SET NOT NULL;

-- A chat's blocks that are not archived, by their first pair: what a turn and the job read.
-- Archived blocks pile up with every merge and are never read on these paths.
CREATE INDEX context_blocks_live ON context_blocks (user_id, chat_id, first_pair)
    WHERE state <> 'ARCHIVED';
