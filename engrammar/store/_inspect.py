"""Reads for looking at a store from outside (the browser inspector): chats with their
counts, a page of memories by filter, a page of events, which messages memories rest on,
recent job runs and compiled prompts. Read only: every change goes through the writer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg.rows import dict_row

from engrammar.models import Memory, MemoryEvent, Scope
from engrammar.store._memories import MEMORY_COLUMNS, Conn, _memory


def chat_overview(conn: Conn, user_prefix: str, limit: int) -> list[dict[str, Any]]:
    """The chats whose user id starts with ``user_prefix`` (a tenant's ``tenant:``), first
    ``limit`` by user and chat: when made, the extraction watermark, the last message, and
    the chat's memories counted by type and status (``counts``: {(type, status): n})."""
    with conn.cursor(row_factory=dict_row) as cur:
        # left() rather than LIKE: a prefix holding % or _ is matched as written.
        cur.execute(
            "SELECT c.user_id, c.chat_id, c.created_at, c.last_extracted_at,"
            " c.extracted_through, last.id AS last_message_id, last.at AS last_message_at"
            " FROM chats c LEFT JOIN LATERAL (SELECT m.id, m.at FROM messages m"
            "   WHERE m.user_id = c.user_id AND m.chat_id = c.chat_id"
            "   ORDER BY m.id DESC LIMIT 1) last ON true"
            " WHERE left(c.user_id, %(n)s) = %(p)s ORDER BY c.user_id, c.chat_id LIMIT %(l)s",
            {"n": len(user_prefix), "p": user_prefix, "l": limit})
        chats = list(cur.fetchall())
    if not chats:
        return []
    rows = conn.execute(
        "SELECT m.user_id, m.chat_id, m.type, m.status, count(*) FROM memories m"
        " JOIN unnest(%s::text[], %s::text[]) AS s(u, c)"
        " ON m.user_id = s.u AND m.chat_id = s.c GROUP BY 1, 2, 3, 4",
        ([c["user_id"] for c in chats], [c["chat_id"] for c in chats])).fetchall()
    counts: dict[tuple[str, str], dict[tuple[str, str], int]] = {}
    for user_id, chat_id, type_, status, n in rows:
        counts.setdefault((user_id, chat_id), {})[(type_, status)] = int(n)
    for chat in chats:
        chat["counts"] = counts.get((chat["user_id"], chat["chat_id"]), {})
    return chats


def find_memories(conn: Conn, scope: Scope, *, types: Sequence[str] = (),
                  statuses: Sequence[str] = (), surfaces: Sequence[str] = (),
                  text: str = "", limit: int, offset: int = 0) -> tuple[int, list[Memory]]:
    """One page of the chat's memories matching every filter given (an empty one matches
    all; ``text`` a case-insensitive substring of the content), newest first, and how many
    match in all."""
    where = (" WHERE user_id = %(u)s AND chat_id = %(c)s"
             " AND (cardinality(%(t)s::text[]) = 0 OR type = ANY(%(t)s))"
             " AND (cardinality(%(s)s::text[]) = 0 OR status = ANY(%(s)s))"
             " AND (cardinality(%(f)s::text[]) = 0 OR surface = ANY(%(f)s))"
             " AND (%(q)s = '' OR strpos(lower(content), lower(%(q)s)) > 0)")
    params = {"u": scope.user_id, "c": scope.chat_id, "t": list(types), "s": list(statuses),
              "f": list(surfaces), "q": text, "l": limit, "o": offset}
    row = conn.execute("SELECT count(*) FROM memories" + where, params).fetchone()
    total = int(row[0]) if row else 0
    with conn.cursor(row_factory=dict_row, binary=True) as cur:
        cur.execute(f"SELECT {MEMORY_COLUMNS} FROM memories" + where
                    + " ORDER BY id DESC LIMIT %(l)s OFFSET %(o)s", params)
        return total, [_memory(r) for r in cur.fetchall()]


def events_page(conn: Conn, scope: Scope, *, before: int | None, limit: int,
                rejected_only: bool = False) -> list[MemoryEvent]:
    """The chat's events going backwards from event ``before``, newest first; with
    ``rejected_only`` the gate's rejections alone."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT id, memory_id, op, before, after, reason, source, source_message_ids, at"
            " FROM memory_events WHERE user_id = %s AND chat_id = %s"
            " AND (%s::bigint IS NULL OR id < %s) AND (NOT %s OR op = 'reject')"
            " ORDER BY id DESC LIMIT %s",
            (scope.user_id, scope.chat_id, before, before, rejected_only, limit))
        return [MemoryEvent.model_validate(r) for r in cur.fetchall()]


def rejections_of(conn: Conn, scope: Scope, memory_id: int) -> list[MemoryEvent]:
    """The gate's rejections of ops that named ``memory_id`` as their target."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT id, memory_id, op, before, after, reason, source, source_message_ids, at"
            " FROM memory_events WHERE user_id = %s AND chat_id = %s AND memory_id IS NULL"
            " AND op = 'reject' AND ltrim(after->>'target', '#') = %s ORDER BY id",
            (scope.user_id, scope.chat_id, str(memory_id)))
        return [MemoryEvent.model_validate(r) for r in cur.fetchall()]


def memories_resting_on(conn: Conn, scope: Scope, first: int, last: int
                        ) -> dict[int, list[int]]:
    """For each message id in [first, last] that memories of the chat rest on (their
    ``source_message_ids``), those memories' ids."""
    rows = conn.execute(
        "SELECT s.message_id, array_agg(m.id ORDER BY m.id) FROM memories m,"
        " unnest(m.source_message_ids) AS s(message_id)"
        " WHERE m.user_id = %s AND m.chat_id = %s AND s.message_id BETWEEN %s AND %s"
        " GROUP BY 1",
        (scope.user_id, scope.chat_id, first, last)).fetchall()
    return {int(r[0]): [int(i) for i in r[1]] for r in rows}


def recent_job_runs(conn: Conn, limit: int) -> list[dict[str, Any]]:
    """The latest job runs, newest first."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT id, job, now_at, started_at, finished_at, status, report FROM job_runs"
            " WHERE user_id = '' ORDER BY id DESC LIMIT %s", (limit,))
        return list(cur.fetchall())


def recent_prompts(conn: Conn, scope: Scope, limit: int) -> list[dict[str, Any]]:
    """The chat's latest compiled prompts, as audited, newest first."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT id, at, budget, tokens, layers, messages FROM prompts"
            " WHERE user_id = %s AND chat_id = %s ORDER BY id DESC LIMIT %s",
            (scope.user_id, scope.chat_id, limit))
        return list(cur.fetchall())
