"""The short-term window's block summaries: create, summarise and activate them for every
chat (see recall._window). Frequent, not nightly: a chat should not wait a day for its older
turns to fold."""

from __future__ import annotations

from datetime import datetime

from engrammar._inputs import aware
from engrammar.client import Client
from engrammar.recall._window import WindowReport


def run(client: Client, now: datetime | None = None) -> WindowReport:
    return client.window.run(aware(now))
