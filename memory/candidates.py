"""The memories recall ranks, as rows (``Recalled``) and as columns (``Columns``): the whole
chat in its copy in memory (memory.snapshot), or the candidates the SQL path read."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from memory.models import MemoryType, Surface

TYPES = list(MemoryType)
SURFACES = list(Surface)
_ALWAYS_TYPES = np.isin(np.arange(len(TYPES)), [TYPES.index(t) for t in (
    MemoryType.profile, MemoryType.open_loop, MemoryType.protocol)])
_AVOID, _NEVER = SURFACES.index(Surface.avoid), SURFACES.index(Surface.never)
_ARRAYS = ("ids", "type", "surface", "pinned", "salience", "confidence", "last_at", "due_at")


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
    def from_row(cls, row: Sequence[Any]) -> Recalled:
        """From the values of store.RECALL_COLUMNS, in that order."""
        (id_, type_, surface, content, pinned, salience, confidence, due_at, created_at,
         updated_at, last_reinforced_at) = row
        return cls(id=int(id_), type=MemoryType(type_), surface=Surface(surface),
                   content=content, pinned=bool(pinned), salience=float(salience),
                   confidence=float(confidence), due_at=due_at, created_at=created_at,
                   updated_at=updated_at, last_reinforced_at=last_reinforced_at)


@dataclass(frozen=True)
class Columns:
    """Memories as arrays, one row each, for ranking many at once: the whole chat in a
    recall copy (memory.snapshot), or the candidates read by the SQL path."""

    memories: list[Recalled]
    ids: np.ndarray  # int64
    type: np.ndarray  # index into MemoryType
    surface: np.ndarray  # index into Surface
    pinned: np.ndarray  # bool
    salience: np.ndarray
    confidence: np.ndarray
    last_at: np.ndarray  # newest of created, updated, reinforced: epoch seconds
    due_at: np.ndarray  # epoch seconds, NaN for none

    @classmethod
    def of(cls, memories: list[Recalled]) -> Columns:
        def stamp(m: Recalled) -> float:
            last = m.updated_at if m.updated_at > m.created_at else m.created_at
            if m.last_reinforced_at is not None and m.last_reinforced_at > last:
                last = m.last_reinforced_at
            return last.timestamp()
        return cls(
            memories=memories,
            ids=np.array([m.id for m in memories], dtype=np.int64),
            type=np.array([TYPES.index(m.type) for m in memories], dtype=np.int8),
            surface=np.array([SURFACES.index(m.surface) for m in memories], dtype=np.int8),
            pinned=np.array([m.pinned for m in memories], dtype=bool),
            salience=np.array([m.salience for m in memories], dtype=np.float64),
            confidence=np.array([m.confidence for m in memories], dtype=np.float64),
            last_at=np.array([stamp(m) for m in memories], dtype=np.float64),
            due_at=np.array([m.due_at.timestamp() if m.due_at else np.nan
                             for m in memories], dtype=np.float64))

    @classmethod
    def from_arrays(cls, memories: list[Recalled], arrays: dict[str, np.ndarray]) -> Columns:
        return cls(memories=memories, **arrays)

    def arrays(self) -> dict[str, np.ndarray]:
        """Every column but ``memories``, by name."""
        return {name: getattr(self, name) for name in _ARRAYS}

    def take(self, rows: np.ndarray) -> Columns:
        return Columns.from_arrays([self.memories[i] for i in rows.tolist()],
                                   {k: v[rows] for k, v in self.arrays().items()})

    def always(self) -> np.ndarray:
        """Candidates whatever the query: pinned, profile, open loops, protocols, and what
        is under an avoid or never policy (its topics are kept out of every layer)."""
        result: np.ndarray = (self.pinned | _ALWAYS_TYPES[self.type] | (self.surface == _AVOID)
                              | (self.surface == _NEVER))
        return result
