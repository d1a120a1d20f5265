"""Which kind of fact a message's statement is (who they are, what they like, what
happened), learned from messages people labelled with the type of what they say.

The turn model (``parser._decisions``) decides whether what a message states is worth
keeping; until this model, its type was the type the clause model gave the message's first
clause, a head trained on the rule readings' own types (with tense where they had none).
That typed 46% of the kept turns of the blind labelled chat wrongly: most preferences and
many events came out as profile facts ("fantasy is my genre, Sanderson especially",
"got made redundant yesterday").

A softmax over the turn model's hashed features, with the day the words name (ahead, past
or either) beside the tense, decides which of profile, preference, episodic and open loop
a turn is. A plan it is sure of (``parser._decisions.PLAN_CHANCE``) outranks the type the
readings gave ("I want to open a bakery one day" is no state of the speaker's); the sixth
batch of typed messages teaches it that a date that recurs makes no plan ("my birthday is
on the 14th of March"), which the tense and the day named cannot tell. Trained
by ``python -m bench train_kinds`` on ``bench/data/type_labels.jsonl`` and the other typed
files there that no measure reads, cross-validated with each batch of messages in one fold.
The weights ship in ``data/kinds.npz``, checked against the sha256 below at load.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from engrammar.extract.parser._turns import FACT_TYPES
from engrammar.extract.parser._turns import features as turn_features
from engrammar.extract.parser._weights import checked, columns
from engrammar.models import MemoryType

if TYPE_CHECKING:
    from datetime import datetime

    from engrammar.extract.parser._turns import TurnCandidate

WEIGHTS = files("engrammar.extract.parser") / "data" / "kinds.npz"
WEIGHTS_SHA256 = "b2ec24c911faf43abcaaf8cd595961865b58ac134bcbaa9005aa7e3fa8a7a077"
DIM = 1 << 14
KINDS = FACT_TYPES  # the softmax's columns, in order


def features(turn: TurnCandidate, at: datetime) -> list[str]:
    """The turn model's features, and the day the words name (ahead, past, or either: a
    weekday is both) with the tense it is said in: "on saturday" is a plan in the present
    tense ("we're off to Lisbon on saturday") and a thing done in the past ("adopted a
    kitten on saturday")."""
    from engrammar.extract.parser._events import day_ahead, past_day

    text = " ".join(s.text for s in turn.sentences)
    out = turn_features(turn)
    ahead, past = day_ahead(text, at) is not None, past_day(text, at) is not None
    day = ("either" if ahead and past else "ahead" if ahead else "past" if past
           else "none")
    out.append(f"k:day={day}")
    out += [f"k:day+tense={day}/{tense}"
            for tense in sorted({c.tense for c in turn.clauses if not c.question})]
    return out


@dataclass(frozen=True)
class KindModel:
    """One softmax over the hashed features."""

    w: np.ndarray  # (DIM, len(KINDS))
    b: np.ndarray  # (len(KINDS),)

    def chances(self, names: list[str]) -> np.ndarray:
        """Each type's probability, in ``KINDS`` order."""
        cols, weights = columns(names, DIM)
        logits = weights @ self.w[cols] + self.b
        e = np.exp(logits - logits.max())
        return np.asarray(e / e.sum())

    def odds(self, turn: TurnCandidate, at: datetime) -> dict[MemoryType, float]:
        """Each type's chance for what the turn states, in ``KINDS`` order."""
        return dict(zip(KINDS, self.chances(features(turn, at)).tolist(), strict=True))


def load(path: Path | None = None, expected: str | None = None) -> KindModel:
    """The model from ``path`` (the shipped file by default), checked by sha256."""
    path = checked(path or Path(str(WEIGHTS)), expected or WEIGHTS_SHA256, "type weights")
    with np.load(path) as data:
        return KindModel(w=data["w"].astype(np.float32), b=data["b"].astype(np.float32))


@functools.cache
def shipped() -> KindModel:
    """The package's model, loaded and checked once per process."""
    return load()
