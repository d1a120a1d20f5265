"""A process-local copy of each chat's active memories, from which recall picks and ranks its
candidates without a scan in PostgreSQL.

The scan reads every active memory of the chat on every turn (its vector and tsvector from
covering indexes): ~9 ms at 5,000 memories and ~19 ms at 20,000 on a 2-core machine
(bench/recall.py). The same work on arrays held in memory is one matrix-vector product and
a few postings lookups. The copy is only ever a copy: each recall reads the chat's change
log in brief (sql/008, kept by triggers) in the round trip it makes anyway, and a copy that
is behind re-reads just the memories named by the changes it has not seen. A chat over the
copy's size, or with vectors of mixed width, is left to the scan.

A copy is immutable and depends only on the memories it holds (rows sorted by id), so a
patched copy equals one loaded afresh and threads may share it.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memory import store
from memory.models import Scope
from memory.retriever import Columns, Recalled
from memory.store import Conn

# A lexeme of a tsvector's text form, quoted ('' and \\ escaped), then its positions.
_LEXEME = re.compile(r"'((?:''|\\.|[^'\\])*)'(?::([0-9A-D,]+))?")
_ESCAPE = re.compile(r"''|\\(.)")


def lexeme_counts(tsvector: str) -> list[tuple[str, int]]:
    """(lexeme, occurrences) of a tsvector in its text form: "'walk':1,4 'lisbon':3"."""
    out = []
    for word, positions in _LEXEME.findall(tsvector):
        if "'" in word or "\\" in word:
            word = _ESCAPE.sub(lambda m: m.group(1) or "'", word)
        out.append((word, positions.count(",") + 1 if positions else 1))
    return out


def decode_vectors(blobs: Sequence[bytes | None]) -> tuple[np.ndarray, np.ndarray] | None:
    """Unit vectors as the columns of a (dims, rows) matrix, and a has-vector mask, from
    pgvector's binary form (int16 dims, int16 unused, big-endian float32s) in one numpy
    call; None when the widths differ."""
    widths = {len(b) for b in blobs if b is not None}
    if len(widths) > 1:
        return None
    width = widths.pop() if widths else 4
    has = np.array([b is not None for b in blobs], dtype=bool)
    raw = np.frombuffer(b"".join(b for b in blobs if b is not None), dtype=">f4")
    matrix = np.zeros((len(blobs), width // 4 - 1), dtype=np.float32)
    matrix[has] = raw.reshape(-1, width // 4)[:, 1:]
    norms = np.linalg.norm(matrix, axis=1)
    has &= norms > 0
    matrix[has] /= norms[has, None]
    return np.ascontiguousarray(matrix.T), has


@dataclass(frozen=True)
class Snapshot:
    """One chat's active memories: their columns, unit vectors and full-text postings."""

    changes: frozenset[int]  # ids of the change-log rows this copy reflects
    columns: Columns  # rows sorted by memory id
    # (dims, rows) float32, unit columns; zeros where there is no vector. Transposed: a
    # query times this layout runs about twice as fast as rows times the query (numpy/BLAS).
    matrix: np.ndarray
    has_vector: np.ndarray
    always: np.ndarray  # rows that are candidates whatever the query
    vocabulary: dict[str, int]  # lexeme -> id
    # Postings grouped by lexeme id: those of lexeme i are [offsets[i], offsets[i + 1]).
    offsets: np.ndarray
    posting_lexeme: np.ndarray
    posting_row: np.ndarray
    posting_count: np.ndarray

    @property
    def version(self) -> tuple[int, int, int]:
        """As store.Probe.version: newest change id, count, sum of ids."""
        return (max(self.changes, default=0), len(self.changes), sum(self.changes))

    def __len__(self) -> int:
        return len(self.columns.ids)

    @classmethod
    def of(cls, changes: Iterable[int], rows: Sequence[Sequence[Any]],
           vectors: Sequence[bytes | None], tsvectors: Sequence[str]) -> Snapshot | None:
        """From store.active_rows; None when the vectors are of mixed widths."""
        decoded = decode_vectors(vectors)
        if decoded is None:
            return None
        vocabulary: dict[str, int] = {}
        lexemes: list[int] = []
        posting_rows: list[int] = []
        counts: list[int] = []
        for row, tsv in enumerate(tsvectors):
            for word, count in lexeme_counts(tsv):
                lexemes.append(vocabulary.setdefault(word, len(vocabulary)))
                posting_rows.append(row)
                counts.append(count)
        columns = Columns.of([Recalled.from_row(r) for r in rows])
        return cls._sorted(frozenset(changes), columns, *decoded, vocabulary,
                           np.array(lexemes, dtype=np.int32),
                           np.array(posting_rows, dtype=np.int64),
                           np.array(counts, dtype=np.float64))

    @classmethod
    def _sorted(cls, changes: frozenset[int], columns: Columns, matrix: np.ndarray,
                has_vector: np.ndarray, vocabulary: dict[str, int], lexeme: np.ndarray,
                row: np.ndarray, count: np.ndarray) -> Snapshot:
        """Rows in id order and postings grouped by lexeme: the one form of a set of rows."""
        order = np.argsort(columns.ids, kind="stable")
        if not np.array_equal(order, np.arange(len(order))):
            position = np.empty_like(order)
            position[order] = np.arange(len(order))
            columns, matrix = columns.take(order), np.ascontiguousarray(matrix[:, order])
            has_vector = has_vector[order]
            row = position[row]
        grouped = np.lexsort((row, lexeme))
        lexeme, row, count = lexeme[grouped], row[grouped], count[grouped]
        offsets = np.zeros(len(vocabulary) + 1, dtype=np.int64)
        np.cumsum(np.bincount(lexeme, minlength=len(vocabulary)), out=offsets[1:])
        return cls(changes, columns, matrix, has_vector, np.flatnonzero(columns.always()),
                   vocabulary, offsets, lexeme, row, count)

    def patched(self, changes: Iterable[int], changed: Iterable[int],
                fresh: Snapshot) -> Snapshot | None:
        """This copy with the memories ``changed`` replaced by ``fresh`` (those of them still
        active, read anew); None when the vectors' widths no longer agree."""
        dims = self.matrix.shape[0]
        added = fresh.matrix if fresh.has_vector.any() else np.zeros((dims, len(fresh)),
                                                                      dtype=np.float32)
        if len(self) and added.shape[0] != dims:
            return None
        keep = ~np.isin(self.columns.ids, np.fromiter(changed, dtype=np.int64))
        position = np.cumsum(keep) - 1
        kept_postings = keep[self.posting_row]
        vocabulary = self.vocabulary
        if any(word not in vocabulary for word in fresh.vocabulary):
            vocabulary = dict(vocabulary)
            for word in fresh.vocabulary:
                vocabulary.setdefault(word, len(vocabulary))
        remap = np.array([vocabulary[w] for w in fresh.vocabulary], dtype=np.int32)
        base = int(keep.sum())
        rows = np.flatnonzero(keep)
        return Snapshot._sorted(
            frozenset(changes),
            Columns.concat([self.columns.take(rows), fresh.columns]),
            np.concatenate([self.matrix[:, rows], added], axis=1) if len(self) else added,
            np.concatenate([self.has_vector[rows], fresh.has_vector]),
            vocabulary,
            np.concatenate([self.posting_lexeme[kept_postings],
                            remap[fresh.posting_lexeme] if len(remap)
                            else fresh.posting_lexeme]),
            np.concatenate([position[self.posting_row[kept_postings]],
                            fresh.posting_row + base]),
            np.concatenate([self.posting_count[kept_postings], fresh.posting_count]))

    def candidates(self, vector: np.ndarray, lexemes: Iterable[str], k: int
                   ) -> tuple[Columns, np.ndarray, np.ndarray] | None:
        """As store.recall_candidates, from memory: the candidates' columns, cosine and text
        rank. None when ``vector`` is not of the copy's width."""
        if len(self) and self.matrix.shape[0] != len(vector):
            return None
        ids = self.columns.ids
        query = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(query))
        cosine = ((query / norm if norm > 0 else query) @ self.matrix).astype(np.float64)
        cosine[~self.has_vector] = 0.0
        text = np.zeros(len(ids))
        for word in set(lexemes):
            lexeme = self.vocabulary.get(word)
            if lexeme is not None:
                span = slice(self.offsets[lexeme], self.offsets[lexeme + 1])
                text[self.posting_row[span]] += self.posting_count[span]
        # Rows without a vector sort last by cosine, as NULLs do in the scan's ORDER BY.
        nearest = top_k(ids, np.where(self.has_vector, cosine, -np.inf), k)
        matching = np.flatnonzero(text > 0)
        best_text = matching[top_k(ids[matching], text[matching], k)]
        rows = np.union1d(np.union1d(self.always, nearest), best_text)
        return self.columns.take(rows), cosine[rows], text[rows]


