"""The read path's one round trip, and what each recall surfaced."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np
from psycopg.rows import dict_row

from memory.models import Scope
from memory.store.memories import Conn

# -- recall -----------------------------------------------------------------------------------

# What ranking and rendering read of a candidate (see retriever.Recalled): nothing more
# crosses the wire on the hot path.
RECALL_COLUMNS = ("id", "type", "surface", "content", "pinned", "salience", "confidence",
                  "due_at", "created_at", "updated_at", "last_reinforced_at")


_SEM_SCAN = """            sem AS MATERIALIZED (
                SELECT id FROM (
                    (SELECT id, embedding <=> (SELECT v FROM q) AS d FROM memories
                     WHERE {chat} AND {fits}
                     ORDER BY d, id LIMIT %(k)s)
                    UNION ALL
                    (SELECT id, embedding <=> (SELECT v FROM q) AS d FROM memories
                     WHERE {chat} AND NOT ({fits})
                     ORDER BY d, id LIMIT %(k)s)
                ) s
                ORDER BY d, id LIMIT %(k)s
            ),
"""
_SEM_GIVEN = """            sem AS MATERIALIZED (SELECT unnest(%(sem)s::bigint[]) AS id),
"""


def recall_candidates(conn: Conn, scope: Scope, vector: np.ndarray, query: str, k: int,
                      cooldown: int, sem_ids: Sequence[int] | None = None
                      ) -> list[dict[str, Any]]:
    """One round trip: the chat's pinned, profile, open-loop and protocol memories, the top
    ``k`` by cosine (exact scan) and the top ``k`` by full-text rank: RECALL_COLUMNS of
    each, with its cosine, text rank, and whether it was spoken in the last ``cooldown``
    recalls.

    The scans read only the covering indexes of sql/005_recall_speed.sql (index-only), each
    split in two by the same predicate as its partial index, so rows too wide for the
    index are still scanned; only the picked candidates are read from the heap. The query
    vector and tsquery reach the scans as InitPlan parameters (``(SELECT v FROM q)``), not
    through a join: a join costs a CTE rescan per memory. ``sem_ids``, the top ``k`` by
    cosine found elsewhere (memory.vectors), replaces the vector scan.
    """
    # Must match the predicates of the partial indexes in 005_recall_speed.sql exactly.
    fits = ("octet_length(user_id) + octet_length(chat_id) + 4 * vector_dims(embedding)"
            " <= 2400")
    short = ("octet_length(user_id) + octet_length(chat_id) + 5 * octet_length(content)"
             " <= 2400")
    chat = "user_id = %(u)s AND chat_id = %(c)s AND status = 'active'"
    sem = (_SEM_GIVEN if sem_ids is not None else _SEM_SCAN).format(chat=chat, fits=fits)
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            f"""
            WITH q AS MATERIALIZED (
                SELECT %(v)s::vector AS v,
                       -- any word may match: OR, not plainto's AND
                       nullif(replace(plainto_tsquery('english', %(q)s)::text, '&', '|'), '')
                           ::tsquery AS tq
            ),
{sem}            fts AS MATERIALIZED (
                SELECT id, rank FROM (
                    (SELECT id, ts_rank_cd(tsv, (SELECT tq FROM q)) AS rank FROM memories
                     WHERE {chat} AND {short} AND tsv @@ (SELECT tq FROM q)
                     ORDER BY rank DESC, id LIMIT %(k)s)
                    UNION ALL
                    (SELECT id, ts_rank_cd(tsv, (SELECT tq FROM q)) AS rank FROM memories
                     WHERE {chat} AND NOT ({short}) AND tsv @@ (SELECT tq FROM q)
                     ORDER BY rank DESC, id LIMIT %(k)s)
                ) t
                ORDER BY rank DESC, id LIMIT %(k)s
            ),
            always AS MATERIALIZED (
                SELECT id FROM memories
                WHERE {chat}
                  AND (pinned OR type IN ('profile', 'open_loop', 'protocol')
                       OR surface = 'avoid')
            )
            SELECT {", ".join("m." + c for c in RECALL_COLUMNS)},
                   coalesce(1 - (m.embedding <=> q.v), 0) AS cosine,
                   coalesce(fts.rank, 0) AS text_rank,
                   m.id = ANY(ARRAY(
                       SELECT unnest(spoken_ids) FROM (
                           SELECT spoken_ids FROM recalls
                           WHERE user_id = %(u)s AND chat_id = %(c)s
                           ORDER BY id DESC LIMIT %(n)s) r)) AS cooled
            FROM memories m CROSS JOIN q
            LEFT JOIN fts ON fts.id = m.id
            WHERE m.user_id = %(u)s AND m.chat_id = %(c)s AND m.status = 'active'
              AND m.id = ANY(ARRAY(
                  SELECT id FROM always UNION SELECT id FROM sem UNION SELECT id FROM fts))
            ORDER BY m.id
            """,
            {"v": vector, "q": query, "u": scope.user_id, "c": scope.chat_id, "k": k,
             "n": cooldown, "sem": list(sem_ids) if sem_ids is not None else None},
        )
        return list(cur.fetchall())


def insert_recall(conn: Conn, scope: Scope, *, at: datetime, query: str,
                  memory_ids: Sequence[int], spoken_ids: Sequence[int], tokens: int) -> None:
    conn.execute(
        "INSERT INTO recalls (user_id, chat_id, at, query, memory_ids, spoken_ids, tokens)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s)",
        (scope.user_id, scope.chat_id, at, query, list(memory_ids), list(spoken_ids), tokens),
    )
    if memory_ids:
        conn.execute(
            "UPDATE memories SET last_surfaced_at = %s, surface_count = surface_count + 1"
            " WHERE user_id = %s AND chat_id = %s AND id = ANY(%s)",
            (at, scope.user_id, scope.chat_id, list(memory_ids)),
        )


def latest_summaries(conn: Conn, scope: Scope, limit: int) -> list[dict[str, Any]]:
    """The newest summary of each period (month, week, day), newest period first."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT DISTINCT ON (period) period, start_at, end_at, content, tokens"
            " FROM summaries WHERE user_id = %s AND chat_id = %s"
            " ORDER BY period, start_at DESC",
            (scope.user_id, scope.chat_id),
        )
        rows = list(cur.fetchall())
    order = {"day": 0, "week": 1, "month": 2}
    rows.sort(key=lambda r: order.get(r["period"], 3))
    return rows[:limit]


