"""API keys: each bound to one tenant and its scopes, stored as the sha256 of the token.

A token is ``egk_<key id>_<43 random url-safe characters>`` (256 bits from ``secrets``), so
one sha256 is as good as a slow password hash here: nothing can be guessed from it. The
token is shown once, by :meth:`Keys.create`; the store keeps its hash, the key id, the
tenant and the scopes. Scopes: ``read`` (every GET, recall and context), ``write``
(posting, ops, settings, import, erase; implies read), ``admin`` (jobs; implies both).

Tenants are names of 1-32 characters from ``[a-z0-9_-]``: the service keeps a tenant's
users apart by a prefix ``<tenant>:`` on every user id it hands the library
(:class:`Principal`), and a ``:`` can occur in no tenant name, so no two tenants' ids meet.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engrammar import store
from engrammar.errors import InvalidInput, NotFound
from engrammar.runtime._database import Database

TENANT = re.compile(r"[a-z0-9_-]{1,32}")
SCOPES = ("read", "write", "admin")
# What each scope grants: a write key reads too, an admin key does everything.
_GRANTS = {"read": {"read"}, "write": {"read", "write"}, "admin": {"read", "write", "admin"}}
PREFIX = "egk_"
# The longest user id a caller may use: the library's 200 less the tenant prefix.
MAX_USER_ID = 200 - 33


@dataclass(frozen=True)
class Principal:
    """Who is calling: the key's tenant and what its scopes grant.

    :meth:`user` is the one place the service turns a caller's user id into the library's,
    and :meth:`external` the one place it turns it back."""

    tenant: str
    scopes: frozenset[str]
    key_id: str = ""

    def can(self, scope: str) -> bool:
        return scope in self.scopes

    def user(self, user_id: str) -> str:
        return f"{self.tenant}:{user_id}"

    def external(self, user_id: str) -> str:
        return user_id.removeprefix(f"{self.tenant}:")

    def scrub(self, text: str) -> str:
        """A library message with the tenant's prefix taken off the ids it names."""
        return text.replace(f"{self.tenant}:", "")


@dataclass(frozen=True)
class KeyInfo:
    id: str
    tenant: str
    scopes: list[str]
    created_at: datetime
    revoked_at: datetime | None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "tenant": self.tenant, "scopes": self.scopes,
                "created_at": self.created_at.isoformat(),
                "revoked_at": self.revoked_at.isoformat() if self.revoked_at else None}


def check_tenant(tenant: str) -> str:
    if not isinstance(tenant, str) or not TENANT.fullmatch(tenant):
        raise InvalidInput(f"tenant {tenant!r}: 1-32 characters of a-z, 0-9, _ and -")
    return tenant


def check_scopes(scopes: Iterable[str]) -> list[str]:
    chosen = sorted(set(scopes), key=SCOPES.index) if all(s in SCOPES for s in scopes) \
        else None
    if not chosen:
        raise InvalidInput(f"scopes {list(scopes)!r}: one or more of {', '.join(SCOPES)}")
    return chosen


def _hash(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


class Keys:
    """The API keys in the store. ``authenticate`` remembers an answer for ``ttl`` seconds
    (per process), so a request costs no database round trip for its key; a revoked key
    stops working within that time in every process (at once in the one that revoked it)."""

    def __init__(self, db: Database, *, ttl: float = 2.0) -> None:
        self.db = db
        self.ttl = ttl
        self._seen: dict[bytes, tuple[float, Principal | None]] = {}
        self._lock = threading.Lock()

    def create(self, tenant: str, scopes: Iterable[str] = ("read", "write")
               ) -> tuple[str, str]:
        """A new key: (its id, its token). The token is not kept; show it once."""
        tenant = check_tenant(tenant)
        chosen = check_scopes(list(scopes))
        key_id = secrets.token_hex(6)
        token = f"{PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
        with self.db.connection() as conn:
            store.insert_key(conn, key_id, tenant, chosen, _hash(token))
        return key_id, token

    def list(self, tenant: str | None = None) -> list[KeyInfo]:
        with self.db.connection() as conn:
            rows = store.list_keys(conn, tenant)
        return [KeyInfo(r["id"], r["tenant"], list(r["scopes"]), r["created_at"],
                        r["revoked_at"]) for r in rows]

    def revoke(self, key_id: str) -> None:
        with self.db.connection() as conn:
            if not store.revoke_key(conn, key_id):
                raise NotFound("live key", key_id)
        with self._lock:
            self._seen.clear()

    def count(self) -> int:
        """Keys not revoked."""
        with self.db.connection() as conn:
            return store.count_live_keys(conn)

    def cached(self, token: str) -> tuple[bool, Principal | None]:
        """(whether the answer for ``token`` is remembered, that answer): lets an event
        loop skip the thread hop of :meth:`authenticate` for a key it saw a moment ago."""
        found = self._seen.get(_hash(token))
        if found is not None and found[0] > time.monotonic():
            return True, found[1]
        return False, None

    def authenticate(self, token: str) -> Principal | None:
        """The principal of a live key's token; None for anything else."""
        if not token.startswith(PREFIX) or len(token) > 200:
            return None
        digest = _hash(token)
        hit, principal = self.cached(token)
        if hit:
            return principal
        with self.db.connection() as conn:
            row = store.key_by_hash(conn, digest)
        principal = None if row is None else Principal(
            row["tenant"], frozenset().union(*(_GRANTS[s] for s in row["scopes"])), row["id"])
        with self._lock:
            if len(self._seen) > 10_000:
                self._seen.clear()
            self._seen[digest] = (time.monotonic() + self.ttl, principal)
        return principal
