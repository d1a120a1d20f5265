"""The write path end to end: record, the nightly extraction (offline rule extractor), the gate
and apply, on a real database. Atomicity per chat is checked against simulated crashes, a
worker killed with SIGKILL, and two workers running at once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest

from engrammar import Client, Embedder, InvalidInput, Op, OpKind, Scope, Status, store
from engrammar.extract.parser._extractor import ParserExtractor
from engrammar.models import MemoryType, Message, Role
from engrammar.scheduler import _extract as extract
from tests.conftest import T0

ROOT = Path(__file__).resolve().parent.parent
NIGHT1 = T0 + timedelta(hours=16)
NIGHT2 = NIGHT1 + timedelta(days=1)
TABLES = {  # every row of the write path's tables, in a stable order
    "chats": "user_id, chat_id",
    "memories": "user_id, chat_id, id",
    "memory_events": "user_id, chat_id, id",
    "memory_links": "user_id, chat_id, src_id, dst_id, kind",
}


def snapshot(client: Client) -> dict[str, list[str]]:
    """Every column of every row, as text: two equal snapshots mean nothing changed."""
    with client.db.connection() as conn:
        return {table: [r[0] for r in conn.execute(
            f"SELECT row_to_json(t)::text FROM {table} t ORDER BY {order}")]
                for table, order in TABLES.items()}


def watermark(client: Client, scope: Scope) -> int:
    with client.db.connection() as conn:
        row = conn.execute("SELECT extracted_through FROM chats WHERE user_id = %s"
                           " AND chat_id = %s", (scope.user_id, scope.chat_id)).fetchone()
    assert row is not None
    return int(row[0])


def events(client: Client, scope: Scope) -> list[tuple[int | None, str]]:
    return [(e.memory_id, e.op) for e in client.history(scope.user_id, scope.chat_id)]


def contents(client: Client, scope: Scope, status: Status = Status.active) -> list[str]:
    return sorted(m.content for m in client.memories(scope.user_id, scope.chat_id,
                                                     [status.value]))


A = Scope(user_id="u1", chat_id="c1")


# -- dedup and updates across nights -----------------------------------------------------------

def test_paraphrase_the_next_night_reinforces_the_same_memory(client: Client) -> None:
    first = client.record("u1", "c1", "user", "I live in Berlin", at=T0)
    extract.run(client, now=NIGHT1)
    second = client.record("u1", "c1", "user", "I'm based in Berlin", at=T0 + timedelta(days=1))
    report = extract.run(client, now=NIGHT2)
    assert report.chats == 1 and report.applied == 1

    (memory,) = client.memories("u1", "c1")
    assert memory.content == "Lives in Berlin" and memory.status is Status.active
    assert memory.reinforce_count == 1 and memory.last_reinforced_at == NIGHT2
    assert memory.source_message_ids == [first, second]
    assert events(client, A) == [(memory.id, "add"), (memory.id, "reinforce")]
    reinforce = client.history("u1", "c1")[1]
    assert reinforce.source_message_ids == [second]
    assert reinforce.before is not None and reinforce.before["reinforce_count"] == 0
    assert reinforce.after is not None and reinforce.after["reinforce_count"] == 1


def test_an_answer_after_the_night_is_read_with_the_question_before_it(
        client: Client) -> None:
    # The question was read the night before; the answer alone ("rugby. canes") says too
    # little to keep, beside it it is what the user is into.
    client.record("u1", "c1", "user", "need something to listen to on the tractor", at=T0)
    client.record("u1", "c1", "assistant", "Happy to help. What are you into?",
                  at=T0 + timedelta(minutes=1))
    extract.run(client, now=NIGHT1)
    assert contents(client, A) == []
    answer = client.record("u1", "c1", "user", "rugby. canes", at=T0 + timedelta(days=1))
    report = extract.run(client, now=NIGHT2)
    assert report.messages == 1  # the question is context, not the night's message
    (memory,) = client.memories("u1", "c1")
    # (read as the sentence it completes, "I am into rugby. canes.": "Likes rugby")
    assert "rugby" in memory.content.lower() and "What are they into?" in memory.content
    assert memory.source_message_ids == [answer]


def test_moving_is_an_update_that_keeps_history(client: Client) -> None:
    client.record("u1", "c1", "user", "I live in Berlin", at=T0)
    extract.run(client, now=NIGHT1)
    moved = client.record("u1", "c1", "user", "I moved to Munich", at=T0 + timedelta(days=1))
    extract.run(client, now=NIGHT2)

    old, new = client.memories("u1", "c1")
    assert (old.content, old.status, old.superseded_by) == ("Lives in Berlin",
                                                            Status.archived, new.id)
    assert old.status_changed_at == NIGHT2
    assert (new.content, new.status, new.slot) == ("Lives in Munich", Status.active, "home")
    assert new.source_message_ids == [moved]
    with client.db.connection() as conn:
        assert store.list_links(conn, A) == [(new.id, old.id, "supersedes")]
        old_history = store.list_events(conn, A, old.id)
        new_history = store.list_events(conn, A, new.id)
    assert [e.op for e in old_history] == ["add", "superseded"]
    assert [e.op for e in new_history] == ["update"]
    superseded = old_history[1]
    assert superseded.before is not None and superseded.before["status"] == "active"
    assert superseded.after is not None and superseded.after["superseded_by"] == new.id
    assert new_history[0].before is not None
    assert new_history[0].before["content"] == "Lives in Berlin"
    assert new_history[0].after is not None
    assert new_history[0].after["content"] == "Lives in Munich"
    assert all(e.source_message_ids == [moved] for e in (superseded, new_history[0]))
    # Recall reads the active memories: only the new home.
    assert contents(client, A) == ["Lives in Munich"]


# -- idempotency and rejections ----------------------------------------------------------------

def record_conversation(client: Client, user: str, chat: str) -> list[int]:
    lines = [
        ("user", "Hi! My name is Dana and I live in Berlin."),
        ("assistant", "Nice to meet you, Dana. I live in the cloud."),
        ("user", "I promised to call mom on Friday."),
        ("user", "I'm so tired today"),
        ("user", "I love spicy ramen"),
        ("user", "I finally called the plumber"),
    ]
    return [client.record(user, chat, role, text, at=T0 + timedelta(minutes=i))
            for i, (role, text) in enumerate(lines)]


def test_a_second_run_changes_nothing(client: Client) -> None:
    record_conversation(client, "u1", "c1")
    record_conversation(client, "u1", "c2")
    first = extract.run(client, now=NIGHT1)
    # (per chat: name, home, plan, taste; "finally called the plumber" closes no plan and
    # the turn model passes over it)
    assert first.chats == 2 and first.applied == 8
    before = snapshot(client)
    for now in (NIGHT1, NIGHT2):
        again = extract.run(client, now=now)
        assert (again.chats, again.messages, again.proposed, again.applied) == (0, 0, 0, 0)
        assert not again.rejected and not again.errors
        assert snapshot(client) == before


def test_every_rejection_is_an_event_with_its_reason(client: Client) -> None:
    ids = record_conversation(client, "u1", "c1")
    report = extract.run(client, now=NIGHT1)
    assert report.rejected == Counter({"ephemeral_low_salience": 1, "low_confidence": 1})
    rejects = [e for e in client.history("u1", "c1") if e.op == "reject"]
    assert len(rejects) == 2
    tired, plumber = sorted(rejects, key=lambda e: e.source_message_ids)
    assert tired.memory_id is None and tired.source == "extract:parser"
    assert tired.reason is not None and tired.reason.startswith("ephemeral_low_salience: ")
    assert tired.source_message_ids == [ids[3]]
    assert tired.after is not None and tired.after["type"] == "ephemeral"
    assert tired.after["content"] == "Feels tired today"
    # "I finally called the plumber" closes no loop, and the turn model did not keep the
    # message: no memory, and the history says why.
    assert plumber.source_message_ids == [ids[5]] and plumber.reason is not None
    assert plumber.reason.startswith("low_confidence: close_loop: no open loop matches")
    # Nothing below a threshold was written.
    assert contents(client, A) == ["Likes spicy ramen", "Lives in Berlin", "Name is Dana",
                                   "Promised to call mom on Friday"]


def test_a_resolution_closes_its_open_loop(client: Client) -> None:
    client.record("u1", "c1", "user", "I promised to call mom on Friday.", at=T0)
    extract.run(client, now=NIGHT1)
    done = client.record("u1", "c1", "user", "I finally called mom", at=T0 + timedelta(days=1))
    extract.run(client, now=NIGHT2)
    (loop,) = client.memories("u1", "c1")
    assert loop.status is Status.archived and loop.type is MemoryType.open_loop
    # (in the words said: the turn may stand for the reading, "Finally called mom")
    assert loop.metadata["resolution"].lower().endswith("called mom")
    assert events(client, A) == [(loop.id, "add"), (loop.id, "close_loop")]
    assert client.history("u1", "c1")[1].source_message_ids == [done]


def test_a_past_action_closes_only_a_plan_plainly_its_own(client: Client) -> None:
    """"Sold my van last month" shares a verb with "sell the drum kit" and is no end of it:
    a past action not said as an end ("finally") needs a report's match to close a plan."""
    client.record("u1", "c1", "user", "I want to sell my old drum kit.", at=T0)
    extract.run(client, now=NIGHT1)
    client.record("u1", "c1", "user", "sold my van last month, got a good price too",
                  at=T0 + timedelta(days=1))
    extract.run(client, now=NIGHT2)
    plan = next(m for m in client.memories("u1", "c1") if "drum kit" in m.content)
    assert plan.status is Status.active, client.memories("u1", "c1")
    assert any("van" in m.content and m.status is Status.active
               for m in client.memories("u1", "c1"))
    # a thing done that closes nothing is kept only as far as the clause model keeps it
    assert not any("good price" in m.content for m in client.memories("u1", "c1"))


