"""The offline extractor: ops from a dependency parse of what the user said, no model calls.

Each message is parsed; each sentence's clauses are read by ``parser._readings`` (a stated
fact by its predicate, a request by its imperative; ``parser._sentences`` runs them over a
sentence), and what no reading keeps is offered to
the learned models as clause candidates (``parser._candidates``) and as the message's turn
candidate (``parser._turns``). A sentence whose subject chat dropped is read again with the
"I" put back. Like the LLM extractor it only proposes: the write gate decides duplicates,
updates, contradictions and which loop a resolution closes.
"""
from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, NamedTuple

from engrammar.extract._extractor import Extraction
from engrammar.extract.parser._abilities import LIMIT
from engrammar.extract.parser._answers import answer_kept, follow_ups
from engrammar.extract.parser._asked import (
    about_someone,
    asked_apart,
    asked_relative,
    asks_age,
    offered,
)
from engrammar.extract.parser._attributes import MEANING
from engrammar.extract.parser._clauses import Clause, analyse, said_part
from engrammar.extract.parser._corrections import (
    Correction,
    corrected,
    corrections,
    put_right,
    updates,
)
from engrammar.extract.parser._decisions import Model, propose_turn, shipped
from engrammar.extract.parser._detail import left_over, loses, names_left_out, with_detail
from engrammar.extract.parser._forgetting import (
    boundary,
    forgotten,
    kept_out,
    unsaid,
    unsaid_relation,
)
from engrammar.extract.parser._fragments import with_subject
from engrammar.extract.parser._intent import Intent, decide, embedder
from engrammar.extract.parser._introductions import after_name
from engrammar.extract.parser._nlp import as_said, parse, their_words
from engrammar.extract.parser._others import relative_name, with_relative
from engrammar.extract.parser._owners import Owner, last_relative
from engrammar.extract.parser._phrases import as_typed, joined
from engrammar.extract.parser._plans import each_day
from engrammar.extract.parser._requests import BY_ROLE, requests
from engrammar.extract.parser._restatements import restated
from engrammar.extract.parser._sentences import said_with_name, sentences
from engrammar.extract.parser._statements import (
    lines_kept,
    passing_plan,
    reason_turn_kept,
    unopened,
)
from engrammar.extract.parser._turns import (
    FACT_TYPES,
    TurnCandidate,
    adds_only,
    content_words,
    detailed,
    gives_name,
    questions,
    replaceable,
    tells_name,
    turn_candidate,
)
from engrammar.models import Memory, MemoryType, Message, Op, OpKind, Role, Scope, Surface

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span

# Rounds of putting dropped subjects back: a run of fragments takes one round each.
_ROUNDS = 8
# How many times a message is parted: a question parted from the statement before it may
# state after it too ("doing a bbq tomorrow, can u sort this list: ..., slaw (im allergic
# to egg)").
_APART_ROUNDS = 2
# How much of a message is read: the longest the client records (the default of
# ``settings.max_message_chars``). A longer one can only have been written past the client,
# and parsing costs more than linear time in a sentence's length (a million characters of
# one word, planted in the table, took minutes a night).
_READ_CHARS = 32_000
# How long a relative named in one message stays what a "she" in the next refers to.
_ANTECEDENT_FOR = timedelta(hours=3)


class Reading(NamedTuple):
    """What ``ParserExtractor.read`` makes of a batch, per user message."""

    said: list[Message]
    found: list[list[Op]]
    turns: list[TurnCandidate | None]
    fixes: list[list[Correction]]


