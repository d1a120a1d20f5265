"""How benchmarks time things: percentiles of samples, and work split over processes."""

from __future__ import annotations

import multiprocessing
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


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


def in_processes(target: Callable[..., None], args: Sequence[tuple[Any, ...]]
                 ) -> tuple[list[Any], float]:
    """``target(*a, start, out)`` in one spawned process per ``a`` of ``args``, released
    together by the barrier ``start``; each puts its result on the queue ``out``. Returns
    the results, in the order they came, and the seconds from the release to the last."""
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Barrier(len(args) + 1)
    out = ctx.Queue()
    procs = [ctx.Process(target=target, args=(*a, start, out)) for a in args]
    for proc in procs:
        proc.start()
    start.wait()
    started = time.perf_counter()
    results = [out.get() for _ in procs]
    seconds = time.perf_counter() - started
    for proc in procs:
        proc.join()
    return results, seconds
