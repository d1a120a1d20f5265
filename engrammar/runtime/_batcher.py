"""Micro-batching: concurrent small embedding calls share one model call.

A service answers many recalls at once, and each embeds one query. On few cores, N model
calls of one short text cost much more than one call of N texts (each call pays the
graph's fixed work, and a matrix of one short text keeps the CPU's vector units idle), so
:class:`Batcher` lets at most ``calls`` model calls run at a time and hands the texts that
arrived meanwhile to the next call, whole. No call waits for company: one that finds a
free slot runs at once, so a lone caller pays nothing; callers queue only while every slot
is busy, which is exactly when a batch forms.

The vectors are the inner embedder's for the same texts: a text's row does not depend on
the other texts of its call (tests/test_embed.py checks it bit for bit). Texts of very
different lengths are not put in one call, so no short query pays for a long one's
padding.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from engrammar.errors import Error

# A call of more texts than this is a batch already (an import, a reembed): it goes to the
# model directly rather than hold the queue.
SMALL = 4
# Texts whose lengths differ by more than this factor (and SLACK characters) go to separate
# model calls: each call pads every text to its longest.
SPREAD, SLACK = 2, 64


class Embedder(Protocol):
    """runtime._embedder's Embedder, spelled here too: that module builds batchers."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


@dataclass(eq=False)
class _Waiting:
    texts: list[str]
    vectors: np.ndarray | None = None
    error: BaseException | None = None
    done: bool = field(default=False)


class Batcher:
    """An :class:`Embedder` over ``inner`` whose concurrent small calls share model calls:
    at most ``calls`` run at a time, each of at most ``max_batch`` texts."""

    def __init__(self, inner: Embedder, *, max_batch: int = 32, calls: int = 1) -> None:
        if max_batch < 1 or calls < 1:
            raise ValueError("a batcher needs max_batch >= 1 and calls >= 1")
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.max_batch = max_batch
        self._free = calls
        self._queue: list[_Waiting] = []
        self._changed = threading.Condition()
        # What the batching did: model calls made and texts they embedded (bench, tests).
        self.model_calls = 0
        self.texts = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts or len(texts) > SMALL:
            return self.inner.embed(texts)
        mine = _Waiting(list(texts))
        with self._changed:
            self._queue.append(mine)
            while True:
                if mine.done:
                    break
                if self._free > 0:
                    # This thread runs the next batch (its own texts are in it unless more
                    # than max_batch texts queued before them: then it comes round again).
                    self._free -= 1
                    batch = self._take()
                    self._changed.release()
                    try:
                        self._run(batch)
                    finally:
                        self._changed.acquire()
                        self._free += 1
                        self._changed.notify_all()
                    continue
                self._changed.wait()
        if mine.error is not None:
            raise mine.error
        if mine.vectors is None:  # the thread that ran its batch was interrupted
            raise Error("the embedding call was interrupted")
        return mine.vectors

    def _take(self) -> list[_Waiting]:
        """The oldest queued calls, up to ``max_batch`` texts (the first one whatever its
        size), off the queue."""
        taken: list[_Waiting] = []
        count = 0
        while self._queue and (not taken or count + len(self._queue[0].texts)
                               <= self.max_batch):
            waiting = self._queue.pop(0)
            taken.append(waiting)
            count += len(waiting.texts)
        return taken

    def _run(self, batch: list[_Waiting]) -> None:
        """Embed the batch's texts, in groups of similar length, and hand each caller its
        rows; an error goes to every caller it left without vectors."""
        try:
            for group in _by_length(batch):
                texts = [t for waiting in group for t in waiting.texts]
                try:
                    vectors = self.inner.embed(texts)
                except Exception as exc:  # the callers' error: raised in each caller
                    for waiting in group:
                        waiting.error = exc
                    continue
                self.model_calls += 1
                self.texts += len(texts)
                start = 0
                for waiting in group:
                    end = start + len(waiting.texts)
                    waiting.vectors = vectors[start:end].copy()
                    start = end
        except Exception as exc:  # before any model call (the texts' lengths)
            for waiting in batch:
                if waiting.vectors is None and waiting.error is None:
                    waiting.error = exc
        finally:
            for waiting in batch:
                waiting.done = True


def _by_length(batch: list[_Waiting]) -> list[list[_Waiting]]:
    """The batch in groups whose longest text is at most SPREAD times (plus SLACK
    characters) the group's shortest, so padding stays a small part of each call."""
    ordered = sorted(batch, key=lambda w: max(len(t) for t in w.texts))
    groups: list[list[_Waiting]] = []
    shortest = 0
    for waiting in ordered:
        size = max(len(t) for t in waiting.texts)
        if groups and size <= shortest * SPREAD + SLACK:
            groups[-1].append(waiting)
        else:
            groups.append([waiting])
            shortest = min(len(t) for t in waiting.texts)
    return groups
