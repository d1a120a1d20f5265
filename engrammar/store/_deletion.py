"""Deleting one memory for good, and with it, if asked, the messages it rests on: every row
that holds their text or is drawn from it, so a scan of the store finds none of it.

``forget`` archives a memory and keeps its text (history, audit); this is the other thing,
an explicit request to remove what was said. What goes:

- the memory, its vector (in its row), its events, its links either way; the snapshots of
  it in other memories' events (an update's ``before``) are emptied, the gate's rejections
  that proposed its very words deleted;
- with its sources: those messages (and their vectors), the summaries of the periods they
  fall in and the window's block summaries from their pair on (rebuilt by their jobs from
  what is left: pair numbers shift once a user message is gone);
- for both: the audit rows that quote any of the texts (prompts compiled, model calls,
  batch requests), since a prompt that rendered the memory holds its words.

The change log sees the memory go (the per-process copies of recall drop it), and a chat
whose messages are deleted gets a new birth stamp, so each process re-reads its log copy.
The caller owns the transaction and holds the chat's (and, for a user-wide memory, the
user scope's) write lock.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from engrammar.models import Scope
from engrammar.store._memories import Conn


def _needles(texts: Sequence[str]) -> list[str]:
    """Each text as stored in a text column and as it reads inside JSON text."""
    out: list[str] = []
    for t in texts:
        if t:
            out += [t, json.dumps(t, ensure_ascii=False)[1:-1]]
    return list(dict.fromkeys(out))


def memory_texts(conn: Conn, scope: Scope, memory_id: int
                 ) -> tuple[str, list[int], list[str]] | None:
    """The memory's content, its source message ids and any other text it carries (an
    open loop's resolution), or None when the scope holds no such memory."""
    row = conn.execute(
        "SELECT content, source_message_ids, metadata FROM memories"
        " WHERE user_id = %s AND chat_id = %s AND id = %s",
        (scope.user_id, scope.chat_id, memory_id)).fetchone()
    if row is None:
        return None
    meta: dict[str, Any] = row[2] or {}
    extra = [str(meta["resolution"])] if meta.get("resolution") else []
    return str(row[0]), [int(i) for i in row[1]], extra


def delete_memory(conn: Conn, scope: Scope, memory_id: int, content: str) -> dict[str, int]:
    """The memory's own rows, and the traces of it in its user's other rows; rows changed
    by table."""
    u, counts = scope.user_id, {}
    counts["memory_events"] = conn.execute(
        "DELETE FROM memory_events WHERE user_id = %s AND (memory_id = %s OR"
        " (memory_id IS NULL AND after->>'content' = %s))", (u, memory_id, content)).rowcount
    counts["memory_events (snapshots)"] = conn.execute(
        "UPDATE memory_events SET"
        " before = CASE WHEN (before->>'id')::bigint = %(m)s THEN NULL ELSE before END,"
        " after = CASE WHEN (after->>'id')::bigint = %(m)s THEN NULL ELSE after END"
        " WHERE user_id = %(u)s AND ((before->>'id')::bigint = %(m)s"
        "                            OR (after->>'id')::bigint = %(m)s)",
        {"u": u, "m": memory_id}).rowcount
    counts["memory_links"] = conn.execute(
        "DELETE FROM memory_links WHERE user_id = %s AND (src_id = %s OR dst_id = %s)",
        (u, memory_id, memory_id)).rowcount
    conn.execute("UPDATE memories SET superseded_by = NULL"
                 " WHERE user_id = %s AND superseded_by = %s", (u, memory_id))
    counts["memories"] = conn.execute(
        "DELETE FROM memories WHERE user_id = %s AND chat_id = %s AND id = %s",
        (u, scope.chat_id, memory_id)).rowcount
    return counts


def delete_messages(conn: Conn, user_id: str, ids: Sequence[int]) -> tuple[dict[str, int],
                                                                          list[str]]:
    """The user's messages of ``ids`` (in whichever of their chats), the summaries of the
    periods they fall in and the block summaries from their pair on; rows deleted by table,
    and the texts deleted (to scrub from the audit)."""
    rows = conn.execute(
        "SELECT m.chat_id, m.id, m.at, m.content,"
        "       greatest(1, (SELECT count(*) FROM messages p WHERE p.user_id = m.user_id"
        "                    AND p.chat_id = m.chat_id AND p.id <= m.id"
        "                    AND p.role = 'user')) AS pair"
        " FROM messages m WHERE m.user_id = %s AND m.id = ANY(%s)",
        (user_id, list(ids))).fetchall()
    counts = {"messages": 0, "summaries": 0, "context_blocks": 0}
    for chat_id, message_id, at, _, pair in rows:
        counts["summaries"] += conn.execute(
            "DELETE FROM summaries WHERE user_id = %s AND chat_id = %s"
            " AND start_at <= %s AND %s < end_at", (user_id, chat_id, at, at)).rowcount
        counts["context_blocks"] += conn.execute(
            "DELETE FROM context_blocks WHERE user_id = %s AND chat_id = %s"
            " AND last_pair >= %s", (user_id, chat_id, pair)).rowcount
        counts["messages"] += conn.execute(
            "DELETE FROM messages WHERE user_id = %s AND chat_id = %s AND id = %s",
            (user_id, chat_id, message_id)).rowcount
    for chat_id in sorted({r[0] for r in rows}):
        # A new birth: every process's copy of the chat's log is read anew (recall._logsearch).
        conn.execute("UPDATE chats SET created_at = clock_timestamp()"
                     " WHERE user_id = %s AND chat_id = %s", (user_id, chat_id))
    return counts, [str(r[3]) for r in rows]


def scrub_audit(conn: Conn, user_id: str, texts: Sequence[str]) -> dict[str, int]:
    """The user's audit rows that quote any of ``texts``: compiled prompts and model calls
    deleted, batch requests emptied of their prompt; rows changed by table."""
    needles = _needles(texts)
    counts = {"prompts": 0, "llm_calls": 0, "llm_batch_requests": 0}
    if not needles:
        return counts
    counts["prompts"] = conn.execute(
        "DELETE FROM prompts WHERE user_id = %s AND EXISTS (SELECT 1 FROM unnest(%s::text[])"
        " n WHERE strpos(messages::text, n) > 0)", (user_id, needles)).rowcount
    counts["llm_calls"] = conn.execute(
        "DELETE FROM llm_calls WHERE user_id = %s AND EXISTS (SELECT 1 FROM"
        " unnest(%s::text[]) n WHERE strpos(request::text, n) > 0"
        " OR strpos(coalesce(response, ''), n) > 0)", (user_id, needles)).rowcount
    counts["llm_batch_requests"] = conn.execute(
        "UPDATE llm_batch_requests SET messages = '[]'::jsonb WHERE user_id = %s"
        " AND EXISTS (SELECT 1 FROM unnest(%s::text[]) n"
        " WHERE strpos(messages::text, n) > 0)", (user_id, needles)).rowcount
    return counts
