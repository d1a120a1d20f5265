"""The facade an application uses: record after a turn, recall before the next one, and the
write path the jobs drive. Everything it needs is passed in or built from settings."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np
import psycopg

from engrammar import _inputs as inputs
from engrammar import _userdata as userdata
from engrammar import store
from engrammar._inputs import utcnow as utcnow  # the clock the jobs read when not given one
from engrammar.errors import ConfigError, InvalidInput, NotFound, guarded
from engrammar.extract._extractor import Extractor, LLMExtractor, observed_ops
from engrammar.extract._summarizer import ExtractiveSummarizer, LLMSummarizer, Summarizer
from engrammar.extract.parser._extractor import ParserExtractor
from engrammar.models import (
    ChatSettings,
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
from engrammar.nightly._extract import ExtractionJob, ExtractReport
from engrammar.recall._assembler import Assembler, Compiled
from engrammar.recall._block import Block
from engrammar.recall._logsearch import LogCopies
from engrammar.recall._snapshot import Snapshots
from engrammar.recall._window import Window, coverage_problems
from engrammar.runtime._database import EMBEDDED_DATABASE, Database
from engrammar.runtime._embedder import Embedder, embedder_from_settings
from engrammar.runtime._llm import LLM
from engrammar.runtime._telemetry import enable_from, traced
from engrammar.runtime._tokens import TokenCounter, counter_from_setting
from engrammar.settings import Settings
from engrammar.write._gate import Gate
from engrammar.write._writer import ApplyResult, Writer

# The longest page of the log one call returns.
MAX_PAGE = 10_000
# What a chat may override of the window's settings (models.ChatSettings).
_CHAT_SETTINGS = ("raw_pairs", "block_pairs", "summaries", "trigger_offset")


@traced  # a span per public call, when telemetry is on (runtime._telemetry)
@guarded  # driver and validation errors leave as the library's (errors.Error)
class Client:
    """The components of the library, wired once, behind the calls an application makes.

    Each component takes what it needs explicitly and works alone: ``assembler`` (the read
    path: recall and compile), ``writer`` (the write gate and apply), ``extractor``,
    ``summarizer`` and ``window`` (the jobs' workers, see scheduler._registry). The client builds
    them from settings, or takes them ready-made."""

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
        self.window = Window(db, self.summarizer, self.counter, self.settings.context)
        self.writer = Writer(Gate(self.settings.gate), embedder,
                             self.settings.max_memory_chars,
                             frozenset(MemoryType(t) for t in self.settings.scopes.user_wide))
        self.logs = LogCopies(self.settings.log.cache_messages, self.settings.log.cache_bytes)
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
        try:
            role_ = Role(role)
        except ValueError:
            raise InvalidInput(f"unknown role {role!r}: use user, assistant or system"
                               ) from None
        inputs.text(content, f"message for chat {scope} (MEMORY_MAX_MESSAGE_CHARS)",
                    self.settings.max_message_chars)
        if not content.strip():
            raise InvalidInput(f"empty message for chat {scope}")
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
            inputs.text(text, f"{what} for chat {scope} (MEMORY_MAX_MESSAGE_CHARS)",
                        self.settings.max_message_chars)
            if not text.strip():
                raise InvalidInput(f"empty {what} for chat {scope}")
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
            try:
                role_ = Role(role)
            except ValueError:
                raise InvalidInput(f"unknown role {role!r}: use user, assistant or system"
                                   ) from None
            inputs.text(content, f"message for chat {scope} (MEMORY_MAX_MESSAGE_CHARS)",
                        self.settings.max_message_chars)
            if not content.strip():
                raise InvalidInput(f"empty message for chat {scope}")
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

    # -- scopes ---------------------------------------------------------------------------

    def set_private(self, user_id: str, chat_id: str, private: bool = True) -> None:
        """Opt a chat out of the user's scope (``private=True``) or back in: a private chat
        neither recalls the user-wide memories nor adds to them; what it learns stays in
        it. Of no effect while no type is user-wide (``MEMORY_SCOPES__USER_WIDE``)."""
        scope = inputs.scope(user_id, chat_id)
        if not isinstance(private, bool):
            raise InvalidInput(f"private must be true or false, not {private!r}")
        with self.db.connection() as conn, conn.transaction():
            store.lock_chat(conn, scope)  # no extraction decides on the chat meanwhile
            store.set_private(conn, scope, private)

    def is_private(self, user_id: str, chat_id: str) -> bool:
        scope = inputs.scope(user_id, chat_id)
        with self.db.connection() as conn:
            return store.chat_private(conn, scope)

    def _scopes(self, conn: store.Conn, scope: Scope) -> list[Scope]:
        """The scopes the chat reads: its own, and its user's when some types are user-wide
        and the chat is not private."""
        shares = bool(self.settings.scopes.user_wide) and not store.chat_private(conn, scope)
        return list(store.scopes_of(scope, shares))
    # -- chats ----------------------------------------------------------------------------

    def open_chat(self, user_id: str, chat_id: str) -> tuple[bool, datetime]:
        """Get or create the chat: (whether it is new, when it was made)."""
        scope = inputs.scope(user_id, chat_id)
        with self.db.connection() as conn:
            return store.open_chat(conn, scope)

    def chat_created_at(self, user_id: str, chat_id: str) -> datetime:
        """When the chat was made; NotFound when it was never opened nor written to."""
        scope = inputs.scope(user_id, chat_id)
        with self.db.connection() as conn:
            made = store.chat_created_at(conn, scope)
        if made is None:
            raise NotFound("chat", scope.chat_id, f"user {scope.user_id}")
        return made

    def has_user(self, user_id: str) -> bool:
        """Whether the store holds a chat of the user."""
        with self.db.connection() as conn:
            return store.user_exists(conn, inputs.user(user_id))

    def chat_settings(self, user_id: str, chat_id: str) -> ChatSettings:
        """The chat's window settings: its overrides over the process's defaults."""
        scope = inputs.scope(user_id, chat_id)
        with self.db.connection() as conn:
            own = store.chat_overrides(conn, scope)
        return self._chat_settings(own)

    def set_chat_settings(self, user_id: str, chat_id: str,
                          changes: Mapping[str, int | None]) -> ChatSettings:
        """Override some of the chat's window settings; a None drops the override. The
        window job reads them for the chat's next blocks."""
        scope = inputs.scope(user_id, chat_id)
        unknown = set(changes) - set(_CHAT_SETTINGS)
        if unknown:
            raise InvalidInput(f"not chat settings: {sorted(unknown)} (use "
                               f"{', '.join(_CHAT_SETTINGS)})")
        with self.db.connection() as conn, conn.transaction():
            store.lock_chat(conn, scope)
            own = store.chat_overrides(conn, scope)
            own.update(changes)
            own = {k: v for k, v in own.items() if v is not None}
            result = self._chat_settings(own)  # refuses a value out of range
            store.set_chat_overrides(conn, scope, own)
        return result

    def _chat_settings(self, own: Mapping[str, Any]) -> ChatSettings:
        ctx = self.settings.context
        defaults = {"raw_pairs": ctx.raw_pairs, "block_pairs": ctx.block_pairs,
                    "summaries": self.settings.recall.summaries,
                    "trigger_offset": ctx.trigger_offset}
        return ChatSettings(**{**defaults, **own}, overrides=dict(own))

    def diagnostics(self, user_id: str, chat_id: str) -> dict[str, Any]:
        """The window of the chat: its pairs, every block with its state, the coverage of
        the pairs (each raw or in exactly one active block) and any problem with it."""
        scope = inputs.scope(user_id, chat_id)
        with self.db.connection() as conn:
            pairs, units = self.window.units(conn, scope)
            blocks = store.list_blocks(conn, scope)
        return {"pairs": pairs, "blocks": blocks,
                "coverage": [dataclasses.asdict(u) for u in units],
                "problems": coverage_problems(units, pairs)}

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

    def delete(self, user_id: str, chat_id: str, memory_id: int, *, sources: bool = False
               ) -> dict[str, int]:
        """Delete one memory for good (``forget`` archives and keeps the text): the memory,
        its vector, events and links, and every prompt or model call in the audit that
        quotes it. ``sources=True``: also the messages it rests on, the summaries and block
        summaries drawn from them, and the audit rows quoting those (store._deletion).
        A memory of the user's scope is found through any chat that shares it. Rows
        changed, by table."""
        scope = inputs.scope(user_id, chat_id)
        inputs.count(memory_id, "memory id")
        if not isinstance(sources, bool):
            raise InvalidInput(f"sources must be true or false, not {sources!r}")
        with self.db.connection() as conn, conn.transaction():
            store.lock_chat(conn, scope)
            for where in self._scopes(conn, scope):
                if store.is_user_scope(where):
                    store.lock_user_scope(conn, scope.user_id)
                found = store.memory_texts(conn, where, memory_id)
                if found is not None:
                    break
            else:
                raise NotFound("memory", memory_id, f"chat {scope}")
            content, message_ids, extra = found
            counts = store.delete_memory(conn, where, memory_id, content)
            texts = [content, *extra]
            if sources and message_ids:
                deleted, said = store.delete_messages(conn, scope.user_id, message_ids)
                counts.update(deleted)
                texts += said
            counts.update(store.scrub_audit(conn, scope.user_id, texts))
        self.logs.forget(scope.user_id)  # this process's log copies; others see the stamp
        return {table: n for table, n in counts.items() if n}

    # -- a user's data as a whole ---------------------------------------------------------

    def erase_user(self, user_id: str) -> int:
        """Delete every row of the user in every table (the job reports' entries on their
        chats included) and this process's copies of their chats; rows deleted."""
        return self._erase(inputs.user(user_id), None)

    def erase_chat(self, user_id: str, chat_id: str) -> int:
        """Delete every row of one chat, as :meth:`erase_user` does for a user."""
        scope = inputs.scope(user_id, chat_id)
        return self._erase(scope.user_id, scope.chat_id)

    def _erase(self, user_id: str, chat_id: str | None) -> int:
        with self.db.connection() as conn, conn.transaction():
            deleted = store.erase_user(conn, user_id, chat_id)
        self.snapshots.forget(user_id, chat_id)
        self.logs.forget(user_id, chat_id)
        return sum(deleted.values())

    def export_user(self, user_id: str) -> list[dict[str, Any]]:
        """The user's data as export records (_userdata): a header, then every row of
        theirs in every table, read in one snapshot."""
        user_id = inputs.user(user_id)
        records = [userdata.header(user_id)]
        with self.db.connection() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            records += [{"table": t, "row": r} for t, r in store.export_rows(conn, user_id)]
        return records

    def import_file(self, data: bytes, *, name: str = "input", source: str = "import",
                    dry_run: bool = False, replace: bool = False
                    ) -> dict[str, ApplyResult] | int:
        """Import an export (rows restored as they were; returns how many) or a file of ops
        (through the gate; returns each chat's result), all or nothing: one transaction.
        ``replace`` (an export only) erases the user first, in the same transaction, so a
        restore that fails leaves the user as it was."""
        inputs.text(source, "source", 200)
        parsed = userdata.parse(data, name, self.settings)
        if replace and not parsed.is_export:
            raise InvalidInput(f"{name}: --replace restores an export; this is a file of ops")
        with self.db.connection() as conn:
            try:
                with conn.transaction(force_rollback=dry_run):
                    if parsed.is_export:
                        userdata.check_rows(parsed.rows, store.user_tables(conn), name,
                                            self.settings, self.embedder.dim)
                        if replace:
                            store.erase_user(conn, parsed.user_id or "")
                        return store.restore_rows(conn, parsed.rows)
                    results: dict[str, ApplyResult] = {}
                    for scope in sorted(parsed.ops, key=lambda s: (s.user_id, s.chat_id)):
                        results[str(scope)] = self.writer.apply(
                            conn, scope, parsed.ops[scope], now=utcnow(), source=source)
                    return results
            except KeyError as exc:
                raise InvalidInput(f"{name}: {exc.args[0]}") from None
            except (psycopg.DataError, psycopg.IntegrityError) as exc:
                raise InvalidInput(f"{name}: the store refused it, nothing was imported: "
                                   f"{exc}") from None
            finally:
                if parsed.is_export and not dry_run:
                    self.snapshots.forget(parsed.user_id or "")
                    self.logs.forget(parsed.user_id or "")

    # -- looking at the store (the inspector) ---------------------------------------------

    def chats(self, user_prefix: str = "", limit: int = 500) -> list[dict[str, Any]]:
        """The chats whose user id starts with ``user_prefix`` (every chat with ""), first
        ``limit`` by user and chat, each with its last message, its extraction watermark
        and its memories counted by (type, status) in ``counts``."""
        inputs.count(limit, "limit", 1, MAX_PAGE)
        with self.db.connection() as conn:
            return store.chat_overview(conn, inputs.text(user_prefix, "user prefix", 200),
                                       limit)

    def find_memories(self, user_id: str, chat_id: str, *, types: Sequence[str] = (),
                      statuses: Sequence[str] = (), surfaces: Sequence[str] = (),
                      text: str = "", limit: int = 100, offset: int = 0
                      ) -> tuple[int, list[Memory]]:
        """A page of the chat's memories matching every filter given, newest first, and
        how many match in all."""
        scope = inputs.scope(user_id, chat_id)
        inputs.count(limit, "limit", 1, MAX_PAGE)
        inputs.count(offset, "offset", 0)
        with self.db.connection() as conn:
            return store.find_memories(conn, scope, types=types, statuses=statuses,
                                       surfaces=surfaces, text=inputs.text(text, "text", 500),
                                       limit=limit, offset=offset)

    def events(self, user_id: str, chat_id: str, *, before: int | None = None,
               limit: int = 100, rejected_only: bool = False) -> list[MemoryEvent]:
        """A page of the chat's history going backwards (the gate's rejections included,
        or alone), newest first."""
        scope = inputs.scope(user_id, chat_id)
        inputs.count(limit, "limit", 1, MAX_PAGE)
        with self.db.connection() as conn:
            return store.events_page(conn, scope, before=before, limit=limit,
                                     rejected_only=rejected_only)

    def rejections(self, user_id: str, chat_id: str, memory_id: int) -> list[MemoryEvent]:
        """The gate's rejections of ops aimed at ``memory_id`` (they change no memory, so
        :meth:`history` of the memory does not list them)."""
        scope = inputs.scope(user_id, chat_id)
        inputs.count(memory_id, "memory id")
        with self.db.connection() as conn:
            return store.rejections_of(conn, scope, memory_id)

    def resting_on(self, user_id: str, chat_id: str, first: int, last: int
                   ) -> dict[int, list[int]]:
        """Which memories rest on each message from ``first`` to ``last``."""
        scope = inputs.scope(user_id, chat_id)
        with self.db.connection() as conn:
            return store.memories_resting_on(conn, scope, first, last)

    def job_runs(self, limit: int = 50) -> list[dict[str, Any]]:
        """The latest job runs (the scheduler's record), newest first, with their reports."""
        inputs.count(limit, "limit", 1, MAX_PAGE)
        with self.db.connection() as conn:
            return store.recent_job_runs(conn, limit)

    def prompts(self, user_id: str, chat_id: str, limit: int = 20) -> list[dict[str, Any]]:
        """The chat's latest compiled prompts, as audited by :meth:`compile`."""
        scope = inputs.scope(user_id, chat_id)
        inputs.count(limit, "limit", 1, MAX_PAGE)
        with self.db.connection() as conn:
            return store.recent_prompts(conn, scope, limit)
