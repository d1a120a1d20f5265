"""Each process's copies of the chats it recalled (:class:`Snapshot`), least recently
used first out, within a count and a byte budget (``MEMORY_RECALL__CACHE_BYTES``); a copy
is brought up to date from the chat's change log in the round trip a turn makes anyway."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

from engrammar import store
from engrammar.models import Scope
from engrammar.recall._held import Held
from engrammar.recall._snapshot import Snapshot
from engrammar.store import Conn


class Snapshots:
    """Copies of the most recently recalled chats, up to ``max_memories`` memories in all
    (0: none, every recall scans). A chat may take half of that at most: two large chats
    sharing the room would evict each other on every turn and pay a full read each time.
    """

    # How long a chat found too large (or of mixed widths) is left to the scan before it
    # is looked at again: writes to it do not each cost a read of room + 1 rows.
    RETRY_SECONDS = 600.0

    def __init__(self, max_memories: int, max_bytes: int = 96 * 2**20) -> None:
        self.max_memories = max_memories
        self.max_bytes = max_bytes
        self._chats: Held[Snapshot] = Held(max_memories, max_bytes)
        self._refused: OrderedDict[Scope, float] = OrderedDict()  # monotonic time of refusal
        self._lock = threading.Lock()

    def get(self, conn: Conn, scope: Scope, version: tuple[int, int, int]) -> Snapshot | None:
        """The chat's copy, current as of ``version`` (store.recall_probe) or newer; None
        when the chat is not to be held and the caller should scan."""
        if self.max_memories <= 0 or self.max_bytes <= 0:
            return None
        largest = max(1, min(self.max_memories // 2,
                             self.max_bytes // 2 // _MEMORY_BYTES))
        with self._lock:
            held = self._chats.get(scope)
            refused = self._refused.get(scope)
            if refused is not None and time.monotonic() - refused < self.RETRY_SECONDS:
                return None
        if held is not None and held.version == version:
            return held
        # The log before the rows: a change committed after this read is one the copy has
        # not seen, and its memory is read again next time.
        log = store.change_log(conn, scope)
        copy = self._patch(conn, scope, held, log) if held is not None else None
        if copy is None:
            rows, vectors, tsvectors = store.active_rows(conn, scope, limit=largest + 1)
            copy = (Snapshot.of((c for c, _ in log), rows, vectors, tsvectors)
                    if len(rows) <= largest else None)
        if copy is None or len(copy) > largest:
            with self._lock:
                self._chats.discard(scope)
                self._refused[scope] = time.monotonic()
                while len(self._refused) > 10_000:
                    self._refused.popitem(last=False)
            return None
        self._put(scope, copy)
        return copy

    def forget(self, user_id: str, chat_id: str | None = None) -> int:
        """Drop the copies of a user's chats (or of one chat), after an erase or a restore;
        how many were held."""
        with self._lock:
            gone = self._chats.forget(user_id, chat_id)
            for scope in [s for s in self._refused
                          if s.user_id == user_id and chat_id in (None, s.chat_id)]:
                del self._refused[scope]
        return gone

    def _patch(self, conn: Conn, scope: Scope, held: Snapshot,
               log: list[tuple[int, int | None]]) -> Snapshot | None:
        """``held`` brought up to ``log`` by re-reading the memories its new rows name; None
        when only reading the chat whole will do."""
        present = {c for c, _ in log}
        if not held.changes or not held.changes <= present:
            # Rows the copy saw are gone (erased, or the log was emptied): or it saw none,
            # and cannot tell what it missed. (Lifecycle's prune adds a row naming no
            # memory, so that one is caught below.)
            return None
        changed = {m for c, m in log if c not in held.changes}
        if None in changed or len(changed) > max(64, len(held) // 4):
            return None  # a change naming no memory, or so many that a reload is cheaper
        ids = sorted(m for m in changed if m is not None)
        fresh = Snapshot.of((), *store.active_rows(conn, scope, ids))
        return held.patched(present, ids, fresh) if fresh is not None else None

    @property
    def nbytes(self) -> int:
        """The estimated bytes of the copies held."""
        return self._chats.nbytes

    def _put(self, scope: Scope, copy: Snapshot) -> None:
        with self._lock:
            self._refused.pop(scope, None)
            self._chats.put(scope, copy, len(copy), _nbytes(copy))


# A chat's copy costs its arrays, and per memory its columns (content, times, ids: Python
# objects) and vocabulary; each chat a fixed overhead, so a thousand copies of chats with
# no memories count too. Estimates, for a budget: not an exact measure.
_CHAT_BYTES = 4096
_MEMORY_BYTES = 2048  # a memory with a 384-d vector, its columns and postings


def _nbytes(copy: Snapshot) -> int:
    arrays = sum(a.nbytes for a in (copy.matrix, copy.has_vector, copy.inverse_norm,
                                     copy.always, copy.with_vector, copy.zero_vector,
                                     copy.offsets, copy.posting_lexeme, copy.posting_row,
                                     copy.posting_count, copy.length))
    return _CHAT_BYTES + arrays + len(copy) * 600 + len(copy.vocabulary) * 120
