"""One writer per chat at a time: concurrent writers of conflicting values of one
single-valued slot, as threads and as processes, leave exactly one active value, and the
history explains every superseded one."""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable, Sequence
from datetime import timedelta

import pytest

from engrammar import Client, Database, LocalEmbedder, Op, Settings
from engrammar.models import MemoryType, OpKind, Status
from tests.conftest import T0

WRITERS = 4
CITIES = ["Paris", "Rome", "Lisbon", "Oslo", "Vienna", "Prague", "Dublin", "Madrid",
          "Athens", "Warsaw", "Zurich", "Berlin", "Helsinki", "Budapest", "Krakow", "Porto",
          "Seville", "Naples", "Munich", "Geneva", "Bergen", "Tallinn", "Riga", "Vilnius"]
PER_WRITER = len(CITIES) // WRITERS


def _values(writer: int) -> list[str]:
    return CITIES[writer * PER_WRITER:(writer + 1) * PER_WRITER]


def _write(client: Client, writer: int, start: Callable[[], object]) -> None:
    start()
    for i, city in enumerate(_values(writer)):
        op = Op(op=OpKind.add, type=MemoryType.profile, content=f"Lives in {city}",
                slot="home", confidence=0.9, salience=0.8)
        client.apply("u1", "c1", [op], now=T0 + timedelta(seconds=i))


def _process_writer(url: str, writer: int, barrier: threading.Barrier) -> None:
    with Client(Database(url, max_size=1), settings=Settings(),
                embedder=LocalEmbedder()) as client:
        _write(client, writer, barrier.wait)


def _check(client: Client) -> None:
    memories = client.memories("u1", "c1")
    active = [m for m in memories if m.status is Status.active]
    assert len(active) == 1, [m.content for m in active]
    assert len(memories) == len(CITIES)
    by_id = {m.id: m for m in memories}
    events = client.history("u1", "c1")
    for m in memories:
        if m.status is Status.active:
            continue
        # Each superseded value names its successor, which is a newer version of the slot,
        # and its history says so.
        assert m.status is Status.archived and m.superseded_by in by_id, m
        assert any(e.memory_id == m.id and e.op == "superseded" for e in events), m
    # The versions form one chain: each memory is superseded at most once.
    successors = [m.superseded_by for m in memories if m.superseded_by is not None]
    assert len(successors) == len(set(successors)) == len(CITIES) - 1


def test_threads_write_one_slot_one_value(client: Client) -> None:
    barrier = threading.Barrier(WRITERS)
    threads = [threading.Thread(target=_write, args=(client, w, barrier.wait))
               for w in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    _check(client)


@pytest.mark.parametrize("method", ["spawn"])
def test_processes_write_one_slot_one_value(client: Client, database_url: str,
                                            method: str) -> None:
    ctx = multiprocessing.get_context(method)
    barrier = ctx.Barrier(WRITERS)
    procs: Sequence[multiprocessing.process.BaseProcess] = [
        ctx.Process(target=_process_writer, args=(database_url, w, barrier))
        for w in range(WRITERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0] * WRITERS
    _check(client)
