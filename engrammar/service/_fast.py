"""The turn's hot routes (recall, context) answered without FastAPI's per-request work.

FastAPI resolves a route's dependencies, validates its path and body through its own
layers and wraps the endpoint for every request: ~0.75 ms of the event loop's CPU per
recall on the 2-core bench machine, as much as the rest of the HTTP path together. A
:class:`Shortcut` sits in front of one such route, at the same path: a call that is
well-formed in every way (a JSON body the route's model accepts, ids within their
lengths, a key this process authenticated a moment ago whose scopes allow the route) it
answers itself, with the same library call and the same body. Anything else (no key, a
key to look up, a wrong scope or method, a malformed body) it hands to the route, with
the body it read, so every refusal and error is the route's own answer, byte for byte;
and the route alone stays in the OpenAPI document.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from engrammar.aio import AsyncClient
from engrammar.service._chats import CHAT, context_answer, recall_answer
from engrammar.service._keys import MAX_USER_ID, Keys, Principal
from engrammar.service._schemas import MAX_CHAT_ID, ContextIn, RecallIn

Call = Callable[[AsyncClient, str, str, Any], Awaitable[Response]]
# The scope's mark of a request a shortcut handed back to the router.
PASSED = "engrammar.shortcut_passed"


def _principal(request: Request) -> Principal | None:
    """The caller's principal when its bearer token is one this process authenticated
    within the keys' ttl (service._auth.principal does the rest); else None."""
    header = request.headers.get("authorization")
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token:
        return None
    keys: Keys = request.app.state.keys
    hit, found = keys.cached(token)
    return found if hit else None


class Shortcut:
    """An ASGI endpoint in front of a route: the calls it can answer as the route would,
    it answers with ``call(memory, user, chat_id, body)``; the others go back to
    ``router`` (the app's), which then passes this shortcut by."""

    def __init__(self, body: type[BaseModel], scope: str, call: Call) -> None:
        self.body = body
        self.scope = scope
        self.call = call
        self.router: ASGIApp | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        answer = await self._answer(request) if scope["method"] == "POST" else None
        if answer is not None:
            await answer(scope, receive, send)
            return
        assert self.router is not None, "shortcuts() sets the router"
        read: bytes | None = getattr(request, "_body", None)

        async def replay() -> Message:  # the body this read, then the connection's own
            nonlocal read
            if read is None:
                return await receive()
            message: Message = {"type": "http.request", "body": read, "more_body": False}
            read = None
            return message

        scope[PASSED] = True
        await self.router(scope, replay, send)

    async def _answer(self, request: Request) -> Response | None:
        who = _principal(request)
        params = request.path_params
        user_id, chat_id = params["user_id"], params["chat_id"]
        if (who is None or not who.can(self.scope) or len(user_id) > MAX_USER_ID
                or len(chat_id) > MAX_CHAT_ID
                or request.headers.get("content-type") != "application/json"):
            return None
        raw = await request.body()  # over the body cap: refused there (413), as the route
        try:
            body = self.body.model_validate(json.loads(raw))
        except (ValueError, ValidationError):  # the route says what is wrong with it
            return None
        # What service._auth.principal leaves for the error handlers (ids scrubbed).
        request.state.principal = who
        memory: AsyncClient = request.app.state.memory
        return await self.call(memory, who.user(user_id), chat_id, body)


class _ShortcutRoute(Route):
    """Every method at the path, but no request a shortcut already handed back."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope.get(PASSED):
            return Match.NONE, {}
        return super().matches(scope)


def shortcuts(router: ASGIApp) -> list[Route]:
    """The routes in front of service._chats' recall and context (for ``router``, the
    app's, to put first)."""
    found: list[Route] = []
    for name, body, scope, call in (("recall", RecallIn, "read", recall_answer),
                                    ("context", ContextIn, "read", context_answer)):
        shortcut = Shortcut(body, scope, call)
        shortcut.router = router
        found.append(_ShortcutRoute(f"{CHAT}/{name}", shortcut, name=f"{name}_shortcut"))
    return found
