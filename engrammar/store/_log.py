"""The log and the chats: messages, the extraction watermark and the claim on a chat."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from engrammar.models import Message, Scope
from engrammar.store._memories import Conn

# -- the log ----------------------------------------------------------------------------------

# A chat's key for the advisory lock that orders message ids against extraction's read.
_CHAT_KEY = "hashtextextended(%(u)s || chr(31) || %(c)s, 0)"
# A chat's write lock: one writer of its memories and blocks at a time. A key apart from the
# log's, so a turn's `record` never waits for a writer (extraction holds it across the
# model's answer). The user id's length keeps ("a", "bc") and ("ab", "c") apart.
_WRITE_KEY = ("hashtextextended('write' || chr(31) || length(%(u)s) || chr(31) || %(u)s"
              " || %(c)s, 0)")
# Lifecycle moves the memories of every chat at once, set-based: it takes this key
# exclusive, and every chat writer takes it shared before its chat's key.
_ALL_CHATS_KEY = 0x6D656D2D616C6C


def insert_message(conn: Conn, scope: Scope, role: str, content: str, at: datetime,
                   metadata: dict[str, Any] | None = None) -> int:
    """One round trip: registers the chat on its first message and appends the message.

    The chat's advisory lock is taken, shared, before the message draws its id, and held
    until commit; see ``read_new_messages``.
    """
    row = conn.execute(
        f"WITH held AS (SELECT pg_advisory_xact_lock_shared({_CHAT_KEY})),"
        " chat AS (INSERT INTO chats (user_id, chat_id) VALUES (%(u)s, %(c)s)"
        " ON CONFLICT DO NOTHING)"
        " INSERT INTO messages (user_id, chat_id, role, content, at, metadata)"
        " SELECT %(u)s, %(c)s, %(r)s, %(t)s, %(a)s, %(m)s FROM held RETURNING id",
        {"u": scope.user_id, "c": scope.chat_id, "r": role, "t": content, "a": at,
         "m": Jsonb(metadata or {})},
    ).fetchone()
    assert row is not None
    return int(row[0])


def unknown_messages(conn: Conn, scope: Scope, ids: Sequence[int]) -> list[int]:
    """Those of ``ids`` that name no message of this chat (another chat's, or none)."""
    if not ids:
        return []
    rows = conn.execute(
        "SELECT i FROM unnest(%s::bigint[]) AS i WHERE NOT EXISTS (SELECT 1 FROM messages m"
        " WHERE m.user_id = %s AND m.chat_id = %s AND m.id = i) ORDER BY i",
        (sorted(set(ids)), scope.user_id, scope.chat_id)).fetchall()
    return [int(r[0]) for r in rows]


def messages_after(conn: Conn, scope: Scope, after_id: int, limit: int | None = None
                   ) -> list[Message]:
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT id, user_id, chat_id, role, content, at, metadata FROM messages"
            " WHERE user_id = %s AND chat_id = %s AND id > %s ORDER BY id LIMIT %s",
            (scope.user_id, scope.chat_id, after_id, limit),
        )
        return [Message.model_validate(r) for r in cur.fetchall()]


def read_new_messages(conn: Conn, scope: Scope, after_id: int) -> list[Message]:
    """Messages past ``after_id`` for extraction, a prefix with no gap to come.

    Ids are drawn at insert, not at commit: a message committed after a later one would be
    passed over by a watermark set in between. So this waits, with the chat's advisory lock
    taken exclusive, for every transaction still writing a message to the chat to commit,
    reads, and lets the next writers in: they draw ids above all it read.
    """
    key = {"u": scope.user_id, "c": scope.chat_id}
    conn.execute(f"SELECT pg_advisory_lock({_CHAT_KEY})", key)
    try:
        return messages_after(conn, scope, after_id)
    finally:
        conn.execute(f"SELECT pg_advisory_unlock({_CHAT_KEY})", key)


def messages_before(conn: Conn, scope: Scope, before_id: int | None, limit: int) -> list[Message]:
    """A page of the log going backwards from ``before_id``, returned oldest first."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT id, user_id, chat_id, role, content, at, metadata FROM messages"
            " WHERE user_id = %s AND chat_id = %s AND (%s::bigint IS NULL OR id < %s)"
            " ORDER BY id DESC LIMIT %s",
            (scope.user_id, scope.chat_id, before_id, before_id, limit),
        )
        return [Message.model_validate(r) for r in reversed(cur.fetchall())]


def messages_between(conn: Conn, scope: Scope, start: datetime, end: datetime) -> list[Message]:
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT id, user_id, chat_id, role, content, at, metadata FROM messages"
            " WHERE user_id = %s AND chat_id = %s AND at >= %s AND at < %s ORDER BY id",
            (scope.user_id, scope.chat_id, start, end),
        )
        return [Message.model_validate(r) for r in cur.fetchall()]

# -- chats and the extraction watermark -------------------------------------------------------

# A chat has work when the first message past its watermark is stamped at or before now:
# extraction reads in id order and stops at the first later stamp (client).
_PENDING = (
    " (SELECT m.at FROM messages m WHERE m.user_id = c.user_id"
    " AND m.chat_id = c.chat_id AND m.id > c.extracted_through ORDER BY m.id LIMIT 1)"
    " <= %(now)s"
)


def count_pending_chats(conn: Conn, now: datetime) -> int:
    row = conn.execute(f"SELECT count(*) FROM chats c WHERE {_PENDING}", {"now": now}).fetchone()
    return int(row[0]) if row else 0


def message_metadata(conn: Conn, scope: Scope, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """The app metadata of the chat's messages of ``ids`` that carry any."""
    rows = conn.execute(
        "SELECT id, metadata FROM messages WHERE user_id = %s AND chat_id = %s"
        " AND id = ANY(%s) AND metadata <> '{}'::jsonb",
        (scope.user_id, scope.chat_id, list(ids))).fetchall()
    return {int(r[0]): r[1] for r in rows}


