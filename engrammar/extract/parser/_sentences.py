"""What each sentence of a message proposes: the requests the request model found, the
structured readings of its clauses (``_readings``, ``_fragments``, ``_requests.names``),
and, for a sentence they make nothing of, the clause model's candidates (``_decisions``).

Some ops of one sentence are one memory: a relative's name with what is told of them, a
style request with the reason given beside it. ``ParserExtractor.read`` runs this over
every message and builds the turn candidates from what it leaves unsaid.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from engrammar.extract.parser._asked import asked_plan
from engrammar.extract.parser._attributes import MEANING
from engrammar.extract.parser._candidates import (
    Candidate,
    candidates,
    clause_candidates,
    gives_reason,
)
from engrammar.extract.parser._clauses import Clause
from engrammar.extract.parser._decisions import Model, propose, shipped
from engrammar.extract.parser._fragments import (
    allergy,
    fragment,
    listed,
    new_home,
    pet_in_brackets,
    with_subject,
)
from engrammar.extract.parser._intent import Intent
from engrammar.extract.parser._introductions import introduction
from engrammar.extract.parser._nlp import is_label
from engrammar.extract.parser._owners import Owner
from engrammar.extract.parser._phrases import joined, words
from engrammar.extract.parser._readings import read
from engrammar.extract.parser._requests import REFERS_BACK, asked, names, relative_named
from engrammar.extract.parser._turns import content_words
from engrammar.models import Op, OpKind

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

# Longer than this, a sentence is no single fact: it is passed over and stays in the log.
MAX_SENTENCE_CHARS = 1000


def sentences(doc: Doc, clauses: list[Clause], at: datetime, model: Model | None = None,
              learned_ops: set[int] | None = None, intents: dict[int, Intent] | None = None
              ) -> list[tuple[Span, list[Op]]]:
    """Each sentence of ``doc`` with the ops it proposes; ``clauses`` are the doc's
    (``analyse``, with the relative a "she" or "he" refers to when it names none).
    ``learned_ops`` collects the ids of the ops the clause model proposed (in the
    speaker's words, unlike a reading's); ``intents`` are the request model's decisions
    (``_requests.requests``) by sentence start: such a sentence's request clause says the
    request, and its other clauses are read as usual."""
    learned_ops = set() if learned_ops is None else learned_ops
    by_start: dict[int, list[Op]] = {s.start: [] for s in doc.sents}
    spans = {s.start: s for s in doc.sents}
    unread: dict[int, list[Clause]] = {}
    handled: set[int] = set()  # the heads of the clauses a request stands for
    previous: Span | None = None
    # (each sentence's next one, the last none; an empty message has no sentence at all)
    following = dict(zip(spans, [*list(spans.values())[1:], None], strict=False))
    for start, sentence in spans.items():
        intent = (intents or {}).get(start, Intent.none)
        own = [c for c in clauses if c.sentence.start == start]
        ops, which = asked(intent, own, previous)
        if intent is Intent.forget and ops:
            ops = [_named_after(op, following[start]) for op in ops]
        if ops and which is not None and intent in (Intent.forget, Intent.avoid):
            intents = {}  # one thing to forget or avoid: the first sentence that names it
        if ops and which is not None:
            handled.add(which.head.i)
            handled.update(c.head.i for c in own if c.head.head.i == which.head.i
                           and c.head.dep_ in ("ccomp", "xcomp"))
            # (not a fact a reading keeps in its own right: "I'm a nurse on nights", "I'm
            # learning it for my move to Madrid in May")
            reason = [c for c in own if c.head.i not in handled and c.factual
                      and c.owner in (Owner.user, Owner.relative)
                      # (a frame before it is no reason: "I wonder if you could ...")
                      and not (c.head.i < which.head.i and c.head.is_ancestor(which.head))
                      and all(op.op is OpKind.close_loop for op in read(c, at))
                      ] if intent is Intent.style else []
            if reason:
                ops = _with_reason(ops, reason)
                handled.update(c.head.i for c in reason)
            by_start[start].extend(ops)
        previous = sentence
    for clause in clauses:
        if clause.head.i in handled:
            continue
        if len(clause.sentence.text) <= MAX_SENTENCE_CHARS:
            ops = read(clause, at)
            if any(op.op is OpKind.close_loop for op in ops) and not gives_reason(clause) and (
                    done := clause_candidates([clause])):
                # A thing done closes the plan it matches whatever it is worth; closing
                # none, it is the event it says only as far as the clause model would keep
                # the clause ("got a good price too" is no memory): the model's doubt is
                # its confidence, below the gate's floor for a statement.
                keep = round((model or shipped()).decide(done[0]).keep, 2)
                ops = [op.model_copy(update={"confidence": min(op.confidence, keep)})
                       if op.op is OpKind.close_loop else op for op in ops]
            by_start[clause.sentence.start].extend(ops)
            if not ops:
                unread.setdefault(clause.sentence.start, []).append(clause)
    # Recall first: a sentence the readings above make nothing of is still a candidate,
    # and the learned model decides whether it is worth keeping and as what.
    learned = {c.clause.sentence.start: c for c in candidates(clauses)}
    out: list[tuple[Span, list[Op]]] = []
    for start, sentence in spans.items():
        if is_label(sentence):
            continue  # ("Big news:" names what follows; it is no fact)
        if len(sentence.text) <= MAX_SENTENCE_CHARS:
            # a list of things to do is its items, whatever its clauses make of them
            # ("tomorrow: gym, laundry, call nan" is no plan "to tomorrow"); what the
            # sentence says before it stays ("I just moved to Leeds, so busy week: ...")
            items = listed(sentence, at)
            listing = {w for op in items for w in content_words(op.content)}
            ops = [op for op in [
                *names(sentence), *introduction(sentence),
                *(items or (asked_plan(sentence, at) if _all_asked(sentence, clauses) or (
                    # (an order the readings made a plan of says it already: "send my
                    # report to Jane by Friday")
                    not by_start[start] and _all_ordered(sentence, clauses)) else [])
                  or fragment(sentence, at)),
                *new_home(sentence, at), *allergy(sentence), *pet_in_brackets(sentence),
                *by_start[start]] if any(op is i for i in items)
                or not content_words(op.content) & listing]
            # ("I'm Tomás btw" is a name, not what they are: "Is Tomás")
            given = {op.content.removeprefix("Name is ") for op in ops if op.slot == "name"}
            ops = [op for op in ops if not (op.reason == MEANING
                                            and op.content.removeprefix("Is ") in given)]
            if not ops and start in learned and with_subject(sentence) is None:
                # (a sentence without its subject is read again with the "I" put back
                # first, and judged then)
                ops = propose(learned[start], at, model)
                learned_ops.update(id(op) for op in ops)
            elif any(op.type is not None for op in ops):
                # "I hate olives and I'm learning the oboe": the clause the readings passed
                # over is a candidate of its own
                said = " ".join(op.content for op in ops)
                more: list[Op] = []
                for c in clause_candidates(unread.get(start, [])):
                    if _named_in(c, said):
                        ops = _told_of(ops, c, at, model)
                    else:
                        more += propose(c, at, model)
                learned_ops.update(id(op) for op in more)
                ops += more
            ops = said_with_name(ops)
            if out and any(op.reason == REFERS_BACK for op in ops):
                out[-1] = (out[-1][0], [])  # "my mum passed. I'd rather not go there"
            out.append((sentence, ops))
    return out


def _named_after(op: Op, after: Span | None) -> Op:
    """A forget whose target the next sentence names without a verb ("wipe the thing
    about my old job? the Hays stuff."): that name goes with it, for the gate to match."""
    if op.op is not OpKind.forget or after is None or any(
            t.pos_ in ("VERB", "AUX") for t in after) or not any(
            t.pos_ in ("NOUN", "PROPN") for t in after):
        return op
    named = after.text.strip(" .!,;")
    return op.model_copy(update={"content": f"{op.content} ({named})"})


def _told_of(ops: list[Op], cand: Candidate, at: datetime, model: Model | None
             ) -> list[Op]:
    """The ops, the one that names someone followed by what the candidate tells of them
    when the model keeps it: "my ex Jordan still has my record player" is "Has an ex named
    Jordan. Their ex Jordan still has their record player", one memory, not the name alone."""
    told = propose(cand, at, model)
    named = next((op for op in ops if _named_in(cand, op.content)), None)
    if not told or named is None or content_words(told[0].content) <= content_words(
            named.content):
        return ops
    fuller = named.model_copy(update={
        "content": joined(named.content, told[0].content)})
    return [fuller if op is named else op for op in ops]


def _all_asked(sentence: Span, clauses: Sequence[Clause]) -> bool:
    """Whether every clause of ``sentence`` asks: what a question names in passing is
    read from it ("any tips for my interview tomorrow?"), not from a sentence that says
    it ("have to finish my thesis by friday, any tips?" is the plan it states)."""
    return all(c.question for c in clauses if c.sentence.start == sentence.start)


def _all_ordered(sentence: Span, clauses: Sequence[Clause]) -> bool:
    """Whether every clause of ``sentence`` is an order to the assistant or under one
    ("write a speech for my brother's wedding in two weeks"): what it names in passing is
    read from it, as from a question."""
    own = [c for c in clauses if c.sentence.start == sentence.start]
    orders = [c.head for c in own if c.owner is Owner.command]
    return bool(orders) and all(c.owner is Owner.command or any(
        o.is_ancestor(c.head) for o in orders) for c in own)


def _with_reason(ops: list[Op], reason: Sequence[Clause]) -> list[Op]:
    """A style request's ops with what the speaker says of themselves beside it in its
    sentence, its reason ("keep it short, I read these on my phone at work"), after the
    last of them: one memory, where the reason alone would be a fact of its own, or read
    as a thing done."""
    words_ = " ".join(dict.fromkeys(words(_with_when(c)) for c in reason))
    last = ops[-1]
    return [*ops[:-1], last.model_copy(update={
        "content": f"{last.content.rstrip(' .')} ({words_.strip(' ,.')})"})]


def _with_when(c: Clause) -> list[Token]:
    """A reason clause's words with the adverbial clauses after its verb ("I read them on
    my phone while commuting on the local train"), not any other it holds (the request it
    may carry, as the parse has it)."""
    said = {t.i: t for t in c.tokens()}
    for adverbial in (a for a in c.head.children if a.dep_ == "advcl" and a.i > c.head.i):
        said.update((t.i, t) for t in adverbial.subtree)
    return [said[i] for i in sorted(said)]


def said_with_name(ops: list[Op]) -> list[Op]:
    """The ops of one sentence (or message) without a name op whose relation and name
    another op says: "My granddaughter Siobhán, she's the eldest, has just started at
    Trinity" is "Their granddaughter Siobhán has just started at Trinity", one memory, as
    ``names`` words it when the relation is the subject the parser found; "my sister Aoife
    maybe. she's in Galway" is "Their sister Aoife is in Galway"."""
    out = []
    for op in ops:
        named = relative_named(op)
        # (what is told of them: their name opens it; "back from my cousin Aoife's
        # wedding" is the user's own news, and the name stays a memory of its own)
        if named is None or not any(
                other is not op and other.content.lower().startswith(
                    f"their {named[0]} {named[1]}".lower()) for other in ops):
            out.append(op)
    return out


def _named_in(cand: Candidate, said: str) -> bool:
    """Whether a name the candidate mentions is in what the sentence's readings said: "my
    ex Jordan still has my record player" is about the Jordan already stored, one memory
    (so that one "forget the Jordan thing" takes it all)."""
    return any(t.pos_ == "PROPN" and t.text in said for t in cand.tokens)
