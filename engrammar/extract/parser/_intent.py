"""Whether a sentence is a request about the memory or the assistant's manner, and which:
a lasting style of reply, forget, a topic never to raise, or remember. Learned, not listed.

Two steps. A cheap gate on the parse keeps only sentences addressed to the assistant (an
imperative, "you"/"u" or "your", "please"/"pls", a "from now" phrase, a "no X" fragment, or
a topic said with a predicate and no verb of its own: "my brother is off limits"); most chat
passes no such gate, and a sentence that does not is no request. A message with a sentence that
passes is decided by a softmax regression over its gated sentences' hashed words and parse
features and, beside them, the embedder's vector of the message (the local MiniLM; only
such messages are embedded, in one batch per call): the labels are per message, and a
fragment ("wait", "ok speed round") says little without the rest of it. Trained by
``python -m bench train_requests`` on ``bench/data/request_labels.jsonl`` and, as
negatives, every turn of the LoCoMo dev split (people talking to each other, whose "you"
and imperatives are no requests to an assistant).

What the request is about (its topic, its words) is still read off the parse, by
``parser._requests``; the model only decides whether and which request it is. The weights
ship in ``data/requests.npz``, checked against the sha256 below at load.
"""

from __future__ import annotations

import functools
import itertools
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from engrammar.extract.parser._clauses import heads
from engrammar.extract.parser._lexicon import POLITENESS
from engrammar.extract.parser._mood import POLITE, WH_TAGS
from engrammar.extract.parser._owners import mine, subject_of
from engrammar.extract.parser._weights import checked, columns

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

WEIGHTS = files("engrammar.extract.parser") / "data" / "requests.npz"
WEIGHTS_SHA256 = "93bf94b72b7e0523fb7af750ec1564d251394032ffeb7e4003ad38919a49f0e6"
DIM = 1 << 13  # hashed columns; the embedding's follow them
EMBED_DIM = 384


class Intent(StrEnum):
    none = "none"
    style = "style"        # a lasting instruction on how to reply
    forget = "forget"      # drop what was stored
    avoid = "avoid"        # a topic never to raise
    remember = "remember"  # keep this, explicitly


INTENTS = tuple(Intent)  # the model's columns, in order
_ABOUT = (Intent.forget, Intent.avoid)  # the requests with a topic, read off a sentence

# The words of address the gate reads: the listener named, and politeness.
_YOU = frozenset({"you", "u", "your", "ur", "yours", "yourself", "ya", "youre", "you're"})


class Embedder(Protocol):
    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def addressed(sentence: Span) -> bool:
    """Whether ``sentence`` may be a request to the assistant, from its parse: the cheap
    gate in front of the model (a sentence that fails it is no request)."""
    words = [t for t in sentence if not t.is_punct and not t.is_space]
    if not words:
        return False
    if words[0].tag_ in WH_TAGS and sentence.text.rstrip().endswith("?"):
        return False  # "what do you think?": a question to the listener, not a request
    if any(t.lower_ in _YOU or t.lower_ in POLITENESS for t in words):
        return True
    root = sentence.root
    subject = any(c.dep_ in ("nsubj", "nsubjpass", "expl") for c in root.children)
    for head in heads(sentence):
        # An imperative, the root or a clause joined to it: "wipe the stuff about my old
        # job", "i changed my mind, dont save it". (An "xcomp" shares its head's subject.)
        if head.tag_ == "VB" and head.dep_ != "xcomp" and subject_of(head) is None:
            return True
    if not subject and root.i == sentence.start and any(
            c.dep_ in ("dobj", "ccomp") for c in root.children):
        return True  # a verb the tagger took for a noun: "Scratch what I said"
    first = words[0]
    if first.tag_ == "VB" and (first.dep_ != "aux" or any(
            t.dep_ == "neg" for t in words[1:3])):
        return True  # the tagger's imperative with a misread head; "don't ..."
    we_can = any(c.dep_ == "nsubj" and c.lower_ == "we" for c in root.children) and any(
        c.tag_ == "MD" and c.lower_ in ("can", "could", "shall", "ca") for c in root.children)
    if we_can:
        return True  # "can we not talk about football": a proposal to the listener
    if subject and _negated_wish(root):
        return True  # "I'd rather not talk about my weight", "I don't want to discuss it"
    if any(t.lower_ == "now" and t.head.lower_ == "from" for t in words):
        return True  # "from now on"
    if not subject and any(t.lower_ == "no" and t.dep_ in ("det", "neg")
                           and t.head.pos_ in ("NOUN", "PROPN", "ADJ") for t in words):
        return True  # "no emojis", "no diet talk", "no more emojis ever": verbless
    if root.lemma_ == "be" and subject:
        # "my brother is off limits", "politics is a no-go": a topic said of, no verb of
        # its own, a definite thing named ("the weather is awful" is chat about the world).
        # Its predicate a particle, a preposition or an adjective ("off limits", "off the
        # table"): one that only names the subject ("my name is Lena") says who it is.
        said = next(c for c in root.children if c.dep_ in ("nsubj", "nsubjpass", "expl"))
        return said.pos_ in ("NOUN", "PROPN") and not any(
            c.dep_ == "det" for c in said.children) and any(
            c.dep_ in ("acomp", "prep", "prt", "advmod") for c in root.children)
    return False


