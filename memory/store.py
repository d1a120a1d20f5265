"""All SQL outside the migrations. Every function takes a connection and the scope it reads
or writes; nothing here commits, so callers decide what one transaction covers."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import numpy as np
import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from memory.models import Memory, MemoryEvent, Message, Scope

Conn = psycopg.Connection[Any]

MEMORY_COLUMNS = (
    "user_id, chat_id, id, type, content, status, confidence, salience, pinned, surface, slot,"
    " created_at, updated_at, last_reinforced_at, last_surfaced_at, due_at, status_changed_at,"
    " reinforce_count, surface_count, source_message_ids, superseded_by, metadata"
)
# Columns a caller may set through insert_memory / update_memory.
WRITABLE = {
    "type", "content", "status", "confidence", "salience", "pinned", "surface", "slot",
    "embedding", "created_at", "updated_at", "last_reinforced_at", "last_surfaced_at", "due_at",
    "status_changed_at", "reinforce_count", "surface_count", "source_message_ids",
    "superseded_by", "metadata",
}


def _memory(row: dict[str, Any]) -> Memory:
    emb = row.pop("embedding", None)
    if emb is not None:
        row["embedding"] = emb.to_list() if hasattr(emb, "to_list") else list(emb)
    return Memory.model_validate(row)


def _adapt(column: str, value: Any) -> Any:
    if column == "metadata":
        return Jsonb(value)
    if column == "embedding" and value is not None:
        return np.asarray(value, dtype=np.float32)
    return value


# -- store metadata ---------------------------------------------------------------------------

def get_meta(conn: Conn, key: str) -> Any:
    row = conn.execute("SELECT value FROM store_meta WHERE key = %s", (key,)).fetchone()
    return None if row is None else row[0]


def set_meta(conn: Conn, key: str, value: Any) -> None:
    conn.execute(
        "INSERT INTO store_meta (key, value) VALUES (%s, %s)"
        " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, Jsonb(value)),
    )


# -- the log ----------------------------------------------------------------------------------

def insert_message(conn: Conn, scope: Scope, role: str, content: str, at: datetime) -> int:
    """One round trip: registers the chat on its first message and appends the message."""
    row = conn.execute(
        "WITH chat AS (INSERT INTO chats (user_id, chat_id) VALUES (%(u)s, %(c)s)"
        " ON CONFLICT DO NOTHING)"
        " INSERT INTO messages (user_id, chat_id, role, content, at)"
        " VALUES (%(u)s, %(c)s, %(r)s, %(t)s, %(a)s) RETURNING id",
        {"u": scope.user_id, "c": scope.chat_id, "r": role, "t": content, "a": at},
    ).fetchone()
    assert row is not None
    return int(row[0])


def messages_after(conn: Conn, scope: Scope, after_id: int, limit: int | None = None,
                   until: datetime | None = None) -> list[Message]:
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT id, user_id, chat_id, role, content, at FROM messages"
            " WHERE user_id = %s AND chat_id = %s AND id > %s"
            " AND (%s::timestamptz IS NULL OR at <= %s) ORDER BY id LIMIT %s",
            (scope.user_id, scope.chat_id, after_id, until, until, limit),
        )
        return [Message.model_validate(r) for r in cur.fetchall()]


def messages_before(conn: Conn, scope: Scope, before_id: int | None, limit: int) -> list[Message]:
    """A page of the log going backwards from ``before_id``, returned oldest first."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT id, user_id, chat_id, role, content, at FROM messages"
            " WHERE user_id = %s AND chat_id = %s AND (%s::bigint IS NULL OR id < %s)"
            " ORDER BY id DESC LIMIT %s",
            (scope.user_id, scope.chat_id, before_id, before_id, limit),
        )
        return [Message.model_validate(r) for r in reversed(cur.fetchall())]


