"""The memories recall ranks, as rows (``Recalled``) and as columns (``Columns``): the whole
chat in its copy in memory (recall._snapshot), or the candidates the SQL path read; and the
pieces both paths share, so that they rank alike to the last bit: the vectors' decoding,
the exact cosine, the nearest k."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from engrammar.models import MemoryType, Surface
from engrammar.store._indexes import ALWAYS_SURFACES, ALWAYS_TYPES, K1, B
from engrammar.store._vectors import decode_vectors, lengths

TYPES = list(MemoryType)
SURFACES = list(Surface)
# The always-candidate rule of store.indexes, as lookup tables by type and surface index.
_ALWAYS_TYPES = np.isin(np.arange(len(TYPES)), [TYPES.index(t) for t in ALWAYS_TYPES])
_ALWAYS_SURFACES = np.isin(np.arange(len(SURFACES)),
                           [SURFACES.index(s) for s in ALWAYS_SURFACES])
_NEVER = SURFACES.index(Surface.never)
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
    source_message_ids: tuple[int, ...]
    app_metadata: dict[str, Any]  # the app's, for recall's filter (never rendered)

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> Recalled:
        """From the values of store.RECALL_COLUMNS, in that order."""
        (id_, type_, surface, content, pinned, salience, confidence, due_at, created_at,
         updated_at, last_reinforced_at, source_message_ids, app_metadata) = row
        return cls(id=int(id_), type=MemoryType(type_), surface=Surface(surface),
                   content=content, pinned=bool(pinned), salience=float(salience),
                   confidence=float(confidence), due_at=due_at, created_at=created_at,
                   updated_at=updated_at, last_reinforced_at=last_reinforced_at,
                   source_message_ids=tuple(source_message_ids or ()),
                   app_metadata=app_metadata or {})


@dataclass(frozen=True)
class Columns:
    """Memories as arrays, one row each, for ranking many at once: the whole chat in a
    recall copy (recall._snapshot), or the candidates read by the SQL path."""

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

    def never(self) -> np.ndarray:
        """Rows under the never policy: read for their topics, never ranked."""
        result: np.ndarray = self.surface == _NEVER
        return result

    def always(self) -> np.ndarray:
        """Candidates whatever the query (store.indexes.ALWAYS): pinned, profile, open
        loops, protocols, and what is under an avoid or never policy (its topics are kept
        out of every layer)."""
        result: np.ndarray = (self.pinned | _ALWAYS_TYPES[self.type]
                              | _ALWAYS_SURFACES[self.surface])
        return result


@dataclass(frozen=True)
class TextStats:
    """What BM25 knows of the chat beyond one memory: how many active memories it holds,
    their lengths summed (distinct lexemes each, as PostgreSQL's ``length(tsvector)``), and
    in how many of them each query lexeme occurs, in the query's lexeme order."""

    memories: int
    total_length: int
    df: np.ndarray  # float64, one per query lexeme


def bm25(tf: np.ndarray, length: np.ndarray, stats: TextStats) -> np.ndarray:
    """Okapi BM25 of each row against the query: ``tf`` (rows, query lexemes) holds each
    lexeme's occurrences in the memory, ``length`` each memory's length. IDF is the
    non-negative ln(1 + (N - df + 0.5) / (df + 0.5)) over the chat's active memories, so a
    word in every memory (the user's own name) weighs next to nothing.

    Element by element and lexeme by lexeme in the query's order: the same inputs give the
    same bits, however many rows come with them, on both recall paths."""
    n = stats.memories
    out = np.zeros(len(length))
    if n == 0 or not tf.size:
        return out
    average = stats.total_length / n if stats.total_length > 0 else 1.0
    idf = np.log1p((n - stats.df + 0.5) / (stats.df + 0.5))
    norm = K1 * (1.0 - B + B * (length / average))
    for j in range(tf.shape[1]):
        t = tf[:, j]
        out += idf[j] * (t * (K1 + 1.0)) / (t + norm)
    return out


@dataclass(frozen=True)
class Candidates:
    """What one recall ranks: its candidates (none under the never policy) with their exact
    cosine and BM25 text rank, and the contents of the chat's memories under the never
    policy, whose topics are kept out of every layer."""

    columns: Columns
    cosine: np.ndarray
    text_rank: np.ndarray
    never: tuple[str, ...]


def merged(own: Candidates, shared: Candidates) -> Candidates:
    """A chat's candidates and its user's (the user-wide memories, picked from their own
    scope the same way), as one set: ranking scores each memory on its own, so the two
    sets rank together as they come."""
    if not len(shared.columns.ids):
        return Candidates(own.columns, own.cosine, own.text_rank, own.never + shared.never)
    a, b = own.columns.arrays(), shared.columns.arrays()
    columns = Columns.from_arrays([*own.columns.memories, *shared.columns.memories],
                                  {k: np.concatenate([a[k], b[k]]) for k in a})
    return Candidates(columns, np.concatenate([own.cosine, shared.cosine]),
                      np.concatenate([own.text_rank, shared.text_rank]),
                      own.never + shared.never)


def exact_cosine(vectors: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Cosine of each column of ``vectors`` (dims, rows) with ``query``, in float64 and
    summed the same way whatever the rows around it; NaN where either is all zeros, as
    pgvector gives. Both paths score with this, so the same memory gets the same bits."""
    rows = np.ascontiguousarray(vectors.T, dtype=np.float64)
    q = np.asarray(query, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        result: np.ndarray = (rows * q).sum(axis=1) / (lengths(rows) * np.sqrt((q * q).sum()))
    return result


def nearest(ids: np.ndarray, cosine: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` highest exact cosines, NaN last, ties by the smaller id: the
    scan's ORDER BY distance, id, on exact values."""
    return top_k(ids, np.where(np.isnan(cosine), -np.inf, cosine), k)


def top_k(ids: np.ndarray, values: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` highest ``values``, ties broken by the smaller id."""
    if len(ids) == 0 or k <= 0:
        return np.zeros(0, dtype=np.int64)
    k = min(k, len(ids))
    # Everything at least as high as the k-th best, then an exact order on those few.
    threshold = np.partition(values, len(values) - k)[len(values) - k]
    near = np.flatnonzero(values >= threshold)
    result: np.ndarray = near[np.lexsort((ids[near], -values[near]))[:k]]
    return result


def from_scan(rows: Sequence[Sequence[Any]], query: np.ndarray, k: int) -> Candidates:
    """The candidates of store.recall_candidates as the copy picks them: the best ``k`` by
    exact cosine of the scan's 2k nearest, the best ``k`` by exact BM25 of the scan's 2k
    best by text, with all the rest."""
    n = len(rows[0]) - SCAN_EXTRA if rows else 0  # RECALL_COLUMNS, then what the scan adds
    columns = Columns.of([Recalled.from_row(r[:n]) for r in rows])
    decoded = decode_vectors([r[n] for r in rows])
    if decoded is None:
        raise ValueError("a chat's vectors are of mixed widths")  # pgvector refuses first
    matrix = decoded[0]
    cosine = (exact_cosine(matrix, query) if matrix.shape[0]
              else np.full(len(rows), np.nan))
    text = np.zeros(len(rows))
    if rows:
        stats = TextStats(int(rows[0][n + 5]), int(rows[0][n + 6]),
                          np.array(rows[0][n + 7], dtype=np.float64))
        tf = np.array([r[n + 1] for r in rows], dtype=np.float64).reshape(len(rows), -1)
        text = bm25(tf, np.array([float(r[n + 2]) for r in rows]), stats)
    by_cosine = np.flatnonzero(np.array([bool(r[n + 3]) for r in rows], dtype=bool))
    by_text = np.flatnonzero(np.array([bool(r[n + 4]) for r in rows], dtype=bool))
    keep = columns.always()
    keep[by_cosine[nearest(columns.ids[by_cosine], cosine[by_cosine], k)]] = True
    keep[by_text[top_k(columns.ids[by_text], text[by_text], k)]] = True
    never = columns.never()
    chosen = np.flatnonzero(keep & ~never)
    return Candidates(columns.take(chosen), cosine[chosen], text[chosen],
                      tuple(columns.memories[i].content for i in np.flatnonzero(never)))


# What store.recall_candidates adds after RECALL_COLUMNS: the vector, the query lexemes'
# occurrences, the length, whether by cosine, whether by text, and the chat's TextStats.
SCAN_EXTRA = 8