def _negated_wish(root: Token) -> bool:
    """A wish of the speaker's, negated: "I'd rather not ...", "I don't want to ..."."""
    mine = any(c.dep_ == "nsubj" and c.lower_ in ("i", "we") for c in root.children)
    wish = root.lemma_.lower() in POLITE | {"want"} or any(
        c.lower_ == "rather" for c in root.children)
    negated = any(t.dep_ == "neg" for t in root.subtree)
    return mine and wish and negated


def features(sentence: Span) -> list[str]:
    """The hashed features of a gated sentence: its words and what its parse says."""
    root = sentence.root
    words = [t for t in sentence if not t.is_space]
    out = [f"root={root.lemma_.lower()}", f"root_tag={root.tag_}", "bias",
           f"first={words[0].lower_ if words else ''}",
           f"q={sentence.text.rstrip().endswith('?')}",
           f"len={min(len(words) // 4, 6)}"]
    subject = next((c for c in root.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    out.append("subj=none" if subject is None else f"subj={_shape(subject)}")
    for t in words:
        lemma = t.lemma_.lower()
        out.append(f"w={lemma}")
        if t.dep_ == "neg" or t.lower_ in ("never", "no"):
            out.append(f"neg>{t.head.lemma_.lower()}")
        if t.head.i == root.i and t.i != root.i:
            out.append(f"arg={t.dep_}:{lemma}")
        if t.dep_ in ("dobj", "pobj", "nsubj", "attr", "dative"):
            out.append(f"{t.dep_}={_shape(t)}")
        if t.tag_ == "MD":
            out.append(f"modal={t.lower_}")
    lowered = [t.lower_ for t in words if not t.is_punct]
    out += [f"bi={a}_{b}" for a, b in itertools.pairwise(lowered)]
    return out


def _shape(tok: Token) -> str:
    """A subject or object by its kind: the pronoun itself, or "my-noun", "noun"."""
    if tok.pos_ == "PRON":
        return tok.lower_
    return f"{'my-' if mine(tok) else ''}{tok.pos_.lower()}"


@dataclass(frozen=True)
class Model:
    """The shipped weights: a softmax over INTENTS; the embedding's columns scaled by
    ``embed_scale`` after the hashed ones (zero when it was trained without them)."""

    w: np.ndarray          # (DIM + EMBED_DIM, len(INTENTS))
    b: np.ndarray          # (len(INTENTS),)
    thresholds: np.ndarray  # (len(INTENTS),): a request's probability must reach its own
    embed_scale: float

    @property
    def embeds(self) -> bool:
        return self.embed_scale > 0

    def probabilities(self, names: list[str], vector: np.ndarray | None) -> np.ndarray:
        cols, weights = columns(names, DIM)
        logits = weights @ self.w[cols] + self.b
        if vector is not None and self.embeds:
            logits = logits + (self.embed_scale * vector) @ self.w[DIM:]
        z = np.exp(logits - logits.max())
        p: np.ndarray = z / z.sum()
        return p

    def intent(self, p: np.ndarray) -> Intent:
        best = int(np.argmax(p))
        kind = INTENTS[best]
        return kind if kind is not Intent.none and p[best] >= self.thresholds[best] \
            else Intent.none


def load(path: Path | None = None, expected: str | None = None) -> Model:
    """The model from ``path`` (the shipped file by default), checked by sha256."""
    path = checked(path or Path(str(WEIGHTS)), expected or WEIGHTS_SHA256,
                   "request weights")
    with np.load(path) as data:
        return Model(w=data["w"].astype(np.float32), b=data["b"].astype(np.float32),
                     thresholds=data["thresholds"].astype(np.float32),
                     embed_scale=float(data["embed_scale"]))


@functools.cache
def shipped() -> Model:
    """The package's model, loaded and checked once per process."""
    return load()


_embedder_lock = threading.Lock()
_embedder: Embedder | None = None


def embedder() -> Embedder:
    """The local MiniLM the model was trained on, one thread, loaded on first use (a chat
    with no gated sentence never loads it); whatever embedder the memories use."""
    global _embedder
    with _embedder_lock:
        if _embedder is None:
            from engrammar.runtime._embedder import LocalEmbedder

            _embedder = LocalEmbedder(threads=1)
        return _embedder


def decide(docs: Sequence[Doc], model: Model | None = None,
           embed: Embedder | None = None) -> list[tuple[Intent, list[Span]]]:
    """Each message's intent and the sentences of it that pass the gate (where a request
    can be): none for a message with no such sentence, else the model's, over the gated
    sentences' features and the whole message's vector (its labels are per message)."""
    model = model or shipped()
    gated = [[s for s in doc.sents if addressed(s)] for doc in docs]
    out: list[tuple[Intent, list[Span]]] = [(Intent.none, g) for g in gated]
    asking = [i for i, g in enumerate(gated) if g]
    if not asking:
        return out
    vectors: np.ndarray | None = None
    if model.embeds:
        vectors = (embed or embedder()).embed([docs[i].text for i in asking])
    for n, i in enumerate(asking):
        names = [f for s in gated[i] for f in features(s)]
        p = model.probabilities(names, None if vectors is None else vectors[n])
        out[i] = (model.intent(p), gated[i])
    several = [i for i in asking if out[i][0] in _ABOUT and len(gated[i]) > 1]
    if several:
        texts = [s.text for i in several for s in gated[i]]
        alone = (embed or embedder()).embed(texts) if model.embeds else None
        at = 0
        for i in several:
            intent, spans = out[i]
            out[i] = (intent, _saying(model, intent, spans,
                                      None if alone is None else alone[at: at + len(spans)]))
            at += len(spans)
    return out


def _saying(model: Model, intent: Intent, sentences: list[Span],
            vectors: np.ndarray | None) -> list[Span]:
    """Which of a request message's gated sentences say its forget or boundary: each read
    alone, those it leans to the request more than to none ("can u put together a plan for
    a 10k? one thing tho, dont ever bring up my weight": the boundary is the second
    sentence's; a plan is no topic to keep out). The labels are per message, so the message
    decides whether and which; a sentence only whether it is the one. When none leans so,
    the likeliest of them. Only these two: their topic is read off the sentence, while a
    style keeps the user's words of every sentence said as a bid (``_requests``), and a
    short one leans to none alone ("no more lists!!" 0.72) though it is one."""
    k = INTENTS.index(intent)
    p = [model.probabilities(features(s), None if vectors is None else vectors[n])
         for n, s in enumerate(sentences)]
    kept = [s for s, q in zip(sentences, p, strict=True) if q[k] >= q[0]]
    return kept or [sentences[int(np.argmax([q[k] for q in p]))]]