@pytest.mark.parametrize(("planned", "said", "word"), [
    # nothing done
    ("I need to finish my history essay by Thursday.",
     "honestly I've done nothing on the history essay yet lol", "essay"),
    # what another plan waits for: when, not what is done
    ("We still have to get the house sorted before winter.",
     "we'd love to foster a lurcher when the house is sorted", "house"),
])
def test_a_message_that_does_not_do_the_plan_leaves_it_open(
        client: Client, planned: str, said: str, word: str) -> None:
    client.record("u1", "c1", "user", planned, at=T0)
    extract.run(client, now=NIGHT1)
    client.record("u1", "c1", "user", said, at=T0 + timedelta(days=1))
    extract.run(client, now=NIGHT2)
    plan = next(m for m in client.memories("u1", "c1") if word in m.content)
    assert plan.status is Status.active, client.memories("u1", "c1")


@pytest.mark.parametrize(("habit", "stopped", "gone"), [
    ("I smoke about ten a day, trying to cut down.", "I quit smoking last month!", "ten a day"),
    ("I play the cello in a community orchestra.", "I don't play the cello anymore, "
     "my wrist won't have it.", "community orchestra"),
    ("I drink strong black coffee, five cups a day.", "Well, I've given up the coffee. "
     "Doctor's orders. It's rooibos now.", "five cups"),
    # work left for good (a doing said bare, a job); not a place left for the day
    ("I work as a nurse at the Royal Infirmary.", "quick update, left nursing in the "
     "spring", "Royal Infirmary"),
    # a change over to something else, or a return to what was given up
    ("I take my tea with two sugars, always have.", "cut out sugar last spring, switched to "
     "honey in my tea", "two sugars"),
    ("I don't eat any dairy at all, no milk, no cheese.", "started eating cheese again at "
     "christmas, life is too short", "no cheese"),
    ("I haven't been running since my knee op in 2023.", "been back on the running "
     "since my birthday tbh", "knee op"),
    # stopping said with a particle, in British and Irish chat
    ("I go to hot yoga every Thursday night.", "packed in the hot yoga, too sweaty for "
     "me", "every Thursday"),
    # a reason after it, which the parse may hang the stop on
    ("I play golf every Sunday with friends.", "I've given up the golf, my back won't have "
     "it anymore", "every Sunday"),
    ("I smoke about twenty a day, menthol ones.", "knocked the smoking on the head last "
     "month", "twenty a day"),
    ("I do spin classes four mornings a week.", "had to give up the spin classes after "
     "my hip op", "four mornings"),
])
def test_a_thing_stopped_retires_the_memory_of_doing_it(client: Client, habit: str,
                                                       stopped: str, gone: str) -> None:
    client.record("u1", "c1", "user", habit, at=T0)
    extract.run(client, now=NIGHT1)
    assert any(gone in c for c in contents(client, A)), contents(client, A)
    client.record("u1", "c1", "user", stopped, at=T0 + timedelta(days=1))
    extract.run(client, now=NIGHT2)
    assert not any(gone in c for c in contents(client, A)), contents(client, A)
    assert contents(client, A), "the change is a memory of its own"
    # the same message read again over what it wrote changes nothing twice
    message = Message(id=1, user_id="u1", chat_id="c1", role=Role.user, content=stopped,
                      at=T0 + timedelta(days=1))
    again = ParserExtractor().extract(A, [message], client.memories("u1", "c1"), NIGHT2).ops
    applied = client.apply("u1", "c1", again, now=NIGHT2 + timedelta(hours=1))
    assert all(d.op is None or not d.accepted or d.op.op is OpKind.reinforce
               for d in applied.decisions), applied.decisions


