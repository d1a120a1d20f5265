from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from engrammar import Client, Database, LocalEmbedder, Op, Scope, Settings
from engrammar.errors import InvalidInput, LLMError
from engrammar.extract._summarizer import ExtractiveSummarizer, Period
from engrammar.models import Scope as ScopeModel
from engrammar.recall._assembler import MIN_BUDGET
from engrammar.recall._window import coverage_problems
from engrammar.scheduler import _blocks as blocks
from tests.conftest import T0

U, C = "u1", "c1"
SCOPE = Scope(user_id=U, chat_id=C)


def turn(client: Client, i: int, at: datetime, extra: str = "") -> None:
    client.record(U, C, "user", f"Question {i}: how should we handle step {i}? {extra}", at)
    client.record(U, C, "assistant", f"For step {i}, do the obvious thing.", at)


def check_coverage(client: Client) -> None:
    with client.db.connection() as conn:
        n, units = client.window.units(conn, SCOPE)
    assert coverage_problems(units, n) == []
    compiled = client.compile(U, C, "next question", now=T0 + timedelta(days=1),
                              budget_tokens=100_000, record=False)
    covered = [(c.first_pair, c.last_pair) for c in compiled.coverage]
    pairs = [p for a, b in covered for p in range(a, b + 1)]
    assert pairs == list(range(1, n + 1))
    # With room for everything, everything is in the prompt.
    assert all(c.included for c in compiled.coverage)


def test_blocks_fold_old_pairs_and_keep_the_tail_raw(client: Client) -> None:
    for i in range(1, 18):
        turn(client, i, T0 + timedelta(minutes=i))
    report = blocks.run(client, T0 + timedelta(hours=1))
    # 17 pairs, the last 4 stay raw: pairs 1-10 fold into two blocks of 5.
    assert (report.created, report.prepared, report.activated) == (2, 2, 2)
    with client.db.connection() as conn:
        _, units = client.window.units(conn, SCOPE)
    # The raw pairs are one stretch, not an object per pair.
    assert [(u.kind, u.first_pair, u.last_pair) for u in units] == [
        ("summary", 1, 5), ("summary", 6, 10), ("raw", 11, 17)]
    check_coverage(client)
    again = blocks.run(client, T0 + timedelta(hours=2))
    assert (again.created, again.prepared, again.activated) == (0, 0, 0)


def test_many_active_blocks_merge_and_archive_their_children(client: Client) -> None:
    for i in range(1, 45):
        turn(client, i, T0 + timedelta(minutes=i))
    first = blocks.run(client, T0 + timedelta(hours=1))
    # 40 pairs folded into 8 blocks, 4 raw; the 7th active block set off a merge of the
    # oldest 4 in the same run, so no more than 6 are ever active for a turn to read.
    assert (first.created, first.merged, first.activated) == (8, 1, 9)
    second = blocks.run(client, T0 + timedelta(hours=2))
    assert (second.created, second.merged, second.activated) == (0, 0, 0)
    with client.db.connection() as conn:
        from engrammar import store
        rows = store.list_blocks(conn, SCOPE)
    archived = [b for b in rows if b["state"] == "ARCHIVED"]
    assert [(b["first_pair"], b["last_pair"]) for b in archived] == [
        (1, 5), (6, 10), (11, 15), (16, 20)]
    assert any(b["state"] == "ACTIVE" and (b["first_pair"], b["last_pair"]) == (1, 20)
               for b in rows)
    check_coverage(client)


class Flaky:
    """A summarizer that fails (like a model that errors) or dies (like a killed worker)."""

    name = "flaky"

    def __init__(self, inner: ExtractiveSummarizer) -> None:
        self.inner = inner
        self.mode = "ok"

    def summarize(self, period: Period, texts: Sequence[str], now: datetime,
                  scope: ScopeModel | None = None) -> str:
        if self.mode == "fail":
            raise LLMError("the model is down", chat_id=C)
        if self.mode == "kill":
            raise KeyboardInterrupt
        return self.inner.summarize(period, texts, now, scope)


