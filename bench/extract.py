"""The night's extraction end to end, offline: 1,000 chats of 20 messages each, claimed,
read, extracted by the offline (parser) extractor, embedded, gated and applied, one
transaction a chat. First, the extractor alone on one core: the same chats' messages, no
database, one chat's batch per call as the job makes them (``extract alone``).

Each chat is a short conversation of 10 user messages (what the offline extractor reads: name,
home, job, family, pets, likes, plans with a day, things done, and small talk) and 10
assistant replies. The log is recorded up front (not timed), then ``nightly._extract`` runs as
the nightly job runs it, on 1 worker and then on 2 worker processes (each its own client,
embedder and connection), on a freshly emptied database each time. Both runs must end with
the same memories.

Where the time goes, per worker, summed over its chats: the extractor, embedding the ops'
contents (the local model, in the writer), the gate, loading each chat's pool (its lock
and rows), the writes (the rest of ``Writer.apply``: ids, inserts, updates, events), and
the rest of the transaction (claiming the chat, reading its messages, the watermark and
the commit).

The embedder runs on all cores by default; with 2 workers on a 2-core machine that is 4
onnxruntime threads for 2 cores, and their spinning starves the database and each other
(measured: 2 workers slower than 1). So each run is measured twice, with the default and
with one embedder thread per worker (``LocalEmbedder(threads=1)``).

``python -m bench extract [--chats N] [--alone]`` (``--alone``: only the extractor on one
core); figures go to ``bench/out/extract.json``.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from bench.gate import (
    ACTIVITIES,
    CITIES,
    DAYS,
    DONE,
    JOBS,
    NAMES,
    PET_NAMES,
    PETS,
    RELATIVES,
    TASKS,
    THINGS,
    TimedGate,
    reset,
)
from bench.timing import in_processes
from engrammar.client import Client
from engrammar.extract._extractor import Extraction
from engrammar.extract.parser._extractor import ParserExtractor
from engrammar.models import Memory, Message, Role, Scope
from engrammar.runtime._database import Database
from engrammar.runtime._embedder import LocalEmbedder
from engrammar.write._pool import Pool
from engrammar.write._writer import ApplyResult, Writer

OUT = Path(__file__).parent / "out"
DATABASE = "memory_bench_extract"
CHATS = 1_000
MESSAGES = 20
SEED = 20261122
NIGHT = datetime(2026, 11, 22, 2, 0, tzinfo=UTC)
SMALL_TALK = ("Long day today.", "What do you think about that?", "Haha, fair enough.",
              "Not sure yet, we will see.", "Tell me something interesting.",
              "The weather is awful again.", "Thanks, that helps.")
REPLIES = ("That sounds lovely, tell me more.", "I hear you. How are you feeling about it?",
           "Good to know! I will keep that in mind.", "Interesting. What happened next?",
           "That makes sense.", "Sounds like a plan.")


def conversation(rng: random.Random) -> list[str]:
    """The user's 10 messages of one chat (the assistant answers each)."""
    task = rng.choice(TASKS)
    said = [
        f"My name is {rng.choice(NAMES)} and I live in {rng.choice(CITIES)}.",
        f"I work as a {rng.choice(JOBS)}.",
        f"My {rng.choice(RELATIVES)} is called {rng.choice(NAMES)}.",
        f"I have a {rng.choice(PETS)} named {rng.choice(PET_NAMES)}.",
        f"I really love {rng.choice(THINGS)}.",
        f"I need to {task} on {rng.choice(DAYS)}.",
        f"I'm going to {rng.choice(ACTIVITIES)} next week.",
        f"I finally {DONE[task]}." if rng.random() < 0.5 else rng.choice(SMALL_TALK),
    ]
    said += rng.sample(SMALL_TALK, MESSAGES // 2 - len(said))
    rng.shuffle(said)
    return said


def scope_of(chat: int) -> Scope:
    return Scope(user_id=f"ex{chat // 4:04d}", chat_id=f"chat{chat % 4}")


def record(client: Client, chats: int, seed: int = SEED) -> int:
    """Every chat's log, a minute between messages, ending an hour before the night."""
    rng = random.Random(seed)
    start = NIGHT - timedelta(hours=1, minutes=MESSAGES)
    n = 0
    for c in range(chats):
        scope = scope_of(c)
        for i, text in enumerate(conversation(rng)):
            at = start + timedelta(minutes=2 * i)
            client.record(scope.user_id, scope.chat_id, "user", text, at=at)
            client.record(scope.user_id, scope.chat_id, "assistant", rng.choice(REPLIES),
                          at=at + timedelta(minutes=1))
            n += 2
    return n


# -- timing, by subclassing the real parts -----------------------------------------------------

@dataclass
class Times:
    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(
        ("extract", "embed", "gate", "load_pool", "apply", "total"), 0.0))

    def merge(self, other: Times) -> None:
        for k, v in other.seconds.items():
            self.seconds[k] += v

    def parts(self) -> dict[str, float]:
        """Seconds of each part; ``writes`` and ``claim_read_commit`` are what is left."""
        s = self.seconds
        return {
            "extract (parser)": s["extract"],
            "embed ops": s["embed"],
            "gate": s["gate"],
            "load pool (lock + rows)": s["load_pool"],
            "writes (ids, inserts, updates, events)": s["apply"] - s["embed"] - s["gate"],
            "claim, read, watermark, commit": s["total"] - s["extract"] - s["load_pool"]
            - s["apply"],
        }


