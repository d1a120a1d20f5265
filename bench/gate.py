"""Write-gate + apply throughput: 10,000 proposed ops over 500 chats, the LLM excluded.

Ops come as an extractor proposes them, in two nights of 10 per chat: mostly new facts, some
restating what the chat already holds (the gate turns them into reinforces), some new values
for a slot (updates), resolutions of open loops, and some below the gate's thresholds. Their
contents are embedded once up front (timed on its own); then each chat's batch goes through
``Writer.apply`` inside one transaction per chat, as the extraction job runs it, and only that
is timed: loading the chat's memories, the gate, and every write with its history.

It runs twice on an emptied database: one worker, then two worker processes splitting the
chats (the job's workers split a night the same way, by claiming chats). Both must end with
the same decisions and rows. ``python -m bench gate``; figures go to ``bench/out/gate.json``.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from bench.timing import in_processes, percentile
from engrammar import store
from engrammar.client import Client
from engrammar.models import Decision, Memory, MemoryType, Op, OpKind, Scope
from engrammar.runtime._database import Database
from engrammar.runtime._embedder import Embedder
from engrammar.settings import GateSettings
from engrammar.write._gate import Gate
from engrammar.write._target import Candidate

OUT = Path(__file__).parent / "out"
DATABASE = "memory_bench"
CHATS = 500
OPS_PER_NIGHT = 10
NIGHTS = 2
SEED = 20261103
GOAL_OPS_PER_S = 2_000
NIGHT1 = datetime(2026, 11, 3, 2, 0, tzinfo=UTC)

CITIES = ("Berlin", "Munich", "Lisbon", "Porto", "Vienna", "Prague", "Oslo", "Madrid", "Dublin",
          "Kyoto", "Boston", "Toronto", "Zurich", "Krakow", "Athens", "Naples")
JOBS = ("nurse", "teacher", "software engineer", "architect", "baker", "lawyer", "designer",
        "electrician", "researcher", "accountant", "chef", "pilot", "translator")
NAMES = ("Dana", "Omar", "Lena", "Priya", "Jonas", "Mia", "Tomas", "Nora", "Sam", "Alex")
RELATIVES = ("sister", "brother", "partner", "daughter", "son", "best friend")
PETS = ("dog", "cat", "parrot", "rabbit")
PET_NAMES = ("Rex", "Luna", "Milo", "Biscuit", "Pepper", "Olive", "Ziggy", "Mochi")
THINGS = ("jazz", "green tea", "spicy ramen", "sourdough bread", "sci-fi novels", "podcasts",
          "early mornings", "rainy days", "vinyl records", "board games", "dark chocolate",
          "espresso", "crime documentaries", "gardening", "watercolour painting", "running",
          "thai curry", "old films", "techno", "crossword puzzles", "sushi", "chess")
ACTIVITIES = ("a long bike ride", "a cooking class", "a concert", "a job interview",
              "a marathon", "a board game night", "a road trip", "a wedding", "a pottery workshop",
              "a football match", "a climbing session", "a museum visit", "a camping weekend",
              "a house viewing", "a chess tournament", "a yoga retreat")
TASKS = ("call the bank", "finish the tax return", "book the flights", "renew the passport",
         "visit the dentist", "fix the bike", "write to the landlord", "plan the party",
         "pick up the new glasses", "send the thesis draft", "buy a gift for mom",
         "repaint the hall")
DONE = {"call the bank": "called the bank", "finish the tax return": "finished the tax return",
        "book the flights": "booked the flights", "renew the passport": "renewed the passport",
        "visit the dentist": "went to the dentist", "fix the bike": "fixed the bike",
        "write to the landlord": "wrote to the landlord", "plan the party": "planned the party",
        "pick up the new glasses": "picked up the new glasses",
        "send the thesis draft": "sent the thesis draft",
        "buy a gift for mom": "bought a gift for mom",
        "repaint the hall": "repainted the hall"}
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MOODS = ("tired", "stressed", "bored", "a bit sad", "grumpy")
# The extractor's share of each kind of proposal after the first night's basics.
MIX = {"new": 0.58, "restate": 0.16, "slot": 0.08, "close": 0.06, "below": 0.12}


@dataclass
class ChatPlan:
    """What one chat's user has said so far, so later ops can restate or change it."""

    rng: random.Random
    home: str = ""
    job: str = ""
    said: list[Op] = field(default_factory=list)
    loops: list[str] = field(default_factory=list)
    used: set[str] = field(default_factory=set)


