-- Preferences and shared lore join the memories recall considers whatever the query
-- (store/indexes.py ALWAYS_TYPES): whether a diet, an allergy, a dislike or a nickname
-- applies cannot be told from the words of a message, so the budget decides, not a
-- relevance cut.
DROP INDEX memories_recall_always;
CREATE INDEX memories_recall_always ON memories (user_id, chat_id) INCLUDE (id)
    WHERE status = 'active'
      AND (pinned OR type IN ('profile', 'preference', 'open_loop', 'shared_lore', 'protocol')
           OR surface IN ('avoid', 'never'));
