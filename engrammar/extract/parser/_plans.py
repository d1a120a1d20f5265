"""Plans of several days: one open loop a day, each due on its own.

An open loop is followed up on the day it is due: the lifecycle job raises it as the day
comes and lets it go stale after. The readings and the turn word what a sentence plans as
one op, due on the first day it names, so "physio tomorrow at 10:30, my exams are in two
weeks" stored one plan due tomorrow and the exams were never asked after. Here a plan whose
words name two days soon ahead is split at the parts of its sentence
(``_detail.sentence_parts``: what commas and a clause's "and" set off), where a part after
the first plan names a day of its own in a clause of the user's own ("my exams are in two
weeks") or in words with no verb ("the AEEDC conference in Dubai next month"). A part that only puts
the day right ("not thursday"), or says someone else's ("she turns 60 on sunday") or a
thing's ("recovery takes until next week"), stays the plan's detail. A day said twice leaves
the plan whole: which words go with which day is not clear. A plan whose words name one day
is due on it, whatever day its sentence named first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engrammar.extract.parser._dates import find
from engrammar.extract.parser._detail import sentence_parts
from engrammar.extract.parser._events import PLAN_AHEAD, day_ahead
from engrammar.extract.parser._nlp import parse
from engrammar.extract.parser._phrases import as_typed, cap
from engrammar.extract.parser._turns import content_words
from engrammar.models import MemoryType, OpKind

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from spacy.tokens import Token

    from engrammar.models import Op


def each_day(ops: Sequence[Op], at: datetime) -> list[Op]:
    """The ops of one message said at ``at``, each plan of several days as one plan a day;
    a piece another op of the message already says, on the same day, is left out ("Has
    physio tomorrow at 10:30" beside "Physio tomorrow at 10:30")."""
    out: list[Op] = []
    for op in ops:
        pieces = _split(op, at)
        out.extend(pieces if len(pieces) == 1 else [
            piece for piece in pieces if not any(
                other is not op and other.due is not None and piece.due is not None
                and other.due.date() == piece.due.date()
                and content_words(piece.content) <= content_words(other.content)
                for other in ops)])
    return out


def _split(op: Op, at: datetime) -> list[Op]:
    """``op`` as one plan a day, or alone."""
    if op.op is not OpKind.add or op.type is not MemoryType.open_loop or op.due is None:
        return [op]
    days = find(op.content, at, "future")
    if len(days) == 1:
        # A plan is due on the day its own words name, when they name one: a reading
        # dates a clause by its sentence's first day ("the report is due the day after
        # tomorrow, and next week I present a poster": the poster is next week's).
        due = day_ahead(op.content, at)
        return [op if due is None or due > at + PLAN_AHEAD or due.date() == op.due.date()
                else op.model_copy(update={"due": due})]
    if len(days) < 2:
        return [op]
    plans: list[tuple[list[Token], datetime]] = []  # each plan's words and its day
    before: list[Token] = []  # the words before the first day's part
    said: list[Token] = []  # the words before the part
    for sentence in parse([op.content])[0].sents:
        for tokens, _ in sentence_parts(sentence):
            due = day_ahead(" ".join(t.text for t in tokens), at)
            if due is not None and due <= at + PLAN_AHEAD and (
                    not plans or _opens_plan(tokens, said)):
                if any(due.date() == day.date() for _, day in plans):
                    return [op]
                plans.append((list(tokens), due))
            elif plans:
                plans[-1][0].extend(tokens)
            else:
                before.extend(tokens)
            said.extend(tokens)
    if len(plans) < 2:
        return [op]
    if before and all(op.due.date() != day.date() for _, day in plans):
        # (the words before are a plan whose day the op's words left out: "Has interview"
        # of "interview monday, flight tuesday, wedding saturday", due on the monday)
        plans.insert(0, (before, op.due))
    elif before:
        plans[0] = (before + plans[0][0], plans[0][1])
    return [op.model_copy(update={"content": text, "due": due}) for tokens, due in plans
            if (text := _said(tokens))]


def _opens_plan(tokens: Sequence[Token], said: Sequence[Token]) -> bool:
    """Whether a part naming a day is a plan of its own: a clause of the user's own, or
    words with no verb; not one that only puts a day right ("not thursday"). ``said``: the
    words before it, whose people a "they" may stand for."""
    first = next((t for t in tokens if not t.is_punct and t.dep_ != "cc"), None)
    if first is None or first.dep_ == "neg" or first.lower_ in ("not", "or", "nor"):
        return False
    if not any(t.pos_ in ("VERB", "AUX") for t in tokens):
        return True
    subjects = [t for t in tokens if t.dep_ in ("nsubj", "nsubjpass")]
    if not subjects:
        # chat drops the speaker's "I'm" before what they are doing on a day ahead ("then
        # flying to Accra in 10 days"); a verb of another form may have lost whose it is
        # ("turns 60 on sunday")
        return any(t.tag_ == "VBG" for t in tokens)
    # A "they" is the user's "I" in the memory's words, unless people were named before it
    # for it to stand for: "their parents arrive on monday and they leave on friday".
    others = any(t.dep_ in ("nsubj", "nsubjpass") and t.tag_ in ("NNS", "NNPS") for t in said)
    return any((s.lower_ == "they" and not others) or any(
        c.dep_ == "poss" and c.lower_ in ("their", "our") for c in s.children)
        for s in subjects)


def _said(tokens: Sequence[Token]) -> str:
    """A plan's words as the op said them, from its first to its last, the commas and
    "and"s between kept; not a joiner it opens with ("and their exam is on monday")."""
    words = [t for t in tokens if not t.is_space]
    while words and (words[0].is_punct or words[0].dep_ == "cc"):
        words = words[1:]
    if not words:
        return ""
    doc = words[0].doc
    return cap(as_typed(doc[words[0].i: words[-1].i + 1]).rstrip(" ,;:-."))
