"""Extraction through the OpenAI Batch API: the real ``openai`` client over HTTP to the fake
server's files and batches endpoints, through ``nightly._batch`` and ``nightly._extract.batch``.

The fake answers a batch's lines from the same queue of scripted responses the synchronous
tests use, so the same answers can go through either path and the memories compared.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import openai
import pytest
from click.testing import CliRunner

from engrammar import Client, Database, LocalEmbedder, Op, Scope, Settings, store
from engrammar.cli import cli
from engrammar.nightly._batch import BatchExtraction
from engrammar.runtime._llm import LLM
from engrammar.scheduler import _extract as extract
from tests.conftest import T0
from tests.fake_openai import (
    BATCH_LINE,
    PATHS,
    FakeOpenAI,
    Scripted,
    completion,
    ops_reply,
    recording,
)
from tests.fake_openai import fake_openai as fake_openai  # the fixture

MODEL = "gpt-4o-mini"
A = Scope(user_id="u1", chat_id="a")
B = Scope(user_id="u1", chat_id="b")

DANA_1 = ["My name is Dana and I live in Berlin.", "Nice to meet you, Dana!",
          "I drink a cup of green tea every morning, I love it.",
          "I promised to call my mom on Friday."]
DANA_2 = ["Actually I moved to Munich last month.", "Still a cup of green tea every morning.",
          "I called mom yesterday, she says hi."]
# Long enough that, with a small context, chat b's extraction takes two chunks.
HIKING = ("I go hiking in the Alps every summer with my brother, we walk from hut to hut "
          "for two weeks and carry everything we need on our backs. ") * 6
CHESS = ("On Thursday evenings I play chess at the club near the station; I have played "
         "there for eleven years and I keep a notebook of every game. ") * 6


def night(n: int) -> datetime:
    return T0 + timedelta(days=n)


def op(kind: str, type_: str, content: str, evidence: list[int], **more: Any) -> dict[str, Any]:
    return {"op": kind, "type": type_, "content": content, "evidence": evidence,
            "confidence": 0.9, "salience": 0.7, **more}


@dataclass
class Rig:
    fake: FakeOpenAI
    client: Client

    @property
    def batches(self) -> BatchExtraction:
        return extract.batch_worker(self.client)

    def record(self, scope: Scope, texts: list[str], at: datetime) -> list[int]:
        return [self.client.record(scope.user_id, scope.chat_id, "user", t, at=at)
                for t in texts]

    def rows(self, table: str) -> list[dict[str, Any]]:
        """A table's rows in key order; ``chats`` without created_at (the wall clock)."""
        with self.client.db.connection() as conn, conn.cursor() as cur:
            cur.execute(f"SELECT * FROM {table} ORDER BY 1, 2, 3")
            names = [d.name for d in cur.description or ()]
            return [{n: str(v) if n == "embedding" else v for n, v in zip(names, r, strict=True)
                     if (table, n) != ("chats", "created_at")} for r in cur.fetchall()]

    def watermark(self, scope: Scope) -> int:
        with self.client.db.connection() as conn:
            found = store.lock_watermark(conn, scope)
        assert found is not None
        return found

    def states(self) -> list[tuple[str, int, str]]:
        return [(f"{r['user_id']}/{r['chat_id']}", r["chunk"], r["state"])
                for r in self.rows("llm_batch_requests")]


@pytest.fixture
def rig(fake_openai: FakeOpenAI, clean: Database, settings: Settings,
        embedder: LocalEmbedder) -> Iterator[Rig]:
    oa = openai.OpenAI(base_url=fake_openai.url, api_key="test", max_retries=0, timeout=5)
    llm = LLM(oa, MODEL, db=clean, max_retries=0)
    # A small context: chat b's long messages take two chunks, so two requests.
    cfg = settings.model_copy(update={"llm_context_tokens": 1})
    yield Rig(fake_openai, Client(clean, settings=cfg, embedder=embedder, llm=llm))
    oa.close()


def answers_night1() -> list[Scripted]:
    return [Scripted(body=recording("extract_dana_night1"))]


