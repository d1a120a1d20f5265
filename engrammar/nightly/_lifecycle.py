"""Lifecycle: memories go active -> stale -> archived, and open loops close, by rules.

The decay-driven rules follow recall._decay, where the model is documented: an ephemeral or
episodic memory goes stale, and an open loop closes for silence, at one half-life of its
type without reference. The others are LifecycleSettings: an open loop closes
``open_loop_grace_days`` after its due date, and a stale memory is archived
``archive_after_stale_days`` after it went stale. The SQL is store.lifecycle_transitions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from engrammar import store
from engrammar.errors import chat_contained, chat_fault
from engrammar.models import MemoryType
from engrammar.recall import _decay as decay
from engrammar.runtime._database import Database
from engrammar.settings import DecaySettings, LifecycleSettings


@dataclass
class LifecycleReport:
    now: datetime
    moved: dict[str, int] = field(default_factory=dict)
    recalls_folded: int = 0
    errors: list[dict[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"job": "lifecycle", "now": self.now.isoformat(), "moved": self.moved,
                "transitions": sum(self.moved.values()),
                "recalls_folded": self.recalls_folded, "errors": self.errors}


def run_lifecycle(db: Database, now: datetime, settings: LifecycleSettings,
                  half_lives: DecaySettings) -> LifecycleReport:
    """Every rule, set-based, in one transaction with the fold of the day's recall notes:
    all of it applies or none does.

    Pinned memories are exempt; contradicted ones are never touched, so they never return.
    Running it twice at the same ``now`` moves nothing the second time.
    """
    stale_after = decay.stale_after(half_lives)
    rules = {
        "ephemeral_half_life_days": stale_after[MemoryType.ephemeral],
        "episodic_half_life_days": stale_after[MemoryType.episodic],
        "open_loop_half_life_days": stale_after[MemoryType.open_loop],
        "open_loop_grace_days": settings.open_loop_grace_days,
        "archive_after_stale_days": settings.archive_after_stale_days,
    }
    report = LifecycleReport(now=now)
    try:
        with db.connection() as conn, conn.transaction():
            # Set-based over every chat, so it holds every chat's write lock (writers wait).
            store.lock_all_chats(conn)
            # What recalls surfaced since the last run counts as a reference for the rules.
            report.recalls_folded = store.fold_recalls(conn)
            report.moved = store.lifecycle_transitions(conn, now, rules)
        return report
    except Exception as exc:
        if not chat_fault(exc):
            raise  # a database that is down ends the run
        report.errors.append({"chat": "*", "error": f"the set-based run failed, so chat by "
                              f"chat: {exc}", "kind": type(exc).__name__})
    # Some chat's rows fail the set-based run: each chat alone, so only that one fails.
    with db.connection() as conn:
        chats = store.list_chats(conn)
    for scope in chats:
        with chat_contained(report.errors, scope.report_entry()):
            with db.connection() as conn, conn.transaction():
                store.lock_chat(conn, scope)
                moved = store.lifecycle_transitions(conn, now, rules, scope)
            for rule, n in moved.items():  # counted once committed
                report.moved[rule] = report.moved.get(rule, 0) + n
    return report
