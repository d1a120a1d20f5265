"""Indexing the log for recall's excerpts: each chat's new messages embedded in batches
(memory.logindex)."""

from __future__ import annotations

from datetime import datetime

from memory.client import Client
from memory.inputs import aware
from memory.logindex import IndexReport, index_log
from memory.models import Scope


def run(client: Client, now: datetime | None = None, *, chat: Scope | None = None
        ) -> IndexReport:
    return index_log(client.db, client.embedder, aware(now), batch=client.settings.log.batch,
                     chat=chat)
