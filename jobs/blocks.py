"""The short-term window's block summaries: create, summarise and activate them for every
chat (see memory.window). Frequent, not nightly: a chat should not wait a day for its older
turns to fold."""

from __future__ import annotations

from datetime import datetime

from memory.client import Client
from memory.inputs import aware
from memory.window import WindowReport


def run(client: Client, now: datetime | None = None) -> WindowReport:
    return client.window.run(aware(now))