def answers_b(first: int) -> list[Scripted]:
    """Chat b's two chunks, citing its messages ``first`` and ``first + 1``."""
    return [ops_reply([op("add", "episodic", "The user hikes in the Alps every summer.",
                          [first])]),
            ops_reply([op("add", "preference", "The user plays chess on Thursdays.",
                          [first + 1])])]


def answers_night2() -> list[Scripted]:
    """Chat a's second night (updates through handles), then chat b's two chunks."""
    return [Scripted(body=recording("extract_dana_night2")), *answers_b(8)]


def play(rig: Rig, batch: bool) -> None:
    """Two nights of chats a and b, through the synchronous path or the batch path."""
    rig.record(A, DANA_1, T0)
    rig.fake.enqueue(*answers_night1())
    if batch:
        assert rig.batches.submit(night(1)).requests == 1
        rig.fake.settle_batch()
        assert rig.batches.collect(night(1)).applied == 4
    else:
        assert extract.run(rig.client, night(1)).applied == 4
    rig.record(A, DANA_2, night(3))
    rig.record(B, [HIKING, CHESS], night(3))
    rig.fake.enqueue(*answers_night2())
    if batch:
        submitted = rig.batches.submit(night(4))
        assert (submitted.chats, submitted.requests) == (2, 3)
        rig.fake.settle_batch()
        collected = rig.batches.collect(night(4))
        assert collected.errors == [] and collected.discarded == []
        assert (collected.chats, collected.applied) == (2, 5)
    else:
        report = extract.run(rig.client, night(4))
        assert report.errors == [] and report.applied == 5
    assert rig.fake.pending == 0


def test_batch_and_sync_give_identical_memories(rig: Rig) -> None:
    play(rig, batch=False)
    sync = {t: rig.rows(t) for t in ("memories", "memory_events", "memory_links", "chats")}
    sent_sync = [r.body for r in rig.fake.requests if r.path in PATHS]
    sync_calls = rig.rows("llm_calls")

    with rig.client.db.connection() as conn:
        store.erase_everything(conn)
    rig.fake.requests.clear()
    play(rig, batch=True)

    batched = {t: rig.rows(t) for t in sync}
    assert len(batched["memories"]) == 7
    for table, rows in sync.items():
        assert batched[table] == rows, table
    # The same requests went out, one line per chunk, and each answer was audited alike.
    sent_batch = [r.body for r in rig.fake.requests if r.path.startswith(BATCH_LINE)]
    assert len(sent_sync) == 4 and sent_batch == sent_sync
    keep = ("user_id", "chat_id", "purpose", "model", "request", "response", "error",
            "prompt_tokens", "completion_tokens")
    assert [{k: c[k] for k in keep} for c in rig.rows("llm_calls")] == \
        [{k: c[k] for k in keep} for c in sync_calls]
    assert [s[2] for s in rig.states()] == ["applied"] * 4
    line = json.loads(rig.fake.files["file-1"].data.decode().splitlines()[0])
    assert line["custom_id"] == "1:0:1-4:u1/a" and line["url"] == "/v1/chat/completions"
    assert rig.fake.batches["batch_1"].completion_window == "24h"


def test_collect_twice_is_a_no_op(rig: Rig) -> None:
    rig.record(A, DANA_1, T0)
    rig.fake.enqueue(*answers_night1())
    rig.batches.submit(night(1))
    # Not finished yet: nothing is applied and the batch stays pending.
    waiting = rig.batches.collect(night(1))
    assert (waiting.batches, waiting.in_flight, waiting.chats) == (1, 1, 0)
    # A chat with a request in flight is not submitted again.
    assert rig.batches.submit(night(1)).chats == 0
    rig.fake.settle_batch()
    assert rig.batches.collect(night(1)).applied == 4
    before = {t: rig.rows(t) for t in ("memories", "memory_events", "llm_calls", "chats")}

    again = rig.batches.collect(night(2))

    assert (again.batches, again.chats, again.applied) == (0, 0, 0)
    assert {t: rig.rows(t) for t in before} == before
    assert rig.watermark(A) == 4
    assert rig.batches.submit(night(2)).chats == 0


