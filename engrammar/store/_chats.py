"""A chat as a thing of its own: whether it exists, when it was made, its settings, and the
posts made under an idempotency key."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from engrammar.models import Scope
from engrammar.store._memories import Conn


def open_chat(conn: Conn, scope: Scope) -> tuple[bool, datetime]:
    """Register the chat if it is new: (whether it was new, when it was made)."""
    row = conn.execute(
        "WITH made AS (INSERT INTO chats (user_id, chat_id) VALUES (%(u)s, %(c)s)"
        " ON CONFLICT DO NOTHING RETURNING created_at)"
        " SELECT true, created_at FROM made UNION ALL"
        " SELECT false, created_at FROM chats WHERE user_id = %(u)s AND chat_id = %(c)s"
        " LIMIT 1",
        {"u": scope.user_id, "c": scope.chat_id}).fetchone()
    assert row is not None
    return bool(row[0]), row[1]


def chat_created_at(conn: Conn, scope: Scope) -> datetime | None:
    row = conn.execute("SELECT created_at FROM chats WHERE user_id = %s AND chat_id = %s",
                       (scope.user_id, scope.chat_id)).fetchone()
    return None if row is None else row[0]


def user_exists(conn: Conn, user_id: str) -> bool:
    return conn.execute("SELECT 1 FROM chats WHERE user_id = %s LIMIT 1",
                        (user_id,)).fetchone() is not None


def chat_overrides(conn: Conn, scope: Scope) -> dict[str, Any]:
    row = conn.execute(
        "SELECT overrides FROM chat_settings WHERE user_id = %s AND chat_id = %s",
        (scope.user_id, scope.chat_id)).fetchone()
    return dict(row[0]) if row else {}


def set_chat_overrides(conn: Conn, scope: Scope, overrides: dict[str, Any]) -> None:
    conn.execute(
        "INSERT INTO chat_settings (user_id, chat_id, overrides) VALUES (%s, %s, %s)"
        " ON CONFLICT (user_id, chat_id) DO UPDATE"
        " SET overrides = EXCLUDED.overrides, updated_at = now()",
        (scope.user_id, scope.chat_id, Jsonb(overrides)))


# -- posts under an idempotency key -----------------------------------------------------------

def claim_post(conn: Conn, scope: Scope, key: str, request_hash: str
               ) -> tuple[str, Any] | None:
    """Claim ``key`` for this post inside the caller's transaction: None when it is new (the
    caller stores the messages, then :func:`finish_post`), else the first post's request
    hash and answer. A retry racing the first post waits here on the key's row until the
    first commits (or rolls back, and then it claims the key itself)."""
    made = conn.execute(
        "INSERT INTO idempotency_keys (user_id, chat_id, key, request_hash, response)"
        " VALUES (%s, %s, %s, %s, 'null') ON CONFLICT DO NOTHING RETURNING 1",
        (scope.user_id, scope.chat_id, key, request_hash)).fetchone()
    if made is not None:
        return None
    row = conn.execute(
        "SELECT request_hash, response FROM idempotency_keys"
        " WHERE user_id = %s AND chat_id = %s AND key = %s",
        (scope.user_id, scope.chat_id, key)).fetchone()
    assert row is not None
    return str(row[0]), row[1]


def finish_post(conn: Conn, scope: Scope, key: str, response: Any) -> None:
    conn.execute(
        "UPDATE idempotency_keys SET response = %s"
        " WHERE user_id = %s AND chat_id = %s AND key = %s",
        (Jsonb(response), scope.user_id, scope.chat_id, key))
