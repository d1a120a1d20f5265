"""Which memory a proposed op is about, for the write gate: the one it names, the open loop a
past-tense report settles, the memory a change aimed at nothing (or at the wrong memory) is
about, and the memory a resolution or a forget refers to. Pure, no I/O: the gate decides what
an op does, this finds what it does it to.

Closeness is cosine over unit vectors, and a cosine alone says little about what a statement
is about: two statements that share the user's name and a shape score high on those alone.
So most matches also need a content word in common beyond the subject, and only a cosine
well above that goes without one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from rapidfuzz import fuzz

from engrammar.models import Memory, MemoryType, Op, OpKind
from engrammar.settings import GateSettings
from engrammar.write._statement import (
    does_by_name,
    sentence_count,
    shares_beyond_subject,
    shares_content_word,
    shares_name,
    shares_stem,
    thing_done,
)


@dataclass(frozen=True)
class Candidate:
    """A memory the gate compares against, with its embedding (unit vector)."""

    memory: Memory
    vector: np.ndarray | None


def resolve(op: Op, pool: Sequence[Candidate],
            handles: Mapping[str, int] | None) -> Candidate | None:
    """The memory of the pool ``op.target`` names: by handle (m1, m2) when the caller gives
    handles, else by id."""
    if not op.target:
        return None
    ref = op.target.strip()
    memory_id: int | None = None
    if handles is not None and ref in handles:
        memory_id = handles[ref]
    elif handles is None and ref.lstrip("#").isdigit():
        # Ids only from callers that pass no handles (imports, admins): a model that
        # writes "2" for m2 must not hit whichever memory has id 2.
        memory_id = int(ref.lstrip("#"))
    return next((c for c in pool if c.memory.id == memory_id), None)


def loop_for(op: Op, vector: np.ndarray | None, pool: Sequence[Candidate],
             threshold: float, s: GateSettings) -> Candidate | None:
    """The open loop a report most likely settles: its cosine reaches ``threshold``, or
    close_loop_match with a content word in common beyond the first. A report of several
    sentences shares some word with most plans (LoCoMo dev: "took the first step towards
    becoming a mom" closed "took her first steps"), so it needs the cosine, or its first
    sentence, the thing done, naming the name the plan writes ("so I did the ielts!! 7.5
    overall. now how do I start the NMC registration" of "Is sitting the IELTS")."""
    best: tuple[float, Candidate] | None = None
    several = sentence_count(op.content) > 1
    for cand, cos in zip(pool, cosines(vector, pool), strict=True):
        if cand.memory.type is not MemoryType.open_loop or stated_by(op, cand.memory):
            continue
        loop = cand.memory.content
        ok = cos >= threshold or (cos >= s.close_loop_match and (
            does_by_name(thing_done(op.content), loop) if several
            else shares_beyond_subject(op.content, loop)))
        if ok and (best is None or cos > best[0]):
            best = (cos, cand)
    return None if best is None else best[1]


def about(op: Op, vector: np.ndarray | None, cand: Candidate, s: GateSettings) -> bool:
    """Whether ``op.content`` is about memory ``cand``: the same slot, a content word in
    common beyond the subject (the user's name opens many statements) and change_match,
    or forget_match alone. MiniLM scores "Dana renewed her passport" 0.56 against "Dana
    promised to call her mom on Friday", on the name and the shape alone."""
    m = cand.memory
    if op.slot and m.slot == op.slot:
        return True
    cos = cosines(vector, [cand])[0]
    if vector is None or cand.vector is None:
        return shares_beyond_subject(op.content, m.content)
    # (a contradiction may name the doing the memory's verb names: "Quit smoking" of
    # "Smokes about ten a day")
    shared = shares_beyond_subject(op.content, m.content) or (
        op.op is OpKind.contradict and shares_stem(op.content, m.content))
    # (the cosine first: a name is looked for only where it could decide)
    named = cos >= s.change_named_match and op.op is OpKind.contradict and shares_name(
        op.content, m.content)
    return cos >= s.forget_match or (cos >= s.change_match and shared) or named


def changed(op: Op, vector: np.ndarray | None, pool: Sequence[Candidate],
            s: GateSettings) -> Candidate | None:
    """The memory a change aimed at nothing (or at the wrong memory) is about: one of
    its slot and type, else the closest memory it is about (``about``). Never one written
    from the change's own messages: a message does not change what it says ("did my first
    half marathon sunday ... only started running after I gave up the durries": the
    giving up is no change of the race)."""
    said = set(op.evidence)
    pool = [cand for cand in pool if not said & set(cand.memory.source_message_ids)]
    if op.slot:
        for cand in pool:
            if cand.memory.slot == op.slot and (op.type is None
                                                or cand.memory.type == op.type):
                return cand
    best: tuple[float, Candidate] | None = None
    for cand, cos in zip(pool, cosines(vector, pool), strict=True):
        if vector is None or cand.vector is None:
            continue  # a change needs a measure of closeness, not a shared word alone
        if op.op is OpKind.contradict and (
                cand.memory.type is MemoryType.open_loop
                or (op.type is not None and cand.memory.type is not op.type)):
            # (a plan is closed, not contradicted; and a contradiction that names its
            # type contradicts a memory of that type: "sold the Fiesta" a thing had,
            # not the event of the sale)
            continue
        if about(op, vector, cand, s) and (best is None or cos > best[0]):
            best = (cos, cand)
    return None if best is None else best[1]


def match(op: Op, vector: np.ndarray | None, pool: Sequence[Candidate],
          kind: MemoryType | None, threshold: float, s: GateSettings,
          words_or_cosine: bool = False) -> Candidate | None:
    """The memory ``op.content`` most likely refers to, by cosine and shared words.
    With ``words_or_cosine``, a candidate needs a shared content word unless its cosine
    alone reaches ``threshold``."""
    best: tuple[float, Candidate] | None = None
    for cand, cos in zip(pool, cosines(vector, pool), strict=True):
        if kind is not None and cand.memory.type is not kind:
            continue
        partial = fuzz.partial_token_set_ratio(op.content.lower(),
                                               cand.memory.content.lower()) / 100
        shares = shares_content_word(op.content, cand.memory.content)
        score = max(cos, 0.9 * partial if shares else 0)
        if words_or_cosine:
            ok = (shares and score >= s.close_loop_match) or cos >= threshold
        else:
            ok = score >= threshold
        if ok and (best is None or score > best[0]):
            best = (score, cand)
    return None if best is None else best[1]


def stated_by(op: Op, loop: Memory) -> bool:
    """Whether an open loop rests on every message the op rests on: "booked the flights,
    still need to renew my passport before we fly" does not settle the plan it states (an
    op that cites the plan's message beside its own may)."""
    return bool(op.evidence) and set(op.evidence) <= set(loop.source_message_ids)


def cosines(vector: np.ndarray | None, pool: Sequence[Candidate]) -> list[float]:
    """Each candidate's cosine with ``vector``; 0 where either has no vector."""
    if vector is None:
        return [0.0] * len(pool)
    return [float(vector @ c.vector) if c.vector is not None else 0.0 for c in pool]