class ParserExtractor:
    """Deterministic and offline, on spaCy's parse: the default when no model is set."""

    name = "parser"

    def __init__(self, model: Model | None = None) -> None:
        self.model = model

    def extract(self, scope: Scope, messages: Sequence[Message], memories: Sequence[Memory],
                now: datetime) -> Extraction:
        said, found, turns, fixes = self.read(messages, memories)
        model = self.model or shipped()
        kept = [False] * len(said)
        earlier = {m.id: n for n, m in enumerate(said)}
        follows = follow_ups(messages)
        also: dict[int, list[int]] = {}  # an op's id: the answers joined to it
        for n, turn in enumerate(turns):
            if fixes[n] and _correct(n, fixes[n], said, found, turns, kept, model,
                                     memories) and turn is None:
                continue
            if turn is not None and turn.follows is not None and (
                    i := _detailing(found[n], turn.follows, turn.content, turn.answer and not any(
                        t.pos_ in ("VERB", "AUX") for t in turn.follows))) is not None:
                # A verbless sentence after one a reading kept names more of that fact
                # ("my citizenship ceremony is in two weeks!! finally after 9 years in
                # Leeds"): one memory, not a fragment beside it, nor the fragment lost.
                # In an answer of fragments it goes on answering: "nurse. nights mostly"
                # to "what do you do for work?" (not "I'm a nurse. Married, two kids.").
                fact = found[n][i]
                found[n][i] = fact.model_copy(update={
                    "content": joined(fact.content, turn.content)})
                kept[n] = True  # (a correction later in the night proposes it no more)
                continue
            if turn is not None and not (ops := propose_turn(
                    turn, said[n].at, model, keep=gives_name(turn) or tells_name(turn))) \
                    and reason_turn_kept(turn, said[n].at):
                # the reason given for a question, which the statement model keeps
                ops = [unopened(op) for op in propose_turn(turn, said[n].at, model, keep=True)]
            elif turn is not None and not ops and (lines_kept(turn) or answer_kept(turn)):
                # a list's lines the statement model keeps, each said plainly, or an answer
                # the answer model keeps beside its question, whose few words the turn model
                # read alone ("sesame. allergic" to "anything you can't eat?")
                ops = propose_turn(turn, said[n].at, model, keep=True)
            if turn is not None and not ops:
                # The message's statement is not worth keeping: a thing done in it still
                # closes the plan it matches, but alone it carries the model's doubt as its
                # confidence, below the gate's floor for a statement ("got a good price too").
                doubt = round(model.keep_turn(turn), 2)
                found[n] = [op.model_copy(update={"confidence": min(op.confidence, doubt)})
                            if op.op is OpKind.close_loop and any(op is r for r in turn.replaces)
                            else op for op in found[n]]
            elif turn is not None:
                # One memory for the message: the turn stands for the plain ops on its
                # sentences (their ids, since two ops may be equal).
                done = any(op.op is OpKind.close_loop for op in turn.replaces)
                # A thing that ends something and is a thing done stays beside the turn,
                # which may close a plan ("finally sold the piano"), and comes after it: the
                # plan it closes is then on record, and the same words are no second event.
                ending = [op for op in turn.replaces if done and _stopping(op)]
                gone = {id(op) for op in turn.replaces}
                found[n] = [op for op in found[n] if id(op) not in gone]
                if not done and any(_stopping(op) for op in turn.replaces):
                    # "I've given up the coffee. It's green tea now": the turn, which says
                    # the thing stopped, is the change of the memory it is about, in the
                    # type of that memory
                    ops = [op.model_copy(update={"op": OpKind.contradict, "type": None})
                           for op in ops]
                kept[n] = True
                before = earlier.get(follows.get(said[n].id, -1))
                i = (None if before is None or turn.own or not turn.leans
                     else detailed(found[before]))
                if before is not None and i is not None:
                    # "What kind of calls?" "insurance claims mostly": an answer that leans
                    # on the assistant's question about what the user just said, with no
                    # clause of the user's own, details that fact: one memory, resting on
                    # both. ("The kettle broke again" after "what's your area like?" says
                    # a thing of its own: it stands alone.)
                    fact = found[before][i]
                    found[before][i] = answered = fact.model_copy(update={
                        "content": joined(fact.content, turn.content)})
                    also[id(answered)] = [*also.pop(id(fact), []), said[n].id]
                else:
                    found[n] += ops
                found[n] += ending
        # (the words of the whole night: "she's 91" names the nan of the message before)
        theirs = their_words(" ".join(m.content for m in said))
        # (a plan of two days is two plans, each due on its own)
        ops = [op.model_copy(update={"content": as_said(op.content, theirs)})
               for msg, proposed in zip(said, map(said_with_name, found), strict=True)
               for op in each_day([op.model_copy(update={
                   "evidence": [msg.id, *also.get(id(op), [])]}) for op in proposed], msg.at)]
        return Extraction(ops=_unique(forgotten(ops, memories)),
                          handles={f"m{m.id}": m.id for m in memories})

    def read(self, messages: Sequence[Message], memories: Sequence[Memory] = ()) -> Reading:
        """The user's messages, the ops the readings propose for each (with the updates of
        ``memories`` its corrections make), each one's turn candidate (undecided: what it
        states, but for the sentences a structured reading kept, with the plain ops it
        would stand for) and the values it corrects."""
        said = [m for m in messages if m.role is Role.user]
        asked = questions(messages)
        found: list[list[Op]] = [[] for _ in said]
        # The sentences a structured reading kept, and each plain op with its sentence.
        read_: list[set[str]] = [set() for _ in said]
        plain: list[list[tuple[str, Op]]] = [[] for _ in said]
        learned: set[int] = set()  # the ops the clause model proposed, by id
        # The readings' ops that leave out what their sentence says, by id: the turn may
        # stand for them in the speaker's words.
        reworded: list[set[int]] = [set() for _ in said]
        retry: list[tuple[int, str, str]] = []  # (message, restored text, its sentence)
        antecedents: list[tuple[str | None, str | None]] = []  # relation, its name
        # whether a number alone may be each message's speaker's age (the question it
        # answers asks none other)
        ages = [asks_age(asked.get(m.id)) for m in said]
        fixes: list[list[Correction]] = []
        analysed: list[tuple[Doc, list[Clause]]] = []
        named: tuple[str, datetime, str | None] | None = None  # relation, when, name
        # (a bare yes or no is read as the statement it makes of the question put to
        # "you": "god no" to "Do you eat tofu?" says "I don't eat tofu.")
        # (only a question of the assistant's: the user's own, sent twice, is no question
        # put to them)
        put = {m.id for before, m in itertools.pairwise(messages)
               if before.role is Role.assistant}
        docs = parse([(text or m.content)[:_READ_CHARS] for m, text in zip(
            said, restated([(asked.get(m.id) if m.id in put else None, m.content)
                            for m in said]), strict=True)])
        # "I'm vegan btw, what should I make?": parsed again with the statement a sentence
        # of its own, so the question mark at the end does not make it asked
        # (a request about the memory or the replies keeps its reason after it)
        decided = decide(docs)  # whether each is a request about the memory, and which
        asks = [intent is not Intent.none for intent, _ in decided]
        apart = {n: text for n, doc in enumerate(docs) if (text := asked_apart(doc, asks[n]))}
        parted = sorted(apart)
        for round_ in range(1, _APART_ROUNDS + 1):
            for n, doc in zip(apart, parse(list(apart.values())), strict=True):
                docs[n] = doc
            if round_ < _APART_ROUNDS:  # (what the last round parted is not parted again)
                apart = {n: text for n in apart if (text := asked_apart(docs[n], asks[n]))}
        for n, redecided in zip(parted, decide([docs[n] for n in parted]), strict=True):
            decided[n] = redecided
        for n, (msg, doc) in enumerate(zip(said, docs, strict=True)):
            recent = named is not None and msg.at - named[1] <= _ANTECEDENT_FOR
            if (relative := asked_relative(asked.get(msg.id))) is not None:
                # the question just asked named them last: "what does your son like?"
                # "pasta. he won't touch rice"
                named = (relative, msg.at, None if named is None or named[0] != relative
                         else named[2])
                recent = True
            antecedents.append((named[0], named[2]) if named and recent else (None, None))
            clauses = analyse(doc, *antecedents[n])
            analysed.append((doc, clauses))  # the turn candidate reads the same clauses
            if decided[n][0] is Intent.style and not _styled(doc, clauses):
                decided[n] = (Intent.none, decided[n][1])
            # a one-sentence answer to a question about someone else is theirs ("how old
            # are your kids?" "7 and 4")
            theirs = len(list(doc.sents)) == 1 and about_someone(asked.get(msg.id))
            if (relative := last_relative(doc)) is not None:
                named = (relative, msg.at, relative_name(doc, relative))
            fixes.append(corrections(doc))
            found[n].extend(updates(fixes[n], memories))
            righted: set[int] = set()  # the sentences a value is put right in say it alone
            for op, sentence in put_right(doc):
                found[n].append(op)
                read_[n].add(sentence.text)
                righted.add(sentence.start)
            if fixes[n]:  # (the sentences that put a value right are the correction's)
                read_[n].update(s.text for s in doc.sents if any(
                    t.text in (f.new, f.old) for f in fixes[n] for t in s))
            for sentence, ops in sentences(doc, clauses, msg.at, self.model, learned,
                                           requests(doc, decided[n])):
                if sentence.start in righted:
                    continue
                ops = _planned(unsaid_relation(ops), sentence, clauses, msg.at)
                lossy = [loses(op, sentence) for op in ops]
                ops = _detailed(ops, sentence, clauses, learned)
                found[n].extend(ops)
                if ops:
                    reworded[n].update(id(op) for op, lost in zip(ops, lossy, strict=True)
                                       if lost)
                    _note(ops, sentence.text, read_[n], plain[n], learned | reworded[n])
                    if not fixes[n] and names_left_out(ops, sentence, clauses):
                        # a name or figure no op says: the turn reads the sentence too
                        read_[n].discard(sentence.text)
                    # (what its facts leave out, which the turn will not read either)
                    found[n].extend(left_over(ops, sentence, clauses))
                    if all(op.slot == "name" for op in ops) and (
                            rest := after_name(sentence)) is not None:
                        # "Łukasz here, plasterer in Reading": the rest, which nothing
                        # read, is read as a sentence of its own
                        retry.append((n, rest, sentence.text))
                elif (restored := (None if theirs else with_subject(sentence, ages[n]))
                      or with_relative(sentence, clauses)) is not None:
                    retry.append((n, restored, sentence.text))
        # Chat drops the subject ("live in Croydon", "allergic to latex"): such a sentence
        # is read again with the "I" put back, in one more batch; a run of fragments the
        # parser joined ("34. live in Gdansk.") needs a second.
        for _ in range(_ROUNDS):
            again: list[tuple[int, str, str]] = []
            for (n, text, origin), doc in zip(retry, parse([t for _, t, _ in retry]),
                                              strict=True):
                reread = analyse(doc, *antecedents[n])
                for sentence, ops in sentences(doc, reread, said[n].at, self.model, learned):
                    # (what the reading leaves out is kept beside it, as for any sentence:
                    # "29, night nurse at the Royal Infirmary" is more than an age)
                    ops = _detailed(_planned(ops, sentence, reread, said[n].at), sentence, reread,
                                    learned)
                    # A name needs the user's own "I'm": "Canny." read as "I'm Canny." is
                    # how the day went, not who they are; and so does what they are, in
                    # an answer ("Woodworking, mostly": how they spend their time).
                    answer = asked.get(said[n].id) is not None
                    ops = [op for op in ops if op.slot != "name"
                           and not (answer and op.reason == MEANING)]
                    found[n].extend(ops)
                    if ops:
                        _note(ops, origin, read_[n], plain[n], learned)
                    elif (restored := with_subject(sentence, ages[n])) is not None \
                            and restored != text:
                        again.append((n, restored, origin))
            retry = again
        for n, msg in enumerate(said):
            # a style picked from those the assistant offered is for the piece at hand
            found[n] = [op for op in found[n] if not (
                op.type is MemoryType.protocol and op.surface is Surface.adapt
                and offered(asked.get(msg.id), op.content))]
        # A message that puts a value right may tell more: "It's six! I clean forgot wee
        # Callum, our Fiona's youngest" (the correction's own sentences aside, above).
        turns = [turn_candidate(doc, clauses, read_[n], asked.get(msg.id), plain[n],
                                reworded[n])
                 if adds_only([op for op in found[n] if not (
                     fixes[n] and op.op is OpKind.update and op.target is not None)])
                 else None
                 for n, (msg, (doc, clauses)) in enumerate(zip(said, analysed, strict=True))]
        # "I've had a rough year. [...] Please never mention my ex.": a boundary refers to
        # what the user just said, which is no fact to keep either; not to a message about
        # something else ("I work shifts as a paramedic" before "don't bring up my dad").
        for n in range(1, len(said)):
            if turns[n - 1] is not None \
                    and said[n].at - said[n - 1].at <= _ANTECEDENT_FOR \
                    and any(boundary(op) and _refers_to(said[n - 1], op) for op in found[n]):
                turns[n - 1] = None
        return Reading(said, [unsaid(ops) for ops in found], turns, fixes)


