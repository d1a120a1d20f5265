"""Tests run against a real PostgreSQL with pgvector: the embedded server by default, any
server through MEMORY_DATABASE_URL. Each test starts from empty tables."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

import psycopg
import pytest

from engrammar import Client, Database, LocalEmbedder, Settings, store
from engrammar.runtime._database import resolve_url, with_database

# Separate databases let several test runs share one embedded server without colliding.
TEST_DATABASE = os.environ.get("MEMORY_TEST_DATABASE", "memory_test")
T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="session")
def settings() -> Settings:
    return Settings()


@pytest.fixture(scope="session")
def database_url(settings: Settings) -> str:
    return resolve_url(settings, TEST_DATABASE)


@contextmanager
def scratch_database(database_url: str, name: str) -> Iterator[str]:
    """A new, empty database ``name`` on the test server (dropped first if a run left it),
    its URL, and dropped again afterwards."""
    admin = with_database(database_url, "postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield with_database(database_url, name)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name}")


@pytest.fixture(scope="session")
def db(database_url: str) -> Iterator[Database]:
    with Database(database_url, max_size=4) as database:
        yield database


@pytest.fixture(scope="session")
def embedder() -> LocalEmbedder:
    return LocalEmbedder()


@pytest.fixture
def clean(db: Database) -> Database:
    with db.connection() as conn:
        store.erase_everything(conn)
    return db


@pytest.fixture
def client(clean: Database, settings: Settings, embedder: LocalEmbedder) -> Client:
    return Client(clean, settings=settings, embedder=embedder)
