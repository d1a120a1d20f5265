"""Extraction through the OpenAI Batch API: submit tonight, collect within the day, at half
the price of the synchronous calls.

``submit`` claims each chat with messages past its watermark (``FOR UPDATE SKIP LOCKED``,
and none with a request in flight), builds the requests the synchronous ``LLMExtractor``
would send (``LLMExtractor.plan``, ``LLM.structured_request``), records them, uploads them
as one JSONL file and creates the batch. ``collect`` reads each finished batch's results
as the synchronous path reads an answer (``LLM.structured_answer``, ``LLMExtractor.ops``)
and applies them through the same writer, one transaction a chat, advancing the watermark.

A chat is applied only if the prompt it would get now is the prompt it was sent: the same
watermark, messages and listed memories. Otherwise its answer is discarded and the chat
stays pending for the next run; so nothing is applied twice. Failed, expired and malformed
requests leave their chats pending too, reported with their ids.
"""

from __future__ import annotations

import io
import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final

import openai

from engrammar import store
from engrammar.errors import Error, chat_fault
from engrammar.extract._extractor import Extraction, LLMExtractor
from engrammar.extract._prompts import ExtractionResponse
from engrammar.models import Memory, Message, Op, Scope
from engrammar.nightly._chat import extract_chat, read_new
from engrammar.runtime._database import Database
from engrammar.runtime._llm import LLM
from engrammar.write._writer import Writer

ENDPOINT: Final = "/v1/chat/completions"
# The provider's statuses after which a batch's results are all there is.
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
# A batch still 'preparing' this long after its submit started lost its submitter.
ABANDONED = timedelta(hours=1)


