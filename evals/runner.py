"""The fixture runner: each fixture in fresh scopes of its own, in three phases.

1. Extraction and retrieval (``evals.conversation``): the conversation on the fixture's
   clock, the night jobs after each day, every expectation checked.
2. Duplicate detection (``evals.leaks``): each night replayed over the memories it made.
3. Cross-chat isolation (``evals.leaks``): matching memories planted in other chats.

Scopes are named ``eval-<fixture>-<run id>``: fixtures never see each other, and each
fixture's users are erased when it ends (unless ``keep``).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from evals.conversation import Conversation
from evals.fixtures import Fixture
from evals.leaks import duplicates, isolation
from evals.matching import Matcher, describe_decision
from evals.metrics import THRESHOLDS, Counts, FixtureResult, below_thresholds
from jobs import extract, lifecycle, summaries
from memory.client import Client
from memory.errors import Error
from memory.models import Decision, Memory, Op, OpKind, Scope

Log = Callable[[str], None]


class EvalError(Error):
    """A job failed while a fixture ran: the run cannot measure anything."""


class Runner:
    def __init__(self, client: Client, *, log: Log | None = None, keep: bool = False,
                 run_id: str | None = None) -> None:
        self.client = client
        self.log: Log = log or (lambda _: None)
        self.keep = keep
        self.run_id = run_id or uuid.uuid4().hex[:8]
        self.matcher = Matcher(client)
        self._users: list[str] = []

    def scope_user(self, user: str) -> str:
        """A user id for this fixture, erased when the fixture ends."""
        self.client.erase_user(user)
        self._users.append(user)
        return user

    def run(self, fixture: Fixture) -> FixtureResult:
        started = time.perf_counter()
        result = FixtureResult(fixture.name, fixture.description.strip(),
                               list(fixture.covers))
        self.log(f"== {fixture.name}: {fixture.description.strip()}")
        user = self.scope_user(f"eval-{fixture.name}-{self.run_id}")
        try:
            conversation = Conversation(self, fixture, user, result)
            conversation.run()
            duplicates(self, fixture, user, conversation.nights, result)
            isolation(self, fixture, user, conversation.clock, result)
        finally:
            if not self.keep:
                for who in self._users:
                    self.client.erase_user(who)
            self._users = []
        result.seconds = time.perf_counter() - started
        self.log(f"== {fixture.name}: {'PASS' if result.passed else 'FAIL'}\n")
        return result

    def night(self, user: str, chats: Sequence[str], now: datetime
              ) -> dict[str, list[Decision]]:
        """The night's jobs: extract for the user's chats, then lifecycle and summaries.
        Reflection is left out: it needs a model and writes no extraction."""
        decisions: dict[str, list[Decision]] = {}
        for chat in chats:
            report = extract.run(self.client, now, chat=Scope(user_id=user, chat_id=chat))
            if report.errors:
                raise EvalError(f"extraction of {user}/{chat} failed: {report.errors}")
            decisions[chat] = [d for detail in report.details for d in detail.result.decisions]
            for d in decisions[chat]:
                self.log(f"    {chat}: {describe_decision(d)}")
        lifecycle.run(self.client, now)
        written = summaries.run(self.client, now)
        if written.errors:
            raise EvalError(f"summaries failed: {written.errors}")
        return decisions

    @staticmethod
    def seed_ops(memories: Sequence[Memory]) -> list[Op]:
        """Ops that write copies of ``memories`` (as they are now) into another scope."""
        return [Op(op=OpKind.add, type=m.type, content=m.content, surface=m.surface,
                   pinned=m.pinned, salience=m.salience, confidence=m.confidence, slot=m.slot,
                   due=m.due_at) for m in memories]


@dataclass
class RunReport:
    extractor: str
    embedder: str
    database: str
    started: datetime
    results: list[FixtureResult] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def totals(self) -> Counts:
        return sum((r.counts for r in self.results), Counts())

    def values(self) -> dict[str, float]:
        t = self.totals
        return {"precision": t.precision, "recall": t.recall, "hit_at_3": t.hit_at_3,
                "duplicate_leaks": t.duplicate_leaks, "isolation_leaks": t.isolation_leaks,
                "failed_fixtures": sum(not r.passed for r in self.results)}

    def below(self) -> list[str]:
        return below_thresholds(self.values())

    @property
    def ok(self) -> bool:
        return not self.below()

    def to_json(self) -> dict[str, Any]:
        t = self.totals
        return {
            "extractor": self.extractor, "embedder": self.embedder,
            "database": self.database, "started": self.started.isoformat(),
            "seconds": round(self.seconds, 2),
            "fixtures": len(self.results),
            "passed": sum(r.passed for r in self.results),
            "precision": round(t.precision, 4), "recall": round(t.recall, 4),
            "hit_at_3": round(t.hit_at_3, 4),
            "duplicate_leaks": t.duplicate_leaks, "isolation_leaks": t.isolation_leaks,
            "counts": t.to_json(),
            "thresholds": THRESHOLDS, "below_thresholds": self.below(), "ok": self.ok,
            "per_fixture": [r.to_json() for r in self.results],
        }


def run_fixtures(client: Client, fixtures: Sequence[Fixture], *, log: Log | None = None,
                 keep: bool = False, database: str = "",
                 progress: Callable[[FixtureResult], Any] | None = None) -> RunReport:
    runner = Runner(client, log=log, keep=keep)
    report = RunReport(extractor=client.extractor.name, embedder=client.embedder.name,
                       database=database, started=datetime.now(UTC))
    started = time.perf_counter()
    for fixture in fixtures:
        result = runner.run(fixture)
        report.results.append(result)
        if progress:
            progress(result)
    report.seconds = time.perf_counter() - started
    return report