def test_coverage_invariant_under_random_interleavings(clean: Database,
                                                       embedder: LocalEmbedder) -> None:
    base = Settings()
    base.context.block_pairs = 2
    base.context.raw_pairs = 1
    base.context.max_active_blocks = 2
    base.context.merge_blocks = 2

    class Interleavings(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            with clean.connection() as conn:
                conn.execute("TRUNCATE messages, chats, context_blocks, memories, recalls")
            self.client = Client(clean, settings=base, embedder=embedder)
            self.flaky = Flaky(ExtractiveSummarizer(self.client.counter))
            self.client.blocks.summarizer = self.flaky
            self.turns = 0
            self.now = T0

        def _tick(self) -> datetime:
            self.now += timedelta(minutes=1)
            return self.now

        @rule(n=st.integers(min_value=1, max_value=3))
        def record_pairs(self, n: int) -> None:
            for _ in range(n):
                self.turns += 1
                turn(self.client, self.turns, self._tick())

        @rule()
        def create(self) -> None:
            self.client.blocks.create(SCOPE, self._tick())

        @rule(mode=st.sampled_from(["ok", "fail", "kill"]))
        def prepare(self, mode: str) -> None:
            from engrammar.nightly._blocks import BlocksReport
            self.flaky.mode = mode
            try:
                self.client.blocks.prepare_one(self._tick(), BlocksReport(now=self.now))
            except KeyboardInterrupt:
                pass  # the worker died inside its transaction: nothing of it stays
            self.flaky.mode = "ok"

        @rule()
        def activate(self) -> None:
            from engrammar.nightly._blocks import BlocksReport
            self.client.blocks.activate_one(self._tick(), BlocksReport(now=self.now))

        @rule()
        def whole_job(self) -> None:
            blocks.run(self.client, self._tick())

        @invariant()
        def every_pair_exactly_once(self) -> None:
            check_coverage(self.client)

    Interleavings.TestCase.settings = settings(
        max_examples=25, stateful_step_count=25, deadline=None,
        suppress_health_check=list(HealthCheck))
    Interleavings.TestCase().runTest()


def test_budget_ceiling_and_determinism(client: Client) -> None:
    client.apply(U, C, [Op(op="add", type="profile", content="Is allergic to penicillin",
                           pinned=True)], now=T0)
    for i in range(1, 30):
        turn(client, i, T0 + timedelta(minutes=i), extra="log line " * 40)
    blocks.run(client, T0 + timedelta(hours=1))
    for budget in (60, 120, 300, 800, 2000, 8000):
        a = client.compile(U, C, "What should I avoid taking?", now=T0 + timedelta(hours=2),
                           budget_tokens=budget, record=False)
        b = client.compile(U, C, "What should I avoid taking?", now=T0 + timedelta(hours=2),
                           budget_tokens=budget, record=False)
        assert a.tokens <= budget, (budget, a.tokens)
        assert a.to_json() == b.to_json()
        assert a.messages[-1] == {"role": "user", "content": "What should I avoid taking?"} \
            or budget < 100
        # The pinned needle is in the prompt at every budget that can hold a memory at all.
        if budget >= 120:
            assert any("penicillin" in m["content"] for m in a.messages), budget


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(budget=st.integers(min_value=0, max_value=3000),
       message=st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                       min_size=1, max_size=400))
# Found by CI: the least budget, where the system prompt's share left the message no room,
# and a message of one word too long to fit whole.
@example(budget=MIN_BUDGET, message="0")
@example(budget=MIN_BUDGET + 1, message="Pneumonoultramicroscopicsilicovolcanoconiosis" * 3)
def test_estimate_never_exceeds_budget(client: Client, budget: int, message: str) -> None:
    if not client.memories(U, C):
        client.apply(U, C, [Op(op="add", type="profile", content="Lives in Lisbon, Portugal",
                               pinned=True)], now=T0)
        for i in range(1, 12):
            turn(client, i, T0 + timedelta(minutes=i))
        blocks.run(client, T0 + timedelta(hours=1))
    if budget < MIN_BUDGET:
        with pytest.raises(InvalidInput, match="cannot hold"):
            client.compile(U, C, message, now=T0, budget_tokens=budget, record=False)
        return
    compiled = client.compile(U, C, message, now=T0 + timedelta(hours=2), budget_tokens=budget,
                              system="Be brief.", record=False)
    assert compiled.tokens <= budget
    assert compiled.messages[-1]["role"] == "user" and compiled.messages[-1]["content"]


def test_a_nul_or_a_lone_surrogate_is_refused_before_anything_is_noted(client: Client
                                                                       ) -> None:
    from engrammar import store
    turn(client, 1, T0)
    with pytest.raises(InvalidInput, match="NUL"):
        client.compile(U, C, "hello\x00again", now=T0, record=True)
    with pytest.raises(InvalidInput, match="not valid Unicode"):
        client.compile(U, C, "hello \ud800", now=T0, record=True)
    with pytest.raises(InvalidInput, match="not valid Unicode"):
        client.recall(U, C, "hello \ud800", now=T0, record=True)
    with pytest.raises(InvalidInput, match="not valid Unicode"):
        client.record(U, C, "user", "hello \ud800", at=T0)
    with client.db.connection() as conn:
        assert store.list_prompts(conn, SCOPE) == []
        assert conn.execute("SELECT count(*) FROM recalls").fetchone() == (0,)


