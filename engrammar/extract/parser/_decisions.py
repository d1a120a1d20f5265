"""Learned decisions over candidates: keep it or not, as which type, with what salience;
and whether a turn candidate (``parser._turns``: what a message states that no reading
kept) is worth keeping, by a second logistic model over its own features.

A linear model over hashed features of the parse (the clause's lemmas, its head, tense,
polarity, modality, owner, the shape of its subject and objects) decides, trained by
``python -m bench train_parser`` on the LoCoMo dev split and on clauses labelled in
``bench/data/parser_labels.jsonl``. Inference is a few dot products in numpy, so the
extractor stays far above 500 messages a second on one core; the embedder's vectors were
measured as features too (see bench/train_parser.py) and are not worth an embedding per
clause at extraction time.

The weights ship in ``data/decisions.npz``, checked against the sha256 below at load like
the embedder's model: a different file is a model nobody measured.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, replace
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from engrammar.extract.parser._kinds import shipped as kinds
from engrammar.extract.parser._turns import FACT_TYPES
from engrammar.extract.parser._turns import features as turn_features
from engrammar.extract.parser._weights import checked, columns, index
from engrammar.models import MemoryType, OpKind, Tense

if TYPE_CHECKING:
    from datetime import datetime

    from spacy.tokens import Token

    from engrammar.extract.parser._candidates import Candidate
    from engrammar.extract.parser._turns import TurnCandidate
    from engrammar.models import Op

WEIGHTS = files("engrammar.extract.parser") / "data" / "decisions.npz"
WEIGHTS_SHA256 = "541b39258062956a8192c3cf54ee9f3545252e8c3ac4e8fc970cc2bc1495b402"
# Hashed feature space: collisions cost little at this size, and the file stays small.
DIM = 1 << 14
TYPES = FACT_TYPES  # the type head's columns, in order
# From what chance the type model's plan outranks the type a reading or the clause model
# gave: the lowest bar at which its plans are 0.85 right out of fold on the typed messages
# (0.883 there, recall 0.609; 0.815 at 0.5). On the batch written to tell recurring dates
# from one-off ones (b6), held out, 0.671.
PLAN_CHANCE = 0.6


def features(cand: Candidate) -> list[str]:
    """The names of a candidate's features: what the parse says and which words it uses."""
    c = cand.clause
    head = c.head
    subject = c.subject
    subj = ("none" if subject is None else subject.lower_ if subject.pos_ == "PRON"
            else f"{subject.pos_}")
    out = [f"owner={c.owner.value}", f"tense={c.tense}", f"neg={c.negated}",
           f"dep={head.dep_}", f"tag={head.tag_}", f"head={head.lemma_.lower()}",
           f"subj={subj}", f"head+tense={head.lemma_.lower()}/{c.tense}",
           f"len={min(len(cand.content.split()) // 4, 6)}", "bias"]
    out += [f"modal={m}" for m in c.modals]
    if c.relation:
        out.append(f"relation={c.relation}")
    out.append(f"clauses={min(cand.clauses, 3)}")
    tokens = cand.tokens
    for t in tokens:
        if t.is_punct:
            continue
        if t.like_num:
            out.append("has=num")
        if t.pos_ == "PROPN":
            out.append("has=propn")
        out.append(f"w={t.lemma_.lower()}")
        out.append(f"pos={t.pos_}")
        if t.head.i == head.i:
            out.append(f"arg={t.dep_}:{t.lemma_.lower()}")
    lemmas = [t.lemma_.lower() for t in tokens if not t.is_punct]
    out += [f"bi={a}_{b}" for a, b in itertools.pairwise(lemmas)]
    return out


def vector(names: list[str]) -> np.ndarray:
    """The candidate's feature vector, counts scaled to unit length."""
    v = np.zeros(DIM, dtype=np.float32)
    np.add.at(v, index(names, DIM), 1.0)
    norm = float(np.linalg.norm(v))
    return v / norm if norm else v


