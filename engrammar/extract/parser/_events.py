"""Things in time, read off a clause: plans (with due dates), arrangements in the
progressive ("I'm flying to Paris on Monday"), past events (with their absolute date) and
the resolutions they may be, and passing moods.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time
from typing import TYPE_CHECKING

from engrammar.extract.parser._clauses import KIN, Clause, _is_clause, cap, kin, words
from engrammar.extract.parser._dates import find
from engrammar.extract.parser._lexicon import STATIVE
from engrammar.extract.parser._requests import proposal
from engrammar.models import MemoryType, Op, OpKind, Tense

if TYPE_CHECKING:
    from spacy.tokens import Token

@dataclass(frozen=True)
class Found:
    """A date said in a clause: its words, and the day at noon in the message's zone."""

    text: str
    when: datetime


def _day(text: str, at: datetime, tense: str) -> Found | None:
    found = find(text, at, "future" if tense == "future" else "past")
    if not found:
        return None
    first = found[0]
    return Found(first.text.lower(), datetime.combine(first.day, time(12), tzinfo=at.tzinfo))


def plan_due(text: str, at: datetime) -> Found | None:
    """When a plan said in ``text`` at ``at`` is due (extract.parser._dates, read as the future)."""
    return _day(text, at, "future")


def day_ahead(text: str, at: datetime) -> datetime | None:
    """The day after ``at`` a plan said in ``text`` is due, if it names one."""
    found = plan_due(text, at)
    return found.when if found is not None and found.when > at else None


def past_day(text: str, at: datetime) -> Found | None:
    """The day a past event said in ``text`` at ``at`` happened, if one is said."""
    found = _day(text, at, "past")
    return found if found is not None and found.when.date() <= at.date() else None


MAYBE = frozenset({"maybe", "perhaps", "possibly", "probably", "someday", "idk"})
# Verbs that begin something lasting: "started a pottery class" is worth keeping undated.
_BEGINNINGS = frozenset({"start", "join", "begin", "enrol", "enroll", "sign"})


# Parts of a past clause that are no part of what was done: who, when, how surely.
_NOT_EVENT = frozenset({"nsubj", "nsubjpass", "advmod", "npadvmod", "aux", "auxpass", "punct",
                        "mark", "cc", "intj", "discourse", "neg"})
_NOT_PLANNED = frozenset({"nsubj", "aux", "neg", "punct", "mark", "intj", "cc"})
_HEDGES = frozenset({"finally", "already", "just", "actually", "also", "really", "even"})


def feeling(head: Token, mood: Token) -> list[Op]:
    """A mood, with the time it holds for ("Feels tired today"): ephemeral, low salience,
    so the gate keeps it only when it matters more than a passing state. None when a
    clause says what the mood is for ("down to give movie tips", "happy that she got
    in"): that is what was said, for the candidates to judge. ("Stressed about the
    deadline" is still the mood.)"""
    if any(t.dep_ in ("xcomp", "ccomp") for t in mood.children) or any(
            t.i > mood.i and t.dep_ in ("xcomp", "advcl")
            and any(a.dep_ == "aux" and a.lower_ == "to" for a in t.children)
            for t in (*mood.children, *head.children)):  # "to give" may hang on the copula
        return []
    when = [t.lower_ for t in head.children if t.dep_ == "npadvmod"
            and t.lower_ in ("today", "tonight")]
    return [proposal(MemoryType.ephemeral, " ".join(["Feels", mood.lower_, *when]),
                     salience=0.3, confidence=0.8)]


def plan(c: Clause, at: datetime) -> list[Op]:
    """"I'm going to renew my passport next week", "I promised to call mom on Friday"."""
    action = c.action or c.head
    if action.lemma_ in STATIVE or (c.action is not None and c.lemma in (
            "want", "hope", "try", "like", "love")):
        return []
    if any(t.lower_ in MAYBE for t in c.sentence):
        return []  # "maybe I'll learn Japanese one day": no commitment
    objects = [t for t in action.subtree if t.i != action.i and t.pos_ in ("NOUN", "PROPN")
               and t.ent_type_ != "DATE"]
    if not objects:
        return []  # "I have to go now", "I need to think about it": no plan of substance
    verb = "Promised to" if "promise" in c.modals else "Plans to"
    found = plan_due(c.sentence.text, at)
    # (a clause before the verb is no part of the plan: "that's okay" of "But that's okay,
    # I'll get 'em next time")
    kept = [t for t in action.subtree if not any(
        a.head.i == action.i and (a.dep_ in _NOT_PLANNED or (
            a.i < action.i and a.dep_ in ("ccomp", "parataxis", "advcl")))
        for a in (t, *t.ancestors))]
    return [proposal(MemoryType.open_loop, f"{verb} {words(kept)}", salience=0.7,
                     due=found.when if found else None)]