def test_a_change_over_of_something_else_or_a_wish_changes_nothing() -> None:
    from engrammar.extract.parser._cessation import changed_over
    from engrammar.extract.parser._clauses import analyse
    from engrammar.extract.parser._nlp import parse

    for text in ("I might switch to decaf next year", "I didn't switch to decaf",
                 "my sister switched to decaf", "I started a new job"):
        (doc,) = parse([text])
        assert not any(changed_over(c) for c in analyse(doc)), text


@pytest.mark.parametrize("moved", [
    "Small thing, the physio at Ranelagh Clinic has been moved to Thursday.",
    "they pushed my physio at Ranelagh Clinic back to Thursday",
])
def test_a_plan_moved_to_another_day_is_that_plan_on_its_new_day(client: Client,
                                                                 moved: str) -> None:
    client.record("u1", "c1", "user", "I've got physio at Ranelagh Clinic on Tuesday.", at=T0)
    extract.run(client, now=NIGHT1)
    (loop,) = client.memories("u1", "c1")
    assert loop.type is MemoryType.open_loop and loop.due_at is not None
    client.record("u1", "c1", "user", moved, at=T0 + timedelta(hours=20))
    extract.run(client, now=NIGHT2)
    (now,) = client.memories("u1", "c1", ["active"])
    assert now.type is MemoryType.open_loop and "Thursday" in now.content, now
    assert now.due_at is not None and now.due_at.strftime("%A") == "Thursday", now.due_at


