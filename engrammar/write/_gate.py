"""The write gate: pure decisions, no I/O. Each proposed op is accepted (possibly rewritten,
say an add into a reinforce) or rejected with a reason.

Similarity alone cannot tell a duplicate from an update: with MiniLM, "user lives in Berlin"
scores 0.66 against "they're based in Berlin" and 0.67 against "user lives in Paris". So
the gate also compares the *values* of two statements (names, places, numbers: capitalised
or numeric words) and their polarity ("likes" against "doesn't like"). Two statements with
the same template and different values are one slot holding two values: the newer updates
the older. Two with the same values and close meaning are one fact: the newer reinforces.

The extractor proposes what was said; the gate decides the op against the pool, and never
drops a statement because the op the extractor guessed has no target:

- an ``add`` with ``tense`` past (a report: "I called my mum") closes the open loop it
  matches (code ``closes_loop``); with none, it is the memory it says (an episode). A
  report of several sentences says more than the plan done ("did the ielts!! 7.5 overall.
  now the NMC registration"): it closes the loop as an ``update``, the episode it tells
  superseding the plan;
- a ``close_loop`` that matches no open loop is decided as the add of its statement (an
  episode unless it names a type: code ``redecided``); with no content it is rejected;
- an ``update`` or ``contradict`` aimed at no memory, or at one its content is not about,
  finds the memory it changes: its slot, else the closest memory it is about (code
  ``found_target``); a ``reinforce`` aimed wrong, or either of them about nothing in the
  pool, is decided as an add, which may still reinforce or update what it restates;
- a resolution already on record (the words that closed a loop, said again) is rejected
  as ``already_resolved``: it is no new event.

Which memory an op is about (the one it names, the loop a report settles, the one a change
aimed wrong finds) is ``_target``'s to find; what the op then does to it is decided here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from engrammar.models import (
    DEFAULT_SURFACE,
    Decision,
    Memory,
    MemoryType,
    Op,
    OpKind,
    Surface,
    Tense,
    Verdict,
)
from engrammar.settings import GateSettings
from engrammar.write._statement import (
    RELATIONAL,
    claim,
    conflict,
    ended,
    lexical,
    names_one,
    negative,
    place_of,
    said_within,
    same_claim,
    same_text,
    sentence_count,
    single_valued,
    template,
    turns_over,
    unsigned,
    values,
    within,
)
from engrammar.write._target import (
    Candidate,
    about,
    changed,
    cosines,
    loop_for,
    match,
    resolve,
    stated_by,
)

# Types that hold one current value per slot. Events, plans and reflections accumulate:
# "visited museum 1" does not replace "visited museum 0".
STATEFUL = frozenset({MemoryType.profile, MemoryType.preference, MemoryType.protocol,
                      MemoryType.shared_lore})
# What holds while it lasts, and a statement may say is over: "Does not cycle anymore".
LASTING = frozenset({MemoryType.profile, MemoryType.preference})


class Gate:
    """Decides proposed ops against a chat's current memories (active and stale)."""

    def __init__(self, settings: GateSettings) -> None:
        self.s = settings

    # -- public ---------------------------------------------------------------------------

    def decide(self, op: Op, vector: np.ndarray | None, pool: Sequence[Candidate],
               handles: Mapping[str, int] | None = None,
               resolved: Sequence[Memory] = ()) -> Decision:
        """The decision on ``op``; ``proposed`` is always the op as it came in.
        ``resolved``: the chat's open loops already closed by a resolution (archived)."""
        decision = self._decide(op, vector, pool, handles, resolved)
        return decision.model_copy(update={"proposed": op})

    def superseded(self, ops: Sequence[Op], live: Sequence[Memory]) -> dict[int, Decision]:
        """The ops of one batch whose value a later op of the batch changes again, when a
        live memory already holds that later value, each with its rejection, by index.

        The same messages read twice (recorded again by a client that retried, a night run
        again) must change nothing; "I drive a Golf" then "sold the Golf, got a Tesla"
        would otherwise set the memory back to the Golf, then forward again. Read the
        first time, the memory holds neither and each op is decided as usual: the Golf
        is written, then updated, and kept in its history."""
        out: dict[int, Decision] = {}
        for i, op in enumerate(ops):
            if op.op not in (OpKind.add, OpKind.update) or not op.content:
                continue
            same = [o for o in ops[i + 1:] if o.op in (OpKind.add, OpKind.update)
                    and o.content and _same_slot(op, o)]
            last = claim(same[-1].content) if same else None
            if last is None or same_text(last, claim(op.content)):
                continue
            held = next((m for m in live if m.type == op.type and m.slot == same[-1].slot
                         and same_text(claim(m.content), last)), None)
            if held is not None:
                out[i] = _reject(op, "superseded",
                                 f"a later message of the batch changes this value, and "
                                 f"memory {held.id} already holds the later one")
        return out

    def _decide(self, op: Op, vector: np.ndarray | None, pool: Sequence[Candidate],
                handles: Mapping[str, int] | None, resolved: Sequence[Memory]) -> Decision:
        if op.op is OpKind.add:
            rejected = self._check_content(op)
            if rejected is not None:
                return rejected
            if is_report(op):
                loop = loop_for(op, vector, pool, self.s.report_match, self.s)
                if loop is not None and sentence_count(op.content) > 1:
                    # "Did the ielts!! 7.5 overall. Now the NMC registration": more than the
                    # plan done, the event that ends it, which stays as such.
                    m = loop.memory
                    event = MemoryType.episodic
                    return _accept(op.model_copy(update={
                        "op": OpKind.update, "type": event,
                        "surface": op.surface or DEFAULT_SURFACE[event]}), m.id,
                        "closes_loop", f"a past-tense report of open loop {m.id}: "
                        "closes it, and is kept as the event it tells")
                if loop is not None:
                    # "I called my mum": the plan it reports done is closed, and the report
                    # is the loop's resolution, not a second memory beside it.
                    m = loop.memory
                    return _accept(op.model_copy(update={"op": OpKind.close_loop}), m.id,
                                   "closes_loop", f"a past-tense report of open loop {m.id}: "
                                   "closes it")
                return self._said_again(op, resolved) or self._add(op, vector, pool)
            return self._add(op, vector, pool)
        target = resolve(op, pool, handles)
        if op.op is OpKind.close_loop:
            return self._close_loop(op, vector, pool, target, resolved)
        if op.op is OpKind.forget:
            if target is None and op.content:
                # Forgetting is destructive: a vague "forget the hospital" must not archive
                # "Works as a nurse" (cosine 0.41). A shared word, or a close paraphrase.
                target = match(op, vector, pool, None, self.s.forget_match, self.s,
                               words_or_cosine=True)
            if target is None:
                what = op.target if op.target else "no target given"
                return _reject(op, "unknown_target", f"forget: unknown target ({what})")
            return _accept(self._fill(op, target.memory), target.memory.id, "ok", "accepted")
        # update, reinforce, contradict: a statement aimed at a memory. Aimed wrong (no such
        # memory, or one about something else), it is decided against the pool as what it
        # says; a statement is never dropped for the extractor's guess of its target.
        named = op.target if op.target else "no target given"
        if target is not None and op.content and not about(op, vector, target, self.s):
            named = f"{named}, memory {target.memory.id}, is about something else"
            target = None
        found = target is None and bool(op.content) and op.op is not OpKind.reinforce
        if found:
            target = changed(op, vector, pool, self.s)
        if target is None:
            if op.op is OpKind.contradict and op.content and any(
                    isinstance(said := m.metadata.get("resolution"), str)
                    and within(op.content, said) for m in resolved):
                # "finally sold the piano": the sale closed the plan to sell, in these words
                return _reject(op, "already_resolved", "contradicts nothing: its words are "
                               "a resolution on record")
            if op.content:
                return self._redecide(op, vector, pool,
                                      f"{op.op.value}: unknown target ({named})")
            return _reject(op, "unknown_target", f"{op.op.value}: unknown target ({named})")
        if op.op is OpKind.update or (op.op is OpKind.contradict and op.content):
            # A new version of a memory keeps the memory's type unless it names another.
            op = op.model_copy(update={"type": op.type or target.memory.type})
            rejected = self._check_content(op)
            if rejected is not None:
                return rejected
        elif op.op is OpKind.contradict:
            # A contradiction with no replacement only retires its target: confidence only.
            rejected = self._check_confidence(op)
            if rejected is not None:
                return rejected
        if op.op in (OpKind.update, OpKind.contradict) and same_text(
                op.content, target.memory.content):
            # (the same night read again finds the version it wrote: no change twice)
            return _accept(op.model_copy(update={"op": OpKind.reinforce}), target.memory.id,
                           "unchanged", f"{op.op.value} restates its target: reinforced")
        if found:
            return _accept(self._fill(op, target.memory), target.memory.id, "found_target",
                           f"{op.op.value}: not aimed at memory {target.memory.id} ({named}),"
                           " but about it")
        return _accept(self._fill(op, target.memory), target.memory.id, "ok", "accepted")

    def _redecide(self, op: Op, vector: np.ndarray | None, pool: Sequence[Candidate],
                  why: str) -> Decision:
        """``op`` decided as the statement it makes: an add of its fitting type, which the
        pool may still turn into a reinforce, an update or a contradiction."""
        statement = op.model_copy(update={"op": OpKind.add, "type": fitting_type(op),
                                          "target": None})
        decided = self._check_content(statement) or self._add(statement, vector, pool)
        code = "redecided" if decided.accepted and decided.code == "ok" else decided.code
        return decided.model_copy(update={"code": code,
                                          "reason": f"{why}; as a statement: {decided.reason}"})

    # -- checks ---------------------------------------------------------------------------

    def _check_content(self, op: Op) -> Decision | None:
        s = self.s
        if op.type is None:
            return _reject(op, "missing_type", f"{op.op.value} needs a memory type")
        if len(op.content) < s.min_chars:
            return _reject(op, "too_short", f"content shorter than {s.min_chars} characters")
        rejected = self._check_confidence(op)
        if rejected is not None:
            return rejected
        floor = s.min_ephemeral_salience if op.type is MemoryType.ephemeral else s.min_salience
        if op.salience < floor:
            code = "ephemeral_low_salience" if op.type is MemoryType.ephemeral else "low_salience"
            return _reject(op, code, f"salience {op.salience:.2f} < {floor:.2f}")
        return None

    def _check_confidence(self, op: Op) -> Decision | None:
        if op.confidence < self.s.min_confidence:
            return _reject(op, "low_confidence", f"confidence {op.confidence:.2f} < "
                           f"{self.s.min_confidence:.2f}")
        return None

    def _add(self, op: Op, vector: np.ndarray | None, pool: Sequence[Candidate]) -> Decision:
        same_slot: Candidate | None = None
        opposite: Candidate | None = None
        over: Candidate | None = None
        best_dup: tuple[float, Candidate] | None = None
        for cand, cos in zip(pool, cosines(vector, pool), strict=True):
            m = cand.memory
            clash = conflict(op.content, m.content)
            lex = lexical(op.content, m.content)
            # Close in words or meaning is not enough: a statement naming something the
            # other does not ("went to the LGBTQ support group" beside "went to the support
            # group") says more than it, and is no restatement.
            same_values = values(op.content) == values(m.content)
            duplicate = not clash and (
                (same_values and (lex >= self.s.lexical_duplicate
                                  or cos >= self.s.paraphrase_duplicate))
                or (cos >= self.s.paraphrase_floor and same_claim(op.content, m.content))
                or _part_of(op, m) or _bare_claim_of(op.content, m.content, self.s)
                # (the same words, so a lexical duplicate: none when no score can be one)
                or (self.s.lexical_duplicate <= 100 and said_within(op.content, m.content))) \
                and not _two_rules(op, m)
            if op.slot and m.slot == op.slot and op.type == m.type:
                # The slot's value is its claim, the first sentence: a detail after it
                # ("Is vegan. 3 years now.") restates the same value.
                said = claim(op.content)
                if duplicate or same_text(said, claim(m.content)) or within(said, m.content):
                    best_dup = (2.0, cand)
                    break
                same_slot = cand
                continue
            if duplicate and (best_dup is None or max(cos, lex / 100) > best_dup[0]):
                best_dup = (max(cos, lex / 100), cand)
            elif (op.type == m.type and op.type in STATEFUL and same_slot is None
                  and (cos >= self.s.same_topic or names_one(claim(op.content))
                       or place_of(op.content) is not None)
                  and _new_value(op.content, m.content)):
                # (a name for the same one relation needs no closeness in meaning: MiniLM
                # puts "Has a wife named Niamh" at 0.44 of "User's wife is called Roisin";
                # nor does where one lives or works, which ``_new_value`` reads)
                same_slot = cand
            elif (opposite is None and op.type == m.type and op.type in STATEFUL
                  and negative(op.content) != negative(m.content)
                  and values(op.content) == values(m.content) and cos >= self.s.same_topic
                  and unsigned(op.content) == unsigned(m.content)):
                # The same claim with the opposite polarity: "doesn't like coffee" after
                # "likes coffee". The new statement stands; the old one was wrong.
                opposite = cand
            elif (over is None and op.type is MemoryType.protocol
                  and m.type is MemoryType.protocol and cos >= self.s.paraphrase_floor
                  and turns_over(op.content, m.content)):
                # "you can use emojis again" after "no emojis": the newer rule of reply
                # stands, and the two must not both be shown
                over = cand
            elif (over is None and m.type in LASTING and cos >= self.s.change_match
                  and ended(op.content, m.content)):
                # "Does not do the school run anymore" after "Does the school run every
                # morning": true then, over now. The new statement supersedes it. (The
                # cosine keeps two senses of one stem apart: "not training anymore" and
                # "Works as a train driver" share "train" at 0.29.)
                over = cand
        if best_dup is not None:
            m = best_dup[1].memory
            return _accept(op.model_copy(update={"op": OpKind.reinforce}), m.id, "duplicate",
                           f"restates memory {m.id}: reinforced instead")
        if same_slot is not None:
            m = same_slot.memory
            new = self._fill(op.model_copy(update={"op": OpKind.update}), m)
            return _accept(new, m.id, "same_slot",
                           f"same slot as memory {m.id} with a new value: updates it")
        if over is not None:
            m = over.memory
            new = self._fill(op.model_copy(update={"op": OpKind.update}), m)
            return _accept(new, m.id, "ended", f"says memory {m.id} holds no more: "
                           "supersedes it")
        if opposite is not None:
            m = opposite.memory
            new = self._fill(op.model_copy(update={"op": OpKind.contradict}), m)
            return _accept(new, m.id, "opposite",
                           f"says the opposite of memory {m.id}: contradicts it")
        return _accept(self._fill(op, None), None, "ok", "accepted")

    def _close_loop(self, op: Op, vector: np.ndarray | None, pool: Sequence[Candidate],
                    target: Candidate | None, resolved: Sequence[Memory]) -> Decision:
        loops = [c for c in pool if c.memory.type is MemoryType.open_loop
                 and not stated_by(op, c.memory)]
        if target is not None and (target.memory.type is not MemoryType.open_loop or (
                op.content and not about(op, vector, target, self.s))):
            target = None  # a named target that is no open loop, or another one: match
        if target is None and op.content:
            # A resolution that says only a past action is a report: it needs a report's
            # match. One said as an end ("finally rang my mother") matches more loosely.
            target = loop_for(op, vector, loops, self.s.report_match, self.s) \
                if op.tense is Tense.past else match(op, vector, loops, None,
                                                     self.s.close_loop_match, self.s)
        if target is not None:
            return _accept(op, target.memory.id, "ok",
                           f"closes open loop {target.memory.id}")
        if op.content:
            # "Sorted the bank thing" with no plan to sort it on record: still a thing that
            # happened, kept as such.
            return self._said_again(op, resolved) or self._redecide(
                op, vector, pool, "close_loop: no open loop matches")
        return _reject(op, "no_open_loop", "no open loop matches this resolution")

    def _said_again(self, op: Op, resolved: Sequence[Memory]) -> Decision | None:
        """A resolution already on record (the words that closed a loop, said again, or the
        same messages read twice): it closed its loop then, and is no new event now."""
        for m in resolved:
            said = m.metadata.get("resolution")
            if isinstance(said, str) and (same_text(op.content, said) or lexical(
                    op.content, said) >= self.s.lexical_duplicate):
                return _reject(op, "already_resolved",
                               f"restates the resolution of open loop {m.id}, closed already")
        return None

    def _fill(self, op: Op, target: Memory | None) -> Op:
        """Defaults: the surface policy of the type, and the target's type for an update."""
        kind = op.type or (target.type if target else None)
        surface = op.surface or (target.surface if target and op.op is OpKind.update else None)
        if surface is None and kind is not None:
            surface = DEFAULT_SURFACE[kind]
        return op.model_copy(update={"type": kind, "surface": surface})


