"""Daily lifecycle: decay and archive memories by their per-type rules (see
nightly._lifecycle and recall._decay)."""

from __future__ import annotations

from datetime import datetime

from engrammar._inputs import aware
from engrammar.client import Client
from engrammar.nightly._lifecycle import LifecycleReport, run_lifecycle


def run(client: Client, now: datetime | None = None) -> LifecycleReport:
    return run_lifecycle(client.db, aware(now), client.settings.lifecycle,
                         client.settings.decay)
