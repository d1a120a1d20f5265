-- A recall notes what it surfaced by appending to recalls, and no longer updates each
-- surfaced memory on the turn's path: that UPDATE of wide, heavily indexed rows cost about
-- 1.3 ms a recall, most of a noted recall's time, and left memories' pages not
-- all-visible, slowing every index-only scan of them. Lifecycle folds the notes into
-- memories.last_surfaced_at and surface_count each night, before its rules read them.
--
-- Rows from before this migration were applied when written: they count as folded.
ALTER TABLE recalls ADD COLUMN folded boolean NOT NULL DEFAULT true;
ALTER TABLE recalls ALTER COLUMN folded SET DEFAULT false;
CREATE INDEX recalls_unfolded ON recalls (id) WHERE NOT folded;
