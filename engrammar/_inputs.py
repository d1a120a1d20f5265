"""The library's edge: every value a caller (the API, the CLI, an import file, a model's
answer) hands in is checked here, once, and refused with :class:`InvalidInput` naming what
was wrong. Nothing past this point sees a NUL, a lone surrogate, a naive datetime, an id
PostgreSQL cannot hold or a text over its cap.

The datetime rule: every datetime must carry a time zone; a naive one is refused. Where
times arrive as text (the CLI's ``--now``/``--at``, an import file, a model's due dates) a
time written without a zone is UTC.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from engrammar.errors import InvalidInput
from engrammar.models import Op, Scope, check_text

# PostgreSQL's bigint: message and memory ids.
MAX_ID = 2**63 - 1
# PostgreSQL's integer: token budgets, counts and pair numbers.
MAX_INT = 2**31 - 1
# A user or chat id: short, printable, one line.
MAX_IDENT = 200
# Categories no id may hold: controls (NUL, \t, \n, \x85...), line and paragraph
# separators, and unassigned or surrogate code points.
_UNPRINTABLE = frozenset({"Cc", "Zl", "Zp", "Cs", "Cn"})


def utcnow() -> datetime:
    return datetime.now(UTC)


def ident(value: Any, what: str) -> str:
    """An id (a user's, a chat's): a string of 1-200 characters with no control character
    and no line separator, since ids are printed in reports, keys and prompts."""
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be a string, not {type(value).__name__}")
    if not 1 <= len(value) <= MAX_IDENT:
        raise InvalidInput(f"{what} must be 1-{MAX_IDENT} characters, not {len(value)}")
    check_text(value, what)
    for i, ch in enumerate(value):
        if unicodedata.category(ch) in _UNPRINTABLE:
            raise InvalidInput(f"{what} holds a control character or line separator "
                               f"(U+{ord(ch):04X}) at {i}")
    return value


def scope(user_id: Any, chat_id: Any) -> Scope:
    """A chat's scope from two ids (:func:`ident`)."""
    ident(user_id, "user_id")
    ident(chat_id, "chat_id")
    try:
        return Scope(user_id=user_id, chat_id=chat_id)
    except ValidationError as exc:
        raise InvalidInput(f"bad scope {user_id!r}/{chat_id!r}: "
                           f"{_first(exc)}") from None


def user(user_id: Any) -> str:
    return ident(user_id, "user_id")


def aware(value: Any, what: str = "now") -> datetime:
    """``value`` if it is a datetime with a time zone; now (UTC) when None."""
    if value is None:
        return utcnow()
    if not isinstance(value, datetime):
        raise InvalidInput(f"{what} must be a datetime, not {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidInput(f"{what} must carry a time zone, not {value.isoformat()} (naive)")
    return moment(value, what)


# Days kept clear of Python's edges (years 1 and 9999), so a job's arithmetic on a time
# (the day after, the week it starts) stays representable.
_EDGE_DAYS = 62


def moment(value: datetime, what: str) -> datetime:
    """An aware datetime that PostgreSQL and Python both hold in UTC, with a margin for the
    jobs' calendar arithmetic: year 1 at +05:00 is year 0 in UTC, which Python cannot
    represent; 9999-12-31 has no next day."""
    try:
        utc = value.astimezone(UTC)
        low = datetime.min.replace(tzinfo=UTC)
        high = datetime.max.replace(tzinfo=UTC)
        if (utc - low).days < _EDGE_DAYS or (high - utc).days < _EDGE_DAYS:
            raise OverflowError
    except OverflowError:
        raise InvalidInput(f"{what} {value.isoformat()} is too close to the limits of years "
                           "1-9999 in UTC") from None
    return value


def stamp(value: Any, what: str) -> datetime:
    """A time written as text (an import, the CLI): ISO 8601, a time without a zone is UTC;
    never infinity."""
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be an ISO 8601 time, not {type(value).__name__}")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidInput(f"{what} {value[:40]!r} is not an ISO 8601 time") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return moment(parsed, what)


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


def number(value: Any, what: str, low: float, high: float) -> float:
    """A finite real in [low, high] (a confidence, a weight)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInput(f"{what} must be a number, not {type(value).__name__}")
    if not math.isfinite(value) or not low <= value <= high:
        raise InvalidInput(f"{what} must be between {low} and {high}, not {value}")
    return float(value)


def budget(value: Any, what: str) -> int:
    """A token budget: an integer a PostgreSQL integer column holds (0 is refused, with
    its reason, where the budget is spent)."""
    return count(value, what, 0, MAX_INT)


def vector(value: Any, dim: int, what: str = "vector") -> Any:
    """A query vector: ``dim`` finite numbers (a numpy array or a sequence of floats)."""
    import numpy as np  # numpy is heavy and only this check needs it here

    try:
        array = np.asarray(value, dtype=np.float32)
    except (TypeError, ValueError):
        raise InvalidInput(f"{what} must be {dim} numbers") from None
    if array.shape != (dim,):
        raise InvalidInput(f"{what} must be {dim} numbers, not shape {array.shape}")
    if not np.isfinite(array).all():
        raise InvalidInput(f"{what} holds a NaN or an infinity")
    return array


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