def _op(kind: MemoryType, content: str, *, slot: str | None = None,
        confidence: float = 0.85, salience: float = 0.6) -> Op:
    return Op(op=OpKind.add, type=kind, content=content, slot=slot, confidence=confidence,
              salience=salience)


def _new_fact(p: ChatPlan) -> Op:
    """A fact the chat has not heard yet (a few tries to avoid repeating one by chance)."""
    r = p.rng
    for _ in range(20):
        pick = r.randrange(6)
        if pick == 0:
            op = _op(MemoryType.preference, f"Likes {r.choice(THINGS)}")
        elif pick == 1:
            rel = r.choice(RELATIVES)
            op = _op(MemoryType.profile, f"Has a {rel} named {r.choice(NAMES)}",
                     slot=f"family:{rel}", salience=0.8)
        elif pick == 2:
            pet = r.choice(PET_NAMES)
            op = _op(MemoryType.profile, f"Has a {r.choice(PETS)} named {pet}",
                     slot=f"pet:{pet.lower()}", salience=0.7)
        elif pick == 3:
            op = _op(MemoryType.episodic, f"Went to {r.choice(ACTIVITIES)} in "
                     f"{r.choice(CITIES)} on {r.choice(DAYS)}")
        elif pick == 4:
            task = r.choice(TASKS)
            if task in p.loops:
                continue
            op = _op(MemoryType.open_loop, f"Plans to {task} on {r.choice(DAYS)}",
                     salience=0.7)
            p.loops.append(task)
        else:
            op = _op(MemoryType.preference, f"Favorite food is {r.choice(THINGS)}",
                     slot="favorite:food")
        if op.content not in p.used:
            p.used.add(op.content)
            p.said.append(op)
            return op
    return _op(MemoryType.episodic, f"Mentioned {r.choice(ACTIVITIES)} number {len(p.used)}")


def _restate(p: ChatPlan) -> Op:
    """Something already said, as a paraphrase or verbatim with other case and punctuation."""
    r = p.rng
    if r.random() < 0.4:
        return _op(MemoryType.profile, f"Is based in {p.home}", slot="home", salience=0.8)
    said = r.choice(p.said)
    text = said.content
    text = text.lower() + "." if r.random() < 0.5 else text + "!"
    return said.model_copy(update={"content": text})


def _slot_change(p: ChatPlan) -> Op:
    r = p.rng
    if r.random() < 0.5:
        p.home = r.choice([c for c in CITIES if c != p.home])
        return _op(MemoryType.profile, f"Lives in {p.home}", slot="home", salience=0.8)
    p.job = r.choice([j for j in JOBS if j != p.job])
    return _op(MemoryType.profile, f"Works as a {p.job}", slot="job", salience=0.8)


def _below(p: ChatPlan) -> Op:
    r = p.rng
    pick = r.randrange(4)
    if pick == 0:
        return _op(MemoryType.ephemeral, f"Feels {r.choice(MOODS)} today", salience=0.3)
    if pick == 1:
        return _op(MemoryType.preference, f"Might like {r.choice(THINGS)}", confidence=0.25)
    if pick == 2:
        return _op(MemoryType.episodic, f"Said hello on {r.choice(DAYS)}", salience=0.1)
    return _op(MemoryType.preference, "Ok")


def _close(p: ChatPlan) -> Op:
    if not p.loops:
        return _new_fact(p)
    task = p.loops.pop(p.rng.randrange(len(p.loops)))
    return Op(op=OpKind.close_loop, content=DONE[task], confidence=0.8)


def plan_ops(chats: int = CHATS, seed: int = SEED) -> list[list[list[Op]]]:
    """ops[night][chat]: the proposals of each night, OPS_PER_NIGHT per chat."""
    out: list[list[list[Op]]] = [[] for _ in range(NIGHTS)]
    kinds = list(MIX)
    weights = list(MIX.values())
    for c in range(chats):
        p = ChatPlan(random.Random(seed * 1_000 + c))
        p.home, p.job = p.rng.choice(CITIES), p.rng.choice(JOBS)
        first = [_op(MemoryType.profile, f"Name is {p.rng.choice(NAMES)}", slot="name",
                     salience=0.9),
                 _op(MemoryType.profile, f"Lives in {p.home}", slot="home", salience=0.8),
                 _op(MemoryType.profile, f"Works as a {p.job}", slot="job", salience=0.8)]
        p.said.extend(first)
        ops = list(first)
        makers = {"new": _new_fact, "restate": _restate, "slot": _slot_change,
                  "close": _close, "below": _below}
        while len(ops) < OPS_PER_NIGHT * NIGHTS:
            ops.append(makers[p.rng.choices(kinds, weights)[0]](p))
        for night in range(NIGHTS):
            out[night].append(ops[night * OPS_PER_NIGHT:(night + 1) * OPS_PER_NIGHT])
    return out


