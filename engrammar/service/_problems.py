"""Errors as RFC 9457 problem documents, and the cap on request bodies.

Every error the service answers is ``application/problem+json``: ``type`` (a URN naming the
library error class), ``title`` (the class), ``status``, ``detail`` (the library's message,
ids as the caller knows them), ``error`` (the class again, for clients that switch on it),
``id`` (the id of what failed: the memory, chat or user named by the request) and
``instance`` (the request's path)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from engrammar import errors
from engrammar.service._keys import Principal

MEDIA = "application/problem+json"

# The status each library error answers with; a subclass takes its nearest ancestor's.
STATUS: dict[type[errors.Error], int] = {
    errors.NotFound: 404,
    errors.InvalidInput: 422,
    errors.DatabaseError: 503,
    errors.LLMError: 502,
    errors.ConfigError: 500,
    errors.Error: 500,
}


class Problem(BaseModel):
    """An RFC 9457 problem document."""

    type: str
    title: str
    status: int
    detail: str
    error: str
    id: str | None = None
    instance: str | None = None


class Refused(Exception):
    """An error the service itself answers (no key, wrong scope, body too large)."""

    def __init__(self, status: int, error: str, detail: str,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.error = error
        self.detail = detail
        self.headers = headers


def problem(request: Request, status: int, error: str, detail: str,
            ident: object = None, headers: dict[str, str] | None = None) -> JSONResponse:
    if ident is None:  # the innermost id the path names
        params = request.path_params
        ident = next((params[k] for k in ("memory_id", "name", "chat_id", "user_id")
                      if k in params), None)
    body = Problem(type=f"urn:engrammar:error:{error}", title=error, status=status,
                   detail=detail, error=error, id=None if ident is None else str(ident),
                   instance=request.url.path)
    return JSONResponse(body.model_dump(), status_code=status, media_type=MEDIA,
                        headers=headers)


def _principal(request: Request) -> Principal | None:
    found = getattr(request.state, "principal", None)
    return found if isinstance(found, Principal) else None


async def _library_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, errors.Error)
    status = next(code for cls, code in STATUS.items() if isinstance(exc, cls))
    detail = str(exc)
    ident = getattr(exc, "ident", None) if isinstance(exc, errors.NotFound) else None
    who = _principal(request)
    if who is not None:
        detail = who.scrub(detail)
        ident = None if ident is None else who.scrub(str(ident))
    if status >= 500 and status != 503:
        detail = f"{type(exc).__name__}: the service could not answer"
    return problem(request, status, type(exc).__name__, detail, ident)


async def _refused(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, Refused)
    return problem(request, exc.status, exc.error, exc.detail, headers=exc.headers)


async def _invalid_request(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = "; ".join(
        f"{'.'.join(str(p) for p in e.get('loc', ())) or 'request'}: {e.get('msg', '')}"
        for e in exc.errors()[:5])
    return problem(request, 422, "InvalidInput", problems)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    names = {404: "NotFound", 405: "MethodNotAllowed", 413: "TooLarge", 401: "Unauthorized"}
    return problem(request, exc.status_code, names.get(exc.status_code, "HTTPError"),
                   str(exc.detail), headers=getattr(exc, "headers", None))


def install(app: FastAPI) -> None:
    app.add_exception_handler(errors.Error, _library_error)
    app.add_exception_handler(Refused, _refused)
    app.add_exception_handler(RequestValidationError, _invalid_request)
    app.add_exception_handler(HTTPException, _http_error)


# The problem responses every route documents (so generated clients know them).
def responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    described = {400: "Malformed request", 401: "No key, or not a live one",
                 403: "The key's scopes do not allow this",
                 404: "Not found (or another tenant's)", 413: "Request body too large",
                 422: "Invalid input", 503: "Database unavailable"}
    return {code: {"model": Problem, "description": described[code],
                   "content": {MEDIA: {}}} for code in codes}


class BodyCap:
    """ASGI middleware: a request body over ``limit`` bytes (by its Content-Length, or
    as it streams in) is answered 413 and never read further."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.limit):
            await self._too_large(scope, send)
            return
        seen = 0
        over = started = False

        async def counted() -> Message:
            nonlocal seen, over
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    over = True
                    raise Refused(413, "TooLarge",
                                  f"the request body is over {self.limit} bytes")
            return message

        async def sent(message: Message) -> None:
            nonlocal started
            if over and not started:
                return  # the app's answer to a body it could not read (a 400): ours is 413
            started = started or message["type"] == "http.response.start"
            await send(message)

        # A body sent in chunks with no length: cut off as it passes the cap, whatever the
        # app makes of the failed read, and answered 413 once the app is done with it.
        try:
            await self.app(scope, counted, sent)
        except Exception:
            if not over or started:
                raise
        if over and not started:
            await self._too_large(scope, send)

    async def _too_large(self, scope: Scope, send: Send) -> None:
        request = Request(scope)
        response = problem(request, 413, "TooLarge",
                           f"the request body is over {self.limit} bytes")
        await response(scope, _nothing, send)


async def _nothing() -> Message:
    return {"type": "http.disconnect"}