def _styled(doc: Doc, clauses: Sequence[Clause]) -> bool:
    """Whether a message the request model calls a style of reply still asks for one
    without what another person does in it: "make it sound like me, my teacher always
    knows" asks for this piece, whatever the teacher "always" does; "keep it brief,
    always" asks for every reply."""
    theirs = {t.i for c in clauses if c.subject is not None and (
        c.owner is Owner.relative or (c.owner is Owner.other and (
            c.subject.lower_ in ("he", "she") or c.subject.pos_ == "PROPN")))
        for t in c.tokens()}
    if not theirs:
        return True
    rest = "".join(t.text_with_ws for t in doc if t.i not in theirs).strip(" ,;-")
    if not rest:
        return False
    ((intent, _),) = decide(parse([rest]))
    return intent is Intent.style


# The embedder's cosine from which a message is about what a boundary keeps out, with the
# boundary said whole or its thing alone, whichever is closer: "I've had a rough year with
# relationships" and "Never mention their ex" are 0.34 apart, "he died of cancer last
# year" and "their dad" 0.22, "my mum is coming to stay" and "their dad" 0.17, "can you
# help me with meal prep [...] as a paramedic" and either wording under 0.
_ABOUT = 0.2


def _refers_to(msg: Message, op: Op) -> bool:
    """Whether ``msg`` is about what the boundary ``op`` keeps out, by meaning."""
    thing = kept_out(op)
    if thing is None:
        return False
    # (unit vectors: their dot product is the cosine)
    said, whole, alone = embedder().embed([msg.content[:_READ_CHARS], op.content, thing])
    return float(max(said @ whole, said @ alone)) >= _ABOUT


