"""AsyncClient: the sync client's methods, awaitable, in a bounded pool, cancel-safe.

Run under anyio's pytest plugin on asyncio. The cancellation tests hold a real PostgreSQL
lock so that a call is inside its transaction when it is cancelled.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import psycopg
import pytest

from engrammar import (
    AsyncClient,
    Client,
    Database,
    LocalEmbedder,
    MemoryType,
    NotFound,
    Op,
    OpKind,
    Settings,
)
from tests.conftest import T0

U, C = "u1", "c1"
pytestmark = pytest.mark.anyio
ADDS = [Op(op=OpKind.add, type=MemoryType.preference, content="Likes green tea in the morning"),
        Op(op=OpKind.add, type=MemoryType.profile, content="Lives in Berlin near the river")]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def own_db(clean: Database, database_url: str) -> Iterator[Database]:
    """A pool of the test's own, which the AsyncClient closes (``clean`` empties tables)."""
    database = Database(database_url, max_size=4)
    yield database
    database.close()


@pytest.fixture
async def aclient(own_db: Database, settings: Settings, embedder: LocalEmbedder
                  ) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(Client(own_db, settings=settings, embedder=embedder),
                           workers=2) as client:
        yield client


def public_methods(cls: type) -> dict[str, Any]:
    return {name: member for name, member in vars(cls).items()
            if not name.startswith("_") and inspect.isfunction(member)}


def test_every_public_method_of_client_is_awaitable_with_its_signature() -> None:
    sync, aio = public_methods(Client), public_methods(AsyncClient)
    missing = set(sync) - {"close"} - set(aio)
    assert not missing, f"AsyncClient lacks {sorted(missing)}"
    for name in sync.keys() - {"close"}:
        assert inspect.iscoroutinefunction(aio[name]), name
        assert inspect.signature(aio[name]) == inspect.signature(sync[name]), name
        assert aio[name].__doc__ == sync[name].__doc__


async def test_the_calls_give_what_the_sync_client_gives(aclient: AsyncClient) -> None:
    first = await aclient.record(U, C, "user", "My name is Dana and I live in Berlin.", T0)
    await aclient.record(U, C, "assistant", "Nice to meet you, Dana!", T0)
    assert [m.id for m in await aclient.log(U, C)] == [first, first + 1]
    result = await aclient.apply(U, C, ADDS, now=T0)
    assert result.applied == 2
    memories = await aclient.memories(U, C)
    assert {m.content for m in memories} == {op.content for op in ADDS}
    assert (await aclient.get(U, C, memories[0].id)).content == memories[0].content
    with pytest.raises(NotFound):
        await aclient.get(U, C, 999)
    assert len(await aclient.history(U, C)) == 2
    block = await aclient.recall(U, C, "what do I drink?", now=T0, record=False)
    assert block == aclient.sync.recall(U, C, "what do I drink?", now=T0, record=False)
    compiled = await aclient.compile(U, C, "what do I drink?", now=T0, record=False)
    assert compiled.messages[-1] == {"role": "user", "content": "what do I drink?"}
    observed = await aclient.observe(U, C, "Decision: we meet on Tuesdays", now=T0)
    assert observed.applied == 1
    assert await aclient.count_memories() == 3
    assert await aclient.reembed() == 3
    assert await aclient.erase_user(U) > 0
    assert await aclient.memories(U, C) == []


async def test_calls_run_side_by_side_bounded_by_the_pool_and_carry_context(
        aclient: AsyncClient) -> None:
    request = contextvars.ContextVar("request", default="")
    running, most = 0, 0
    guard = threading.Lock()

    def call(i: int) -> tuple[str, str]:
        nonlocal running, most
        with guard:
            running += 1
            most = max(most, running)
        time.sleep(0.02)
        with guard:
            running -= 1
        return request.get(), threading.current_thread().name

    async def one(i: int) -> tuple[str, str]:
        request.set(f"r{i}")
        return await aclient.run(lambda: call(i))

    results = await asyncio.gather(*(one(i) for i in range(6)))
    assert [r[0] for r in results] == [f"r{i}" for i in range(6)]
    assert most == aclient.workers == 2
    assert all(r[1].startswith("memory") for r in results)


def lock_memories(conn: psycopg.Connection[Any]) -> None:
    """Writes to ``memories`` wait until ``conn`` commits; reads go on."""
    conn.execute("LOCK TABLE memories IN SHARE ROW EXCLUSIVE MODE")


async def wait_for_lock_wait(db: Database) -> None:
    """Until a backend waits on a lock, that is: the call is inside its transaction."""
    for _ in range(400):
        with db.connection() as conn:
            row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type ="
                               " 'Lock' AND datname = current_database()").fetchone()
        if row and row[0]:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the call never reached the lock")


async def test_a_cancelled_write_ends_whole_before_the_cancellation_arrives(
        aclient: AsyncClient, clean: Database) -> None:
    """Cancelled mid-transaction, the await waits for the transaction to end and then
    raises CancelledError: the chat holds both memories and their events, not one."""
    with clean.connection() as locker:
        lock_memories(locker)
        task = asyncio.create_task(aclient.apply(U, C, ADDS, now=T0))
        await wait_for_lock_wait(clean)
        task.cancel()
        await asyncio.sleep(0.1)
        assert not task.done(), "the await must not return while its call still writes"
        task.cancel()  # a second cancellation changes nothing either
        await asyncio.sleep(0.05)
        assert not task.done()
        assert aclient.sync.memories(U, C) == []  # in flight: not visible, not half there
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(aclient.sync.memories(U, C)) == 2
    assert len(aclient.sync.history(U, C)) == 2


async def test_a_timeout_mid_write_leaves_the_chat_whole(aclient: AsyncClient,
                                                         clean: Database) -> None:
    with clean.connection() as locker:
        lock_memories(locker)

        async def unlock_later() -> None:
            await wait_for_lock_wait(clean)
            await asyncio.sleep(0.2)
            await asyncio.to_thread(locker.commit)

        unlocking = asyncio.create_task(unlock_later())
        started = time.perf_counter()
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.05):
                await aclient.apply(U, C, ADDS, now=T0)
        assert time.perf_counter() - started >= 0.2  # waited for the write to end
        await unlocking
    assert len(aclient.sync.memories(U, C)) == 2


async def test_a_call_cancelled_before_it_starts_runs_nothing(
        own_db: Database, settings: Settings, embedder: LocalEmbedder) -> None:
    gate = threading.Event()
    async with AsyncClient(Client(own_db, settings=settings, embedder=embedder),
                           workers=1) as client:
        busy = asyncio.create_task(client.run(gate.wait))
        await asyncio.sleep(0.05)
        queued = asyncio.create_task(client.record(U, C, "user", "never written", T0))
        await asyncio.sleep(0.05)
        queued.cancel()
        with pytest.raises(asyncio.CancelledError):
            await queued
        gate.set()
        assert await busy is True
        assert await client.log(U, C) == []


async def test_errors_come_through_as_the_library_raises_them(aclient: AsyncClient) -> None:
    from engrammar import InvalidInput

    with pytest.raises(InvalidInput, match="unknown role"):
        await aclient.record(U, C, "robot", "hello")


async def test_open_builds_the_client_off_the_loop(database_url: str, clean: Database,
                                                   settings: Settings,
                                                   embedder: LocalEmbedder) -> None:
    cfg = settings.model_copy(update={"database_url": database_url})
    client = await AsyncClient.open(cfg, embedder=embedder)
    async with client:
        assert client.workers == cfg.pool_max
        await client.record(U, C, "user", "hello there from open", T0)
        assert len(await client.log(U, C)) == 1
