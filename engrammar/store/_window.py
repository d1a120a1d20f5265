"""The short-term window: pairs of the log and their block summaries.

Pair k of a chat is its k-th user message and the replies before the next one; anything
before the first user message belongs to pair 1. Every read here is bounded by the pairs it
asks for, whatever the chat's length: the chat's pair count is kept by triggers
(``chat_pairs``, migration 017), each block records the ids its pairs span
(``first_id``..``last_id``), and raw pairs are read back from the newest, or from the end of
the block after them, never numbered by a window function over the whole chat.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from psycopg.rows import dict_row

from engrammar.models import Message, Scope
from engrammar.store._memories import Conn

# Past every message id: the upper bound of a stretch that runs to the end of the log.
END = 2**63 - 1

# -- pairs ------------------------------------------------------------------------------------

def pair_count(conn: Conn, scope: Scope) -> int:
    row = conn.execute("SELECT sum(pairs)::bigint FROM chat_pairs WHERE user_id = %s"
                       " AND chat_id = %s",
                       (scope.user_id, scope.chat_id)).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def pairs_back(conn: Conn, scope: Scope, after_id: int, before_id: int | None,
               last_pair: int | None, count: int) -> list[tuple[int, Message]]:
    """(pair number, message), oldest first, for the user and assistant messages of the
    newest ``count`` pairs of a stretch of the log: the messages after ``after_id`` and
    before ``before_id`` (None: to the end of the log), whose last pair is ``last_pair``
    (None: the chat's pair count, read in the same statement as the rows, so a message
    recorded meanwhile cannot shift the numbering). A walk of the chat's index back over
    the pairs asked for: it costs the same at the chat's 100,000th message as at its 10th.
    Messages before the stretch's first user message are numbered as the pair before it
    (pair 1 at the start of the log); callers keep the pairs they planned."""
    if count <= 0:
        return []
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            """
            WITH top AS (
                SELECT coalesce(%(last)s::bigint,
                                (SELECT sum(pairs)::bigint FROM chat_pairs
                                 WHERE user_id = %(u)s AND chat_id = %(c)s), 0) AS n
            ), start AS (
                -- The user message opening the oldest pair asked for; all of the stretch
                -- (with what comes before its first user message) when that is its first.
                SELECT CASE WHEN count(*) = 2 THEN max(id) ELSE %(after)s + 1 END AS id
                FROM (SELECT id FROM messages
                      WHERE user_id = %(u)s AND chat_id = %(c)s AND role = 'user'
                        AND id > %(after)s AND id < %(before)s
                      ORDER BY id DESC OFFSET %(k)s - 1 LIMIT 2) newest
            )
            SELECT * FROM (
                SELECT id, user_id, chat_id, role, content, at,
                       greatest(1, (SELECT n FROM top) + (role = 'user')::int
                                   - count(*) FILTER (WHERE role = 'user')
                                         OVER (ORDER BY id DESC)) AS pair
                FROM messages WHERE user_id = %(u)s AND chat_id = %(c)s
                  AND role IN ('user', 'assistant') AND id < %(before)s
                  AND id >= (SELECT id FROM start)
            ) t ORDER BY id
            """,
            {"u": scope.user_id, "c": scope.chat_id, "after": after_id,
             "before": END if before_id is None else before_id, "last": last_pair,
             "k": count},
        )
        rows = cur.fetchall()
    return [(int(r.pop("pair")), Message.model_validate(r)) for r in rows]


def pairs_ahead(conn: Conn, scope: Scope, after_id: int, count: int
                ) -> tuple[list[tuple[int, str, str]], int | None]:
    """The next ``count`` pairs after message ``after_id``: (id, role, content) of their user
    and assistant messages in id order, and the id of the user message that opens the pair
    after them (None while it has not been said). One range of the chat's index."""
    row = conn.execute(
        """
        WITH stop AS (
            SELECT id FROM messages
            WHERE user_id = %(u)s AND chat_id = %(c)s AND role = 'user' AND id > %(after)s
            ORDER BY id OFFSET %(k)s LIMIT 1
        )
        SELECT (SELECT id FROM stop), array_agg(id ORDER BY id),
               array_agg(role ORDER BY id), array_agg(content ORDER BY id)
        FROM messages
        WHERE user_id = %(u)s AND chat_id = %(c)s AND id > %(after)s
          AND id < coalesce((SELECT id FROM stop), %(end)s)
          AND role IN ('user', 'assistant')
        """,
        {"u": scope.user_id, "c": scope.chat_id, "after": after_id, "k": count, "end": END},
    ).fetchone()
    assert row is not None  # an aggregate: one row, always
    stop, ids, roles, contents = row
    said = list(zip(ids or [], roles or [], contents or [], strict=True))
    return [(int(i), str(r), str(t)) for i, r, t in said], \
        (int(stop) if stop is not None else None)


