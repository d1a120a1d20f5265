"""Scopes (DESIGN invariant 1): a memory of a user-wide type belongs to the user and every
chat of theirs recalls it, bar a private one; the rest stay in their chat; nothing of one
user reaches another. One fact per slot per user, whichever chat learnt it."""

from __future__ import annotations

from datetime import timedelta

import pytest

from engrammar import Client, Database, LocalEmbedder, Op, Scope, Settings, store
from tests.conftest import T0

LATER = T0 + timedelta(hours=1)


@pytest.fixture
def shared(clean: Database, embedder: LocalEmbedder) -> Client:
    return Client(clean, settings=Settings(scopes={"user_wide": ["profile", "preference"]}),
                  embedder=embedder)


def _ids(client: Client, user: str, chat: str, query: str) -> set[int]:
    block = client.recall(user, chat, query, now=LATER, record=False)
    return {i.memory_id for i in block.items if i.memory_id is not None}


def _add(client: Client, user: str, chat: str, type_: str, content: str,
         slot: str | None = None) -> int:
    result = client.apply(user, chat, [Op(op="add", type=type_, content=content,
                                          confidence=0.9, salience=0.8, slot=slot)], now=T0)
    assert result.applied == 1, result.to_json()
    return result.written[0]


def test_by_default_every_memory_stays_in_its_chat(client: Client) -> None:
    home = _add(client, "sam", "kitchen", "profile", "Lives in Glasgow")
    assert home not in _ids(client, "sam", "other", "Where do I live? Glasgow?")
    assert home in _ids(client, "sam", "kitchen", "Where do I live?")
    assert [m.id for m in client.memories("sam", "other")] == []


def test_a_user_wide_memory_reaches_every_chat_of_its_user_and_no_other_user(
        shared: Client) -> None:
    home = _add(shared, "sam", "kitchen", "profile", "Lives in Glasgow")
    trip = _add(shared, "sam", "kitchen", "episodic", "Went hiking in Glasgow last week")
    assert {home, trip} <= _ids(shared, "sam", "kitchen", "Glasgow hiking where do I live")
    elsewhere = _ids(shared, "sam", "other", "Glasgow hiking where do I live")
    assert home in elsewhere and trip not in elsewhere  # episodic: the chat's own
    assert [m.id for m in shared.memories("sam", "other")] == [home]
    assert shared.get("sam", "other", home).content == "Lives in Glasgow"
    # Another user, whatever the chat: nothing.
    for chat in ("kitchen", "other"):
        assert not _ids(shared, "alex", chat, "Glasgow hiking where do I live") & {home, trip}
        assert shared.memories("alex", chat) == []


def test_a_private_chat_neither_sees_nor_feeds_the_users_scope(shared: Client) -> None:
    shared.set_private("sam", "therapy")
    assert shared.is_private("sam", "therapy") and not shared.is_private("sam", "kitchen")
    home = _add(shared, "sam", "kitchen", "profile", "Lives in Glasgow")
    secret = _add(shared, "sam", "therapy", "profile", "Is estranged from a brother")
    assert home not in _ids(shared, "sam", "therapy", "Where do I live? Glasgow?")
    assert secret in _ids(shared, "sam", "therapy", "my brother")
    assert secret not in _ids(shared, "sam", "kitchen", "my brother estranged")
    assert secret not in _ids(shared, "sam", "new-chat", "my brother estranged")
    shared.set_private("sam", "therapy", False)  # back in: it sees the user's scope again
    assert home in _ids(shared, "sam", "therapy", "Where do I live? Glasgow?")


def test_one_value_per_slot_per_user_whichever_chat_learnt_it(shared: Client) -> None:
    first = _add(shared, "sam", "kitchen", "profile", "Lives in Glasgow", slot="home")
    again = shared.apply("sam", "travel", [Op(op="add", type="profile",
                                               content="Lives in Glasgow", slot="home")],
                         now=LATER)
    assert again.decisions[0].op is not None and again.decisions[0].op.op.value == "reinforce"
    assert again.written == [first]
    moved = shared.apply("sam", "travel", [Op(op="add", type="profile",
                                               content="Lives in Lisbon", slot="home")],
                         now=LATER)
    assert moved.decisions[0].op is not None and moved.decisions[0].op.op.value == "update"
    live = [m for m in shared.memories("sam", "kitchen") if m.status.value == "active"]
    assert [m.content for m in live] == ["Lives in Lisbon"]
    assert shared.get("sam", "kitchen", first).status.value == "archived"
    assert [e.op for e in shared.history("sam", "travel", first)] == [
        "add", "reinforce", "superseded"]


def test_extraction_in_a_second_chat_reinforces_the_fact_of_the_first(shared: Client
                                                                         ) -> None:
    shared.record("robin", "one", "user", "I'm Robin and I live in Lisbon.", at=T0)
    shared.extract("robin", "one", now=T0 + timedelta(minutes=1))
    learnt = [m for m in shared.memories("robin", "two") if "Lisbon" in m.content]
    assert len(learnt) == 1
    shared.record("robin", "two", "user", "I live in Lisbon, by the way.",
                  at=T0 + timedelta(hours=2))
    report = shared.extract("robin", "two", now=T0 + timedelta(hours=3))
    assert report.chats == 1 and report.messages == 1
    after = [m for m in shared.memories("robin", "two") if "Lisbon" in m.content
             and m.status.value == "active"]
    assert [m.id for m in after] == [learnt[0].id] and after[0].reinforce_count == 1


def test_a_user_wide_memory_forgotten_in_one_chat_hides_its_words_in_the_other(
        clean: Database, embedder: LocalEmbedder) -> None:
    client = Client(clean, settings=Settings(scopes={"user_wide": ["profile"]},
                                             fresh={"embed_at_record": True}),
                    embedder=embedder)
    said = client.record("sam", "kitchen", "user", "I live in Glasgow near the river.",
                         at=T0)
    client.extract("sam", "kitchen", now=T0 + timedelta(minutes=1))
    [home] = [m for m in client.memories("sam", "travel") if "Glasgow" in m.content]

    def quoted() -> set[int | None]:
        block = client.recall("sam", "kitchen", "Glasgow river", now=LATER, record=False)
        return {i.message_id for i in block.items if i.section == "excerpt"}

    kitchen = Scope(user_id="sam", chat_id="kitchen")
    with clean.connection() as conn:
        assert said not in store.hidden_messages(conn, kitchen)
    forgot = client.apply("sam", "travel", [Op(op="forget", target=str(home.id),
                                               content="where I live")], now=LATER)
    assert forgot.applied == 1, forgot.to_json()
    with clean.connection() as conn:  # the forget, in the user's scope, hides it here
        assert said in store.hidden_messages(conn, kitchen)
    assert said not in quoted()
    assert all(m.status.value == "archived" for m in client.memories("sam", "kitchen")
               if m.id == home.id)
