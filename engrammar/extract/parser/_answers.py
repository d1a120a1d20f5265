"""Whether a short answer to the assistant's question is worth keeping, read with the
question it answers.

The turn model (``parser._decisions``) learned what is memorable from LoCoMo, where two
friends talk and a memorable turn is a long one; it reads the few words of an answer
alone, and drops many that say a lasting fact only beside their question: "sesame.
allergic" (0.18) or "shellfish. allergic" (0.11) after "anything you can't eat?". Here a
logistic regression over the local MiniLM's vectors of the question's last sentence and
of the answer, side by side, decides, trained by ``python -m bench train_answers`` on
answers people typed after an assistant's question, labelled
keep or not by sessions that read no code (``bench/data/chat_labels.jsonl`` and the files
beside it), cross-validated with each file and batch held out in turn, its bar chosen for
precision out of fold.

It is asked only of an answer the turn model drops, and only keeps more: an offer taken up
("yes please" after "want the recipe in metric?") or an answer that says nothing lasting
("whenever") stays dropped. Two embeddings per such answer, so the extractor's speed on
messages that answer nothing does not move. The weights ship in ``data/answers.npz``,
checked against the sha256 below at load.

Which fact an answer details is decided here too (``follow_ups``): an answer to a
question about what the user just said joins that fact ("I work in a call centre" /
"What kind of calls?" / "insurance claims mostly"); in a run of the assistant's questions,
each answer is its own. (An answer said back as a sentence is ``parser._restatements``'.)
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from engrammar.extract.parser._phrases import as_typed
from engrammar.extract.parser._referents import points_back
from engrammar.extract.parser._weights import VectorModel, vector_model
from engrammar.models import Role

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

    from engrammar.extract.parser._turns import TurnCandidate
    from engrammar.models import Message

WEIGHTS = files("engrammar.extract.parser") / "data" / "answers.npz"
WEIGHTS_SHA256 = "e394f4a0ac5cd02f2372e2da2d9c01421cf5f5e98166f44adaec3689fe969c29"
# An answer longer than this many words says enough alone: the turn model reads it.
MAX_WORDS = 24


def load(path: Path | None = None, expected: str | None = None) -> VectorModel:
    """The model from ``path`` (the shipped file by default), checked by sha256."""
    return vector_model(path or Path(str(WEIGHTS)), expected or WEIGHTS_SHA256,
                        "answer weights")


@functools.cache
def shipped() -> VectorModel:
    """The package's model, loaded and checked once per process."""
    return load()


def vectors(pairs: Sequence[tuple[str, str]]) -> np.ndarray:
    """Each (question, answer) pair as the model reads it: the vector of the question's
    last sentence, then the answer's."""
    from engrammar.extract.parser._intent import embedder
    from engrammar.extract.parser._turns import last_sentence

    if not pairs:
        return np.zeros((0, 0), dtype=np.float32)
    asked = embedder().embed([last_sentence(q) for q, _ in pairs])
    said = embedder().embed([a for _, a in pairs])
    return np.hstack([np.asarray(asked), np.asarray(said)])


@functools.lru_cache(maxsize=4096)
def chance(question: str, answer: str) -> float:
    """The model's probability that ``answer``, given to ``question``, states something
    worth keeping; once per distinct pair."""
    (vector,) = vectors([(question, answer)])
    return shipped().chance(vector)


def answer_kept(turn: TurnCandidate) -> bool:
    """Whether the model keeps a turn candidate that answers a question: its words as
    typed, of at most MAX_WORDS, beside the question."""
    if not turn.answer or turn.question is None:
        return False
    text = as_typed(turn.tokens)
    return 0 < len(text.split()) <= MAX_WORDS and \
        chance(turn.question, text) >= shipped().threshold


def follow_ups(messages: Sequence[Message]) -> dict[int, int]:
    """For each message that answers a question the assistant asked about the user's
    message right before it, that message's id: "I work in a call centre" / "What kind of
    calls?" / "insurance claims mostly". When that message itself answered a question, the
    next question asks about it only if it says so: in "Do you eat tofu?" / "god no" / "Is
    chicken OK?" / "yep, my go-to", each answer stands for itself."""
    from engrammar.extract.parser._nlp import parse
    from engrammar.extract.parser._turns import asked_in, last_sentence

    # (each of the assistant's messages, the question it asks, read once)
    asking = {m.id: question for m in messages if m.role is Role.assistant
              and (question := asked_in(m.content)) is not None}
    found: list[tuple[Message, Message, str, bool]] = []
    for n, (said, asked, answer) in enumerate(
            zip(messages, messages[1:], messages[2:], strict=False)):
        if said.role is Role.user and answer.role is Role.user and asked.id in asking:
            found.append((said, answer, last_sentence(asking[asked.id]),
                          n > 0 and messages[n - 1].id in asking))
    chained = [f for f in found if f[3]]
    docs = parse([text for f in chained for text in (f[0].content, f[2])])
    leaning = {f[1].id for f, before, question in zip(chained, docs[::2], docs[1::2],
                                                       strict=True)
               if _leans_on(question, before)}
    return {answer.id: said.id for said, answer, _, chain in found
            if not chain or answer.id in leaning}

def _leans_on(question: Doc, before: Doc) -> bool:
    """Whether ``question`` asks about what ``before`` said: it points back at it ("How's
    she keeping?", "why that one?"), takes up one of its words ("What kind of calls?"
    after "I work in a call centre"), or has no verb to ask anything of its own ("Since
    when?", "What kind?")."""
    said = {t.lemma_.lower() for t in before if _content(t)}
    return (not any(t.pos_ in ("VERB", "AUX") for t in question)
            or any(points_back(t) for t in question)
            or any(_content(t) and t.lemma_.lower() in said for t in question))


def _content(tok: Token) -> bool:
    """Whether ``tok`` is a word that names something: not a light verb ("what do you
    do?" takes up nothing of "I do nights")."""
    return tok.pos_ in _CONTENT and tok.lemma_.lower() not in _LIGHT


_CONTENT = frozenset({"NOUN", "PROPN", "VERB", "ADJ", "NUM"})
_LIGHT = frozenset({"be", "have", "do", "get", "go", "make", "take"})

