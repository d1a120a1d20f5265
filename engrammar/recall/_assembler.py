"""The read path's one assembler: a turn's prompt as layers, over one connection.

The layers, in order: the system prompt, the memories, the summaries, the window (block
summaries, then raw pairs), and the user's message. Each renders into the room it is given
and reports its tokens, what it dropped and what it truncated. ``compile`` shares one budget
among all of them; ``recall`` is the same assembler over the memory and summary layers.
The system prompt, pinned memories and the user's message are never dropped.

A turn costs one pooled connection: the probe, the candidates, the summaries and the window
are read on it, and what the turn surfaced (and, for ``compile``, the prompt it gave) is
noted on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from engrammar import store
from engrammar.errors import Error, InvalidInput
from engrammar.models import Scope, Where, check_text
from engrammar.recall._block import (
    Block,
    Dropped,
    Summary,
    build,
    redact,
    unsay,
)
from engrammar.recall._candidates import Candidates, from_scan, merged
from engrammar.recall._copies import Snapshots
from engrammar.recall._layers import (
    MESSAGE_OVERHEAD,
    REPLY_PRIMING,
    Compiled,
    Layer,
    Part,
    estimate,
    fit,
    layers_of,
    window_layer,
)
from engrammar.recall._logsearch import Excerpt, LogCopies, Searched, excerpts
from engrammar.recall._ranking import LeftOut, Scored, Topics, never_topics, score
from engrammar.recall._window import Window
from engrammar.runtime._database import Database
from engrammar.runtime._embedder import Embedder
from engrammar.runtime._tokens import TokenCounter
from engrammar.settings import Settings

DEFAULT_SYSTEM = "You are a helpful assistant."
# A word of system prompt and of the user's message, with their overheads.
MIN_BUDGET = REPLY_PRIMING + 2 * (MESSAGE_OVERHEAD + 1)


@dataclass(frozen=True)
class Ranked:
    """What a turn reads before it renders: the ranked memories, the ones left out as not
    relevant (why), the words never to raise, and the latest summaries."""

    scored: list[Scored]
    left_out: list[LeftOut]
    topics: Topics
    summaries: list[Summary]
    excerpts: list[Excerpt] = field(default_factory=list)


def offered_summaries(rows: Sequence[dict[str, Any]], topics: Topics
                      ) -> list[Summary]:
    """The latest summary of each period, newest period first, without the sentences about
    what must never be raised; the block takes them while they fit."""
    offered = []
    for s in rows:
        content = redact(s["content"], topics)
        if content:
            offered.append(Summary(label=f"{s['period']} of {s['start_at'].date().isoformat()}",
                                   content=content))
    return offered


class Assembler:
    """Recall and compile over one store, embedder and tokenizer."""

    def __init__(self, db: Database, embedder: Embedder, counter: TokenCounter,
                 settings: Settings, snapshots: Snapshots, window: Window,
                 logs: LogCopies) -> None:
        self.db = db
        self.embedder = embedder
        self.counter = counter
        self.settings = settings
        self.snapshots = snapshots
        self.window = window
        self.logs = logs  # the client's, which erase and the caches' report reach too

    # -- reading ----------------------------------------------------------------------------

    def _rank(self, conn: store.Conn, scope: Scope, query: str, vector: np.ndarray,
             now: datetime, summaries: bool = True, shown: frozenset[int] = frozenset(),
             where: Where | None = None) -> Ranked:
        """The chat's candidates ranked for ``query``: from its copy in memory, or from one
        scan in PostgreSQL when it has none; both give the same result. With them, the
        excerpts of the log that may join them (none of ``shown``, the messages the prompt
        already holds)."""
        cfg = self.settings.recall
        probe = store.recall_probe(conn, scope, query, cfg.cooldown_recalls,
                                   cfg.summaries if summaries else 0,
                                   shared=bool(self.settings.scopes.user_wide))
        found = self._candidates(conn, scope, probe.version, query, vector, probe.lexemes,
                                 where)
        if probe.user_version is not None:
            # The user-wide memories: a scope of their own, picked the same way.
            found = merged(found, self._candidates(
                conn, store.user_scope(scope.user_id), probe.user_version, query, vector,
                probe.lexemes, where))
        topics = never_topics(found.never)
        searched = Searched([], 0.0)
        log = self.settings.log
        # A filtered recall has no excerpts: the log copies do not hold messages' metadata.
        said = (self.logs.get(conn, scope, probe.log_version)
                if log.excerpts > 0 and probe.log_version[0] > 0 and where is None else None)
        # Hidden: what the chat's memories and the user-wide ones (a forget there) hide.
        hidden = (self.logs.hidden(conn, scope, probe.version + (probe.user_version or ()))
                  if probe.summaries or (said is not None and len(said)) else {})
        if said is not None and len(said):
            searched = excerpts(said, vector, probe.lexemes, k=cfg.top_k,
                                limit=log.excerpts, text_weight=log.text_weight,
                                min_relevance=cfg.min_semantic,
                                hidden=frozenset(hidden) | shown, topics=topics,
                                replies=log.replies)
        # Scored after the excerpts: memories' text matches are put on the log's scale.
        scored, left_out = score(found.columns, found.cosine, found.text_rank, probe.cooled,
                                 now, self.settings.weights, cfg, self.settings.decay,
                                 searched.best_bm25, topics)
        # A summary was written from messages: what it says of a hidden one is hidden too.
        periods = [{**row, "content": unsay(row["content"], hidden.values())}
                   for row in probe.summaries] if hidden else probe.summaries
        return Ranked(scored, left_out, topics, offered_summaries(periods, topics),
                      searched.excerpts)

    def _candidates(self, conn: store.Conn, scope: Scope, version: tuple[int, int, int],
                    query: str, vector: np.ndarray, lexemes: Sequence[str],
                    where: Where | None = None) -> Candidates:
        """One scope's candidates (those whose app metadata matches ``where``, if given):
        from its copy in memory, or one scan in PostgreSQL."""
        k = self.settings.recall.top_k
        copy = self.snapshots.get(conn, scope, version)
        found = (copy.candidates(vector, lexemes, k,
                                 copy.rows_where(where) if where else None)
                 if copy is not None else None)
        if found is None:
            found = from_scan(store.recall_candidates(conn, scope, vector, query, k, where),
                              vector, k)
        return found

    def _vector(self, query: str, vector: np.ndarray | None) -> np.ndarray:
        # Embedded before a connection is taken: the pool is not held through the model.
        return self.embedder.embed([query])[0] if vector is None else vector

    @staticmethod
    def _note(conn: store.Conn, scope: Scope, now: datetime, query: str, block: Block,
              prompt: store.Prompt | None = None) -> None:
        ids = [i.memory_id for i in block.items if i.memory_id is not None]
        spoken = [i.memory_id for i in block.items
                  if i.memory_id is not None and i.section == "speak"]
        store.insert_recall(conn, scope, at=now, query=query, memory_ids=ids,
                            spoken_ids=spoken, tokens=block.tokens, prompt=prompt)

    # -- recall: the memory and summary layers as one block ---------------------------------

    def recall(self, scope: Scope, query: str, *, now: datetime, budget: int,
               record: bool = True, vector: np.ndarray | None = None,
               summaries: bool = True, pinned_budget: int | None = None,
               where: Where | None = None) -> Block:
        vector = self._vector(query, vector)
        # A recall that notes nothing only reads: no transaction, so no COMMIT round trip.
        with self.db.connection(autocommit=not record) as conn:
            ranked = self._rank(conn, scope, query, vector, now, summaries, where=where)
            block = build(ranked.scored, budget, self.counter, pinned_budget,
                          ranked.excerpts, self.settings.log.excerpt_tokens,
                          summaries=ranked.summaries if summaries else ())
            block.suppressed = sorted(set().union(*ranked.topics))
            block.dropped = [Dropped(memory_id=i, reason=r,
                                     kind="suppressed" if hidden else "not_relevant",
                                     ref=f"memory {i}") for i, r, hidden in ranked.left_out] \
                + block.dropped
            if record:
                self._note(conn, scope, now, query, block)
        return block

    # -- compile: every layer, one budget ---------------------------------------------------

    def compile(self, scope: Scope, user_message: str, *, now: datetime, budget: int,
                system: str | None = None, record: bool = True,
                where: Where | None = None) -> Compiled:
        if budget < MIN_BUDGET:
            raise InvalidInput(f"a budget of {budget} tokens cannot hold a system prompt and "
                               f"the user's message; the least is {MIN_BUDGET}")
        # Refused before anything is read or noted: no model, nor the audit, can take it.
        check_text(user_message, f"message for chat {scope}")
        check_text(system or "", f"system prompt for chat {scope}")
        counter = self.counter
        cfg = self.settings.context
        out = Compiled(messages=[], tokens=0, budget=budget)
        system_text = system if system is not None else DEFAULT_SYSTEM
        fixed = estimate(counter, [{"content": system_text}, {"content": user_message}])
        if fixed > budget:
            # Neither can be dropped: cut the user's message first, keeping room for a line
            # of system prompt, then the system prompt, and say so; never so much of the
            # message that not a token of it is left.
            keep_system = min(counter.count(system_text), max(1, budget // 4),
                              budget - REPLY_PRIMING - 2 * MESSAGE_OVERHEAD - 1)
            user_room = budget - REPLY_PRIMING - MESSAGE_OVERHEAD - keep_system
            user_message = fit(counter, user_message, user_room)
            out.truncated.append(Part(layer="user", ref="message", reason="over the budget"))
            system_text = fit(counter, system_text,
                               budget - estimate(counter, [{"content": user_message}]))
            out.truncated.append(Part(layer="system", ref="prompt", reason="over the budget"))
        head = [{"role": "system", "content": system_text}]
        tail = [{"role": "user", "content": user_message}]
        room = budget - estimate(counter, head + tail)
        vector = self._vector(user_message, None)
        layers: dict[str, Layer] = {}
        with self.db.connection() as conn:
            # The window's raw turns first: the prompt holds them verbatim, so they are
            # never excerpted again.
            _, units = self.window.units(conn, scope)
            # Only the newest raw pairs can fit: each costs a message's overhead and a
            # token at least, so this many fill the room. A turn reads a bounded tail,
            # whatever the chat's length.
            most = room // (MESSAGE_OVERHEAD + 1) + 1
            read = self.window.read_raw(conn, scope, units, most)
            ranked = self._rank(conn, scope, user_message, vector, now, shown=read.ids(),
                                where=where)
            # Memories: their share of the room; pinned ones may take all of it, as they are
            # never dropped for the window. Summaries: in the memory block's frame, within
            # their share, but never more than the memories left.
            block = Block(text="", tokens=0, budget=0, items=[])
            if room - MESSAGE_OVERHEAD > 0:
                block = build(ranked.scored, max(0, int(room * cfg.memory_share)
                                                 - MESSAGE_OVERHEAD),
                              counter, pinned_budget=room - MESSAGE_OVERHEAD,
                              excerpts=ranked.excerpts,
                              excerpt_tokens=self.settings.log.excerpt_tokens,
                              summaries=ranked.summaries,
                              summary_room=int((budget - fixed) * cfg.summary_share))
            memory, summary = layers_of(block)
            layers["memory"], layers["summaries"] = memory, summary
            if memory.text:
                head.append({"role": "system", "content": memory.text})
            # The window: the rest.
            room = budget - estimate(counter, head + tail)
            layers["window"], window, out.coverage = window_layer(
                counter, units, room, ranked.topics, read)
            out.messages = head + window + tail
            out.tokens = estimate(counter, out.messages)
            if out.tokens > budget:  # a tokenizer the per-layer estimates undercounted
                raise Error(f"compiled prompt for chat {scope} is {out.tokens} tokens, over "
                            f"its budget of {budget}")
            out.layers = {"system": estimate(counter, head[:1]) - REPLY_PRIMING,
                          "memory": layers["memory"].tokens + (MESSAGE_OVERHEAD
                                                               if memory.text else 0),
                          "summaries": layers["summaries"].tokens,
                          "window": layers["window"].tokens,
                          "user": counter.count(user_message) + MESSAGE_OVERHEAD}
            out.items = [*memory.items, *summary.items]
            for layer in layers.values():
                out.dropped += layer.dropped
                out.truncated += layer.truncated
            if record:
                self._note(conn, scope, now, user_message, block, store.Prompt(
                    budget=budget, tokens=out.tokens, layers=out.layers,
                    messages=out.messages))
        return out