def top_k(ids: np.ndarray, values: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` highest ``values``, ties broken by the smaller id, as the
    scan's ORDER BY distance, id does."""
    if len(ids) == 0 or k <= 0:
        return np.zeros(0, dtype=np.int64)
    k = min(k, len(ids))
    # Everything at least as high as the k-th best, then an exact order on those few.
    threshold = np.partition(values, len(values) - k)[len(values) - k]
    near = np.flatnonzero(values >= threshold)
    result: np.ndarray = near[np.lexsort((ids[near], -values[near]))[:k]]
    return result


class Snapshots:
    """Copies of the least recently recalled chats, up to ``max_memories`` memories in all
    (0: none, every recall scans)."""

    def __init__(self, max_memories: int) -> None:
        self.max_memories = max_memories
        self._chats: OrderedDict[Scope, Snapshot] = OrderedDict()
        # Chats found too large (or mixed) at a version: not read again until it moves.
        self._refused: OrderedDict[Scope, tuple[int, int, int]] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()

    def get(self, conn: Conn, scope: Scope, version: tuple[int, int, int]) -> Snapshot | None:
        """The chat's copy, current as of ``version`` (store.recall_probe) or newer; None
        when the chat is not to be held and the caller should scan."""
        if self.max_memories <= 0:
            return None
        with self._lock:
            held = self._chats.get(scope)
            if held is not None:
                self._chats.move_to_end(scope)
            if self._refused.get(scope) == version:
                return None
        if held is not None and held.version == version:
            return held
        # The log before the rows: a change committed after this read is one the copy has
        # not seen, and its memory is read again next time.
        log = store.change_log(conn, scope)
        copy = self._patch(conn, scope, held, log) if held is not None else None
        if copy is None:
            rows, vectors, tsvectors = store.active_rows(conn, scope)
            copy = (Snapshot.of((c for c, _ in log), rows, vectors, tsvectors)
                    if len(rows) <= self.max_memories else None)
        if copy is None or len(copy) > self.max_memories:
            with self._lock:
                self._discard(scope)
                self._refused[scope] = version
                while len(self._refused) > 10_000:
                    self._refused.popitem(last=False)
            return None
        self._put(scope, copy)
        return copy

    def _patch(self, conn: Conn, scope: Scope, held: Snapshot,
               log: list[tuple[int, int | None]]) -> Snapshot | None:
        present = {c for c, _ in log}
        if not held.changes or not held.changes <= present:
            # Rows the copy saw were pruned (lifecycle), so others it never saw may have been
            # too; or it saw none, and cannot tell. Read the chat whole.
            return None
        changed = {m for c, m in log if c not in held.changes}
        if None in changed or len(changed) > max(64, len(held) // 4):
            return None  # a row from before sql/008, or so many that a reload is cheaper
        ids = [m for m in changed if m is not None]
        fresh = Snapshot.of((), *store.active_rows(conn, scope, ids))
        return held.patched(present, ids, fresh) if fresh is not None else None

    def _put(self, scope: Scope, copy: Snapshot) -> None:
        with self._lock:
            self._discard(scope)
            self._refused.pop(scope, None)
            self._chats[scope] = copy
            self._held += len(copy)
            while self._held > self.max_memories and len(self._chats) > 1:
                _, evicted = self._chats.popitem(last=False)
                self._held -= len(evicted)

    def _discard(self, scope: Scope) -> None:
        old = self._chats.pop(scope, None)
        if old is not None:
            self._held -= len(old)