def is_report(op: Op) -> bool:
    """A past-tense statement of something done, which may settle an open loop. A plan said
    in the past tense ("promised to call mom") is itself a loop, and a rule is no report."""
    return op.tense is Tense.past and op.type not in (MemoryType.open_loop,
                                                       MemoryType.protocol)


def fitting_type(op: Op) -> MemoryType:
    """The type of the statement an op makes, when the op names none: a report or a
    resolution is an event, a plan a loop, anything else a fact about the user."""
    if op.type is not None:
        return op.type
    if op.tense is Tense.past or op.op is OpKind.close_loop:
        return MemoryType.episodic
    if op.tense is Tense.future:
        return MemoryType.open_loop
    return MemoryType.profile


def _bare_claim_of(new: str, old: str, s: GateSettings) -> bool:
    """Whether a new statement is an old one's claim alone, in the same words: "Is a night
    owl" beside "Is total night owl. Never asleep before 2am." restates it. (A new one with
    a detail says more than a bare old one: it is no restatement.)"""
    said, held = claim(new), claim(old)
    return said == new.strip().rstrip(".") and values(said) == values(held) and lexical(
        said, held) >= s.lexical_duplicate


def _part_of(op: Op, m: Memory) -> bool:
    """Whether ``op`` says part of what ``m`` says in its words, from the same messages
    and as the same type: "Yesterday visited the gallery", a resolution that closed
    nothing, after "Visited the gallery (yesterday, 2026-11-01)" from the same message."""
    return (bool(op.evidence) and op.type == m.type
            and set(op.evidence) <= set(m.source_message_ids) and within(op.content, m.content))


