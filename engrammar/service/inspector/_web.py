"""What every page shares: the templates, the security headers, the session check, forms.

Every response carries a strict Content-Security-Policy (scripts and styles from this
origin only, no inline script or style, no eval, no framing), and every page is rendered
by Jinja2 with autoescape on: stored text (memories, messages, reasons) reaches the page
as text, never as markup.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime, time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote

from fastapi import Request
from fastapi.responses import HTMLResponse, Response
from jinja2 import Environment, FileSystemLoader

from engrammar.client import Client
from engrammar.errors import Error, InvalidInput, NotFound
from engrammar.service.inspector import _session as sessions
from engrammar.service.inspector._session import Authenticate, Session

HERE = Path(__file__).parent
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
# The longest form the inspector reads (an edited memory is at most a few thousand chars).
MAX_FORM = 64_000


def segment(value: object) -> str:
    """A path segment: every reserved character escaped, "/" included."""
    return quote(str(value), safe="")


def when(value: datetime | None) -> str:
    return "" if value is None else value.astimezone(UTC).strftime("%Y-%m-%d %H:%M")


def parse_at(value: str | None) -> datetime | None:
    """A date (the end of that day, UTC) or a date and time (UTC unless it says)."""
    if not value or not value.strip():
        return None
    text = value.strip()
    try:
        if len(text) == 10:
            return datetime.combine(datetime.fromisoformat(text).date(),
                                    time(23, 59, 59), UTC)
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidInput(f"{text!r} is not a date (YYYY-MM-DD) or a date and time"
                           ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


class Inspector:
    """The inspector's state: the library client, the service's key check, where it is
    mounted, and its templates."""

    def __init__(self, client: Client, authenticate: Authenticate, prefix: str) -> None:
        self.client = client
        self.authenticate = authenticate
        self.prefix = prefix.rstrip("/")
        self.env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=True,
                               trim_blocks=True, lstrip_blocks=True)
        self.env.filters["seg"] = segment
        self.env.filters["when"] = when
        self.env.filters["pretty"] = lambda v: json.dumps(v, indent=1, ensure_ascii=False,
                                                          sort_keys=True, default=str)

    @property
    def cookie_path(self) -> str:
        return self.prefix or "/"

    def session(self, request: Request) -> Session | None:
        return sessions.session_of(request, self.authenticate)

    def page(self, request: Request, template: str, session: Session | None,
             context: Mapping[str, Any], status: int = 200) -> HTMLResponse:
        body = self.env.get_template(template).render(
            base=self.prefix, session=session, request=request,
            tenant=session.principal.tenant if session else None,
            can_write=bool(session and session.principal.can("write")),
            can_admin=bool(session and session.principal.can("admin")), **context)
        return HTMLResponse(body, status_code=status, headers=HEADERS)

    def sign_in(self, request: Request, message: str | None = None,
                status: int = 401) -> HTMLResponse:
        """The sign-in page, and nothing else: what any page answers without a live key."""
        token = sessions.new_login_csrf()
        response = self.page(request, "login.html", None,
                             {"login_csrf": token, "message": message}, status)
        sessions.set_login_csrf(response, request, token, self.cookie_path)
        if request.cookies.get(sessions.SESSION):
            sessions.end_session(response, self.cookie_path)
        return response

    def problem(self, request: Request, session: Session, status: int,
                message: str) -> HTMLResponse:
        return self.page(request, "problem.html", session,
                         {"status": status, "message": message}, status)

    def failure(self, request: Request, session: Session, exc: Error) -> HTMLResponse:
        """The library's refusal as a page, the tenant's prefix taken off the ids it names:
        NotFound 404, InvalidInput 400, anything else 500."""
        text = str(exc).replace(f"{session.principal.tenant}:", "")
        if isinstance(exc, NotFound):
            return self.problem(request, session, 404, text)
        if isinstance(exc, InvalidInput):
            return self.problem(request, session, 400, text)
        return self.problem(request, session, 500, f"{type(exc).__name__}: {text}")

    def redirect(self, path: str) -> Response:
        return Response(status_code=303, headers={**HEADERS, "Location": self.prefix + path})


async def form_of(request: Request) -> dict[str, str]:
    """An urlencoded form's fields (the last of each name); a bigger body is refused."""
    body = await request.body()
    if len(body) > MAX_FORM:
        raise InvalidInput(f"a form of {len(body)} bytes is more than {MAX_FORM}")
    fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
    return {k: v[-1] for k, v in fields.items()}