def test_a_thing_sold_is_no_longer_had_and_a_plan_to_sell_is_closed(client: Client) -> None:
    client.record("u1", "c1", "user", "I drive a 2009 Honda Jazz, bright green.", at=T0)
    client.record("u1", "c2", "user", "I'm going to sell my old Yamaha keyboard.", at=T0)
    extract.run(client, now=NIGHT1)
    client.record("u1", "c1", "user", "sold the Jazz last week. bit sad tbh",
                  at=T0 + timedelta(days=1))
    client.record("u1", "c2", "user", "finally sold the keyboard yesterday, got 90 for it",
                  at=T0 + timedelta(days=1))
    extract.run(client, now=NIGHT2)
    assert not any("green" in c for c in contents(client, A)), contents(client, A)
    assert any("Sold the Jazz" in c for c in contents(client, A)), contents(client, A)
    (plan,) = client.memories("u1", "c2")
    assert plan.status is Status.archived, plan  # closed, and no second memory of the sale


def test_a_retirement_ends_the_job(client: Client) -> None:
    client.record("u1", "c1", "user", "I'm a postman in Galway.", at=T0)
    extract.run(client, now=NIGHT1)
    assert any(c.startswith("Works as a postman") for c in contents(client, A))
    client.record("u1", "c1", "user", "I retired from the post office last Friday!",
                  at=T0 + timedelta(days=1))
    extract.run(client, now=NIGHT2)
    assert not any("postman" in c for c in contents(client, A)), contents(client, A)
    assert any(c.startswith("Retired from the post office") for c in contents(client, A))


