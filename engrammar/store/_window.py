"""The short-term window: pairs of the log and their block summaries."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from psycopg.rows import dict_row

from engrammar.models import Message, Scope
from engrammar.store._memories import Conn

# -- the short-term window: pairs and block summaries -----------------------------------------

def pairs_after(conn: Conn, scope: Scope, after_pair: int, limit_pairs: int | None = None
                ) -> list[tuple[int, Message]]:
    """(pair number, message) for user and assistant messages of pairs after ``after_pair``.
    Pair k is the k-th user message and the replies before the next one; anything before
    the first user message belongs to pair 1."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            """
            SELECT * FROM (
                SELECT id, user_id, chat_id, role, content, at,
                       greatest(1, count(*) FILTER (WHERE role = 'user')
                                   OVER (ORDER BY id)) AS pair
                FROM messages WHERE user_id = %(u)s AND chat_id = %(c)s
                  AND role IN ('user', 'assistant')
            ) t WHERE pair > %(after)s
              AND (%(lim)s::int IS NULL OR pair <= %(after)s + %(lim)s)
            ORDER BY id
            """,
            {"u": scope.user_id, "c": scope.chat_id, "after": after_pair, "lim": limit_pairs},
        )
        rows = cur.fetchall()
    return [(int(r.pop("pair")), Message.model_validate(r)) for r in rows]


def tail_pairs(conn: Conn, scope: Scope, after_pair: int) -> list[tuple[int, Message]]:
    """pairs_after(after_pair), read from the newest message back: a walk of the chat's
    index over the pairs asked for (and a count of its user messages), never a window
    function over the whole chat, so the newest pairs of a chat of 100,000 messages cost
    what they cost in a chat of 1,000. The count and the rows share one statement, so a
    message recorded meanwhile cannot shift the numbering."""
    if after_pair <= 0:
        return pairs_after(conn, scope, after_pair)
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            """
            WITH total AS (
                SELECT count(*) AS n FROM messages
                WHERE user_id = %(u)s AND chat_id = %(c)s AND role = 'user'
            ), start AS (
                SELECT id FROM messages
                WHERE user_id = %(u)s AND chat_id = %(c)s AND role = 'user'
                ORDER BY id DESC OFFSET greatest((SELECT n FROM total) - %(after)s - 1, 0)
                LIMIT 1
            )
            SELECT * FROM (
                SELECT id, user_id, chat_id, role, content, at,
                       (SELECT n FROM total) + (role = 'user')::int
                       - count(*) FILTER (WHERE role = 'user')
                             OVER (ORDER BY id DESC) AS pair
                FROM messages WHERE user_id = %(u)s AND chat_id = %(c)s
                  AND role IN ('user', 'assistant') AND id >= (SELECT id FROM start)
            ) t WHERE pair > %(after)s
            ORDER BY id
            """,
            {"u": scope.user_id, "c": scope.chat_id, "after": after_pair},
        )
        rows = cur.fetchall()
    return [(int(r.pop("pair")), Message.model_validate(r)) for r in rows]


def pair_count(conn: Conn, scope: Scope) -> int:
    row = conn.execute(
        "SELECT count(*) FROM messages WHERE user_id = %s AND chat_id = %s AND role = 'user'",
        (scope.user_id, scope.chat_id),
    ).fetchone()
    return int(row[0]) if row else 0


BLOCK_COLUMNS = "block_no, first_pair, last_pair, state, summary, tokens, attempts, error"


def list_blocks(conn: Conn, scope: Scope, states: Sequence[str] | None = None
                ) -> list[dict[str, Any]]:
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            f"SELECT {BLOCK_COLUMNS} FROM context_blocks WHERE user_id = %s AND chat_id = %s"
            " AND (%s::text[] IS NULL OR state = ANY(%s)) ORDER BY first_pair, block_no",
            (scope.user_id, scope.chat_id, states, states),
        )
        return list(cur.fetchall())


def insert_block(conn: Conn, scope: Scope, first: int, last: int, now: datetime) -> int:
    """A new PENDING block over pairs first..last; its number is the chat's next."""
    row = conn.execute(
        "INSERT INTO context_blocks (user_id, chat_id, block_no, first_pair, last_pair,"
        " state, updated_at)"
        " SELECT %(u)s, %(c)s, coalesce(max(block_no), 0) + 1, %(f)s, %(l)s, 'PENDING', %(n)s"
        " FROM context_blocks WHERE user_id = %(u)s AND chat_id = %(c)s RETURNING block_no",
        {"u": scope.user_id, "c": scope.chat_id, "f": first, "l": last, "n": now},
    ).fetchone()
    assert row is not None
    return int(row[0])


def claim_block(conn: Conn, state: str) -> tuple[Scope, dict[str, Any]] | None:
    """Lock one block in ``state`` that no other worker holds."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            f"SELECT user_id, chat_id, {BLOCK_COLUMNS} FROM context_blocks WHERE state = %s"
            " ORDER BY user_id, chat_id, block_no LIMIT 1 FOR UPDATE SKIP LOCKED",
            (state,),
        )
        row = cur.fetchone()
    if row is None:
        return None
    scope = Scope(user_id=row.pop("user_id"), chat_id=row.pop("chat_id"))
    return scope, row


def update_block(conn: Conn, scope: Scope, block_no: int, fields: dict[str, Any]) -> None:
    allowed = {"state", "summary", "tokens", "attempts", "error", "updated_at"}
    if set(fields) - allowed:
        raise ValueError(f"not block columns: {sorted(set(fields) - allowed)}")
    sets = ", ".join(f"{k} = %s" for k in fields)
    conn.execute(
        f"UPDATE context_blocks SET {sets} WHERE user_id = %s AND chat_id = %s"
        " AND block_no = %s",
        [*fields.values(), scope.user_id, scope.chat_id, block_no],
    )


def delete_block(conn: Conn, scope: Scope, block_no: int) -> None:
    conn.execute(
        "DELETE FROM context_blocks WHERE user_id = %s AND chat_id = %s AND block_no = %s",
        (scope.user_id, scope.chat_id, block_no),
    )


def archive_blocks_within(conn: Conn, scope: Scope, first: int, last: int, keep: int,
                          now: datetime) -> int:
    """Retire the ACTIVE blocks inside first..last, other than ``keep`` (a merged block)."""
    cur = conn.execute(
        "UPDATE context_blocks SET state = 'ARCHIVED', updated_at = %s"
        " WHERE user_id = %s AND chat_id = %s AND state = 'ACTIVE' AND block_no <> %s"
        " AND first_pair >= %s AND last_pair <= %s",
        (now, scope.user_id, scope.chat_id, keep, first, last),
    )
    return cur.rowcount
