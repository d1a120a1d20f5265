"""The client's calls on chats: get or create one, its window settings and diagnostics,
and whether it shares the user's scope."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from engrammar import _inputs as inputs
from engrammar import store
from engrammar._parts import Parts
from engrammar.errors import InvalidInput, NotFound
from engrammar.models import ChatSettings
from engrammar.recall._window import coverage_problems

# What a chat may override of the window's settings (models.ChatSettings).
CHAT_SETTINGS = ("raw_pairs", "block_pairs", "summaries", "trigger_offset")


class ChatCalls(Parts):
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
        unknown = set(changes) - set(CHAT_SETTINGS)
        if unknown:
            raise InvalidInput(f"not chat settings: {sorted(unknown)} (use "
                               f"{', '.join(CHAT_SETTINGS)})")
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
                "coverage": [u.to_json() for u in units],
                "problems": coverage_problems(units, pairs)}

