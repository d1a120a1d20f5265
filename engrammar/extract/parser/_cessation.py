"""A thing the user did and does no more: "I've given up the coffee", "quit smoking last
year", "I no longer play the cello", "I don't eat meat anymore"; a job left for good ("I
retired from the post office"); a thing had and had no more ("sold the Fiesta"). Said of a
habit, a taste, a job or a thing the chat holds ("Drinks strong black coffee, four or five
cups a day"), it is a change of that memory, and the old value must leave recall; said of
nothing held, it is the statement it makes.

The extractor proposes the change with no target (a ``contradict``; for a retirement an
``update`` of the job's slot): the gate finds the memory it is about as for any change aimed
at nothing (a shared word or stem beyond the subject and ``change_match``, a name the
memory writes and ``change_named_match``, or ``forget_match`` alone), or keeps the
statement as an add of its own. What ends the doing is read from the parse: an aspectual
verb of stopping with what was stopped as its object or complement, or "no longer" / a
negation with "anymore" on the verb itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engrammar.extract.parser._candidates import third_person
from engrammar.extract.parser._dates import calendar_word
from engrammar.extract.parser._events import MAYBE
from engrammar.extract.parser._jobs import is_profession
from engrammar.extract.parser._owners import Owner
from engrammar.extract.parser._phrases import child
from engrammar.models import MemoryType, Op, OpKind, Tense

if TYPE_CHECKING:
    from spacy.tokens import Token

    from engrammar.extract.parser._clauses import Clause

# The aspectual verbs of stopping: what ends a doing, whatever is done; and the verbs
# that say it only with their particle ("give up"; British and Irish chat: "packed in the
# crossfit", "jacked in the café job", "binned off the gym").
_STOPPING = frozenset({"stop", "quit", "cease"})
_STOPPING_WITH = frozenset({("give", "up"), ("pack", "in"), ("pack", "up"), ("jack", "in"),
                            ("chuck", "in"), ("bin", "off")})
# Words of clauses around the stopping that are no part of it: "Doctor's orders" aside.
# (and the mark of a clause hung on another: "first big trip since I retired" says "Retired")
_APART = frozenset({"conj", "cc", "parataxis", "advcl", "punct", "intj", "discourse", "mark"})


def ceased(c: Clause) -> list[Op]:
    """The change a clause says when the user stopped doing something, or none."""
    if c.owner is not Owner.user or not c.factual or any(
            t.lower_ in MAYBE for t in c.tokens()):
        return []  # (a maybe stops nothing: "I think maybe I quit the PhD")
    head = c.head
    if head.lemma_.lower() == "retire" and c.tense == "past" and not c.negated \
            and not c.modals:
        # (work stopped for good: the job's slot holds it, so the job it ends gives way;
        # "since I retired" says no more than that they are)
        said = _said(c)
        return [Op(op=OpKind.update, type=MemoryType.profile, slot="job",
                   content="Is retired" if said.lower() == "retired" else said,
                   confidence=0.8, salience=0.7, reason="retired")]
    stopped = _stopped(c)
    if stopped is None:
        return []
    return _change(c, f"stopped {stopped.text}")


def _change(c: Clause, reason: str) -> list[Op]:
    """The clause as a change aimed at nothing, which the gate finds the memory of; none
    when it says less than two words."""
    content = _said(c)
    if len(content.split()) < 2:
        return []
    return [Op(op=OpKind.contradict, content=content, confidence=0.8, salience=0.6,
               tense=Tense.past if c.tense == "past" else None, reason=reason)]


def _stopped(c: Clause) -> Token | None:
    """What the clause says the user no longer does: the object or complement of a verb
    of stopping that is not negated ("gave up coffee"; not "I can't give up coffee"), the
    work left for good ("left teaching", "left my job"), or the verb itself with "no
    longer" or a negation and "anymore"."""
    head = c.head
    if c.modals == ["have"] and c.tense == "past" and c.action is not None:
        head = c.action  # "had to pack in the crossfit": done, if by necessity
    elif c.modals or c.tense == "future":
        return None  # ("I want to quit smoking", "I'll stop eating meat": plans, not changes)
    lemma = head.lemma_.lower()
    up = any(t.dep_ == "prt" and (lemma, t.lower_) in _STOPPING_WITH for t in head.children)
    if (up or lemma in _STOPPING) and not c.negated and head.tag_ != "VBG":
        return child(head, "dobj", "xcomp", "pcomp")
    if not c.negated and head.tag_ != "VBG" and head.i + 1 < len(head.doc) and (
            (after := head.doc[head.i + 1]).dep_ == "prep" and after.head == head
            and (lemma, after.lower_) in _STOPPING_WITH):
        # ("packed in Amazon": the parser takes the particle for a preposition; not a
        # time, "packed in the morning")
        stopped = child(after, "pobj")
        return None if stopped is None or calendar_word(stopped.lower_) \
            or stopped.lemma_.lower() in ("morning", "afternoon", "evening", "night") \
            else stopped
    thing = child(head, "dobj")
    if lemma == "knock" and thing is not None and not c.negated and any(
            p.dep_ == "prep" and p.lower_ == "on" and any(o.lower_ == "head" for o in p.children)
            for p in (*head.children, *thing.children)):
        return thing  # "knocked the rollies on the head" (the "on" hung on either)
    if lemma == "leave" and not c.negated and head.tag_ != "VBG" and (
            work := _work(thing)) is not None:
        return work  # "left teaching in July", "I left my job at the bank"
    longer = any(t.lower_ == "longer" and any(n.lower_ == "no" for n in t.children)
                 for t in head.children)
    anymore = any(t.lower_ in ("anymore", "any-more") or (
        t.lower_ == "more" and any(n.lower_ == "any" for n in t.children))
        for t in head.children)
    if (longer and not c.negated) or (anymore and c.negated):
        return head
    return None


