"""The read path's ranking: composite scores and surface policies, decided before any memory
reaches the model. Pure functions over candidates in columns (recall._candidates), from the
chat's copy in memory (recall._snapshot) or from ``store.recall_candidates``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

import numpy as np
from spacy.lang.en.stop_words import STOP_WORDS

from engrammar.models import MemoryType, Surface
from engrammar.recall import _decay as decay
from engrammar.recall._candidates import TYPES, Columns, Recalled
from engrammar.settings import DecaySettings, RecallSettings, ScoreWeights

_OPEN_LOOP = TYPES.index(MemoryType.open_loop)
# Likes, diets, allergies, names and in-jokes: whether one applies cannot be told from a
# message's words ("what cake should I bake?" and a vegan diet), and the embedder's cosine
# sits under the relevance floor for them. Found among a turn's candidates (the chat's
# nearest by meaning or by words), they are kept whatever their relevance: relevance ranks
# them and the budget decides. Only candidates: a chat's every preference would cost each
# turn in the number of memories.
UNFLOORED_TYPES = (MemoryType.preference, MemoryType.shared_lore)
_UNFLOORED = np.isin(np.arange(len(TYPES)), [TYPES.index(t) for t in UNFLOORED_TYPES])

# Sections of the block, in the order they are rendered.
SECTIONS: dict[str, str] = {
    "pinned": "Always known",
    "speak": "Relevant for this turn",
    "adapt": "Use silently to shape the reply",
    "continue": "Open threads to pick up",
    "factcheck": "Do not contradict",
    "avoid": "Do not surface unless the user does",
}


# A candidate's score components, as shown with each block item: its relevance (fused from
# cosine and text), then the priors that may bend it.
COMPONENTS = ("relevance", "cosine", "text", "salience", "confidence", "recency", "urgency",
              "pinned")
PRIORS = ("salience", "confidence", "recency")


@dataclass
class Scored:
    memory: Recalled
    score: float
    parts: np.ndarray  # the score's components, unweighted, in COMPONENTS order
    section: str
    demoted: bool = False
    reasons: list[str] = field(default_factory=list)
    # The score without the priors' lift: relevance plus urgency, the scale excerpts of the
    # log are ranked on (recall._block.ranking). An excerpt has no salience, confidence or
    # recency to be lifted by, so a memory that kept its lift there would outrank a message
    # that matches the query better.
    merit: float = 0.0

    @property
    def components(self) -> dict[str, float]:
        # Built only for what is rendered: most candidates never need it.
        return dict(zip(COMPONENTS, (round(v, 4) for v in self.parts.tolist()), strict=True))


def recency(columns: Columns, now: float, settings: DecaySettings) -> np.ndarray:
    """The weight R of recall._decay: 1 when just written or reinforced, halving every
    half-life of the memory's type."""
    return decay.weights(columns.last_at, columns.type, now, settings)


def urgency(columns: Columns, now: float, horizon_days: float) -> np.ndarray:
    """0 for anything but open loops; rises to 1 as the due date nears, stays 1 after it;
    0.2 for a loop with no date."""
    days_left = (columns.due_at - now) / 86400
    with np.errstate(invalid="ignore"):
        rising = np.clip(1.0 - days_left / horizon_days, 0.2, 1.0)
    result: np.ndarray = np.where(columns.type != _OPEN_LOOP, 0.0,
                                  np.where(np.isnan(days_left), 0.2, rising))
    return result