@dataclass(frozen=True)
class Decision:
    keep: float          # probability the candidate is worth keeping
    type: MemoryType
    salience: float


@dataclass(frozen=True)
class Model:
    """The shipped weights: one logistic regression for keep, one softmax for the type."""

    keep_w: np.ndarray   # (DIM,)
    keep_b: float
    type_w: np.ndarray   # (DIM, len(TYPES))
    type_b: np.ndarray   # (len(TYPES),)
    threshold: float
    turn_w: np.ndarray   # (DIM,): keep, for a turn candidate (parser._turns)
    turn_b: float
    turn_threshold: float

    def decide(self, cand: Candidate) -> Decision:
        cols, weights = columns(features(cand), DIM)
        keep = _sigmoid(float(weights @ self.keep_w[cols]) + self.keep_b)
        logits = weights @ self.type_w[cols] + self.type_b
        kind = TYPES[int(np.argmax(logits))]
        return Decision(keep, kind, salience(keep))

    def keep_turn(self, turn: TurnCandidate) -> float:
        """The probability that a turn candidate is worth keeping."""
        cols, weights = columns(turn_features(turn), DIM)
        return _sigmoid(float(weights @ self.turn_w[cols]) + self.turn_b)


def load(path: Path | None = None, expected: str | None = None) -> Model:
    """The model from ``path`` (the shipped file by default), checked by sha256."""
    path = checked(path or Path(str(WEIGHTS)), expected or WEIGHTS_SHA256,
                   "decision weights")
    with np.load(path) as data:
        return Model(keep_w=data["keep_w"].astype(np.float32),
                     keep_b=float(data["keep_b"]),
                     type_w=data["type_w"].astype(np.float32),
                     type_b=data["type_b"].astype(np.float32),
                     threshold=float(data["threshold"]),
                     turn_w=data["turn_w"].astype(np.float32), turn_b=float(data["turn_b"]),
                     turn_threshold=float(data["turn_threshold"]))


def _dated(kind: MemoryType, content: str, text: str, at: datetime, tenses: set[str]
           ) -> tuple[MemoryType, str, datetime | None]:
    """The type, content and due day of a kept statement, said in ``text`` at ``at`` in
    ``tenses``. A plan keeps the day it is due, an event the day it happened (after its
    words). A state set on a day ahead is an arrangement, a plan to follow up: "my driving
    test is on Tuesday", "we're off to Lisbon next month". Not a state said of a day long
    ahead ("my birthday is on the 14th of March"), nor what was done."""
    from engrammar.extract.parser._events import PLAN_AHEAD, day_ahead, past_day

    planned = kind is MemoryType.open_loop or (
        kind is MemoryType.profile and "past" not in tenses)
    if planned:
        due = day_ahead(text, at)
        if kind is MemoryType.open_loop:
            return kind, content, due
        if due is not None and due <= at + PLAN_AHEAD:
            return MemoryType.open_loop, content, due
    elif kind is MemoryType.episodic:
        if (day := past_day(text, at)) is not None:
            return kind, f"{content} ({day.text}, {day.when.date().isoformat()})", None
        # An event on no day past but on one soon ahead is still to come: "dentist tomorrow
        # 9am for the root canal, then flying to colombo in 10 days" is a plan however its
        # other clauses read ("haven't even bought the saree").
        if (due := day_ahead(text, at)) is not None and due <= at + PLAN_AHEAD:
            return MemoryType.open_loop, content, due
    return kind, content, None


