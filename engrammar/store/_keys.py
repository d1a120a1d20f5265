"""API keys of the HTTP service: each bound to a tenant and scopes, kept as a hash."""

from __future__ import annotations

from typing import Any

from psycopg.rows import dict_row

from engrammar.store._memories import Conn


def insert_key(conn: Conn, key_id: str, tenant: str, scopes: list[str],
               token_hash: bytes) -> None:
    conn.execute(
        "INSERT INTO api_keys (id, tenant, scopes, token_hash) VALUES (%s, %s, %s, %s)",
        (key_id, tenant, scopes, token_hash),
    )


def key_by_hash(conn: Conn, token_hash: bytes) -> dict[str, Any] | None:
    """The live (not revoked) key whose token hashes to ``token_hash``."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT id, tenant, scopes FROM api_keys"
            " WHERE token_hash = %s AND revoked_at IS NULL",
            (token_hash,),
        )
        return cur.fetchone()


def list_keys(conn: Conn, tenant: str | None = None) -> list[dict[str, Any]]:
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT id, tenant, scopes, created_at, revoked_at FROM api_keys"
            " WHERE %s::text IS NULL OR tenant = %s ORDER BY created_at, id",
            (tenant, tenant),
        )
        return list(cur.fetchall())


def revoke_key(conn: Conn, key_id: str) -> bool:
    """Revoke a live key; False when there is none by that id."""
    row = conn.execute(
        "UPDATE api_keys SET revoked_at = now() WHERE id = %s AND revoked_at IS NULL"
        " RETURNING id", (key_id,)).fetchone()
    return row is not None


def count_live_keys(conn: Conn) -> int:
    row = conn.execute("SELECT count(*) FROM api_keys WHERE revoked_at IS NULL").fetchone()
    return int(row[0]) if row else 0


def applied_migrations(conn: Conn) -> set[str]:
    """The names of the migrations this database has applied (for readiness)."""
    return {r[0] for r in conn.execute("SELECT name FROM schema_migrations")}
