"""The LLM path of extraction, end to end: the real ``openai`` client over HTTP to a local
fake OpenAI-compatible server replaying recorded responses (nothing is patched), through
``LLM``, ``LLMExtractor``, the gate and the writer, driven by ``nightly._extract.run``.

Chats are claimed in ``ORDER BY user_id, chat_id``, so each test queues the server's
responses in that order. Message ids are deterministic (the ``clean`` fixture restarts the
identities), and the recordings cite them as evidence: ``record`` checks they match.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import openai
import pytest

from engrammar import Client, Database, LocalEmbedder, Op, Scope, Settings, store
from engrammar.extract._extractor import LLMExtractor
from engrammar.extract._prompts import EXTRACTION_RULES, ExtractedOp
from engrammar.models import Memory, MemoryType, OpKind, Status
from engrammar.runtime._llm import LLM
from engrammar.scheduler import _extract as extract
from tests.conftest import T0
from tests.fake_openai import FakeOpenAI, Scripted, completion, ops_reply, recording
from tests.fake_openai import fake_openai as fake_openai  # the fixture

MODEL = "gpt-4o-mini"
A = Scope(user_id="u1", chat_id="a")
B = Scope(user_id="u1", chat_id="b")
C = Scope(user_id="u2", chat_id="a")


@dataclass
class Rig:
    fake: FakeOpenAI
    llm: LLM
    client: Client
    sleeps: list[float] = field(default_factory=list)

    def record(self, scope: Scope, texts: list[str], at: datetime = T0,
               expect_ids: list[int] | None = None) -> list[int]:
        ids = [self.client.record(scope.user_id, scope.chat_id, "user", t, at=at)
               for t in texts]
        if expect_ids is not None:
            assert ids == expect_ids, "the recordings cite these message ids as evidence"
        return ids

    def memories(self, scope: Scope, *statuses: Status) -> list[Memory]:
        wanted = [s.value for s in statuses] if statuses else None
        return self.client.memories(scope.user_id, scope.chat_id, wanted)

    def calls(self, scope: Scope | None = None) -> list[dict[str, Any]]:
        with self.client.db.connection() as conn:
            return store.list_llm_calls(conn, scope)

    def watermark(self, scope: Scope) -> int:
        with self.client.db.connection() as conn:
            row = conn.execute("SELECT extracted_through FROM chats WHERE user_id = %s"
                               " AND chat_id = %s", (scope.user_id, scope.chat_id)).fetchone()
        assert row is not None
        return int(row[0])


RigFactory = Callable[..., Rig]


@pytest.fixture
def make_rig(fake_openai: FakeOpenAI, clean: Database, settings: Settings,
             embedder: LocalEmbedder) -> Iterator[RigFactory]:
    """Builds the real client stack against the fake server; options per test."""
    opened: list[openai.OpenAI] = []

    def make(*, timeout: float = 5.0, max_retries: int = 1, backoff: float = 0.001,
             real_sleep: bool = True, settings_update: dict[str, Any] | None = None) -> Rig:
        sleeps: list[float] = []

        def sleep(seconds: float) -> None:
            sleeps.append(seconds)
            if real_sleep:
                time.sleep(seconds)

        oa = openai.OpenAI(base_url=fake_openai.url, api_key="test", max_retries=0,
                           timeout=timeout)
        opened.append(oa)
        llm = LLM(oa, MODEL, db=clean, max_retries=max_retries, backoff=backoff, sleep=sleep)
        cfg = settings.model_copy(update=settings_update or {})
        client = Client(clean, settings=cfg, embedder=embedder, llm=llm)
        assert isinstance(client.extractor, LLMExtractor)
        return Rig(fake_openai, llm, client, sleeps)

    yield make
    for oa in opened:
        oa.close()


@pytest.fixture
def rig(make_rig: RigFactory) -> Rig:
    return make_rig()


def night(n: int) -> datetime:
    return T0 + timedelta(days=n)


# -- normal operation -------------------------------------------------------------------------

def test_two_nights_add_then_update_reinforce_close_loop(rig: Rig) -> None:
    rig.record(A, ["My name is Dana and I live in Berlin.",
                   "Nice to meet you, Dana!",
                   "I drink a cup of green tea every morning, I love it.",
                   "I promised to call my mom on Friday."], expect_ids=[1, 2, 3, 4])
    rig.fake.enqueue(Scripted(body=recording("extract_dana_night1")))

    first = extract.run(rig.client, now=night(1))

    assert first.errors == [] and first.chats == 1 and first.messages == 4
    assert first.proposed == 4 and first.applied == 4 and not first.rejected
    assert [d.code for d in first.details[0].result.decisions] == ["ok"] * 4
    # What was sent: the rules, the chat's messages, and a JSON schema to answer in.
    [sent] = rig.fake.requests
    assert sent.path == "/v1/chat/completions"
    assert sent.body["model"] == MODEL and sent.body["temperature"] == 0
    fmt = sent.body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "ExtractionResponse"
    assert "ops" in fmt["json_schema"]["schema"]["properties"]
    assert sent.content("system") == EXTRACTION_RULES
    user = sent.content("user")
    assert "Now: 2026-11-03T09:00+00:00" in user
    assert "Existing memories:\n(none yet)" in user
    assert "#1 2026-11-02T09:00+00:00 user: My name is Dana and I live in Berlin." in user
    assert "#4 2026-11-02T09:00+00:00 user: I promised to call my mom on Friday." in user

    name, home, tea, loop = rig.memories(A)
    assert (name.type.value, name.slot, name.content) == ("profile", "name",
                                                          "The user's name is Dana.")
    assert (home.content, home.source_message_ids) == ("Dana lives in Berlin.", [1])
    assert (tea.type.value, tea.surface.value) == ("preference", "adapt")
    assert (loop.type.value, loop.surface.value) == ("open_loop", "continue")
    # "2026-11-06" from the model is a UTC date, whatever the database's time zone.
    assert loop.due_at == datetime(2026, 11, 6, tzinfo=UTC)
    assert all(m.metadata["source"] == f"extract:llm:{MODEL}" for m in (name, home, tea, loop))
    assert rig.watermark(A) == 4

    # Night two: the model sees the memories under handles and targets them.
    rig.record(A, ["Actually I moved to Munich last month.",
                   "Still a cup of green tea every morning.",
                   "I called mom yesterday, she says hi."], at=night(3), expect_ids=[5, 6, 7])
    rig.fake.enqueue(Scripted(body=recording("extract_dana_night2")))

    second = extract.run(rig.client, now=night(4))

    assert second.errors == [] and second.messages == 3 and second.applied == 3
    user = rig.fake.requests[1].content("user")
    assert ("Existing memories:\n"
            "m1 [profile] The user's name is Dana.\n"
            "m2 [profile] Dana lives in Berlin.\n"
            "m3 [preference] Dana loves a cup of green tea every morning.\n"
            "m4 [open_loop, open loop, due 2026-11-06] Dana promised to call her mom on Friday."
            "\n\nNew messages:\n#5 ") in user
    assert "#1 " not in user and "#4 " not in user  # past the watermark: not sent again
    assert [d.target_id for d in second.details[0].result.decisions] == [home.id, tea.id,
                                                                          loop.id]

    munich = next(m for m in rig.memories(A) if m.content == "Dana lives in Munich.")
    old_home = rig.client.get("u1", "a", home.id)
    assert old_home.status is Status.archived and old_home.superseded_by == munich.id
    assert munich.status is Status.active and munich.slot == "home"
    assert munich.source_message_ids == [5]
    tea2 = rig.client.get("u1", "a", tea.id)
    assert tea2.status is Status.active and tea2.reinforce_count == 1
    assert tea2.source_message_ids == [3, 6] and tea2.last_reinforced_at == night(4)
    loop2 = rig.client.get("u1", "a", loop.id)
    assert loop2.status is Status.archived
    assert loop2.metadata["closed_reason"] == "close_loop"
    assert loop2.metadata["resolution"] == "Dana called her mom."
    assert {m.id for m in rig.memories(A, Status.active)} == {name.id, tea.id, munich.id}
    with rig.client.db.connection() as conn:
        assert (munich.id, home.id, "supersedes") in store.list_links(conn, A)
        events = [(e.op, e.memory_id) for e in store.list_events(conn, A)]
    assert events[4:] == [("update", munich.id), ("superseded", home.id),
                          ("reinforce", tea.id), ("close_loop", loop.id)]
    assert rig.watermark(A) == 7

    # Audited: one row per call, with the request as sent and the answer as received.
    calls = rig.calls(A)
    assert [(c["purpose"], c["model"], c["error"]) for c in calls] == [("extract", MODEL,
                                                                        None)] * 2
    assert calls[0]["request"]["messages"] == rig.fake.requests[0].messages
    night2 = recording("extract_dana_night2")
    assert calls[1]["response"] == night2["choices"][0]["message"]["content"]
    assert (calls[1]["prompt_tokens"], calls[1]["completion_tokens"]) == (1302, 187)

    # Nothing new: no chat is claimed and the model is not called.
    third = extract.run(rig.client, now=night(5))
    assert third.chats == 0 and len(rig.fake.requests) == 2


def test_an_unknown_handle_is_decided_against_the_pool(rig: Rig) -> None:
    seed = Op(op=OpKind.add, type=MemoryType.profile, content="Dana lives in Berlin.",
              slot="home")
    rig.client.apply("u1", "a", [seed], now=T0)
    [seeded] = rig.memories(A)
    rig.record(A, ["Oh and I moved to Hamburg.", "Also I bought a red bike last week."],
               expect_ids=[1, 2])
    rig.fake.enqueue(Scripted(body=recording("extract_unknown_handle")))

    report = extract.run(rig.client, now=night(1))

    assert "m1 [profile] Dana lives in Berlin." in rig.fake.requests[0].content("user")
    assert report.errors == [] and report.applied == 2 and not report.rejected
    moved, added = report.details[0].result.decisions
    # The model named m99, which lists nothing; the move is about the home it knows of.
    assert (moved.accepted, moved.code, moved.target_id) == (True, "found_target", seeded.id)
    assert "m99" in moved.reason
    assert added.accepted and added.code == "ok"
    assert rig.client.get("u1", "a", seeded.id).status is Status.archived
    assert [m.content for m in rig.memories(A, Status.active)] == [
        "Dana lives in Hamburg now.", "Dana bought a red bike last week."]
    update = next(e for e in rig.client.history("u1", "a") if e.op == "update")
    assert update.reason is not None and "m99" in update.reason
    assert update.source == f"extract:llm:{MODEL}" and update.source_message_ids == [1]
    assert rig.watermark(A) == 2


def test_the_model_proposes_statements_and_the_gate_decides_the_ops(rig: Rig) -> None:
    rig.client.apply("u1", "a", [
        Op(op=OpKind.add, type=MemoryType.open_loop, content="Dana plans to renew her passport."),
        Op(op=OpKind.add, type=MemoryType.profile, content="Dana has two kids."),
    ], now=T0)
    passport, kids = rig.memories(A)
    rig.record(A, ["Renewed my passport today!", "Sorted the bank thing too.",
                   "Oh and it's three kids, not two."], expect_ids=[1, 2, 3])
    rig.fake.enqueue(ops_reply([
        # A report: the gate finds the loop it settles.
        {"op": "add", "type": "episodic", "tense": "past",
         "content": "Dana renewed her passport.", "evidence": [1]},
        # A resolution of a loop nobody listed: kept as the event it is.
        {"op": "close_loop", "target": "m1", "content": "Dana sorted out the bank issue.",
         "evidence": [2]},
        # A correction with no handle: the gate finds the count it corrects.
        {"op": "update", "type": "profile", "content": "Dana has three kids.",
         "evidence": [3]},
    ]))

    report = extract.run(rig.client, now=night(1))

    sent = rig.fake.requests[0]
    assert "tense" in sent.body["response_format"]["json_schema"]["schema"]["$defs"][
        "ExtractedOp"]["properties"]
    assert "decided by what it says, never dropped" in sent.content("system")
    assert report.errors == [] and report.applied == 3 and not report.rejected
    assert [(d.code, d.target_id) for d in report.details[0].result.decisions] == [
        ("closes_loop", passport.id), ("redecided", None), ("found_target", kids.id)]
    assert rig.client.get("u1", "a", passport.id).status is Status.archived
    assert rig.client.get("u1", "a", kids.id).status is Status.archived
    assert sorted((m.type.value, m.content) for m in rig.memories(A, Status.active)) == [
        ("episodic", "Dana sorted out the bank issue."), ("profile", "Dana has three kids.")]


def test_bare_number_from_the_model_is_not_taken_as_a_memory_id(rig: Rig) -> None:
    rig.client.apply("u1", "a", [
        Op(op=OpKind.add, type=MemoryType.profile, content="Dana works as a nurse.", slot="job"),
        Op(op=OpKind.add, type=MemoryType.preference,
           content="Dana likes long walks by the river."),
        Op(op=OpKind.add, type=MemoryType.shared_lore, content="Dana calls her bike Rocket."),
    ], now=T0)
    first, second, third = rig.memories(A)
    rig.client.apply("u1", "a", [Op(op=OpKind.forget, target=str(first.id))], now=T0)
    # Live now: m1 = second (id 2), m2 = third (id 3). The model means m2 but writes "2".
    rig.record(A, ["I renamed my bike Comet."])
    rig.fake.enqueue(ops_reply([{"op": "update", "type": "shared_lore", "target": "2",
                                 "content": "Dana calls her bike Comet.", "evidence": [1]}]))

    report = extract.run(rig.client, now=night(1))

    assert "m2 [shared_lore] Dana calls her bike Rocket." in rig.fake.requests[0].content("user")
    # "2" is no handle, and memory 2 (the walks) is untouched; the rename is decided against
    # the pool, where it is about the bike.
    assert not report.rejected
    [decision] = report.details[0].result.decisions
    assert decision.code == "found_target" and decision.target_id == third.id
    assert rig.client.get("u1", "a", second.id).status is Status.active
    assert rig.client.get("u1", "a", third.id).status is Status.archived
    assert sorted(m.content for m in rig.memories(A, Status.active)) == [
        "Dana calls her bike Comet.", "Dana likes long walks by the river."]


def test_evidence_the_model_invents_is_dropped(rig: Rig) -> None:
    rig.record(A, ["Booked the train to Vienna.", "I always take a window seat on trains."],
               expect_ids=[1, 2])
    rig.record(B, ["Message in another chat."], expect_ids=[3])
    # Chat a's answer cites 2 (its own), 3 (chat b's) and 999 (no such message).
    rig.fake.enqueue(Scripted(body=recording("extract_invented_evidence")),
                     ops_reply([{"op": "add", "type": "episodic", "content":
                                 "Dana wrote a message in another chat.", "evidence": [3, 1]}]))

    report = extract.run(rig.client, now=night(1))

    assert report.errors == [] and report.applied == 2
    assert report.details[0].ops[0].evidence == [2]
    [seat] = rig.memories(A)
    assert seat.source_message_ids == [2]
    [added] = rig.client.history("u1", "a")
    assert added.op == "add" and added.source_message_ids == [2]
    [other] = rig.memories(B)
    assert other.source_message_ids == [3]


def test_a_model_date_without_zone_is_utc() -> None:
    op = ExtractedOp.model_validate({"op": "add", "due": "2026-11-06"})
    assert op.due == datetime(2026, 11, 6, tzinfo=UTC)
    aware = ExtractedOp.model_validate({"op": "add", "due": "2026-11-06T18:00:00+02:00"})
    assert aware.due is not None and aware.due.utcoffset() == timedelta(hours=2)


# -- failures: the chat is untouched, the others proceed ----------------------------------------

def answer(name: str) -> str | None:
    """The message content of a recorded completion."""
    content: str | None = recording(name)["choices"][0]["message"]["content"]
    return content


@dataclass
class Failure:
    responses: list[Scripted]  # what the server answers the failing chat, attempt by attempt
    kind: str  # the exception the report names
    errors: list[str]  # in the audit row of each attempt
    response: str | None = None  # the answer the first audit row keeps


HTML = "<html><body>502 Bad Gateway</body></html>"
FAILURES: dict[str, Failure] = {
    "malformed_json": Failure([Scripted(body=recording("extract_malformed_json"))],
                              "MalformedOutput", ["answer is not JSON"],
                              answer("extract_malformed_json")),
    "unknown_op": Failure([Scripted(body=recording("extract_schema_unknown_op"))],
                          "MalformedOutput", ["ops.0.op"], answer("extract_schema_unknown_op")),
    "confidence_7": Failure([Scripted(body=recording("extract_schema_confidence"))],
                            "MalformedOutput", ["ops.0.confidence"],
                            answer("extract_schema_confidence")),
    "refusal": Failure([Scripted(body=recording("extract_refusal"))],
                       "Refusal", ["I'm sorry, but I can't help with that request."]),
    "html_body": Failure([Scripted(body=HTML, content_type="text/html")],
                         "MalformedOutput", ["response is not a chat completion"], HTML),
    "truncated_body": Failure([Scripted(body='{"id": "chatcmpl-x", "choi')],
                              "MalformedOutput", ["response body is not JSON"]),
    "not_a_completion": Failure([Scripted(body={"object": "list", "data": []})],
                                "MalformedOutput", ["response is not a chat completion"]),
    "timeout": Failure([Scripted(body=completion('{"ops": []}'), delay=30)] * 2,
                       "LLMError", ["APITimeoutError"] * 2),
    "rate_limited": Failure([Scripted(status=429, body=recording("error_429_rate_limit"),
                                      headers={"retry-after": "0"})] * 2,
                            "LLMError", ["RateLimitError (HTTP 429)"] * 2),
    "server_error": Failure([Scripted(status=500, body=recording("error_500_server"))] * 2,
                            "LLMError", ["InternalServerError (HTTP 500)"] * 2),
    "bad_request": Failure([Scripted(status=400, body=recording("error_400_context_length"))],
                           "LLMError", ["BadRequestError (HTTP 400)"]),
}


@pytest.mark.parametrize("failure", list(FAILURES))
def test_a_failing_chat_is_left_untouched_and_the_others_proceed(make_rig: RigFactory,
                                                                 failure: str) -> None:
    case = FAILURES[failure]
    rig = make_rig(timeout=0.5, max_retries=1)
    rig.record(A, ["I work as a baker in Leeds.", "I get up at four every day."],
               expect_ids=[1, 2])
    rig.record(B, ["I'm Sam.", "I work as a nurse in Leeds."], expect_ids=[3, 4])
    rig.record(C, ["I have a dog called Biscuit.", "He is a beagle."], expect_ids=[5, 6])
    rig.fake.enqueue(
        ops_reply([{"op": "add", "type": "profile", "content": "The user is a baker in Leeds.",
                    "slot": "job", "evidence": [1]}]),
        *case.responses,
        ops_reply([{"op": "add", "type": "profile", "content": "The user has a beagle called "
                    "Biscuit.", "evidence": [5, 6]}]),
    )

    report = extract.run(rig.client, now=night(1))

    assert rig.fake.pending == 0
    assert len(report.errors) == 1, report.errors
    [error] = report.errors
    assert error["chat"] == "u1/b" and error["kind"] == case.kind
    assert error["error"].startswith("chat b: extract")
    # The others were applied, before and after the failure.
    assert report.chats == 2 and report.applied == 2
    assert [m.content for m in rig.memories(A)] == ["The user is a baker in Leeds."]
    assert [m.content for m in rig.memories(C)] == ["The user has a beagle called Biscuit."]
    assert rig.watermark(A) == 2 and rig.watermark(C) == 6
    # The failing chat: no memories, no events, watermark where it was.
    assert rig.memories(B) == [] and rig.client.history("u1", "b") == []
    assert rig.watermark(B) == 0 and extract.worker(rig.client).pending(night(1)) == 1
    # Every attempt is audited, outside the chat's transaction that rolled back.
    calls = rig.calls(B)
    assert len(calls) == len(case.errors)
    for call, expected in zip(calls, case.errors, strict=True):
        assert call["error"] is not None and expected in call["error"], call["error"]
        assert call["purpose"] == "extract" and call["model"] == MODEL
        assert call["request"]["messages"][1]["content"].endswith(
            "#4 2026-11-02T09:00+00:00 user: I work as a nurse in Leeds.")
    assert [c["error"] for c in rig.calls(A) + rig.calls(C)] == [None, None]
    assert calls[0]["response"] == case.response
    if failure in ("timeout", "rate_limited", "server_error"):
        assert "failed after 2 attempts" in error["error"]

    # A later run that succeeds processes the same messages.
    rig.fake.enqueue(ops_reply([{"op": "add", "type": "profile", "content":
                                 "Sam works as a nurse in Leeds.", "evidence": [3, 4]}]))
    retry = extract.run(rig.client, now=night(2))

    assert retry.errors == [] and retry.chats == 1 and retry.messages == 2
    assert "#3 2026-11-02T09:00+00:00 user: I'm Sam." in rig.fake.requests[-1].content("user")
    [sam] = rig.memories(B)
    assert sam.content == "Sam works as a nurse in Leeds." and sam.source_message_ids == [3, 4]
    assert rig.watermark(B) == 4 and extract.worker(rig.client).pending(night(2)) == 0


def test_rate_limit_then_success_retries_with_backoff(make_rig: RigFactory) -> None:
    rig = make_rig(max_retries=2, backoff=0.01, real_sleep=False)
    rig.record(A, ["I have two cats, Miso and Tofu."], expect_ids=[1])
    limited = recording("error_429_rate_limit")
    rig.fake.enqueue(
        Scripted(status=429, body=limited, headers={"retry-after": "1"}),
        Scripted(status=429, body=limited),
        ops_reply([{"op": "add", "type": "profile", "content": "Dana has two cats, Miso and "
                    "Tofu.", "evidence": [1]}]),
    )

    report = extract.run(rig.client, now=night(1))

    assert report.errors == [] and report.applied == 1
    assert [m.content for m in rig.memories(A)] == ["Dana has two cats, Miso and Tofu."]
    # retry-after wins over a shorter backoff; then exponential backoff (0.01 * 2).
    assert rig.sleeps == [1.0, 0.02]
    assert len(rig.fake.requests) == 3
    assert all(r.body == rig.fake.requests[0].body for r in rig.fake.requests)
    calls = rig.calls(A)
    assert [c["error"] is not None and "RateLimitError (HTTP 429)" in c["error"]
            for c in calls] == [True, True, False]
    assert calls[2]["response"] is not None and calls[2]["error"] is None


def test_audit_of_an_earlier_chunk_survives_the_chats_rollback(make_rig: RigFactory) -> None:
    # A budget so small each message is a chunk of its own: three calls for one chat.
    rig = make_rig(settings_update={"llm_context_tokens": 1})
    long = " ".join(["word"] * 220)
    rig.record(A, [f"First: {long}", f"Second: {long}", f"Third: {long}"], expect_ids=[1, 2, 3])
    add = {"op": "add", "type": "episodic"}
    rig.fake.enqueue(
        ops_reply([{**add, "content": "Dana plans a trip to Lisbon in May.", "evidence": [1]}]),
        ops_reply([{**add, "content": "Dana adopted a kitten named Pixel.", "evidence": [2]}]),
        Scripted(body=recording("extract_malformed_json")),
    )

    report = extract.run(rig.client, now=night(1))

    assert [e["kind"] for e in report.errors] == ["MalformedOutput"]
    sent = [r.content("user") for r in rig.fake.requests]
    assert [("#1 " in s, "#2 " in s, "#3 " in s) for s in sent] == [
        (True, False, False), (False, True, False), (False, False, True)]
    assert rig.memories(A) == [] and rig.watermark(A) == 0
    calls = rig.calls(A)
    assert [c["error"] is None for c in calls] == [True, True, False]
    assert calls[0]["response"] is not None and "Lisbon" in calls[0]["response"]

    # The next run asks again for every chunk and applies them all.
    rig.fake.enqueue(
        ops_reply([{**add, "content": "Dana plans a trip to Lisbon in May.", "evidence": [1]}]),
        ops_reply([{**add, "content": "Dana adopted a kitten named Pixel.", "evidence": [2]}]),
        ops_reply([{**add, "content": "Dana is learning to play the cello.", "evidence": [3]}]),
    )
    again = extract.run(rig.client, now=night(2))
    assert again.errors == [] and again.applied == 3
    assert len(rig.memories(A)) == 3 and rig.watermark(A) == 3
    assert len(rig.calls(A)) == 6


def test_a_job_reports_its_tokens_and_their_cost(make_rig: RigFactory) -> None:
    from engrammar.scheduler import _scheduler as scheduler

    rig = make_rig(settings_update={"llm_prices": {MODEL: (0.15, 0.60)}})
    rig.record(A, ["My name is Dana and I live in Berlin.",
                   "Nice to meet you, Dana!",
                   "I drink a cup of green tea every morning, I love it.",
                   "I promised to call my mom on Friday."], expect_ids=[1, 2, 3, 4])
    rig.fake.enqueue(Scripted(body=recording("extract_dana_night1")))

    out = scheduler.run_job(rig.client, "extract", night(1))

    # The recording's usage block: 1,187 prompt and 214 completion tokens.
    assert out["applied"] == 4
    assert out["llm"] == {"model": MODEL, "calls": 1, "prompt_tokens": 1187,
                          "completion_tokens": 214,
                          "cost": round((1187 * 0.15 + 214 * 0.60) / 1e6, 6)}
    [call] = rig.calls(A)
    assert (call["prompt_tokens"], call["completion_tokens"]) == (1187, 214)
    with rig.client.db.connection() as conn:
        [run] = store.list_job_runs(conn, "extract")
    assert run["report"]["llm"] == out["llm"]
    # A second run with nothing to do calls no model: nothing billed, no cost.
    again = scheduler.run_job(rig.client, "extract", night(1))
    assert again["llm"] == {"model": MODEL, "calls": 0, "prompt_tokens": 0,
                            "completion_tokens": 0, "cost": 0.0}