def _ahead(turn: TurnCandidate, at: datetime) -> str | None:
    """The text of a turn's first sentence to name a day, when the clause naming it tells
    of the present or what is to come, and its day is one soon ahead ("due friday and i
    haven't started": the day is the "due"'s, not the "started"'s). None when that clause
    tells of the past, or there is none to tell ("HOLE IN ONE on saturday!!!")."""
    from engrammar.extract.parser._events import PLAN_AHEAD, past_day, plan_due

    heads = {c.head.i: c for c in turn.clauses}
    for sentence in turn.sentences:
        ahead = plan_due(sentence.text, at)
        found = ahead or past_day(sentence.text, at)
        if found is None:
            continue
        last = found.text.split()[-1]
        node = next((t for t in sentence if t.lower_ == last), None)
        while node is not None and node.i not in heads and node.head.i != node.i:
            if node.tag_ in ("VBD", "VBN"):
                return None  # a thing done on that day: "sportive done on sunday"
            node = node.head
        clause = heads.get(node.i) if node is not None else None
        if clause is None or clause.tense == "past" or not _present(clause.head):
            return None
        # (the day read ahead, as ``_events.day_ahead`` reads it, without reading it twice)
        due = ahead.when if ahead is not None and ahead.when > at else None
        return sentence.text if due is not None and due <= at + PLAN_AHEAD else None
    return None


def _present(head: Token) -> bool:
    """Whether a clause's head tells of now or what is to come: a verb in the present or
    under a modal ("is on friday", "I'm flying", "will ring"), or a thing "due"."""
    finite = ("VBZ", "VBP", "MD")
    return head.tag_ in finite or any(
        (c.dep_ in ("aux", "auxpass") and c.tag_ in finite)
        or (c.lower_ == "due" and c.pos_ == "ADJ") for c in head.children) or (
        head.lower_ == "due" and head.pos_ == "ADJ")


def salience(keep: float) -> float:
    """The salience of what a model keeps with chance ``keep``: more sure to be worth
    keeping, more salient; within the gate's usual range."""
    return round(0.45 + 0.3 * keep, 2)


def _sigmoid(z: float) -> float:
    return float(1.0 / (1.0 + np.exp(-z)))


@functools.cache
def shipped() -> Model:
    """The package's model, loaded and checked once per process."""
    return load()


def propose(cand: Candidate, at: datetime, model: Model | None = None) -> list[Op]:
    """The add a candidate becomes when the model keeps it: its type and salience decided,
    its words as they were said; a plan keeps the day it is due, an event the day it
    happened. Whether it closes a loop, updates or restates a memory is the gate's call."""
    from engrammar.extract.parser._candidates import gives_reason
    from engrammar.extract.parser._requests import proposal
    from engrammar.extract.parser._statements import reason_kept

    model = model or shipped()
    decision = model.decide(cand)
    if decision.keep < model.threshold:
        if not (gives_reason(cand.clause) and reason_kept(cand, at)):
            return []
        # (a reason the statement model keeps, as sure as the clause model's bar)
        decision = replace(decision, keep=model.threshold, salience=salience(model.threshold))
    kind, content, due = _dated(decision.type, cand.content, cand.clause.sentence.text, at,
                                {cand.clause.tense})
    return [proposal(kind, content, salience=decision.salience, due=due,
                     confidence=round(0.6 + 0.3 * decision.keep, 2))]