def test_a_place_left_for_the_day_or_a_maybe_stops_nothing() -> None:
    from engrammar.extract.parser._cessation import ceased
    from engrammar.extract.parser._clauses import analyse
    from engrammar.extract.parser._nlp import parse

    for text in ("I left the office at 6 today", "we left the building early",
                 "we packed in the morning and drove off", "can't pack it in yet",
                 "I have to give up coffee",
                 "so maybe I quit the choir and take up squash, thoughts?"):
        (doc,) = parse([text])
        assert not any(ceased(c) for c in analyse(doc)), text


def test_a_thing_only_meant_to_be_stopped_changes_nothing(client: Client) -> None:
    client.record("u1", "c1", "user", "I smoke about ten a day.", at=T0)
    extract.run(client, now=NIGHT1)
    client.record("u1", "c1", "user", "I really want to quit smoking this year.",
                  at=T0 + timedelta(days=1))
    extract.run(client, now=NIGHT2)
    assert any("ten a day" in c for c in contents(client, A)), contents(client, A)


def test_a_dated_report_closes_its_plan_and_is_one_episode(client: Client) -> None:
    """"Yesterday I visited the gallery": the plan it settles is closed and the dated
    episode kept; in a chat with no such plan, the resolution that closes nothing is the
    episode's words again, from the same message: one episode, not two."""
    client.record("u1", "c1", "user", "I plan to visit the Art Gallery of Ontario soon.",
                  at=T0)
    extract.run(client, now=NIGHT1)
    for chat in ("c1", "c2"):
        client.record("u1", chat, "user", "Yesterday I visited the Art Gallery of Ontario.",
                      at=T0 + timedelta(days=2))
    extract.run(client, now=NIGHT2 + timedelta(days=1))
    loop, episode = sorted(client.memories("u1", "c1"), key=lambda m: m.id)
    assert loop.type is MemoryType.open_loop and loop.status is Status.archived
    assert episode.type is MemoryType.episodic and episode.status is Status.active
    (alone,) = client.memories("u1", "c2")
    assert alone.content == episode.content and alone.content.startswith(
        "Visited the Art Gallery of Ontario (yesterday, ")


def test_a_resolution_read_again_adds_no_event(client: Client) -> None:
    client.record("u1", "c1", "user", "I promised to call mom on Friday.", at=T0)
    extract.run(client, now=NIGHT1)
    done = client.record("u1", "c1", "user", "I finally called mom", at=T0 + timedelta(days=1))
    extract.run(client, now=NIGHT2)
    # The same words again (the user repeating themselves): the loop they closed is on
    # record, so they are no new event; the rejection says so.
    again = client.record("u1", "c1", "user", "I finally called mom",
                          at=T0 + timedelta(days=2))
    report = extract.run(client, now=NIGHT2 + timedelta(days=1))
    assert report.rejected == Counter({"already_resolved": 1}) and report.applied == 0
    assert client.memories("u1", "c1", ["active"]) == []
    reject = client.history("u1", "c1")[-1]
    assert reject.op == "reject" and reject.source_message_ids == [again] != [done]


# -- crashes -----------------------------------------------------------------------------------

class Killed(BaseException):
    """A kill in the middle of a chat: not an Exception, so nothing on the way catches it."""


class CrashingEmbedder:
    """Delegates to the real embedder and raises :class:`Killed` on its ``crash_on``-th call."""

    def __init__(self, inner: Embedder, crash_on: int) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.crash_on = crash_on
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        if self.calls == self.crash_on:
            raise Killed(f"killed at embed call {self.calls}")
        return self.inner.embed(texts)


THREE = [Scope(user_id="u1", chat_id=f"c{i}") for i in (1, 2, 3)]


def record_three(client: Client) -> None:
    for scope in THREE:
        client.record(scope.user_id, scope.chat_id, "user",
                      f"My name is Dana and I live in Berlin. I love the {scope.chat_id} playlist.",
                      at=T0)


def assert_untouched(client: Client, scope: Scope) -> None:
    assert client.memories(scope.user_id, scope.chat_id) == []
    assert client.history(scope.user_id, scope.chat_id) == []
    assert watermark(client, scope) == 0
    with client.db.connection() as conn:
        assert store.list_links(conn, scope) == []


