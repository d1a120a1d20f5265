"""Recall over the log: a process-local copy of each chat's indexed messages, and the hybrid
search that picks verbatim excerpts of earlier conversation for what memories miss.

Messages are append-only (an erase excepted), so a chat's copy grows by the messages indexed
since it was read: each recall's probe (store.recall_probe) brings the chat's index watermark
and the chat row's birth time, and a copy behind the watermark reads just the rows past its
own. A copy whose chat was erased (a new birth time, or a watermark gone backwards) is read
anew; this process drops its own copies on erase. So a turn costs no SQL in the number of
messages: the probe it makes anyway, and a read of the new rows once a night.

The search is the memories' recipe (recall._ranking.relevance): 0.25 cosine + 0.75 BM25 as
a share of the best among the candidates, BM25 by recall._candidates.bm25 with the chat's
messages as the collection; candidates are the k nearest and the k best by text.

An excerpt that asks something comes with the message after it, the reply: a question shown
alone holds no answer ("What pet do you have?"), and the query that finds the question is
asking what was answered.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np

from engrammar import store
from engrammar.models import Scope
from engrammar.recall._candidates import (
    TextStats,
    bm25,
    exact_cosine,
    nearest,
    top_k,
)
from engrammar.recall._held import Held
from engrammar.recall._ranking import Topics, naming, relevance
from engrammar.recall._snapshot import lexeme_counts
from engrammar.runtime._blas import one_thread
from engrammar.store import Conn, decode_vectors, norms


@dataclass(frozen=True, slots=True)
class Reply:
    """The message right after an excerpt that asks: what answered it."""

    message_id: int
    role: str
    at: datetime
    content: str


@dataclass(frozen=True, slots=True)
class Excerpt:
    """A message that may be shown verbatim, with why: its relevance, cosine and text share;
    and, when it asks something, the reply after it."""

    message_id: int
    role: str
    at: datetime
    content: str
    relevance: float
    cosine: float
    text: float
    reply: Reply | None = None

    @property
    def message_ids(self) -> tuple[int, ...]:
        """The messages it shows: its own, then its reply's."""
        return (self.message_id,) if self.reply is None else (self.message_id,
                                                               self.reply.message_id)


# A question mark that ends a question (the full-width and Arabic ones too): not one inside
# a word or a web address ("?id=3").
_ASKING = re.compile(r"[?\uff1f\u061f](?![\w=&/%])")


def asks(content: str) -> bool:
    """Whether a message asks something, by its punctuation: the parse is the extractor's,
    and a turn's recall reads excerpts by the dozen."""
    return _ASKING.search(content) is not None


@dataclass(frozen=True, slots=True)
class Searched:
    """A search's excerpts, best first, and the best BM25 among the messages it could
    show: the scale on which memories' text matches are then put (recall._ranking.score),
    so that both layers' text shares mean the same."""

    excerpts: list[Excerpt]
    best_bm25: float


