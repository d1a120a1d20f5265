"""The facade an application uses: record after a turn, recall before the next one, and the
write path the jobs drive. Everything it needs is passed in or built from settings."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from engrammar import _inputs as inputs
from engrammar import store
from engrammar._chats import ChatCalls
from engrammar._data import DataCalls
from engrammar._inputs import utcnow as utcnow  # the clock the jobs read when not given one
from engrammar._inspection import Inspection
from engrammar._parts import MAX_PAGE
from engrammar.errors import ConfigError, InvalidInput, NotFound, guarded
from engrammar.extract._extractor import Extractor, LLMExtractor, observed_ops
from engrammar.extract._summarizer import ExtractiveSummarizer, LLMSummarizer, Summarizer
from engrammar.extract.parser._extractor import ParserExtractor
from engrammar.models import (
    Memory,
    MemoryEvent,
    MemoryType,
    Message,
    Op,
    Posted,
    Role,
    Scope,
    check_metadata,
    metadata_matches,
    where_filter,
)
from engrammar.nightly._blocks import Blocks
from engrammar.nightly._extract import ExtractionJob, ExtractReport
from engrammar.recall._assembler import Assembler
from engrammar.recall._block import Block
from engrammar.recall._copies import Snapshots
from engrammar.recall._layers import Compiled
from engrammar.recall._logsearch import LogCopies
from engrammar.recall._window import Window
from engrammar.runtime._database import EMBEDDED_DATABASE, Database
from engrammar.runtime._embedder import Embedder, embedder_from_settings
from engrammar.runtime._llm import LLM
from engrammar.runtime._telemetry import enable_from, traced
from engrammar.runtime._tokens import TokenCounter, counter_from_setting
from engrammar.settings import Settings
from engrammar.write._gate import Gate
from engrammar.write._writer import ApplyResult, Writer


@traced  # a span per public call, when telemetry is on (runtime._telemetry)
@guarded  # driver and validation errors leave as the library's (errors.Error)
class Client(ChatCalls, DataCalls, Inspection):
    """The components of the library, wired once, behind the calls an application makes.

    Each component takes what it needs explicitly and works alone: ``assembler`` (the read
    path: recall and compile, with ``window``, what a turn reads of the short-term window),
    ``writer`` (the write gate and apply), ``extractor``, ``summarizer`` and ``blocks`` (the
    jobs' workers, see scheduler._registry). The client builds them from settings, or takes
    them ready-made."""

    def __init__(self, db: Database, *, settings: Settings | None = None,
                 embedder: Embedder, llm: LLM | None = None,
                 extractor: Extractor | None = None,
                 counter: TokenCounter | None = None, check_embedder: bool = True) -> None:
        self.db = db
        self.settings = settings or Settings()
        self.embedder = embedder
        self.llm = llm
        self.counter = counter or counter_from_setting(self.settings.tokenizer,
                                                       self.settings.token_cache_bytes)
        self.extractor: Extractor = extractor or (
            LLMExtractor(llm, self.counter, self.settings.llm_context_tokens,
                         self.settings.max_ops_per_answer) if llm
            else ParserExtractor())
        self.summarizer: Summarizer = (
            LLMSummarizer(llm, self.counter, self.settings.llm_context_tokens) if llm
            else ExtractiveSummarizer(self.counter))
        self.snapshots = Snapshots(self.settings.recall.cache_memories,
                                   self.settings.recall.cache_bytes)
        self.window = Window()
        self.blocks = Blocks(db, self.summarizer, self.counter, self.settings.context)
        self.writer = Writer(Gate(self.settings.gate), embedder,
                             self.settings.max_memory_chars,
                             frozenset(MemoryType(t) for t in self.settings.scopes.user_wide))
        log = self.settings.log
        self.logs = LogCopies(log.cache_messages, log.cache_bytes, log.context_weight)
        self.assembler = Assembler(db, embedder, self.counter, self.settings, self.snapshots,
                                   self.window, self.logs)
        if check_embedder:
            self._check_embedder()

    @classmethod
    def open(cls, settings: Settings | None = None, *, database: str = EMBEDDED_DATABASE,
             embedder: Embedder | None = None, extractor: Extractor | None = None,
             check_embedder: bool = True) -> Client:
        """Build a client from settings: database (embedded unless a URL is set), embedder,
        and the LLM when one is configured."""
        settings = settings or Settings()
        enable_from(settings)
        db = Database.from_settings(settings, database)
        llm = LLM.from_settings(settings, db)
        if embedder is None:
            embedder = embedder_from_settings(settings, llm.client if llm else None)
        return cls(db, settings=settings, embedder=embedder, llm=llm, extractor=extractor,
                   check_embedder=check_embedder)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_embedder(self) -> None:
        wanted = {"name": self.embedder.name, "dim": self.embedder.dim}
        with self.db.connection() as conn:
            current = store.get_meta(conn, "embedder")
            if current is None:
                store.set_meta(conn, "embedder", wanted)
            elif current != wanted and store.count_memories(conn) > 0:
                raise ConfigError(
                    f"the store holds {current['name']} vectors ({current['dim']}-d) but the "
                    f"embedder is {wanted['name']} ({wanted['dim']}-d): run `engram reembed`")
            elif current != wanted:
                store.set_meta(conn, "embedder", wanted)

    # -- the log --------------------------------------------------------------------------

    def record(self, user_id: str, chat_id: str, role: str, content: str,
               at: datetime | None = None, *, metadata: dict[str, Any] | None = None) -> int:
        """Append one message to the chat's log; returns its id. One insert; with
        MEMORY_FRESH__EMBED_AT_RECORD, the message embedded too, so the next recall's log
        excerpts can quote it (else the index job embeds it, at night). ``metadata``: the
        app's JSON object (topic, source, locale...), inherited by the memories drawn from
        the message and matched by ``where`` in recall, compile and memories."""
        scope = inputs.scope(user_id, chat_id)
        role_ = _message(scope, role, content, self.settings.max_message_chars)
        at = inputs.aware(at, "at")
        tags = check_metadata(metadata, f"metadata of a message for chat {scope}")
        # Embedded before a connection is taken: the pool is not held through the model.
        vector = (self.embedder.embed([content])[0]
                  if self.settings.fresh.embed_at_record
                  and role_.value in store.SEARCHED_ROLES else None)
        with self.db.connection() as conn, conn.transaction():
            message_id = store.insert_message(conn, scope, role_.value, content, at, tags)
            if vector is not None:
                store.index_recorded(conn, scope, message_id, vector)
        return message_id

    def record_turn(self, user_id: str, chat_id: str, message: str, reply: str,
                    at: datetime | None = None, *, metadata: dict[str, Any] | None = None
                    ) -> tuple[int, int]:
        """Record a whole turn, the user's message and the model's reply, in one
        transaction: call it once the reply is in, so the log never holds a question whose
        answer failed, and extraction never reads half a turn as the user's last word.
        Returns the two message ids."""
        scope = inputs.scope(user_id, chat_id)
        for what, text in (("message", message), ("reply", reply)):
            _message(scope, "user", text, self.settings.max_message_chars, what)
        at = inputs.aware(at, "at")
        tags = check_metadata(metadata, f"metadata of a turn for chat {scope}")
        vectors = (self.embedder.embed([message, reply])
                   if self.settings.fresh.embed_at_record else None)
        with self.db.connection() as conn, conn.transaction():
            ids = (store.insert_message(conn, scope, "user", message, at, tags),
                   store.insert_message(conn, scope, "assistant", reply, at, tags))
            if vectors is not None:
                for message_id, vector in zip(ids, vectors, strict=True):
                    store.index_recorded(conn, scope, message_id, vector)
        return ids

    def post(self, user_id: str, chat_id: str, messages: Sequence[tuple[str, str]], *,
             at: datetime | None = None, key: str | None = None) -> Posted:
        """Append messages (one, or a user/assistant pair) in one transaction. Under an
        idempotency ``key`` a retry of the same post stores nothing and gets the first
        post's ids back (``replayed``); the same key with other messages is refused."""
        scope = inputs.scope(user_id, chat_id)
        if not messages:
            raise InvalidInput(f"no message to post to chat {scope}")
        checked: list[tuple[str, str]] = []
        for role, content in messages:
            role_ = _message(scope, role, content, self.settings.max_message_chars)
            checked.append((role_.value, content))
        at = inputs.aware(at, "at")
        if key is not None:
            inputs.text(key, "idempotency key", 200)
        digest = hashlib.sha256(json.dumps(checked).encode()).hexdigest()
        with self.db.connection() as conn, conn.transaction():
            if key is not None:
                first = store.claim_post(conn, scope, key, digest)
                if first is not None:
                    if first[0] != digest:
                        raise InvalidInput(f"idempotency key {key!r} of chat {scope} was "
                                           "used for other messages")
                    return Posted(ids=first[1]["ids"], replayed=True)
            ids = [store.insert_message(conn, scope, role, content, at)
                   for role, content in checked]
            if key is not None:
                store.finish_post(conn, scope, key, {"ids": ids})
        return Posted(ids=ids)

    def log(self, user_id: str, chat_id: str, before: int | None = None,
            limit: int = 50) -> list[Message]:
        """A page of the log going backwards from message ``before`` (1 to 10,000 long)."""
        scope = inputs.scope(user_id, chat_id)
        if before is not None:
            inputs.count(before, "before", 1)
        inputs.count(limit, "limit", 1, MAX_PAGE)
        with self.db.connection() as conn:
            return store.messages_before(conn, scope, before, limit)

    # -- memories -------------------------------------------------------------------------

    def pin(self, user_id: str, chat_id: str, memory_id: int, pinned: bool = True, *,
            now: datetime | None = None, source: str = "api") -> Memory:
        """Pin a memory (always in the block, exempt from lifecycle) or unpin it; the
        change goes into its history."""
        scope = inputs.scope(user_id, chat_id)
        inputs.count(memory_id, "memory id")
        now = inputs.aware(now)
        with self.db.connection() as conn, conn.transaction():
            store.lock_chat(conn, scope)
            before = store.get_memory(conn, scope, memory_id)
            if before is None:
                raise NotFound("memory", memory_id, f"chat {scope}")
            if before.pinned == pinned:
                return before
            store.set_memory(conn, scope, memory_id, {"pinned": pinned})
            after = before.model_copy(update={"pinned": pinned})
            store.insert_events(conn, scope, [store.NewEvent(
                memory_id, "pin" if pinned else "unpin",
                before.model_dump(mode="json", exclude={"embedding"}),
                after.model_dump(mode="json", exclude={"embedding"}),
                None, source, [], now)])
        return after


    def memories(self, user_id: str, chat_id: str,
                 statuses: Sequence[str] | None = None, *,
                 where: dict[str, Any] | None = None) -> list[Memory]:
        """The chat's memories, and the user-wide ones it shares (by id); ``where``: only
        those whose app metadata matches (as in :meth:`recall`)."""
        scope = inputs.scope(user_id, chat_id)
        if statuses is not None:
            statuses = [inputs.text(s, "status") for s in statuses]
        wanted = where_filter(where)
        with self.db.connection() as conn:
            found = [m for s in self._scopes(conn, scope)
                     for m in store.list_memories(conn, s, statuses)]
        if wanted is not None:
            found = [m for m in found if metadata_matches(m.app_metadata, wanted)]
        return sorted(found, key=lambda m: m.id)

    def get(self, user_id: str, chat_id: str, memory_id: int) -> Memory:
        scope = inputs.scope(user_id, chat_id)
        inputs.count(memory_id, "memory id")
        with self.db.connection() as conn:
            for s in self._scopes(conn, scope):
                found = store.get_memory(conn, s, memory_id)
                if found is not None:
                    return found
        raise NotFound("memory", memory_id, f"chat {scope}")

    def history(self, user_id: str, chat_id: str, memory_id: int | None = None
                ) -> list[MemoryEvent]:
        """The chat's events (and, for a memory of the user's scope, that memory's)."""
        scope = inputs.scope(user_id, chat_id)
        if memory_id is not None:
            inputs.count(memory_id, "memory id")
        with self.db.connection() as conn:
            events = store.list_events(conn, scope, memory_id)
            if memory_id is not None and not events:
                for s in self._scopes(conn, scope)[1:]:
                    events = store.list_events(conn, s, memory_id)
        return events

    def apply(self, user_id: str, chat_id: str, ops: Sequence[Op], *, source: str = "api",
              now: datetime | None = None, dry_run: bool = False) -> ApplyResult:
        """Send ops from elsewhere (an import, an admin) through the same gate, atomically."""
        scope = inputs.scope(user_id, chat_id)
        now = inputs.aware(now)
        inputs.text(source, "source", 200)
        with self.db.connection() as conn:
            tx = conn.transaction(force_rollback=dry_run)
            with tx:  # the writer takes the chat's write lock before it reads the pool
                return self.writer.apply(conn, scope, ops, now=now, source=source)

    # -- recall ---------------------------------------------------------------------------

    def recall(self, user_id: str, chat_id: str, query: str, *, now: datetime | None = None,
               budget_tokens: int | None = None, record: bool = True,
               vector: np.ndarray | None = None, summaries: bool = True,
               pinned_budget: int | None = None, where: dict[str, Any] | None = None
               ) -> Block:
        """The memory block for the next turn: candidates of this chat only, ranked, rendered
        within ``budget_tokens``. ``record`` notes what was surfaced, for the cooldown;
        ``summaries`` adds the latest temporal summaries as their own layer;
        ``pinned_budget`` lets pinned memories use more room than the rest; ``where``
        keeps to the memories whose app metadata matches: ``{"topic": "cooking"}`` (that
        value) or ``{"locale": ["en", "fr"]}`` (one of them), every key at once. A
        filtered block carries no log excerpts."""
        scope = inputs.scope(user_id, chat_id)
        now = inputs.aware(now)
        budget = self.settings.recall.budget_tokens if budget_tokens is None else \
            inputs.budget(budget_tokens, "budget_tokens")
        if pinned_budget is not None:
            inputs.budget(pinned_budget, "pinned_budget")
        if vector is not None:
            vector = inputs.vector(vector, self.embedder.dim)
        query = inputs.text(query, f"query for chat {scope}",
                            self.settings.max_message_chars)
        return self.assembler.recall(scope, query, now=now, budget=budget, record=record,
                                     vector=vector, summaries=summaries,
                                     pinned_budget=pinned_budget, where=where_filter(where))

    # -- the whole turn ---------------------------------------------------------------------

    def compile(self, user_id: str, chat_id: str, user_message: str, *,
                now: datetime | None = None, budget_tokens: int | None = None,
                system: str | None = None, record: bool = True,
                where: dict[str, Any] | None = None) -> Compiled:
        """The whole prompt for a turn as OpenAI-style messages, never over the budget: system
        prompt, memory block, temporal summaries, short-term window, the user's message."""
        scope = inputs.scope(user_id, chat_id)
        budget = self.settings.context.budget_tokens if budget_tokens is None \
            else inputs.budget(budget_tokens, "budget_tokens")
        # Checked before anything is read or noted: a bad message changes nothing.
        inputs.text(user_message, f"message for chat {scope}", self.settings.max_message_chars)
        if system is not None:
            inputs.text(system, f"system prompt for chat {scope}",
                        self.settings.max_message_chars)
        return self.assembler.compile(scope, user_message, now=inputs.aware(now), budget=budget,
                                      system=system, record=record, where=where_filter(where))

    def observe(self, user_id: str, chat_id: str, assistant_text: str, *,
                now: datetime | None = None) -> ApplyResult:
        """Lift the assistant's "Decision:", "Constraint:" and "Open:" lines into memories at
        once, through the gate, so they count before the nightly job runs."""
        inputs.scope(user_id, chat_id)
        inputs.text(assistant_text, f"assistant text for chat {user_id}/{chat_id}",
                    self.settings.max_message_chars)
        ops = observed_ops(assistant_text)
        return self.apply(user_id, chat_id, ops, source="observe", now=now)

    def extract(self, user_id: str, chat_id: str, *, now: datetime | None = None
                ) -> ExtractReport:
        """Run the extraction job for one chat now, not at night: its messages past the
        watermark (up to ``now``) become memories through the gate, in one transaction
        under the chat's lock, exactly as the nightly job would make them."""
        scope = inputs.scope(user_id, chat_id)
        return ExtractionJob(self.db, self.extractor, self.writer).run(inputs.aware(now),
                                                                   chat=scope)

    def count_memories(self) -> int:
        with self.db.connection() as conn:
            return store.count_memories(conn)

    def reembed(self, batch: int = 256, everything: bool = True,
                progress: Callable[[int], Any] | None = None) -> int:
        """Recompute every memory's vector with the configured embedder."""
        done, after = 0, 0
        while True:
            with self.db.connection() as conn:
                rows = store.memories_without_embedding(conn, after, batch, everything)
                if not rows:
                    break
                vectors = self.embedder.embed([content for _, _, content in rows])
                store.set_embeddings(conn, [(s, i, v) for (s, i, _), v in
                                            zip(rows, vectors, strict=True)])
            after = rows[-1][1]
            done += len(rows)
            if progress:
                progress(len(rows))
        with self.db.connection() as conn:
            store.set_meta(conn, "embedder", {"name": self.embedder.name,
                                              "dim": self.embedder.dim})
        return done


def _message(scope: Scope, role: str, content: str, limit: int, what: str = "message"
             ) -> Role:
    """The role of a message about to be logged, once the message is known fit: a known
    role, a text within ``limit`` characters, not blank."""
    try:
        role_ = Role(role)
    except ValueError:
        raise InvalidInput(f"unknown role {role!r}: use user, assistant or system") from None
    inputs.text(content, f"{what} for chat {scope} (MEMORY_MAX_MESSAGE_CHARS)", limit)
    if not content.strip():
        raise InvalidInput(f"empty {what} for chat {scope}")
    return role_