def messages_between(conn: Conn, scope: Scope, start: datetime, end: datetime) -> list[Message]:
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT id, user_id, chat_id, role, content, at FROM messages"
            " WHERE user_id = %s AND chat_id = %s AND at >= %s AND at < %s ORDER BY id",
            (scope.user_id, scope.chat_id, start, end),
        )
        return [Message.model_validate(r) for r in cur.fetchall()]


# -- chats and the extraction watermark -------------------------------------------------------

_PENDING = (
    " EXISTS (SELECT 1 FROM messages m WHERE m.user_id = c.user_id"
    " AND m.chat_id = c.chat_id AND m.id > c.extracted_through AND m.at <= %(now)s)"
)


def count_pending_chats(conn: Conn, now: datetime) -> int:
    row = conn.execute(f"SELECT count(*) FROM chats c WHERE {_PENDING}", {"now": now}).fetchone()
    return int(row[0]) if row else 0


def claim_chat(conn: Conn, now: datetime, only: Scope | None = None,
               skip: Sequence[Scope] = ()) -> tuple[Scope, int] | None:
    """Lock one chat with messages past its watermark, skipping chats other workers hold.

    Must run inside the transaction that will apply the chat's ops: the row lock is the claim.
    """
    row = conn.execute(
        "SELECT c.user_id, c.chat_id, c.extracted_through FROM chats c"
        " WHERE (%(u)s::text IS NULL OR (c.user_id = %(u)s AND c.chat_id = %(c)s))"
        " AND NOT (c.user_id || chr(31) || c.chat_id = ANY(%(skip)s::text[]))"
        f" AND {_PENDING}"
        " ORDER BY c.user_id, c.chat_id LIMIT 1 FOR UPDATE OF c SKIP LOCKED",
        {"u": only.user_id if only else None, "c": only.chat_id if only else None,
         "skip": [f"{s.user_id}\x1f{s.chat_id}" for s in skip], "now": now},
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


# -- memories ---------------------------------------------------------------------------------

def insert_memory(conn: Conn, scope: Scope, fields: dict[str, Any]) -> Memory:
    unknown = set(fields) - WRITABLE
    if unknown:
        raise ValueError(f"not memory columns: {sorted(unknown)}")
    columns = ["user_id", "chat_id", *fields]
    values = [scope.user_id, scope.chat_id, *(_adapt(k, v) for k, v in fields.items())]
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            f"INSERT INTO memories ({', '.join(columns)})"
            f" VALUES ({', '.join(['%s'] * len(values))}) RETURNING {MEMORY_COLUMNS}",
            values,
        )
        row = cur.fetchone()
    assert row is not None
    return _memory(row)


def update_memory(conn: Conn, scope: Scope, memory_id: int, fields: dict[str, Any]) -> Memory:
    unknown = set(fields) - WRITABLE
    if unknown:
        raise ValueError(f"not memory columns: {sorted(unknown)}")
    sets = ", ".join(f"{k} = %s" for k in fields)
    values = [_adapt(k, v) for k, v in fields.items()]
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            f"UPDATE memories SET {sets} WHERE user_id = %s AND chat_id = %s AND id = %s"
            f" RETURNING {MEMORY_COLUMNS}",
            [*values, scope.user_id, scope.chat_id, memory_id],
        )
        row = cur.fetchone()
    if row is None:
        raise LookupError(memory_id)
    return _memory(row)


def get_memory(conn: Conn, scope: Scope, memory_id: int,
               with_embedding: bool = False) -> Memory | None:
    extra = ", embedding" if with_embedding else ""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            f"SELECT {MEMORY_COLUMNS}{extra} FROM memories"
            " WHERE user_id = %s AND chat_id = %s AND id = %s",
            (scope.user_id, scope.chat_id, memory_id),
        )
        row = cur.fetchone()
    return None if row is None else _memory(row)


