-- Lifecycle: the forgetting-curve strength R = exp(-t/S) of each memory, kept up to date by
-- the lifecycle job, so decay is visible and queryable.
ALTER TABLE memories ADD COLUMN strength real NOT NULL DEFAULT 1;

-- The lifecycle rules scan by status and type across users; pinned rows never move.
CREATE INDEX memories_transitions ON memories (status, type, status_changed_at)
    WHERE NOT pinned;