def assert_applied_once(client: Client, scope: Scope) -> None:
    memories = client.memories(scope.user_id, scope.chat_id)
    assert sorted(m.content for m in memories) == [
        f"Likes the {scope.chat_id} playlist", "Lives in Berlin", "Name is Dana"]
    assert all(m.status is Status.active and m.reinforce_count == 0 for m in memories)
    assert sorted(events(client, scope)) == sorted((m.id, "add") for m in memories)
    assert watermark(client, scope) == max(m.id for m in client.log(scope.user_id,
                                                                    scope.chat_id))


def crash_in_embed(client: Client, monkeypatch: pytest.MonkeyPatch) -> Client:
    """The 2nd chat's embedding call dies: after its claim, before any of its writes."""
    return Client(client.db, settings=client.settings,
                  embedder=CrashingEmbedder(client.embedder, crash_on=2))


def crash_at_watermark(client: Client, monkeypatch: pytest.MonkeyPatch) -> Client:
    """The 2nd chat dies after all its memories and events were written, at its watermark."""
    real = store.set_watermark
    calls = Counter[str]()

    def dying(conn: store.Conn, scope: Scope, through: int, at: datetime) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            assert len(store.list_memories(conn, scope)) == 3  # written, not yet committed
            raise Killed("killed before the watermark")
        real(conn, scope, through, at)

    monkeypatch.setattr(store, "set_watermark", dying)
    return client


@pytest.mark.parametrize("crash", [crash_in_embed, crash_at_watermark])
def test_a_crash_inside_a_chat_leaves_it_untouched(
        client: Client, monkeypatch: pytest.MonkeyPatch,
        crash: Callable[[Client, pytest.MonkeyPatch], Client]) -> None:
    record_three(client)
    with pytest.raises(Killed):
        extract.run(crash(client, monkeypatch), now=NIGHT1)
    monkeypatch.undo()
    assert_applied_once(client, THREE[0])
    assert_untouched(client, THREE[1])
    assert_untouched(client, THREE[2])
    committed = snapshot(client)

    report = extract.run(client, now=NIGHT1)
    assert report.chats == 2 and report.applied == 6 and not report.errors
    for scope in THREE:
        assert_applied_once(client, scope)
    # The first chat, committed before the crash, was not extracted a second time.
    first = [r for r in snapshot(client)["memory_events"] if '"chat_id":"c1"' in r]
    assert first == [r for r in committed["memory_events"] if '"chat_id":"c1"' in r]


WORKER = textwrap.dedent("""
    import json, sys, time
    from datetime import datetime
    from engrammar.scheduler import _extract as extract
    from engrammar import Client, Database, LocalEmbedder
    from engrammar.extract.parser._extractor import ParserExtractor

    url, now, mode = sys.argv[1], datetime.fromisoformat(sys.argv[2]), sys.argv[3]

    class Sleepy(ParserExtractor):
        def extract(self, scope, messages, memories, now):
            if scope.chat_id == "c2":
                print("sleeping", flush=True)
                time.sleep(120)
            return super().extract(scope, messages, memories, now)

    if mode == "sleepy":
        client = Client(Database(url, max_size=2), embedder=LocalEmbedder(),
                        extractor=Sleepy())
    else:
        client = Client.open()  # MEMORY_DATABASE_URL from the environment
        print("ready", flush=True)
        sys.stdin.readline()  # both workers start together
    report = extract.run(client, now=now)
    print(json.dumps(report.to_json()), flush=True)
""")


def worker(database_url: str, mode: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WORKER, database_url, NIGHT1.isoformat(), mode],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=ROOT, env={**os.environ, "MEMORY_LLM": "none", "MEMORY_EMBEDDER": "local", **env})


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_a_worker_killed_between_chats(client: Client, database_url: str) -> None:
    record_three(client)
    app = f"memory-test-killed-{os.getpid()}"
    proc = worker(database_url, "sleepy", PGAPPNAME=app)
    try:
        wait_for(lambda: proc.poll() is not None or watermark(client, THREE[0]) > 0,
                 "chat 1 to commit")
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "sleeping"  # inside chat 2's transaction
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL

    def backends_gone() -> bool:  # the server rolls the dead worker's transaction back
        with client.db.connection() as conn:
            row = conn.execute("SELECT count(*) FROM pg_stat_activity"
                               " WHERE application_name = %s", (app,)).fetchone()
        return row is not None and row[0] == 0

    wait_for(backends_gone, "the killed worker's sessions to end")
    assert_applied_once(client, THREE[0])
    assert_untouched(client, THREE[1])
    assert_untouched(client, THREE[2])

    report = extract.run(client, now=NIGHT1)
    assert report.chats == 2 and not report.errors
    for scope in THREE:
        assert_applied_once(client, scope)