def propose_turn(turn: TurnCandidate, at: datetime, model: Model | None = None,
                 keep: bool = False) -> list[Op]:
    """The add a turn candidate becomes when the turn model keeps it (or ``keep`` says it
    is kept whatever the model says): typed as the readings it replaces typed their ops,
    else a plan when its first clause candidate or its tense makes one, else as the type
    model (``parser._kinds``) says; a plan whenever that model is sure of one. Its words
    as they were said."""
    from engrammar.extract.parser._events import past_day
    from engrammar.extract.parser._phrases import as_typed
    from engrammar.extract.parser._requests import proposal
    from engrammar.extract.parser._statements import passing_plan

    model = model or shipped()
    chance = model.keep_turn(turn)
    if chance < model.turn_threshold and not keep:
        return []
    keep_p = max(chance, model.turn_threshold)
    typed = next((op.type for op in turn.replaces if op.type in TYPES), None)
    # It stands for a thing done, which closes the plan it matches (the gate's call, as for
    # the resolution it replaces), else is the episode it says.
    done = any(op.op is OpKind.close_loop for op in turn.replaces)
    first = turn.first
    tenses = {c.tense for c in turn.clauses}
    odds = None  # the type model's chances, read once when asked
    if typed is not None:
        kind = typed  # as the readings it replaces typed it
    elif done and (len(turn.sentences) == 1 or tenses <= {"past"}):
        kind = MemoryType.episodic
    else:
        kind = (model.decide(first).type if first is not None else MemoryType.episodic
                if tenses == {"past"} else MemoryType.open_loop if "future" in tenses
                else MemoryType.profile)
        # What kind of fact it is, as people typed messages like it; a plan the clause
        # model or the tense made stays one.
        odds = kinds().odds(turn, at)
        learned = max(odds, key=odds.__getitem__)
        if learned is MemoryType.episodic and "past" not in tenses and not any(
                past_day(s.text, at) for s in turn.sentences):
            # Nothing is told as done, on no day gone: no episode ("3 lads", asked "Got
            # any kids?"), but the likeliest of the other types.
            learned = max((k for k in odds if k is not MemoryType.episodic),
                          key=odds.__getitem__)
        if MemoryType.open_loop not in (kind, learned):
            kind = learned
    if (kind is not MemoryType.open_loop and not done and "past" not in tenses
            and (odds or kinds().odds(turn, at))[MemoryType.open_loop] >= PLAN_CHANCE):
        # What people say they mean to do is a plan whatever the readings made of its words
        # ("I want to open a bakery one day" is no state of theirs), as the messages
        # labelled by type teach; not what was done, which may close one.
        kind = MemoryType.open_loop
    # A thing done is no plan, whatever day it names.
    text = " ".join(s.text for s in turn.sentences)
    # (a state said with a day soon ahead is a plan when the type model leans to one most:
    # "goin out to Funk Island on the boat in 5 days, me and the brother"; "my birthday is
    # on the 14th of March" leans to a profile fact)
    leans = kind is MemoryType.profile and not done and max(
        (odds := odds or kinds().odds(turn, at)), key=odds.__getitem__) is MemoryType.open_loop
    if (kind is MemoryType.episodic or leans) and not done and (
            ahead := _ahead(turn, at)) is not None:
        # The day is ahead when the sentence naming it tells of nothing past, whatever the
        # others do: "due friday and i haven't started" is a plan due on the next friday.
        kind, text = MemoryType.open_loop, ahead
    kind, content, due = _dated(kind, turn.content, text, at, {"past"} if done else tenses)
    if kind is MemoryType.open_loop and due is None and not (done or keep) and passing_plan(
            as_typed(turn.tokens)):
        return []  # a thing about to be done in the chat, or a daydream: no plan to follow
    op = proposal(kind, content, salience=salience(keep_p), due=due,
                  confidence=round(0.6 + 0.3 * keep_p, 2))
    if done and len(turn.sentences) == 1:
        # As the resolution it replaces: it closes the open loop it matches, else the gate
        # keeps it as the memory it says; said as an end ("finally ..."), it matches as
        # loosely as that resolution did.
        said_done = any(op.op is OpKind.close_loop and op.tense is None
                        for op in turn.replaces)
        op = op.model_copy(update={"op": OpKind.close_loop, "type": typed,
                                   "tense": None if said_done else Tense.past})
    elif done:
        # A message of several sentences is more than a resolution: a report, which closes
        # a plan only when it is close to it (the gate's report_match), else is kept. As a
        # resolution its many words came close enough to some plan of the chat's to close
        # it (LoCoMo dev: 23 of one conversation's 28 plans closed, most by unrelated turns).
        op = op.model_copy(update={"tense": Tense.past})
    return [op]
