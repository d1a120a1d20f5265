"""The cost of ``await AsyncClient.recall`` over ``Client.recall``: the thread hop.

One chat of 60 memories and 40 messages; 12 queries in turn. Sync and async recalls are
interleaved, the same query each time, so both see the same cache and server state; each
is timed from the caller's side (the async one inside the event loop, around the await).
The hop alone (``await client.run(noop)``: submit to the pool, wake a worker, hand the
result back to the loop) is timed too: it is what the async layer adds to any call.

The goal (issue 14) is an overhead of at most 0.5 ms at p95.
"""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.timing import timing
from engrammar.aio import AsyncClient
from engrammar.client import Client
from engrammar.models import MemoryType, Op, OpKind
from engrammar.settings import Settings

OUT = Path(__file__).parent / "out"
DATABASE = "memory_bench_aio"
USER, CHAT = "bench-aio", "c1"
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
ROUNDS = 1_000
WARMUP = 50
TOPICS = ("tea", "hiking", "Berlin", "the dentist", "Python", "jazz", "the garden",
          "marathon training", "the new job", "sister's wedding", "the cat", "Lisbon")
QUERIES = [f"what did I tell you about {t}?" for t in TOPICS]


def load(client: Client) -> None:
    client.erase_user(USER)
    ops = [Op(op=OpKind.add, type=MemoryType.preference if i % 2 else MemoryType.episodic,
              content=f"Note {i} about {TOPICS[i % len(TOPICS)]}: detail number {i * 7}")
           for i in range(60)]
    client.apply(USER, CHAT, ops, now=T0)
    for i in range(40):
        client.record(USER, CHAT, "user" if i % 2 == 0 else "assistant",
                      f"Message {i} about {TOPICS[i % len(TOPICS)]}.",
                      at=T0 + timedelta(minutes=i))


async def measure(aclient: AsyncClient) -> dict[str, list[float]]:
    sync = aclient.sync
    samples: dict[str, list[float]] = {"sync": [], "async": [], "hop": []}
    for i in range(WARMUP + ROUNDS):
        query = QUERIES[i % len(QUERIES)]
        started = time.perf_counter()
        sync.recall(USER, CHAT, query, now=T0, record=False)
        sync_ms = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        await aclient.recall(USER, CHAT, query, now=T0, record=False)
        async_ms = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        await aclient.run(lambda: None)
        hop_ms = (time.perf_counter() - started) * 1000
        if i >= WARMUP:
            samples["sync"].append(sync_ms)
            samples["async"].append(async_ms)
            samples["hop"].append(hop_ms)
    return samples


async def run() -> dict[str, object]:
    client = await asyncio.to_thread(Client.open, Settings(), database=DATABASE)
    async with AsyncClient(client) as aclient:
        await aclient.run(lambda: load(client))
        samples = await measure(aclient)
    sync, aio, hop = (timing(samples[k]) for k in ("sync", "async", "hop"))
    return {
        "rounds": ROUNDS,
        "memories": 60,
        "sync_ms": vars(sync),
        "async_ms": vars(aio),
        "hop_ms": vars(hop),
        "overhead_p50_ms": round(aio.p50 - sync.p50, 3),
        "overhead_p95_ms": round(aio.p95 - sync.p95, 3),
        "goal_p95_ms": 0.5,
    }


def main() -> None:
    result = asyncio.run(run())
    OUT.mkdir(exist_ok=True)
    (OUT / "aio.json").write_text(json.dumps(result, indent=2))
    for key in ("sync_ms", "async_ms", "hop_ms"):
        print(f"{key:16} {result[key]}")
    print(f"overhead p50 {result['overhead_p50_ms']} ms, p95 {result['overhead_p95_ms']} ms "
          f"(goal <= {result['goal_p95_ms']} ms)")
