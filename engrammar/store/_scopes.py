"""Scopes: the user's own scope beside each chat's, and a chat's opt-out of it.

A memory of a user-wide type (settings ``scopes.user_wide``) is kept under the reserved chat
id ``''``, which no chat can take (a chat id is 1-200 characters): the covering indexes, the
change log and the per-process copies key on (user, chat) and so serve it as they serve a
chat, and a read of it names its user like every other read. It has no row in ``chats``
(no log, no watermark): the jobs that walk the chats never meet it.
"""

from __future__ import annotations

from collections.abc import Sequence

from engrammar.models import Scope
from engrammar.store._log import _ALL_CHATS_KEY, _WRITE_KEY
from engrammar.store._memories import Conn

USER_CHAT = ""


def user_scope(user_id: str) -> Scope:
    """The scope of ``user_id``'s user-wide memories (built past the model's check: its
    chat id is the empty one no caller may give)."""
    return Scope.model_construct(user_id=user_id, chat_id=USER_CHAT)


def is_user_scope(scope: Scope) -> bool:
    return scope.chat_id == USER_CHAT


def lock_user_scope(conn: Conn, user_id: str) -> None:
    """The user scope's write lock until the transaction ends. Taken after a chat's own
    (every writer does so in that order), so two chats of one user wait for each other
    only while both write user-wide memories."""
    conn.execute(
        f"SELECT pg_advisory_xact_lock_shared({_ALL_CHATS_KEY}),"
        f" pg_advisory_xact_lock({_WRITE_KEY})", {"u": user_id, "c": USER_CHAT})


def chat_private(conn: Conn, scope: Scope) -> bool:
    """Whether the chat opted out of the user's scope (an unknown chat has not)."""
    row = conn.execute("SELECT private FROM chats WHERE user_id = %s AND chat_id = %s",
                       (scope.user_id, scope.chat_id)).fetchone()
    return bool(row[0]) if row else False


def set_private(conn: Conn, scope: Scope, private: bool) -> None:
    conn.execute(
        "INSERT INTO chats (user_id, chat_id, private) VALUES (%s, %s, %s)"
        " ON CONFLICT (user_id, chat_id) DO UPDATE SET private = EXCLUDED.private",
        (scope.user_id, scope.chat_id, private))


def private_chats(conn: Conn, user_id: str) -> list[str]:
    return [r[0] for r in conn.execute(
        "SELECT chat_id FROM chats WHERE user_id = %s AND private ORDER BY chat_id",
        (user_id,)).fetchall()]


def scopes_of(scope: Scope, shared: bool) -> Sequence[Scope]:
    """The scopes a chat reads: its own, then the user's when it shares."""
    return (scope, user_scope(scope.user_id)) if shared else (scope,)
