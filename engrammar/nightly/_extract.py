"""Nightly extraction: every chat with messages past its watermark, one transaction each.

Workers claim chats with ``FOR UPDATE SKIP LOCKED``, so any number of them, on any number
of machines, split the night's work without a coordinator. A chat whose extraction fails is
rolled back untouched, reported with its id, and skipped for the rest of the run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from engrammar import store
from engrammar.errors import chat_fault
from engrammar.extract._extractor import Extraction, Extractor
from engrammar.extract._language import Unread, readable
from engrammar.extract.parser._extractor import ParserExtractor
from engrammar.models import Memory, Message, Scope
from engrammar.nightly._batch import CollectReport, SubmitReport
from engrammar.nightly._chat import ChatExtraction, extract_chat
from engrammar.runtime import _telemetry as telemetry
from engrammar.runtime._database import Database
from engrammar.write._writer import Writer


@dataclass
class ExtractReport:
    now: datetime
    dry_run: bool = False
    chats: int = 0
    messages: int = 0
    proposed: int = 0
    applied: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    errors: list[dict[str, str]] = field(default_factory=list)
    details: list[ChatExtraction] = field(default_factory=list)

    @property
    def unread(self) -> list[dict[str, Any]]:
        """Each chat whose messages were skipped as unreadable: how many, which languages."""
        return [{**d.scope.report_entry(), **d.unread.to_json()} for d in self.details
                if d.unread.messages]

    def to_json(self, verbose: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "job": "extract", "now": self.now.isoformat(), "dry_run": self.dry_run,
            "chats": self.chats, "messages": self.messages, "proposed": self.proposed,
            "applied": self.applied, "rejected": dict(sorted(self.rejected.items())),
            "errors": self.errors,
        }
        if self.unread:
            # Said, not silent: the offline extractor reads English only (README).
            out["unreadable"] = self.unread
        if verbose:
            out["decisions"] = [
                {**d.scope.report_entry(), **d.result.to_json()} for d in self.details
            ]
        return out


class ExtractionJob:
    """The extraction job's worker: claims chats, reads each one's new messages, asks the
    extractor for ops and applies them through the writer, one transaction a chat."""

    def __init__(self, db: Database, extractor: Extractor, writer: Writer, *,
                 screen: bool | None = None) -> None:
        self.db = db
        self.extractor = extractor
        self.writer = writer
        # Leave out the messages in a language the extractor cannot read: by default for
        # the offline extractor (English only), never for a model.
        self.screen = isinstance(extractor, ParserExtractor) if screen is None else screen

    def pending(self, now: datetime) -> int:
        """Chats with messages past their watermark."""
        with self.db.connection() as conn:
            return store.count_pending_chats(conn, now)

    def _chat(self, conn: store.Conn, scope: Scope, watermark: int, now: datetime
             ) -> ChatExtraction:
        """Extract one claimed chat inside the caller's transaction: ops, then watermark."""
        with telemetry.span("memory.extract.chat", user_id=scope.user_id,
                            chat_id=scope.chat_id):
            return self._extract(conn, scope, watermark, now)

    def _extract(self, conn: store.Conn, scope: Scope, watermark: int, now: datetime
                 ) -> ChatExtraction:
        unread = Unread()

        def propose(messages: list[Message], memories: list[Memory]) -> Extraction:
            # Messages in a language the offline extractor cannot read are skipped (and
            # counted); the watermark still passes them.
            nonlocal unread
            read, unread = readable(messages) if self.screen else (messages, Unread())
            return self.extractor.extract(scope, read, memories, now)

        outcome = extract_chat(conn, scope, watermark, self.writer, propose, now=now,
                               source=f"extract:{self.extractor.name}")
        assert not isinstance(outcome, str)  # this proposer never declines
        outcome.unread = unread
        return outcome

    def run(self, now: datetime, *, chat: Scope | None = None, dry_run: bool = False,
            progress: Callable[[int], Any] | None = None) -> ExtractReport:
        report = ExtractReport(now=now, dry_run=dry_run)
        failed: list[Scope] = []
        # A dry run rolls each chat back, so claimed chats stay pending: skip them too.
        seen: list[Scope] = []
        while True:
            claimed_scope: Scope | None = None
            with self.db.connection() as conn:
                try:
                    with conn.transaction(force_rollback=dry_run):
                        claimed = store.claim_chat(conn, now, only=chat, skip=failed + seen)
                        if claimed is None:
                            break
                        claimed_scope, watermark = claimed
                        outcome = self._chat(conn, claimed_scope, watermark, now)
                except Exception as exc:
                    # One chat's fault (bad model output, bad data, a bug on its rows) is
                    # reported with its id and skipped; the chats after it still run. A
                    # database that is down is not one chat's fault: it ends the run.
                    if claimed_scope is None or not chat_fault(exc):
                        raise
                    failed.append(claimed_scope)
                    report.errors.append({**claimed_scope.report_entry(), "error": str(exc),
                                          "kind": type(exc).__name__})
                    if progress:
                        progress(1)
                    continue
            if dry_run or outcome.messages == 0:
                seen.append(outcome.scope)
            report.chats += 1
            report.messages += outcome.messages
            report.proposed += outcome.proposed
            report.applied += outcome.result.applied
            report.rejected.update(outcome.result.rejected)
            report.details.append(outcome)
            if progress:
                progress(1)
        return report

    def run_idle(self, now: datetime, idle: timedelta, *, user_id: str | None = None
                 ) -> ExtractReport:
        """Extract the chats quiet for ``idle`` (their newest message at least that old)
        with messages past their watermark: a session's facts become memories soon after
        it ends, not at night. Each chat as the nightly run does it (claimed, one
        transaction), so a chat the night job holds is skipped, not waited for."""
        report = ExtractReport(now=now)
        if idle <= timedelta(0):
            return report
        with self.db.connection() as conn:
            quiet = store.idle_chats(conn, now, now - idle, user_id)
        for scope in quiet:
            merge(report, self.run(now, chat=scope))
        return report


@dataclass
class BatchRun:
    """A batch run's report: what was collected and applied (and, with ``sync_failed``,
    extracted at once), then what was submitted."""

    now: datetime
    collected: CollectReport | None = None
    synced: ExtractReport | None = None
    submitted: SubmitReport | None = None

    def to_json(self) -> dict[str, Any]:
        parts = [p for p in (self.collected, self.synced) if p is not None]
        rejected: Counter[str] = Counter()
        for p in parts:
            rejected.update(p.rejected)
        out: dict[str, Any] = {
            "job": "extract", "mode": "batch", "now": self.now.isoformat(),
            "chats": sum(p.chats for p in parts), "messages": sum(p.messages for p in parts),
            "proposed": sum(p.proposed for p in parts),
            "applied": sum(p.applied for p in parts),
            "rejected": dict(sorted(rejected.items())),
            "errors": [e for p in (*parts, self.submitted) if p is not None for e in p.errors],
        }
        if self.collected is not None:
            out["collected"] = self.collected.to_json()
        if self.synced is not None:
            out["synced"] = self.synced.to_json()
        if self.submitted is not None:
            out["submitted"] = self.submitted.to_json()
        return out


def merge(into: ExtractReport, one: ExtractReport) -> None:
    into.chats += one.chats
    into.messages += one.messages
    into.proposed += one.proposed
    into.applied += one.applied
    into.rejected.update(one.rejected)
    into.errors.extend(one.errors)
    into.details.extend(one.details)
