"""Cost per op against the size of a chat: 50, 500 and 5,000 memories in one chat.

The gate compares an op only with the pool's shortlist (memory/pool.py): its nearest
memories by one matrix product over the chat's vectors, plus those of its slot, values and
template. This bench builds one long chat by importing 5,000 statements through
``Writer.apply`` in chunks of 50 (one transaction each, as ``Client.apply`` runs them; the
vectors embedded up front and timed apart), and on the way, at 50, 500 and 5,000 memories:

- **gate**: the time per op of the shortlist and the decision, against the decision over
  the whole chat (what the gate did before), on 200 proposals (new facts, restatements,
  new values for a slot, opposite claims, resolutions);
- **apply**: the same 200 proposals through ``Writer.apply`` in chunks of 10 (a night's
  share of one chat), each in a transaction rolled back, so the chat stays as it was;
  loading the pool is timed apart.

``python -m bench chat_size [--database NAME]``; figures go to ``bench/out/chat_size.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from bench.gate import Precomputed, reset
from engrammar.client import Client
from engrammar.models import MemoryType, Op, OpKind, Scope
from engrammar.runtime._database import Database
from engrammar.write._gate import Gate
from engrammar.write._pool import Pool

OUT = Path(__file__).parent / "out"
SIZES = (50, 500, 5_000)
CHUNK = 50
NIGHT_OPS = 10
PROBES = 200
SCOPE = Scope(user_id="long", chat_id="chat")
NOW = datetime(2026, 11, 3, 2, 0, tzinfo=UTC)

CITIES = ("Berlin", "Munich", "Lisbon", "Porto", "Vienna", "Prague", "Oslo", "Madrid", "Dublin",
          "Kyoto", "Boston", "Toronto", "Zurich", "Krakow", "Athens", "Naples")
NAMES = ("Dana", "Omar", "Lena", "Priya", "Jonas", "Mia", "Tomas", "Nora", "Sam", "Alex")
THINGS = ("jazz", "green tea", "spicy ramen", "sourdough bread", "sci-fi novels", "podcasts",
          "early mornings", "rainy days", "vinyl records", "board games", "dark chocolate",
          "espresso", "crime documentaries", "gardening", "watercolour painting", "running")
ACTIVITIES = ("a long bike ride", "a cooking class", "a concert", "a job interview",
              "a marathon", "a board game night", "a road trip", "a wedding",
              "a pottery workshop", "a football match", "a climbing session", "a museum visit")
TASKS = ("call the bank", "finish the tax return", "book the flights", "renew the passport",
         "visit the dentist", "fix the bike", "write to the landlord", "plan the party")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
RELATIVES = ("sister", "brother", "partner", "daughter", "son", "best friend", "cousin")


def _add(kind: MemoryType, content: str, slot: str | None = None) -> Op:
    return Op(op=OpKind.add, type=kind, content=content, slot=slot, confidence=0.85,
              salience=0.6)


def statements(count: int, seed: int = 13) -> list[Op]:
    """``count`` distinct statements of one user over years: mostly dated events, with
    preferences, family, plans and homes among them."""
    r = random.Random(seed)
    out: list[Op] = []
    seen: set[str] = set()
    while len(out) < count:
        pick = r.randrange(10)
        week = len(out) // 7
        if pick < 6:
            op = _add(MemoryType.episodic, f"Went to {r.choice(ACTIVITIES)} in "
                      f"{r.choice(CITIES)} with {r.choice(NAMES)} on {r.choice(DAYS)} "
                      f"of week {week}")
        elif pick == 6:
            op = _add(MemoryType.preference, f"Likes {r.choice(THINGS)} with "
                      f"{r.choice(NAMES)} in {r.choice(CITIES)}")
        elif pick == 7:
            rel = r.choice(RELATIVES)
            op = _add(MemoryType.profile, f"Has a {rel} named {r.choice(NAMES)} "
                      f"born in {1950 + r.randrange(70)}", slot=f"family:{rel}:{len(out)}")
        elif pick == 8:
            op = _add(MemoryType.open_loop, f"Plans to {r.choice(TASKS)} on "
                      f"{r.choice(DAYS)} of week {week}")
        else:
            op = _add(MemoryType.episodic, f"Felt {r.choice(('happy', 'tired', 'proud'))} "
                      f"after {r.choice(ACTIVITIES)} in week {week}")
        if op.content not in seen:
            seen.add(op.content)
            out.append(op)
    return out


def probes(said: list[Op], seed: int = 7) -> list[Op]:
    """What a night proposes for the chat: new facts, restatements, new values, opposites,
    resolutions."""
    r = random.Random(seed)
    out: list[Op] = []
    for i in range(PROBES):
        pick = i % 6
        if pick == 0:
            out.append(_add(MemoryType.episodic, f"Went to {r.choice(ACTIVITIES)} in "
                            f"{r.choice(CITIES)} with {r.choice(NAMES)} on a holiday {i}"))
        elif pick == 1:
            out.append(r.choice(said).model_copy(update={
                "content": r.choice(said).content.lower() + "."}))
        elif pick == 2:
            out.append(_add(MemoryType.profile, f"Lives in {r.choice(CITIES)}", slot="home"))
        elif pick == 3:
            out.append(_add(MemoryType.preference, f"Doesn't like {r.choice(THINGS)} with "
                            f"{r.choice(NAMES)} in {r.choice(CITIES)}"))
        elif pick == 4:
            out.append(Op(op=OpKind.close_loop, content=f"Finally managed to "
                          f"{r.choice(TASKS)}", confidence=0.8))
        else:
            out.append(_add(MemoryType.preference, f"Likes {r.choice(THINGS)} on "
                            f"{r.choice(DAYS)} number {i}"))
    return out


def gate_costs(gate: Gate, pool: Pool, ops: list[Op], vectors: list[np.ndarray | None]
               ) -> dict[str, float]:
    """Microseconds per op: shortlist + decision (NIGHT_OPS ops to a matrix product), and
    the decision over the whole chat."""
    whole = list(pool)
    started = time.perf_counter()
    short_sizes = []
    for i in range(0, len(ops), NIGHT_OPS):  # as the writer: one product per apply call
        pool.expect(vectors[i:i + NIGHT_OPS])
        for op, vector in zip(ops[i:i + NIGHT_OPS], vectors[i:i + NIGHT_OPS], strict=True):
            shortlist = pool.shortlist(op, vector)
            short_sizes.append(len(shortlist))
            gate.decide(op, vector, shortlist)
    short = time.perf_counter() - started
    started = time.perf_counter()
    for op, vector in zip(ops, vectors, strict=True):
        gate.decide(op, vector, whole)
    full = time.perf_counter() - started
    return {"shortlist_us": round(short / len(ops) * 1e6, 1),
            "whole_chat_us": round(full / len(ops) * 1e6, 1),
            "shortlist_median": float(np.median(short_sizes))}


def apply_costs(db: Database, client: Client, ops: list[Op],
                vectors: list[np.ndarray | None]) -> dict[str, float]:
    """Microseconds per op through the writer, chunks of NIGHT_OPS rolled back; the pool's
    load per chunk apart."""
    load = apply = 0.0
    with db.connection() as conn:
        for i in range(0, len(ops), NIGHT_OPS):
            with conn.transaction(force_rollback=True):
                t0 = time.perf_counter()
                pool = client.writer.load_pool(conn, SCOPE)
                t1 = time.perf_counter()
                client.writer.apply(conn, SCOPE, ops[i:i + NIGHT_OPS], now=NOW,
                                    source="bench", pool=pool,
                                    vectors=vectors[i:i + NIGHT_OPS])
                t2 = time.perf_counter()
            load += t1 - t0
            apply += t2 - t1
    chunks = len(range(0, len(ops), NIGHT_OPS))
    return {"apply_us_per_op": round(apply / len(ops) * 1e6, 1),
            "load_pool_ms": round(load / chunks * 1000, 2)}


def main(argv: list[str] | None = None) -> None:
    from engrammar import LocalEmbedder, Settings
    from engrammar.runtime._database import resolve_url

    parser = argparse.ArgumentParser(prog="bench chat_size")
    parser.add_argument("--database", default="memory_bench_chat_size")
    args = parser.parse_args(argv or [])
    said = statements(max(SIZES))
    night = probes(said)
    embedder = LocalEmbedder()
    embedder.embed(["warm-up"])
    started = time.perf_counter()
    said_vectors = [v for i in range(0, len(said), 256)
                    for v in embedder.embed([op.content for op in said[i:i + 256]])]
    embed_s = time.perf_counter() - started
    night_vectors = list(embedder.embed([op.content for op in night]))
    url = resolve_url(Settings(), args.database)
    sizes: dict[int, dict[str, Any]] = {}
    imports: list[tuple[int, float]] = []  # (memories before the chunk, ops/s)
    with Database(url, min_size=1, max_size=1) as db:
        reset(db)
        client = Client(db, settings=Settings(), embedder=Precomputed(), check_embedder=False)
        done = 0
        for size in SIZES:
            while done < size:
                step = min(CHUNK, size - done)
                with db.connection() as conn:
                    t = time.perf_counter()
                    with conn.transaction():
                        client.writer.apply(conn, SCOPE, said[done:done + step],
                                            now=NOW - timedelta(days=1), source="import",
                                            vectors=said_vectors[done:done + step])
                    imports.append((done, step / (time.perf_counter() - t)))
                done += step
            with db.connection() as conn, conn.transaction(force_rollback=True):
                pool = client.writer.load_pool(conn, SCOPE)
            sizes[size] = {"memories": len(pool),
                           **gate_costs(client.writer.gate, pool, night, night_vectors),
                           **apply_costs(db, client, night, night_vectors)}
    near_600 = [rate for before, rate in imports if 500 <= before < 700]
    result: dict[str, Any] = {
        "sizes": {str(k): v for k, v in sizes.items()},
        "gate_ratio_5000_to_50": round(sizes[5_000]["shortlist_us"] / sizes[50]["shortlist_us"],
                                       2),
        "apply_ratio_5000_to_50": round(sizes[5_000]["apply_us_per_op"]
                                        / sizes[50]["apply_us_per_op"], 2),
        "import_ops_per_s_at_600": round(float(np.mean(near_600))),
        "import_ops_per_s": {str(before): round(rate) for before, rate in imports[::10]},
        "embed": {"texts": len(said), "seconds": round(embed_s, 2),
                  "texts_per_s": round(len(said) / embed_s)},
    }
    OUT.mkdir(exist_ok=True)
    (OUT / "chat_size.json").write_text(json.dumps(result, indent=2))
    print(f"{'memories':>9} {'shortlist':>9} {'gate us/op':>10} {'whole chat':>10} "
          f"{'apply us/op':>11} {'load pool ms':>12}")
    for size, row in sizes.items():
        print(f"{size:>9,} {row['shortlist_median']:>9.0f} {row['shortlist_us']:>10,.0f} "
              f"{row['whole_chat_us']:>10,.0f} {row['apply_us_per_op']:>11,.0f} "
              f"{row['load_pool_ms']:>12.1f}")
    print(f"5,000 / 50: gate x{result['gate_ratio_5000_to_50']}, "
          f"apply x{result['apply_ratio_5000_to_50']} (goal <= 2)")
    print(f"import, chunks of {CHUNK}: {result['import_ops_per_s_at_600']:,} ops/s with "
          f"~600 memories in the chat (goal >= 1,000), embedding excluded")
    print(f"embedding, apart: {len(said):,} texts in {embed_s:.1f} s = "
          f"{len(said) / embed_s:,.0f} texts/s")
