"""The read path's one round trip, and what each recall surfaced."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from psycopg.abc import Buffer
from psycopg.adapt import Loader
from psycopg.pq import Format
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from engrammar.errors import DatabaseError
from engrammar.models import Memory, Scope, Where
from engrammar.store._indexes import ALWAYS, K1, RECALL_COLUMNS, TEXT_FITS, VECTOR_FITS, B
from engrammar.store._memories import MEMORY_COLUMNS, Conn

# -- recall -----------------------------------------------------------------------------------


def recall_candidates(conn: Conn, scope: Scope, vector: np.ndarray, query: str, k: int,
                      where: Where | None = None) -> list[tuple[Any, ...]]:
    """One round trip: the chat's always-candidates (store.indexes.ALWAYS), the top ``2k``
    by pgvector's cosine (an exact scan) and the top ``2k`` by BM25 over the chat, by id.
    The caller keeps the best k of each by its exact measures (candidates.from_scan), so it
    picks what the copy would. Each row: RECALL_COLUMNS, the vector in binary form, the
    occurrences of each query lexeme in the memory (in the query's lexeme order), the
    memory's length (distinct lexemes), whether it came by cosine and whether by text,
    then the chat's BM25 statistics (active memories, their summed length, each query
    lexeme's document frequency), the same on every row.

    The scans read only the covering indexes of sql/005_recall_speed.sql (index-only), each
    split in two by the same predicate as its partial index, so rows too wide for the
    index are still scanned; only the picked candidates are read from the heap. The query
    vector and tsquery reach the scans as InitPlan parameters (``(SELECT v FROM q)``), not
    through a join: a join costs a CTE rescan per memory. This is recall for the chats
    recall._snapshot does not hold.

    ``where`` (a filter on app metadata) narrows the nearest, the best by text and the
    always-candidates to the chat's rows that match it; the BM25 statistics stay the whole
    chat's, as the copy's do.
    """
    # The predicates of the partial indexes, word for word (store.indexes).
    fits, short = VECTOR_FITS, TEXT_FITS
    chat = "user_id = %(u)s AND chat_id = %(c)s AND status = 'active'"
    params: dict[str, Any] = {"v": vector, "q": query, "u": scope.user_id,
                              "c": scope.chat_id, "pre": 2 * k}
    only = ""
    if where:
        tests = []
        for i, (key, values) in enumerate(sorted(where.items())):
            tests.append(f"app_metadata -> %(wk{i})s = ANY(%(wv{i})s::jsonb[])")
            params[f"wk{i}"], params[f"wv{i}"] = key, [Jsonb(v) for v in values]
        only = (" AND id IN (SELECT id FROM memories WHERE "
                + " AND ".join([chat, *tests]) + ")")
    # BM25 in SQL only orders the text candidates; the caller rescores them exactly.
    with conn.cursor(binary=True) as cur:
        cur.adapters.register_loader(_vector_oid(conn), _RawVector)
        cur.execute(
            f"""
            WITH words AS MATERIALIZED (
                SELECT tsvector_to_array(to_tsvector('english', %(q)s)) AS lexemes
            ),
            q AS MATERIALIZED (
                SELECT %(v)s::vector AS v, lexemes,
                       -- any word may match: the lexemes joined by OR, each quoted (a
                       -- lexeme may hold & or |), quotes and backslashes doubled
                       (SELECT string_agg('''' || replace(replace(w, '\\', '\\\\'),
                                                          '''', '''''') || '''', ' | ')
                        FROM unnest(lexemes) w)::tsquery AS tq
                FROM words
            ),
            scanned AS MATERIALIZED (
                -- One pass over the chat's text index: its size and summed length for
                -- BM25, and the rows any query word matches.
                SELECT count(*) AS n, coalesce(sum(length(tsv)), 0) AS total,
                       array_agg(id) FILTER (WHERE tsv @@ (SELECT tq FROM q)) AS ids,
                       array_agg(tsv) FILTER (WHERE tsv @@ (SELECT tq FROM q)) AS tsvs
                FROM ((SELECT id, tsv FROM memories WHERE {chat} AND {short})
                      UNION ALL
                      (SELECT id, tsv FROM memories WHERE {chat} AND NOT ({short}))) r
            ),
            stats AS MATERIALIZED (
                SELECT n, total, CASE WHEN total > 0 THEN total::float8 / n ELSE 1 END
                       AS average FROM scanned
            ),
            hits AS MATERIALIZED (
                -- Each query word in each matching row: its occurrences and the row's
                -- length, once, for the document frequencies and the ranking alike.
                SELECT m.id, length(m.tsv)::float8 AS len, w.lexeme,
                       coalesce(array_length(w.positions, 1), 1)::float8 AS tf
                FROM scanned, unnest(scanned.ids, scanned.tsvs) m(id, tsv), unnest(m.tsv) w, q
                WHERE w.lexeme = ANY(q.lexemes)
            ),
            frequency AS MATERIALIZED (
                SELECT lexeme, count(*) AS df FROM hits GROUP BY lexeme
            ),
            terms AS MATERIALIZED (
                SELECT l.w AS lexeme, l.i AS ord, coalesce(f.df, 0) AS df,
                       ln(1 + ((SELECT n FROM stats) - coalesce(f.df, 0) + 0.5)
                              / (coalesce(f.df, 0) + 0.5)) AS idf
                FROM unnest((SELECT lexemes FROM q)) WITH ORDINALITY l(w, i)
                LEFT JOIN frequency f ON f.lexeme = l.w
            ),
            sem AS MATERIALIZED (
                SELECT id FROM (
                    (SELECT id, embedding <=> (SELECT v FROM q) AS d FROM memories
                     WHERE {chat} AND {fits}{only}
                     ORDER BY d, id LIMIT %(pre)s)
                    UNION ALL
                    (SELECT id, embedding <=> (SELECT v FROM q) AS d FROM memories
                     WHERE {chat} AND NOT ({fits}){only}
                     ORDER BY d, id LIMIT %(pre)s)
                ) s
                ORDER BY d, id LIMIT %(pre)s
            ),
            fts AS MATERIALIZED (
                SELECT h.id FROM hits h JOIN terms t ON t.lexeme = h.lexeme
                WHERE true{only.replace(" id IN", " h.id IN")}
                GROUP BY h.id
                ORDER BY sum(t.idf * h.tf * {K1 + 1} / (h.tf + {K1} * (1 - {B}
                         + {B} * h.len / (SELECT average FROM stats)))) DESC, h.id
                LIMIT %(pre)s
            ),
            always AS MATERIALIZED (
                SELECT id FROM memories WHERE {chat} AND {ALWAYS}{only}
            )
            SELECT {", ".join("m." + c for c in RECALL_COLUMNS)}, m.embedding,
                   ARRAY(SELECT coalesce((SELECT coalesce(array_length(w.positions, 1), 1)
                                          FROM unnest(m.tsv) w WHERE w.lexeme = t.lexeme),
                                         0)::float8
                         FROM terms t ORDER BY t.ord) AS tf,
                   length(m.tsv),
                   m.id IN (SELECT id FROM sem), m.id IN (SELECT id FROM fts),
                   (SELECT n FROM stats), (SELECT total FROM stats)::bigint,
                   ARRAY(SELECT t.df::float8 FROM terms t ORDER BY t.ord)
            FROM memories m
            WHERE m.user_id = %(u)s AND m.chat_id = %(c)s AND m.status = 'active'
              AND m.id = ANY(ARRAY(
                  SELECT id FROM always UNION SELECT id FROM sem UNION SELECT id FROM fts))
            ORDER BY m.id
            """,
            params,
        )
        return list(cur.fetchall())


def insert_recall(conn: Conn, scope: Scope, *, at: datetime, query: str,
                  memory_ids: Sequence[int], spoken_ids: Sequence[int], tokens: int,
                  prompt: Prompt | None = None) -> None:
    """Note what a recall surfaced: one row, folded into the memories by lifecycle
    (store.fold_recalls) rather than updating each of them on the turn's path; and, for a
    compiled turn, the prompt it gave, in ``prompts`` (never in the model-call audit).

    Without waiting for the disk at commit (synchronous_commit off, this transaction only).
    A crash may lose the last fraction of a second of these notes, which only feed the
    cooldown, decay and the audit; it cannot leave the database inconsistent.
    """
    with conn.pipeline():
        conn.execute("SET LOCAL synchronous_commit = off")
        conn.execute(
            "INSERT INTO recalls (user_id, chat_id, at, query, memory_ids, spoken_ids, tokens)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s)",
            (scope.user_id, scope.chat_id, at, query, list(memory_ids), list(spoken_ids),
             tokens))
        if prompt is not None:
            conn.execute(
                "INSERT INTO prompts (user_id, chat_id, at, budget, tokens, layers, messages)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s)",
                (scope.user_id, scope.chat_id, at, prompt.budget, prompt.tokens,
                 Jsonb(prompt.layers), Jsonb(prompt.messages)))


@dataclass(frozen=True)
class Prompt:
    """A compiled turn's prompt, as audited."""

    budget: int
    tokens: int
    layers: dict[str, int]
    messages: list[dict[str, str]]


def list_prompts(conn: Conn, scope: Scope) -> list[dict[str, Any]]:
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT id, at, budget, tokens, layers, messages FROM prompts"
            " WHERE user_id = %s AND chat_id = %s ORDER BY id",
            (scope.user_id, scope.chat_id))
        return list(cur.fetchall())


_LATEST_SUMMARIES = """
    SELECT DISTINCT ON (period) period, start_at, end_at, content, tokens
    FROM summaries WHERE user_id = %(u)s AND chat_id = %(c)s
    ORDER BY period, start_at DESC
"""


def _newest_periods(rows: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    order = {"day": 0, "week": 1, "month": 2}
    rows.sort(key=lambda r: order.get(r["period"], 3))
    return rows[:limit]


def latest_summaries(conn: Conn, scope: Scope, limit: int) -> list[dict[str, Any]]:
    """The newest summary of each period (day, week, month), shortest period first."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(_LATEST_SUMMARIES, {"u": scope.user_id, "c": scope.chat_id})
        return _newest_periods(list(cur.fetchall()), limit)


# -- the in-process copy (recall._snapshot) ----------------------------------------------------

@dataclass(frozen=True)
class Probe:
    """What every recall reads first, in one round trip with the chat's summaries."""

    # The chat's change log in brief (newest id, count, sum of ids): equal to a copy's own,
    # the copy is current. The count and sum catch a change committed after a newer one.
    version: tuple[int, int, int]
    lexemes: list[str]  # the query's words as full-text search sees them (stemmed)
    cooled: frozenset[int]  # memories spoken in the chat's last few recalls
    summaries: list[dict[str, Any]]
    # The chat's log as indexed (recall._logsearch): its index watermark, and when the chat
    # row was made (in microseconds), which changes when the chat is erased and begun anew.
    log_version: tuple[int, int] = (0, 0)
    # The user scope's change-log version (as ``version``) when the chat reads it: asked
    # for (some types are user-wide) and the chat is not private; else None.
    user_version: tuple[int, int, int] | None = None


def recall_probe(conn: Conn, scope: Scope, query: str, cooldown: int, summaries: int,
                 shared: bool = False) -> Probe:
    """The chat's change-log version, the query's lexemes, the memories spoken in the last
    ``cooldown`` recalls and the newest ``summaries`` summaries (or as many as the chat's
    settings say): one statement, one round trip. (Two statements pipelined cost ~3x the
    client's CPU of one, and more wall time, over a local socket.) ``shared``: the user
    scope's version too, unless the chat is private (store._scopes)."""
    params = {"u": scope.user_id, "c": scope.chat_id, "q": query, "n": cooldown,
              "shared": shared, "sums": summaries > 0}
    row = conn.execute(
        """
        SELECT (SELECT ARRAY[coalesce(max(id), 0), count(*), coalesce(sum(id), 0)]
                FROM memory_changes WHERE user_id = %(u)s AND chat_id = %(c)s),
               tsvector_to_array(to_tsvector('english', %(q)s)),
               ARRAY(SELECT unnest(spoken_ids) FROM (
                   SELECT spoken_ids FROM recalls WHERE user_id = %(u)s AND chat_id = %(c)s
                   ORDER BY id DESC LIMIT %(n)s) r),
               (SELECT ARRAY[indexed_through,
                             (extract(epoch FROM created_at) * 1000000)::bigint]
                FROM chats WHERE user_id = %(u)s AND chat_id = %(c)s),
               CASE WHEN %(shared)s AND NOT coalesce(
                        (SELECT private FROM chats
                         WHERE user_id = %(u)s AND chat_id = %(c)s), false)
               THEN (SELECT ARRAY[coalesce(max(id), 0), count(*), coalesce(sum(id), 0)]
                     FROM memory_changes WHERE user_id = %(u)s AND chat_id = '') END,
               (SELECT (overrides->>'summaries')::int FROM chat_settings
                WHERE user_id = %(u)s AND chat_id = %(c)s),
               s.periods, s.starts, s.ends, s.contents, s.tokens
        FROM (SELECT array_agg(period) AS periods, array_agg(start_at) AS starts,
                     array_agg(end_at) AS ends, array_agg(content) AS contents,
                     array_agg(tokens) AS tokens
              FROM (""" + _LATEST_SUMMARIES + """) latest WHERE %(sums)s) s
        """, params).fetchone()
    assert row is not None
    latest = [{"period": p, "start_at": start, "end_at": end, "content": content,
               "tokens": tokens}
              for p, start, end, content, tokens in zip(*row[6:11], strict=True)
              ] if row[6] is not None else []
    # The chat's own count of summaries (set through the service), when the caller asks
    # for summaries at all.
    kept = summaries if row[5] is None else int(row[5])
    return Probe(version=(int(row[0][0]), int(row[0][1]), int(row[0][2])),
                 lexemes=list(row[1]), cooled=frozenset(row[2]),
                 summaries=_newest_periods(latest, kept),
                 log_version=(int(row[3][0]), int(row[3][1])) if row[3] else (0, 0),
                 user_version=(int(row[4][0]), int(row[4][1]), int(row[4][2]))
                 if row[4] is not None else None)


def change_log(conn: Conn, scope: Scope) -> list[tuple[int, int | None]]:
    """(change id, memory id) of each change the chat's log holds. The memory is None for
    a row naming none (from before sql/008, a bulk statement, a cut of the log, a
    TRUNCATE): a copy meeting one reads the chat whole."""
    return [(int(r[0]), r[1]) for r in conn.execute(
        "SELECT id, memory_id FROM memory_changes WHERE user_id = %s AND chat_id = %s",
        (scope.user_id, scope.chat_id)).fetchall()]


def _vector_oid(conn: Conn) -> int:
    vector = conn.adapters.types.get("vector")  # registered by db.Database's pool
    if vector is None:
        raise DatabaseError("the vector type is not registered on this connection")
    return vector.oid


class _RawVector(Loader):
    """A vector's binary form as it came: the copy decodes all of them in one numpy call."""

    format = Format.BINARY

    def load(self, data: Buffer) -> bytes:
        return bytes(data)


def active_rows(conn: Conn, scope: Scope, ids: Sequence[int] | None = None,
                limit: int | None = None
                ) -> tuple[list[tuple[Any, ...]], list[bytes | None], list[str]]:
    """The chat's active memories (or those of ``ids`` still active), by id, at most
    ``limit``: RECALL_COLUMNS of each, its vector in pgvector's binary form (or None) and
    its tsvector as text."""
    with conn.cursor(binary=True) as cur:
        cur.adapters.register_loader(_vector_oid(conn), _RawVector)
        cur.execute(
            f"SELECT {', '.join(RECALL_COLUMNS)}, embedding, tsv::text FROM memories"
            " WHERE user_id = %s AND chat_id = %s AND status = 'active'"
            + (" AND id = ANY(%s)" if ids is not None else "") + " ORDER BY id"
            + (" LIMIT %s" if limit is not None else ""),
            (scope.user_id, scope.chat_id, *([list(ids)] if ids is not None else []),
             *([limit] if limit is not None else [])),
        )
        rows = cur.fetchall()
    n = len(RECALL_COLUMNS)
    return [r[:n] for r in rows], [r[n] for r in rows], [r[n + 1] for r in rows]


def pool_rows(conn: Conn, scope: Scope, statuses: Sequence[str]
              ) -> tuple[list[Memory], list[bytes | None]]:
    """The chat's memories of ``statuses`` by id, for the write path's pool (write._pool),
    each with its vector in pgvector's binary form (or None), to decode in one numpy call:
    decoding them one by one into lists cost most of a long chat's load."""
    with conn.cursor(row_factory=dict_row, binary=True) as cur:
        cur.adapters.register_loader(_vector_oid(conn), _RawVector)
        cur.execute(
            f"SELECT {MEMORY_COLUMNS}, embedding AS raw_vector FROM memories"
            " WHERE user_id = %s AND chat_id = %s AND status = ANY(%s) ORDER BY id",
            (scope.user_id, scope.chat_id, list(statuses)),
        )
        rows = cur.fetchall()
    blobs = [r.pop("raw_vector") for r in rows]
    return [Memory.model_validate(r) for r in rows], blobs


def resolved_loops(conn: Conn, scope: Scope) -> list[Memory]:
    """The chat's open loops closed by a resolution (archived, with the words that closed
    them): the write gate tells a resolution said again from a new event by them."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE user_id = %s AND chat_id = %s"
            " AND type = 'open_loop' AND status = 'archived' AND metadata ? 'resolution'"
            " ORDER BY id",
            (scope.user_id, scope.chat_id),
        )
        return [Memory.model_validate(r) for r in cur.fetchall()]
