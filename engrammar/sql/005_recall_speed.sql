-- Recall reads three things from every active memory of a chat: its vector (the top k by
-- cosine), its tsvector (the top k by text rank), and whether it is always a candidate.
-- Through the heap that is one random page per memory (a chat's rows are scattered across
-- months of inserts): 20,000 memories cost ~15,000 page reads. These indexes carry the
-- values themselves, so recall reads a chat's contiguous index pages (index-only scans)
-- and visits the heap only for the ~100 candidates it returns. Results are unchanged:
-- the scans stay exact. (No HNSW: with a per-chat filter it returns too few rows.)
--
-- A btree tuple holds at most 2,704 bytes, so each covering index is partial: a row whose
-- ids and vector (4 bytes a dimension: up to ~590 dimensions with short ids) or ids and
-- content (its tsvector is at most 5 bytes per content byte, plus 16) could exceed it is
-- left out, and a small index over exactly those rows keeps them reachable. recall
-- queries both sides and merges them, so nothing is missed; the second index is empty
-- unless the embedder is wide (1536-d: all rows there) or a memory is long.
--
-- Cost: the vector index is about as large as the vectors themselves (~1.7 GB per 1M
-- 384-d memories), and each insert writes the vector twice.

CREATE INDEX memories_recall_vectors ON memories (user_id, chat_id) INCLUDE (id, embedding)
    WHERE status = 'active'
      AND octet_length(user_id) + octet_length(chat_id) + 4 * vector_dims(embedding) <= 2400;
CREATE INDEX memories_recall_vectors_wide ON memories (user_id, chat_id)
    WHERE status = 'active'
      AND NOT (octet_length(user_id) + octet_length(chat_id) + 4 * vector_dims(embedding)
               <= 2400);

CREATE INDEX memories_recall_text ON memories (user_id, chat_id) INCLUDE (id, tsv)
    WHERE status = 'active'
      AND octet_length(user_id) + octet_length(chat_id) + 5 * octet_length(content) <= 2400;
CREATE INDEX memories_recall_text_long ON memories (user_id, chat_id)
    WHERE status = 'active'
      AND NOT (octet_length(user_id) + octet_length(chat_id) + 5 * octet_length(content)
               <= 2400);

-- The memories every recall returns whatever the query (see store.recall_candidates).
CREATE INDEX memories_recall_always ON memories (user_id, chat_id) INCLUDE (id)
    WHERE status = 'active'
      AND (pinned OR type IN ('profile', 'open_loop', 'protocol') OR surface = 'avoid');
