"""A job interrupted half-way: a worker killed with SIGKILL while a chat's transaction is
open, and a database restart in the middle of a run, inside a chat or between two. Each
leaves every chat either as a clean run leaves it or untouched (never half-applied), and
the next run ends with the store exactly as a run that was never interrupted.

The model is the fake OpenAI server (tests/fake_openai.py) behind the real openai client,
its answer for the middle chat delayed so the interruption lands while that chat is
claimed (its row locked, its transaction open). The worker is a real process: the
``engram jobs run extract`` command, or ``python -c`` where the test must pause it between
two chats. The restarts run on an embedded server of their own, in a temporary directory,
so no other test run sees its server go away."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from engrammar import Client, Database, LocalEmbedder, Scope, Settings, store
from engrammar.runtime._database import ensure_database, start_embedded, stop_embedded
from engrammar.scheduler import _extract as extract
from tests.conftest import T0
from tests.fake_openai import FakeOpenAI, Scripted, ops_reply
from tests.fake_openai import fake_openai as fake_openai  # the fixture

ROOT = Path(__file__).resolve().parent.parent
NIGHT = T0 + timedelta(hours=16)
CHATS = [Scope(user_id="u1", chat_id=c) for c in ("a", "b", "c")]
# Every row extraction writes, as text, without what the database stamps with its own
# clock (chats.created_at: when the chat was first recorded) and without the change log's
# ids, which by design never restart (migration 010).
STATE = {
    "chats": "SELECT user_id, chat_id, extracted_through, last_extracted_at FROM chats",
    "memories": "SELECT * FROM memories",
    "memory_events": "SELECT * FROM memory_events",
    "memory_links": "SELECT * FROM memory_links",
    "memory_changes": "SELECT user_id, chat_id, memory_id FROM memory_changes",
}
Rows = dict[str, list[tuple[str, str, str]]]


# -- the scenario: three chats, one answer each ------------------------------------------------

def record(client: Client) -> None:
    for i, scope in enumerate(CHATS):
        for text in (f"My name is Dana and I live in Berlin, chat {scope.chat_id}.",
                     f"I drink green tea every morning at the {scope.chat_id}-café."):
            client.record(scope.user_id, scope.chat_id, "user", text,
                          at=T0 + timedelta(minutes=i))


def answer(scope: Scope, delay: float = 0.0) -> Scripted:
    """The model's answer for ``scope``: two new memories citing the chat's messages."""
    first = 2 * CHATS.index(scope) + 1  # message ids restart at 1 on clean tables
    reply = ops_reply([
        {"op": "add", "type": "profile", "content": f"Name is Dana ({scope.chat_id})",
         "slot": "name", "confidence": 0.95, "salience": 0.8, "evidence": [first]},
        {"op": "add", "type": "preference",
         "content": f"Drinks green tea every morning at the {scope.chat_id}-café",
         "confidence": 0.9, "salience": 0.6, "evidence": [first + 1]},
    ])
    reply.delay = delay
    return reply


def truncate(db: Database) -> None:
    """Empty every table and restart the identities, as the ``clean`` fixture does."""
    with db.connection() as conn:
        store.erase_everything(conn)


def state(db: Database) -> Rows:
    with db.connection() as conn:
        return {table: sorted((r[0], r[1], r[2]) for r in conn.execute(
            f"SELECT t.user_id, t.chat_id, row_to_json(t)::text FROM ({query}) t"))
                for table, query in STATE.items()}


def of(rows: Rows, scope: Scope) -> Rows:
    return {table: [r for r in found if (r[0], r[1]) == (scope.user_id, scope.chat_id)]
            for table, found in rows.items()}


def untouched(scope: Scope) -> Rows:
    """A chat recorded but never extracted: its row at watermark 0, nothing else."""
    row = json.dumps({"user_id": scope.user_id, "chat_id": scope.chat_id,
                      "extracted_through": 0, "last_extracted_at": None},
                     separators=(",", ":"))
    return {table: [(scope.user_id, scope.chat_id, row)] if table == "chats" else []
            for table in STATE}


def llm_settings(fake: FakeOpenAI, url: str) -> dict[str, str]:
    """The worker's configuration, as MEMORY_* variables: the test database, the fake."""
    return {"MEMORY_DATABASE_URL": url, "MEMORY_LLM": "openai",
            "MEMORY_LLM_BASE_URL": fake.url, "MEMORY_LLM_API_KEY": "test",
            "MEMORY_LLM_MAX_RETRIES": "0", "MEMORY_LLM_TIMEOUT": "120",
            "MEMORY_EMBEDDER": "local"}