@dataclass
class SubmitReport:
    now: datetime
    batch: int | None = None
    batch_id: str | None = None
    chats: int = 0
    requests: int = 0
    messages: int = 0
    errors: list[dict[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"job": "extract-submit", "now": self.now.isoformat(), "batch": self.batch,
                "batch_id": self.batch_id, "chats": self.chats, "requests": self.requests,
                "messages": self.messages, "errors": self.errors}


@dataclass
class CollectReport:
    now: datetime
    batches: int = 0                     # batches looked at
    in_flight: int = 0                   # of them, not finished yet
    chats: int = 0                       # chats applied
    messages: int = 0
    proposed: int = 0
    applied: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    discarded: list[dict[str, str]] = field(default_factory=list)
    requeued: list[Scope] = field(default_factory=list)   # failed or expired: pending again
    errors: list[dict[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"job": "extract-collect", "now": self.now.isoformat(),
                "batches": self.batches, "in_flight": self.in_flight, "chats": self.chats,
                "messages": self.messages, "proposed": self.proposed, "applied": self.applied,
                "rejected": dict(sorted(self.rejected.items())), "discarded": self.discarded,
                "requeued": [s.report_entry() for s in self.requeued], "errors": self.errors}


class BatchExtraction:
    """Submits chats' extraction requests as provider batches and applies their results."""

    def __init__(self, db: Database, llm: LLM, extractor: LLMExtractor, writer: Writer) -> None:
        self.db = db
        self.llm = llm
        self.extractor = extractor
        self.writer = writer

    # -- submit -------------------------------------------------------------------------------

    def submit(self, now: datetime) -> SubmitReport:
        report = SubmitReport(now=now)
        lines: list[dict[str, Any]] = []
        seen: list[Scope] = []
        while True:
            with self.db.connection() as conn, conn.transaction():
                claimed = store.claim_chat_to_submit(conn, now, skip=seen)
                if claimed is None:
                    break
                scope, watermark = claimed
                seen.append(scope)
                messages = read_new(conn, scope, watermark, now)
                if not messages:
                    continue
                if report.batch is None:
                    report.batch = store.insert_batch(conn, self.llm.model, now)
                memories = [c.memory for c in self.writer.load_pool(conn, scope)]
                requests = self._requests(report.batch, scope, watermark, messages, memories,
                                          now)
                store.insert_batch_requests(conn, requests)
            for request in requests:
                lines.append({"custom_id": request.custom_id, "method": "POST",
                              "url": ENDPOINT, "body": self.llm.structured_request(
                                  request.messages, ExtractionResponse)})
            report.chats += 1
            report.requests += len(requests)
            report.messages += len(messages)
        if report.batch is not None:
            self._create(report, lines, now)
        return report

    def _requests(self, batch: int, scope: Scope, watermark: int, messages: list[Message],
                  memories: list[Memory], now: datetime) -> list[store.BatchRequest]:
        """One request per chunk, as ``LLMExtractor.extract`` would ask it."""
        plan = self.extractor.plan(messages, memories, now)
        through = messages[-1].id
        return [store.BatchRequest(
            scope=scope, batch=batch, chunk=i, chunks=len(plan.chunks),
            custom_id=f"{batch}:{i}:{chunk[0].id}-{chunk[-1].id}:{scope}",
            watermark=watermark, first_message_id=chunk[0].id, last_message_id=chunk[-1].id,
            through=through, handles=plan.handles, messages=prompt)
            for i, (chunk, prompt) in enumerate(zip(plan.chunks, plan.prompts, strict=True))]

    def _create(self, report: SubmitReport, lines: list[dict[str, Any]], now: datetime) -> None:
        assert report.batch is not None
        data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
        try:
            uploaded = self.llm.client.files.create(
                file=(f"memory-extract-{report.batch}.jsonl", io.BytesIO(data.encode())),
                purpose="batch")
            created = self.llm.client.batches.create(
                input_file_id=uploaded.id, endpoint=ENDPOINT, completion_window="24h",
                metadata={"memory_batch": str(report.batch)})
        except openai.OpenAIError as exc:
            # Nothing went out: the chats are pending again for the next submit.
            error = f"{type(exc).__name__}: {exc}"
            with self.db.connection() as conn, conn.transaction():
                store.set_batch(conn, report.batch, status="failed", error=error,
                                collected_at=now)
                for request in store.batch_requests(conn, report.batch, "pending"):
                    store.set_request_state(conn, request.scope, report.batch, "failed", error)
            report.errors.append({"chat": "-", "error": f"submit failed: {error}",
                                  "kind": type(exc).__name__})
            return
        report.batch_id = created.id
        with self.db.connection() as conn:
            store.set_batch(conn, report.batch, batch_id=created.id, input_file_id=uploaded.id,
                            status=created.status)

    # -- collect ------------------------------------------------------------------------------

    def collect(self, now: datetime) -> CollectReport:
        report = CollectReport(now=now)
        with self.db.connection() as conn:
            batches = store.pending_batches(conn)
        for batch in batches:
            report.batches += 1
            if batch.batch_id is None:
                if now - batch.now_at >= ABANDONED:
                    self._close(batch, "failed", now, report, "the submit never created it")
                else:
                    report.in_flight += 1
                continue
            remote = self.llm.client.batches.retrieve(batch.batch_id)
            if remote.status not in TERMINAL:
                with self.db.connection() as conn:
                    store.set_batch(conn, batch.id, status=remote.status)
                report.in_flight += 1
                continue
            results = {**self._results(remote.error_file_id),
                       **self._results(remote.output_file_id)}
            with self.db.connection() as conn:
                requests = store.batch_requests(conn, batch.id, "pending")
            by_chat: dict[Scope, list[store.BatchRequest]] = {}
            for request in requests:
                by_chat.setdefault(request.scope, []).append(request)
            missing = "expired" if remote.status == "expired" else "failed"
            for scope, chunks in by_chat.items():
                self._chat(batch, scope, chunks, results, missing, now, report)
            errors = getattr(remote, "errors", None)
            with self.db.connection() as conn:
                store.set_batch(conn, batch.id, status=remote.status, collected_at=now,
                                output_file_id=remote.output_file_id,
                                error_file_id=remote.error_file_id,
                                error=json.dumps(errors.model_dump()) if errors else None)
        return report

    def _results(self, file_id: str | None) -> dict[str, dict[str, Any]]:
        """A result file's lines by custom_id; a line that is not JSON is left out (its
        request then counts as having no result)."""
        if not file_id:
            return {}
        out: dict[str, dict[str, Any]] = {}
        for raw in self.llm.client.files.content(file_id).text.splitlines():
            try:
                line = json.loads(raw)
            except json.JSONDecodeError:
                continue
            if isinstance(line, dict) and isinstance(line.get("custom_id"), str):
                out[line["custom_id"]] = line
        return out

    def _chat(self, batch: store.Batch, scope: Scope, chunks: list[store.BatchRequest],
              results: dict[str, dict[str, Any]], missing: str, now: datetime,
              report: CollectReport) -> None:
        """Apply one chat's answers if every chunk has one and the chat has not moved on."""
        answers: list[ExtractionResponse] = []
        problem: tuple[str, str, str] | None = None  # state, error, kind
        for request in chunks:
            line = results.get(request.custom_id)
            failure = _failure(line)
            if failure is not None:
                problem = problem or (missing if line is None else "failed", failure,
                                      "BatchRequestFailed")
                continue
            assert line is not None
            try:  # audited (tokens into llm_calls) whatever becomes of the chat
                answers.append(self.llm.structured_answer(
                    "extract", request.messages, line["response"]["body"],
                    ExtractionResponse, scope))
            except Error as exc:
                problem = problem or ("malformed", str(exc), type(exc).__name__)
        if problem is not None:
            state, error, kind = problem
            self._settle(scope, batch.id, state, error)
            if state == "malformed":
                report.errors.append({**scope.report_entry(), "error": error, "kind": kind})
            else:
                report.requeued.append(scope)
            return
        try:
            with self.db.connection() as conn, conn.transaction():
                reason = self._apply(conn, batch, scope, chunks, answers, now, report)
                if reason:
                    report.discarded.append({**scope.report_entry(), "reason": reason})
                store.set_request_state(conn, scope, batch.id,
                                        "discarded" if reason else "applied", reason)
        except Exception as exc:
            if not chat_fault(exc):
                raise
            self._settle(scope, batch.id, "malformed", str(exc))
            report.errors.append({**scope.report_entry(), "error": str(exc),
                                  "kind": type(exc).__name__})

    def _apply(self, conn: store.Conn, batch: store.Batch, scope: Scope,
               chunks: list[store.BatchRequest], answers: list[ExtractionResponse],
               now: datetime, report: CollectReport) -> str | None:
        """Apply inside the caller's transaction; or the reason the answers no longer fit."""
        first = chunks[0]
        watermark = store.lock_watermark(conn, scope)
        if watermark is None:
            return "the chat is gone"
        if watermark != first.watermark:
            return f"the watermark moved from {first.watermark} to {watermark}"

        def propose(messages: list[Message], memories: list[Memory]) -> Extraction | str:
            plan = self.extractor.plan(messages, memories, batch.now_at)
            if not messages or messages[-1].id != first.through \
                    or plan.prompts != [c.messages for c in chunks]:
                return "the chat's messages or memories changed since the submit"
            ops: list[Op] = []
            for answer in answers:
                ops.extend(self.extractor.ops(scope, answer, messages))
            return Extraction(ops=ops, handles=plan.handles)

        outcome = extract_chat(conn, scope, watermark, self.writer, propose, now=now,
                               source=f"extract:{self.extractor.name}",
                               read_at=batch.now_at, through=first.through)
        if isinstance(outcome, str):
            return outcome
        report.chats += 1
        report.messages += outcome.messages
        report.proposed += outcome.proposed
        report.applied += outcome.result.applied
        report.rejected.update(outcome.result.rejected)
        return None

    def _settle(self, scope: Scope, batch: int, state: str, error: str) -> None:
        with self.db.connection() as conn:
            store.set_request_state(conn, scope, batch, state, error)

    def _close(self, batch: store.Batch, status: str, now: datetime, report: CollectReport,
               error: str) -> None:
        """Give up a batch: its pending chats are pending again."""
        with self.db.connection() as conn, conn.transaction():
            for request in store.batch_requests(conn, batch.id, "pending"):
                store.set_request_state(conn, request.scope, batch.id, status, error)
                if request.scope not in report.requeued:
                    report.requeued.append(request.scope)
            store.set_batch(conn, batch.id, status=status, error=error, collected_at=now)


def _failure(line: dict[str, Any] | None) -> str | None:
    """Why a result line carries no answer, or None if it does."""
    if line is None:
        return "no result for this request"
    if line.get("error"):
        return f"error: {json.dumps(line['error'])}"
    response = line.get("response")
    if not isinstance(response, dict):
        return "the result has no response"
    if response.get("status_code") != 200:
        return f"HTTP {response.get('status_code')}: {json.dumps(response.get('body'))[:300]}"
    return None


def pending(db: Database, now: datetime) -> list[dict[str, Any]]:
    """The batches not collected yet: ids, status, requests by state, age in hours."""
    with db.connection() as conn:
        batches = store.pending_batches(conn)
        counts = {b.id: store.batch_counts(conn, b.id) for b in batches}
    return [{"id": b.id, "batch_id": b.batch_id, "status": b.status, "model": b.model,
             "requests": sum(counts[b.id].values()),
             "states": counts[b.id], "submitted": b.now_at.isoformat(),
             "age_hours": round((now - b.now_at).total_seconds() / 3600, 2)}
            for b in batches]
