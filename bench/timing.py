"""Percentiles of timing samples, as every benchmark reports them."""

from __future__ import annotations

import statistics
from dataclasses import dataclass


@dataclass
class Timing:
    p50: float
    p95: float


def percentile(samples: list[float], q: float) -> float:
    """The sample at rank ``q`` (0..1) of the sorted samples, nearest rank."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def timing(samples: list[float]) -> Timing:
    return Timing(round(statistics.median(samples), 3), round(percentile(samples, 0.95), 3))
