"""Whether what someone is or has is a lasting fact about them ("diabetic", "a dodgy knee",
"on dialysis", "a carer") or a judgement or a passing state ("great", "a legend",
"knackered", "under the weather"). The parse finds the words; what they mean is the
embedder's: a logistic regression over the local MiniLM's vector of the words alone decides.
A list of conditions could never be long enough ("POTS", "sickle cell", "Ehlers-Danlos"),
and the clause model, over hashed words, scores "my son is autistic" and "my mum is great"
alike (0.22, 0.17).

Trained by ``python -m bench train_attributes`` on ``bench/data/attribute_labels.jsonl``
(600 chat messages written and labelled by a session that read no code, each with the words
said of the person), cross-validated with each complement's lines in one fold. The weights
ship in ``data/attributes.npz``, checked against the sha256 below at load.

Each distinct complement is embedded once per process (most recur: "diabetic", "a nurse").
"""

from __future__ import annotations

import functools
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

from engrammar.extract.parser._weights import VectorModel, vector_model

if TYPE_CHECKING:
    from spacy.tokens import Token

WEIGHTS = files("engrammar.extract.parser") / "data" / "attributes.npz"
WEIGHTS_SHA256 = "9201a1b2d7712ab175fab605e8e1bc8974648fc0c00ec6711dd7313148c7a8db"
# Longer than this, the words are a clause of their own, not what someone is.
MAX_WORDS = 8
# The reason an op read this way gives: a fragment answering a question ("Woodworking,
# mostly") read again with an "I'm" put back is the answer's, not what the user is.
MEANING = "what they are, by the words' meaning"
# What a participle's clause holds beside the state it says.
_NOT_SAID = frozenset({"nsubjpass", "auxpass", "aux", "punct", "advcl", "conj", "cc",
                       "parataxis", "npadvmod", "mark", "prep"})


def load(path: Path | None = None, expected: str | None = None) -> VectorModel:
    """The model from ``path`` (the shipped file by default), checked by sha256."""
    return vector_model(path or Path(str(WEIGHTS)), expected or WEIGHTS_SHA256,
                        "attribute weights")


@functools.cache
def shipped() -> VectorModel:
    """The package's model, loaded and checked once per process."""
    return load()


def lasting(said: str) -> bool:
    """Whether ``said`` (what the copula or "have" takes: "type 1 diabetic", "a bad
    knee") is a lasting fact about whoever it is said of."""
    words = " ".join(said.lower().split())
    if not words or len(words.split()) > MAX_WORDS:
        return False
    return chance(words) >= shipped().threshold


@functools.lru_cache(maxsize=4096)
def chance(words: str) -> float:
    """The model's probability that ``words`` are lasting; once per distinct text."""
    from engrammar.extract.parser._intent import embedder

    (vector,) = embedder().embed([words])
    return shipped().chance(vector)


def complement(head: Token, deps: tuple[str, ...] = ("acomp", "attr")) -> str | None:
    """What a "be" says its subject is, when it says it with an adjective or a noun ("is
    diabetic", "'s a midwife in Leeds"; ``deps``: which of the two), in the words said;
    None for any other clause (a place, "is in Leeds"; an age, "is 60"; a doing, "is
    coming")."""
    if head.tag_ == "VBN" and "acomp" in deps and any(
            t.dep_ == "auxpass" and t.lemma_.lower() == "be" for t in head.children) and not any(
            t.dep_ in ("agent", "dobj", "xcomp", "ccomp") or (t.dep_ == "prep" and not any(
                w.is_punct for w in head.doc[head.i + 1: t.i])) for t in head.children):
        # a state said with a participle, parsed as a passive: "I'm immunocompromised" (not
        # a thing done to them, "I was booked in for friday"; a phrase set apart by a comma
        # is no part of it)
        apart = {t.i for k in head.children if k.dep_ in _NOT_SAID for t in k.subtree}
        return " ".join(t.text for t in head.subtree if t.i not in apart)
    if head.lemma_.lower() != "be":
        return None
    said = next((t for t in head.children if t.dep_ in deps), None)
    if said is None or said.like_num or said.pos_ in ("PRON", "NUM", "DET") or (
            said.dep_ == "acomp" and said.pos_ != "ADJ" and said.tag_ != "VBN"):
        # (an adjective or a participle, "retired": any other "acomp" is the parser's
        # guess, "long shift at the hospital", "4 years now haha")
        return None
    return " ".join(t.text for t in said.subtree)