def list_memories(conn: Conn, scope: Scope, statuses: Iterable[str] | None = None,
                  with_embedding: bool = False) -> list[Memory]:
    extra = ", embedding" if with_embedding else ""
    wanted = list(statuses) if statuses is not None else None
    # Binary results: vectors arrive as floats, not text to parse (7x less CPU per row).
    with conn.cursor(row_factory=dict_row, binary=True) as cur:
        cur.execute(
            f"SELECT {MEMORY_COLUMNS}{extra} FROM memories"
            " WHERE user_id = %s AND chat_id = %s AND (%s::text[] IS NULL OR status = ANY(%s))"
            " ORDER BY id",
            (scope.user_id, scope.chat_id, wanted, wanted),
        )
        return [_memory(r) for r in cur.fetchall()]


def nearest(conn: Conn, scope: Scope, vector: np.ndarray, limit: int) -> list[tuple[int, float]]:
    """Exact cosine scan of the chat's active memories: (id, cosine), best first."""
    rows = conn.execute(
        "SELECT id, 1 - (embedding <=> %s) AS cos FROM memories"
        " WHERE user_id = %s AND chat_id = %s AND status = 'active' AND embedding IS NOT NULL"
        " ORDER BY embedding <=> %s, id LIMIT %s",
        (vector, scope.user_id, scope.chat_id, vector, limit),
    ).fetchall()
    return [(int(r[0]), float(r[1])) for r in rows]


def memories_without_embedding(conn: Conn, after_id: int, limit: int,
                               everything: bool = False) -> list[tuple[Scope, int, str]]:
    """A batch of (scope, id, content) to (re-)embed, in id order across all chats."""
    rows = conn.execute(
        "SELECT user_id, chat_id, id, content FROM memories"
        " WHERE id > %s AND (%s OR embedding IS NULL) ORDER BY id LIMIT %s",
        (after_id, everything, limit),
    ).fetchall()
    return [(Scope(user_id=r[0], chat_id=r[1]), int(r[2]), r[3]) for r in rows]


def set_embeddings(conn: Conn, rows: Sequence[tuple[Scope, int, np.ndarray]]) -> None:
    with conn.cursor() as cur:
        cur.executemany(
            "UPDATE memories SET embedding = %s WHERE user_id = %s AND chat_id = %s AND id = %s",
            [(v, s.user_id, s.chat_id, i) for s, i, v in rows],
        )


def count_memories(conn: Conn) -> int:
    row = conn.execute("SELECT count(*) FROM memories").fetchone()
    return int(row[0]) if row else 0


# -- history ----------------------------------------------------------------------------------

def insert_event(conn: Conn, scope: Scope, *, memory_id: int | None, op: str,
                 before: dict[str, Any] | None, after: dict[str, Any] | None,
                 reason: str | None, source: str, message_ids: Sequence[int],
                 at: datetime) -> None:
    conn.execute(
        "INSERT INTO memory_events (user_id, chat_id, memory_id, op, before, after, reason,"
        " source, source_message_ids, at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (scope.user_id, scope.chat_id, memory_id, op,
         None if before is None else Jsonb(before), None if after is None else Jsonb(after),
         reason, source, list(message_ids), at),
    )


def list_events(conn: Conn, scope: Scope, memory_id: int | None = None) -> list[MemoryEvent]:
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT id, memory_id, op, before, after, reason, source, source_message_ids, at"
            " FROM memory_events WHERE user_id = %s AND chat_id = %s"
            " AND (%s::bigint IS NULL OR memory_id = %s) ORDER BY id",
            (scope.user_id, scope.chat_id, memory_id, memory_id),
        )
        return [MemoryEvent.model_validate(r) for r in cur.fetchall()]


def insert_link(conn: Conn, scope: Scope, src: int, dst: int, kind: str, at: datetime) -> None:
    conn.execute(
        "INSERT INTO memory_links (user_id, chat_id, src_id, dst_id, kind, at)"
        " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
        (scope.user_id, scope.chat_id, src, dst, kind, at),
    )