def _work(thing: Token | None) -> Token | None:
    """``thing`` when it is work one leaves for good: a job, a role, a trade ("my job at
    the bank"), or a doing said bare ("teaching", "nursing"); not a place left for the day
    ("left the building", "left the office at 6")."""
    if thing is None or (thing.pos_ != "NOUN" and thing.tag_ != "VBG"):
        return None
    bare = not any(c.dep_ in ("det", "poss") for c in thing.children)
    if (thing.tag_ == "VBG" or thing.lower_.endswith("ing")) and bare:
        return thing
    return thing if thing.lemma_.lower() in _JOBS or is_profession(thing) else None


# What one leaves when one leaves work: "left my job", "left the role".
_JOBS = frozenset({"job", "role", "post", "position", "career", "profession"})


# The verbs of changing over to something else: "switched to decaf", "swapped to oat milk".
_SWITCHING = frozenset({"switch", "swap", "change", "convert"})
# The verbs of starting, which "again" makes a return: "started eating fish again".
_STARTING = frozenset({"start", "begin"})


def changed_over(c: Clause) -> list[Op]:
    """The change a clause says when the user took up something else or went back to a
    doing: "switched to decaf", "started eating fish again", "been back on meat and dairy
    since Christmas". Like a thing stopped, it changes the memory it is about (the coffee,
    the diet), which the gate finds; about nothing held, it is the statement it makes (the
    message's words stand for it, as for a thing stopped: "been off regular coffee for
    three weeks, switched to decaf" names the old value). Not a return to
    a place, which is a visit or a plan ("went back to Leeds for Christmas", "going back
    to Manchester on Friday"), nor one on its way."""
    if c.owner is not Owner.user or not c.factual or c.negated or c.modals \
            or c.tense == "future" or c.head.tag_ == "VBG":
        return []
    head = c.head
    lemma = head.lemma_.lower()
    own = _own(head)
    switched = lemma in _SWITCHING and any(
        t.dep_ == "prep" and t.lower_ == "to" and t.head.i == head.i for t in own)
    again = lemma in _STARTING and any(t.lower_ == "again" for t in own) and any(
        t.dep_ == "xcomp" and t.tag_ == "VBG" for t in head.children)
    # ("back on track" is an idiom of getting on, not a return to a thing)
    back = lemma == "be" and any(
        t.lower_ == "back" and t.head.i == head.i and any(
            p.dep_ == "prep" and p.lower_ == "on" and not any(
                o.lower_ == "track" for o in p.children) for p in t.children) for t in own)
    if not (switched or again or back):
        return []
    return _change(c, f"changed: {lemma}")


def ended(c: Clause) -> list[Op]:
    """What a thing done ends, beside the event it is: a sale ends the having ("sold the
    Fiesta last week" retires "Drives a 2012 Ford Fiesta"). Proposed with no target and
    typed as a thing had (a profile fact), for the gate to match; the sale itself is the
    event the readings make of it, which may close a plan to sell."""
    if c.owner is not Owner.user or not c.factual or c.negated or c.modals \
            or c.tense != "past":
        return []
    head = c.head
    sold = child(head, "dobj") if head.lemma_.lower() == "sell" else None
    if sold is None or sold.pos_ not in ("NOUN", "PROPN"):
        return []
    return [Op(op=OpKind.contradict, type=MemoryType.profile, content=_said(c),
               confidence=0.8, salience=0.6, tense=Tense.past, reason=f"sold {sold.text}")]


def _said(c: Clause) -> str:
    """The clause in the third person, without the clauses hung on it ("Doctor's orders"
    after "I've given up the coffee")."""
    return third_person(c, _own(c.head)).rstrip(" .,;:-")


def _own(head: Token) -> list[Token]:
    """The words of the clause of ``head``, without the clauses hung on it."""
    return [t for t in head.subtree if not any(
        a.head.i == head.i and a.dep_ in _APART for a in (t, *t.ancestors) if a.i != head.i)]
