-- A recall copy (memory.snapshot) takes equal change ids for the same changes, so the ids of
-- memory_changes must never be drawn twice, and TRUNCATE ... RESTART IDENTITY would draw
-- them again: a copy of a chat whose one change was id 1 would match a new id 1. The
-- sequence's position is kept across any TRUNCATE of the table.

CREATE FUNCTION memory_changes_keep_ids() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    seq text := pg_get_serial_sequence('memory_changes', 'id');
    position bigint;
BEGIN
    EXECUTE format('SELECT last_value FROM %s', seq) INTO position;
    IF TG_WHEN = 'BEFORE' THEN
        PERFORM set_config('memory.change_id_floor', position::text, true);
    ELSE
        PERFORM setval(seq, greatest(current_setting('memory.change_id_floor')::bigint,
                                     position));
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER memory_changes_before_truncate BEFORE TRUNCATE ON memory_changes
    FOR EACH STATEMENT EXECUTE FUNCTION memory_changes_keep_ids();
CREATE TRIGGER memory_changes_after_truncate AFTER TRUNCATE ON memory_changes
    FOR EACH STATEMENT EXECUTE FUNCTION memory_changes_keep_ids();
