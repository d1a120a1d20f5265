"""A process-local cache of each chat's active memory vectors, for recall's nearest search.

An exact scan in PostgreSQL reads every vector of the chat on every turn: ~6 ms at 5,000
memories and ~17 ms at 20,000 on a 2-core machine (bench/recall.py). The same scan in numpy
over vectors held in memory is a fraction of a millisecond. The cache is only ever a copy:
each recall reads the chat's change counter (memory_changes, appended to by a trigger on
every insert, delete, status or embedding change; sql/007) with one index lookup, and
reloads the chat when it moved. Chats over the cache's size, or changing while being read,
fall back to the scan in SQL.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from memory import store
from memory.models import Scope
from memory.store import Conn


@dataclass(frozen=True)
class _Chat:
    version: tuple[int, int]
    ids: np.ndarray
    matrix: np.ndarray


class ChatVectors:
    """Least-recently-used chats' vectors, up to ``max_vectors`` in all (0 disables it)."""

    def __init__(self, max_vectors: int) -> None:
        self.max_vectors = max_vectors
        self._chats: OrderedDict[Scope, _Chat] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()

    def nearest(self, conn: Conn, scope: Scope, vector: np.ndarray, k: int
                ) -> list[int] | None:
        """Ids of the ``k`` active memories nearest ``vector`` (cosine, ties by id), or None
        when the cache cannot answer and the caller should scan in SQL."""
        if self.max_vectors <= 0:
            return None
        version = store.memories_version(conn, scope)
        chat = self._get(scope, version)
        if chat is None:
            loaded, ids, matrix = store.active_vectors(conn, scope)
            if loaded != version or len(ids) > self.max_vectors:
                return None
            chat = _Chat(version, ids, matrix)
            self._put(scope, chat)
        return top_k(chat.ids, chat.matrix, vector, k)

    def _get(self, scope: Scope, version: tuple[int, int]) -> _Chat | None:
        with self._lock:
            chat = self._chats.get(scope)
            if chat is None or chat.version != version:
                return None
            self._chats.move_to_end(scope)
            return chat

    def _put(self, scope: Scope, chat: _Chat) -> None:
        with self._lock:
            old = self._chats.pop(scope, None)
            if old is not None:
                self._held -= len(old.ids)
            self._chats[scope] = chat
            self._held += len(chat.ids)
            while self._held > self.max_vectors and len(self._chats) > 1:
                _, evicted = self._chats.popitem(last=False)
                self._held -= len(evicted.ids)


def top_k(ids: np.ndarray, matrix: np.ndarray, vector: np.ndarray, k: int) -> list[int]:
    """The ``k`` ids of highest cosine, ties broken by the smaller id, as the SQL scan's
    ORDER BY distance, id does."""
    if len(ids) == 0 or k <= 0:
        return []
    cos = matrix @ vector.astype(np.float32)
    k = min(k, len(ids))
    # Everything at least as close as the k-th best, then an exact order on those few.
    threshold = np.partition(cos, len(cos) - k)[len(cos) - k]
    near = np.nonzero(cos >= threshold)[0]
    order = np.lexsort((ids[near], -cos[near]))[:k]
    return [int(i) for i in ids[near][order]]