def open_client(fake: FakeOpenAI, url: str, embedder: LocalEmbedder) -> Client:
    """In this process, the very client the worker's ``Client.open()`` builds from its
    environment."""
    cfg = Settings(**{k.removeprefix("MEMORY_").lower(): v
                      for k, v in llm_settings(fake, url).items()})
    return Client.open(cfg, embedder=embedder)


def clean_run(client: Client, fake: FakeOpenAI) -> Rows:
    """The reference: the three chats extracted by one uninterrupted run."""
    truncate(client.db)
    record(client)
    fake.enqueue(*(answer(s) for s in CHATS))
    report = extract.run(client, now=NIGHT)
    assert (report.chats, report.applied, report.errors) == (3, 6, [])
    reference = state(client.db)
    truncate(client.db)
    record(client)
    return reference


def spawn(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, *args], cwd=ROOT, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, **env})


def cli(*args: str) -> list[str]:
    return ["-c", "from engrammar.cli import main; main()", *args]


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def in_transaction(db: Database, app: str, scope: Scope) -> bool:
    """Whether the worker ``app`` holds ``scope`` claimed: a session of its idle inside a
    transaction, and the chat's row locked."""
    with db.connection() as conn:
        states = [r[0] for r in conn.execute(
            "SELECT state FROM pg_stat_activity WHERE application_name = %s", (app,))]
        if "idle in transaction" not in states:
            return False
        try:
            with conn.transaction():
                conn.execute("SELECT 1 FROM chats WHERE user_id = %s AND chat_id = %s"
                             " FOR UPDATE NOWAIT", (scope.user_id, scope.chat_id))
        except psycopg.errors.LockNotAvailable:
            return True
        return False


# -- SIGKILL -----------------------------------------------------------------------------------

def test_a_worker_killed_inside_a_chat_then_rerun_equals_a_clean_run(
        fake_openai: FakeOpenAI, database_url: str, clean: Database,
        embedder: LocalEmbedder) -> None:
    with open_client(fake_openai, database_url, embedder) as client:
        reference = clean_run(client, fake_openai)
        a, b, c = CHATS
        # b's answer comes after the kill: the worker waits on it with b's row locked.
        fake_openai.enqueue(answer(a), answer(b, delay=60))
        app = f"memory-test-sigkill-{os.getpid()}"
        proc = spawn(cli("jobs", "run", "extract", "--json", "--now", NIGHT.isoformat()),
                     {**llm_settings(fake_openai, database_url), "PGAPPNAME": app})
        try:
            wait_for(lambda: proc.poll() is not None or len(fake_openai.requests) == 3 + 2,
                     "the worker to ask the model about the second chat")
            assert proc.poll() is None, proc.communicate()
            assert in_transaction(client.db, app, b)
        finally:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
            proc.communicate()
        assert proc.returncode == -signal.SIGKILL

        def sessions_gone() -> bool:  # the server rolls the dead worker's transaction back
            with client.db.connection() as conn:
                row = conn.execute("SELECT count(*) FROM pg_stat_activity"
                                   " WHERE application_name = %s", (app,)).fetchone()
            return row == (0,)

        wait_for(sessions_gone, "the killed worker's sessions to end")
        # No chat half-applied: a whole as in the clean run, b and c as before the run.
        after_kill = state(client.db)
        assert of(after_kill, a) == of(reference, a)
        assert of(after_kill, b) == untouched(b)
        assert of(after_kill, c) == untouched(c)

        fake_openai.enqueue(answer(b), answer(c))
        report = extract.run(client, now=NIGHT)
        assert (report.chats, report.applied, report.errors) == (2, 4, [])
        assert fake_openai.pending == 0
        assert state(client.db) == reference