@dataclass(frozen=True)
class LogCopy:
    """One chat's searchable messages up to its index watermark. Immutable: a newer copy
    shares the postings of lexemes no new message uses."""

    version: tuple[int, int]  # (index watermark, chat birth) as store.Probe.log_version
    ids: np.ndarray  # int64, ascending
    roles: tuple[str, ...]
    at: tuple[datetime, ...]
    contents: tuple[str, ...]
    matrix: np.ndarray  # (dims, rows) float32
    inverse_norm: np.ndarray  # float32, 0 for an all-zero vector
    postings: dict[str, tuple[np.ndarray, np.ndarray]]  # lexeme -> (rows, counts)
    length: np.ndarray  # float64: distinct lexemes of each row
    total_length: int

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def empty(cls, version: tuple[int, int]) -> LogCopy:
        return cls(version, np.zeros(0, dtype=np.int64), (), (), (),
                   np.zeros((0, 0), dtype=np.float32), np.zeros(0, dtype=np.float32), {},
                   np.zeros(0), 0)

    def extended(self, version: tuple[int, int], rows: Sequence[Sequence[Any]],
                 context_weight: float) -> LogCopy | None:
        """This copy with ``rows`` (store.log_rows, past its last id) appended; None when
        their vectors' width is not the copy's. A word of the message before counts
        ``context_weight`` of one of the message's own in its text match."""
        if not rows:
            return LogCopy(version, *self._fields())
        decoded = decode_vectors([r[4] for r in rows])
        if decoded is None:
            return None
        added = decoded[0]
        if len(self) and added.shape[0] != self.matrix.shape[0]:
            return None
        lengths = norms(added)
        inverse = np.divide(1, lengths, out=np.zeros_like(lengths),
                            where=lengths > 0).astype(np.float32)
        base = len(self)
        fresh: dict[str, tuple[list[int], list[float]]] = {}
        length = np.zeros(len(rows))
        for i, r in enumerate(rows):
            counts = _weighted_counts(r[5], r[6], context_weight)
            length[i] = len(counts)
            for word, count in counts.items():
                posting = fresh.setdefault(word, ([], []))
                posting[0].append(base + i)
                posting[1].append(count)
        postings = dict(self.postings)
        for word, (new_rows, new_counts) in fresh.items():
            old = postings.get(word)
            r_ = np.array(new_rows, dtype=np.int64)
            c_ = np.array(new_counts, dtype=np.float64)
            postings[word] = ((np.concatenate([old[0], r_]), np.concatenate([old[1], c_]))
                              if old is not None else (r_, c_))
        return LogCopy(
            version, np.concatenate([self.ids, np.array([r[0] for r in rows], dtype=np.int64)]),
            self.roles + tuple(str(r[1]) for r in rows), self.at + tuple(r[2] for r in rows),
            self.contents + tuple(str(r[3]) for r in rows),
            np.hstack([self.matrix, added]) if len(self) else added,
            np.concatenate([self.inverse_norm, inverse]), postings,
            np.concatenate([self.length, length]), self.total_length + int(length.sum()))

    def reply_to(self, message_id: int) -> Reply | None:
        """The searchable message right after ``message_id`` (the one whose text match
        reads it as context), if this copy holds both."""
        at = int(np.searchsorted(self.ids, message_id)) + 1
        if at >= len(self) or self.ids[at - 1] != message_id:
            return None
        return Reply(int(self.ids[at]), self.roles[at], self.at[at], self.contents[at])

    def _fields(self) -> tuple[Any, ...]:
        return (self.ids, self.roles, self.at, self.contents, self.matrix, self.inverse_norm,
                self.postings, self.length, self.total_length)

    def text_rank(self, lexemes: Sequence[str], allowed: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
        """The allowed rows holding any of ``lexemes``, and their BM25 over the chat's log."""
        found = [self.postings.get(w, (np.zeros(0, dtype=np.int64), np.zeros(0)))
                 for w in lexemes]
        matching = np.unique(np.concatenate([f[0] for f in found])) if found else \
            np.zeros(0, dtype=np.int64)
        tf = np.zeros((len(matching), len(found)))
        for j, (rows, counts) in enumerate(found):
            tf[np.searchsorted(matching, rows), j] = counts
        df = np.array([len(f[0]) for f in found], dtype=np.float64)
        scores = bm25(tf, self.length[matching], TextStats(len(self), self.total_length, df))
        keep = allowed[matching]
        return matching[keep], scores[keep]

    def search(self, vector: np.ndarray, lexemes: Sequence[str], k: int, text_weight: float,
               exclude: Collection[int]) -> Searched:
        """The messages best matching the query, best first, by relevance (ties by the
        older message): the ``k`` nearest by cosine and the ``k`` best by BM25, fused as
        memories are; none of ``exclude``."""
        if not len(self) or k <= 0:
            return Searched([], 0.0)
        allowed = np.ones(len(self), dtype=bool)
        if exclude:  # a few ids among many: looked up, not a set operation over every row
            wanted = np.fromiter(exclude, dtype=np.int64, count=len(exclude))
            at = np.minimum(np.searchsorted(self.ids, wanted), len(self) - 1)
            allowed[at[self.ids[at] == wanted]] = False
        query = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(query))
        near = np.zeros(0, dtype=np.int64)
        if norm > 0 and self.matrix.shape[0] == len(query):
            with one_thread():
                rough = (query / norm) @ self.matrix
            rough *= self.inverse_norm
            rough[~allowed] = -np.inf
            pool = top_k(self.ids, rough, 2 * k)
            pool = pool[allowed[pool]]
            near = pool[nearest(self.ids[pool],
                                exact_cosine(self.matrix[:, pool], vector), k)]
        matching, scored = self.text_rank(lexemes, allowed)
        best_text = matching[top_k(self.ids[matching], scored, k)]
        rows = np.union1d(near, best_text)
        best_bm25 = float(scored.max()) if len(scored) else 0.0
        if not len(rows):
            return Searched([], best_bm25)
        cosine = (exact_cosine(self.matrix[:, rows], vector)
                  if self.matrix.shape[0] == len(query) else np.zeros(len(rows)))
        every = np.zeros(len(self))
        every[matching] = scored
        text_rank = every[rows]
        fused, cos, text = relevance(cosine, text_rank, text_weight)
        order = np.lexsort((self.ids[rows], -fused))
        return Searched([Excerpt(int(self.ids[r]), self.roles[r], self.at[r], self.contents[r],
                                 round(float(fused[i]), 6), round(float(cos[i]), 4),
                                 round(float(text[i]), 4))
                         for i, r in ((int(i), int(rows[i])) for i in order)], best_bm25)


