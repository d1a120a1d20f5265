"""What a fixture's phases share: the client, the log, the matcher, the users made for the
fixture (erased when it ends) and the night's jobs.

``evals._conversation`` and ``evals._leaks`` take a :class:`Session`; ``evals._runner`` makes
one per run and drives the phases, so neither phase imports the runner back.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from datetime import datetime

from engrammar.client import Client
from engrammar.errors import Error
from engrammar.evals._matching import Matcher, describe_decision
from engrammar.models import Decision, Memory, Op, OpKind, Scope
from engrammar.scheduler import _extract as extract
from engrammar.scheduler import _lifecycle as lifecycle
from engrammar.scheduler import _summaries as summaries

Log = Callable[[str], None]


class EvalError(Error):
    """A job failed while a fixture ran: the run cannot measure anything."""


class Session:
    def __init__(self, client: Client, *, log: Log | None = None,
                 run_id: str | None = None) -> None:
        self.client = client
        self.log: Log = log or (lambda _: None)
        self.run_id = run_id or uuid.uuid4().hex[:8]
        self.matcher = Matcher(client)
        self.users: list[str] = []

    def scope_user(self, user: str) -> str:
        """A user id for this fixture, erased when the fixture ends."""
        self.client.erase_user(user)
        self.users.append(user)
        return user

    def end(self, keep: bool = False) -> None:
        """The fixture is over: erase its users, unless they are kept for a look."""
        if not keep:
            for who in self.users:
                self.client.erase_user(who)
        self.users = []

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

    def idle(self, user: str, now: datetime) -> None:
        """The idle-extract job as the scheduler runs it (for the user's chats only: other
        fixtures' users are not this fixture's to extract)."""
        report = extract.idle(self.client, now, user_id=user)
        if report.errors:
            raise EvalError(f"idle extraction for {user} failed: {report.errors}")
        for detail in report.details:
            self.log(f"  idle extract {detail.scope.chat_id} at {now:%H:%M}: "
                     f"{detail.messages} messages")
            for d in detail.result.decisions:
                self.log(f"    {detail.scope.chat_id}: {describe_decision(d)}")

    @staticmethod
    def seed_ops(memories: Sequence[Memory]) -> list[Op]:
        """Ops that write copies of ``memories`` (as they are now) into another scope."""
        return [Op(op=OpKind.add, type=m.type, content=m.content, surface=m.surface,
                   pinned=m.pinned, salience=m.salience, confidence=m.confidence, slot=m.slot,
                   due=m.due_at) for m in memories]