def block_messages(conn: Conn, scope: Scope, first_id: int, last_id: int
                   ) -> list[tuple[str, str]]:
    """(role, content) of the user and assistant messages a block spans, in order."""
    rows = conn.execute(
        "SELECT role, content FROM messages WHERE user_id = %s AND chat_id = %s"
        " AND id BETWEEN %s AND %s AND role IN ('user', 'assistant') ORDER BY id",
        (scope.user_id, scope.chat_id, first_id, last_id)).fetchall()
    return [(str(r[0]), str(r[1])) for r in rows]


def pair_bounds(conn: Conn, scope: Scope, first: int, last: int) -> tuple[int, int] | None:
    """The ids pairs first..last span (from their first message to the one before the next
    pair's), or None when the log has no pair ``first`` or ``last``. Walks the user
    messages up to pair ``last``: for a block set by hand; the job cuts from the block
    before."""
    row = conn.execute(
        """
        WITH users AS (
            SELECT id FROM messages
            WHERE user_id = %(u)s AND chat_id = %(c)s AND role = 'user'
            ORDER BY id LIMIT %(l)s + 1
        ), numbered AS (SELECT id, row_number() OVER (ORDER BY id) AS k FROM users)
        SELECT CASE WHEN %(f)s = 1 THEN 1 ELSE (SELECT id FROM numbered WHERE k = %(f)s) END,
               coalesce((SELECT id FROM numbered WHERE k = %(l)s + 1) - 1,
                        (SELECT max(id) FROM messages
                         WHERE user_id = %(u)s AND chat_id = %(c)s)),
               (SELECT count(*) FROM numbered) >= %(l)s
        """,
        {"u": scope.user_id, "c": scope.chat_id, "f": first, "l": last},
    ).fetchone()
    if row is None or row[0] is None or row[1] is None or not row[2]:
        return None
    return int(row[0]), int(row[1])

# -- blocks -----------------------------------------------------------------------------------

BLOCK_COLUMNS = ("block_no, first_pair, last_pair, state, summary, tokens, attempts, error,"
                 " first_id, last_id")


