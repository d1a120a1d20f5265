"""Phase 1, extraction and retrieval: one fixture's conversation replayed on its own clock,
with the night jobs after each day, and every expectation checked against the store and the
blocks recall builds."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial

from engrammar.evals._fixtures import (
    Expected,
    Fixture,
    InBlock,
    Match,
    RecallCheck,
    RepeatCheck,
    Seed,
    StatusCheck,
    Turn,
)
from engrammar.evals._matching import describe_decision, has_keyword, ranked_ids, render_block
from engrammar.evals._metrics import FixtureResult, K, hit_at_k
from engrammar.evals._session import Session
from engrammar.models import Decision, Memory, MemoryType, Op, OpKind
from engrammar.recall._block import CLOSE, OPEN, Block, quote
from engrammar.write._writer import LIVE

# A Monday morning. Turns of day d come from 09:00 on, one a minute; its night runs at 23:00.
START = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
NIGHT = timedelta(hours=14)
SEED_SOURCE = "eval:seed"


def at(day: float) -> datetime:
    return START + timedelta(days=day)


def night_of(day: int) -> datetime:
    return at(day) + NIGHT


def turn_times(fixture: Fixture) -> list[datetime]:
    """When each turn is said: its day, from 09:00 on, a minute after the turn before."""
    return [at(turn.day) + timedelta(minutes=n) for n, turn in enumerate(fixture.conversation)]


@dataclass
class Night:
    day: int
    now: datetime
    # The turns extracted this night, each with its time.
    turns: list[tuple[Turn, datetime]]
    # Live memories of each chat after this night: the seed of its duplicate replay.
    after: dict[str, list[Memory]]
    # Open loops closed by a resolution by then: the replay's store holds them too, since
    # the gate tells a resolution read again from a new event by them.
    resolved: dict[str, list[Memory]] = field(default_factory=dict)


class Conversation:
    """Phase 1 for one fixture: replay, then check."""

    def __init__(self, session: Session, fixture: Fixture, user: str,
                 result: FixtureResult) -> None:
        self.r = session
        self.client = session.client
        self.fx = fixture
        self.user = user
        self.result = result
        self.chats = fixture.chats()
        self.nights: list[Night] = []
        self.decisions: dict[str, list[Decision]] = {c: [] for c in self.chats}
        self.blocks: list[tuple[str, str, datetime, Block]] = []  # chat, query, now, block
        self.clock = night_of(fixture.last_day())
        self.latest = self.clock

    def fail(self, reason: str) -> None:
        self.result.failures.append(reason)
        self.r.log(f"  FAIL {reason}")

    def memories(self) -> list[Memory]:
        """Every memory of the fixture's user once: each chat's, and the user-wide ones
        (listed by every chat that shares them)."""
        found = {m.id: m for chat in self.chats for m in self.client.memories(self.user, chat)}
        return [found[i] for i in sorted(found)]

    # -- the timeline -----------------------------------------------------------------------

    def run(self) -> None:
        fx = self.fx
        events: list[tuple[datetime, int, int, Callable[[datetime], None]]] = []
        for n, seed in enumerate(fx.seed):
            events.append((at(seed.day) - timedelta(hours=1), 0, n, partial(self.seed, seed)))
        for n, (turn, when) in enumerate(zip(fx.conversation, turn_times(fx), strict=True)):
            events.append((when, 1, n, partial(self.say, turn)))
        for day in sorted({t.day for t in fx.conversation}):
            events.append((night_of(day), 3, day, partial(self.run_night, day)))
        default = at(fx.last_day() + 1)
        for n, check in enumerate(fx.expect.recall):
            when = default if check.day is None else at(check.day)
            events.append((when, 2, n, partial(self.recall, check)))
        for n, rep in enumerate(fx.expect.repeat):
            when = default if rep.day is None else at(rep.day)
            events.append((when, 2, 1000 + n, partial(self.repeat, rep)))
        for chat in fx.scopes.private:
            self.client.set_private(self.user, chat)
        for when, _, _, action in sorted(events, key=lambda e: (e[0], e[1], e[2])):
            self.latest = max(self.latest, when)
            action(when)
        self.check_extraction()
        for later in fx.expect.later:
            self.clock += timedelta(days=later.days)
            self.r.log(f"-- the clock moves {later.days:g} days, to {self.clock:%Y-%m-%d %H:%M}")
            self.r.night(self.user, self.chats, self.clock)
            memories = self.memories()
            for status in later.statuses:
                self.check_status(status, memories, f"after {later.days:g} more days")
            self.latest = self.clock + timedelta(minutes=1)
            for check in later.recall:
                self.recall(check, self.latest)
        self.check_never_in_block()

    def seed(self, seed: Seed, now: datetime) -> None:
        op = Op(op=OpKind.add, type=seed.type, content=seed.content, surface=seed.surface,
                pinned=seed.pinned, salience=seed.salience, confidence=seed.confidence,
                slot=seed.slot, due=None if seed.due_day is None else at(seed.due_day))
        applied = self.client.apply(self.user, seed.chat, [op], source=SEED_SOURCE, now=now)
        for d in applied.decisions:
            self.r.log(f"  seed {seed.chat}: {describe_decision(d)}")
            if not (d.accepted and d.op is not None and d.op.op is OpKind.add):
                self.fail(f"seed {seed.content!r} not added: {d.code}")

    def say(self, turn: Turn, now: datetime) -> None:
        self.client.record(self.user, turn.chat, turn.role.value, turn.text, at=now)
        self.r.log(f"  day {turn.day} {turn.role.value}@{turn.chat}: {turn.text}")

    def run_night(self, day: int, now: datetime) -> None:
        self.r.log(f"  night {day} ({now:%Y-%m-%d %H:%M}): extract, lifecycle, summaries")
        for chat, decisions in self.r.night(self.user, self.chats, now).items():
            self.decisions[chat].extend(decisions)
        after = {c: self.client.memories(self.user, c, LIVE) for c in self.chats}
        resolved = {c: [m for m in self.client.memories(self.user, c, ["archived"])
                        if m.type is MemoryType.open_loop and "resolution" in m.metadata]
                    for c in self.chats}
        turns = [(t, when) for t, when in zip(self.fx.conversation, turn_times(self.fx),
                                               strict=True) if t.day == day]
        self.nights.append(Night(day, now, turns, after, resolved))

    # -- recall -----------------------------------------------------------------------------

    def block(self, chat: str, query: str, now: datetime, budget: int | None = None,
              record: bool = False) -> Block:
        block = self.client.recall(self.user, chat, query, now=now, budget_tokens=budget,
                                   record=record)
        self.blocks.append((chat, query, now, block))
        self.r.log(f"  recall {chat} at {now:%Y-%m-%d %H:%M} {query!r}"
                   + (f" budget {budget}" if budget else "") + "\n" + render_block(block))
        return block

    def recall(self, check: RecallCheck, now: datetime) -> None:
        if self.fx.idle_job:
            self.r.idle(self.user, now)
        block = self.block(check.chat, check.query, now, check.budget)
        memories = self.memories()
        in_block = {i.memory_id for i in block.items if i.memory_id is not None}
        ranked = ranked_ids(block)
        label = f"recall {check.query!r}"
        for want in check.top:
            ids = [m.id for m in self.r.matcher.select(want, memories)]
            hit = hit_at_k(ranked, ids, K)
            self.result.counts.queries += 1
            self.result.counts.hits += hit
            if not hit:
                where = [ranked.index(i) + 1 for i in ids if i in ranked]
                self.fail(f"{label}: {want.describe()} not in the top {K} "
                          + (f"(rank {min(where)})" if where else
                             "(not in the block)" if ids else "(no such memory)"))
        for want_in in check.present:
            self.check_present(want_in, block, memories, label)
        for gone in check.absent:
            gone_ids = {m.id for m in self.r.matcher.select(gone, memories)}
            if not gone_ids and not self.holds_by_absence(gone):
                self.fail(f"{label}: absent check matches no stored memory: {gone.describe()}")
            elif gone_ids & in_block:
                self.fail(f"{label}: {gone.describe()} is in the block")
        if check.harmless:
            self.check_harmless(block, label)
        for words in check.not_said:
            if has_keyword(block.text, words):
                self.fail(f"{label}: the block says {words!r}")

    def holds_by_absence(self, m: Match) -> bool:
        """Whether a block check on ``m`` that matches no memory holds by that absence: the
        fixture says no memory like ``m`` may exist (``expect.absent``), or every keyword
        of ``m`` is a word of the conversation. A name the user said and the pipeline did
        not store ("my ex is off limits. Darragh." kept as "Never mention their ex"; "Mia"
        corrected to "Nia" in the same night, so never stored) is kept out of every block
        by not being there. A keyword said nowhere in the conversation is likely wrong,
        and a check on it, which would check nothing, fails."""
        if any(a.keywords == m.keywords and a.similar_to == m.similar_to
               and a.type in (None, m.type) for a in self.fx.expect.absent):
            return True
        said = " ".join(turn.text for turn in self.fx.conversation)
        return bool(m.keywords) and all(has_keyword(said, k) for k in m.keywords)

    def check_present(self, want: InBlock, block: Block, memories: Sequence[Memory],
                      label: str) -> None:
        ids = {m.id for m in self.r.matcher.select(want, memories)}
        items = [i for i in block.items if i.memory_id in ids]
        if not items:
            self.fail(f"{label}: {want.describe()} not in the block")
        elif want.section is not None and all(i.section != want.section for i in items):
            self.fail(f"{label}: {want.describe()} in section {items[0].section}, "
                      f"not {want.section}")

    def check_harmless(self, block: Block, label: str) -> None:
        text = block.text
        if text.count("<memory>") != 1 or text.count(CLOSE) != 1 or not (
                text.startswith(OPEN) and text.endswith(CLOSE)):
            self.fail(f"{label}: the block's frame is broken")
        for item in block.items:
            if item.memory_id is not None and quote(item.content) not in text:
                self.fail(f"{label}: memory {item.memory_id} is not quoted as data")

    def repeat(self, check: RepeatCheck, now: datetime) -> None:
        spoken: list[bool] = []
        for n, query in enumerate(check.queries):
            block = self.block(check.chat, query, now + timedelta(minutes=n), record=True)
            ids = {m.id for m in self.r.matcher.select(check.memory, self.memories())}
            spoken.append(any(i.memory_id in ids and i.section == "speak" for i in block.items))
        run = longest = 0
        for s in spoken:
            run = run + 1 if s else 0
            longest = max(longest, run)
        pattern = "".join("S" if s else "-" for s in spoken)
        if not any(spoken):
            self.fail(f"repeat: {check.memory.describe()} never spoken ({pattern})")
        elif longest > check.max_in_a_row:
            self.fail(f"repeat: {check.memory.describe()} spoken {longest} turns in a row "
                      f"({pattern}), more than {check.max_in_a_row}")

    # -- extraction -------------------------------------------------------------------------

    def check_extraction(self) -> None:
        memories = self.memories()
        extracted = [m for m in memories if m.metadata.get("source") != SEED_SOURCE]
        exp = self.fx.expect
        counts = self.result.counts
        counts.extracted += len(extracted)
        counts.expected += len(exp.extracted)
        for m in extracted:
            if any(self.r.matcher.select(w, [m]) for w in exp.extracted):
                counts.matched += 1
            else:
                self.fail(f"unexpected memory {m.id} {m.type.value} {m.status.value} "
                          f"{m.content!r}")
        for want in exp.extracted:
            self.check_expected(want, extracted)
        for gone in exp.absent:
            for m in self.r.matcher.select(gone, memories):
                self.fail(f"memory {m.id} {m.type.value} {m.content!r} must not exist "
                          f"({gone.describe()})")
        for status in exp.statuses:
            self.check_status(status, memories, "after the conversation")
        for rej in exp.rejected:
            found = [d for d in self.decisions[rej.chat] if not d.accepted
                     and all(has_keyword(d.proposed.content, k) for k in rej.keywords)
                     and (rej.code is None or d.code == rej.code)
                     and (rej.op is None or d.proposed.op is rej.op)]
            if not found:
                seen = [describe_decision(d) for d in self.decisions[rej.chat]
                        if all(has_keyword(d.proposed.content, k) for k in rej.keywords)]
                self.fail(f"no rejection of [{' & '.join(rej.keywords)}]"
                          + (f" ({rej.code})" if rej.code else "")
                          + (f"; the gate said: {'; '.join(seen)}" if seen else
                             "; nothing like it was proposed"))

    def check_expected(self, want: Expected, extracted: Sequence[Memory]) -> None:
        candidates = self.r.matcher.select(want, extracted)
        if candidates:
            self.result.counts.found += 1
        else:
            self.fail(f"not extracted: {want.describe()}")
            return
        if want.count is not None and len(candidates) != want.count:
            self.fail(f"{want.describe()}: {len(candidates)} memories, expected {want.count}: "
                      f"{[m.content for m in candidates]}")
        problems: list[str] = []
        for m in candidates:
            wrong = self.attributes(want, m)
            if not wrong:
                return
            problems.append(f"memory {m.id} {m.content!r}: {', '.join(wrong)}")
        self.fail(f"{want.describe()}: " + "; ".join(problems))

    def attributes(self, want: Expected, m: Memory) -> list[str]:
        wrong = []
        if want.statuses() and m.status not in want.statuses():
            wrong.append(f"status {m.status.value}")
        if want.surface is not None and m.surface is not want.surface:
            wrong.append(f"surface {m.surface.value}")
        if want.pinned is not None and m.pinned is not want.pinned:
            wrong.append(f"pinned {m.pinned}")
        if want.reinforced is not None and m.reinforce_count < want.reinforced:
            wrong.append(f"reinforced {m.reinforce_count} times")
        if want.due_day is not None and (m.due_at is None or m.due_at.date()
                                         != at(want.due_day).date()):
            wrong.append(f"due {m.due_at.date() if m.due_at else None}")
        if want.op is not None:
            # A user-wide memory's history is read through any chat that shares it.
            chat = m.chat_id or next(c for c in self.chats if self.fx.shares(c))
            history = self.client.history(self.user, chat, m.id)
            first = history[0].op if history else None
            if first != want.op.value:
                wrong.append(f"created by {first}, not {want.op.value}")
        return wrong

    def check_status(self, check: StatusCheck, memories: Sequence[Memory], when: str) -> None:
        found = self.r.matcher.select(check, memories)
        allowed = check.statuses()
        if not found:
            self.fail(f"{when}: no memory {check.describe()}")
        for m in found:
            if m.status not in allowed:
                self.fail(f"{when}: memory {m.id} {m.content!r} is {m.status.value}, "
                          f"expected {'/'.join(s.value for s in allowed)}")

    def check_never_in_block(self) -> None:
        memories = self.memories()
        for never in self.fx.expect.never_in_block:
            found = self.r.matcher.select(never, memories)
            if not found:
                if not self.holds_by_absence(never):
                    self.fail(f"never_in_block matches no stored memory: {never.describe()}")
                continue
            # The strongest invitation: the memory's own words as the query.
            for m in found:
                self.block(never.chat, m.content, self.latest + timedelta(minutes=1))
            ids = {m.id for m in found}
            quoted = {quote(m.content) for m in found}
            for chat, query, when, block in self.blocks:
                if chat != never.chat or when < at(never.since_day):
                    continue
                if ids & {i.memory_id for i in block.items}:
                    self.fail(f"{never.describe()} in the block for {query!r}")
                elif any(q in block.text for q in quoted):
                    self.fail(f"{never.describe()}: its text is in the block for {query!r}")
