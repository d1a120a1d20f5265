-- Recall over the log (memory.logsearch): each user and assistant message gets a vector,
-- written in batches by the nightly `index` job, and each chat a watermark of what is
-- indexed.
-- Nullable with no default: adding the column rewrites nothing.
ALTER TABLE messages ADD COLUMN embedding vector;

-- Messages up to this id are indexed (embedded, or not searchable: system messages). Ids
-- are drawn at insert, so the job sets it under the chat's log lock (store.log), never past
-- a message still being written. A process's copy of a chat's log is current when its own
-- watermark equals this.
ALTER TABLE chats ADD COLUMN indexed_through bigint NOT NULL DEFAULT 0;
