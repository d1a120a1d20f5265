"""The writer sends a chat's writes without reading rows back: the copies it keeps (in the
pool, in the events, in the result) must be the rows as PostgreSQL returns them."""

from __future__ import annotations

from datetime import timedelta, timezone
from typing import Any

from engrammar import Client, store
from engrammar.models import Memory, MemoryType, Op, OpKind, Scope
from engrammar.write._writer import ApplyResult
from tests.conftest import T0

SCOPE = Scope(user_id="u1", chat_id="c1")
# A `now` in a zone other than the session's, which is set to yet another one.
PLUS2 = timezone(timedelta(hours=2))


def row(memory: Memory) -> dict[str, Any]:
    return memory.model_dump(mode="json", exclude={"embedding"})  # what an event holds


def apply(client: Client, ops: list[Op], days: int) -> tuple[ApplyResult, dict[int, Memory]]:
    """``ops`` in one transaction under another session time zone: the result, and the
    pool's copy of each memory written, taken before the transaction ends."""
    with client.db.connection() as conn, conn.transaction():
        conn.execute("SET LOCAL TIME ZONE 'Asia/Kolkata'")
        pool = client.writer.load_pool(conn, SCOPE)
        result = client.writer.apply(conn, SCOPE, ops, now=(T0 + timedelta(days=days))
                                     .astimezone(PLUS2), source="test", pool=pool)
        copies = {i: found.memory for i in result.written if (found := pool.get(i))}
        stored = {i: store.get_memory(conn, SCOPE, i) for i in result.written}
        for memory_id, copy in copies.items():
            assert row(copy) == row(stored[memory_id]), memory_id  # type: ignore[arg-type]
    return result, copies


def test_copies_events_and_rows_agree(client: Client) -> None:
    # The evidence names messages of this chat (the writer refuses any other chat's).
    said = [client.record(SCOPE.user_id, SCOPE.chat_id, "user", f"message {i}", at=T0)
            for i in range(5)]
    assert said == [1, 2, 3, 4, 5]
    first, _ = apply(client, [
        Op(op=OpKind.add, type=MemoryType.profile, content="Dana lives in Berlin",
           slot="home", confidence=0.85, salience=0.7, evidence=[1]),
        Op(op=OpKind.add, type=MemoryType.open_loop, content="Promised to call mom on Friday",
           confidence=0.9, salience=0.65, due=T0 + timedelta(days=4), evidence=[2]),
        Op(op=OpKind.add, type=MemoryType.preference, content="Likes green tea",
           confidence=0.7, salience=0.3, evidence=[3]),
        Op(op=OpKind.add, type=MemoryType.preference, content="Tea", salience=0.9),
    ], days=0)
    assert [d.code for d in first.decisions] == ["ok", "ok", "ok", "too_short"]
    second, copies = apply(client, [
        Op(op=OpKind.add, type=MemoryType.profile, content="Dana lives in Berlin",
           slot="home", confidence=0.85, salience=0.7, evidence=[4]),
        Op(op=OpKind.add, type=MemoryType.profile, content="Dana moved to Munich",
           slot="home", confidence=0.93, evidence=[5]),
        Op(op=OpKind.close_loop, content="Called mom", target=str(first.written[1])),
        Op(op=OpKind.forget, target=str(first.written[2]), reason="asked to"),
        Op(op=OpKind.add, type=MemoryType.shared_lore, content="Calls the cat Sir Fluff",
           sources=[first.written[0]], confidence=0.61, salience=0.33),
    ], days=1)
    assert [d.op.op.value if d.op else d.code for d in second.decisions] == [
        "reinforce", "update", "close_loop", "forget", "add"]
    assert set(copies) == {second.written[1], second.written[-1]}  # the live ones

    # Each memory's last event shows it as it is stored, read on a fresh connection.
    with client.db.connection() as conn:
        events = store.list_events(conn, SCOPE)
        ids = [m.id for m in store.list_memories(conn, SCOPE)]
        # get_memory reads as text, as RETURNING did: real columns as PostgreSQL prints them
        memories = {i: m for i in ids if (m := store.get_memory(conn, SCOPE, i))}
    last = {e.memory_id: e for e in events if e.memory_id is not None}
    assert set(last) == set(memories)
    for memory_id, memory in memories.items():
        snapshot = last[memory_id].after
        assert snapshot is not None
        assert snapshot["id"] == memory_id
        # Times are in the zone of the session that wrote them; compare them as instants.
        assert Memory.model_validate(snapshot) == memory.model_copy(update={"embedding": None})
    berlin = memories[first.written[0]]
    assert berlin.status.value == "archived" and berlin.reinforce_count == 1
    assert berlin.superseded_by == second.written[1]
    assert berlin.source_message_ids == [1, 4]
    with client.db.connection() as conn:
        assert (second.written[-1], berlin.id, "derived_from") in store.list_links(conn, SCOPE)
        assert (second.written[1], berlin.id, "supersedes") in store.list_links(conn, SCOPE)