def ongoing(c: Clause, at: datetime) -> list[Op]:
    """"I'm flying to Paris on Monday", "we're having a baby in June": the progressive with
    a date ahead is a plan. Without a date ("I'm opening a bakery") it is no commitment."""
    due = day_ahead(c.sentence.text, at)
    if due is None:
        return []
    head = c.head
    rest = [t for t in head.subtree if t.i > head.i and not any(
        a.dep_ in ("conj", "ccomp", "advcl", "parataxis") and a.head.i == head.i
        for a in (t, *t.ancestors))]
    return [proposal(MemoryType.open_loop, f"Plans to {head.lemma_} {words(rest)}",
                     salience=0.7, due=due)]


def happened(c: Clause, at: datetime) -> list[Op]:
    """A past action: it may resolve an open loop (the gate judges which), and with a date
    it is an event of its own, unless it was seeing one's own people ("saw nan yday"): that
    is the visit that was planned, and closing its loop records it. Read from the words
    alone, never from the chat's memories, so a second run proposes the same ops."""
    head = c.head
    dropped = [ch for ch in head.children if ch.dep_ in _NOT_EVENT
               or (ch.dep_ in ("conj", "ccomp", "advcl", "parataxis") and _is_clause(ch))]
    gone = {t.i for ch in dropped for t in ch.subtree}
    what = words([t for t in head.subtree if t.i not in gone])
    if len(what.split()) < 2 or not any(t.i > head.i and t.i not in gone
                                        for t in head.subtree) or not any(
            t.pos_ in ("NOUN", "PROPN", "NUM", "ADJ", "ADV") or (t.pos_ == "VERB" and t.i != head.i)
            for t in head.subtree if t.i > head.i and t.i not in gone):
        # Nothing done to anything ("terrifying but glad I went"), or to nothing named
        # ("we finally did it"): no event of its own, and the gate keeps every resolution
        # that closes nothing as one.
        return []
    # The resolution keeps its time words: "rang their mother last night" is closer to
    # "call mom on Friday" than the bare action is.
    timed = {t.i for ch in dropped if ch.dep_ in ("npadvmod", "advmod")
             and ch.lower_ not in _HEDGES and (ch.dep_ == "advmod" or past_day(
                 " ".join(t.text for t in ch.subtree), at) is not None)
             for t in ch.subtree}  # ("big news," is no time)
    resolution = words([t for t in head.subtree if t.i not in gone - timed])
    marked = any(t.lower_ in ("finally", "already") for t in head.children)
    done = any(kin(t.lower_) or t.lower_ in KIN for t in head.subtree
               if t.dep_ in ("dobj", "pobj"))
    # A thing said done ("finally", "already") or seeing one's own people is said as the
    # end of something planned; any other past action is a report, which closes a plan
    # only if it is plainly that plan's (the gate's report_match): "sold my van" is no
    # end of "sell the drum kit" though the two share a verb.
    ops = [Op(op=OpKind.close_loop, content=resolution, confidence=0.8,
              tense=None if marked or done else Tense.past)]
    # The clause's own words: "on tuesday" in the next clause is another thing's day.
    when: Found | None = past_day(" ".join(t.text for t in c.tokens()), at)
    if when is None and c.lemma in _BEGINNINGS:
        ops.append(proposal(MemoryType.episodic, cap(what), salience=0.55))
    if when is not None and not marked and not done:
        # The dated event first: the resolution after it, when it closes nothing, restates
        # it from the same message and is no second episode (the gate).
        ops.insert(0, proposal(MemoryType.episodic, f"{cap(what)} ({when.text}, "
                                                f"{when.when.date().isoformat()})",
                               salience=0.5))
    return ops
