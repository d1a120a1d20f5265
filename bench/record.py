"""``record`` on the turn's path: p50 and p95 of one call, with messages embedded at record
(MEMORY_FRESH__EMBED_AT_RECORD: the same day's words are quotable at once) and without
(the index job embeds them at night), over the same 300 messages in chats of 20 turns."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.timing import timing
from engrammar import Settings, store
from engrammar.client import Client
from engrammar.runtime._embedder import LocalEmbedder

OUT = Path(__file__).parent / "out"
DATABASE = "memory_bench_record"
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
MESSAGES = 300
TURNS_A_CHAT = 20
WORDS = ("the plumber came and fixed the kitchen sink before lunch", "my sister Ines is "
         "getting married in Porto next spring", "work is fine, the audit wraps up friday",
         "we watched a documentary about octopus intelligence", "thinking of taking up "
         "the cello again after ten years", "the cat knocked a glass off the table")


def _run(client: Client, label: str) -> dict[str, float]:
    with client.db.connection() as conn:
        store.erase_everything(conn)
    for i in range(5):  # warm-up: connections, the embedder's first calls
        client.record("warm", "up", "user", WORDS[i % len(WORDS)], at=T0)
    samples = []
    for i in range(MESSAGES):
        role = "user" if i % 2 == 0 else "assistant"
        text = f"{WORDS[i % len(WORDS)]} ({i})"
        started = time.perf_counter()
        client.record(f"u{i // (TURNS_A_CHAT * 10)}", f"c{i // TURNS_A_CHAT}", role, text,
                      at=T0 + timedelta(seconds=i))
        samples.append((time.perf_counter() - started) * 1000)
    t = timing(samples)
    print(f"record {label:22} p50 {t.p50:7.2f} ms   p95 {t.p95:7.2f} ms")
    return {"p50_ms": t.p50, "p95_ms": t.p95}


def main() -> None:
    embedder = LocalEmbedder()
    result = {}
    for label, embed in (("(index job at night)", False), ("embedded at record", True)):
        settings = Settings(fresh={"embed_at_record": embed})
        with Client.open(settings, database=DATABASE, embedder=embedder) as client:
            result["embed_at_record" if embed else "plain"] = _run(client, label)
    OUT.mkdir(exist_ok=True)
    (OUT / "record.json").write_text(json.dumps(result, indent=2))
