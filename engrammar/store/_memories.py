"""Memories, their metadata of the store, and their history: the rows the write path
changes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, NamedTuple

import numpy as np
import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from engrammar.models import Memory, MemoryEvent, Scope

Conn = psycopg.Connection[Any]

MEMORY_COLUMNS = (
    "user_id, chat_id, id, type, content, status, confidence, salience, pinned, surface, slot,"
    " created_at, updated_at, last_reinforced_at, last_surfaced_at, due_at, status_changed_at,"
    " reinforce_count, surface_count, source_message_ids, superseded_by, metadata,"
    " app_metadata"
)
# Columns a caller may set through insert_memory / put_memories / set_memory.
WRITABLE = {
    "type", "content", "status", "confidence", "salience", "pinned", "surface", "slot",
    "embedding", "created_at", "updated_at", "last_reinforced_at", "last_surfaced_at", "due_at",
    "status_changed_at", "reinforce_count", "surface_count", "source_message_ids",
    "superseded_by", "metadata", "app_metadata",
}


def _memory(row: dict[str, Any]) -> Memory:
    emb = row.pop("embedding", None)
    if emb is not None:
        row["embedding"] = emb.to_list() if hasattr(emb, "to_list") else list(emb)
    return Memory.model_validate(row)


def _adapt(column: str, value: Any) -> Any:
    if column in ("metadata", "app_metadata"):
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


def reserve_memory_ids(conn: Conn, n: int) -> list[int]:
    """``n`` new memory ids from the table's sequence, in order, in one round trip: the
    write path names its rows before it sends them (``put_memories``), so none of its
    statements waits for another's answer."""
    rows = conn.execute(
        "SELECT nextval(pg_get_serial_sequence('memories', 'id')) FROM generate_series(1, %s)",
        (n,),
    ).fetchall()
    return sorted(int(r[0]) for r in rows)


def put_memories(conn: Conn, scope: Scope, rows: Sequence[tuple[int, dict[str, Any]]]
                 ) -> None:
    """Insert memories under ids from ``reserve_memory_ids``, one ``executemany`` for each
    set of columns; nothing comes back, so they go out in a pipeline with the rest of a
    chat's writes."""
    by_columns: dict[tuple[str, ...], list[list[Any]]] = {}
    for memory_id, fields in rows:
        unknown = set(fields) - WRITABLE
        if unknown:
            raise ValueError(f"not memory columns: {sorted(unknown)}")
        by_columns.setdefault(tuple(fields), []).append(
            [scope.user_id, scope.chat_id, memory_id, *(_adapt(k, v) for k, v in fields.items())])
    for names, values in by_columns.items():
        columns = ["user_id", "chat_id", "id", *names]
        with conn.cursor() as cur:
            cur.executemany(
                f"INSERT INTO memories ({', '.join(columns)}) OVERRIDING SYSTEM VALUE"
                f" VALUES ({', '.join(['%s'] * len(columns))})",
                values,
            )


def set_memory(conn: Conn, scope: Scope, memory_id: int, fields: dict[str, Any]) -> None:
    """Update a memory; nothing comes back, so it can go out in a pipeline: the caller
    holds the chat's write lock and knows the row is there."""
    unknown = set(fields) - WRITABLE
    if unknown:
        raise ValueError(f"not memory columns: {sorted(unknown)}")
    conn.execute(
        f"UPDATE memories SET {', '.join(f'{k} = %s' for k in fields)}"
        " WHERE user_id = %s AND chat_id = %s AND id = %s",
        [*(_adapt(k, v) for k, v in fields.items()), scope.user_id, scope.chat_id, memory_id],
    )


def unknown_memories(conn: Conn, scope: Scope, ids: Sequence[int]) -> list[int]:
    """Those of ``ids`` that name no memory of this chat nor of its user's user-wide scope
    (another chat's, another user's, or none)."""
    if not ids:
        return []
    rows = conn.execute(
        "SELECT i FROM unnest(%s::bigint[]) AS i WHERE NOT EXISTS (SELECT 1 FROM memories m"
        " WHERE m.user_id = %s AND m.chat_id IN (%s, '') AND m.id = i) ORDER BY i",
        (sorted(set(ids)), scope.user_id, scope.chat_id)).fetchall()
    return [int(r[0]) for r in rows]


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

class NewEvent(NamedTuple):
    """A row of a memory's history (memory_id None: a rejection by the gate)."""

    memory_id: int | None
    op: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    reason: str | None
    source: str
    message_ids: Sequence[int]
    at: datetime


def insert_events(conn: Conn, scope: Scope, events: Sequence[NewEvent]) -> None:
    """The events in order, in one ``executemany``."""
    if not events:
        return
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO memory_events (user_id, chat_id, memory_id, op, before, after, reason,"
            " source, source_message_ids, at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            [(scope.user_id, scope.chat_id, e.memory_id, e.op,
              None if e.before is None else Jsonb(e.before),
              None if e.after is None else Jsonb(e.after),
              e.reason, e.source, list(e.message_ids), e.at) for e in events],
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


def insert_links(conn: Conn, scope: Scope, links: Sequence[tuple[int, int, str]],
                 at: datetime) -> None:
    """(src, dst, kind) links between memories, in one ``executemany``."""
    if not links:
        return
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO memory_links (user_id, chat_id, src_id, dst_id, kind, at)"
            " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
            [(scope.user_id, scope.chat_id, src, dst, kind, at) for src, dst, kind in links],
        )


def list_links(conn: Conn, scope: Scope) -> list[tuple[int, int, str]]:
    rows = conn.execute(
        "SELECT src_id, dst_id, kind FROM memory_links WHERE user_id = %s AND chat_id = %s"
        " ORDER BY src_id, dst_id, kind",
        (scope.user_id, scope.chat_id),
    ).fetchall()
    return [(int(r[0]), int(r[1]), str(r[2])) for r in rows]
