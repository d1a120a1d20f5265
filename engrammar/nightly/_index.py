"""Indexing the log for recall: every chat's new user and assistant messages embedded in
batches, each batch and the chat's index watermark in one transaction.

A job of its own (``index``, after ``extract`` in the night), not a part of extraction's
transaction: extraction holds the chat's write lock across a model's answer, and the
embedder's time would lengthen it; the two fail apart (a failed index leaves the memories
written, and the other way round); and indexing can run more often than extraction, since
it changes no memory. Batches keep a long backlog resumable: a crash loses one batch, and
the next run starts at the watermark. Idempotent: a run over indexed messages writes nothing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from engrammar import store
from engrammar.errors import chat_fault
from engrammar.models import Scope
from engrammar.runtime._database import Database
from engrammar.runtime._embedder import Embedder

# Texts embedded per call, sorted by length so each call pads little.
_EMBED_CALL = 64


@dataclass
class IndexReport:
    now: datetime
    chats: int = 0
    batches: int = 0
    messages: int = 0  # messages passed (the watermark moved over them)
    embedded: int = 0  # of those, the searchable ones, embedded
    seconds: float = 0.0
    errors: list[dict[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"job": "index", "now": self.now.isoformat(), "chats": self.chats,
                "batches": self.batches, "messages": self.messages,
                "embedded": self.embedded, "seconds": round(self.seconds, 3),
                "messages_per_s": (round(self.embedded / self.seconds, 1)
                                   if self.seconds > 0 else None),
                "errors": self.errors}


def embed_texts(embedder: Embedder, texts: list[str]) -> np.ndarray:
    """Vectors of ``texts`` in their order, embedded shortest first in calls of a few."""
    out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    for start in range(0, len(order), _EMBED_CALL):
        part = order[start:start + _EMBED_CALL]
        out[part] = embedder.embed([texts[i] for i in part])
    return out


def index_log(db: Database, embedder: Embedder, now: datetime, *, batch: int,
              chat: Scope | None = None) -> IndexReport:
    """Embed every chat's messages past its index watermark and stamped at or before
    ``now`` (in id order, up to the first later one: the watermark never passes a message
    not read), ``batch`` messages a transaction. A chat that fails is reported and skipped."""
    report = IndexReport(now=now)
    started = time.perf_counter()
    done: list[Scope] = []  # caught up, or failed: not claimed again this run
    while True:
        claimed_scope: Scope | None = None
        try:
            with db.connection() as conn, conn.transaction():
                claimed = store.claim_unindexed_chat(conn, skip=done, only=chat)
                if claimed is None:
                    break
                claimed_scope, watermark = claimed
                rows = store.unindexed_messages(conn, claimed_scope, watermark, batch)
                due = _until(rows, now)
                searched = [r for r in due if r[1] in store.SEARCHED_ROLES]
                vectors = embed_texts(embedder, [r[2] for r in searched])
                if due:
                    store.set_message_vectors(conn, claimed_scope, [r[0] for r in searched],
                                              vectors, due[-1][0])
        except Exception as exc:
            if claimed_scope is None or not chat_fault(exc):
                raise
            done.append(claimed_scope)
            report.errors.append({**claimed_scope.report_entry(), "error": str(exc),
                                  "kind": type(exc).__name__})
            continue
        if claimed_scope not in done and (len(due) < len(rows) or len(rows) < batch):
            done.append(claimed_scope)
            report.chats += 1
        if due:
            report.batches += 1
            report.messages += len(due)
            report.embedded += len(searched)
    report.seconds = time.perf_counter() - started
    return report


def _until(rows: list[tuple[int, str, str, datetime]], now: datetime
           ) -> list[tuple[int, str, str, datetime]]:
    """The rows up to the first stamped after ``now``."""
    out = []
    for row in rows:
        if row[3] > now:
            break
        out.append(row)
    return out
