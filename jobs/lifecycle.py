"""Daily lifecycle: decay and archive memories by their per-type rules (see
memory.lifecycle and memory.decay)."""

from __future__ import annotations

from datetime import datetime

from memory.client import Client, utcnow
from memory.lifecycle import LifecycleReport, run_lifecycle


def run(client: Client, now: datetime | None = None) -> LifecycleReport:
    return run_lifecycle(client.db, now or utcnow(), client.settings.lifecycle,
                         client.settings.decay)