def _weighted_counts(own: str, context: str, context_weight: float) -> dict[str, float]:
    """A message's lexeme counts for BM25, from its tsvector and its context's (text
    form): the context's at ``context_weight`` each. End to end on the LoCoMo dev split
    (recall@5 / recall@1): context words at full weight 59.2 / 22.4, none 50.4 / 31.2,
    half 60.0 / 32.6. At full weight the turn after a relevant one matched the query as
    well as that turn did, and often better, being shorter."""
    counts: dict[str, float] = {}
    if context_weight > 0:
        for word, n in lexeme_counts(context):
            counts[word] = context_weight * n
    for word, n in lexeme_counts(own):
        counts[word] = counts.get(word, 0.0) + n
    return counts


def excerpts(copy: LogCopy, vector: np.ndarray, lexemes: Sequence[str], *, k: int,
             limit: int, text_weight: float, min_relevance: float, hidden: Collection[int],
             topics: Topics, replies: bool = True) -> Searched:
    """Up to ``limit`` excerpts for the query, best first: never a hidden message (a source
    of what is forgotten or never to be raised, or one the prompt already holds), nor one
    that mentions a never topic, nor one below ``min_relevance`` (recall's bar for
    memories). With ``replies``, an excerpt that asks carries the message after it, under
    the same rules; a message is shown once, so a reply found on its own after its question
    is not shown again, and one shown on its own first is not the reply of a later one.

    End to end on the LoCoMo dev split (recall@5 / recall@1): 59.9 / 32.4 without replies,
    64.7 / 39.7 with them (bench locomo, which also counts recall in turns shown).
    """
    found = copy.search(vector, lexemes, k, text_weight, hidden)
    kept: list[Excerpt] = []
    shown: set[int] = set()
    for e in found.excerpts:
        if len(kept) == limit:
            break
        if e.relevance < min_relevance or e.message_id in shown or naming(e.content, topics):
            continue
        reply = copy.reply_to(e.message_id) if replies and asks(e.content) else None
        if reply is not None and (reply.message_id in shown or reply.message_id in hidden
                                  or naming(reply.content, topics)):
            reply = None
        kept.append(e if reply is None else replace(e, reply=reply))
        shown.update(kept[-1].message_ids)
    return Searched(kept, found.best_bm25)