def list_links(conn: Conn, scope: Scope) -> list[tuple[int, int, str]]:
    rows = conn.execute(
        "SELECT src_id, dst_id, kind FROM memory_links WHERE user_id = %s AND chat_id = %s"
        " ORDER BY src_id, dst_id, kind",
        (scope.user_id, scope.chat_id),
    ).fetchall()
    return [(int(r[0]), int(r[1]), str(r[2])) for r in rows]


# -- jobs and the model audit -----------------------------------------------------------------

def start_job_run(conn: Conn, job: str, now: datetime) -> int:
    row = conn.execute(
        "INSERT INTO job_runs (job, now_at) VALUES (%s, %s) RETURNING id", (job, now)
    ).fetchone()
    assert row is not None
    return int(row[0])


def finish_job_run(conn: Conn, run_id: int, status: str, report: dict[str, Any]) -> None:
    conn.execute(
        "UPDATE job_runs SET finished_at = clock_timestamp(), status = %s, report = %s"
        " WHERE user_id = '' AND id = %s",
        (status, Jsonb(report), run_id),
    )


def insert_llm_call(conn: Conn, scope: Scope | None, *, purpose: str, model: str,
                    request: dict[str, Any], response: str | None, error: str | None,
                    prompt_tokens: int | None, completion_tokens: int | None,
                    duration_ms: float) -> None:
    conn.execute(
        "INSERT INTO llm_calls (user_id, chat_id, purpose, model, request, response, error,"
        " prompt_tokens, completion_tokens, duration_ms)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (scope.user_id if scope else "", scope.chat_id if scope else "", purpose, model,
         Jsonb(request), response, error, prompt_tokens, completion_tokens, duration_ms),
    )


def list_llm_calls(conn: Conn, scope: Scope | None = None) -> list[dict[str, Any]]:
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT user_id, chat_id, id, purpose, model, request, response, error,"
            " prompt_tokens, completion_tokens, duration_ms, at FROM llm_calls"
            " WHERE %s::text IS NULL OR (user_id = %s AND chat_id = %s) ORDER BY id",
            (scope.user_id if scope else None, scope.user_id if scope else None,
             scope.chat_id if scope else None),
        )
        return list(cur.fetchall())


def erase_user(conn: Conn, user_id: str) -> int:
    """The only deletion: an explicit erase of one user's data, every table."""
    total = 0
    for table in ("memory_links", "memory_events", "memories", "summaries", "messages",
                  "llm_calls", "recalls", "context_blocks", "chats"):
        cur = conn.execute(f"DELETE FROM {table} WHERE user_id = %s", (user_id,))
        total += cur.rowcount
    return total


# -- recall -----------------------------------------------------------------------------------

# What ranking and rendering read of a candidate (see retriever.Recalled): nothing more
# crosses the wire on the hot path.
RECALL_COLUMNS = ("id", "type", "surface", "content", "pinned", "salience", "confidence",
                  "due_at", "created_at", "updated_at", "last_reinforced_at")