def test_a_chat_whose_watermark_moved_is_requeued_not_applied(rig: Rig) -> None:
    rig.record(A, DANA_1, T0)
    rig.batches.submit(night(1))
    # The synchronous path ran meanwhile and extracted the same messages.
    rig.fake.enqueue(*answers_night1())
    assert extract.run(rig.client, night(1)).applied == 4
    after_sync = rig.rows("memories")
    rig.fake.enqueue(*answers_night1())
    rig.fake.settle_batch()

    collected = rig.batches.collect(night(1))

    assert collected.applied == 0 and collected.chats == 0
    assert collected.discarded == [{"chat": "u1/a", "user_id": "u1", "chat_id": "a",
                                    "reason": "the watermark moved from 0 to 4"}]
    assert rig.rows("memories") == after_sync
    assert rig.states() == [("u1/a", 0, "discarded")]
    # New messages: the chat is submitted again from its new watermark.
    rig.record(A, DANA_2, night(3))
    assert rig.batches.submit(night(4)).messages == 3


def test_a_chat_whose_memories_changed_is_discarded_and_pending_again(rig: Rig) -> None:
    rig.record(A, DANA_1, T0)
    rig.batches.submit(night(1))
    rig.client.apply("u1", "a", [Op(op="add", type="profile", content="Dana is a nurse.")],
                     now=night(1))
    rig.fake.enqueue(*answers_night1())
    rig.fake.settle_batch()

    collected = rig.batches.collect(night(1))

    assert collected.applied == 0
    assert collected.discarded == [{
        "chat": "u1/a", "user_id": "u1", "chat_id": "a",
        "reason": "the chat's messages or memories changed since the submit"}]
    assert [m.content for m in rig.client.memories("u1", "a")] == ["Dana is a nurse."]
    assert rig.watermark(A) == 0
    again = rig.batches.submit(night(2))
    assert (again.chats, again.messages) == (1, 4)


def test_expired_and_failed_batches_requeue(rig: Rig) -> None:
    rig.record(A, DANA_1, T0)
    rig.record(B, [HIKING, CHESS], T0)
    assert rig.batches.submit(night(1)).requests == 3
    # The window ran out after chat a's answer: a is applied, b (no answers) requeued.
    rig.fake.enqueue(*answers_night1())
    rig.fake.settle_batch("expired", answer=1)

    expired = rig.batches.collect(night(2))

    assert (expired.chats, expired.applied, expired.requeued) == (1, 4, [B])
    assert rig.states() == [("u1/a", 0, "applied"), ("u1/b", 0, "expired"),
                            ("u1/b", 1, "expired")]
    assert rig.watermark(B) == 0
    # The next night submits b again; that batch fails whole, and b is extracted at once.
    resubmitted = rig.batches.submit(night(2))
    assert (resubmitted.chats, resubmitted.requests) == (1, 2)
    rig.fake.settle_batch("failed")
    rig.fake.enqueue(*answers_b(5))

    run = extract.batch(rig.client, night(3), collect=True, sync_failed=True)

    assert run.collected is not None and run.collected.requeued == [B]
    assert run.synced is not None and run.synced.applied == 2
    assert rig.watermark(B) == 6
    assert run.to_json()["applied"] == 2
    assert [m.content for m in rig.client.memories("u1", "b")] == [
        "The user hikes in the Alps every summer.", "The user plays chess on Thursdays."]


def test_a_malformed_line_reports_its_chat_and_the_others_apply(rig: Rig) -> None:
    rig.record(A, DANA_1, T0)
    rig.record(B, [HIKING, CHESS], T0)
    rig.batches.submit(night(1))
    rig.fake.enqueue(Scripted(body=completion("this is not JSON")), *answers_b(5))
    rig.fake.settle_batch()

    collected = rig.batches.collect(night(1))

    [error] = collected.errors
    assert error["chat"] == "u1/a" and error["kind"] == "MalformedOutput"
    assert "answer is not JSON" in error["error"]
    assert collected.applied == 2 and rig.watermark(B) == 6
    assert rig.watermark(A) == 0 and rig.client.memories("u1", "a") == []
    # Every answer's tokens are in the audit, the malformed one with its error.
    calls = rig.rows("llm_calls")
    assert [(c["chat_id"], c["prompt_tokens"], c["error"] is None) for c in calls] == [
        ("a", 100, False), ("b", 100, True), ("b", 100, True)]
    # Nothing lost: chat a is submitted again.
    assert rig.batches.submit(night(2)).chats == 1