def test_ids_follow_the_order_of_the_ops(client: Client) -> None:
    result = client.apply("u1", "c1", [
        Op(op=OpKind.add, type=MemoryType.profile, content=c)
        for c in ("Works as a nurse in Lisbon", "Has a dog named Rex", "Plays chess on Sundays")],
        source="test", now=T0)
    assert result.written == sorted(result.written)
    assert [m.id for m in client.memories("u1", "c1")] == result.written


def test_decisions_against_the_pool_keep_history_and_sources(client: Client) -> None:
    """The gate's new decisions, written: an untargeted change supersedes what it changes
    (out of the active set, kept in history), a report closes its loop, a resolution that
    closes nothing is an episode; each event names the messages it rests on."""
    # Evidence names messages of the chat (the writer refuses any other): ids 1 to 5 here.
    said = [client.record("u1", "c1", "user", f"message {i}", at=T0) for i in range(5)]
    m = dict(enumerate(said, start=1))
    first, _ = apply(client, [
        Op(op=OpKind.add, type=MemoryType.profile,
           content="Book club is every other Thursday at the Crown", evidence=[m[1]]),
        Op(op=OpKind.add, type=MemoryType.open_loop, content="Plans to renew the passport",
           evidence=[m[2]]),
    ], days=0)
    club, passport = first.written
    second, copies = apply(client, [
        Op(op=OpKind.update, content="Book club moved to Wednesdays", evidence=[m[3]]),
        Op(op=OpKind.add, type=MemoryType.episodic, content="Renewed the passport",
           tense="past", evidence=[m[4]]),
        Op(op=OpKind.close_loop, content="Sorted the bank thing", evidence=[m[5]]),
    ], days=1)
    assert [d.code for d in second.decisions] == ["found_target", "closes_loop", "redecided"]
    moved, old, closed, bank = second.written
    assert (old, closed) == (club, passport)
    # Out of the pool (so no copy there), in the store with their history.
    assert old not in copies and closed not in copies
    gone = client.get("u1", "c1", old)
    assert gone.status.value == "archived" and gone.superseded_by == moved
    done = client.get("u1", "c1", closed)
    assert done.status.value == "archived"
    assert done.metadata["resolution"] == "Renewed the passport"
    assert copies[bank].type is MemoryType.episodic and copies[bank].source_message_ids == [m[5]]
    assert sorted(m.content for m in client.memories("u1", "c1", ["active"])) == [
        "Book club moved to Wednesdays", "Sorted the bank thing"]
    events = [(e.memory_id, e.op, e.source_message_ids) for e in client.history("u1", "c1")]
    assert events[2:] == [(moved, "update", [m[3]]), (club, "superseded", [m[3]]),
                          (passport, "close_loop", [m[4]]), (bank, "add", [m[5]])]
