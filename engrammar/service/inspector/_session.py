"""Who is looking: an API key from the session cookie or an ``Authorization: Bearer`` header,
and the CSRF token every form carries.

The session cookie holds the API key itself (HttpOnly, SameSite=Strict, path /ui, Secure
over https): the key is checked on every request by the service's ``authenticate``, so a
revoked key ends its sessions at once, and nothing of a session lives in one process (any
worker behind a load balancer serves it). The CSRF token of a session is an HMAC of a fixed
label under the key, so it is the same in every worker and no page without the key can make
one. The sign-in form, before any session, uses a double-submit token: a random value in a
cookie of its own and in the form, which must match.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from fastapi import Request
from fastapi.responses import Response

SESSION = "engram_session"
LOGIN_CSRF = "engram_login_csrf"
_LABEL = b"engram inspector csrf v1"


class Principal(Protocol):
    """What the service's ``Keys.authenticate`` returns for a live key: the tenant, what
    its scopes grant, and the one mapping between the caller's user ids and the library's."""

    @property
    def tenant(self) -> str: ...

    def can(self, scope: str) -> bool: ...

    def user(self, user_id: str) -> str: ...

    def external(self, user_id: str) -> str: ...


Authenticate = Callable[[str], Principal | None]


@dataclass(frozen=True)
class Session:
    principal: Principal
    token: str
    by_cookie: bool  # False: a Bearer header, which no other site can make a browser send

    @property
    def csrf(self) -> str:
        return csrf_of(self.token)


def csrf_of(token: str) -> str:
    return hmac.new(token.encode("utf-8", "surrogatepass"), _LABEL, hashlib.sha256
                    ).hexdigest()


def token_of(request: Request) -> tuple[str | None, bool]:
    """The key the request carries, and whether it came in the session cookie."""
    header = request.headers.get("authorization", "")
    scheme, _, credentials = header.partition(" ")
    if scheme.lower() == "bearer" and credentials.strip():
        return credentials.strip(), False
    cookie = request.cookies.get(SESSION)
    return (cookie, True) if cookie else (None, False)


def session_of(request: Request, authenticate: Authenticate) -> Session | None:
    token, by_cookie = token_of(request)
    if token is None or len(token) > 400:
        return None
    principal = authenticate(token)
    return None if principal is None else Session(principal, token, by_cookie)


def csrf_ok(session: Session, sent: str | None) -> bool:
    """A form's token is checked for cookie sessions; a Bearer call needs none (a browser
    never adds that header on another site's behalf)."""
    if not session.by_cookie:
        return True
    return sent is not None and hmac.compare_digest(sent, session.csrf)


def new_login_csrf() -> str:
    return secrets.token_urlsafe(24)


def login_csrf_ok(request: Request, sent: str | None) -> bool:
    kept = request.cookies.get(LOGIN_CSRF)
    return bool(kept and sent) and hmac.compare_digest(str(kept), str(sent))


def _secure(request: Request) -> bool:
    return request.url.scheme == "https"


def set_session(response: Response, request: Request, token: str, path: str) -> None:
    response.set_cookie(SESSION, token, httponly=True, samesite="strict", path=path,
                        secure=_secure(request))
    response.delete_cookie(LOGIN_CSRF, path=path)


def set_login_csrf(response: Response, request: Request, value: str, path: str) -> None:
    response.set_cookie(LOGIN_CSRF, value, httponly=True, samesite="strict", path=path,
                        secure=_secure(request), max_age=3600)


def end_session(response: Response, path: str) -> None:
    response.delete_cookie(SESSION, path=path)
