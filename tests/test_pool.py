"""The pool's shortlist: the gate decides on it exactly as on the whole chat, and the pool
stays in step with the writer's changes."""

from __future__ import annotations

import random

import numpy as np
import pytest

from engrammar import LocalEmbedder
from engrammar.models import DEFAULT_SURFACE, Memory, MemoryType, Op, OpKind, Tense
from engrammar.settings import GateSettings
from engrammar.write._gate import Gate
from engrammar.write._pool import Pool
from engrammar.write._target import Candidate
from tests.conftest import T0

CITIES = ("Berlin", "Munich", "Lisbon", "Porto", "Vienna", "Prague", "Oslo", "Madrid")
THINGS = ("jazz", "green tea", "spicy ramen", "sourdough bread", "sci-fi novels", "podcasts",
          "early mornings", "board games", "dark chocolate", "espresso", "gardening", "chess")
NAMES = ("Dana", "Omar", "Lena", "Priya", "Jonas", "Mia", "Tomas", "Nora")
RELATIVES = ("sister", "brother", "partner", "daughter", "son", "best friend")
TASKS = ("call the bank", "finish the tax return", "book the flights", "renew the passport",
         "visit the dentist", "fix the bike", "write to the landlord", "plan the party")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def fact(r: random.Random, i: int) -> tuple[MemoryType, str, str | None]:
    """A statement of a long chat: many alike, as a user's memories are."""
    pick = r.randrange(6)
    if pick == 0:
        return MemoryType.preference, f"Likes {r.choice(THINGS)}", None
    if pick == 1:
        rel = r.choice(RELATIVES)
        return MemoryType.profile, f"Has a {rel} named {r.choice(NAMES[:3])}", f"family:{rel}"
    if pick == 2:
        return (MemoryType.episodic, f"Went to {r.choice(CITIES)} with {r.choice(NAMES)} on "
                f"{r.choice(DAYS)} number {i}", None)
    if pick == 3:
        return MemoryType.open_loop, f"Plans to {r.choice(TASKS)} on {r.choice(DAYS)}", None
    if pick == 4:
        return MemoryType.profile, f"Lives in {r.choice(CITIES[:3])}", None
    return MemoryType.preference, f"Likes {r.choice(THINGS)} with {r.choice(NAMES)}", None


def proposal(r: random.Random, said: list[str]) -> Op:
    """An op as an extractor proposes it: restated, paraphrased, opposite, new, closing,
    reported in the past tense, a change aimed at no memory or at the wrong one."""
    pick = r.randrange(11)
    if pick == 7:
        return Op(op=OpKind.add, type=MemoryType.episodic, tense=Tense.past,
                  content=f"Did {r.choice(TASKS)} at last", confidence=0.8)
    if pick == 8:
        return Op(op=OpKind.update, content=f"Moved to {r.choice(CITIES)}", confidence=0.8,
                  target=r.choice(("m9", None)))
    if pick == 9:
        return Op(op=OpKind.reinforce, content=r.choice(said), target="#1", confidence=0.8)
    if pick == 10:
        return Op(op=OpKind.close_loop, content=f"Watched a film with {r.choice(NAMES)}",
                  confidence=0.8)
    if pick == 0:
        return Op(op=OpKind.add, type=MemoryType.preference, content=r.choice(said).lower(),
                  confidence=0.8)
    if pick == 1:
        return Op(op=OpKind.add, type=MemoryType.profile,
                  content=f"Is based in {r.choice(CITIES)}", confidence=0.8)
    if pick == 2:
        return Op(op=OpKind.add, type=MemoryType.preference,
                  content=f"Doesn't like {r.choice(THINGS)}", confidence=0.8)
    if pick == 3:
        rel = r.choice(RELATIVES)
        return Op(op=OpKind.add, type=MemoryType.profile, slot=f"family:{rel}",
                  content=f"Has a {rel} named {r.choice(NAMES)}", confidence=0.8)
    if pick == 4:
        return Op(op=OpKind.close_loop, content=f"Finally did {r.choice(TASKS)}",
                  confidence=0.8)
    if pick == 5:
        return Op(op=OpKind.add, type=MemoryType.preference, content=r.choice(said) + "!",
                  confidence=0.8)
    return Op(op=OpKind.add, type=MemoryType.preference,
              content=f"Likes {r.choice(THINGS)} on {r.choice(DAYS)}", confidence=0.8)


