"""The facade an application uses: record after a turn, recall before the next one, and the
write path the jobs drive. Everything it needs is passed in or built from settings."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from memory import store
from memory.block import Block, BlockItem, Dropped, build, redact
from memory.candidates import from_scan
from memory.context import Compiled, compile_turn
from memory.db import EMBEDDED_DATABASE, Database
from memory.embed import Embedder, embedder_from_settings
from memory.errors import ConfigError, InvalidInput, NotFound
from memory.extractor import Extractor, LLMExtractor, RuleExtractor
from memory.gate import Gate
from memory.llm import LLM
from memory.models import Memory, MemoryEvent, Message, Op, Role, Scope
from memory.retriever import never_topics, score
from memory.rules import observed_ops
from memory.settings import Settings
from memory.snapshot import Snapshots
from memory.store import Conn
from memory.summary import ExtractiveSummarizer, LLMSummarizer, Summarizer
from memory.tokens import TokenCounter, counter_from_setting
from memory.window import Window, WindowReport
from memory.writer import ApplyResult, Writer


def utcnow() -> datetime:
    return datetime.now(UTC)


def _scope(user_id: str, chat_id: str) -> Scope:
    try:
        return Scope(user_id=user_id, chat_id=chat_id)
    except ValueError as exc:
        raise InvalidInput(f"bad scope {user_id!r}/{chat_id!r}: {exc}") from exc


@dataclass
class ChatExtraction:
    scope: Scope
    messages: int
    proposed: int
    result: ApplyResult
    watermark: int
    extractor: str
    ops: list[Op] = field(default_factory=list)


class Client:
    def __init__(self, db: Database, *, settings: Settings | None = None,
                 embedder: Embedder, llm: LLM | None = None,
                 extractor: Extractor | None = None,
                 counter: TokenCounter | None = None, check_embedder: bool = True) -> None:
        self.db = db
        self.settings = settings or Settings()
        self.embedder = embedder
        self.llm = llm
        self.counter = counter or counter_from_setting(self.settings.tokenizer)
        self.extractor: Extractor = extractor or (
            LLMExtractor(llm, self.counter, self.settings.llm_context_tokens) if llm
            else RuleExtractor())
        self.summarizer: Summarizer = (
            LLMSummarizer(llm, self.counter, self.settings.llm_context_tokens) if llm
            else ExtractiveSummarizer(self.counter))
        self.snapshots = Snapshots(self.settings.recall.cache_memories)
        self.window = Window(db, self.summarizer, self.counter, self.settings.context)
        self.gate = Gate(self.settings.gate)
        self.writer = Writer(self.gate, embedder)
        if check_embedder:
            self._check_embedder()

    @classmethod
    def open(cls, settings: Settings | None = None, *, database: str = EMBEDDED_DATABASE,
             embedder: Embedder | None = None, extractor: Extractor | None = None,
             check_embedder: bool = True) -> Client:
        """Build a client from settings: database (embedded unless a URL is set), embedder,
        and the LLM when one is configured."""
        settings = settings or Settings()
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
                    f"embedder is {wanted['name']} ({wanted['dim']}-d): run `memory reembed`")
            elif current != wanted:
                store.set_meta(conn, "embedder", wanted)

    # -- the log --------------------------------------------------------------------------

    def record(self, user_id: str, chat_id: str, role: str, content: str,
               at: datetime | None = None) -> int:
        """Append one message to the chat's log; returns its id. One insert."""
        scope = _scope(user_id, chat_id)
        try:
            role_ = Role(role)
        except ValueError as exc:
            raise InvalidInput(f"unknown role {role!r}: use user, assistant or system") from exc
        limit = self.settings.max_message_chars
        if len(content) > limit:
            raise InvalidInput(f"message for chat {scope} is {len(content)} characters; the "
                               f"limit is {limit} (MEMORY_MAX_MESSAGE_CHARS)")
        if not content.strip():
            raise InvalidInput(f"empty message for chat {scope}")
        if "\x00" in content:
            raise InvalidInput(f"message for chat {scope} contains a NUL character, which "
                               "PostgreSQL text cannot hold")
        with self.db.connection() as conn:
            return store.insert_message(conn, scope, role_.value, content, at or utcnow())

    def log(self, user_id: str, chat_id: str, before: int | None = None,
            limit: int = 50) -> list[Message]:
        with self.db.connection() as conn:
            return store.messages_before(conn, _scope(user_id, chat_id), before, limit)

    # -- memories -------------------------------------------------------------------------

    def memories(self, user_id: str, chat_id: str,
                 statuses: Sequence[str] | None = None) -> list[Memory]:
        with self.db.connection() as conn:
            return store.list_memories(conn, _scope(user_id, chat_id), statuses)

    def get(self, user_id: str, chat_id: str, memory_id: int) -> Memory:
        scope = _scope(user_id, chat_id)
        with self.db.connection() as conn:
            found = store.get_memory(conn, scope, memory_id)
        if found is None:
            raise NotFound("memory", memory_id, f"chat {scope}")
        return found

    def history(self, user_id: str, chat_id: str, memory_id: int | None = None
                ) -> list[MemoryEvent]:
        with self.db.connection() as conn:
            return store.list_events(conn, _scope(user_id, chat_id), memory_id)

    def apply(self, user_id: str, chat_id: str, ops: Sequence[Op], *, source: str = "api",
              now: datetime | None = None, dry_run: bool = False) -> ApplyResult:
        """Send ops from elsewhere (an import, an admin) through the same gate, atomically."""
        scope = _scope(user_id, chat_id)
        with self.db.connection() as conn:
            tx = conn.transaction(force_rollback=dry_run)
            with tx:
                store.ensure_chat(conn, scope)
                return self.writer.apply(conn, scope, ops, now=now or utcnow(), source=source)

    # -- recall ---------------------------------------------------------------------------

    def recall(self, user_id: str, chat_id: str, query: str, *, now: datetime | None = None,
               budget_tokens: int | None = None, record: bool = True,
               vector: np.ndarray | None = None, summaries: bool = True,
               pinned_budget: int | None = None) -> Block:
        """The memory block for the next turn: candidates of this chat only, ranked, rendered
        within ``budget_tokens``. ``record`` notes what was surfaced, for the cooldown;
        ``summaries`` adds the latest temporal summaries as their own layer;
        ``pinned_budget`` lets pinned memories use more room than the rest."""
        scope = _scope(user_id, chat_id)
        now = now or utcnow()
        if now.tzinfo is None:
            raise InvalidInput(f"now must carry a time zone, not {now.isoformat()} (naive)")
        budget = self.settings.recall.budget_tokens if budget_tokens is None else budget_tokens
        query = query.replace("\x00", "")  # PostgreSQL text cannot hold NUL
        if vector is None:
            vector = self.embedder.embed([query])[0]
        cfg = self.settings.recall
        with self.db.connection() as conn:
            probe = store.recall_probe(conn, scope, query, cfg.cooldown_recalls,
                                       cfg.summaries if summaries else 0)
            copy = self.snapshots.get(conn, scope, probe.version)
            found = (copy.candidates(vector, probe.lexemes, cfg.top_k)
                     if copy is not None else None)
            if found is None:
                found = from_scan(store.recall_candidates(conn, scope, vector, query,
                                                          cfg.top_k), vector, cfg.top_k)
            scored, left_out = score(found.columns, found.cosine, found.text_rank,
                                     probe.cooled, now, self.settings.weights, cfg)
            topics = never_topics(found.never)
            layer = [BlockItem(memory_id=None, section="summary",
                               content=redact(s["content"], topics),
                               score=0.0, notes=[f"{s['period']} of "
                                                 f"{s['start_at'].date().isoformat()}"])
                     for s in probe.summaries]
            block = build(scored, [i for i in layer if i.content], budget, self.counter,
                          pinned_budget)
            block.suppressed = sorted(topics)
            block.dropped = [Dropped(memory_id=i, reason=r) for i, r in left_out] + block.dropped
            if record:
                ids = [i.memory_id for i in block.items if i.memory_id is not None]
                spoken = [i.memory_id for i in block.items
                          if i.memory_id is not None and i.section == "speak"]
                store.insert_recall(conn, scope, at=now, query=query, memory_ids=ids,
                                    spoken_ids=spoken, tokens=block.tokens)
        return block

    # -- the whole turn ---------------------------------------------------------------------

    def compile(self, user_id: str, chat_id: str, user_message: str, *,
                now: datetime | None = None, budget_tokens: int | None = None,
                system: str | None = None, record: bool = True) -> Compiled:
        """The whole prompt for a turn as OpenAI-style messages, never over the budget: system
        prompt, memory block, temporal summaries, short-term window, the user's message."""
        budget = self.settings.context.budget_tokens if budget_tokens is None \
            else budget_tokens
        return compile_turn(self, _scope(user_id, chat_id), user_message,
                            now=now or utcnow(), budget=budget, system=system, record=record)

    def observe(self, user_id: str, chat_id: str, assistant_text: str, *,
                now: datetime | None = None) -> ApplyResult:
        """Lift the assistant's "Decision:", "Constraint:" and "Open:" lines into memories at
        once, through the gate, so they count before the nightly job runs."""
        ops = observed_ops(assistant_text)
        return self.apply(user_id, chat_id, ops, source="observe", now=now)

    def blocks(self, now: datetime | None = None) -> WindowReport:
        """The window job: create, summarise and activate block summaries for every chat."""
        return self.window.run(now or utcnow())

    # -- extraction -----------------------------------------------------------------------

    def extract_claimed(self, conn: Conn, scope: Scope, watermark: int, now: datetime
                        ) -> ChatExtraction:
        """Extract one claimed chat inside the caller's transaction: ops, then watermark."""
        # In id order, up to the first message stamped after `now`: the watermark then never
        # passes a message this run did not read, whatever order the stamps came in.
        messages = []
        for m in store.read_new_messages(conn, scope, watermark):
            if m.at > now:
                break
            messages.append(m)
        pool = self.writer.load_pool(conn, scope)
        memories = [c.memory for c in pool]
        extraction = self.extractor.extract(scope, messages, memories, now)
        result = self.writer.apply(conn, scope, extraction.ops, now=now,
                                   source=f"extract:{self.extractor.name}",
                                   handles=extraction.handles, pool=pool)
        through = messages[-1].id if messages else watermark
        store.set_watermark(conn, scope, through, now)
        return ChatExtraction(scope, len(messages), len(extraction.ops), result, through,
                              self.extractor.name, extraction.ops)

    def pending_chats(self, now: datetime) -> int:
        with self.db.connection() as conn:
            return store.count_pending_chats(conn, now)

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

    def erase_user(self, user_id: str) -> int:
        with self.db.connection() as conn:
            return store.erase_user(conn, user_id)