def list_blocks(conn: Conn, scope: Scope, states: Sequence[str] | None = None
                ) -> list[dict[str, Any]]:
    """Every block of the chat in ``states`` (all, archived included, when None)."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            f"SELECT {BLOCK_COLUMNS} FROM context_blocks WHERE user_id = %s AND chat_id = %s"
            " AND (%s::text[] IS NULL OR state = ANY(%s)) ORDER BY first_pair, block_no",
            (scope.user_id, scope.chat_id, states, states),
        )
        return list(cur.fetchall())


def live_blocks(conn: Conn, scope: Scope, active_only: bool = False) -> list[dict[str, Any]]:
    """The chat's blocks that are not archived (only the active ones, if asked), by first
    pair: the index of live blocks, never the archived ones every merge leaves behind."""
    state = "state = 'ACTIVE'" if active_only else "state <> 'ARCHIVED'"
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            f"SELECT {BLOCK_COLUMNS} FROM context_blocks WHERE user_id = %s AND chat_id = %s"
            f" AND state <> 'ARCHIVED' AND {state} ORDER BY first_pair, block_no",
            (scope.user_id, scope.chat_id),
        )
        return list(cur.fetchall())


def insert_blocks(conn: Conn, scope: Scope, spans: Sequence[tuple[int, int, int, int]],
                  now: datetime, state: str = "PENDING", summaries: Sequence[str] = (),
                  tokens: Sequence[int] = ()) -> list[int]:
    """New blocks over (first pair, last pair, first id, last id) each, numbered on from the
    chat's last, in one statement; their numbers in the order given. ``summaries`` (and
    their ``tokens``) for blocks written ready."""
    if not spans:
        return []
    columns = list(zip(*spans, strict=True))
    rows = conn.execute(
        "INSERT INTO context_blocks (user_id, chat_id, block_no, first_pair, last_pair,"
        " first_id, last_id, state, summary, tokens, attempts, updated_at)"
        " SELECT %(u)s, %(c)s, top.n + s.k, s.f, s.l, s.fi, s.li, %(state)s, s.t, s.n,"
        " CASE WHEN s.t IS NULL THEN 0 ELSE 1 END, %(now)s"
        " FROM (SELECT coalesce(max(block_no), 0) AS n FROM context_blocks"
        "       WHERE user_id = %(u)s AND chat_id = %(c)s) top,"
        " unnest(%(f)s::int[], %(l)s::int[], %(fi)s::bigint[], %(li)s::bigint[],"
        "        %(t)s::text[], %(n)s::int[]) WITH ORDINALITY AS s(f, l, fi, li, t, n, k)"
        " ORDER BY s.k RETURNING block_no",
        {"u": scope.user_id, "c": scope.chat_id, "state": state, "now": now,
         "f": list(columns[0]), "l": list(columns[1]), "fi": list(columns[2]),
         "li": list(columns[3]),
         "t": list(summaries) if summaries else [None] * len(spans),
         "n": list(tokens) if tokens else [None] * len(spans)},
    ).fetchall()
    return sorted(int(r[0]) for r in rows)


def insert_block(conn: Conn, scope: Scope, first: int, last: int, now: datetime,
                 ids: tuple[int, int] | None = None) -> int:
    """A new PENDING block over pairs first..last (spanning ``ids``, else found in the
    log); its number is the chat's next."""
    span = ids or pair_bounds(conn, scope, first, last)
    if span is None:
        raise ValueError(f"chat {scope} has no pairs {first}-{last} for a block")
    return insert_blocks(conn, scope, [(first, last, *span)], now)[0]


def claim_block(conn: Conn, state: str, scope: Scope | None = None
                ) -> tuple[Scope, dict[str, Any]] | None:
    """Lock one block in ``state`` (of one chat, when given) that no other worker holds."""
    where = "" if scope is None else " AND user_id = %s AND chat_id = %s"
    args: tuple[str, ...] = (state,) if scope is None else (state, scope.user_id,
                                                           scope.chat_id)
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            f"SELECT user_id, chat_id, {BLOCK_COLUMNS} FROM context_blocks WHERE state = %s"
            f"{where} ORDER BY user_id, chat_id, first_pair, block_no"
            " LIMIT 1 FOR UPDATE SKIP LOCKED", args)
        row = cur.fetchone()
    if row is None:
        return None
    found = Scope(user_id=row.pop("user_id"), chat_id=row.pop("chat_id"))
    return found, row


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


def delete_pending(conn: Conn, scope: Scope, from_pair: int) -> int:
    """Back to NOT_CREATED: the chat's pending blocks from pair ``from_pair`` on."""
    return conn.execute(
        "DELETE FROM context_blocks WHERE user_id = %s AND chat_id = %s AND state = 'PENDING'"
        " AND first_pair >= %s", (scope.user_id, scope.chat_id, from_pair)).rowcount


def activate_block(conn: Conn, scope: Scope, block_no: int, first: int, last: int,
                   now: datetime, summary: str | None = None, tokens: int | None = None
                   ) -> bool:
    """A waiting (PENDING or PREPARED) block over pairs first..last becomes ACTIVE (with
    ``summary``, when given) and the active blocks inside its pairs are ARCHIVED, in one
    statement; if an active block covers it already (a merge activated over it meanwhile),
    it retires ARCHIVED unused. Whether it became active."""
    row = conn.execute(
        """
        WITH covering AS (
            SELECT 1 FROM context_blocks
            WHERE user_id = %(u)s AND chat_id = %(c)s AND state <> 'ARCHIVED'
              AND state = 'ACTIVE' AND block_no <> %(b)s
              AND first_pair <= %(f)s AND last_pair >= %(l)s
            LIMIT 1
        ), target AS (
            UPDATE context_blocks
            SET state = CASE WHEN EXISTS (SELECT 1 FROM covering) THEN 'ARCHIVED'
                             ELSE 'ACTIVE' END,
                summary = coalesce(%(s)s, summary), tokens = coalesce(%(t)s, tokens),
                updated_at = %(now)s
            WHERE user_id = %(u)s AND chat_id = %(c)s AND block_no = %(b)s
              AND state IN ('PENDING', 'PREPARED')
            RETURNING state
        ), retired AS (
            UPDATE context_blocks SET state = 'ARCHIVED', updated_at = %(now)s
            WHERE user_id = %(u)s AND chat_id = %(c)s AND state <> 'ARCHIVED'
              AND state = 'ACTIVE' AND block_no <> %(b)s
              AND first_pair >= %(f)s AND last_pair <= %(l)s
              AND EXISTS (SELECT 1 FROM target WHERE state = 'ACTIVE')
            RETURNING 1
        )
        SELECT (SELECT state FROM target), (SELECT count(*) FROM retired)
        """,
        {"u": scope.user_id, "c": scope.chat_id, "b": block_no, "f": first, "l": last,
         "s": summary, "t": tokens, "now": now},
    ).fetchone()
    return row is not None and row[0] == "ACTIVE"