class TimedGate(Gate):
    """The gate, with the time spent deciding summed up."""

    def __init__(self, settings: GateSettings) -> None:
        super().__init__(settings)
        self.seconds = 0.0

    def decide(self, op: Op, vector: np.ndarray | None, pool: Sequence[Candidate],
               handles: Mapping[str, int] | None = None,
               resolved: Sequence[Memory] = ()) -> Decision:
        started = time.perf_counter()
        try:
            return super().decide(op, vector, pool, handles, resolved)
        finally:
            self.seconds += time.perf_counter() - started


class Precomputed:
    """The embedder of a worker that is handed every vector: calling it is a bench bug."""

    name = "precomputed"
    dim = 384

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        raise AssertionError("the bench passes precomputed vectors")


Plan = list[list[list[Op]]]
Vectors = list[list[list[np.ndarray | None]]]


def embed_plan(embedder: Embedder, plan: Plan) -> tuple[Vectors, int, float]:
    """Every op's content embedded once, in batches of 64: (vectors, texts, seconds)."""
    texts = [op.content for night in plan for ops in night for op in ops if op.content]
    embedder.embed(texts[:64])  # warm-up
    started = time.perf_counter()
    matrix = np.vstack([embedder.embed(texts[i:i + 64]) for i in range(0, len(texts), 64)])
    seconds = time.perf_counter() - started
    rows = iter(matrix)
    vectors = [[[next(rows) if op.content else None for op in ops] for ops in night]
               for night in plan]
    return vectors, len(texts), seconds


def scope_of(chat: int) -> Scope:
    return Scope(user_id=f"bench{chat // 5:03d}", chat_id=f"chat{chat % 5}")


def reset(db: Database) -> None:
    with db.connection() as conn:
        store.erase_everything(conn)


@dataclass
class Share:
    """What one worker did: seconds per chat transaction, decisions, time in the gate."""

    per_chat: list[float] = field(default_factory=list)
    decisions: Counter[str] = field(default_factory=Counter)
    gate_seconds: float = 0.0

    def merge(self, other: Share) -> None:
        self.per_chat += other.per_chat
        self.decisions.update(other.decisions)
        self.gate_seconds += other.gate_seconds


def apply_chats(db: Database, client: Client, plan: Plan, vectors: Vectors,
                chats: Sequence[int]) -> Share:
    """Each night's ops of ``chats``, one transaction per chat as the extraction job runs."""
    gate = TimedGate(client.settings.gate)
    client.writer.gate = gate
    share = Share()
    with db.connection() as conn:
        for night, (ops_by_chat, vecs_by_chat) in enumerate(zip(plan, vectors, strict=True)):
            now = NIGHT1 + timedelta(days=night)
            for c in chats:
                scope = scope_of(c)
                t = time.perf_counter()
                with conn.transaction():
                    result = client.writer.apply(conn, scope, ops_by_chat[c], now=now,
                                                 source="bench", vectors=vecs_by_chat[c])
                share.per_chat.append(time.perf_counter() - t)
                for d in result.decisions:
                    share.decisions[d.op.op.value if d.op else f"reject:{d.code}"] += 1
    share.gate_seconds = gate.seconds
    return share


def _worker(url: str, plan: Plan, vectors: Vectors, chats: list[int], start: Any,
            out: Any) -> None:
    """One worker process: its own pool and client, released with the others at once."""
    from engrammar import Settings

    with Database(url, min_size=1, max_size=1) as db:
        client = Client(db, settings=Settings(), embedder=Precomputed(), check_embedder=False)
        start.wait()
        share = apply_chats(db, client, plan, vectors, chats)
    out.put(share)


@dataclass
class Run:
    workers: int
    seconds: float
    share: Share
    rows: dict[str, int]

    @property
    def ops_per_s(self) -> float:
        return sum(self.share.decisions.values()) / self.seconds