def idle_chats(conn: Conn, now: datetime, quiet_since: datetime,
               user_id: str | None = None) -> list[Scope]:
    """Chats with messages past their watermark whose newest message (up to ``now``) was
    said at or before ``quiet_since``: the conversations that went quiet (the idle-extract
    job). Each chat's newest message comes from the end of its primary key."""
    rows = conn.execute(
        "SELECT c.user_id, c.chat_id FROM chats c"
        " CROSS JOIN LATERAL (SELECT m.id, m.at FROM messages m"
        "   WHERE m.user_id = c.user_id AND m.chat_id = c.chat_id AND m.at <= %(now)s"
        "   ORDER BY m.id DESC LIMIT 1) last"
        " WHERE (%(u)s::text IS NULL OR c.user_id = %(u)s)"
        "   AND last.id > c.extracted_through AND last.at <= %(quiet)s"
        " ORDER BY c.user_id, c.chat_id",
        {"now": now, "quiet": quiet_since, "u": user_id}).fetchall()
    return [Scope(user_id=r[0], chat_id=r[1]) for r in rows]


def claim_chat(conn: Conn, now: datetime, only: Scope | None = None,
               skip: Sequence[Scope] = ()) -> tuple[Scope, int] | None:
    """Lock one chat with messages past its watermark, skipping chats other workers hold.

    Must run inside the transaction that will apply the chat's ops: the row lock is the claim.
    """
    row = conn.execute(
        "SELECT c.user_id, c.chat_id, c.extracted_through FROM chats c"
        " WHERE (%(u)s::text IS NULL OR (c.user_id = %(u)s AND c.chat_id = %(c)s))"
        " AND NOT EXISTS (SELECT 1 FROM unnest(%(su)s::text[], %(sc)s::text[]) s(u, c)"
        "                 WHERE s.u = c.user_id AND s.c = c.chat_id)"
        f" AND {_PENDING}"
        " ORDER BY c.user_id, c.chat_id LIMIT 1 FOR UPDATE OF c SKIP LOCKED",
        {"u": only.user_id if only else None, "c": only.chat_id if only else None,
         "su": [s.user_id for s in skip], "sc": [s.chat_id for s in skip], "now": now},
    ).fetchone()
    if row is None:
        return None
    return Scope(user_id=row[0], chat_id=row[1]), int(row[2])


def set_watermark(conn: Conn, scope: Scope, through: int, at: datetime) -> None:
    conn.execute(
        "UPDATE chats SET extracted_through = %s, last_extracted_at = %s"
        " WHERE user_id = %s AND chat_id = %s",
        (through, at, scope.user_id, scope.chat_id),
    )


def lock_chat(conn: Conn, scope: Scope) -> None:
    """Register the chat and take its write lock until the transaction ends: every write
    path (apply, observe, extraction, reflection, the window's blocks) calls this before it
    reads what it will change, so two writers never decide on the same pool."""
    conn.execute(
        f"WITH held AS (SELECT pg_advisory_xact_lock_shared({_ALL_CHATS_KEY}),"
        f" pg_advisory_xact_lock({_WRITE_KEY}))"
        " INSERT INTO chats (user_id, chat_id) SELECT %(u)s, %(c)s FROM held"
        " ON CONFLICT DO NOTHING",
        {"u": scope.user_id, "c": scope.chat_id},
    )


def lock_all_chats(conn: Conn) -> None:
    """Every chat's write lock at once, until the transaction ends (for lifecycle's
    set-based moves): waits for the writers at work; new ones wait for it."""
    conn.execute(f"SELECT pg_advisory_xact_lock({_ALL_CHATS_KEY})")


def list_chats(conn: Conn, user_id: str | None = None) -> list[Scope]:
    rows = conn.execute(
        "SELECT user_id, chat_id FROM chats WHERE %s::text IS NULL OR user_id = %s"
        " ORDER BY user_id, chat_id",
        (user_id, user_id),
    ).fetchall()
    return [Scope(user_id=r[0], chat_id=r[1]) for r in rows]


def ensure_chat(conn: Conn, scope: Scope) -> None:
    conn.execute(
        "INSERT INTO chats (user_id, chat_id) VALUES (%s, %s) ON CONFLICT DO NOTHING",
        (scope.user_id, scope.chat_id),
    )