class TimedExtractor(ParserExtractor):
    def __init__(self, times: Times) -> None:
        self.times = times

    def extract(self, scope: Scope, messages: Sequence[Message], memories: Sequence[Memory],
                now: datetime) -> Extraction:
        t = time.perf_counter()
        try:
            return super().extract(scope, messages, memories, now)
        finally:
            self.times.seconds["extract"] += time.perf_counter() - t


class TimedEmbedder(LocalEmbedder):
    times: Times

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        t = time.perf_counter()
        try:
            return super().embed(texts)
        finally:
            self.times.seconds["embed"] += time.perf_counter() - t


class TimedWriter(Writer):
    times: Times

    def load_pool(self, conn: Any, scope: Scope) -> Pool:
        t = time.perf_counter()
        try:
            return super().load_pool(conn, scope)
        finally:
            self.times.seconds["load_pool"] += time.perf_counter() - t

    def apply(self, conn: Any, scope: Scope, ops: Any, *, now: datetime, source: str,
              handles: Mapping[str, int] | None = None, pool: Pool | None = None,
              vectors: Sequence[np.ndarray | None] | None = None) -> ApplyResult:
        t = time.perf_counter()
        try:
            return super().apply(conn, scope, ops, now=now, source=source, handles=handles,
                                 pool=pool, vectors=vectors)
        finally:
            self.times.seconds["apply"] += time.perf_counter() - t


def timed_client(db: Database, threads: int | None = None
                 ) -> tuple[Client, Times, TimedGate]:
    from engrammar import Settings

    times = Times()
    embedder = TimedEmbedder(threads)
    embedder.times = times
    client = Client(db, settings=Settings(), embedder=embedder,
                    extractor=TimedExtractor(times))
    gate = TimedGate(client.settings.gate)
    writer = TimedWriter(gate, embedder, client.settings.max_memory_chars)
    writer.times = times
    client.writer = writer
    return client, times, gate


@dataclass
class Share:
    chats: int = 0
    messages: int = 0
    applied: int = 0
    errors: int = 0
    times: Times = field(default_factory=Times)


def warm(db: Database, threads: int | None = None) -> tuple[Client, Times, TimedGate]:
    """A worker's client with its model loaded and run once, its clocks at zero."""
    client, times, gate = timed_client(db, threads)
    client.embedder.embed(["warm up"])
    times.seconds["embed"] = 0.0
    return client, times, gate


def extract(client: Client, times: Times, gate: TimedGate) -> Share:
    """One worker's night: ``nightly._extract`` until no chat is left, timed by parts."""
    from engrammar.scheduler import _extract as job

    t = time.perf_counter()
    report = job.run(client, now=NIGHT)
    times.seconds["total"] = time.perf_counter() - t
    times.seconds["gate"] = gate.seconds
    return Share(report.chats, report.messages, report.applied, len(report.errors), times)


def _worker(url: str, threads: int | None, start: Any, out: Any) -> None:
    with Database(url, min_size=1, max_size=1) as db:
        worker = warm(db, threads)  # the model loaded before the clock starts
        start.wait()
        out.put(extract(*worker))


@dataclass
class Run:
    workers: int
    threads: int | None
    seconds: float
    shares: list[Share]
    memories: list[tuple[str, str, str, str]]

    @property
    def messages(self) -> int:
        return sum(s.messages for s in self.shares)

    @property
    def messages_per_s(self) -> float:
        return self.messages / self.seconds


