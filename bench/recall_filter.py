"""Recall with a metadata filter against recall without one, on a chat of 5,000 memories.

One user's heavy chat of 5,000 memories (types, statuses and vectors as bench/recall.py
makes them) among 15,000 more in other chats of theirs and of other users. Each memory
carries app metadata: a topic of ten (a filter on one keeps ~10%) and a locale of four
(membership in two keeps ~half). ``Client.recall`` is timed with a precomputed query vector,
from the process's copy of the chat (the default) and with copies off (the scan in SQL),
unfiltered and filtered taking turns query by query, 200 queries after 20 of warm-up.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np

from bench.recall import (
    NOW,
    TEMPLATES,
    TOPICS,
    TYPES,
    Chat,
    _fill,
    chat_rows,
    queries,
    query_vectors,
    topic_centers,
    unit_vectors,
)
from bench.timing import timing
from engrammar import Settings, store
from engrammar.client import Client
from engrammar.models import Scope
from engrammar.runtime._embedder import LocalEmbedder

OUT = Path(__file__).parent / "out"
DATABASE = "memory_bench_recall_filter"
HEAVY = Chat("heavy-user", "heavy-chat", 5_000)
OTHERS = [Chat("heavy-user", f"other-{i}", 1_000) for i in range(5)] + \
    [Chat(f"user-{i}", "heavy-chat", 1_000) for i in range(10)]
WARMUP, QUERIES = 20, 200
LOCALES = ("en", "fr", "de", "it")
FILTERS: dict[str, dict[str, Any] | None] = {
    "unfiltered": None, "topic (1 of 10)": {"topic": "t3"},
    "locale in (2 of 4)": {"locale": ["en", "fr"]}}


def load(client: Client) -> None:
    rng = np.random.default_rng(20261125)
    centers = topic_centers()
    with client.db.connection() as conn:
        store.erase_everything(conn)
    for chat in [HEAVY, *OTHERS]:
        kinds = chat_rows(rng, chat)
        topics = rng.integers(0, TOPICS, chat.size)
        vectors = unit_vectors(rng, centers, topics)
        picks = rng.integers(0, 1 << 30, (chat.size, 9)).tolist()
        rows = []
        for i in range(chat.size):
            t, topic = int(kinds["type"][i]), int(topics[i])
            created = NOW - timedelta(hours=1 + i)
            rows.append({
                "type": TYPES[t], "content": _fill(TEMPLATES[TYPES[t]][topic % len(
                    TEMPLATES[TYPES[t]])], topic, picks[i]),
                "status": ("active", "stale", "archived", "contradicted")[
                    int(kinds["status"][i])],
                "confidence": 0.8, "salience": 0.6, "pinned": bool(kinds["pinned"][i]),
                "surface": str(kinds["surface"][i]), "embedding": vectors[i],
                "created_at": created, "updated_at": created,
                "app_metadata": {"topic": f"t{topic % 10}",
                                 "locale": LOCALES[picks[i][0] % len(LOCALES)]}})
        scope = Scope(user_id=chat.user_id, chat_id=chat.chat_id)
        with client.db.connection() as conn, conn.transaction():
            ids = store.reserve_memory_ids(conn, len(rows))
            store.put_memories(conn, scope, list(zip(ids, rows, strict=True)))
    with client.db.connection() as conn:
        conn.execute("ANALYZE memories")


def measure(client: Client) -> dict[str, dict[str, float]]:
    rng = np.random.default_rng(7)
    texts, vectors = queries(rng, WARMUP + QUERIES), query_vectors(rng, WARMUP + QUERIES)

    def recaller(where: dict[str, Any] | None) -> Callable[[int], object]:
        return lambda i: client.recall(HEAVY.user_id, HEAVY.chat_id, texts[i], now=NOW,
                                       vector=vectors[i], record=False, where=where)

    calls = {name: recaller(where) for name, where in FILTERS.items()}
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for i in range(WARMUP + QUERIES):
        for name, call in calls.items():
            started = time.perf_counter()
            call(i)
            if i >= WARMUP:
                samples[name].append((time.perf_counter() - started) * 1000)
    out = {}
    base = timing(samples["unfiltered"]).p95
    for name, s in samples.items():
        t = timing(s)
        out[name] = {"p50_ms": t.p50, "p95_ms": t.p95, "p95_ratio": round(t.p95 / base, 3)}
    return out


def main() -> None:
    embedder = LocalEmbedder()
    result: dict[str, Any] = {}
    for label, cache in (("copy", 200_000), ("scan", 0)):
        settings = Settings(recall={"cache_memories": cache})
        with Client.open(settings, database=DATABASE, embedder=embedder) as client:
            if label == "copy":
                load(client)
            result[label] = measure(client)
        for name, t in result[label].items():
            print(f"{label:5} {name:20} p50 {t['p50_ms']:7.2f} ms  p95 {t['p95_ms']:7.2f} ms"
                  f"  ({t['p95_ratio']:.2f}x unfiltered)")
    OUT.mkdir(exist_ok=True)
    (OUT / "recall_filter.json").write_text(json.dumps(result, indent=2))
