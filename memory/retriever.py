"""The read path's ranking: composite scores and surface policies, decided before any memory
reaches the model. Pure functions over candidate rows fetched by ``store.recall_candidates``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memory.models import Memory, MemoryType, Surface
from memory.settings import RecallSettings, ScoreWeights

# Days for a memory's recency to halve, by type: identity barely ages, moods age in hours.
HALF_LIFE_DAYS: dict[MemoryType, float] = {
    MemoryType.profile: 365.0,
    MemoryType.preference: 180.0,
    MemoryType.episodic: 30.0,
    MemoryType.open_loop: 14.0,
    MemoryType.shared_lore: 365.0,
    MemoryType.protocol: 365.0,
    MemoryType.reflection: 90.0,
    MemoryType.ephemeral: 1.0,
}

# Sections of the block, in the order they are rendered.
SECTIONS: dict[str, str] = {
    "pinned": "Always known",
    "speak": "Relevant for this turn",
    "adapt": "Use silently to shape the reply",
    "continue": "Open threads to pick up",
    "factcheck": "Do not contradict",
    "avoid": "Do not surface unless the user does",
}


@dataclass(frozen=True, slots=True)
class Recalled:
    """The fields of a candidate that ranking and rendering read. A plain dataclass: recall
    builds about a hundred of these per turn, and revalidating typed rows costs more."""

    id: int
    type: MemoryType
    surface: Surface
    content: str
    pinned: bool
    salience: float
    confidence: float
    due_at: datetime | None
    created_at: datetime
    updated_at: datetime
    last_reinforced_at: datetime | None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Recalled:
        return cls(id=int(row["id"]), type=MemoryType(row["type"]),
                   surface=Surface(row["surface"]), content=row["content"],
                   pinned=bool(row["pinned"]), salience=float(row["salience"]),
                   confidence=float(row["confidence"]), due_at=row["due_at"],
                   created_at=row["created_at"], updated_at=row["updated_at"],
                   last_reinforced_at=row["last_reinforced_at"])


@dataclass
class Scored:
    memory: Recalled
    score: float
    components: dict[str, float]
    section: str
    demoted: bool = False
    reasons: list[str] = field(default_factory=list)


def recency(memory: Recalled | Memory, now: datetime) -> float:
    last = max(t for t in (memory.created_at, memory.last_reinforced_at, memory.updated_at)
               if t is not None)
    age_days = max(0.0, (now - last).total_seconds() / 86400)
    return float(0.5 ** (age_days / HALF_LIFE_DAYS[memory.type]))


def urgency(memory: Recalled | Memory, now: datetime, horizon_days: float) -> float:
    """0 for anything but open loops; rises to 1 as the due date nears, stays 1 after it."""
    if memory.type is not MemoryType.open_loop:
        return 0.0
    if memory.due_at is None:
        return 0.2
    days_left = (memory.due_at - now).total_seconds() / 86400
    if days_left <= 0:
        return 1.0
    return max(0.2, min(1.0, 1.0 - days_left / horizon_days))


def semantic(cos: float, text_rank: float, best_rank: float, text_weight: float) -> float:
    text = text_rank / best_rank if best_rank > 0 else 0.0
    return (1 - text_weight) * max(0.0, cos) + text_weight * text


def section_of(memory: Recalled | Memory, demoted: bool) -> str | None:
    if memory.surface is Surface.never:
        return None
    if memory.surface is Surface.avoid:
        return "avoid"  # a boundary is a constraint, pinned or not
    if memory.pinned:
        return "pinned"
    if memory.surface is Surface.speak and demoted:
        return "adapt"
    return memory.surface.value


_NOT_TOPIC = frozenset({"does", "want", "wants", "brought", "bring", "mention", "mentioned",
                        "never", "their", "them", "about", "please", "talk", "anymore",
                        "user", "they"})


def topic_words(text: str) -> set[str]:
    """The lower-cased words of ``text``, as topics are matched against it."""
    return set(re.findall(r"[a-z][a-z'-]+", text.lower()))


def never_topics(rows: Sequence[dict[str, Any]]) -> frozenset[str]:
    """The words of what the user asked never to be brought up ("Does not want their divorce
    brought up" -> {"divorce"}), so other layers can keep them out too."""
    words: set[str] = set()
    for row in rows:
        if row["surface"] == Surface.never.value:
            words |= {w for w in topic_words(row["content"]) if len(w) > 3} - _NOT_TOPIC
    return frozenset(words)


def score(rows: Sequence[dict[str, Any]], now: datetime, weights: ScoreWeights,
          settings: RecallSettings) -> tuple[list[Scored], list[tuple[int, str]]]:
    """Score candidates; return them best first (pinned first) and the ones left out, why."""
    best_rank = max((float(r["text_rank"]) for r in rows), default=0.0)
    kept: list[Scored] = []
    left_out: list[tuple[int, str]] = []
    for row in rows:
        memory = Recalled.from_row(row)
        cos, rank = float(row["cosine"]), float(row["text_rank"])
        parts = {
            "semantic": semantic(cos, rank, best_rank, settings.text_weight),
            "salience": memory.salience,
            "pinned": 1.0 if memory.pinned else 0.0,
            "urgency": urgency(memory, now, settings.urgency_horizon_days),
            "confidence": memory.confidence,
            "recency": recency(memory, now),
        }
        total = sum(getattr(weights, k) * v for k, v in parts.items())
        demoted = bool(row["cooled"]) and memory.surface is Surface.speak and not memory.pinned
        section = section_of(memory, demoted)
        if section is None:
            left_out.append((memory.id, "surface policy never"))
            continue
        # Identity, open threads and how-to-behave rules hold whatever the topic; the budget,
        # not a relevance cut, decides whether they make it.
        always = (memory.pinned or section == "avoid" or memory.type in (
            MemoryType.profile, MemoryType.open_loop, MemoryType.protocol))
        if not always and parts["semantic"] < settings.min_semantic:
            left_out.append((memory.id, f"not relevant (semantic {parts['semantic']:.2f})"))
            continue
        parts = {k: round(v, 4) for k, v in parts.items()}
        item = Scored(memory, round(total, 6), parts, section, demoted)
        if demoted:
            item.reasons.append("spoken in a recent recall: demoted to adapt")
        kept.append(item)
    # Pinned first, then by score; ids break ties so the order is total and repeatable.
    kept.sort(key=lambda s: (not s.memory.pinned, -s.score, s.memory.id))
    return kept, left_out