def test_two_workers_extract_every_chat_exactly_once(client: Client, database_url: str) -> None:
    n = 200
    scopes = [Scope(user_id=f"u{i // 10:02d}", chat_id=f"c{i % 10}") for i in range(n)]
    with client.db.connection() as conn:
        for i, scope in enumerate(scopes):
            store.insert_message(conn, scope, "user", f"My name is Name{i}", T0)
            store.insert_message(conn, scope, "user", f"I live in City{i}", T0)
    procs = [worker(database_url, "parser", MEMORY_DATABASE_URL=database_url) for _ in range(2)]
    try:
        for proc in procs:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready"
        for proc in procs:  # both loaded: let them go at once
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        outs = [proc.communicate(timeout=120) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    reports: list[dict[str, Any]] = []
    for proc, (out, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0, err
        reports.append(json.loads(out.strip().splitlines()[-1]))
    assert sum(r["chats"] for r in reports) == n
    assert sum(r["applied"] for r in reports) == 2 * n
    assert not any(r["errors"] or r["rejected"] for r in reports)

    with client.db.connection() as conn:
        per_chat = conn.execute(
            "SELECT user_id, chat_id, array_agg(content ORDER BY content), count(*)"
            " FROM memories GROUP BY user_id, chat_id").fetchall()
        adds = conn.execute("SELECT memory_id, count(*) FROM memory_events WHERE op = 'add'"
                            " GROUP BY memory_id").fetchall()
        ops = dict(conn.execute("SELECT op, count(*) FROM memory_events GROUP BY op").fetchall())
        behind = conn.execute("SELECT count(*) FROM chats c WHERE extracted_through <>"
                              " (SELECT max(id) FROM messages m WHERE m.user_id = c.user_id"
                              " AND m.chat_id = c.chat_id)").fetchone()
    expected = {(s.user_id, s.chat_id): [f"Lives in City{i}", f"Name is Name{i}"]
                for i, s in enumerate(scopes)}
    assert {(u, c): list(got) for u, c, got, _ in per_chat} == expected
    assert all(count == 2 for *_, count in per_chat)
    assert len(adds) == 2 * n and all(count == 1 for _, count in adds)
    assert ops == {"add": 2 * n}
    assert behind == (0,)


# -- dry run, record and apply ------------------------------------------------------------------

def test_dry_run_writes_nothing_and_returns_decisions(client: Client) -> None:
    record_conversation(client, "u1", "c1")
    record_conversation(client, "u1", "c2")
    before = snapshot(client)
    report = extract.run(client, now=NIGHT1, dry_run=True)
    assert report.dry_run and report.chats == 2 and report.applied == 8
    assert snapshot(client) == before
    decisions = [d for detail in report.details for d in detail.result.decisions]
    assert len(decisions) == 12
    assert Counter(d.code for d in decisions) == Counter(
        {"ok": 8, "ephemeral_low_salience": 2, "low_confidence": 2})
    verbose = report.to_json(verbose=True)
    assert [c["chat"] for c in verbose["decisions"]] == ["u1/c1", "u1/c2"]
    # The real run then makes exactly the decisions the dry run announced.
    real = extract.run(client, now=NIGHT1)
    assert real.to_json()["applied"] == 8 and real.rejected == report.rejected


def test_record_refuses_bad_input_and_keeps_the_rest(client: Client) -> None:
    kept = client.record("u1", "c1", "user", "I live in Berlin", at=T0)
    limit = client.settings.max_message_chars
    with pytest.raises(InvalidInput, match="limit"):
        client.record("u1", "c1", "user", "x" * (limit + 1), at=T0)
    with pytest.raises(InvalidInput, match="unknown role"):
        client.record("u1", "c1", "robot", "I live in Paris", at=T0)
    with pytest.raises(InvalidInput):
        client.record("u1", "c1", "user", "   ", at=T0)
    with pytest.raises(InvalidInput):
        client.record("", "c1", "user", "I live in Paris", at=T0)
    at_limit = client.record("u1", "c1", "user", "y" * limit, at=T0)
    assert [m.id for m in client.log("u1", "c1")] == [kept, at_limit]
    report = extract.run(client, now=NIGHT1)
    assert report.messages == 2 and report.applied == 1
    assert contents(client, A) == ["Lives in Berlin"]


def test_apply_goes_through_the_gate(client: Client) -> None:
    first = client.apply("u1", "c1", [
        Op(op=OpKind.add, type=MemoryType.preference, content="Likes green tea"),
        Op(op=OpKind.add, type=MemoryType.preference, content="likes green tea!"),
        Op(op=OpKind.add, type=MemoryType.preference, content="Tea", salience=0.9),
    ], source="import", now=T0)
    assert [d.code for d in first.decisions] == ["ok", "duplicate", "too_short"]
    (tea,) = client.memories("u1", "c1")
    assert tea.reinforce_count == 1 and tea.metadata == {"source": "import"}

    second = client.apply("u1", "c1", [
        # Nothing said and no such memory: nothing to decide (with content, the gate would
        # decide the statement against the pool; tests/test_gate.py).
        Op(op=OpKind.reinforce, target="999999"),
        Op(op=OpKind.forget, target="m1"),
        Op(op=OpKind.update, content="Likes jasmine green tea", target=str(tea.id)),
    ], source="import", now=T0 + timedelta(hours=1))
    assert [(d.verdict.value, d.code) for d in second.decisions] == [
        ("rejected", "unknown_target"), ("rejected", "unknown_target"), ("accepted", "ok")]
    history = client.history("u1", "c1")
    assert all(e.source == "import" for e in history)
    assert [e.op for e in history] == ["add", "reinforce", "reject", "reject", "reject",
                                       "update", "superseded"]
    assert history[3].reason is not None and "999999" in history[3].reason
    assert contents(client, A) == ["Likes jasmine green tea"]

    dry = client.apply("u1", "c1", [Op(op=OpKind.add, type=MemoryType.profile,
                                       content="Has a dog named Rex")], dry_run=True)
    assert dry.applied == 1 and contents(client, A) == ["Likes jasmine green tea"]


def test_a_late_stamped_message_is_not_skipped(client: Client) -> None:
    from datetime import timedelta

    from engrammar.scheduler import _extract as extract
    from tests.conftest import T0

    # Recorded in this order, but the first carries a later timestamp (clock skew between
    # app servers): the night at T0 + 1h must not move the watermark past it.
    client.record("u1", "c1", "user", "My name is Priya.", at=T0 + timedelta(hours=5))
    client.record("u1", "c1", "user", "I live in Lisbon.", at=T0)
    first = extract.run(client, T0 + timedelta(hours=1))
    assert first.messages == 0
    second = extract.run(client, T0 + timedelta(hours=6))
    assert second.messages == 2
    contents = sorted(m.content for m in client.memories("u1", "c1"))
    assert contents == ["Lives in Lisbon", "Name is Priya"]


def test_a_message_committed_late_is_not_passed_over(client: Client,
                                                     database_url: str) -> None:
    scope = Scope(user_id="u1", chat_id="c1")
    client.record("u1", "c1", "user", "I live in Lisbon.", at=T0)
    # A writer that drew its message id first and commits last (a slow app server).
    slow = psycopg.connect(database_url)
    store.insert_message(slow, scope, "user", "My name is Priya.", T0)
    client.record("u1", "c1", "user", "I have a dog named Rex.", at=T0)
    night = threading.Thread(target=extract.run, args=(client, T0 + timedelta(hours=1)))
    night.start()
    time.sleep(0.5)
    assert night.is_alive()  # the night waits for the writer rather than skip its message
    slow.commit()
    slow.close()
    night.join(timeout=30)
    assert not night.is_alive()
    extract.run(client, T0 + timedelta(hours=2))
    contents = sorted(m.content for m in client.memories("u1", "c1"))
    assert "Name is Priya" in contents and "Lives in Lisbon" in contents
