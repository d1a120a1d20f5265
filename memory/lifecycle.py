"""Decay: memories go active -> stale -> archived by per-type rules, and each has a
forgetting-curve strength.

The curve is R = exp(-t/S), with t the days since the memory was last referenced and S its
stability, which grows with each reinforcement: S = base * growth^n. MemoryBank's reference
code computes exp(-t/5*S), which divides by 5 and then multiplies by S, so its stronger
memories fade faster, the opposite of its paper. Here a larger S always means slower decay.

Strength is derived, not stored: it follows from the last reference, the reinforcement
count and the clock, and rewriting it nightly for every memory cost ~29 s per million rows
(bench/lifecycle.py) for a number any reader can compute.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memory import store
from memory.db import Database
from memory.models import Memory
from memory.settings import LifecycleSettings


def stability(reinforcements: int, settings: LifecycleSettings) -> float:
    return settings.strength_base_days * settings.strength_growth ** reinforcements


def strength(days_since_reference: float, reinforcements: int,
             settings: LifecycleSettings) -> float:
    """Retention R = exp(-t/S); 1 at the moment of reference, falling slower as S grows."""
    t = max(0.0, days_since_reference)
    return math.exp(-t / stability(reinforcements, settings))


def strength_of(memory: Memory, now: datetime, settings: LifecycleSettings) -> float:
    """A memory's strength at ``now``: t restarts at each reference (creation,
    reinforcement, being surfaced), S grows with each reinforcement."""
    days = (now - memory.last_referenced_at()).total_seconds() / 86400
    return strength(days, memory.reinforce_count, settings)


@dataclass
class LifecycleReport:
    now: datetime
    moved: dict[str, int] = field(default_factory=dict)
    recalls_folded: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"job": "lifecycle", "now": self.now.isoformat(), "moved": self.moved,
                "transitions": sum(self.moved.values()),
                "recalls_folded": self.recalls_folded}


def run_lifecycle(db: Database, now: datetime, settings: LifecycleSettings) -> LifecycleReport:
    """Every rule, set-based, in one transaction with the fold of the day's recall notes:
    all of it applies or none does.

    Pinned memories are exempt; contradicted ones are never touched, so they never return.
    Running it twice at the same ``now`` moves nothing the second time.
    """
    rules = {
        "ephemeral_stale_days": settings.ephemeral_stale_days,
        "episodic_stale_days": settings.episodic_stale_days,
        "open_loop_grace_days": settings.open_loop_grace_days,
        "open_loop_silence_days": settings.open_loop_silence_days,
        "archive_after_stale_days": settings.archive_after_stale_days,
    }
    report = LifecycleReport(now=now)
    with db.connection() as conn, conn.transaction():
        # What recalls surfaced since the last run counts as a reference for the rules.
        report.recalls_folded = store.fold_recalls(conn)
        report.moved = store.lifecycle_transitions(conn, now, rules)
    return report
