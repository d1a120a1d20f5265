"""The metrics of an eval run and the thresholds it must meet, kept here and nowhere else."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

# The bar of `make eval`: below any of these the run exits non-zero. Ratios are minimums,
# counts are maximums.
THRESHOLDS: dict[str, float] = {
    "precision": 0.95,
    # Issue 16: extraction must keep what people say, not only avoid noise.
    "recall": 0.85,
    "hit_at_3": 0.95,
    "failed_fixtures": 0,
    "duplicate_leaks": 0,
    "isolation_leaks": 0,
}
MINIMUMS = ("precision", "recall", "hit_at_3")
K = 3


def ratio(part: int, whole: int) -> float:
    """``part / whole``; 1.0 when there is nothing to measure (no extraction, no query)."""
    return 1.0 if whole == 0 else part / whole


def precision(matched: int, extracted: int) -> float:
    """The share of extracted memories that match an expected one."""
    return ratio(matched, extracted)


def recall(found: int, expected: int) -> float:
    """The share of expected memories that were extracted."""
    return ratio(found, expected)


def hit_at_k(ranked: Sequence[int], relevant: Iterable[int], k: int = K) -> bool:
    """Whether any relevant id is among the first ``k`` of ``ranked``."""
    wanted = set(relevant)
    return any(i in wanted for i in ranked[:k])


@dataclass
class Counts:
    """What one fixture (or the sum of all) measured."""

    extracted: int = 0
    matched: int = 0
    expected: int = 0
    found: int = 0
    queries: int = 0
    hits: int = 0
    duplicate_leaks: int = 0
    isolation_leaks: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(**{k: getattr(self, k) + getattr(other, k) for k in vars(self)})

    @property
    def precision(self) -> float:
        return precision(self.matched, self.extracted)

    @property
    def recall(self) -> float:
        return recall(self.found, self.expected)

    @property
    def hit_at_3(self) -> float:
        return ratio(self.hits, self.queries)

    def to_json(self) -> dict[str, Any]:
        return {**vars(self), "precision": round(self.precision, 4),
                "recall": round(self.recall, 4), "hit_at_3": round(self.hit_at_3, 4)}


def below_thresholds(values: dict[str, float],
                     thresholds: dict[str, float] = THRESHOLDS) -> list[str]:
    """Each threshold the run misses, said in words; empty when the run passes."""
    out = []
    for name, bar in thresholds.items():
        value = values[name]
        if name in MINIMUMS and value < bar:
            out.append(f"{name} {value:.3f} < {bar:g}")
        elif name not in MINIMUMS and value > bar:
            out.append(f"{name} {value:g} > {bar:g}")
    return out


@dataclass
class FixtureResult:
    """One fixture's verdict: every failure with its reason, and what it measured."""

    name: str
    description: str
    covers: list[str]
    failures: list[str] = field(default_factory=list)
    counts: Counts = field(default_factory=Counts)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return not self.failures

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "covers": self.covers,
                "passed": self.passed, "failures": self.failures, **self.counts.to_json(),
                "seconds": round(self.seconds, 2)}
