"""The library's reads behind the inspector (store._inspect through Client): the chats
under a user prefix and nothing else, memories by filter, events, rejections, the messages
memories rest on, job runs."""

from __future__ import annotations

from datetime import timedelta

from engrammar import Client
from engrammar.models import Op
from engrammar.scheduler._scheduler import run_job
from tests.conftest import T0


def _seed(client: Client) -> list[int]:
    said = [client.record("t:ann", "c", "user", text, at=T0) for text in
            ("I live in Oslo", "I like 100% dark chocolate", "My cat is called Miso")]
    client.record("t:anne", "c", "user", "another user whose id starts the same", at=T0)
    client.record("u:ann", "c", "user", "another tenant", at=T0)
    written = client.apply("t:ann", "c", [
        Op(op="add", type="profile", content="Lives in Oslo", evidence=[said[0]]),
        Op(op="add", type="preference", content="Likes 100% dark chocolate",
           evidence=[said[1]]),
        Op(op="add", type="profile", content="Has a cat called Miso", evidence=[said[2]]),
        Op(op="forget", target="999"),
    ], now=T0).written
    client.apply("t:ann", "c", [Op(op="update", target=str(written[0]), content="x")],
                 now=T0)
    return written


def test_chats_under_a_prefix_only(client: Client) -> None:
    _seed(client)
    rows = client.chats("t:")
    assert [(r["user_id"], r["chat_id"]) for r in rows] == [("t:ann", "c"), ("t:anne", "c")]
    ann = rows[0]
    assert ann["counts"] == {("profile", "active"): 2, ("preference", "active"): 1}
    assert ann["last_message_at"] == T0 and rows[1]["counts"] == {}
    assert client.chats("t:ann%") == [] and client.chats("t:_nn") == []  # no wildcards
    assert [r["user_id"] for r in client.chats("u:")] == ["u:ann"]


def test_find_memories_by_every_filter(client: Client) -> None:
    ids = _seed(client)
    client.apply("t:ann", "c", [Op(op="forget", target=str(ids[2]))], now=T0)
    total, found = client.find_memories("t:ann", "c")
    assert total == 3 and [m.id for m in found] == sorted(ids, reverse=True)
    assert client.find_memories("t:ann", "c", types=["profile"], statuses=["active"]
                                )[0] == 1
    assert [m.id for m in client.find_memories("t:ann", "c", text="100%")[1]] == [ids[1]]
    assert client.find_memories("t:ann", "c", text="OSLO")[1][0].id == ids[0]
    assert client.find_memories("t:ann", "c", surfaces=["never"])[0] == 0
    total, page = client.find_memories("t:ann", "c", limit=2, offset=2)
    assert total == 3 and [m.id for m in page] == [ids[0]]
    assert client.find_memories("t:anne", "c")[0] == 0


def test_events_rejections_and_sources(client: Client) -> None:
    ids = _seed(client)
    events = client.events("t:ann", "c")
    assert [e.op for e in events] == ["reject", "reject", "add", "add", "add"]
    assert [e.op for e in client.events("t:ann", "c", rejected_only=True)] == ["reject"] * 2
    assert [e.id for e in client.events("t:ann", "c", before=events[1].id)] == \
        [e.id for e in events[2:]]
    aimed = client.rejections("t:ann", "c", ids[0])
    assert len(aimed) == 1 and aimed[0].reason and aimed[0].reason.startswith("too_short")
    log = client.log("t:ann", "c")
    resting = client.resting_on("t:ann", "c", log[0].id, log[-1].id)
    assert resting == {log[0].id: [ids[0]], log[1].id: [ids[1]], log[2].id: [ids[2]]}
    assert client.resting_on("t:anne", "c", log[0].id, log[-1].id) == {}


def test_job_runs_newest_first(client: Client) -> None:
    run_job(client, "lifecycle", T0)
    run_job(client, "lifecycle", T0 + timedelta(days=1))
    runs = client.job_runs(5)
    assert [r["now_at"] for r in runs[:2]] == [T0 + timedelta(days=1), T0]
    assert runs[0]["status"] == "ok" and runs[0]["finished_at"] >= runs[0]["started_at"]
