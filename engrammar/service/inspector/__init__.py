"""The browser inspector: what a chat remembers, why it recalled it, and what it forgot.

``create_inspector(client, authenticate)`` is a FastAPI router the service mounts with one
line (``app.include_router(create_inspector(client, keys.authenticate))``), at ``/ui``.
Server-rendered Jinja2 pages, a vendored htmx (static/htmx.min.js, its licence beside it)
and SVG charts drawn by the server: nothing to build at install. Every read and every
action goes through the library client; the inspector has no SQL of its own.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from engrammar.client import Client
from engrammar.service.inspector import _actions, _pages
from engrammar.service.inspector._session import Authenticate, Principal
from engrammar.service.inspector._web import HEADERS, HERE, Inspector

__all__ = ["Principal", "create_inspector"]

# The files under static/ a page may load, with their media types.
_STATIC = {"htmx.min.js": "text/javascript", "inspector.css": "text/css",
           "htmx.LICENSE": "text/plain"}


def create_inspector(client: Client, authenticate: Authenticate, *,
                     prefix: str = "/ui") -> APIRouter:
    """The inspector's routes under ``prefix``, for keys ``authenticate`` accepts (the
    service's ``Keys.authenticate``: a token to its principal, or None)."""
    router = APIRouter(prefix=prefix, include_in_schema=False)
    ui = Inspector(client, authenticate, prefix)
    files = {name: (HERE / "static" / name).read_bytes() for name in _STATIC}

    @router.get("/static/{name}", response_model=None)
    def static(name: str) -> Response:
        if name not in files:
            return Response("not found", status_code=404, headers=HEADERS)
        return Response(files[name], media_type=_STATIC[name],
                        headers={**HEADERS, "Cache-Control": "public, max-age=3600"})

    _actions.register(router, ui)
    _pages.register(router, ui)
    return router
