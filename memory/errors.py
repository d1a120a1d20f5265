"""One exception root, :class:`Error`; every error the library raises derives from it."""

from __future__ import annotations


class Error(Exception):
    """Root of every error raised by ``memory``."""


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