def run(url: str, chats: int, workers: int, threads: int | None = None
        ) -> tuple[Run, int, float]:
    """Record ``chats`` chats on an emptied database, then extract them with ``workers``,
    each embedding on ``threads`` threads (None: onnxruntime's default, every core)."""
    with Database(url, min_size=1, max_size=2) as db:
        reset(db)
        worker = warm(db)
        t = time.perf_counter()
        recorded = record(worker[0], chats)
        record_s = time.perf_counter() - t
        if workers == 1:
            started = time.perf_counter()
            shares = [extract(*worker)]
            seconds = time.perf_counter() - started
        else:
            shares, seconds = in_processes(_worker, [(url, threads)] * workers)
        with db.connection() as conn:
            memories = [(str(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in conn.execute(
                "SELECT user_id, chat_id, status, content FROM memories"
                " ORDER BY user_id, chat_id, content, status")]
    return Run(workers, threads, seconds, shares, memories), recorded, record_s


def alone(chats: int, seed: int = SEED) -> dict[str, Any]:
    """The extractor by itself on one core: each chat's 20 messages in one call, as the
    nightly job passes them. Messages/s counts every message (the job's unit), and the
    user's alone (the only ones parsed)."""
    from threadpoolctl import threadpool_limits

    rng = random.Random(seed)
    batches: list[tuple[Scope, list[Message]]] = []
    n = 0
    for c in range(chats):
        scope = scope_of(c)
        msgs = []
        for text in conversation(rng):
            for role, content in ((Role.user, text), (Role.assistant, rng.choice(REPLIES))):
                n += 1
                msgs.append(Message(id=n, user_id=scope.user_id, chat_id=scope.chat_id,
                                    role=role, content=content, at=NIGHT))
        batches.append((scope, msgs))
    extractor = ParserExtractor()
    extractor.extract(*batches[0], [], NIGHT)  # the model loaded before the clock starts
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    ops = 0
    with threadpool_limits(1):
        t = time.perf_counter()
        for scope, msgs in batches:
            ops += len(extractor.extract(scope, msgs, [], NIGHT).ops)
        seconds = time.perf_counter() - t
    user = sum(1 for _, msgs in batches for m in msgs if m.role is Role.user)
    return {"extractor": extractor.name, "chats": chats, "messages": n, "user_messages": user,
            "seconds": round(seconds, 2), "messages_per_s": round(n / seconds),
            "user_messages_per_s": round(user / seconds), "ops": ops}


def main(argv: list[str] | None = None) -> None:
    import argparse

    from engrammar import Settings
    from engrammar.runtime._database import resolve_url

    parser = argparse.ArgumentParser(prog="python -m bench extract")
    parser.add_argument("--chats", type=int, default=CHATS)
    parser.add_argument("--database", default=DATABASE)
    parser.add_argument("--alone", action="store_true",
                        help="only the extractor by itself on one core, no database")
    args = parser.parse_args(argv or [])
    single = alone(args.chats)
    print(f"extract alone ({single['extractor']}, one core): {single['messages']:,} messages "
          f"({single['user_messages']:,} the user's) in {single['seconds']} s = "
          f"{single['messages_per_s']:,} messages/s, {single['user_messages_per_s']:,} user "
          f"messages/s; {single['ops']:,} ops proposed")
    if args.alone:
        OUT.mkdir(exist_ok=True)
        (OUT / "extract_alone.json").write_text(json.dumps(single, indent=2))
        return
    url = resolve_url(Settings(), args.database)
    load_before = os.getloadavg()[0]
    runs = []
    for workers, threads in ((1, None), (1, 1), (2, None), (2, 1)):
        r, recorded, record_s = run(url, args.chats, workers, threads)
        runs.append(r)
    # The same chats, split between workers by claiming: the same memories.
    same = all(r.memories == runs[0].memories and r.messages == recorded for r in runs)

    def report(r: Run) -> dict[str, Any]:
        times = Times()
        for s in r.shares:
            times.merge(s.times)
        return {
            "workers": r.workers, "embed_threads": r.threads or "default",
            "seconds": round(r.seconds, 2),
            "messages_per_s": round(r.messages_per_s),
            "chats_per_s": round(sum(s.chats for s in r.shares) / r.seconds, 1),
            "applied_ops": sum(s.applied for s in r.shares),
            "errors": sum(s.errors for s in r.shares),
            "chats_per_worker": [s.chats for s in r.shares],
            "worker_seconds": {k: round(v, 2) for k, v in times.parts().items()},
        }

    reports = [report(r) for r in runs]
    result = {
        "chats": args.chats, "messages": recorded, "extract_alone": single,
        "record": {"seconds": round(record_s, 2), "messages_per_s": round(recorded / record_s)},
        "memories": len(runs[0].memories),
        "runs": reports,
        "same_memories_in_every_run": same,
        "load_avg_1m": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "cpus": os.cpu_count(),
    }
    OUT.mkdir(exist_ok=True)
    (OUT / "extract.json").write_text(json.dumps(result, indent=2))
    print(f"{args.chats:,} chats x {MESSAGES} messages = {recorded:,} messages "
          f"(recorded in {record_s:.1f} s, not timed); {len(runs[0].memories):,} memories")
    for rep in reports:
        print(f"extract, {rep['workers']} worker{'s' if rep['workers'] > 1 else ' '}, "
              f"embedder threads {rep['embed_threads']}: "
              f"{rep['seconds']:6.2f} s = {rep['messages_per_s']:6,} messages/s, "
              f"{rep['chats_per_s']} chats/s, {rep['applied_ops']:,} ops applied, "
              f"{rep['errors']} errors")
        total = sum(rep["worker_seconds"].values())
        print("  where the time goes (worker-seconds): " + ", ".join(
            f"{k} {v:.2f} s ({v / total:.0%})" for k, v in rep["worker_seconds"].items()))
    print("every run read every message and wrote the same memories: "
          + ("yes" if same else "NO"))
    print(f"load average {result['load_avg_1m'][0]} -> {result['load_avg_1m'][1]} "
          f"on {os.cpu_count()} CPUs (the server and other work share them)")