def memories_version(conn: Conn, scope: Scope) -> tuple[int, int]:
    """The chat's change counter of active memory vectors: the newest change's id and the
    number of changes kept. The count catches a change committed after a newer one (ids are
    taken at insert, not at commit)."""
    row = conn.execute(
        "SELECT coalesce(max(id), 0), count(*) FROM memory_changes"
        " WHERE user_id = %s AND chat_id = %s",
        (scope.user_id, scope.chat_id),
    ).fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


def active_vectors(conn: Conn, scope: Scope
                   ) -> tuple[tuple[int, int] | None, np.ndarray, np.ndarray]:
    """(version, ids, unit vectors as rows) of the chat's active memories. The version is
    None when the chat changed while they were read: then they describe no version."""
    before = memories_version(conn, scope)
    with conn.cursor(binary=True) as cur:
        cur.execute(
            "SELECT id, embedding FROM memories WHERE user_id = %s AND chat_id = %s"
            " AND status = 'active' AND embedding IS NOT NULL ORDER BY id",
            (scope.user_id, scope.chat_id),
        )
        rows = cur.fetchall()
    after = memories_version(conn, scope)
    ids = np.array([r[0] for r in rows], dtype=np.int64)
    matrix = (np.vstack([np.asarray(r[1].to_numpy(), dtype=np.float32) for r in rows])
              if rows else np.zeros((0, 0), dtype=np.float32))
    return (before if before == after else None), ids, matrix
