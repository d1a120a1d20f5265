"""Indexing the log for recall's excerpts: each chat's new messages embedded in batches
(nightly._index)."""

from __future__ import annotations

from datetime import datetime

from engrammar._inputs import aware
from engrammar.client import Client
from engrammar.models import Scope
from engrammar.nightly._index import IndexReport, index_log


def run(client: Client, now: datetime | None = None, *, chat: Scope | None = None
        ) -> IndexReport:
    return index_log(client.db, client.embedder, aware(now), batch=client.settings.log.batch,
                     chat=chat)
