"""The weekly reflection job over a :class:`~engrammar.client.Client` (needs an LLM; see
:mod:`engrammar.nightly._reflect`)."""

from __future__ import annotations

from datetime import datetime

from engrammar._inputs import aware
from engrammar.client import Client
from engrammar.nightly._reflect import Reflection, ReflectReport

__all__ = ["ReflectReport", "Reflection", "run"]


def run(client: Client, now: datetime | None = None) -> ReflectReport:
    return Reflection(client.db, client.llm, client.writer).run(aware(now))