def test_a_line_that_failed_requeues_its_chat(rig: Rig) -> None:
    rig.record(A, DANA_1, T0)
    rig.record(B, [HIKING, CHESS], T0)
    rig.batches.submit(night(1))
    rig.fake.enqueue(*answers_night1(), *answers_b(5)[1:])
    rig.fake.settle_batch(line_errors={1: {"code": "server_error", "message": "boom"}})

    collected = rig.batches.collect(night(1))

    assert collected.requeued == [B] and collected.applied == 4
    assert rig.states() == [("u1/a", 0, "applied"), ("u1/b", 0, "failed"),
                            ("u1/b", 1, "failed")]


def test_a_failed_upload_leaves_the_chats_pending(rig: Rig) -> None:
    rig.record(A, DANA_1, T0)
    rig.fake.api_failures["files"] = deque([Scripted(
        status=400, body={"error": {"message": "bad file", "type": "invalid_request_error",
                                    "param": None, "code": None}})])

    failed = rig.batches.submit(night(1))

    assert failed.chats == 1 and "submit failed" in failed.errors[0]["error"]
    assert rig.states() == [("u1/a", 0, "failed")]
    assert rig.batches.collect(night(1)).batches == 0
    assert rig.batches.submit(night(1)).chats == 1


def test_a_chat_another_worker_holds_is_not_submitted(rig: Rig) -> None:
    rig.record(A, DANA_1, T0)
    rig.record(B, [HIKING, CHESS], T0)
    with rig.client.db.connection() as other, other.transaction():
        held = store.claim_chat_to_submit(other, night(1))
        assert held is not None and held[0] == A
        # While another worker holds chat a, this one submits b only.
        report = rig.batches.submit(night(1))
    assert (report.chats, report.requests) == (1, 2)
    assert {s[0] for s in rig.states()} == {"u1/b"}
    # Once a's claim is released, the next submit takes a, and b (in flight) is not taken.
    again = rig.batches.submit(night(1))
    assert (again.chats, again.messages) == (1, 4)
    assert rig.states()[0][0] == "u1/a"


def test_cli_batch_submit_collect_and_status(rig: Rig, monkeypatch: pytest.MonkeyPatch,
                                             database_url: str) -> None:
    monkeypatch.setenv("MEMORY_DATABASE_URL", database_url)
    monkeypatch.setenv("MEMORY_LLM", "openai")
    monkeypatch.setenv("MEMORY_LLM_BASE_URL", rig.fake.url)
    monkeypatch.setenv("MEMORY_LLM_MODEL", MODEL)
    rig.record(A, DANA_1, T0)
    runner = CliRunner()
    now = ["--now", night(1).isoformat()]

    out = runner.invoke(cli, ["jobs", "run", "extract", "--batch", "submit", "--json", *now])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["submitted"]["batch_id"] == "batch_1"
    status = runner.invoke(cli, ["jobs", "status", "--json",
                                 "--now", (night(1) + timedelta(hours=3)).isoformat()])
    assert status.exit_code == 0, status.output
    [row] = json.loads(status.output)
    assert (row["batch_id"], row["status"], row["requests"], row["age_hours"]) == (
        "batch_1", "in_progress", 1, 3.0)
    assert "batch_1" in runner.invoke(cli, ["jobs", "status"]).output

    rig.fake.enqueue(*answers_night1())
    rig.fake.settle_batch()
    monkeypatch.setenv("MEMORY_LLM_BATCH", "1")  # the plain job: collect, then submit
    done = runner.invoke(cli, ["jobs", "run", "extract", *now])
    assert done.exit_code == 0, done.output
    assert "4 applied" in done.output and "nothing to submit" in done.output
    assert json.loads(runner.invoke(cli, ["jobs", "status", "--json"]).output) == []
    bad = runner.invoke(cli, ["jobs", "run", "lifecycle", "--batch", "collect"])
    assert bad.exit_code == 2