def _planned(ops: list[Op], sentence: Span, clauses: Sequence[Clause], at: datetime
             ) -> list[Op]:
    """The ops of a sentence but a plan on no day that the statement model does not keep
    in the words the user typed (``_statements.passing_plan``): "ok I'll paste my draft
    below" is what they are about to do in the chat, no plan to follow up. Not in a
    sentence that names a day ahead, whatever the plan's own words: "me nans 80th is next
    saturday and i said id make the cake"."""
    from engrammar.extract.parser._events import day_ahead

    # (the day first: it costs no embedding)
    if not any(_undated_plan(op) for op in ops) or day_ahead(sentence.text, at) is not None \
            or not passing_plan(as_typed(said_part(sentence, clauses))):
        return ops
    return [op for op in ops if not _undated_plan(op)]


def _undated_plan(op: Op) -> bool:
    return op.op is OpKind.add and op.type is MemoryType.open_loop and op.due is None


def _detailed(ops: list[Op], sentence: Span, clauses: Sequence[Clause],
              learned: set[int]) -> list[Op]:
    """The ops of a sentence with their detail (``with_detail``); an op of the clause
    model's (its id in ``learned``) stays one, its detail added."""
    detailed = with_detail(ops, sentence, clauses)
    learned.update(id(new) for old, new in zip(ops, detailed, strict=True)
                   if id(old) in learned)
    return detailed


