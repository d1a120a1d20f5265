from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import psycopg
import pytest

from engrammar import Database, Scope, Settings, store
from engrammar.runtime._database import migrate, migrations
from tests.conftest import T0, scratch_database


def test_migrations_apply_once_and_are_idempotent(database_url: str, db: Database) -> None:
    with psycopg.connect(database_url) as conn:
        assert migrate(conn) == []  # the session's Database applied everything already
        assert migrate(conn) == []
        names = [r[0] for r in conn.execute("SELECT name FROM schema_migrations ORDER BY name")]
    assert names == [name for name, _ in migrations()]


def test_migrations_on_a_fresh_database(database_url: str) -> None:
    with scratch_database(database_url, "memory_test_fresh") as url, \
            psycopg.connect(url) as conn:
        first = migrate(conn)
        second = migrate(conn)
    assert first == [n for n, _ in migrations()] and second == []


def test_store_round_trips_every_column(clean: Database) -> None:
    scope = Scope(user_id="u1", chat_id="c1")
    vec = np.linspace(-1, 1, 384, dtype=np.float32)
    vec /= np.linalg.norm(vec)
    fields = {
        "type": "open_loop", "content": "Promised to call mom", "status": "stale",
        "confidence": 0.75, "salience": 0.5, "pinned": True, "surface": "continue",
        "slot": "family:mom", "embedding": vec, "created_at": T0, "updated_at": T0,
        "last_reinforced_at": T0, "last_surfaced_at": T0, "due_at": T0,
        "status_changed_at": T0, "reinforce_count": 3, "surface_count": 2,
        "source_message_ids": [1, 2], "superseded_by": 99, "metadata": {"k": ["v", 1]},
    }
    with clean.connection() as conn:
        made = store.insert_memory(conn, scope, fields)
        back = store.get_memory(conn, scope, made.id, with_embedding=True)
    assert back is not None
    dumped = back.model_dump()
    for key, value in fields.items():
        if key == "embedding":
            assert np.allclose(dumped[key], vec, atol=1e-6)
        else:
            assert dumped[key] == value, key
    assert back.user_id == "u1" and back.chat_id == "c1"


def test_message_round_trip_and_paging(clean: Database) -> None:
    scope = Scope(user_id="u1", chat_id="c1")
    with clean.connection() as conn:
        ids = [store.insert_message(conn, scope, "user", f"m{i}", T0) for i in range(5)]
        page = store.messages_before(conn, scope, ids[3], 2)
        after = store.messages_after(conn, scope, ids[1])
    assert [m.content for m in page] == ["m1", "m2"]
    assert [m.id for m in after] == ids[2:]


def test_isolation_identical_embedding(clean: Database) -> None:
    a, b = Scope(user_id="u1", chat_id="A"), Scope(user_id="u1", chat_id="B")
    other_user = Scope(user_id="u2", chat_id="A")
    vec = np.ones(384, dtype=np.float32) / np.sqrt(384)
    with clean.connection() as conn:
        for scope in (a, other_user):
            store.insert_memory(conn, scope, {
                "type": "profile", "content": "Lives in Berlin", "confidence": 0.9,
                "salience": 0.5, "surface": "speak", "embedding": vec,
                "created_at": T0, "updated_at": T0})
        assert store.nearest(conn, b, vec, 10) == []
        assert store.list_memories(conn, b) == []
        assert len(store.nearest(conn, a, vec, 10)) == 1
        assert len(store.nearest(conn, other_user, vec, 10)) == 1


@pytest.mark.parametrize("rows", [0, 3, 50])
def test_nearest_returns_min_of_limit_and_rows(clean: Database, rows: int) -> None:
    scope = Scope(user_id="u1", chat_id="c1")
    rng = np.random.default_rng(rows)
    with clean.connection() as conn:
        for i in range(rows):
            v = rng.normal(size=384).astype(np.float32)
            store.insert_memory(conn, scope, {
                "type": "episodic", "content": f"event {i}", "confidence": 0.9,
                "salience": 0.5, "surface": "speak", "embedding": v / np.linalg.norm(v),
                "created_at": T0, "updated_at": T0})
        # Another chat's rows never count toward this chat's results.
        store.insert_memory(conn, Scope(user_id="u1", chat_id="c2"), {
            "type": "episodic", "content": "elsewhere", "confidence": 0.9, "salience": 0.5,
            "surface": "speak", "embedding": np.ones(384, dtype=np.float32) / np.sqrt(384),
            "created_at": T0, "updated_at": T0})
        q = rng.normal(size=384).astype(np.float32)
        for limit in (1, 10, 40):
            got = store.nearest(conn, scope, q / np.linalg.norm(q), limit)
            assert len(got) == min(limit, rows)
            assert [c for _, c in got] == sorted((c for _, c in got), reverse=True)