# -- a database restart ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def own_server() -> Iterator[Path]:
    # Short (the socket path must fit 107 bytes), and outside pytest's base temp: that one
    # is private to root (the server runs as its own user) and other pytest runs on the
    # machine rotate it away.
    data_dir = Path(tempfile.mkdtemp(prefix="engr-pg-", dir="/tmp"))
    data_dir.chmod(0o755)
    start_embedded(data_dir)
    try:
        yield data_dir
    finally:
        stop_embedded(data_dir)
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture
def own_url(own_server: Path) -> str:
    return ensure_database(start_embedded(own_server), "memory_interrupted")


def test_database_down_inside_a_chat_fails_the_run_cleanly_and_the_next_completes(
        fake_openai: FakeOpenAI, own_server: Path, own_url: str,
        embedder: LocalEmbedder) -> None:
    delay = 6.0  # room for a loaded machine to stop the server before b's answer
    with open_client(fake_openai, own_url, embedder) as client:
        reference = clean_run(client, fake_openai)
        a, b, c = CHATS
        fake_openai.enqueue(answer(a), answer(b, delay=delay))
        proc = spawn(cli("jobs", "run", "extract", "--now", NIGHT.isoformat()),
                     {**llm_settings(fake_openai, own_url), "MEMORY_DB_TIMEOUT": "0.5"})
        try:
            wait_for(lambda: proc.poll() is not None or len(fake_openai.requests) == 3 + 2,
                     "the worker to ask the model about the second chat")
            asked = time.monotonic()
            assert proc.poll() is None, proc.communicate()
            stop_embedded(own_server)  # fast shutdown: b's session is terminated
            assert time.monotonic() - asked < delay, "stopped after b's answer came back"
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
            start_embedded(own_server)
        # The run ends, reported on one line naming the cause: no traceback, and none of
        # the pool's retries.
        assert proc.returncode == 1, (out, err)
        assert err.startswith("error: no database connection within 0.5s (is PostgreSQL up?"
                              ) and len(err.splitlines()) == 1, err

        after = state(client.db)  # the same client: it reconnects on its next call
        assert of(after, a) == of(reference, a)
        assert of(after, b) == untouched(b)
        assert of(after, c) == untouched(c)

        fake_openai.enqueue(answer(b), answer(c))
        report = extract.run(client, now=NIGHT)
        assert (report.chats, report.applied, report.errors) == (2, 4, [])
        assert fake_openai.pending == 0
        assert state(client.db) == reference


PAUSED = textwrap.dedent("""
    import json, sys
    from datetime import datetime
    from engrammar.scheduler import _extract as extract
    from engrammar import Client

    done = 0
    def pause(n):  # called once a chat has committed, its connection back in the pool
        global done
        done += n
        if done == 1:
            print("between", flush=True)
            sys.stdin.readline()

    with Client.open() as client:  # MEMORY_* from the environment
        report = extract.worker(client).run(datetime.fromisoformat(sys.argv[1]),
                                            progress=pause)
    print(json.dumps(report.to_json()), flush=True)
""")


def test_database_restarted_between_chats_the_run_goes_on(
        fake_openai: FakeOpenAI, own_server: Path, own_url: str,
        embedder: LocalEmbedder) -> None:
    with open_client(fake_openai, own_url, embedder) as client:
        reference = clean_run(client, fake_openai)
        fake_openai.enqueue(*(answer(s) for s in CHATS))
        proc = spawn(["-c", PAUSED, NIGHT.isoformat()], llm_settings(fake_openai, own_url))
        try:
            assert proc.stdout is not None and proc.stdin is not None
            assert proc.stdout.readline().strip() == "between", proc.communicate()
            assert of(state(client.db), CHATS[0]) == of(reference, CHATS[0])
            stop_embedded(own_server)
            start_embedded(own_server)
            proc.stdin.write("go\n")
            proc.stdin.flush()
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 0, err
        report: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
        # The pool replaced its dead connections: the same run did the other two chats.
        assert (report["chats"], report["applied"], report["errors"]) == (3, 6, [])
        assert state(client.db) == reference