@pytest.fixture(scope="module")
def chat(embedder: LocalEmbedder) -> tuple[list[Candidate], list[Op], np.ndarray]:
    r = random.Random(13)
    facts = [fact(r, i) for i in range(600)]
    texts = [t for _, t, _ in facts]
    memories = [Memory(id=i + 1, user_id="u1", chat_id="c1", type=kind, content=text,
                       confidence=0.8, salience=0.6, surface=DEFAULT_SURFACE[kind], slot=slot,
                       created_at=T0, updated_at=T0)
                for i, (kind, text, slot) in enumerate(facts)]
    vectors = embedder.embed(texts)
    ops = [proposal(r, texts) for _ in range(300)]
    op_vectors = embedder.embed([op.content for op in ops])
    return [Candidate(m, v) for m, v in zip(memories, vectors, strict=True)], ops, op_vectors


def test_shortlist_decides_as_the_whole_chat(
        chat: tuple[list[Candidate], list[Op], np.ndarray]) -> None:
    candidates, ops, vectors = chat
    gate = Gate(GateSettings())
    pool = Pool(candidates, gate.s)
    codes = set()
    sizes = []
    for op, vector in zip(ops, vectors, strict=True):
        whole = gate.decide(op, vector, candidates)
        shortlist = pool.shortlist(op, vector)
        sizes.append(len(shortlist))
        assert gate.decide(op, vector, shortlist) == whole, op
        codes.add(whole.code)
    # The ops exercise the rules the shortlist must cover, and it is short.
    assert {"duplicate", "same_slot", "opposite", "ok", "closes_loop", "found_target",
            "redecided"} <= codes
    assert np.median(sizes) < 60


def test_targeted_ops_shortlist_their_target(
        chat: tuple[list[Candidate], list[Op], np.ndarray]) -> None:
    candidates, _, _ = chat
    pool = Pool(candidates, GateSettings())
    op = Op(op=OpKind.update, target="m2", content="Lives in Oslo", confidence=0.8)
    assert 7 in [c.memory.id for c in pool.shortlist(op, None, {"m2": 7})]
    # Aimed at no memory, a statement still gets what it needs to be decided as an add: the
    # memories of its template ("Lives in ...", one value at a time) among them.
    lives = {c.memory.id for c in candidates if c.memory.content.startswith("Lives in")}
    assert lives <= {c.memory.id for c in pool.shortlist(op, None, {"m3": 7})}
    gate = Gate(GateSettings())
    assert gate.decide(op, None, pool.shortlist(op, None, {"m3": 7}), {"m3": 7}) == \
        gate.decide(op, None, candidates, {"m3": 7})
    bare = Op(op=OpKind.update, target="m2", confidence=0.8)
    assert [c.memory.id for c in pool.shortlist(bare, None, {"m2": 7})] == [7]
    by_id = Op(op=OpKind.reinforce, target="#9", confidence=0.8)
    assert [c.memory.id for c in pool.shortlist(by_id, None)] == [9]
    forget = Op(op=OpKind.forget, content="the bank", confidence=0.8)
    assert len(pool.shortlist(forget, None)) == len(candidates)
    # With no vector, a resolution can only close a loop it shares a word with.
    close = Op(op=OpKind.close_loop, content="Called the bank at last", confidence=0.8)
    loops = [c.memory.id for c in candidates if c.memory.type is MemoryType.open_loop
             and "bank" in c.memory.content]
    assert loops and [c.memory.id for c in pool.shortlist(close, None)] == loops


def test_pool_follows_the_writers_changes(
        chat: tuple[list[Candidate], list[Op], np.ndarray]) -> None:
    candidates, ops, vectors = chat
    gate = Gate(GateSettings())
    pool = Pool(candidates[:20], gate.s, top_k=4)
    mirror = list(candidates[:20])
    for i, cand in enumerate(candidates[20:200]):
        pool.add(cand)
        mirror.append(cand)
        if i % 3 == 0:  # superseded or closed
            victim = mirror.pop(i % len(mirror))
            pool.drop(victim.memory.id)
        if i % 5 == 0:  # reinforced
            j = i % len(mirror)
            changed = mirror[j].memory.model_copy(update={"reinforce_count": 1})
            mirror[j] = Candidate(changed, mirror[j].vector)
            pool.replace(changed)
    assert [c.memory for c in pool] == [c.memory for c in mirror]
    assert len(pool) == len(mirror)
    for op, vector in zip(ops[:80], vectors[:80], strict=True):
        assert gate.decide(op, vector, pool.shortlist(op, vector)) == \
            gate.decide(op, vector, mirror), op