def relevance(cosine: np.ndarray, text_rank: np.ndarray, text_weight: float,
              best_elsewhere: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """How well each candidate matches the query, in [0, 1]: cosine fused with BM25, the
    latter as a share of the best BM25 among this query's candidates, or of
    ``best_elsewhere`` (another layer's best, for this query) when higher, so the fusion is
    calibrated per query whatever the scale of BM25 for this chat and query, and a weak
    text match is not made a full one because nothing in its layer matched better.
    Returns the relevance, the cosine (NaN, from a zero vector, as 0) and the text share."""
    best = max(float(text_rank.max()) if len(text_rank) else 0.0, best_elsewhere)
    text = text_rank / best if best > 0 else np.zeros_like(text_rank)
    # fmax: the exact cosine is NaN for a zero vector, and NaN is no similarity.
    cos = np.fmax(0.0, cosine)
    fused: np.ndarray = (1 - text_weight) * cos + text_weight * text
    return fused, cos, text


def section_of(memory: Recalled, demoted: bool) -> str | None:
    if memory.surface is Surface.never:
        return None
    if memory.surface is Surface.avoid:
        return "avoid"  # a boundary is a constraint, pinned or not
    if memory.pinned:
        return "pinned"
    if memory.surface is Surface.speak and demoted:
        return "adapt"
    return memory.surface.value


class LeftOut(NamedTuple):
    """A candidate memory that is not ranked, and why: not relevant, or ``suppressed`` (it
    names what the user asked never to bring up)."""

    memory_id: int
    reason: str
    suppressed: bool = False


# The words of a boundary's wording, not of what it keeps out ("Does not want their
# divorce brought up" keeps out "divorce").
_NOT_TOPIC = frozenset({"want", "wants", "brought", "bring", "mention", "mentioned",
                        "mentioning", "talk", "talking", "discuss", "discussed", "discussing",
                        "raise", "raised", "remind", "reminded", "asked", "ask", "hear",
                        "anymore", "user", "topic", "subject"})
# What a never topic is: the words of one memory under the never policy, each a name of it.
Topics = tuple[frozenset[str], ...]
_WORD = re.compile(r"[a-z0-9]+")
# spaCy's stop words but the nouns among them: "their back pain" is about a back.
_STOP = STOP_WORDS - {"back", "front", "bottom", "side", "name", "part", "amount"}
_POSSESSIVE = re.compile(r"['’]s\b")
_OWNER = re.compile(r"(\w+)['’]s\b")
_LISTED = re.compile(r",|;|&|\b(?:or|and|nor)\b", re.IGNORECASE)


def topic_words(text: str) -> set[str]:
    """The lower-cased words of ``text``, as topics are matched against it."""
    return set(re.findall(r"[a-z][a-z'-]+", text.lower()))


@functools.lru_cache(maxsize=16_384)
def _named(text: str) -> frozenset[str]:
    """The words ``text`` names things by: "Their dad's ex-wife" -> {"dad", "ex", "wife"}.
    spaCy's stop words go, not the short words: "dad", "mum" and "ex" are what a boundary
    names most."""
    return frozenset(_WORD.findall(_POSSESSIVE.sub("", text.lower()))) - _STOP


def never_topics(contents: Iterable[str]) -> Topics:
    """What the user asked never to be brought up, one topic per thing a memory lists
    ("Does not want their back pain brought up" -> {"back", "pain"}; "their weight or
    calories" -> {"weight"} and {"calories"}), and one per possessor it names ("their
    dad's death": {"dad"} too, whose memories lead to it), so other layers keep it out."""
    topics: set[frozenset[str]] = set()
    for content in contents:
        # "their weight or calories": each of a list is a topic of its own, kept out alone
        topics.update(_named(part) - _NOT_TOPIC for part in _LISTED.split(content))
        topics.update(_named(owner) - _NOT_TOPIC for owner in _OWNER.findall(content))
    return tuple(sorted((t for t in topics if t), key=sorted))


def naming(text: str, topics: Topics) -> list[str]:
    """The words of the ``topics`` that ``text`` names all of, in order: a topic is named
    whole ("Has pain in their knee" does not name {"back", "pain"})."""
    if not topics:
        return []
    words = _named(text)
    return sorted(set().union(*(t for t in topics if t <= words)))


def score(columns: Columns, cosine: np.ndarray, text_rank: np.ndarray,
          cooled: Collection[int], now: datetime, weights: ScoreWeights,
          settings: RecallSettings, half_lives: DecaySettings, best_bm25: float = 0.0,
          topics: Topics = ()) -> tuple[list[Scored], list[LeftOut]]:
    """Score candidates; return them best first (pinned first) and the ones left out as not
    relevant or as naming one of ``topics`` (those of the memories under the never policy),
    why. Those under the never policy are neither. ``cooled`` holds the memories
    spoken in the chat's last few recalls; ``half_lives`` are the types' (recall._decay);
    ``best_bm25`` is the best text match among the log's messages for this query
    (recall._logsearch.Searched), when excerpts are searched: memories' text shares are
    taken of it too, so they mean what the excerpts' do when the two are ranked together.

    Relevance first: score = relevance x (1 + the weighted priors) + urgency weight x
    urgency. The priors (salience, confidence, and recency if it is given a weight) are
    each in [0, 1] and their weights small, so they lift a memory by a bounded share of its
    relevance (ScoreWeights.lift()) and never past one that matches the query that much
    better; a memory that matches nothing gains nothing from them. Urgency alone is added:
    an open loop coming due is worth raising whatever was asked ("anything I need to do
    today?"), by at most its weight. Equal scores go to the larger lift, then to the more
    recent memory (recency breaks ties by default, weighing nothing else), then the id.
    """
    stamp = now.timestamp()
    fused, cos, text = relevance(cosine, text_rank, settings.text_weight, best_bm25)
    parts = np.stack([
        fused, cos, text,
        columns.salience,
        columns.confidence,
        recency(columns, stamp, half_lives),
        urgency(columns, stamp, settings.urgency_horizon_days),
        columns.pinned.astype(np.float64),
    ])
    # Summed in PRIORS order, term by term: the same floats for the same inputs, whatever
    # a BLAS dot product would do.
    priors = sum(getattr(weights, k) * parts[COMPONENTS.index(k)] for k in PRIORS)
    due = weights.urgency * parts[COMPONENTS.index("urgency")]
    merits = (fused + due).tolist()
    totals = (fused * (1.0 + priors) + due).tolist()
    lift = np.broadcast_to(priors, fused.shape).tolist()
    recent = parts[COMPONENTS.index("recency")]
    never = columns.never()
    # Identity, open threads and how-to-behave rules hold whatever the topic; the budget,
    # not a relevance cut, decides whether they make it. So do the candidates of the
    # UNFLOORED_TYPES. Others need the relevance floor, or a cosine that matches by meaning
    # alone (RecallSettings.min_cosine).
    relevant = (columns.always() | _UNFLOORED[columns.type]
                | (fused >= settings.min_semantic) | (cos >= settings.min_cosine))
    # What is under the never policy is not listed: it is never a candidate to render, and
    # a chat may hold many of them.
    left_out = [LeftOut(int(columns.ids[row]), f"not relevant (relevance {fused[row]:.2f})")
                for row in np.flatnonzero(~never & ~relevant).tolist()]
    kept: list[tuple[Scored, float, float]] = []
    for row in np.flatnonzero(~never & relevant).tolist():
        memory = columns.memories[row]
        # What the user asked never to raise stays out of this layer too: "please don't
        # bring up my dad, he passed in feb" keeps out "Their dad passed in feb"; not a
        # rule of how to behave, nor what the user pinned to be always known.
        named = [] if memory.pinned or memory.type is MemoryType.protocol \
            else naming(memory.content, topics)
        if named:
            left_out.append(LeftOut(memory.id, f"names {', '.join(named)}, under the never policy",
                                    suppressed=True))
            continue
        demoted = (memory.surface is Surface.speak and not memory.pinned
                   and memory.id in cooled)
        section = section_of(memory, demoted)
        assert section is not None  # never was left out above
        item = Scored(memory, round(totals[row], 6), parts[:, row], section, demoted,
                      merit=round(merits[row], 6))
        if demoted:
            item.reasons.append("spoken in a recent recall: demoted to adapt")
        kept.append((item, round(lift[row], 6), round(float(recent[row]), 6)))
    # Pinned first, then by score, by the priors alone, by recency; ids make it total.
    kept.sort(key=lambda s: (not s[0].memory.pinned, -s[0].score, -s[1], -s[2],
                             s[0].memory.id))
    return [item for item, _, _ in kept], left_out