def test_observe_lifts_decisions_at_once(client: Client) -> None:
    result = client.observe(U, C, "Sure.\nDecision: we deploy on Fridays only\n"
                                  "Constraint: no new dependencies\nOpen: benchmark the cache",
                            now=T0)
    assert result.applied == 3
    kinds = sorted((m.type.value, m.surface.value) for m in client.memories(U, C))
    assert kinds == [("episodic", "factcheck"), ("open_loop", "continue"),
                     ("protocol", "adapt")]
    compiled = client.compile(U, C, "when do we ship releases?", now=T0, record=False)
    assert any("Fridays" in m["content"] for m in compiled.messages)


def test_record_keeps_what_the_model_saw_apart_from_model_calls(client: Client) -> None:
    from engrammar import store
    turn(client, 1, T0)
    compiled = client.compile(U, C, "hello again", now=T0, record=True)
    with client.db.connection() as conn:
        prompts = store.list_prompts(conn, SCOPE)
        calls = store.list_llm_calls(conn, SCOPE)
    assert len(prompts) == 1 and calls == []  # a prompt is not a model call
    assert prompts[0]["messages"] == compiled.messages
    assert prompts[0]["messages"][-1]["content"] == "hello again"
    assert prompts[0]["tokens"] == compiled.tokens
    assert prompts[0]["layers"] == compiled.layers
    assert sum(compiled.layers.values()) + 3 == compiled.tokens  # 3: the reply's priming


def test_recall_and_compile_render_summaries_alike(client: Client) -> None:
    from engrammar import store
    from engrammar.recall._block import summary_line
    with client.db.connection() as conn:
        conn.execute(
            "INSERT INTO summaries (user_id, chat_id, period, start_at, end_at, content,"
            " tokens, source_hash, updated_at) VALUES (%s, %s, 'day', %s, %s, %s, 5, 'x', %s)",
            (U, C, T0, T0 + timedelta(days=1), "Talked about moving flats.", T0))
        store.ensure_chat(conn, SCOPE)
    client.apply(U, C, [Op(op="add", type="profile", content="Lives in Lisbon")], now=T0)
    now = T0 + timedelta(days=1)
    block = client.recall(U, C, "how was my week?", now=now, record=False)
    compiled = client.compile(U, C, "how was my week?", now=now, record=False)
    line = summary_line(f"day of {T0.date().isoformat()}", "Talked about moving flats.")
    memory = next(m["content"] for m in compiled.messages if m["content"].startswith("<memory>"))
    assert memory == block.text and line in memory  # one rendering, whichever call
    assert block.layers["summaries"] > 0 and compiled.layers["summaries"] > 0
    assert sum(block.layers.values()) == block.tokens

def test_many_pinned_memories_and_summaries_stay_within_budget(client: Client) -> None:
    from engrammar.scheduler import _summaries as summaries

    ops = [Op(op="add", type="profile", content=f"Pinned fact number {i} about the user",
              pinned=True) for i in range(200)]
    client.apply(U, C, ops, now=T0)
    for i in range(1, 12):
        turn(client, i, T0 + timedelta(minutes=i))
    summaries.run(client, T0 + timedelta(days=2))
    blocks.run(client, T0 + timedelta(days=2))
    for budget in (100, 400, 800, 2000):
        compiled = client.compile(U, C, "what do you know?", now=T0 + timedelta(days=2),
                                  budget_tokens=budget, record=False)
        assert compiled.tokens <= budget, (budget, compiled.tokens)


def test_a_block_activated_after_a_merge_over_it_retires(client: Client) -> None:
    from engrammar import store
    from engrammar.nightly._blocks import BlocksReport

    for i in range(1, 7):
        turn(client, i, T0 + timedelta(minutes=i))
    now = T0 + timedelta(hours=1)
    with client.db.connection() as conn:
        first = store.insert_block(conn, SCOPE, 1, 5, now)
        store.update_block(conn, SCOPE, first, {"state": "PREPARED", "summary": "one to five"})
        # Another worker merged 1-5 into a wider block and activated it meanwhile.
        merged = store.insert_block(conn, SCOPE, 1, 5, now)
        store.update_block(conn, SCOPE, merged, {"state": "ACTIVE", "summary": "merged"})
    assert client.blocks.activate_one(now, BlocksReport(now=now))
    with client.db.connection() as conn:
        states = {b["block_no"]: b["state"] for b in store.list_blocks(conn, SCOPE)}
    assert states == {first: "ARCHIVED", merged: "ACTIVE"}
    check_coverage(client)


def test_a_turn_takes_one_connection(client: Client) -> None:
    turn(client, 1, T0)
    client.apply(U, C, [Op(op="add", type="profile", content="Lives in Lisbon")], now=T0)
    for call in (lambda: client.compile(U, C, "where do I live?", now=T0, record=True),
                 lambda: client.recall(U, C, "where do I live?", now=T0, record=True)):
        before = client.db.pool.get_stats()["requests_num"]
        call()
        assert client.db.pool.get_stats()["requests_num"] - before == 1
