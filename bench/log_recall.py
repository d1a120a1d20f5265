"""Recall with the log layer (excerpts, recall._logsearch): latency at 5,000 and 20,000
messages a chat, and what the nightly index job costs.

``python -m bench log_recall``. Works in a database of its own (``memory_bench_log``),
emptied first. The messages are LoCoMo dev turns (``/work/shared/data/locomo_dev.json``),
user and assistant in turn, and the queries its questions, embedded beforehand (recall is
timed with the vector given, the embedding excluded, as ``bench recall`` does).

- index: the index job over one chat of every distinct turn, with the real embedder: its
  messages/s is what a night of new messages costs.
- latency: chats of 5,000 and 20,000 messages (the turns cycled), indexed by the same job
  with an embedder that reuses the vectors of texts it has seen (the same vectors, no model
  time). For each: the first recall of a process (the copy read whole), then 200 recalls
  with excerpts and 200 with the layer off (``log.excerpts`` 0), interleaved; then 100 new
  messages indexed and the recall that brings the copy up to them.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from bench.locomo import DATA, load
from bench.timing import timing
from engrammar import Client, Settings, store
from engrammar.runtime._embedder import Embedder
from engrammar.scheduler import _index_log as index_log

OUT = Path(__file__).parent / "out"
DATABASE = "memory_bench_log"
SIZES = (5_000, 20_000)
QUERIES = 200
WARMUP = 20
NEW = 100
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


class Reusing:
    """An embedder that embeds each distinct text once (the bench's chats repeat texts)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.seen: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        new = sorted({t for t in texts if t not in self.seen})
        if new:
            for text, vector in zip(new, self.inner.embed(new), strict=True):
                self.seen[text] = vector
        return np.array([self.seen[t] for t in texts], dtype=np.float32).reshape(
            len(texts), self.dim)


def record(client: Client, chat: str, texts: Sequence[str], start: datetime) -> None:
    for i, text in enumerate(texts):
        client.record("bench", chat, "user" if i % 2 == 0 else "assistant", text,
                      at=start + timedelta(seconds=i))


def main() -> None:
    convs = load(DATA, None)
    turns = list(dict.fromkeys(t.text for c in convs for t in c.turns))
    questions = [q.question for c in convs for q in c.questions][:QUERIES]
    settings = Settings()
    out: dict[str, Any] = {"turns": len(turns), "cores": os.cpu_count()}
    with Client.open(settings, database=DATABASE) as base:
        with base.db.connection() as conn:
            store.erase_everything(conn)
        vectors = base.embedder.embed(questions)
        # The index job's rate, with the real embedder on distinct texts.
        record(base, "rate", turns, T0)
        report = index_log.run(base, T0 + timedelta(days=1))
        out["index"] = {**report.to_json(), "load_average": os.getloadavg()[0]}
        print(f"index: {report.embedded} messages in {report.seconds:.1f} s, "
              f"{report.embedded / report.seconds:.0f} messages/s", flush=True)
        reusing = Reusing(base.embedder)
        reusing.embed(turns)
        for size in SIZES:
            chat = f"c{size}"
            texts = [turns[i % len(turns)] for i in range(size)]
            writer = Client(base.db, settings=settings, embedder=reusing)
            record(writer, chat, texts, T0)
            index_log.run(writer, T0 + timedelta(days=1))
            now = T0 + timedelta(days=2)
            on = Client(base.db, settings=settings, embedder=reusing)
            off = Client(base.db, settings=settings.model_copy(update={
                "log": settings.log.model_copy(update={"excerpts": 0})}), embedder=reusing)
            started = time.perf_counter()
            on.recall("bench", chat, questions[0], now=now, record=False, vector=vectors[0])
            cold = (time.perf_counter() - started) * 1000
            samples: dict[str, list[float]] = {"excerpts": [], "off": []}
            for n, (question, vector) in enumerate(zip(questions, vectors, strict=True)):
                for name, client in (("excerpts", on), ("off", off)):
                    started = time.perf_counter()
                    block = client.recall("bench", chat, question, now=now, record=False,
                                          vector=vector)
                    if n >= WARMUP:
                        samples[name].append((time.perf_counter() - started) * 1000)
                    assert name == "off" or block.items
            record(writer, chat, turns[:NEW], T0 + timedelta(days=1, hours=1))
            index_log.run(writer, now)
            started = time.perf_counter()
            on.recall("bench", chat, questions[1], now=now, record=False, vector=vectors[1])
            refresh = (time.perf_counter() - started) * 1000
            row: dict[str, Any] = {"messages": size, "first_recall_ms": round(cold, 1),
                   "after_new_messages_ms": round(refresh, 1),
                   **{name: vars(timing(s)) for name, s in samples.items()},
                   "load_average": os.getloadavg()[0]}
            out[chat] = row
            print(f"{size} messages: recall with excerpts p50 {row['excerpts']['p50']:.1f} ms"
                  f" p95 {row['excerpts']['p95']:.1f} ms; layer off p50 "
                  f"{row['off']['p50']:.1f} p95 {row['off']['p95']:.1f} ms; first recall "
                  f"{cold:.0f} ms; after {NEW} new messages {refresh:.1f} ms", flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "log_recall.json").write_text(json.dumps(out, indent=2, default=str))
