"""A process-local copy of each chat's active memories, from which recall picks and ranks its
candidates without a scan in PostgreSQL.

The scan reads every active memory of the chat on every turn (its vector and tsvector from
covering indexes): ~8 ms at 5,000 memories and ~22 ms at 20,000 on a 2-core machine
(bench/recall.py). The same work on arrays held in memory is one matrix-vector product and
a few postings lookups. The copy is only ever a copy: each recall reads the chat's change
log in brief (sql/008, sql/009, kept by triggers) in the round trip it makes anyway, and a
copy that is behind re-reads just the memories named by the changes it has not seen, or
the whole chat when a change names none. A chat over half the copies' room, or with
vectors of mixed widths, is left to the scan; both paths keep the nearest by one exact
cosine (recall._candidates), so they give the same block.

A copy is immutable, so threads may share it. Its rows are in id order, loaded or
patched, so a patched copy ranks exactly as one read afresh.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from engrammar.models import Where
from engrammar.recall._candidates import (
    Candidates,
    Columns,
    Recalled,
    TextStats,
    bm25,
    exact_cosine,
    nearest,
    top_k,
)
from engrammar.runtime._blas import one_thread
from engrammar.store import decode_vectors, norms

# A lexeme of a tsvector's text form, quoted ('' and \\ escaped), then its positions.
_LEXEME = re.compile(r"'((?:''|\\.|[^'\\])*)'(?::([0-9A-D,]+))?")
_ESCAPE = re.compile(r"''|\\(.)")
_T = TypeVar("_T")


def lexeme_counts(tsvector: str) -> list[tuple[str, int]]:
    """(lexeme, occurrences) of a tsvector in its text form: "'walk':1,4 'lisbon':3"."""
    out = []
    for word, positions in _LEXEME.findall(tsvector):
        if "'" in word or "\\" in word:
            word = _ESCAPE.sub(lambda m: m.group(1) or "'", word)
        out.append((word, positions.count(",") + 1 if positions else 1))
    return out


def _version(changes: frozenset[int]) -> tuple[int, int, int]:
    return (max(changes, default=0), len(changes), sum(changes))


@dataclass(frozen=True)
class Snapshot:
    """One chat's active memories: their columns, vectors and full-text postings."""

    changes: frozenset[int]  # ids of the change-log rows this copy reflects
    version: tuple[int, int, int]  # as store.Probe.version: newest id, count, sum of ids
    columns: Columns  # rows sorted by memory id
    # (dims, rows) float32, the vectors as stored; zeros where there is none. Transposed:
    # a query times this layout runs about twice as fast as rows times the query.
    matrix: np.ndarray
    has_vector: np.ndarray  # an embedding is stored (the scan ranks only those by cosine)
    inverse_norm: np.ndarray  # float32; 0 where there is no vector or it is all zeros
    always: np.ndarray  # rows that are candidates whatever the query, but never's
    never: tuple[str, ...]  # contents of the memories under the never policy
    with_vector: np.ndarray  # rows of has_vector, and of those, the all-zero ones:
    zero_vector: np.ndarray  # pgvector's cosine is NaN for them, ordered last
    vocabulary: dict[str, int]  # lexeme -> id; may keep words no row uses until a reload
    # Postings grouped by lexeme id: those of lexeme i are [offsets[i], offsets[i + 1]).
    offsets: np.ndarray
    posting_lexeme: np.ndarray
    posting_row: np.ndarray
    posting_count: np.ndarray
    length: np.ndarray  # float64: distinct lexemes of each row, as length(tsvector)
    total_length: int
    # (key, value as JSON) -> the rows whose app metadata holds it: built on the first
    # filtered recall of this copy (a copy never changes), so a filter costs a few lookups.
    _tags: dict[tuple[str, str], np.ndarray] = field(default_factory=dict, compare=False,
                                                     repr=False)

    def __len__(self) -> int:
        return len(self.columns.ids)

    @classmethod
    def of(cls, changes: Iterable[int], rows: Sequence[Sequence[Any]],
           vectors: Sequence[bytes | None], tsvectors: Sequence[str]) -> Snapshot | None:
        """From store.active_rows (in id order); None when vectors are of mixed widths."""
        decoded = decode_vectors(vectors)
        if decoded is None:
            return None
        matrix, has_vector = decoded
        lengths = norms(matrix)
        inverse_norm = np.divide(1, lengths, out=np.zeros_like(lengths),
                                 where=lengths > 0).astype(np.float32)
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
        if np.any(np.diff(columns.ids) <= 0):
            raise ValueError("a copy's rows must come in id order")
        lexeme = np.array(lexemes, dtype=np.int32)
        grouped = np.argsort(lexeme, kind="stable")
        return cls._assemble(frozenset(changes), columns, matrix, has_vector, inverse_norm,
                             vocabulary,
                             lexeme[grouped], np.array(posting_rows, dtype=np.int64)[grouped],
                             np.array(counts, dtype=np.float64)[grouped])

    @classmethod
    def _assemble(cls, changes: frozenset[int], columns: Columns, matrix: np.ndarray,
                  has_vector: np.ndarray, inverse_norm: np.ndarray,
                  vocabulary: dict[str, int],
                  lexeme: np.ndarray, row: np.ndarray, count: np.ndarray) -> Snapshot:
        """The copy, from postings already grouped by lexeme."""
        offsets = np.zeros(len(vocabulary) + 1, dtype=np.int64)
        np.cumsum(np.bincount(lexeme, minlength=len(vocabulary)), out=offsets[1:])
        never = columns.never()
        # One posting per row and lexeme: a row's postings are its distinct lexemes.
        length = np.bincount(row, minlength=len(columns.ids))
        return cls(changes, _version(changes), columns, matrix, has_vector, inverse_norm,
                   np.flatnonzero(columns.always() & ~never),
                   tuple(columns.memories[i].content for i in np.flatnonzero(never)),
                   np.flatnonzero(has_vector),
                   np.flatnonzero(has_vector & (inverse_norm == 0)), vocabulary, offsets,
                   lexeme, row, count, length.astype(np.float64), int(length.sum()))

    def patched(self, changes: Iterable[int], changed: Iterable[int],
                fresh: Snapshot) -> Snapshot | None:
        """This copy with the memories ``changed`` replaced by ``fresh`` (those of them still
        active, read anew); None when the vectors' widths no longer agree.

        Kept rows are copied in runs of consecutive ones with the fresh rows slotted in
        between, so rows stay in id order without a gather of every column (~3x a
        straight copy at 20,000 memories).
        """
        if not len(self):
            return Snapshot._assemble(frozenset(changes), fresh.columns, fresh.matrix,
                                      fresh.has_vector, fresh.inverse_norm,
                                      fresh.vocabulary,
                                      fresh.posting_lexeme, fresh.posting_row,
                                      fresh.posting_count)
        dims = self.matrix.shape[0]
        added = fresh.matrix if fresh.has_vector.any() else np.zeros((dims, len(fresh)),
                                                                      dtype=np.float32)
        if added.shape[0] != dims:
            return None
        keep = ~np.isin(self.columns.ids, np.fromiter(changed, dtype=np.int64))
        source = np.flatnonzero(keep)
        kept_ids, fresh_ids = self.columns.ids[source], fresh.columns.ids
        # Where each row lands among the merged ones, both sides being in id order.
        landing = np.arange(len(source)) + np.searchsorted(fresh_ids, kept_ids)
        at = np.arange(len(fresh_ids)) + np.searchsorted(kept_ids, fresh_ids)
        size = len(source) + len(fresh_ids)
        runs = _runs(source, landing)
        columns = Columns.from_arrays(
            _merged_list(self.columns.memories, runs, fresh.columns.memories, at, size),
            {name: _merged(old, runs, new, at, size) for (name, old), new in zip(
                self.columns.arrays().items(), fresh.columns.arrays().values(), strict=True)})
        # Postings: the kept rows' renumbered; the fresh rows' (their lexemes renumbered in
        # this vocabulary) slotted in at the end of their lexeme's group.
        vocabulary = self.vocabulary
        if any(word not in vocabulary for word in fresh.vocabulary):
            vocabulary = dict(vocabulary)
            for word in fresh.vocabulary:
                vocabulary.setdefault(word, len(vocabulary))
        remap = np.array([vocabulary[w] for w in fresh.vocabulary], dtype=np.int32)
        new_lexeme = remap[fresh.posting_lexeme] if len(remap) else fresh.posting_lexeme
        order = np.argsort(new_lexeme, kind="stable")
        renumber = np.full(len(self), -1, dtype=np.int64)
        renumber[source] = landing
        alive = keep[self.posting_row]
        lexeme = self.posting_lexeme[alive]
        slot = np.searchsorted(lexeme, new_lexeme[order], side="right")
        return Snapshot._assemble(
            frozenset(changes), columns, _merged(self.matrix, runs, added, at, size),
            _merged(self.has_vector, runs, fresh.has_vector, at, size),
            _merged(self.inverse_norm, runs, fresh.inverse_norm, at, size), vocabulary,
            np.insert(lexeme, slot, new_lexeme[order]),
            np.insert(renumber[self.posting_row[alive]], slot, at[fresh.posting_row][order]),
            np.insert(self.posting_count[alive], slot, fresh.posting_count[order]))

    def rows_where(self, where: Where) -> np.ndarray:
        """A mask of the rows whose app metadata matches ``where`` (models.metadata_matches)."""
        if not self._tags and len(self):
            tags: dict[tuple[str, str], list[int]] = {}
            for row, m in enumerate(self.columns.memories):
                for key, value in m.app_metadata.items():
                    tags.setdefault((key, _tag(value)), []).append(row)
            self._tags.update({t: np.array(r, dtype=np.int64) for t, r in tags.items()})
            if not self._tags:
                self._tags[("", "")] = np.zeros(0, dtype=np.int64)  # built: none carry any
        mask = np.ones(len(self), dtype=bool)
        for key, values in where.items():
            hit = np.zeros(len(self), dtype=bool)
            for v in values:
                rows = self._tags.get((key, _tag(v)))
                if rows is not None:
                    hit[rows] = True
            mask &= hit
        return mask

    def candidates(self, vector: np.ndarray, lexemes: Sequence[str], k: int,
                   only: np.ndarray | None = None) -> Candidates | None:
        """As candidates.from_scan, from memory: ``lexemes`` are the query's, distinct and
        in PostgreSQL's order (store.Probe). None when ``vector`` is not of the copy's
        width. ``only``: a mask of the rows that may be candidates (a metadata filter);
        the BM25 statistics stay the whole chat's, as the scan's do."""
        ids = self.columns.ids
        dims = self.matrix.shape[0]
        if self.has_vector.any() and dims != len(vector):
            return None
        # The nearest: the best 2k by a float32 product over every row, then the best k
        # of those by exact cosine, as the scan does with pgvector's order.
        pool = self.with_vector
        if only is not None:
            pool = pool[only[pool]]
        query = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(query))
        if norm > 0 and len(pool):
            with one_thread():
                rough = (query / norm) @ self.matrix
            rough *= self.inverse_norm
            rough[self.zero_vector] = -np.inf  # pgvector's NaN: last
        else:
            rough = np.zeros(len(ids))  # all NaN to pgvector: the order is by id
        if len(pool) == len(ids) and only is None:  # the usual case: spare a gather
            rough_best = top_k(ids, rough, 2 * k)
        else:
            rough_best = pool[top_k(ids[pool], rough[pool], 2 * k)]
        text = np.zeros(len(ids))
        matching, scored = self.text_rank(lexemes)
        text[matching] = scored
        always = self.always
        if only is not None:
            keep = only[matching]
            matching, scored = matching[keep], scored[keep]
            always = always[only[always]]
        others = np.union1d(always, matching[top_k(ids[matching], scored, k)])
        # One exact cosine for every row it is wanted of: the rough best, to keep k, and
        # the other candidates, to score.
        every = np.union1d(rough_best, others)
        cosine = (exact_cosine(self.matrix[:, every], vector) if dims
                  else np.full(len(every), np.nan))
        near = rough_best[nearest(ids[rough_best],
                                  cosine[np.searchsorted(every, rough_best)], k)]
        rows = np.union1d(others, near)
        if self.never:  # near or best by text they may be, but never ranked
            rows = rows[~self.columns.never()[rows]]
        return Candidates(self.columns.take(rows), cosine[np.searchsorted(every, rows)],
                          text[rows], self.never)


    def text_rank(self, lexemes: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """The rows holding any of ``lexemes`` and their BM25 (candidates.bm25)."""
        spans = []
        for word in lexemes:
            lexeme = self.vocabulary.get(word)
            spans.append(slice(self.offsets[lexeme], self.offsets[lexeme + 1])
                         if lexeme is not None else slice(0, 0))
        matching = np.unique(np.concatenate([self.posting_row[s] for s in spans])
                             if spans else np.zeros(0, dtype=np.int64))
        tf = np.zeros((len(matching), len(spans)))
        for j, span in enumerate(spans):
            tf[np.searchsorted(matching, self.posting_row[span]), j] = self.posting_count[span]
        df = np.array([s.stop - s.start for s in spans], dtype=np.float64)
        stats = TextStats(len(self), self.total_length, df)
        return matching, bm25(tf, self.length[matching], stats)


def _tag(value: object) -> str:
    """A metadata value as the key of a copy's tag index: its JSON, with 1 and 1.0 one
    number and true apart from 1 (models.metadata_matches)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _runs(source: np.ndarray, landing: np.ndarray) -> list[tuple[int, int, int]]:
    """(to, from, length) of the stretches where both positions advance one by one."""
    if not len(source):
        return []
    breaks = np.flatnonzero((np.diff(source) != 1) | (np.diff(landing) != 1)) + 1
    starts = [0, *breaks.tolist()]
    ends = [*breaks.tolist(), len(source)]
    return [(int(landing[s]), int(source[s]), e - s) for s, e in zip(starts, ends, strict=True)]


def _merged(old: np.ndarray, runs: list[tuple[int, int, int]], new: np.ndarray,
            at: np.ndarray, size: int) -> np.ndarray:
    """``old``'s runs and ``new``'s rows at ``at``, along the last axis."""
    out = np.empty((*old.shape[:-1], size), dtype=old.dtype)
    for to, start, length in runs:
        out[..., to:to + length] = old[..., start:start + length]
    out[..., at] = new
    return out


def _merged_list(old: list[_T], runs: list[tuple[int, int, int]], new: list[_T],
                 at: np.ndarray, size: int) -> list[_T]:
    out: list[_T | None] = [None] * size
    for to, start, length in runs:
        out[to:to + length] = old[start:start + length]
    for i, item in zip(at.tolist(), new, strict=True):
        out[i] = item
    return out  # type: ignore[return-value]  # every slot is filled: runs and at cover it
