"""Daily temporal summaries: days from messages, weeks from days, months from weeks. The
LLM writes them when one is configured; otherwise the extractive summarizer does."""

from __future__ import annotations

from datetime import datetime

from engrammar._inputs import aware
from engrammar.client import Client
from engrammar.extract._summarizer import SummaryReport, roll_up


def run(client: Client, now: datetime | None = None) -> SummaryReport:
    return roll_up(client.db, client.summarizer, client.counter, aware(now))
