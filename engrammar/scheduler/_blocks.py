"""The short-term window's block summaries: cut, summarise and activate them for every
chat (nightly._blocks; the window: recall._window). Frequent, not nightly: a chat should not
wait a day for its older turns to fold."""

from __future__ import annotations

from datetime import datetime

from engrammar._inputs import aware
from engrammar.client import Client
from engrammar.nightly._blocks import BlocksReport


def run(client: Client, now: datetime | None = None) -> BlocksReport:
    return client.blocks.run(aware(now))