def recall_candidates(conn: Conn, scope: Scope, vector: np.ndarray, query: str, k: int,
                      cooldown: int) -> list[dict[str, Any]]:
    """One round trip: the chat's pinned, profile, open-loop and protocol memories, the top
    ``k`` by cosine (exact scan) and the top ``k`` by full-text rank: RECALL_COLUMNS of
    each, with its cosine, text rank, and whether it was spoken in the last ``cooldown``
    recalls.

    The scans read only the covering indexes of sql/005_recall_speed.sql (index-only), each
    split in two by the same predicate as its partial index, so rows too wide for the
    index are still scanned; only the picked candidates are read from the heap. The query
    vector and tsquery reach the scans as InitPlan parameters (``(SELECT v FROM q)``), not
    through a join: a join costs a CTE rescan per memory.
    """
    # Must match the predicates of the partial indexes in 005_recall_speed.sql exactly.
    fits = ("octet_length(user_id) + octet_length(chat_id) + 4 * vector_dims(embedding)"
            " <= 2400")
    short = ("octet_length(user_id) + octet_length(chat_id) + 5 * octet_length(content)"
             " <= 2400")
    chat = "user_id = %(u)s AND chat_id = %(c)s AND status = 'active'"
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            f"""
            WITH q AS MATERIALIZED (
                SELECT %(v)s::vector AS v,
                       -- any word may match: OR, not plainto's AND
                       nullif(replace(plainto_tsquery('english', %(q)s)::text, '&', '|'), '')
                           ::tsquery AS tq
            ),
            sem AS MATERIALIZED (
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
            fts AS MATERIALIZED (
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
             "n": cooldown},
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


# -- lifecycle --------------------------------------------------------------------------------

# Last reference: creation, reinforcement or being surfaced in a recall.
_LAST_REF = "greatest(created_at, last_reinforced_at, last_surfaced_at)"
_LAST_REINFORCED = "greatest(created_at, last_reinforced_at)"


def _transition(conn: Conn, *, where: str, new_status: str, reason: str, now: datetime,
                params: dict[str, Any], extra_set: str = "") -> int:
    """One set-based transition: update matching rows and write one event per row."""
    cur = conn.execute(
        f"""
        WITH changed AS (
            UPDATE memories SET status = %(new)s, status_changed_at = %(now)s,
                   updated_at = %(now)s{extra_set}
            WHERE NOT pinned AND ({where})
            RETURNING user_id, chat_id, id, status, source_message_ids
        )
        INSERT INTO memory_events (user_id, chat_id, memory_id, op, before, after, reason,
                                   source, source_message_ids, at)
        SELECT user_id, chat_id, id, 'lifecycle', jsonb_build_object('status', %(old)s::text),
               jsonb_build_object('status', status), %(reason)s::text, 'job:lifecycle', '{{}}',
               %(now)s
        FROM changed
        """,
        {"new": new_status, "now": now, "reason": reason, **params},
    )
    return cur.rowcount


def lifecycle_transitions(conn: Conn, now: datetime, rules: dict[str, float]
                          ) -> dict[str, int]:
    """Apply every lifecycle rule once, set-based; return how many rows each moved."""
    days = {k: f"{v} days" for k, v in rules.items()}
    moved: dict[str, int] = {}
    moved["ephemeral_stale"] = _transition(
        conn, new_status="stale", now=now,
        reason=f"ephemeral: {rules['ephemeral_stale_days']:g} days without reference",
        where=f"status = 'active' AND type = 'ephemeral'"
              f" AND {_LAST_REF} <= %(now)s - %(eph)s::interval",
        params={"old": "active", "eph": days["ephemeral_stale_days"]})
    moved["episodic_stale"] = _transition(
        conn, new_status="stale", now=now,
        reason=f"episodic: {rules['episodic_stale_days']:g} days without reinforcement",
        where=f"status = 'active' AND type = 'episodic'"
              f" AND {_LAST_REINFORCED} <= %(now)s - %(epi)s::interval",
        params={"old": "active", "epi": days["episodic_stale_days"]})
    moved["open_loop_due"] = _transition(
        conn, new_status="archived", now=now,
        reason=f"open loop: due date passed (+{rules['open_loop_grace_days']:g} days grace)",
        where="status = 'active' AND type = 'open_loop' AND due_at IS NOT NULL"
              " AND due_at <= %(now)s - %(grace)s::interval",
        params={"old": "active", "grace": days["open_loop_grace_days"]},
        extra_set=", metadata = metadata || '{\"closed_reason\": \"due date passed\"}'")
    moved["open_loop_silent"] = _transition(
        conn, new_status="archived", now=now,
        reason=f"open loop: {rules['open_loop_silence_days']:g} days of silence",
        where=f"status = 'active' AND type = 'open_loop'"
              f" AND {_LAST_REF} <= %(now)s - %(silence)s::interval",
        params={"old": "active", "silence": days["open_loop_silence_days"]},
        extra_set=", metadata = metadata || '{\"closed_reason\": \"silence\"}'")
    moved["stale_archived"] = _transition(
        conn, new_status="archived", now=now,
        reason=f"stale for {rules['archive_after_stale_days']:g} days",
        where="status = 'stale' AND status_changed_at <= %(now)s - %(arch)s::interval",
        params={"old": "stale", "arch": days["archive_after_stale_days"]})
    return moved


# -- temporal summaries -----------------------------------------------------------------------

def days_to_summarize(conn: Conn, now: datetime) -> list[tuple[Scope, datetime, str]]:
    """(scope, day start, input hash) of every finished UTC day whose messages changed since
    its summary was written, or that has none yet."""
    rows = conn.execute(
        """
        WITH days AS (
            SELECT user_id, chat_id, date_trunc('day', at, 'UTC') AS day,
                   md5(string_agg(id::text, ',' ORDER BY id)) AS hash
            FROM messages WHERE at < date_trunc('day', %(now)s::timestamptz, 'UTC')
            GROUP BY user_id, chat_id, date_trunc('day', at, 'UTC')
        )
        SELECT d.user_id, d.chat_id, d.day, d.hash FROM days d
        LEFT JOIN summaries s ON s.user_id = d.user_id AND s.chat_id = d.chat_id
             AND s.period = 'day' AND s.start_at = d.day
        WHERE s.source_hash IS DISTINCT FROM d.hash
        ORDER BY d.user_id, d.chat_id, d.day
        """,
        {"now": now},
    ).fetchall()
    return [(Scope(user_id=r[0], chat_id=r[1]), r[2], r[3]) for r in rows]


def periods_to_roll_up(conn: Conn, child: str, parent: str, now: datetime
                       ) -> list[tuple[Scope, datetime, str]]:
    """(scope, parent start, input hash) of every finished parent period (week or month)
    whose child summaries changed since the parent was written."""
    rows = conn.execute(
        """
        WITH parents AS (
            SELECT user_id, chat_id, date_trunc(%(parent)s, start_at, 'UTC') AS start_at,
                   md5(string_agg(source_hash || start_at::text, ',' ORDER BY start_at))
                       AS hash
            FROM summaries WHERE period = %(child)s
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
         "parent_period": parent, "now": now},
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


