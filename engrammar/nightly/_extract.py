"""Nightly extraction: every chat with messages past its watermark, one transaction each.

Workers claim chats with ``FOR UPDATE SKIP LOCKED``, so any number of them, on any number
of machines, split the night's work without a coordinator. A chat whose extraction fails is
rolled back untouched, reported with its id, and skipped for the rest of the run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from engrammar import store
from engrammar.errors import chat_fault
from engrammar.extract._extractor import Extractor
from engrammar.models import Op, Scope
from engrammar.nightly._batch import CollectReport, SubmitReport
from engrammar.runtime import _telemetry as telemetry
from engrammar.runtime._database import Database
from engrammar.write._writer import ApplyResult, Writer


@dataclass
class ChatExtraction:
    """One chat's night: what was read and proposed, and what the gate made of it."""

    scope: Scope
    messages: int
    proposed: int
    result: ApplyResult
    watermark: int
    extractor: str
    ops: list[Op] = field(default_factory=list)


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

    def to_json(self, verbose: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "job": "extract", "now": self.now.isoformat(), "dry_run": self.dry_run,
            "chats": self.chats, "messages": self.messages, "proposed": self.proposed,
            "applied": self.applied, "rejected": dict(sorted(self.rejected.items())),
            "errors": self.errors,
        }
        if verbose:
            out["decisions"] = [
                {"chat": str(d.scope), **d.result.to_json()} for d in self.details
            ]
        return out


class Extraction:
    """The extraction job's worker: claims chats, reads each one's new messages, asks the
    extractor for ops and applies them through the writer, one transaction a chat."""

    def __init__(self, db: Database, extractor: Extractor, writer: Writer) -> None:
        self.db = db
        self.extractor = extractor
        self.writer = writer

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
        # In id order, up to the first message stamped after `now`: the watermark then never
        # passes a message this run did not read, whatever order the stamps came in.
        messages = []
        for m in store.read_new_messages(conn, scope, watermark):
            if m.at > now:
                break
            messages.append(m)
        pool = self.writer.load_pool(conn, scope)
        memories = [c.memory for c in pool]
        extraction = self.extractor.extract(scope, messages, memories, now)
        result = self.writer.apply(conn, scope, extraction.ops, now=now,
                                   source=f"extract:{self.extractor.name}",
                                   handles=extraction.handles, pool=pool)
        through = messages[-1].id if messages else watermark
        store.set_watermark(conn, scope, through, now)
        return ChatExtraction(scope, len(messages), len(extraction.ops), result, through,
                              self.extractor.name, extraction.ops)

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
                    report.errors.append({"chat": str(claimed_scope), "error": str(exc),
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
