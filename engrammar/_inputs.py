"""The library's edge: every value a caller (the API, the CLI, an import file, a model's
answer) hands in is checked here, once, and refused with :class:`InvalidInput` naming what
was wrong. Nothing past this point sees a NUL, a lone surrogate, a naive datetime, an id
PostgreSQL cannot hold or a text over its cap.

The datetime rule: every datetime must carry a time zone; a naive one is refused. Where
times arrive as text (the CLI's ``--now``/``--at``, an import file, a model's due dates) a
time written without a zone is UTC.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from engrammar.errors import InvalidInput
from engrammar.models import Op, Scope, check_text

# PostgreSQL's bigint: message and memory ids.
MAX_ID = 2**63 - 1


def utcnow() -> datetime:
    return datetime.now(UTC)


def scope(user_id: Any, chat_id: Any) -> Scope:
    """A chat's scope from two ids: strings of 1-200 characters, no NUL, valid Unicode."""
    for name, value in (("user_id", user_id), ("chat_id", chat_id)):
        if not isinstance(value, str):
            raise InvalidInput(f"{name} must be a string, not {type(value).__name__}")
        check_text(value, name)
    try:
        return Scope(user_id=user_id, chat_id=chat_id)
    except ValidationError as exc:
        raise InvalidInput(f"bad scope {user_id!r}/{chat_id!r}: "
                           f"{_first(exc)}") from None


def user(user_id: Any) -> str:
    if not isinstance(user_id, str) or not 1 <= len(user_id) <= 200:
        raise InvalidInput(f"user_id must be a string of 1-200 characters, not {user_id!r}")
    check_text(user_id, "user_id")
    return user_id


def aware(value: Any, what: str = "now") -> datetime:
    """``value`` if it is a datetime with a time zone; now (UTC) when None."""
    if value is None:
        return utcnow()
    if not isinstance(value, datetime):
        raise InvalidInput(f"{what} must be a datetime, not {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidInput(f"{what} must carry a time zone, not {value.isoformat()} (naive)")
    return value


def text(value: Any, what: str, limit: int | None = None) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be a string, not {type(value).__name__}")
    check_text(value, what)
    if limit is not None and len(value) > limit:
        raise InvalidInput(f"{what} is {len(value)} characters; the limit is {limit}")
    return value


def count(value: Any, what: str, low: int = 0, high: int = MAX_ID) -> int:
    """An integer in [low, high] (a limit, an id to page from)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{what} must be an integer, not {type(value).__name__}")
    if not low <= value <= high:
        raise InvalidInput(f"{what} must be between {low} and {high}, not {value}")
    return value


def ops(values: Any, where: Scope, max_chars: int) -> list[Op]:
    """Ops to apply: each an :class:`Op` whose texts are clean, whose content is at most
    ``max_chars`` (MEMORY_MAX_MEMORY_CHARS), whose due date is aware and whose ids fit."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise InvalidInput(f"ops for chat {where} must be a list of Op")
    checked: list[Op] = []
    for i, op in enumerate(values):
        what = f"op {i + 1} for chat {where}"
        if not isinstance(op, Op):
            raise InvalidInput(f"{what} is a {type(op).__name__}, not an Op")
        text(op.content, f"{what}: content", max_chars)
        for name in ("target", "slot", "reason"):
            field = getattr(op, name)
            if field is not None:
                text(field, f"{what}: {name}", 1000)
        if op.due is not None:
            aware(op.due, f"{what}: due")
        for name in ("evidence", "sources"):
            for ident in getattr(op, name):
                count(ident, f"{what}: {name} id", 0, MAX_ID)
        checked.append(op)
    return checked


def _first(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error["loc"])
    return f"{where}: {error['msg']}" if where else str(error["msg"])