def _note(ops: Sequence[Op], sentence: str, read: set[str],
          plain: list[tuple[str, Op]], loose: set[int]) -> None:
    """A sentence a reading typed is that reading's: its content ("Likes coffee", "Is a
    night owl") is what the gate compares with the pool, for polarity, values and
    restatements. The ``loose`` ops wait for the turn, which may stand for them in the
    speaker's words: the clause model's adds, and a reading's that leaves out what its
    sentence names (``loses``), and a limit (``parser._abilities``); so do the resolutions
    of things done."""
    ops = [op for op in ops if op.reason != BY_ROLE]  # (a fact aside claims nothing)
    if all((replaceable(op, reworded=id(op) in loose)
            and (op.op is OpKind.close_loop or id(op) in loose or op.reason == LIMIT))
           or _stopping(op) for op in ops):
        plain.extend((sentence, op) for op in ops)
    else:
        read.add(sentence)


def _detailing(ops: Sequence[Op], sentence: Span, detail: str, answer: bool = False
               ) -> int | None:
    """The index of the last fact added from ``sentence`` (by the words they share) that
    ``detail`` may say more of: a plan or an event (where, since when, with whom), a fact
    it shares a word with, or any fact when both answer one question. "I'm vegetarian.
    Husband and two kids." is two facts."""
    said = content_words(sentence.text)
    for i in range(len(ops) - 1, -1, -1):
        op = ops[i]
        if op.op is not OpKind.add or op.type not in FACT_TYPES or not op.content:
            continue
        words = content_words(op.content)
        if words & said and (answer or op.type in (MemoryType.open_loop, MemoryType.episodic)
                             or words & content_words(detail)):
            return i
    return None


