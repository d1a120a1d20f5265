"""The ASGI application: every router, the error handlers and the body cap, on one
:class:`AsyncClient` over the caller's :class:`Client`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from starlette.routing import Route

from engrammar import __version__
from engrammar.aio import AsyncClient
from engrammar.client import Client
from engrammar.service import _chats, _fast, _memories, _problems, _users
from engrammar.service._keys import Keys
from engrammar.service._mcp_http import METHODS, McpEndpoint
from engrammar.service.inspector import create_inspector

DESCRIPTION = """Typed long-term memory of each user, for LLM chat products.

Every route under `/v1` takes an API key (`Authorization: Bearer <key>`, made with
`engram keys create --tenant T`). A key reaches only its tenant's users: any other user id
is a 404. Errors are RFC 9457 problem documents (`application/problem+json`).

`/mcp` serves the same memory to agents as an MCP server (streamable HTTP, the same keys):
tools remember, recall, list_memories, forget and memory_history."""


ROUTERS = (_users.probes, _chats.router, _memories.router, _users.users, _users.jobs)


def _app(lifespan: Any = None) -> FastAPI:
    app = FastAPI(title="engrammar", version=__version__, description=DESCRIPTION,
                  lifespan=lifespan, docs_url="/docs", redoc_url=None,
                  openapi_url="/openapi.json",
                  # operationId = the route function's name (recall, post_messages, ...):
                  # what generated clients name their methods.
                  generate_unique_id_function=lambda route: route.name)
    _problems.install(app)
    for router in ROUTERS:
        app.include_router(router)
    return app


def openapi() -> dict[str, Any]:
    """The OpenAPI 3.1 document of the API, as a server serves it at /openapi.json, built
    with no database (for generated clients and the tests' list of operations)."""
    return _app().openapi()


def create_app(client: Client, *, keys: Keys, max_body: int = 1 << 20,
               workers: int | None = None, close_client: bool = False) -> FastAPI:
    """The HTTP API over ``client``, keys checked against ``keys``.

    ``max_body`` caps a request body in bytes (413 past it); ``workers`` bounds the threads
    that run library calls (default: the database pool's size). With ``close_client`` the
    client is closed when the app shuts down (the server's own client, not a caller's)."""
    memory = AsyncClient(client, workers=workers)
    mcp = McpEndpoint(client, keys.authenticate, max_body=max_body)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            async with mcp.lifespan():
                yield
        finally:
            if close_client:
                await memory.aclose()

    app = _app(lifespan)
    # The turn's hot routes answer well-formed calls without FastAPI's per-request work
    # (service._fast); first, so they see every request to those paths.
    app.router.routes[:0] = _fast.shortcuts(app.router)
    app.state.memory = memory
    app.state.keys = keys
    app.include_router(create_inspector(client, keys.authenticate))  # the browser's /ui
    # A plain Starlette route to an ASGI app: the MCP transport answers every method on
    # the one path itself, and stays out of the OpenAPI document (it is not REST).
    app.router.routes.append(Route("/mcp", mcp, methods=METHODS))
    app.add_middleware(_problems.BodyCap, limit=max_body)
    return app
