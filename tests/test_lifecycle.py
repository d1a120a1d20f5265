from __future__ import annotations

from datetime import timedelta

import pytest

from engrammar import Client, Op, Scope, store
from engrammar.scheduler import _lifecycle as lifecycle
from tests.conftest import T0

U, C = "u1", "c1"
SCOPE = Scope(user_id=U, chat_id=C)


def add(client: Client, content: str, type_: str, **kw: object) -> int:
    op = Op.model_validate({"op": "add", "type": type_, "content": content, **kw})
    result = client.apply(U, C, [op], now=T0)
    assert result.decisions[0].code == "ok", result.decisions
    return result.written[0]


def status(client: Client, memory_id: int) -> str:
    return client.get(U, C, memory_id).status.value


@pytest.mark.parametrize(("type_", "days", "extra"), [
    ("ephemeral", 3, {"salience": 0.8}),
    ("episodic", 30, {}),
])
def test_stale_on_its_day_not_the_day_before(client: Client, type_: str, days: int,
                                             extra: dict[str, object]) -> None:
    mid = add(client, f"A {type_} memory worth keeping for a while", type_, **extra)
    lifecycle.run(client, T0 + timedelta(days=days) - timedelta(hours=1))
    assert status(client, mid) == "active"
    lifecycle.run(client, T0 + timedelta(days=days))
    assert status(client, mid) == "stale"
    events = [e for e in client.history(U, C, mid) if e.op == "lifecycle"]
    assert len(events) == 1 and events[0].after == {"status": "stale"}
    assert events[0].reason and f"{days} days" in events[0].reason


def test_stale_becomes_archived_after_the_configured_time(client: Client) -> None:
    mid = add(client, "Went to a jazz concert downtown", "episodic")
    stale_at = T0 + timedelta(days=30)
    lifecycle.run(client, stale_at)
    lifecycle.run(client, stale_at + timedelta(days=29))
    assert status(client, mid) == "stale"
    lifecycle.run(client, stale_at + timedelta(days=30))
    assert status(client, mid) == "archived"


def test_open_loop_closes_after_due_plus_grace_and_after_silence(client: Client) -> None:
    due = add(client, "Plans to call the bank", "open_loop", due=T0 + timedelta(days=5))
    silent = add(client, "Wants to learn the guitar someday", "open_loop")
    lifecycle.run(client, T0 + timedelta(days=7) - timedelta(minutes=1))
    assert status(client, due) == "active"
    lifecycle.run(client, T0 + timedelta(days=7))
    assert status(client, due) == "archived"
    assert client.get(U, C, due).metadata["closed_reason"] == "due date passed"
    lifecycle.run(client, T0 + timedelta(days=59))
    assert status(client, silent) == "active"
    lifecycle.run(client, T0 + timedelta(days=60))
    assert status(client, silent) == "archived"


def test_pinned_memories_are_untouched(client: Client) -> None:
    mid = add(client, "Feels anxious about flying, always", "ephemeral", salience=0.9,
              pinned=True)
    lifecycle.run(client, T0 + timedelta(days=400))
    assert status(client, mid) == "active"
    assert [e for e in client.history(U, C, mid) if e.op == "lifecycle"] == []


def test_reinforcement_postpones_staleness(client: Client) -> None:
    mid = add(client, "Is training for a half marathon", "episodic")
    later = T0 + timedelta(days=20)
    result = client.apply(U, C, [Op(op="reinforce", target=str(mid))], now=later)
    assert result.applied == 1
    lifecycle.run(client, T0 + timedelta(days=30))
    assert status(client, mid) == "active"
    lifecycle.run(client, later + timedelta(days=30))
    assert status(client, mid) == "stale"


def test_contradicted_never_returns(client: Client) -> None:
    mid = add(client, "Is vegetarian", "profile")
    client.apply(U, C, [Op(op="contradict", target=str(mid), reason="ate steak")], now=T0)
    for day in (1, 40, 400):
        lifecycle.run(client, T0 + timedelta(days=day))
        assert status(client, mid) == "contradicted"


def test_second_run_changes_nothing(client: Client) -> None:
    for i in range(3):
        add(client, f"Visited the museum number {i} in town", "episodic")
    now = T0 + timedelta(days=31)
    first = lifecycle.run(client, now)
    with client.db.connection() as conn:
        before = store.list_memories(conn, SCOPE)
        events = store.list_events(conn, SCOPE)
    second = lifecycle.run(client, now)
    with client.db.connection() as conn:
        assert store.list_memories(conn, SCOPE) == before
        assert store.list_events(conn, SCOPE) == events
    assert first.to_json()["transitions"] == 3 and second.to_json()["transitions"] == 0