def _stopping(op: Op) -> bool:
    """A change aimed at nothing: a thing the user stopped doing (``ceased``), which the
    gate matches with the memory it is about."""
    return op.op is OpKind.contradict and op.target is None and bool(op.content)


def _correct(n: int, fixes: Sequence[Correction], said: Sequence[Message],
             found: list[list[Op]], turns: Sequence[TurnCandidate | None], kept: list[bool],
             model: Model, memories: Sequence[Memory]) -> bool:
    """Message ``n`` corrects values ("she's called Nia not Mia"): each fact an earlier
    message of the batch proposed with an old value is proposed with the new one instead
    (a stored memory gets an update, ``updates``, and keeps the old value in history). An earlier
    turn the model passed over is kept when it is corrected: the user cared to put it right.
    Whether the message corrected anything, or had (a memory holds the new value: the
    night is read again): then its own words (and what restates a new value) are no
    memory of their own, the correction is made in what it corrects."""
    made = [op for op in found[n] if op.op is OpKind.update]
    fixed_here = False
    for k in range(n):
        turn = turns[k]
        proposed = ([] if kept[k] or turn is None
                    else propose_turn(turn, said[k].at, model, keep=True))
        if turn is not None and any(corrected(op, fixes) is not None for op in proposed):
            gone = {id(op) for op in turn.replaces}
            found[k] = [op for op in found[k] if id(op) not in gone] + proposed
            kept[k] = True
        for i, op in enumerate(found[k]):
            if op.op in (OpKind.add, OpKind.update) and (
                    new := corrected(op, fixes)) is not None:
                # Put right in the batch, the old value is never written: it was never
                # true ("autocorrect! Nia not Mia"), and a night read again finds the
                # corrected fact, not the old value, beside the memory it made.
                found[k][i] = new
                fixed_here = True
    if not made and not fixed_here and not any(f.holds(m.content) for f in fixes
                                               for m in memories):
        return False
    # (nor is the old value it quotes: "you called my cat Maureen. It's Mairéad!")
    found[n] = [op for op in found[n] if op.op is not OpKind.update
                and not any(f.new in op.content for f in fixes)
                and corrected(op, fixes) is None] + made
    return True


def _unique(ops: list[Op]) -> list[Op]:
    seen: set[tuple[str, str, str, str]] = set()
    out = []
    for op in ops:
        key = (op.op.value, op.content.lower(), ",".join(map(str, op.evidence)),
               op.target or "")
        if key not in seen:
            seen.add(key)
            out.append(op)
    return out
