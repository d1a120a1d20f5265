"""Tokens the model was billed for, and what they cost.

Every response's prompt and completion tokens go into ``llm_calls`` (one row per attempt);
each ``LLM`` also sums them in process, so a job can report what it used: the scheduler
puts the difference over the run into the job's report (``--json`` and ``job_runs``), priced
by ``MEMORY_LLM_PRICES`` when the model has a price there.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Usage:
    """Calls that came back with a usage block, and their tokens."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __sub__(self, other: Usage) -> Usage:
        return Usage(self.calls - other.calls, self.prompt_tokens - other.prompt_tokens,
                     self.completion_tokens - other.completion_tokens)

    def cost(self, price: tuple[float, float] | None) -> float | None:
        """In the price's currency, given per million prompt and completion tokens."""
        if price is None:
            return None
        return round((self.prompt_tokens * price[0] + self.completion_tokens * price[1]) / 1e6,
                     6)

    def to_json(self, model: str, prices: Mapping[str, tuple[float, float]]) -> dict[str, Any]:
        return {"model": model, "calls": self.calls, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "cost": self.cost(prices.get(model))}


@dataclass
class Meter:
    """A running sum of Usage, safe across threads (AsyncClient calls from a pool)."""

    total: Usage = Usage()
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, usage: Any) -> None:
        """Count a response's ``usage`` (the openai client's object); None counts nothing."""
        if usage is None:
            return
        prompt = getattr(usage, "prompt_tokens", None) or 0
        completion = getattr(usage, "completion_tokens", None) or 0
        with self._lock:
            self.total = Usage(self.total.calls + 1, self.total.prompt_tokens + int(prompt),
                               self.total.completion_tokens + int(completion))

    def read(self) -> Usage:
        with self._lock:
            return self.total
