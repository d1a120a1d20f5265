"""The blocks job, incremental (issue 25): each block is cut from where the one before it
ended and activated as soon as it is summarised; a job stopped anywhere resumes without
gaps or duplicates; a block that fails fails its chat and the job goes on; and compile, at
any point of it, plans the window in stretches with every pair covered exactly once."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from itertools import pairwise
from pathlib import Path

import psycopg
import pytest

from engrammar import Client, Database, LocalEmbedder, Scope, Settings, store
from engrammar._userdata import dump
from engrammar.errors import LLMError
from engrammar.extract._summarizer import ExtractiveSummarizer, Period
from engrammar.recall._window import coverage_problems
from engrammar.runtime._database import SQL_DIR, migrate
from tests.conftest import T0, scratch_database

U = "u1"
NIGHT = T0 + timedelta(hours=3)


def said(client: Client, chat: str, turns: int) -> None:
    for i in range(1, turns + 1):
        at = T0 + timedelta(minutes=i)
        client.record(U, chat, "user", f"Question {i}: what about step {i}?", at)
        client.record(U, chat, "assistant", f"Answer {i}: do step {i} carefully.", at)


class Watching:
    """The offline summarizer, and a hook called before each summary (to look at the store
    from outside, or to fail like a model or die like a killed worker)."""

    name = "watching"

    def __init__(self, client: Client) -> None:
        self.inner = ExtractiveSummarizer(client.counter)
        self.before: Callable[[Sequence[str]], None] = lambda texts: None

    def summarize(self, period: Period, texts: Sequence[str], now: datetime,
                  scope: Scope | None = None) -> str:
        self.before(texts)
        return self.inner.summarize(period, texts, now, scope)


def spans(client: Client, chat: str, states: Sequence[str] = ("ACTIVE",)
          ) -> list[tuple[int, int]]:
    with client.db.connection() as conn:
        return [(b["first_pair"], b["last_pair"])
                for b in store.list_blocks(conn, Scope(user_id=U, chat_id=chat), list(states))]


def covered_once(client: Client, chat: str) -> None:
    """Every pair raw or in exactly one active block, in the plan and in a prompt with room
    for everything; a pair in a block is never also in the prompt verbatim."""
    scope = Scope(user_id=U, chat_id=chat)
    with client.db.connection() as conn:
        n, units = client.window.units(conn, scope)
    assert coverage_problems(units, n) == []
    compiled = client.compile(U, chat, "next question", now=NIGHT, budget_tokens=100_000,
                              record=False)
    pairs = [p for c in compiled.coverage for p in range(c.first_pair, c.last_pair + 1)]
    assert pairs == list(range(1, n + 1)) and all(c.included for c in compiled.coverage)
    raw = {p for u in units if u.kind == "raw" for p in range(u.first_pair, u.last_pair + 1)}
    verbatim = [m["content"] for m in compiled.messages[:-1] if m["role"] == "user"]
    assert verbatim == [f"Question {p}: what about step {p}?" for p in sorted(raw)]


def job(client: Client, **context: int) -> tuple[Client, Watching]:
    """A client on the same store with these window settings, its blocks job watched."""
    settings = client.settings.model_copy(deep=True)
    for key, value in context.items():
        setattr(settings.context, key, value)
    ours = Client(client.db, settings=settings, embedder=client.embedder)
    watching = Watching(ours)
    ours.blocks.summarizer = watching
    return ours, watching


def test_blocks_are_cut_one_after_another_and_activated_as_each_is_ready(
        client: Client) -> None:
    said(client, "c1", 33)  # 4 raw pairs: 29 can fold, into 5 blocks of 5
    client, watching = job(client, max_active_blocks=100)
    seen: list[list[tuple[int, int]]] = []
    watching.before = lambda texts: seen.append(spans(client, "c1"))
    report = client.blocks.run(NIGHT)
    assert (report.created, report.activated, report.merged) == (5, 5, 0)
    # When each block was summarised, the ones before it were already active.
    assert seen == [[(1 + 5 * j, 5 + 5 * j) for j in range(k)] for k in range(5)]
    with client.db.connection() as conn:
        blocks = store.list_blocks(conn, Scope(user_id=U, chat_id="c1"))
        ids = [r[0] for r in conn.execute(
            "SELECT id FROM messages WHERE role = 'user' ORDER BY id").fetchall()]
    # Contiguous: each starts at the id after the one before ends, and ends before the
    # user message that opens the next pair.
    assert blocks[0]["first_id"] == 1
    for before, after in pairwise(blocks):
        assert after["first_id"] == before["last_id"] + 1
    assert [b["last_id"] for b in blocks] == [ids[5 * k + 5] - 1 for k in range(5)]
    for b in blocks:  # each summary is of its own pairs
        steps = [int(n) for n in re.findall(r"step (\d+)", b["summary"] or "")]
        assert steps and all(b["first_pair"] <= n <= b["last_pair"] for n in steps)
    covered_once(client, "c1")


def test_a_job_killed_halfway_resumes_without_gaps_or_duplicates(client: Client) -> None:
    said(client, "c1", 60)  # 56 can fold: 11 blocks, merged as they pile up past 6
    said(client, "c2", 60)  # the same chat, folded in one go, for comparison
    client, watching = job(client)
    calls = {"n": 0}

    def die_at_the_ninth(texts: Sequence[str]) -> None:
        calls["n"] += 1
        if calls["n"] == 9:
            raise KeyboardInterrupt

    watching.before = die_at_the_ninth
    with pytest.raises(KeyboardInterrupt):
        client.blocks.run(NIGHT, [Scope(user_id=U, chat_id="c1")])
    # Stopped with blocks cut and not yet activated: their pairs are raw, the rest in
    # exactly one active block, and compile says so.
    assert spans(client, "c1", ("PENDING",))
    assert spans(client, "c1")
    covered_once(client, "c1")

    watching.before = lambda texts: None
    again = client.blocks.run(NIGHT)  # the fold was let go: this run takes the chat again
    assert again.failed == []
    assert spans(client, "c1", ("PENDING", "PREPARED")) == []
    assert spans(client, "c1") == spans(client, "c2")
    assert spans(client, "c1")[-1][1] == 55 and len(spans(client, "c1")) <= 6
    covered_once(client, "c1")
    covered_once(client, "c2")


def test_a_block_that_fails_fails_its_chat_and_the_job_goes_on(client: Client) -> None:
    said(client, "c1", 20)
    said(client, "c2", 20)
    client, watching = job(client)

    def fail_on_c1s_second_block(texts: Sequence[str]) -> None:
        if any(t.startswith("user: Question 6:") for t in texts) and any(
                "step 6" in t for t in texts) and failing["on"]:
            failing["on"] = False
            raise LLMError("the model is down", chat_id="c1")

    failing = {"on": True}
    watching.before = fail_on_c1s_second_block
    report = client.blocks.run(NIGHT)
    (failed,) = report.failed
    assert failed["chat"] == f"{U}/c1" and failed["pairs"] == "pairs 6-10"
    assert int(failed["block"]) > 0 and "the model is down" in failed["error"]
    assert spans(client, "c1") == [(1, 5)]  # the chat stopped at its failed block
    assert spans(client, "c1", ("PENDING", "PREPARED")) == []  # back to NOT_CREATED
    assert spans(client, "c2") == [(1, 5), (6, 10), (11, 15)]  # the job went on
    covered_once(client, "c1")
    assert client.blocks.run(NIGHT).failed == []
    assert spans(client, "c1") == [(1, 5), (6, 10), (11, 15)]
    covered_once(client, "c1")


def test_compile_plans_stretches_not_pairs(client: Client) -> None:
    said(client, "c1", 300)
    compiled = client.compile(U, "c1", "and now?", now=NIGHT, budget_tokens=400,
                              record=False)
    raw = [(c.first_pair, c.last_pair, c.included) for c in compiled.coverage]
    k = raw[0][1]
    assert raw == [(1, k, False), (k + 1, 300, True)] and k > 200
    assert [d.ref for d in compiled.dropped if d.layer == "window"] == [f"pairs 1-{k}"]
    assert compiled.tokens <= 400


def test_a_greeting_before_the_first_question_is_part_of_pair_one(client: Client) -> None:
    client.record(U, "c1", "assistant", "Hello! How can I help today?", T0)
    said(client, "c1", 3)
    compiled = client.compile(U, "c1", "and now?", now=NIGHT, budget_tokens=100_000,
                              record=False)
    turns = [m["content"] for m in compiled.messages if m["role"] != "system"]
    assert turns[:2] == ["Hello! How can I help today?", "Question 1: what about step 1?"]
    assert [(c.first_pair, c.last_pair, c.included) for c in compiled.coverage] == [
        (1, 3, True)]


def test_a_gap_between_blocks_is_raw_until_the_job_fills_it(client: Client) -> None:
    said(client, "c1", 24)  # 20 fold into 4 blocks
    client, _ = job(client, max_active_blocks=100)
    client.blocks.run(NIGHT)
    scope = Scope(user_id=U, chat_id="c1")
    with client.db.connection() as conn:
        gone = next(b for b in store.list_blocks(conn, scope) if b["first_pair"] == 6)
        store.delete_block(conn, scope, gone["block_no"])  # its summary failed: NOT_CREATED
        _, units = client.window.units(conn, scope)
    assert [(u.kind, u.first_pair, u.last_pair) for u in units] == [
        ("summary", 1, 5), ("raw", 6, 10), ("summary", 11, 15), ("summary", 16, 20),
        ("raw", 21, 24)]
    covered_once(client, "c1")
    report = client.blocks.run(NIGHT)
    assert report.created == 1 and spans(client, "c1") == [(1, 5), (6, 10), (11, 15),
                                                           (16, 20)]
    covered_once(client, "c1")


def test_the_pair_count_follows_the_log(client: Client) -> None:
    scope = Scope(user_id=U, chat_id="c1")

    def counted() -> tuple[int, int]:
        with client.db.connection() as conn:
            row = conn.execute("SELECT count(*) FROM messages WHERE user_id = %s"
                               " AND chat_id = %s AND role = 'user'", (U, "c1")).fetchone()
            assert row is not None
            return store.pair_count(conn, scope), int(row[0])

    said(client, "c1", 3)
    client.record(U, "c1", "system", "A note from the app.", T0)
    assert counted() == (3, 3)
    with client.db.connection() as conn:  # one statement, many messages
        conn.execute("INSERT INTO messages (user_id, chat_id, role, content, at)"
                     " SELECT %s, 'c1', CASE WHEN i %% 2 = 0 THEN 'user' ELSE 'assistant' END,"
                     " 'bulk ' || i, %s FROM generate_series(1, 10) i", (U, T0))
    assert counted() == (8, 8)
    exported = client.export_user(U)
    with client.db.connection() as conn:
        first = conn.execute("SELECT min(id) FROM messages WHERE role = 'user'").fetchone()
        assert first is not None
        store.delete_messages(conn, U, [first[0]])
    assert counted() == (7, 7)
    client.erase_chat(U, "c1")
    assert counted() == (0, 0)
    client.import_file("".join(dump(exported)).encode(), replace=True)
    assert counted() == (8, 8)
    with client.db.connection() as conn:
        conn.execute("TRUNCATE messages")
    assert counted() == (0, 0)


def test_two_writers_of_a_chat_count_its_pairs_without_waiting(client: Client,
                                                                database_url: str) -> None:
    scope = Scope(user_id=U, chat_id="c1")
    said(client, "c1", 2)
    with psycopg.connect(database_url) as slow:  # a writer that commits last
        store.insert_message(slow, scope, "user", "A slow question.", T0)
        said(client, "c1", 3)  # recorded meanwhile, and not held up by it
        with client.db.connection() as conn:
            assert store.pair_count(conn, scope) == 5
        slow.commit()
    with client.db.connection() as conn:
        assert store.pair_count(conn, scope) == 6
        rows = conn.execute("SELECT count(*) FROM chat_pairs").fetchone()
    assert rows is not None and rows[0] <= 2  # folded as it goes


def test_the_migration_numbers_existing_chats_and_blocks(database_url: str, tmp_path: Path,
                                                        embedder: LocalEmbedder) -> None:
    """A store made before migration 017: its chats get their pair counts and their blocks
    the ids they span, and a block past the end of its log goes back to raw."""
    before = tmp_path / "sql"
    before.mkdir()
    for f in SQL_DIR.iterdir():
        if f.name.endswith(".sql") and f.name < "017":
            (before / f.name).write_text(f.read_text(encoding="utf-8"), encoding="utf-8")
    with scratch_database(database_url, "memory_test_window_017") as url:
        with psycopg.connect(url) as conn:
            migrate(conn, before)
            conn.execute("INSERT INTO messages (user_id, chat_id, role, content, at)"
                         " SELECT 'u1', 'c1', CASE WHEN i %% 2 = 1 THEN 'user'"
                         " ELSE 'assistant' END, 'Question ' || (i + 1) / 2 || ': hm?', %s"
                         " FROM generate_series(0, 30) i", (T0,))  # an assistant one first
            conn.execute("INSERT INTO chats (user_id, chat_id) VALUES ('u1', 'c1')")
            conn.execute("INSERT INTO context_blocks (user_id, chat_id, block_no, first_pair,"
                         " last_pair, state, summary, updated_at) VALUES"
                         " ('u1', 'c1', 1, 1, 5, 'ACTIVE', 'one', %(t)s),"
                         " ('u1', 'c1', 2, 6, 10, 'ACTIVE', 'two', %(t)s),"
                         " ('u1', 'c1', 3, 11, 40, 'PENDING', NULL, %(t)s)", {"t": T0})
            conn.commit()
            migrate(conn)
            assert conn.execute("SELECT sum(pairs)::int FROM chat_pairs").fetchall() == [(15,)]
            assert conn.execute("SELECT block_no, first_id, last_id FROM context_blocks"
                                " ORDER BY block_no").fetchall() == [(1, 1, 11), (2, 12, 21)]
        with Database(url, min_size=1, max_size=2) as db:
            moved = Client(db, settings=Settings(), embedder=embedder)
            with db.connection() as conn:
                n, units = moved.window.units(conn, Scope(user_id="u1", chat_id="c1"))
            assert coverage_problems(units, n) == [] and n == 15
            moved.blocks.run(NIGHT)
            with db.connection() as conn:
                n, units = moved.window.units(conn, Scope(user_id="u1", chat_id="c1"))
            assert coverage_problems(units, n) == []
            assert [(u.kind, u.first_pair, u.last_pair) for u in units][-1] == ("raw", 11, 15)


def test_a_restore_moves_the_blocks_to_their_messages_new_ids(client: Client) -> None:
    said(client, "c1", 33)
    client, _ = job(client, max_active_blocks=100)
    client.blocks.run(NIGHT)
    before = [(b[0], b[1], b[3]) for b in blocks_of(client)]
    assert len(before) == 5
    exported = client.export_user(U)
    client.erase_user(U)
    said(client, "c2", 5)  # ids move on past the exported ones
    client.erase_user(U)
    client.import_file("".join(dump(exported)).encode())
    after = blocks_of(client)
    assert [(b[0], b[1], b[3]) for b in after] == before
    with client.db.connection() as conn:
        ids = [r[0] for r in conn.execute(
            "SELECT id FROM messages WHERE user_id = %s AND chat_id = 'c1' ORDER BY id",
            (U,)).fetchall()]
    for _, _, first_id, _, last_id in after:
        assert first_id in ids and last_id in ids and first_id <= last_id
    covered_once(client, "c1")


def blocks_of(client: Client) -> list[tuple[int, int, int, str, int]]:
    with client.db.connection() as conn:
        return [(b["first_pair"], b["last_pair"], b["first_id"], b["summary"] or "",
                 b["last_id"])
                for b in store.list_blocks(conn, Scope(user_id=U, chat_id="c1"))]