# -- reflection -------------------------------------------------------------------------------

def chats_to_reflect(conn: Conn, now: datetime, min_memories: int) -> list[Scope]:
    """Chats with enough active memories, changed since they were last reflected on."""
    rows = conn.execute(
        """
        SELECT c.user_id, c.chat_id FROM chats c
        JOIN memories m ON m.user_id = c.user_id AND m.chat_id = c.chat_id
        WHERE m.status = 'active' AND m.type <> 'reflection' AND m.updated_at <= %(now)s
        GROUP BY c.user_id, c.chat_id, c.last_reflected_at
        HAVING count(*) >= %(n)s
           AND (c.last_reflected_at IS NULL OR max(m.updated_at) > c.last_reflected_at)
        ORDER BY c.user_id, c.chat_id
        """,
        {"now": now, "n": min_memories},
    ).fetchall()
    return [Scope(user_id=r[0], chat_id=r[1]) for r in rows]


def set_reflected(conn: Conn, scope: Scope, at: datetime) -> None:
    conn.execute(
        "UPDATE chats SET last_reflected_at = %s WHERE user_id = %s AND chat_id = %s",
        (at, scope.user_id, scope.chat_id),
    )


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


def lock_chat_blocks(conn: Conn, scope: Scope) -> bool:
    """Serialise block planning per chat across workers; False if another worker has it."""
    row = conn.execute(
        "SELECT pg_try_advisory_xact_lock(hashtext('blocks:' || %s || chr(31) || %s))",
        (scope.user_id, scope.chat_id),
    ).fetchone()
    return bool(row and row[0])


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
