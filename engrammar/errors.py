"""One exception root, :class:`Error`; every error the library raises derives from it."""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

C = TypeVar("C", bound=type)


class Error(Exception):
    """Root of every error raised by ``engrammar``."""


class ConfigError(Error):
    """The configuration cannot work (bad setting, missing package, wrong dimension)."""


class DatabaseError(Error):
    """The database is unreachable or refused an operation."""


class NotFound(Error):
    """A memory, chat or fixture that was named does not exist in the given scope."""

    def __init__(self, what: str, ident: object, scope: str = "") -> None:
        self.what = what
        self.ident = ident
        where = f" in {scope}" if scope else ""
        super().__init__(f"{what} {ident!s} not found{where}")


class InvalidInput(Error):
    """Input the library refuses: an oversized message, an unknown role, a malformed op."""


class LLMError(Error):
    """The model call failed or its answer could not be used."""

    def __init__(self, message: str, *, chat_id: str | None = None) -> None:
        self.chat_id = chat_id
        prefix = f"chat {chat_id}: " if chat_id else ""
        super().__init__(prefix + message)


class MalformedOutput(LLMError):
    """The model answered, but not with JSON that fits the response model."""


class Refusal(LLMError):
    """The model refused to answer."""


def _translated(name: str, exc: Exception) -> Error | None:
    """The library's error for a driver's or validator's exception, or None for one that
    is not theirs (a bug, which should surface as it is)."""
    # Imported here: the foundation of the layers knows no driver at import time.
    import psycopg
    from pydantic import ValidationError

    if isinstance(exc, psycopg.DataError | psycopg.IntegrityError):
        # A value the database cannot hold (out of range, malformed) or a constraint it
        # refuses: what the caller sent, not a database that is down.
        return InvalidInput(f"{name}: the database refused a value: {_first_line(exc)}")
    if isinstance(exc, psycopg.Error):
        return DatabaseError(f"{name}: {type(exc).__name__}: {_first_line(exc)}")
    if isinstance(exc, OverflowError):
        # A time or number the caller sent that date arithmetic cannot carry (a `now` a day
        # from year 9999): the caller's value, not a bug of ours.
        return InvalidInput(f"{name}: a value out of range: {exc}")
    if isinstance(exc, ValidationError):
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}"
                             for e in exc.errors()[:3])
        return InvalidInput(f"{name}: {problems}")
    return None


def chat_fault(exc: BaseException) -> bool:
    """Whether ``exc``, raised while a job worked on one chat, is that chat's (a value its
    rows hold that something cannot take, a model's bad answer, a bug its data reaches)
    rather than the job's (a database that is down or unreachable). A chat's fault fails
    that chat, reported with its id, and the job goes on; the job's ends the run."""
    if not isinstance(exc, Exception):
        return False  # KeyboardInterrupt, SystemExit: the process is stopping
    import psycopg
    from psycopg_pool import PoolTimeout

    down = (psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout)
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, down):
            return False
        cause = cause.__cause__
    return True


@contextlib.contextmanager
def chat_contained(failures: list[dict[str, Any]], entry: dict[str, Any]) -> Iterator[None]:
    """Run a job's work on one chat so that the chat's own fault (``chat_fault``) is
    appended to ``failures`` as ``entry`` (the chat's ``Scope.report_entry()``) with the
    error and its kind, and the job goes on with the next chat; any other error, a database
    that is down, ends the run. The work of the block is rolled back by its own
    transaction."""
    try:
        yield
    except Exception as exc:
        if not chat_fault(exc):
            raise
        failures.append({**entry, "error": str(exc), "kind": type(exc).__name__})


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def guarded(cls: C) -> C:
    """Wrap every public method of ``cls`` (a class decorator) so that driver and validation
    errors leave it as :class:`Error` subclasses, with the original as ``__cause__``."""
    # Inherited ones too: a class may gather its calls from several (the client does).
    for name in dir(cls):
        method = inspect.getattr_static(cls, name)
        if name.startswith("_") or not inspect.isfunction(method):
            continue
        setattr(cls, name, _guarded_method(name, method))
    return cls


def _guarded_method(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except Error:
            raise
        except Exception as exc:
            translated = _translated(name, exc)
            if translated is None:
                raise
            raise translated from exc

    return call
