"""Extraction batches (nightly._batch): the provider batches in flight and, per chat chunk,
what its request was built from, so a batch collected hours later applies exactly what the
synchronous path would have, or nothing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from engrammar.models import Scope
from engrammar.store._log import _PENDING
from engrammar.store._memories import Conn

# A chat with a request still waiting for its batch is not submitted again.
_IN_FLIGHT = (
    " EXISTS (SELECT 1 FROM llm_batch_requests r WHERE r.user_id = c.user_id"
    " AND r.chat_id = c.chat_id AND r.state = 'pending')"
)


@dataclass(frozen=True)
class Batch:
    id: int
    batch_id: str | None
    input_file_id: str | None
    output_file_id: str | None
    error_file_id: str | None
    model: str
    status: str
    now_at: datetime
    created_at: datetime
    collected_at: datetime | None
    error: str | None


@dataclass(frozen=True)
class BatchRequest:
    """One chunk of one chat's messages, as it was sent."""

    scope: Scope
    batch: int
    chunk: int
    chunks: int
    custom_id: str
    watermark: int
    first_message_id: int
    last_message_id: int
    through: int
    handles: dict[str, int]
    messages: list[dict[str, str]]
    state: str = "pending"
    error: str | None = None


_BATCH_COLUMNS = ("id, batch_id, input_file_id, output_file_id, error_file_id, model, status,"
                  " now_at, created_at, collected_at, error")


def claim_chat_to_submit(conn: Conn, now: datetime, skip: Sequence[Scope] = ()
                         ) -> tuple[Scope, int] | None:
    """Lock one chat with messages past its watermark and no request in flight, skipping
    chats other workers hold (``FOR UPDATE SKIP LOCKED``, as ``claim_chat``). The row lock
    holds until the caller's transaction, which records the chat's requests, commits."""
    row = conn.execute(
        "SELECT c.user_id, c.chat_id, c.extracted_through FROM chats c"
        " WHERE NOT EXISTS (SELECT 1 FROM unnest(%(su)s::text[], %(sc)s::text[]) s(u, c)"
        "                   WHERE s.u = c.user_id AND s.c = c.chat_id)"
        f" AND {_PENDING} AND NOT {_IN_FLIGHT}"
        " ORDER BY c.user_id, c.chat_id LIMIT 1 FOR UPDATE OF c SKIP LOCKED",
        {"su": [s.user_id for s in skip], "sc": [s.chat_id for s in skip], "now": now},
    ).fetchone()
    if row is None:
        return None
    return Scope(user_id=row[0], chat_id=row[1]), int(row[2])


def lock_watermark(conn: Conn, scope: Scope) -> int | None:
    """The chat's watermark, its row locked until the transaction ends (waiting for a
    worker that holds it); None if the chat is gone (erased)."""
    row = conn.execute(
        "SELECT extracted_through FROM chats WHERE user_id = %s AND chat_id = %s FOR UPDATE",
        (scope.user_id, scope.chat_id)).fetchone()
    return int(row[0]) if row else None


def insert_batch(conn: Conn, model: str, now: datetime) -> int:
    row = conn.execute("INSERT INTO llm_batches (model, now_at) VALUES (%s, %s) RETURNING id",
                       (model, now)).fetchone()
    assert row is not None
    return int(row[0])


def insert_batch_requests(conn: Conn, requests: Sequence[BatchRequest]) -> None:
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO llm_batch_requests (user_id, chat_id, batch, chunk, chunks, custom_id,"
            " watermark, first_message_id, last_message_id, through, handles, messages)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            [(r.scope.user_id, r.scope.chat_id, r.batch, r.chunk, r.chunks, r.custom_id,
              r.watermark, r.first_message_id, r.last_message_id, r.through, Jsonb(r.handles),
              Jsonb(r.messages)) for r in requests])


_SETTABLE = frozenset({"batch_id", "input_file_id", "output_file_id", "error_file_id",
                       "status", "collected_at", "error"})


def set_batch(conn: Conn, batch: int, **fields: Any) -> None:
    """Update the named columns of a batch (the provider's ids and status, collected_at)."""
    unknown = set(fields) - _SETTABLE
    if unknown:
        raise ValueError(f"llm_batches has no settable column {sorted(unknown)}")
    names = sorted(fields)
    assignments = ", ".join(f"{name} = %s" for name in names)
    conn.execute(f"UPDATE llm_batches SET {assignments} WHERE user_id = '' AND id = %s",
                 [*(fields[n] for n in names), batch])


def get_batch(conn: Conn, batch: int) -> Batch | None:
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(f"SELECT {_BATCH_COLUMNS} FROM llm_batches WHERE user_id = '' AND id = %s",
                    (batch,))
        row = cur.fetchone()
    return Batch(**row) if row else None


def pending_batches(conn: Conn) -> list[Batch]:
    """Batches not collected yet, oldest first."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(f"SELECT {_BATCH_COLUMNS} FROM llm_batches"
                    " WHERE user_id = '' AND collected_at IS NULL ORDER BY id")
        return [Batch(**row) for row in cur.fetchall()]


def batch_requests(conn: Conn, batch: int, state: str | None = None) -> list[BatchRequest]:
    """A batch's requests (those in ``state`` if given), by chat, then chunk."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT user_id, chat_id, batch, chunk, chunks, custom_id, watermark,"
            " first_message_id, last_message_id, through, handles, messages, state, error"
            " FROM llm_batch_requests WHERE batch = %s AND (%s::text IS NULL OR state = %s)"
            " ORDER BY user_id, chat_id, chunk", (batch, state, state))
        rows = cur.fetchall()
    return [BatchRequest(scope=Scope(user_id=r.pop("user_id"), chat_id=r.pop("chat_id")),
                         **r) for r in rows]


def set_request_state(conn: Conn, scope: Scope, batch: int, state: str,
                      error: str | None = None) -> None:
    """Settle every pending chunk of one chat in a batch."""
    conn.execute(
        "UPDATE llm_batch_requests SET state = %s, error = %s"
        " WHERE user_id = %s AND chat_id = %s AND batch = %s AND state = 'pending'",
        (state, error, scope.user_id, scope.chat_id, batch))


def batch_counts(conn: Conn, batch: int) -> dict[str, int]:
    """Requests of a batch by state."""
    rows = conn.execute("SELECT state, count(*) FROM llm_batch_requests WHERE batch = %s"
                        " GROUP BY state ORDER BY state", (batch,)).fetchall()
    return {str(r[0]): int(r[1]) for r in rows}