def run(url: str, plan: Plan, vectors: Vectors, workers: int) -> Run:
    """Apply the whole plan on an empty database with ``workers`` processes (1: in this one).

    Chats are split between workers up front; each chat's nights stay in one worker's order.
    """
    from engrammar import Settings

    with Database(url, min_size=1, max_size=1) as db:
        reset(db)
        chats = list(range(len(plan[0])))
        if workers == 1:
            client = Client(db, settings=Settings(), embedder=Precomputed(),
                            check_embedder=False)
            started = time.perf_counter()
            share = apply_chats(db, client, plan, vectors, chats)
            seconds = time.perf_counter() - started
        else:
            shares, seconds = in_processes(
                _worker, [(url, plan, vectors, chats[w::workers]) for w in range(workers)])
            share = Share()
            for part in shares:
                share.merge(part)
        with db.connection() as conn:
            rows = {str(k): int(v) for k, v in conn.execute(
                "SELECT 'memories', count(*) FROM memories UNION ALL"
                " SELECT 'events', count(*) FROM memory_events UNION ALL"
                " SELECT 'links', count(*) FROM memory_links").fetchall()}
    return Run(workers, seconds, share, rows)


def _report(r: Run) -> dict[str, Any]:
    return {
        "workers": r.workers,
        "seconds": round(r.seconds, 3),
        "ops_per_s": round(r.ops_per_s),
        "gate_s": round(r.share.gate_seconds, 3),
        "chat_tx_ms": {"p50": round(statistics.median(r.share.per_chat) * 1000, 2),
                       "p95": round(percentile(r.share.per_chat, 0.95) * 1000, 2)},
    }


def main() -> None:
    from engrammar import LocalEmbedder, Settings
    from engrammar.runtime._database import resolve_url

    url = resolve_url(Settings(), DATABASE)
    plan = plan_ops()
    total_ops = sum(len(ops) for night in plan for ops in night)
    vectors, texts, embed_s = embed_plan(LocalEmbedder(), plan)
    load_before = os.getloadavg()[0]
    runs = [run(url, plan, vectors, workers) for workers in (1, 2)]
    one, two = runs
    # Same plan, same chats, disjoint between workers: the same decisions and rows.
    assert one.share.decisions == two.share.decisions and one.rows == two.rows
    assert sum(one.share.decisions.values()) == total_ops

    result: dict[str, Any] = {
        "ops": total_ops,
        "chats": CHATS,
        "transactions": len(one.share.per_chat),
        "ops_per_s": round(one.ops_per_s),
        "ops_per_s_2_workers": round(two.ops_per_s),
        "runs": [_report(r) for r in runs],
        "embed": {"texts": texts, "seconds": round(embed_s, 2),
                  "texts_per_s": round(texts / embed_s)},
        "decisions": dict(sorted(one.share.decisions.items())),
        "rows": one.rows,
        "load_avg_1m": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "cpus": os.cpu_count(),
        "goal_ops_per_s": GOAL_OPS_PER_S,
    }
    OUT.mkdir(exist_ok=True)
    (OUT / "gate.json").write_text(json.dumps(result, indent=2))
    print(f"{total_ops:,} proposed ops over {CHATS} chats in {NIGHTS} nights: "
          f"{len(one.share.per_chat):,} chat transactions")
    for r in runs:
        rep = _report(r)
        print(f"gate + apply, {r.workers} worker{'s' if r.workers > 1 else ' '}: "
              f"{r.seconds:6.2f} s = {r.ops_per_s:7,.0f} ops/s   "
              f"(gate {r.share.gate_seconds:.2f} s; chat tx p50 {rep['chat_tx_ms']['p50']} ms,"
              f" p95 {rep['chat_tx_ms']['p95']} ms)")
    print(f"embedding, not in the above: {texts:,} texts in {embed_s:.2f} s = "
          f"{texts / embed_s:,.0f} texts/s")
    print("decisions: " + ", ".join(f"{k} {v}" for k, v in sorted(one.share.decisions.items())))
    print("rows: " + ", ".join(f"{k} {v}" for k, v in one.rows.items()))
    print(f"load average {result['load_avg_1m'][0]} -> {result['load_avg_1m'][1]} "
          f"on {os.cpu_count()} CPUs (the server and other work share them)")
    met = "met" if one.ops_per_s >= GOAL_OPS_PER_S else "MISSED"
    met2 = "met" if two.ops_per_s >= GOAL_OPS_PER_S else "MISSED"
    print(f"goal >= {GOAL_OPS_PER_S:,} ops/s: 1 worker {met}, 2 workers {met2}")
