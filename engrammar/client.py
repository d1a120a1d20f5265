"""The facade an application uses: record after a turn, recall before the next one, and the
write path the jobs drive. Everything it needs is passed in or built from settings."""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
from engrammar.models import Memory, MemoryEvent, Message, Op, Role
from engrammar.recall._assembler import Assembler, Compiled
from engrammar.recall._block import Block
from engrammar.recall._logsearch import LogCopies
from engrammar.recall._snapshot import Snapshots
from engrammar.recall._window import Window
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
                             self.settings.max_memory_chars)
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
               at: datetime | None = None) -> int:
        """Append one message to the chat's log; returns its id. One insert."""
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
        with self.db.connection() as conn:
            return store.insert_message(conn, scope, role_.value, content, at)

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

    def memories(self, user_id: str, chat_id: str,
                 statuses: Sequence[str] | None = None) -> list[Memory]:
        scope = inputs.scope(user_id, chat_id)
        if statuses is not None:
            statuses = [inputs.text(s, "status") for s in statuses]
        with self.db.connection() as conn:
            return store.list_memories(conn, scope, statuses)

    def get(self, user_id: str, chat_id: str, memory_id: int) -> Memory:
        scope = inputs.scope(user_id, chat_id)
        inputs.count(memory_id, "memory id")
        with self.db.connection() as conn:
            found = store.get_memory(conn, scope, memory_id)
        if found is None:
            raise NotFound("memory", memory_id, f"chat {scope}")
        return found

    def history(self, user_id: str, chat_id: str, memory_id: int | None = None
                ) -> list[MemoryEvent]:
        scope = inputs.scope(user_id, chat_id)
        if memory_id is not None:
            inputs.count(memory_id, "memory id")
        with self.db.connection() as conn:
            return store.list_events(conn, scope, memory_id)

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
               pinned_budget: int | None = None) -> Block:
        """The memory block for the next turn: candidates of this chat only, ranked, rendered
        within ``budget_tokens``. ``record`` notes what was surfaced, for the cooldown;
        ``summaries`` adds the latest temporal summaries as their own layer;
        ``pinned_budget`` lets pinned memories use more room than the rest."""
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
                                     pinned_budget=pinned_budget)

    # -- the whole turn ---------------------------------------------------------------------

    def compile(self, user_id: str, chat_id: str, user_message: str, *,
                now: datetime | None = None, budget_tokens: int | None = None,
                system: str | None = None, record: bool = True) -> Compiled:
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
                                      system=system, record=record)

    def observe(self, user_id: str, chat_id: str, assistant_text: str, *,
                now: datetime | None = None) -> ApplyResult:
        """Lift the assistant's "Decision:", "Constraint:" and "Open:" lines into memories at
        once, through the gate, so they count before the nightly job runs."""
        inputs.scope(user_id, chat_id)
        inputs.text(assistant_text, f"assistant text for chat {user_id}/{chat_id}",
                    self.settings.max_message_chars)
        ops = observed_ops(assistant_text)
        return self.apply(user_id, chat_id, ops, source="observe", now=now)

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
