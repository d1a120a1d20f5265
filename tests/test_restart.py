"""A lost database: while the server is down a call fails fast with DatabaseError, and once
it is back the same client works on its very next call. On an embedded server of its own,
in a temporary directory, so stopping it disturbs no other test run."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engrammar import Client, Database, LocalEmbedder, Settings
from engrammar.errors import DatabaseError
from engrammar.runtime._database import ensure_database, start_embedded, stop_embedded
from tests.conftest import T0


@pytest.fixture
def own_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    # Short: the server's socket path must fit in 107 bytes.
    data_dir = tmp_path_factory.mktemp("pg")
    start_embedded(data_dir)
    try:
        yield data_dir
    finally:
        stop_embedded(data_dir)


def test_down_fails_fast_and_the_next_call_after_a_restart_works(
        own_server: Path, embedder: LocalEmbedder) -> None:
    settings = Settings()
    url = ensure_database(start_embedded(own_server), "memory_restart")
    with Client(Database(url, max_size=2, connect_timeout=settings.db_connect_timeout,
                         timeout=settings.db_timeout,
                         reconnect_timeout=settings.db_reconnect_seconds),
                settings=settings, embedder=embedder) as client:
        client.record("u1", "c1", "user", "I live in Berlin.", at=T0)

        stop_embedded(own_server)
        for _ in range(2):  # the pooled connection is dead, then no new one can be made
            started = time.monotonic()
            with pytest.raises(DatabaseError):
                client.log("u1", "c1")
            print(f"failed while down in {time.monotonic() - started:.3f}s")
            assert time.monotonic() - started <= 2.5

        start_embedded(own_server)
        started = time.monotonic()
        assert [m.content for m in client.log("u1", "c1")] == ["I live in Berlin."]
        print(f"first call after the restart: {time.monotonic() - started:.3f}s")
