"""Who calls: the FastAPI dependencies that give a route its :class:`Principal`.

``principal`` reads ``Authorization: Bearer <token>`` and answers 401 for no key or one
that is not live; ``reader``, ``writer`` and ``admin`` add the scope check (403). A route
then reaches users only through ``Principal.user``, which puts the tenant's prefix on the
id: another tenant's user is, to this key, a user that does not exist (404, never 403).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from engrammar.aio import AsyncClient
from engrammar.service._keys import Keys, Principal
from engrammar.service._problems import Refused

bearer = HTTPBearer(auto_error=False, description="An API key: `engram keys create`")
_CHALLENGE = {"WWW-Authenticate": "Bearer"}


async def memory(request: Request) -> AsyncClient:
    """The app's :class:`AsyncClient` (create_app put it on the app's state). Async, as
    FastAPI runs a plain function dependency in a worker thread: a hop per request."""
    client: AsyncClient = request.app.state.memory
    return client


async def principal(request: Request,
                    credentials: Annotated[HTTPAuthorizationCredentials | None,
                                           Depends(bearer)]) -> Principal:
    """The caller's principal from its bearer token; 401 without a live key."""
    if credentials is None:
        raise Refused(401, "Unauthorized", "an API key is required: Authorization: Bearer "
                      "<key>", _CHALLENGE)
    keys: Keys = request.app.state.keys
    token = credentials.credentials
    hit, found = keys.cached(token)
    if not hit:
        found = await request.app.state.memory.run(lambda: keys.authenticate(token))
    if found is None:
        raise Refused(401, "Unauthorized", "the API key is not a live key", _CHALLENGE)
    request.state.principal = found
    return found


def requires(scope: str) -> Callable[..., Awaitable[Principal]]:
    """A dependency: the principal, if its key grants ``scope``; 403 if it does not. It
    calls ``principal`` itself rather than depend on it: one dependency fewer for FastAPI
    to resolve on every request."""

    async def check(request: Request,
                    credentials: Annotated[HTTPAuthorizationCredentials | None,
                                           Depends(bearer)]) -> Principal:
        who = await principal(request, credentials)
        if not who.can(scope):
            raise Refused(403, "Forbidden", f"this key has no {scope} scope")
        return who

    check.__name__ = f"requires_{scope}"
    return check


Reader = Annotated[Principal, Depends(requires("read"))]
Writer = Annotated[Principal, Depends(requires("write"))]
Admin = Annotated[Principal, Depends(requires("admin"))]
Memory = Annotated[AsyncClient, Depends(memory)]
