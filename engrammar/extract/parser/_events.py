"""Things in time, read off a clause: plans (with due dates), arrangements in the
progressive ("I'm flying to Paris on Monday"), past events (with their absolute date) and
the resolutions they may be, and passing moods.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, timedelta
from typing import TYPE_CHECKING

from engrammar.extract.parser._clauses import Clause
from engrammar.extract.parser._dates import find
from engrammar.extract.parser._lexicon import KIN, STATIVE, kin
from engrammar.extract.parser._mood import reported
from engrammar.extract.parser._phrases import cap, is_clause, joined, words
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


# How far ahead a day makes a stated arrangement a plan: the follow-ups a chat has ("my
# driving test is on Tuesday"); further off, what is set on it is what the thing is ("my
# mum's birthday is on the 14th of March").
PLAN_AHEAD = timedelta(days=45)
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
            and not _aside(t)
            for t in (*mood.children, *head.children)):  # "to give" may hang on the copula
        return []
    return [proposal(MemoryType.ephemeral, " ".join(["Feels", mood.lower_, *feeling_when(head)]),
                     salience=0.3, confidence=0.8)]


def feeling_when(head: Token) -> list[str]:
    """The day a mood is said to hold for, if the clause says: "today", "tonight"."""
    return [t.lower_ for t in head.children if t.dep_ == "npadvmod"
            and t.lower_ in ("today", "tonight")]


def _aside(verb: Token) -> bool:
    """Whether an infinitive is the speaker's aside on how they say it, not what a mood is
    for: "to be honest", "to be fair" ("be" and an adjective, nothing else)."""
    return verb.lemma_ == "be" and all(
        t.dep_ in ("aux", "acomp", "advmod") for t in verb.children) and any(
        t.dep_ == "acomp" and t.pos_ == "ADJ" for t in verb.children)


def plan(c: Clause, at: datetime) -> list[Op]:
    """"I'm going to renew my passport next week", "I promised to call mom on Friday"."""
    action = c.action or c.head
    if reported(c.head):
        # (a report of a thing of the user's is theirs, but what it must do is the
        # speaker's say: "the vet says my dog has to lose 2 kilos by March")
        return []
    if action.lemma_ in STATIVE or (c.action is not None and c.lemma in (
            "want", "hope", "try", "like", "love")):
        return []
    if any(t.lower_ in MAYBE for t in c.sentence):
        return []  # "maybe I'll learn Japanese one day": no commitment
    if c.negated or any(t.dep_ == "neg" for t in action.children):
        return []  # "dont drive for uber anymore": no plan, and its "not" would be lost
    # (a time is no object: "tomorrow evening we will do" plans nothing)
    objects = [t for t in action.subtree if t.i != action.i and t.pos_ in ("NOUN", "PROPN")
               and t.ent_type_ != "DATE" and t.dep_ not in ("npadvmod", "tmod")
               and t.head.dep_ != "npadvmod"]
    if not objects:
        return []  # "I have to go now", "I need to think about it": no plan of substance
    verb = "Promised to" if "promise" in c.modals else "Plans to"
    found = plan_due(c.sentence.text, at)
    # (a clause before the verb is no part of the plan: "that's okay" of "But that's okay,
    # I'll get 'em next time"; nor is a word set off by a comma before it: "grand" of
    # "grand, I'll give them a go tonight")
    doc = action.doc
    kept = [t for t in action.subtree if not any(
        a.head.i == action.i and (a.dep_ in _NOT_PLANNED or (a.i < action.i and (
            a.dep_ in ("ccomp", "parataxis", "advcl")
            or (a.right_edge.i + 1 < action.i and doc[a.right_edge.i + 1].text == ","))))
        for a in (t, *t.ancestors))]
    return [proposal(MemoryType.open_loop, f"{verb} {words(kept)}", salience=0.7,
                     due=found.when if found else None)]


def ongoing(c: Clause, at: datetime) -> list[Op]:
    """"I'm flying to Paris on Monday", "we're having a baby in June": the progressive with
    a date ahead is a plan. Without a date ("I'm opening a bakery") it is no commitment, nor
    is the perfect ("I've been temping since July": what has gone on till now). A date
    another clause says ("im learning to drive, test is on the 20th") is that clause's:
    the plan keeps its words beside its own, and a clause in the past ("left teaching in
    july, ...") dates nothing ahead."""
    head = c.head
    if any(a.dep_ == "aux" and a.lower_ == "been" for a in head.children):
        return []
    rest = [t for t in head.subtree if t.i > head.i and not any(
        a.dep_ in ("conj", "ccomp", "advcl", "parataxis") and a.head.i == head.i
        for a in (t, *t.ancestors))]
    planned = f"Plans to {head.lemma_} {words(rest)}"
    if (due := day_ahead(" ".join(t.text for t in c.tokens()), at)) is not None:
        return [proposal(MemoryType.open_loop, planned, salience=0.7, due=due)]
    mine = {t.i for t in c.tokens()}
    done = {t.i for v in c.sentence if _past(v) and v.i not in mine
            for t in v.subtree if t.i not in mine}
    if (due := day_ahead(" ".join(t.text for t in c.sentence if t.i not in done), at)) is None:
        return []
    kept = {t.i for t in rest} | {t.i for t in c.tokens()} | done
    other = words([t for t in c.sentence if t.i not in kept])
    return [proposal(MemoryType.open_loop, joined(planned, cap(other)),
                     salience=0.7, due=due)]


def _past(verb: Token) -> bool:
    """Whether a verb says what was done: a past form, or a participle alone or after
    "have" ("left the bakery in June"; not "is being sold on the 14th")."""
    return verb.tag_ == "VBD" or (verb.tag_ == "VBN" and not any(
        a.dep_ in ("aux", "auxpass") and a.lemma_.lower() != "have" for a in verb.children))


def _origin(head: Token) -> bool:
    """Whether a past clause says where its subject comes from: grew up, was born, was
    raised or brought up, somewhere ("grew up near Porto", "I was born in Kumasi")."""
    lemma = head.lemma_.lower()
    particle = any(c.dep_ == "prt" and c.lower_ == "up" for c in head.children)
    passive = any(c.dep_ == "auxpass" for c in head.children)
    somewhere = any(c.dep_ == "prep" and c.lower_ in ("in", "near", "outside", "on", "around")
                    for c in head.children)
    return somewhere and ((lemma == "grow" and particle) or (
        passive and (lemma in ("bear", "raise") or (lemma == "bring" and particle))))


def happened(c: Clause, at: datetime) -> list[Op]:
    """A past action: it may resolve an open loop (the gate judges which), and with a date
    it is an event of its own, unless it was seeing one's own people ("saw nan yday"): that
    is the visit that was planned, and closing its loop records it. Read from the words
    alone, never from the chat's memories, so a second run proposes the same ops."""
    head = c.head
    dropped = [ch for ch in head.children if ch.dep_ in _NOT_EVENT
               or (ch.dep_ in ("conj", "ccomp", "advcl", "parataxis") and is_clause(ch))]
    gone = {t.i for ch in dropped for t in ch.subtree}
    if c.until is not None:  # (what the clause asks after it stops stating)
        gone |= {t.i for t in head.subtree if t.i >= c.until}
    what = words([t for t in head.subtree if t.i not in gone])
    if len(what.split()) < 2 or not any(t.i > head.i and t.i not in gone
                                        for t in head.subtree) or not any(
            t.pos_ in ("NOUN", "PROPN", "NUM", "ADJ", "ADV") or (t.pos_ == "VERB" and t.i != head.i)
            for t in head.subtree if t.i > head.i and t.i not in gone):
        # Nothing done to anything ("terrifying but glad I went"), or to nothing named
        # ("we finally did it"): no event of its own, and the gate keeps every resolution
        # that closes nothing as one.
        return []
    if any(t.dep_ == "dobj" and t.lower_ in ("nothing", "nowt") for t in head.children):
        return []  # "I've done literally nothing": nothing done, nothing closed
    if _origin(head):
        # Where the speaker comes from is said in the past and true for good: a profile
        # fact, no event and nothing done to close a plan.
        return [proposal(MemoryType.profile, cap(what), salience=0.7)]
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


# Where a thing is moved to in time: "moved to Thursday", "pushed back to the 14th",
# "postponed until June". ("for" only after a verb of doing again: "rescheduled for Monday";
# "bought a dress for Saturday" moves nothing.)
_UNTIL = frozenset({"to", "until", "till"})


def rescheduled(c: Clause, at: datetime) -> list[Op]:
    """"the check-up has been moved to Thursday", "we pushed the party back to the 20th": a
    thing moved to a day ahead is the plan it was, on its new day. The extractor proposes
    the change with no target: the gate finds the open loop it is about and updates it (its
    day with it), or keeps it as the plan it says."""
    head = c.head
    if c.negated or not c.factual or head.pos_ != "VERB":
        return []
    said = _moved_thing(head)
    if not said:
        return []
    for prep in head.subtree:
        if prep.dep_ != "prep" or not (prep.head.i == head.i or (
                prep.head.head.i == head.i and prep.head.dep_ in ("advmod", "prt"))):
            continue
        if prep.lower_ not in _UNTIL and not (
                prep.lower_ == "for" and head.lemma_.lower().startswith("re")):
            continue
        day = next((t for t in prep.children if t.dep_ == "pobj"), None)
        found = plan_due(" ".join(t.text for t in prep.subtree), at)
        if day is None or found is None or found.when <= at \
                or day.lower_ not in found.text.lower():
            continue  # ("invited Sam to dinner on Friday": dinner is no day)
        moved = {t.i for t in said}
        rest = [t for t in head.subtree if t.i > head.i and t.i not in moved
                and not t.is_punct]
        content = f"{cap(words(said))} {head.text} {words(rest)}"
        return [Op(op=OpKind.update, type=MemoryType.open_loop, content=content.strip(),
                   confidence=0.8, salience=0.7, due=found.when)]
    return []


def _moved_thing(head: Token) -> list[Token]:
    """What a verb moves: its passive subject, else its object, as a phrase with a noun. The
    small parser may take an opening aside for the passive subject ("quick one, physio at
    the clinic has been moved"): then the words before the verb back to the last comma."""
    subject = next((t for t in reversed(list(head.lefts)) if t.dep_ == "nsubjpass"), None)
    thing = subject or next((t for t in head.rights if t.dep_ == "dobj"), None)
    if thing is not None and thing.pos_ in ("NOUN", "PROPN"):
        return list(thing.subtree)
    if subject is None:
        return []
    first = min((a.i for a in head.children if a.dep_ in ("aux", "auxpass")), default=head.i)
    start = head.sent.start
    for t in head.doc[start:first]:
        if t.is_punct:
            start = t.i + 1
    said = list(head.doc[start:first])
    return said if any(t.pos_ in ("NOUN", "PROPN") for t in said) else []
