"""Memory before the night: extraction on call, the idle-extract job, and messages
embedded at ``record`` so the log excerpts quote the same day's words at once."""

from __future__ import annotations

from datetime import timedelta

from engrammar import Client, Database, LocalEmbedder, Scope, Settings, store
from engrammar.recall._block import Block
from engrammar.scheduler import _extract as extract
from engrammar.scheduler import _index_log as index_log
from tests.conftest import T0

U = "robin"


def _excerpts(block: Block) -> dict[int, str]:
    return {i.message_id: i.content for i in block.items
            if i.section == "excerpt" and i.message_id is not None}


def test_extract_on_call_makes_memories_of_one_chat_now(client: Client) -> None:
    client.record(U, "a", "user", "I live in Lisbon.", at=T0)
    client.record(U, "b", "user", "My sister is called Mia.", at=T0)
    report = client.extract(U, "a", now=T0 + timedelta(minutes=1))
    assert report.chats == 1 and report.messages == 1 and report.applied == 1
    assert [m.content for m in client.memories(U, "a")] == ["Lives in Lisbon"]
    assert client.memories(U, "b") == []  # the other chat waits for its own turn
    again = client.extract(U, "a", now=T0 + timedelta(minutes=2))
    assert again.messages == 0 and again.applied == 0  # idempotent


def test_the_idle_job_extracts_a_chat_once_it_is_quiet(client: Client) -> None:
    idle = timedelta(minutes=client.settings.fresh.idle_minutes)
    client.record(U, "a", "user", "I live in Lisbon.", at=T0)
    client.record(U, "a", "user", "I work as a nurse.", at=T0 + timedelta(minutes=5))
    early = extract.idle(client, T0 + timedelta(minutes=5) + idle / 2)
    assert early.chats == 0 and client.memories(U, "a") == []  # still talking
    done = extract.idle(client, T0 + timedelta(minutes=5) + idle)
    assert done.chats == 1 and done.messages == 2
    assert {m.content for m in client.memories(U, "a")} == {"Lives in Lisbon",
                                                           "Works as a nurse"}
    assert extract.idle(client, T0 + timedelta(hours=5)).chats == 0  # nothing new


def test_an_idle_minutes_of_zero_turns_the_job_off(clean: Database,
                                                  embedder: LocalEmbedder) -> None:
    off = Client(clean, settings=Settings(fresh={"idle_minutes": 0}), embedder=embedder)
    off.record(U, "a", "user", "I live in Lisbon.", at=T0)
    assert extract.idle(off, T0 + timedelta(days=1)).chats == 0


def test_a_message_embedded_at_record_is_quoted_the_same_day(clean: Database,
                                                             embedder: LocalEmbedder
                                                             ) -> None:
    fresh = Client(clean, settings=Settings(fresh={"embed_at_record": True}),
                   embedder=embedder)
    said = fresh.record(U, "a", "user", "my sister Ines is getting married in Porto",
                        at=T0)
    fresh.record(U, "a", "system", "be brief", at=T0 + timedelta(seconds=1))
    later = fresh.record(U, "a", "assistant", "Congratulations to Ines!",
                         at=T0 + timedelta(seconds=2))
    block = fresh.recall(U, "a", "when is Ines's wedding?", now=T0 + timedelta(minutes=30),
                         record=False)
    assert said in _excerpts(block)
    with clean.connection() as conn:
        row = conn.execute("SELECT indexed_through FROM chats WHERE user_id = %s"
                           " AND chat_id = 'a'", (U,)).fetchone()
    assert row is not None and row[0] == later
    # The index job finds nothing left to do, and the excerpt stays.
    assert index_log.run(fresh, T0 + timedelta(hours=1)).embedded == 0
    assert said in _excerpts(fresh.recall(U, "a", "Ines wedding Porto",
                                          now=T0 + timedelta(hours=1), record=False))


def test_without_the_setting_record_embeds_nothing(client: Client) -> None:
    client.record(U, "a", "user", "my sister Ines is getting married in Porto", at=T0)
    with client.db.connection() as conn:
        rows = store.unindexed_messages(conn, Scope(user_id=U, chat_id="a"), 0, 10)
    assert len(rows) == 1
    block = client.recall(U, "a", "when is Ines's wedding?", now=T0 + timedelta(minutes=30),
                          record=False)
    assert _excerpts(block) == {}