def _same_slot(a: Op, b: Op) -> bool:
    """Whether two ops give one single-valued fact its value: the same slot, or the same
    claim's template with another value ("Drives a Golf", "Drives a Tesla")."""
    return a.type == b.type and ((a.slot is not None and a.slot == b.slot) or (
        a.slot is None and b.slot is None and a.type in STATEFUL
        and _new_value(b.content, a.content)))


def _accept(op: Op, target: int | None, code: str, reason: str) -> Decision:
    return Decision(proposed=op, verdict=Verdict.accepted, op=op, target_id=target, code=code,
                    reason=reason)


def _reject(op: Op, code: str, reason: str) -> Decision:
    return Decision(proposed=op, verdict=Verdict.rejected, code=code, reason=reason)


def _new_value(new: str, old: str) -> bool:
    """Whether two statements give one single-valued fact two values ("Lives in Hobart"
    after "Lives in Perth, Western Australia"), judged on their claims: a detail that
    follows one ("Lives in Hobart. Bloody freezing mate.") changes neither."""
    a, b = claim(new), claim(old)
    ta, tb = template(a).split(), template(b).split()
    if not (single_valued(a) and single_valued(b)) or ta[:1] != tb[:1] or not conflict(a, b):
        return False
    # The same template, or one that only describes the value more: "Lives in
    # Bedminster" after "Lives in a flat in Canton, Cardiff" (the flat). Not one that says
    # another thing of it: "Lives with their partner Sam", "Works as a nurse".
    extra = set(ta) ^ set(tb)
    if ta == tb or ((set(ta) <= set(tb) or set(tb) <= set(ta)) and not extra & RELATIONAL):
        return True
    # Two homes or workplaces described in their own words are still two values of one
    # place: "Lives in a rented bedsitter in Kilimani with their cousin" after "Lives in a
    # hostel on the University of Nairobi campus" (not "Lives with ..." after "Lives in ...").
    where = place_of(a)
    return where is not None and where == place_of(b)


def _two_rules(op: Op, m: Memory) -> bool:
    """Whether two boundaries in one wording are two: each names a thing the other does
    not ("Never mention their ex" and "Never mention their sister"), however close their
    words. (A style said twice in other words is one: "no emojis in your answers", "no
    emojis in replies".)"""
    kept_out = (Surface.never, Surface.avoid)
    if op.type is not MemoryType.protocol or m.type is not MemoryType.protocol \
            or op.surface not in kept_out or m.surface not in kept_out:
        return False
    a, b = set(template(op.content).split()), set(template(m.content).split())
    return bool(a - b) and bool(b - a)
