"""The fixture runner: each fixture in fresh scopes of its own, in three phases.

1. Extraction and retrieval (``evals._conversation``): the conversation on the fixture's
   clock, the night jobs after each day, every expectation checked.
2. Duplicate detection (``evals._leaks``): each night replayed over the memories it made.
3. Cross-chat isolation (``evals._leaks``): matching memories planted in other chats.

Scopes are named ``eval-<fixture>-<run id>``: fixtures never see each other, and each
fixture's users are erased when it ends (unless ``keep``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from engrammar.client import Client
from engrammar.evals._conversation import Conversation
from engrammar.evals._fixtures import Fixture
from engrammar.evals._leaks import duplicates, isolation
from engrammar.evals._metrics import THRESHOLDS, Counts, FixtureResult, below_thresholds
from engrammar.evals._session import Log, Session


class Runner:
    """Runs fixtures one by one, each in a session of its own users."""

    def __init__(self, client: Client, *, log: Log | None = None, keep: bool = False,
                 run_id: str | None = None) -> None:
        self.session = Session(client, log=log, run_id=run_id)
        self.keep = keep

    def run(self, fixture: Fixture) -> FixtureResult:
        started = time.perf_counter()
        session = self.session
        result = FixtureResult(fixture.name, fixture.description.strip(),
                               list(fixture.covers))
        session.log(f"== {fixture.name}: {fixture.description.strip()}")
        user = session.scope_user(f"eval-{fixture.name}-{session.run_id}")
        base = session.client
        if fixture.scopes.user_wide:  # the fixture's settings: a client of its own
            session.client = scoped_client(base, fixture)
        try:
            conversation = Conversation(session, fixture, user, result)
            conversation.run()
            duplicates(session, fixture, user, conversation.nights, result)
            isolation(session, fixture, user, conversation.clock, result)
        finally:
            session.end(keep=self.keep)
            session.client = base
        result.seconds = time.perf_counter() - started
        session.log(f"== {fixture.name}: {'PASS' if result.passed else 'FAIL'}\n")
        return result


def scoped_client(client: Client, fixture: Fixture) -> Client:
    """``client``'s parts with the fixture's user-wide types."""
    scopes = client.settings.scopes.model_copy(
        update={"user_wide": [t.value for t in fixture.scopes.user_wide]})
    settings = client.settings.model_copy(update={"scopes": scopes})
    return Client(client.db, settings=settings, embedder=client.embedder, llm=client.llm,
                  extractor=client.extractor, counter=client.counter, check_embedder=False)


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
