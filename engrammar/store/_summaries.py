"""Temporal summaries: which periods need (re)writing, and writing them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from psycopg.rows import dict_row

from engrammar.models import Scope
from engrammar.store._memories import Conn

# -- temporal summaries -----------------------------------------------------------------------

def _only(scope: Scope | None) -> str:
    """The filter to one chat (a text of its own, so each form keeps its own plan)."""
    return "" if scope is None else " AND user_id = %(u)s AND chat_id = %(c)s"


def _ids(scope: Scope | None) -> dict[str, str]:
    return {} if scope is None else {"u": scope.user_id, "c": scope.chat_id}


def days_to_summarize(conn: Conn, now: datetime, scope: Scope | None = None
                      ) -> list[tuple[Scope, datetime, str]]:
    """(scope, day start, input hash) of every finished UTC day whose messages changed since
    its summary was written, or that has none yet (of one chat, when ``scope`` is given)."""
    rows = conn.execute(
        """
        WITH days AS (
            SELECT user_id, chat_id, date_trunc('day', at, 'UTC') AS day,
                   md5(string_agg(id::text, ',' ORDER BY id)) AS hash
            FROM messages WHERE at < date_trunc('day', %(now)s::timestamptz, 'UTC')"""
        + _only(scope) + """
            GROUP BY user_id, chat_id, date_trunc('day', at, 'UTC')
        )
        SELECT d.user_id, d.chat_id, d.day, d.hash FROM days d
        LEFT JOIN summaries s ON s.user_id = d.user_id AND s.chat_id = d.chat_id
             AND s.period = 'day' AND s.start_at = d.day
        WHERE s.source_hash IS DISTINCT FROM d.hash
        ORDER BY d.user_id, d.chat_id, d.day
        """,
        {"now": now, **_ids(scope)},
    ).fetchall()
    return [(Scope(user_id=r[0], chat_id=r[1]), r[2], r[3]) for r in rows]


def periods_to_roll_up(conn: Conn, child: str, parent: str, now: datetime,
                       scope: Scope | None = None) -> list[tuple[Scope, datetime, str]]:
    """(scope, parent start, input hash) of every finished parent period (week or month)
    whose child summaries changed since the parent was written (of one chat, when
    ``scope`` is given)."""
    rows = conn.execute(
        """
        WITH parents AS (
            SELECT user_id, chat_id, date_trunc(%(parent)s, start_at, 'UTC') AS start_at,
                   md5(string_agg(source_hash || start_at::text, ',' ORDER BY start_at))
                       AS hash
            FROM summaries WHERE period = %(child)s"""
        + _only(scope) + """
            GROUP BY user_id, chat_id, date_trunc(%(parent)s, start_at, 'UTC')
        )
        SELECT p.user_id, p.chat_id, p.start_at, p.hash FROM parents p
        LEFT JOIN summaries s ON s.user_id = p.user_id AND s.chat_id = p.chat_id
             AND s.period = %(parent_period)s AND s.start_at = p.start_at
        WHERE s.source_hash IS DISTINCT FROM p.hash
          AND p.start_at + ('1 ' || %(parent)s)::interval <= %(now)s
        ORDER BY p.user_id, p.chat_id, p.start_at
        """,
        {"child": child, "parent": "week" if parent == "week" else "month",
         "parent_period": parent, "now": now, **_ids(scope)},
    ).fetchall()
    return [(Scope(user_id=r[0], chat_id=r[1]), r[2], r[3]) for r in rows]


def summaries_between(conn: Conn, scope: Scope, period: str, start: datetime,
                      end: datetime) -> list[dict[str, Any]]:
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT period, start_at, end_at, content, tokens, source_hash FROM summaries"
            " WHERE user_id = %s AND chat_id = %s AND period = %s AND start_at >= %s"
            " AND start_at < %s ORDER BY start_at",
            (scope.user_id, scope.chat_id, period, start, end),
        )
        return list(cur.fetchall())


def upsert_summary(conn: Conn, scope: Scope, *, period: str, start: datetime, end: datetime,
                   content: str, tokens: int, source_hash: str, now: datetime) -> None:
    conn.execute(
        "INSERT INTO summaries (user_id, chat_id, period, start_at, end_at, content, tokens,"
        " source_hash, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT (user_id, chat_id, period, start_at) DO UPDATE SET"
        " end_at = excluded.end_at, content = excluded.content, tokens = excluded.tokens,"
        " source_hash = excluded.source_hash, updated_at = excluded.updated_at",
        (scope.user_id, scope.chat_id, period, start, end, content, tokens, source_hash, now),
    )
