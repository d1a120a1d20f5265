"""A chat's pool: the live memories the gate decides against, with what narrows each op to
the few of them that can change its decision.

The gate (write._gate) compares an op with every candidate it is given, rapidfuzz and cosine
each time, so handed the whole chat its cost per op grows with the chat. The pool hands it a
shortlist instead, built from one matrix product over the chat's vectors and a few
dictionary look-ups. Every rule of the gate that can fire on a memory puts that memory in the
shortlist, so the decision is the one the whole pool would give:

- an ``add``: the memories of its slot; of its values (names, places, numbers: the only way
  to a restatement by same claim, and to one by words when it names any); of its template
  when that holds one value at a time (a new value for the slot); of its template without
  polarity (the opposite claim); at or above the paraphrase cosine; and the ``top_k``
  nearest. The one rule no index covers is a restatement by words alone of a statement
  naming no values (rapidfuzz ``token_set_ratio`` >= 90) whose cosine is under the
  paraphrase threshold and out of the nearest ``top_k``; tests/test_pool.py checks the
  shortlist against the whole pool on the gate's tests and on the bench's ops.
- a past-tense ``add`` (a report): also the open loops it may close, as a ``close_loop``.
- a ``close_loop``: its target and the chat's open loops (a resolution may match by words);
  with content, also what its statement needs as an ``add`` (the gate keeps a resolution
  that closes nothing as the event it is).
- ``update``, ``reinforce``, ``contradict``: their target; with content, also what the
  statement needs as an ``add``, and for a change the memories of its slot and those within
  change_match of it (a change aimed at nothing, or at the wrong memory, finds its own).
- a ``forget``: the whole pool (rare, and it may match by any shared word).

The shortlist keeps the pool's order, since the gate takes the first of equal matches.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

import numpy as np

from engrammar.models import Memory, MemoryType, Op, OpKind, Scope
from engrammar.runtime._blas import one_thread
from engrammar.settings import GateSettings
from engrammar.write._gate import STATEFUL, fitting_type, is_report
from engrammar.write._statement import (
    content_words,
    says_ended,
    single_valued,
    template,
    unsigned,
    values,
)
from engrammar.write._target import Candidate

# The nearest memories of an add always shortlisted, whatever their cosine.
TOP_K = 16
# The gate's own cosine is float64 over the same float32 vectors: a margin keeps a memory
# that rounds up to a threshold there in the shortlist here.
_MARGIN = 1e-4


def _keys(m: Memory) -> list[tuple[object, ...]]:
    """The index keys of one memory: each names the memories one rule of the gate can match,
    with the conditions that rule puts on type and values, so a key holds few memories."""
    keys: list[tuple[object, ...]] = []
    if m.slot:
        keys.append(("slot", m.slot))
    vals = values(m.content)
    if vals:
        keys.append(("values", vals))
    if m.type in STATEFUL:
        shape = template(m.content)
        if single_valued(m.content):
            keys.append(("template", m.type, shape))
        keys.append(("opposite", m.type, unsigned(m.content), vals))
    if m.type is MemoryType.open_loop:
        keys.append(("loop",))
        keys.extend(("loop word", w) for w in content_words(m.content))
    return keys


class Pool:
    """The chat's live memories in the order the gate sees them, kept in step with what the
    writer changes (``add``, ``replace``, ``drop``), and their shortlist for each op.

    When the chat shares the user's scope, the pool holds that scope's live memories too
    and ``home`` names it: the writer puts new memories of the user-wide types (``shared``)
    there, so a fact learnt in one chat and restated in another stays one memory."""

    home: Scope | None = None
    shared: frozenset[MemoryType] = frozenset()

    def __init__(self, candidates: Iterable[Candidate], settings: GateSettings,
                 top_k: int = TOP_K, resolved: Iterable[Memory] = ()) -> None:
        self.settings = settings
        self.top_k = top_k
        # Open loops closed by a resolution: out of the pool, but a resolution said again
        # is told from a new event by them (the gate's ``resolved``).
        self.resolved: list[Memory] = list(resolved)
        self._rows: list[Candidate | None] = []
        self._keys: list[list[tuple[object, ...]]] = []
        self._row_of: dict[int, int] = {}
        self._index: dict[tuple[object, ...], set[int]] = {}
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._has_vector = np.zeros(0, dtype=bool)
        self._ahead: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for cand in candidates:
            self.add(cand)

    # -- the sequence the gate iterates ------------------------------------------------------

    def __iter__(self) -> Iterator[Candidate]:
        return (c for c in self._rows if c is not None)

    def __len__(self) -> int:
        return len(self._row_of)

    def get(self, memory_id: int | None) -> Candidate | None:
        row = self._row_of.get(memory_id) if memory_id is not None else None
        return None if row is None else self._rows[row]

    def memories(self) -> list[Memory]:
        return [c.memory for c in self]

    # -- changes ------------------------------------------------------------------------------

    def add(self, cand: Candidate) -> None:
        row = len(self._rows)
        self._rows.append(cand)
        self._row_of[cand.memory.id] = row
        self._index_row(row, cand.memory)
        vector = cand.vector
        if vector is not None and self._matrix.shape[1] == 0:
            self._matrix = np.zeros((max(16, 2 * row), vector.shape[0]), dtype=np.float32)
            self._has_vector = np.zeros(self._matrix.shape[0], dtype=bool)
        if row >= self._matrix.shape[0] and self._matrix.shape[1]:
            grown = np.zeros((2 * row + 16, self._matrix.shape[1]), dtype=np.float32)
            grown[:row] = self._matrix[:row]
            has = np.zeros(grown.shape[0], dtype=bool)
            has[:row] = self._has_vector[:row]
            self._matrix, self._has_vector = grown, has
        if vector is not None:
            self._matrix[row] = vector
            self._has_vector[row] = True

    def replace(self, memory: Memory) -> None:
        """A new state of a memory in the pool (a reinforce): same place, same vector."""
        row = self._row_of[memory.id]
        old = self._rows[row]
        assert old is not None
        self._unindex_row(row)
        self._rows[row] = Candidate(memory, old.vector)
        self._index_row(row, memory)

    def drop(self, memory_id: int) -> None:
        """A memory that left the live statuses (superseded, closed, forgotten)."""
        row = self._row_of.pop(memory_id)
        self._unindex_row(row)
        self._rows[row] = None
        if row < self._has_vector.shape[0]:
            self._has_vector[row] = False

    # -- the shortlist ------------------------------------------------------------------------

    def shortlist(self, op: Op, vector: np.ndarray | None,
                  handles: Mapping[str, int] | None = None) -> list[Candidate]:
        """The memories whose comparison with ``op`` can decide it, in pool order."""
        if op.op is OpKind.forget:
            return list(self)
        rows: set[int] = set()
        target = _target_id(op, handles)
        if target is not None and target in self._row_of:
            rows.add(self._row_of[target])
        if op.op is OpKind.add:
            rows |= self._add_rows(op, vector)
            if is_report(op):
                rows |= self._loop_rows(op, vector)
            return self._in_order(rows)
        if op.op is OpKind.close_loop:
            rows |= self._loop_rows(op, vector)
        if op.content:
            # Missing or missing its mark, the op is decided as the statement it makes.
            rows |= self._add_rows(op.model_copy(update={"type": fitting_type(op)}), vector)
            if op.op in (OpKind.update, OpKind.contradict):
                rows |= self._change_rows(op, vector)
        return self._in_order(rows)

    def _in_order(self, rows: set[int]) -> list[Candidate]:
        return [c for r in sorted(rows) if (c := self._rows[r]) is not None]

    def _change_rows(self, op: Op, vector: np.ndarray | None) -> set[int]:
        """Memories a change aimed at nothing may be about: its slot's, and those close
        enough in meaning (``_target.about`` needs change_match at least, or for a
        contradiction that names a name the memory writes change_named_match)."""
        rows: set[int] = set()
        if op.slot:
            rows |= self._index.get(("slot", op.slot), set())
        cos = self._cosines(vector)
        if cos is not None:
            floor = self.settings.change_match if op.op is not OpKind.contradict else min(
                self.settings.change_match, self.settings.change_named_match)
            rows.update(int(r) for r in np.flatnonzero(cos >= floor - _MARGIN))
        return rows

    def _add_rows(self, op: Op, vector: np.ndarray | None) -> set[int]:
        rows: set[int] = set()
        if op.slot:
            rows |= self._index.get(("slot", op.slot), set())
        vals = values(op.content)
        if vals:
            rows |= self._index.get(("values", vals), set())
        if op.type in STATEFUL:
            rows |= self._index.get(("template", op.type, template(op.content)), set())
            rows |= self._index.get(("opposite", op.type, unsigned(op.content), vals), set())
        cos = self._cosines(vector)
        if cos is not None:
            n = len(cos)
            near = np.argpartition(-cos, self.top_k)[:self.top_k] if n > self.top_k \
                else np.arange(n)
            rows.update(int(r) for r in near if np.isfinite(cos[r]))
            rows.update(int(r) for r in np.flatnonzero(
                cos >= self.settings.paraphrase_duplicate - _MARGIN))
            if op.type is MemoryType.protocol:
                # (a rule of reply may turn over one within paraphrase_floor)
                rows.update(int(r) for r in np.flatnonzero(
                    cos >= self.settings.paraphrase_floor - _MARGIN))
            if says_ended(op.content):
                # (a doing said to be over may end a lasting memory within change_match)
                rows.update(int(r) for r in np.flatnonzero(
                    cos >= self.settings.change_match - _MARGIN))
        return rows

    def _loop_rows(self, op: Op, vector: np.ndarray | None) -> set[int]:
        """Open loops a resolution may close: close enough in meaning, or sharing a word."""
        rows: set[int] = set()
        for word in content_words(op.content or ""):
            rows |= self._index.get(("loop word", word), set())
        cos = self._cosines(vector)
        if cos is not None:
            loops = self._index.get(("loop",), set())
            rows.update(int(r) for r in np.flatnonzero(
                cos >= self.settings.close_loop_match - _MARGIN) if int(r) in loops)
        return rows

    def expect(self, vectors: Sequence[np.ndarray | None]) -> None:
        """The cosines of the coming ops' vectors with every row, in one matrix product: one
        pass over the chat's vectors for all of them (a matrix-vector product per op reads
        them all each time, 7.7 MB at 5,000 memories). Rows added meanwhile are done per op."""
        present = [v for v in vectors if v is not None]
        n = len(self._rows)
        if not present or not n or not self._matrix.shape[1]:
            return
        with one_thread():
            products = self._matrix[:n] @ np.vstack(present).astype(np.float32).T
        self._ahead = {id(v): (v, products[:, j]) for j, v in enumerate(present)}

    def _cosines(self, vector: np.ndarray | None) -> np.ndarray | None:
        """The cosine of ``vector`` with every row (-inf where none)."""
        n = len(self._rows)
        if vector is None or not n or not self._matrix.shape[1]:
            return None
        ahead = self._ahead.get(id(vector))
        if ahead is not None and ahead[0] is vector:
            known = len(ahead[1])
            cos = np.empty(n, dtype=np.float32)
            cos[:known] = ahead[1]
            if n > known:
                cos[known:] = self._matrix[known:n] @ vector.astype(np.float32, copy=False)
        else:
            with one_thread():
                cos = self._matrix[:n] @ vector.astype(np.float32, copy=False)
        cos[~self._has_vector[:n]] = -np.inf
        return cos

    # -- indexes ------------------------------------------------------------------------------

    def _index_row(self, row: int, m: Memory) -> None:
        keys = _keys(m)
        self._keys.extend([] for _ in range(row + 1 - len(self._keys)))
        self._keys[row] = keys
        for key in keys:
            self._index.setdefault(key, set()).add(row)

    def _unindex_row(self, row: int) -> None:
        for key in self._keys[row]:
            self._index[key].discard(row)
        self._keys[row] = []


def _target_id(op: Op, handles: Mapping[str, int] | None) -> int | None:
    """The memory id ``op.target`` names, resolved as the gate resolves it."""
    if not op.target:
        return None
    ref = op.target.strip()
    if handles is not None:
        return handles.get(ref)
    return int(ref.lstrip("#")) if ref.lstrip("#").isdigit() else None
