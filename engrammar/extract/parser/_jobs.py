"""Whether the noun someone says they are names an occupation ("I'm a logistics
coordinator", "im project manager at a bank"), for the job slot.

``parser._lexicon.JOBS`` names the common trades. What it cannot name is every other:
"postie", "wharfie", "claims handler", "logistics coordinator". For a noun it does not
know, a logistic regression over the local MiniLM's vector of "a <the noun with its
modifiers>" decides, at a bar chosen for precision: a false occupation would take the job
slot from the real one ("a dog person", "a Spurs fan" are things people are, not jobs).

Trained by ``python -m bench train_jobs`` on ``bench/data/job_nouns.jsonl`` (932 noun
phrases written and labelled by a session that read no code, 413 of them occupations, and
399 more by another: workplaces, employers and contracts beside the trades said with the
same words, "call centre" and "call centre agent"), cross-validated with one batch held out
per fold (no word is in two of the first four). The weights ship in ``data/jobs.npz``,
checked against the sha256 below at load. Each distinct phrase is embedded once per
process.
"""

from __future__ import annotations

import functools
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

from engrammar.extract.parser._lexicon import NOT_JOBS, trade
from engrammar.extract.parser._weights import VectorModel, vector_model

if TYPE_CHECKING:
    from spacy.tokens import Token

WEIGHTS = files("engrammar.extract.parser") / "data" / "jobs.npz"
WEIGHTS_SHA256 = "88ec78d07f361bd6d6f4db1b5d7339dbe1ed1ad168c803f29ba005ab52ee2cd5"
# The words before a noun that say which trade it is: "logistics coordinator", "head chef",
# "junior data analyst" (not its article or owner).
_MODIFIERS = frozenset({"compound", "amod", "nmod"})


def is_profession(noun: Token) -> bool:
    """Whether ``noun`` (the attribute of "I'm a ...") names an occupation: a trade the
    list names (``known_trade``), else one the model takes it for ("I'm a logistics
    coordinator")."""
    # The model read only what people say they are, so it is asked only that: "I'm a
    # claims handler", not the "contract" of "I'm on a zero hours contract", nor what
    # they would like to be good at ("tips for being a decent trainer").
    copula = noun.head
    said_to_be = (noun.dep_ == "attr" and copula.lemma_.lower() == "be"
                  and copula.tag_ != "VBG") or _taken_on_as(noun)
    return known_trade(noun) or (_may_be_trade(noun) and said_to_be and occupation(noun))


# The verbs of taking up work, whose "as" says what as: "started with the council as a
# bin man", "joined Arup as a graduate engineer", "was hired as a porter".
_TAKEN_ON = frozenset({"start", "begin", "join", "work", "hire", "employ", "take"})


def _taken_on_as(noun: Token) -> bool:
    """Whether ``noun`` is what someone started, joined or works as: "as a porter"."""
    prep = noun.head
    return noun.dep_ == "pobj" and prep.lower_ == "as" and prep.dep_ == "prep" \
        and prep.head.lemma_.lower() in _TAKEN_ON


def known_trade(noun: Token) -> bool:
    """Whether ``noun`` names one of the trades ``JOBS`` lists."""
    # "a vet tech", "a software dev": the modifier may be what names the trade.
    words = [noun.lemma_.lower(),
             *(c.lemma_.lower() for c in noun.children if c.dep_ == "compound")]
    return _may_be_trade(noun) and any(trade(w) for w in words)


def _may_be_trade(noun: Token) -> bool:
    """Whether ``noun`` is a noun no list says is something other than a trade."""
    return noun.pos_ == "NOUN" and noun.lemma_.lower() not in NOT_JOBS


def load(path: Path | None = None, expected: str | None = None) -> VectorModel:
    """The model from ``path`` (the shipped file by default), checked by sha256."""
    return vector_model(path or Path(str(WEIGHTS)), expected or WEIGHTS_SHA256,
                        "occupation weights")


@functools.cache
def shipped() -> VectorModel:
    """The package's model, loaded and checked once per process."""
    return load()


def said_as(phrase: str) -> str:
    """The text the model reads for a noun phrase, as it was trained: "a <phrase>"."""
    return f"a {' '.join(phrase.lower().split())}"


def named(noun: Token) -> str:
    """The noun with the words before it that say which one it is: "logistics coordinator"
    of "im logistics coordinator for a shipping firm"."""
    kept = [t for t in noun.subtree if t.i <= noun.i and (t.i == noun.i or (
        t.dep_ in _MODIFIERS and t.head.i == noun.i) or (
        t.head.dep_ in _MODIFIERS and t.head.head.i == noun.i and t.dep_ in _MODIFIERS))]
    return " ".join(t.text for t in kept)


def occupation(noun: Token) -> bool:
    """Whether the model takes ``noun``, with its modifiers, for an occupation."""
    return chance(said_as(named(noun))) >= shipped().threshold


@functools.lru_cache(maxsize=4096)
def chance(text: str) -> float:
    """The model's probability that ``text`` names an occupation; once per distinct text."""
    from engrammar.extract.parser._intent import embedder

    (vector,) = embedder().embed([text])
    return shipped().chance(vector)
