"""The log as recall searches it: which chats have messages to embed, the batches the
index job reads and writes, the rows a process's copy of a chat's log is built from
(recall._logsearch), and the messages no excerpt may show."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np

from engrammar.models import Scope
from engrammar.store._log import _CHAT_KEY
from engrammar.store._memories import Conn
from engrammar.store._recall import _RawVector, _vector_oid

# Only what the user and the assistant said is searched: a system message is the app's
# instructions, not conversation anyone would refer back to.
SEARCHED_ROLES = ("user", "assistant")
# The searched message before message m: its context for the text index. A turn of
# conversation is often a fragment ("yes, last Friday!") whose subject is in the turn it
# answers, so BM25 reads the two together, the context's words at a lower weight
# (LogSettings.context_weight). The vector is the message's own, so a message the query is
# about still ranks above the one after it; excerpts show the message alone.
_BEFORE = ("coalesce((SELECT p.content FROM messages p WHERE p.user_id = m.user_id"
           " AND p.chat_id = m.chat_id AND p.id < m.id AND p.role = ANY(%(r)s)"
           " ORDER BY p.id DESC LIMIT 1), '')")


def claim_unindexed_chat(conn: Conn, skip: Sequence[Scope] = (), only: Scope | None = None
                         ) -> tuple[Scope, int] | None:
    """Lock one chat (or ``only`` that one) with messages past its index watermark, skipping
    chats another worker holds; (scope, watermark). Must run in the transaction that writes
    the batch."""
    row = conn.execute(
        "SELECT c.user_id, c.chat_id, c.indexed_through FROM chats c"
        " WHERE (%(u)s::text IS NULL OR (c.user_id = %(u)s AND c.chat_id = %(c)s))"
        " AND NOT EXISTS (SELECT 1 FROM unnest(%(su)s::text[], %(sc)s::text[]) s(u, c)"
        "                   WHERE s.u = c.user_id AND s.c = c.chat_id)"
        " AND EXISTS (SELECT 1 FROM messages m WHERE m.user_id = c.user_id"
        "             AND m.chat_id = c.chat_id AND m.id > c.indexed_through)"
        " ORDER BY c.user_id, c.chat_id LIMIT 1 FOR UPDATE OF c SKIP LOCKED",
        {"su": [s.user_id for s in skip], "sc": [s.chat_id for s in skip],
         "u": only.user_id if only else None, "c": only.chat_id if only else None},
    ).fetchone()
    if row is None:
        return None
    return Scope(user_id=row[0], chat_id=row[1]), int(row[2])


def unindexed_messages(conn: Conn, scope: Scope, after_id: int, limit: int
                       ) -> list[tuple[int, str, str, datetime]]:
    """(id, role, content, at) of up to ``limit`` messages past ``after_id``, in id order, a
    prefix with no gap to come: as store.read_new_messages, it waits for every transaction
    still writing a message to the chat, so the watermark never passes an id drawn but not
    yet committed."""
    key = {"u": scope.user_id, "c": scope.chat_id}
    conn.execute(f"SELECT pg_advisory_lock({_CHAT_KEY})", key)
    try:
        rows = conn.execute(
            "SELECT id, role, content, at FROM messages WHERE user_id = %s AND chat_id = %s"
            " AND id > %s ORDER BY id LIMIT %s",
            (scope.user_id, scope.chat_id, after_id, limit)).fetchall()
    finally:
        conn.execute(f"SELECT pg_advisory_unlock({_CHAT_KEY})", key)
    return [(int(r[0]), str(r[1]), str(r[2]), r[3]) for r in rows]


def set_message_vectors(conn: Conn, scope: Scope, ids: Sequence[int],
                        vectors: np.ndarray, through: int) -> None:
    """Store the batch's vectors and move the chat's index watermark to ``through``: one
    statement each, pipelined."""
    with conn.pipeline(), conn.cursor() as cur:
        if len(ids):
            cur.executemany(
                "UPDATE messages SET embedding = %s"
                " WHERE user_id = %s AND chat_id = %s AND id = %s",
                [(v, scope.user_id, scope.chat_id, i) for i, v in zip(ids, vectors,
                                                                        strict=True)])
        cur.execute("UPDATE chats SET indexed_through = greatest(indexed_through, %s)"
                    " WHERE user_id = %s AND chat_id = %s",
                    (through, scope.user_id, scope.chat_id))


def index_recorded(conn: Conn, scope: Scope, message_id: int, vector: np.ndarray) -> None:
    """A message just recorded, embedded at once (settings.fresh.embed_at_record): its
    vector, and the chat's index watermark moved up to it when every searchable message
    below it has one, so recall's copy of the log takes it on the next turn. The chat's
    row is taken only if free (SKIP LOCKED): a turn never waits for extraction or the
    index job, which then leave the watermark to the next turn or to the job."""
    with conn.pipeline():
        conn.execute("UPDATE messages SET embedding = %s"
                     " WHERE user_id = %s AND chat_id = %s AND id = %s",
                     (vector, scope.user_id, scope.chat_id, message_id))
        conn.execute(
            "UPDATE chats c SET indexed_through = %(id)s"
            " WHERE (c.user_id, c.chat_id) IN (SELECT user_id, chat_id FROM chats"
            "   WHERE user_id = %(u)s AND chat_id = %(c)s FOR UPDATE SKIP LOCKED)"
            " AND c.indexed_through < %(id)s"
            " AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.user_id = c.user_id"
            "   AND m.chat_id = c.chat_id AND m.id > c.indexed_through AND m.id < %(id)s"
            "   AND m.embedding IS NULL AND m.role = ANY(%(r)s))",
            {"id": message_id, "u": scope.user_id, "c": scope.chat_id,
             "r": list(SEARCHED_ROLES)})


def searchable_before(conn: Conn, scope: Scope, through: int, newest: int) -> int:
    """The id after which the chat's ``newest`` searchable messages up to ``through``
    start (0 when it holds no more than that): a backward walk of the chat's index, so as
    cheap for a chat of 100,000 messages as of 100."""
    row = conn.execute(
        "SELECT id FROM messages WHERE user_id = %s AND chat_id = %s AND id <= %s"
        " AND role = ANY(%s) AND embedding IS NOT NULL ORDER BY id DESC OFFSET %s LIMIT 1",
        (scope.user_id, scope.chat_id, through, list(SEARCHED_ROLES), newest)).fetchone()
    return int(row[0]) if row else 0


def log_rows(conn: Conn, scope: Scope, after_id: int, through: int
             ) -> list[tuple[Any, ...]]:
    """The searchable messages with ids in (``after_id``, ``through``], by id: id, role,
    at, content, the vector in pgvector's binary form, and as text the tsvectors of the
    message and of the searched message before it (see _BEFORE); computed here, not
    stored: the copy holds them, and a turn never reads them again."""
    with conn.cursor(binary=True) as cur:
        cur.adapters.register_loader(_vector_oid(conn), _RawVector)
        cur.execute(
            "SELECT id, role, at, content, embedding,"
            " to_tsvector('english', content)::text,"
            f" to_tsvector('english', {_BEFORE})::text"
            " FROM messages m WHERE user_id = %(u)s AND chat_id = %(c)s AND id > %(a)s"
            " AND id <= %(t)s AND role = ANY(%(r)s) AND embedding IS NOT NULL ORDER BY id",
            {"u": scope.user_id, "c": scope.chat_id, "a": after_id, "t": through,
             "r": list(SEARCHED_ROLES)})
        return list(cur.fetchall())


def hidden_messages(conn: Conn, scope: Scope) -> dict[int, str]:
    """Messages no excerpt may show, by id with their text: the sources of memories under
    the never policy, proven wrong (contradicted) or forgotten, and the requests to forget
    themselves (they name what was forgotten), for the chat's memories and the user-wide
    ones (store._scopes), of the chat's own messages; and the assistant's reply right
    after a source (the next user or assistant message: a system message between is no
    reply), which answers it in its words ("coffee is usually fine with sertraline" after
    the forgotten "I take sertraline"). Read again only when the chat's memories
    change."""
    rows = conn.execute(
        """
        WITH hidden AS (
            SELECT msg.id, msg.content, msg.role FROM (
                SELECT unnest(source_message_ids) AS x FROM memories
                WHERE user_id = %(u)s AND chat_id IN (%(c)s, '')
                  AND (surface = 'never' OR status = 'contradicted')
                UNION ALL
                SELECT unnest(m.source_message_ids) FROM memory_events e
                JOIN memories m ON m.user_id = e.user_id AND m.chat_id = e.chat_id
                               AND m.id = e.memory_id
                WHERE e.user_id = %(u)s AND e.chat_id IN (%(c)s, '') AND e.op = 'forget'
                UNION ALL
                SELECT unnest(source_message_ids) FROM memory_events
                WHERE user_id = %(u)s AND chat_id IN (%(c)s, '') AND op = 'forget'
            ) s
            JOIN messages msg ON msg.user_id = %(u)s AND msg.chat_id = %(c)s AND msg.id = s.x
        )
        SELECT id, content FROM hidden
        UNION
        SELECT reply.id, reply.content FROM hidden h
        CROSS JOIN LATERAL (
            SELECT id, role, content FROM messages
            WHERE user_id = %(u)s AND chat_id = %(c)s AND id > h.id AND role = ANY(%(r)s)
            ORDER BY id LIMIT 1
        ) reply
        WHERE h.role = 'user' AND reply.role = 'assistant'
        """, {"u": scope.user_id, "c": scope.chat_id, "r": list(SEARCHED_ROLES)}).fetchall()
    return {int(r[0]): str(r[1]) for r in rows}
