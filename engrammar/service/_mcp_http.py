"""The MCP tools over streamable HTTP, behind the service's API keys.

:class:`McpEndpoint` is an ASGI app for one path (the service routes ``/mcp`` to it). Each
request must carry ``Authorization: Bearer <key>``; without a live key it gets a 401
problem document and the MCP server never sees it. With one, the request's
:class:`Principal` rides in the ASGI scope to the tools, which map every ``user_id`` into
the key's tenant exactly as the HTTP routes do (:meth:`Principal.user`), read with a read
key and change memories only with a write key.

The transport is stateless and answers in JSON: no MCP session outlives its request, so
any worker of a multi-process server can answer any request, and every request is
authenticated on its own (a session id is never a credential).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from engrammar.client import Client
from engrammar.service._keys import Keys, Principal
from engrammar.service._mcp import Access, Denied, build_mcp

# The methods of the streamable HTTP transport, all on one path.
METHODS = ["GET", "POST", "DELETE"]
# Where the caller's principal rides in the ASGI scope, from the endpoint to the tools.
PRINCIPAL = "engrammar.principal"
_CHALLENGE = (b"www-authenticate", b"Bearer")


def principal_access(ctx: Context) -> Access:
    """The access of the key that made this request (the endpoint put it in the scope)."""
    request = ctx.request_context.request
    scope: dict[str, Any] = getattr(request, "scope", {})
    who = scope.get(PRINCIPAL)
    if not isinstance(who, Principal):  # unreachable through McpEndpoint: refuse anyway
        raise Denied("no authenticated caller")
    return Access(stored=who.user, can_write=who.can("write"))


def _bearer(scope: Scope) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            kind, _, token = value.decode("latin-1").partition(" ")
            token = token.strip()
            return token if kind.lower() == "bearer" and token else None
    return None


async def _refuse(send: Send, status: int, title: str, detail: str) -> None:
    body = json.dumps({"type": "about:blank", "title": title, "status": status,
                       "detail": detail}).encode()
    headers = [(b"content-type", b"application/problem+json"),
               (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append(_CHALLENGE)
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class McpEndpoint:
    """The MCP server on ``client``, for callers ``authenticate`` recognises.

    ``authenticate(token)`` gives the key's :class:`Principal`, or None for a token that is
    no live key; it may block (a database read): it runs in a worker thread. Run
    :meth:`lifespan` around serving (the service's lifespan does): it starts the task group
    the transport's requests run in."""

    def __init__(self, client: Client, authenticate: Callable[[str], Principal | None],
                 *, max_body: int = 1 << 20) -> None:
        self.server: MCPServer = build_mcp(client, principal_access)
        # Builds the session manager (the Starlette app it returns is not used: the
        # service routes one path here and owns the lifespan). The SDK's DNS-rebinding
        # check (Host and Origin against a list) is off: it would refuse every host name
        # the service is deployed under, and a page a rebinding attack serves cannot send
        # the bearer key every request needs.
        self.server.streamable_http_app(
            stateless_http=True, json_response=True, max_request_body_size=max_body,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
        self.authenticate = authenticate

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        async with self.server.session_manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            raise RuntimeError(f"the MCP endpoint serves HTTP, not {scope['type']}")
        token = _bearer(scope)
        if token is None:
            await _refuse(send, 401, "Unauthorized",
                          "an API key is required: Authorization: Bearer <key>")
            return
        who = await anyio.to_thread.run_sync(self.authenticate, token)
        if who is None:
            await _refuse(send, 401, "Unauthorized", "the API key is not a live key")
            return
        await self.server.session_manager.handle_request({**scope, PRINCIPAL: who}, receive,
                                                         send)


def mcp_app(client: Client, keys: Keys, *, max_body: int = 1 << 20) -> Starlette:
    """The MCP endpoint alone at ``/mcp`` (``engram mcp --http``), for a deployment that
    wants the tools and not the REST API; ``engram serve`` mounts the same endpoint."""
    endpoint = McpEndpoint(client, keys.authenticate, max_body=max_body)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with endpoint.lifespan():
            yield

    return Starlette(routes=[Route("/mcp", endpoint, methods=METHODS)], lifespan=lifespan)