def merge_blocks(conn: Conn, scope: Scope, children: Sequence[int],
                 span: tuple[int, int, int, int], summary: str, tokens: int, now: datetime
                 ) -> int | None:
    """One ACTIVE block over ``span`` (first pair, last pair, first id, last id) with its
    summary, and its ``children`` ARCHIVED, in one statement, if they are all still active;
    the new block's number, else None (nothing written)."""
    first, last, first_id, last_id = span
    row = conn.execute(
        """
        WITH kids AS (
            SELECT block_no FROM context_blocks
            WHERE user_id = %(u)s AND chat_id = %(c)s AND block_no = ANY(%(kids)s)
              AND state <> 'ARCHIVED' AND state = 'ACTIVE'
            FOR UPDATE
        ), merged AS (
            INSERT INTO context_blocks (user_id, chat_id, block_no, first_pair, last_pair,
                                        first_id, last_id, state, summary, tokens, attempts,
                                        updated_at)
            SELECT %(u)s, %(c)s, coalesce(max(block_no), 0) + 1, %(f)s, %(l)s, %(fi)s,
                   %(li)s, 'ACTIVE', %(s)s, %(t)s, 1, %(now)s
            FROM context_blocks WHERE user_id = %(u)s AND chat_id = %(c)s
            HAVING (SELECT count(*) FROM kids) = cardinality(%(kids)s::int[])
            RETURNING block_no
        ), retired AS (
            UPDATE context_blocks SET state = 'ARCHIVED', updated_at = %(now)s
            WHERE user_id = %(u)s AND chat_id = %(c)s
              AND block_no IN (SELECT block_no FROM kids)
              AND EXISTS (SELECT 1 FROM merged)
            RETURNING 1
        )
        SELECT (SELECT block_no FROM merged), (SELECT count(*) FROM retired)
        """,
        {"u": scope.user_id, "c": scope.chat_id, "kids": list(children), "f": first,
         "l": last, "fi": first_id, "li": last_id, "s": summary, "t": tokens, "now": now},
    ).fetchone()
    return int(row[0]) if row is not None and row[0] is not None else None


# -- the job's hold on a chat -----------------------------------------------------------------

# A key apart from the chat's write lock: the blocks job holds it across the transactions in
# which it folds one chat, so a second worker passes the chat by instead of summarising the
# same pairs again. Session-level: it outlives each block's commit, and dies with the
# connection if the worker does.
_FOLD_KEY = ("hashtextextended('blocks' || chr(31) || length(%(u)s) || chr(31) || %(u)s"
             " || %(c)s, 0)")


def hold_chat_blocks(conn: Conn, scope: Scope) -> bool:
    """Take the chat's fold (False when another worker holds it). While held, the session's
    commits do not wait for the disk: blocks are derived from the log, so a crash can only
    lose the last few whole blocks, which the next run cuts again, and each is visible to
    turns the moment it commits."""
    row = conn.execute(f"SELECT pg_try_advisory_lock({_FOLD_KEY})",
                       {"u": scope.user_id, "c": scope.chat_id}).fetchone()
    held = bool(row and row[0])
    if held:
        conn.execute("SET synchronous_commit = off")
    return held


def release_chat_blocks(conn: Conn, scope: Scope) -> None:
    conn.execute("RESET synchronous_commit")
    conn.execute(f"SELECT pg_advisory_unlock({_FOLD_KEY})",
                 {"u": scope.user_id, "c": scope.chat_id})
