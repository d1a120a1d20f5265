"""What one of the user's people cannot or will not do, as a lasting fact: "my son can't
have dairy", "my stepdad cannot climb ladders". A limit of this kind is what a memory of a
person is for (what to cook for them, how they travel), and it is said with a negation,
which the readings of a relative's clause took for a thing not so.

The parse finds the limit (a verb under "can't", "cannot" or "won't"); whether it lasts is
learned, not listed: a logistic regression over the local
MiniLM's vector of the limit's words ("can't have dairy" lasts; "can't make it friday",
"can't wait" and "won't go to bed tonight" do not). Trained by ``python -m bench
train_limits`` on ``bench/data/ability_labels.jsonl`` (420 messages written and labelled by
a session that read no code), cross-validated with one topic area held out per fold. The
weights ship in ``data/limits.npz``, checked against the sha256 below at load. Each
distinct limit is embedded once per process.

The user's own limits ("I can't swim") are left to the readings and the turn model: read
this way as well, they cost one of the never-read fixture sets a fixture (fresh 16 -> 15),
while their people's cost none.
"""

from __future__ import annotations

import functools
import re
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

from engrammar.extract.parser._attributes import MAX_WORDS
from engrammar.extract.parser._weights import VectorModel, vector_model

if TYPE_CHECKING:
    from engrammar.extract.parser._clauses import Clause

WEIGHTS = files("engrammar.extract.parser") / "data" / "limits.npz"
WEIGHTS_SHA256 = "f7cd7f0f2570bae46fdc68e74a49f801a9e5c096ad8997cb6ac53a2fa94ec84e"
# The reason a limit's op gives: the message's own words, when the turn model keeps them,
# say it better ("Just nothing with okra in it, can't abide the stuff"), so it waits for the
# turn (parser._extractor), which stands for it when kept.
LIMIT = "what they cannot do, by the words' meaning"
# The modals that say a limit when negated, as the model reads them: what one cannot do,
# what one will not do.
_MODALS = {"ca": "can't", "can": "can't", "wo": "won't", "will": "won't"}
# The parts of a clause that are no part of the limit: what is joined to it or said
# around it ("my dad can't walk far since his stroke": the reason stays in the sentence).
_APART = frozenset({"advcl", "conj", "cc", "parataxis", "punct", "mark", "intj",
                    "discourse", "nsubj", "nsubjpass", "aux", "auxpass", "neg"})
# Words that name no thing of their own: what they stand for is said elsewhere.
_VAGUE = frozenset({"it", "them", "that", "this", "those", "these", "him", "her", "stuff",
                    "thing", "things", "one", "ones"})
# The ways a limit is said, as the model reads them: "cant", "cannot", "unable to" are
# "can't"; "wont" is "won't".
_CANNOT = re.compile(r"^(?:can ?not|can'?t|can’t|unable to|not able to|no longer able to)\b")
_WONT = re.compile(r"^(?:won'?t|won’t)\b")


def limit_words(said: str) -> str:
    """A limit's words as the model reads them: lower case, its modal in one spelling."""
    said = " ".join(said.lower().split())
    return _WONT.sub("won't", _CANNOT.sub("can't", said))


def lasting_limit(c: Clause) -> bool:
    """Whether the clause says what its subject cannot or will not do, for good: "can't
    have dairy", not "can't make it friday" (the model's call on its words)."""
    if not c.negated or c.tense == "past" or not c.factual:
        return False
    head = c.head
    if head.pos_ not in ("VERB", "AUX") or head.lemma_.lower() == "be" or any(
            a.dep_ in ("aux", "auxpass") and a.lemma_.lower() == "be" for a in head.children):
        return False  # a state, not a doing: "can't be bothered", "won't be told"
    if head.dep_ == "conj" and any(k.dep_ == "cc" and k.lower_ == "or" and k.i < head.i
                                   for k in (*head.children, *head.head.children)):
        return False  # what follows if something is not done: "... or she can't go"
    # (the tokenizer splits "cannot" into "can" and "not")
    modal = next((a.lower_ for a in head.children
                  if a.dep_ == "aux" and a.lower_ in _MODALS), None)
    if modal is None or not any(t.dep_ == "neg" for t in head.children):
        return False
    done = sorted([head, *(t for k in head.children if k.dep_ not in _APART and k.i > head.i
                           for t in k.subtree)], key=lambda t: t.i)
    if len(done) + 1 > MAX_WORDS or any(t.lower_ in _VAGUE for t in done[1:]):
        return False  # what it is was said elsewhere: "nothing with okra, can't abide the
        # stuff" (the whole message says it better than the limit would)
    said = limit_words(f"{_MODALS[modal]} {' '.join(t.text for t in done)}")
    return chance(said) >= shipped().threshold


def load(path: Path | None = None, expected: str | None = None) -> VectorModel:
    """The model from ``path`` (the shipped file by default), checked by sha256."""
    return vector_model(path or Path(str(WEIGHTS)), expected or WEIGHTS_SHA256,
                        "limit weights")


@functools.cache
def shipped() -> VectorModel:
    """The package's model, loaded and checked once per process."""
    return load()


@functools.lru_cache(maxsize=4096)
def chance(said: str) -> float:
    """The model's probability that a limit (``limit_words``) lasts; once per text."""
    from engrammar.extract.parser._intent import embedder

    (vector,) = embedder().embed([said])
    return shipped().chance(vector)