class LogCopies:
    """Copies of the most recently recalled chats' logs, ``max_messages`` messages in all
    (0: none, and no excerpts). A chat larger than the room is read whole each time it is
    asked for and not kept."""

    def __init__(self, max_messages: int, max_bytes: int, context_weight: float) -> None:
        self.max_messages = max_messages
        self.max_bytes = max_bytes
        self.context_weight = context_weight
        self._chats: Held[LogCopy] = Held(max_messages, max_bytes)
        self._hidden: dict[Scope, tuple[tuple[int, ...], Mapping[int, str]]] = {}
        self._lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        """The estimated bytes of the copies held."""
        return self._chats.nbytes

    @property
    def room(self) -> int:
        """The most messages one chat's copy holds: half the room, in messages and bytes.
        A longer chat is held from its newest messages back, so its first recall reads a
        bounded tail, never the whole log."""
        return max(0, min(self.max_messages // 2, self.max_bytes // 2 // _MESSAGE_BYTES))

    def get(self, conn: Conn, scope: Scope, version: tuple[int, int]) -> LogCopy | None:
        """The chat's copy as of ``version`` (store.Probe.log_version); None when no room."""
        if self.room <= 0:
            return None
        through, born = version
        with self._lock:
            held = self._chats.get(scope)
        if held is not None and held.version == version:
            return held
        if (held is None or held.version[1] != born or held.version[0] > through
                or len(held) >= self.room):
            # Never seen, erased and begun anew, or grown to its room: (re)read the newest
            # half room, so a long chat is read in bounded steps, not whole each turn.
            base, after = LogCopy.empty(version), self._tail(conn, scope, through)
        else:
            base, after = held, held.version[0]
        copy = base.extended(version, store.log_rows(conn, scope, after, through),
                             self.context_weight)
        if copy is None and after:  # vectors of another width (a new embedder): read anew
            copy = LogCopy.empty(version).extended(
                version, store.log_rows(conn, scope, self._tail(conn, scope, through),
                                        through), self.context_weight)
        if copy is None:
            return None
        self._put(scope, copy)
        return copy

    def hidden(self, conn: Conn, scope: Scope, memories: tuple[int, ...]
               ) -> Mapping[int, str]:
        """store.hidden_messages (id -> text), read again only when the chat's memories
        (or the user-wide ones) changed (``memories``: the change-log versions of
        store.Probe)."""
        with self._lock:
            held = self._hidden.get(scope)
        if held is not None and held[0] == memories:
            return held[1]
        hidden = store.hidden_messages(conn, scope)
        with self._lock:
            self._hidden[scope] = (memories, hidden)
            while len(self._hidden) > 10_000:
                self._hidden.pop(next(iter(self._hidden)))
        return hidden

    def _tail(self, conn: Conn, scope: Scope, through: int) -> int:
        """The id after which the chat's newest half room of searchable messages start."""
        return store.searchable_before(conn, scope, through, max(1, self.room // 2))

    def forget(self, user_id: str, chat_id: str | None = None) -> int:
        """Drop the copies of a user's chats (or of one chat); how many were held."""
        with self._lock:
            gone = self._chats.forget(user_id, chat_id)
            for scope in [s for s in self._hidden
                          if s.user_id == user_id and chat_id in (None, s.chat_id)]:
                del self._hidden[scope]
        return gone

    def _put(self, scope: Scope, copy: LogCopy) -> None:
        size = _nbytes(copy)
        with self._lock:
            self._chats.discard(scope)
            if len(copy) > self.max_messages or size > self.max_bytes:
                return
            self._chats.put(scope, copy, len(copy), size)


# Estimates for the budget, not exact measures: a chat's fixed overhead (so copies of
# empty chats count), and per message its vector, text and Python objects (id, role,
# time, postings entries); _MESSAGE_BYTES is a 384-d message's, for sizing the room.
_CHAT_BYTES = 4096
_MESSAGE_BYTES = 3072


def _nbytes(copy: LogCopy) -> int:
    arrays = sum(a.nbytes for a in (copy.ids, copy.matrix, copy.inverse_norm, copy.length))
    return (_CHAT_BYTES + arrays + sum(map(len, copy.contents)) + len(copy) * 500
            + len(copy.postings) * 150)
