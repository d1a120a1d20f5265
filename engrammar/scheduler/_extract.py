"""The extraction job over a :class:`~engrammar.client.Client`: its parts handed to the
nightly worker (:mod:`engrammar.nightly._extract`), synchronously or through the Batch API."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from engrammar._inputs import aware
from engrammar.client import Client
from engrammar.errors import ConfigError
from engrammar.extract._extractor import LLMExtractor
from engrammar.models import Scope
from engrammar.nightly._batch import BatchExtraction
from engrammar.nightly._extract import BatchRun, ExtractionJob, ExtractReport, merge

__all__ = ["BatchRun", "ExtractReport", "ExtractionJob", "batch", "batch_worker", "idle", "run",
           "scheduled", "worker"]


def worker(client: Client) -> ExtractionJob:
    return ExtractionJob(client.db, client.extractor, client.writer)


def run(client: Client, now: datetime | None = None, *, chat: Scope | None = None,
        dry_run: bool = False, progress: Callable[[int], Any] | None = None) -> ExtractReport:
    return worker(client).run(aware(now), chat=chat, dry_run=dry_run, progress=progress)


def idle(client: Client, now: datetime | None = None, *, user_id: str | None = None
         ) -> ExtractReport:
    """The idle-extract job: every chat quiet for MEMORY_FRESH__IDLE_MINUTES with new
    messages, extracted now (chat by chat, also when the night goes through the Batch API:
    a session's handful of messages is not worth a day's wait for half the price)."""
    return worker(client).run_idle(
        aware(now), timedelta(minutes=client.settings.fresh.idle_minutes), user_id=user_id)


def scheduled(client: Client, now: datetime | None = None) -> ExtractReport | BatchRun:
    """The extract job of the night and the scheduler: through the Batch API when
    MEMORY_LLM_BATCH is set (collect what finished, then submit what is new), else chat by
    chat."""
    if client.settings.llm_batch:
        return batch(client, now, collect=True, submit=True)
    return run(client, now)


def batch_worker(client: Client) -> BatchExtraction:
    if client.llm is None or not isinstance(client.extractor, LLMExtractor):
        raise ConfigError("extraction through the Batch API needs a model: set MEMORY_LLM=openai")
    return BatchExtraction(client.db, client.llm, client.extractor, client.writer)


def batch(client: Client, now: datetime | None = None, *, collect: bool = False,
          submit: bool = False, sync_failed: bool = False) -> BatchRun:
    """Collect finished batches, then submit the chats with new messages (either or both).
    ``sync_failed``: extract the chats of failed and expired requests at once, synchronously,
    instead of leaving them to the next submit."""
    now = aware(now)
    batches = batch_worker(client)
    report = BatchRun(now=now)
    if collect:
        report.collected = batches.collect(now)
        if sync_failed and report.collected.requeued:
            sync = worker(client)
            report.synced = ExtractReport(now=now)
            for scope in report.collected.requeued:
                merge(report.synced, sync.run(now, chat=scope))
    if submit:
        report.submitted = batches.submit(now)
    return report
