"""Whether a plain statement typed to an assistant is worth keeping, as chat says it.

The turn model (``parser._decisions``) learned what is memorable from LoCoMo, where two
people talk at length and a memorable turn is a long one: it puts the short statements
people make to an assistant far under its bar ("I live alone" 0.05, "I use a wheelchair"
0.19, "I work from home" 0.21). What chat states plainly has its own target here: a
logistic regression over the local MiniLM's vector of the statement, trained by
``python -m bench train_statements`` on chat messages labelled keep or not by sessions that
read no code (``bench/data/statement_labels*.jsonl`` and the chat label files beside
them), cross-validated with each file (and batch) held out in turn, its bar chosen for
precision out of fold.

It is asked only about a reason the user gives for what they ask, which the clause model
would drop ("Since I am type 2 diabetic, kindly suggest some snacks", "As I use a
wheelchair these days, ..."): a reason given for a request is said to be taken into
account, and is most often a lasting fact. Asked of every plain statement the turn model
drops, it kept more of what the blind fixture sets did not expect than of what they did
(bench/data/README.md). It is also asked of a plan on no day, as typed: one it reads as
nothing worth knowing in a month is a thing about to be done in the chat or a daydream
("ok I'll paste my draft below"), no plan to follow up (``passing_plan``). The weights ship
in ``data/statements.npz``, checked against the sha256 below at load.
"""

from __future__ import annotations

import functools
import re
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

from engrammar.extract.parser._owners import Owner
from engrammar.extract.parser._phrases import as_typed, cap
from engrammar.extract.parser._weights import VectorModel, vector_model

if TYPE_CHECKING:
    from datetime import datetime

    from engrammar.extract.parser._candidates import Candidate
    from engrammar.extract.parser._clauses import Clause
    from engrammar.extract.parser._turns import TurnCandidate
    from engrammar.models import Op

WEIGHTS = files("engrammar.extract.parser") / "data" / "statements.npz"
WEIGHTS_SHA256 = "c0c2faf081a0446cd6cf19979d3f87d4e0e8e1178814cd0e3a1eca22c99305e8"
# Under this chance a plan with no day is no plan of the user's life but a thing about to
# be done in the chat or a daydream ("I'll paste my draft below" 0.12, "hang on, I'll type
# the rest out"): the model keeps 98.3% of the 403 plans people
# typed in ``bench/data/type_labels.jsonl`` at it (96.8% of the 94 that name no day), a file
# it was not trained on.
PLAN_BAR = 0.2
# A statement longer than this many words is a story, which the turn model was trained on.
MAX_WORDS = 24
# Nor does a message of more sentences than this stand as one statement.
MAX_SENTENCES = 1


def load(path: Path | None = None, expected: str | None = None) -> VectorModel:
    """The model from ``path`` (the shipped file by default), checked by sha256."""
    return vector_model(path or Path(str(WEIGHTS)), expected or WEIGHTS_SHA256,
                        "statement weights")


@functools.cache
def shipped() -> VectorModel:
    """The package's model, loaded and checked once per process."""
    return load()


def said(turn: TurnCandidate) -> str | None:
    """The words of a turn candidate as the model was trained to read them, in the first
    person as typed, when it is a plain statement that stands alone (said by the user of
    themselves or their people, no answer, one sentence of at most MAX_WORDS); None
    otherwise. (The training script reads LoCoMo's such statements.)"""
    if turn.answer or not turn.own or len(turn.sentences) > MAX_SENTENCES:
        return None
    text = as_typed(turn.tokens)
    return text if 0 < len(text.split()) <= MAX_WORDS else None


def reason_kept(cand: Candidate, at: datetime) -> bool:
    """Whether the statement model keeps a reason the user gives of themselves for a
    request, which the clause model would not: "Since I am type 2 diabetic, kindly suggest
    some snacks" (the clause model reads "I am type 2 diabetic" at 0.3; its positives are
    LoCoMo's long turns)."""
    text = as_typed(cand.tokens)
    return _speaker(cand.clause) and 0 < len(text.split()) <= MAX_WORDS \
        and not _dated(text, at) and chance(text) >= shipped().threshold


def unopened(op: Op) -> Op:
    """The op without the word that gave its content as a reason: "As they are a single
    mum" -> "They are a single mum"."""
    return op.model_copy(update={"content": cap(_OPENING.sub("", op.content))})


_OPENING = re.compile(r"^(?:since|because|cos|coz|cause|as|though|although|while|whilst)\s+",
                      re.IGNORECASE)


def _speaker(c: Clause) -> bool:
    """Whether a clause is said of the speaker: an "I" or "we" for subject, or none (chat
    drops the "I"). "my guest is diabetic" is the user's to tell, not about them."""
    return c.owner is Owner.user and (c.subject is None or c.subject.lower_ in ("i", "we"))


def _dated(text: str, at: datetime) -> bool:
    """Whether a reason names a day, which makes it a passing one ("since I'm home alone
    tonight"), or a plan the readings know as such."""
    from engrammar.extract.parser._events import past_day, plan_due

    return plan_due(text, at) is not None or past_day(text, at) is not None


def reason_turn_kept(turn: TurnCandidate, at: datetime) -> bool:
    """Whether the statement model keeps a turn candidate that is the reason a question is
    asked for ("Because I work nights, what time should I eat dinner?": "Works nights"),
    which the turn model would not."""
    from engrammar.extract.parser._questions import opening

    # (the turn's sentence is its statement alone, the question cut: the reason's clause
    # is told by the word giving a reason that opens it)
    tokens = turn.tokens
    stating = [c for c in turn.clauses if not c.question and c.factual
               and any(c.head.i == t.i for t in tokens)]
    marks = [opening(c.head) for c in stating]
    if not stating or said(turn) is None or not all(
            m is not None and m.dep_ == "mark" and _speaker(c)
            for c, m in zip(stating, marks, strict=True)):
        return False
    # (the reason as stated, without the word that gives it: "I work nights")
    gone = {m.i for m in marks if m is not None}
    text = "".join(t.text_with_ws for t in tokens if t.i not in gone).strip(" ,;")
    return not _dated(text, at) and chance(text) >= shipped().threshold


@functools.lru_cache(maxsize=4096)
def chance(text: str) -> float:
    """The model's probability that ``text`` states something worth keeping; once per
    distinct text."""
    from engrammar.extract.parser._intent import embedder

    (vector,) = embedder().embed([text])
    return shipped().chance(vector)


def passing_plan(text: str) -> bool:
    """Whether a plan, as the user typed it (``_phrases.as_typed``), is one the statement model
    does not keep: what they are about to do in the chat, or a daydream, not a thing to
    follow up."""
    return bool(text) and chance(text) < PLAN_BAR


def lines_kept(turn: TurnCandidate) -> bool:
    """Whether the statement model keeps every line of a turn made of a list's lines, each
    read alone as typed: "- I don't eat pork" after "some background before my question:"
    is a fact said plainly, which the turn model, trained on LoCoMo's long turns, reads
    low."""
    from engrammar.extract.parser._clauses import said_part
    from engrammar.extract.parser._turns import in_lines

    if not in_lines(turn) or turn.answer or not turn.own:
        return False
    said = [as_typed(said_part(s, turn.clauses)) for s in turn.sentences]
    return all(0 < len(text.split()) <= MAX_WORDS and chance(text) >= shipped().threshold
               for text in said)