def test_two_processes_start_the_embedded_server_at_once(tmp_path: Path) -> None:
    settings = Settings()
    if settings.database_url:
        pytest.skip("MEMORY_DATABASE_URL is set: no embedded server in use")
    data_dir = settings.data_dir.resolve() / "concurrent-start-test"
    script = textwrap.dedent(f"""
        from pathlib import Path
        import psycopg
        from engrammar.runtime._database import start_embedded
        url = start_embedded(Path({str(data_dir)!r}))
        with psycopg.connect(url) as conn:
            print(conn.execute("select 42").fetchone()[0])
    """)
    try:
        procs = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(2)]
        outs = [p.communicate(timeout=120) for p in procs]
        for p, (out, err) in zip(procs, outs, strict=True):
            assert p.returncode == 0, err
            assert out.strip() == "42"
    finally:
        import shutil

        from engrammar.runtime._database import stop_embedded
        stop_embedded(data_dir)
        shutil.rmtree(data_dir, ignore_errors=True)


def test_database_down_is_a_clear_error(tmp_path: Path) -> None:
    from engrammar.errors import DatabaseError

    with pytest.raises(DatabaseError, match="cannot reach PostgreSQL"):
        Database(f"postgresql://nobody@/nowhere?host={tmp_path}&connect_timeout=2")


def test_restart_after_stop_in_one_process() -> None:
    import shutil

    from engrammar.runtime._database import embedded_status, start_embedded, stop_embedded

    settings = Settings()
    if settings.database_url:
        pytest.skip("MEMORY_DATABASE_URL is set: no embedded server in use")
    data_dir = settings.data_dir.resolve() / "restart-test"
    try:
        for _ in range(2):
            with psycopg.connect(start_embedded(data_dir)) as conn:
                assert conn.execute("select 1").fetchone() == (1,)
            assert stop_embedded(data_dir) is True
            assert not embedded_status(data_dir).running
        assert stop_embedded(data_dir) is False
    finally:
        stop_embedded(data_dir)
        shutil.rmtree(data_dir, ignore_errors=True)


def test_a_pooled_connection_the_server_closed_is_replaced_as_it_is_taken(
        database_url: str) -> None:
    # The pool's check asks the server only when the socket has something to say: a
    # terminated backend says so, and the next call gets a new connection, not an error.
    with Database(database_url, min_size=1, max_size=1) as database:
        with database.connection() as conn:
            first = conn.execute("SELECT pg_backend_pid()").fetchone()
        with psycopg.connect(database_url, autocommit=True) as other:
            assert other.execute("SELECT pg_terminate_backend(%s)", first).fetchone() == (True,)
        time.sleep(0.2)  # the backend's farewell reaches the socket
        with database.connection() as conn:
            assert conn.execute("SELECT pg_backend_pid()").fetchone() != first
        with database.connection() as conn:  # a live one: handed out again, unchecked
            again = conn.execute("SELECT pg_backend_pid()").fetchone()
        with database.connection() as conn:
            assert conn.execute("SELECT pg_backend_pid()").fetchone() == again


def test_an_autocommit_block_reads_without_a_transaction_and_hands_the_pool_it_back(
        database_url: str) -> None:
    # One connection, so the block after gets the same one back.
    idle = psycopg.pq.TransactionStatus.IDLE
    with Database(database_url, min_size=1, max_size=1) as one:
        with one.connection(autocommit=True) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
            assert conn.info.transaction_status == idle  # nothing left to COMMIT
            # A transaction the block opens and leaves open is rolled back, not kept.
            conn.execute("BEGIN")
            conn.execute("CREATE TEMP TABLE left_open (x int)")
        with one.connection() as conn:
            assert not conn.autocommit
            assert conn.execute("SELECT to_regclass('pg_temp.left_open')").fetchone() == (None,)
            conn.execute("SELECT 1")
            assert conn.info.transaction_status != idle  # the usual transaction again
