-- Compiled prompts get a table of their own: they were written to llm_calls with model
-- "compiled", which mixed what the app sent a model with the calls this library makes.
CREATE TABLE prompts (
    user_id   text NOT NULL,
    chat_id   text NOT NULL,
    id        bigint GENERATED ALWAYS AS IDENTITY,
    at        timestamptz NOT NULL,
    budget    integer NOT NULL,
    tokens    integer NOT NULL,
    layers    jsonb NOT NULL,
    messages  jsonb NOT NULL,
    PRIMARY KEY (user_id, chat_id, id)
);

INSERT INTO prompts (user_id, chat_id, at, budget, tokens, layers, messages)
SELECT user_id, chat_id, at, coalesce((request->>'budget')::int, 0),
       coalesce((request->>'tokens')::int, 0), '{}'::jsonb,
       coalesce(request->'messages', '[]'::jsonb)
FROM llm_calls WHERE model = 'compiled' AND purpose = 'turn';
DELETE FROM llm_calls WHERE model = 'compiled' AND purpose = 'turn';

-- Recall now renders each memory's source messages (provenance): a change to them is a
-- change a recall copy must see (memory.store.indexes.CHANGE_COLUMNS).
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
          OR OLD.source_message_ids IS DISTINCT FROM NEW.source_message_ids)
    EXECUTE FUNCTION memories_changed();
