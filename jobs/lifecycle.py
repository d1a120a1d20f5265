"""Daily lifecycle: decay and archive memories by their per-type rules (see
memory.lifecycle and memory.decay)."""

from __future__ import annotations

from datetime import datetime

from memory.client import Client
from memory.inputs import aware
from memory.lifecycle import LifecycleReport, run_lifecycle


def run(client: Client, now: datetime | None = None) -> LifecycleReport:
    return run_lifecycle(client.db, aware(now), client.settings.lifecycle,
                         client.settings.decay)
