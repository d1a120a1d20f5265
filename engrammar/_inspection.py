"""The client's read calls for looking at the store (the inspector): chats, memories by
filter, history pages, the gate's rejections, job runs and audited prompts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engrammar import _inputs as inputs
from engrammar import store
from engrammar._parts import MAX_PAGE, Parts
from engrammar.models import Memory, MemoryEvent


class Inspection(Parts):
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
