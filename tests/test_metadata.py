"""App metadata: messages carry the app's JSON object, memories inherit it from the messages
they rest on, and recall, compile and the list filter on it (equality and membership), on
both recall paths alike."""

from __future__ import annotations

from datetime import timedelta

import pytest

from engrammar import Client, Database, InvalidInput, LocalEmbedder, Op, Settings
from tests.conftest import T0

U, C = "sam", "kitchen"
LATER = T0 + timedelta(hours=2)
SAID = [("I love baking sourdough bread.", {"topic": "cooking", "locale": "en"}),
        ("I play the cello in an orchestra.", {"topic": "music", "locale": "en"}),
        ("I love making fresh pasta.", {"topic": "cooking", "locale": "it"}),
        ("I run five kilometres every morning.", {})]


def _learnt(client: Client) -> dict[str, int]:
    for n, (text, meta) in enumerate(SAID):
        client.record(U, C, "user", text, at=T0 + timedelta(minutes=n), metadata=meta)
    client.extract(U, C, now=T0 + timedelta(hours=1))
    return {m.content: m.id for m in client.memories(U, C)}


def _ids(client: Client, query: str, where: dict[str, object] | None) -> list[int]:
    block = client.recall(U, C, query, now=LATER, record=False, where=where)
    return [i.memory_id for i in block.items if i.memory_id is not None]


def test_memories_inherit_their_messages_metadata(client: Client) -> None:
    learnt = _learnt(client)
    assert len(learnt) == 4, learnt
    by_content = {m.content: m.app_metadata for m in client.memories(U, C)}
    assert sorted(by_content.values(), key=str) == sorted(
        [meta for _, meta in SAID], key=str)
    assert client.log(U, C)[0].metadata == SAID[0][1]


def test_recall_and_the_list_filter_by_equality_and_membership(client: Client) -> None:
    learnt = _learnt(client)
    cooking = {i for c, i in learnt.items() if "sourdough" in c or "pasta" in c}
    music = {i for c, i in learnt.items() if "cello" in c}
    query = "what do I do for fun? cooking, music, sport?"
    assert set(_ids(client, query, None)) >= cooking | music
    assert set(_ids(client, query, {"topic": "cooking"})) == cooking
    assert set(_ids(client, query, {"topic": ["music", "sport"]})) == music
    assert set(_ids(client, query, {"topic": "cooking", "locale": "it"})) == {
        i for c, i in learnt.items() if "pasta" in c}
    assert _ids(client, query, {"topic": "gardening"}) == []
    assert {m.id for m in client.memories(U, C, where={"locale": ["en"]})} == {
        i for c, i in learnt.items() if "sourdough" in c or "cello" in c}
    compiled = client.compile(U, C, "Any ideas for the weekend?", now=LATER, record=False,
                              where={"topic": "music"})
    assert {i.memory_id for i in compiled.items if i.memory_id is not None} <= music


def test_both_recall_paths_filter_alike(clean: Database, embedder: LocalEmbedder) -> None:
    cached = Client(clean, settings=Settings(), embedder=embedder)
    _learnt(cached)
    scanning = Client(clean, settings=Settings(recall={"cache_memories": 0}),
                      embedder=embedder)
    for where in (None, {"topic": "cooking"}, {"locale": ["it", "en"]}, {"topic": "x"}):
        for query in ("bread", "what instrument do I play?", "morning routine"):
            a = cached.recall(U, C, query, now=LATER, record=False, where=where)
            b = scanning.recall(U, C, query, now=LATER, record=False, where=where)
            assert a.text == b.text, (where, query)


def test_an_update_keeps_the_metadata_of_what_it_replaces(client: Client) -> None:
    said = client.record(U, C, "user", "I live in Porto.", at=T0,
                         metadata={"source": "onboarding"})
    first = client.apply(U, C, [Op(op="add", type="profile", content="Lives in Porto",
                                   slot="home", evidence=[said])], now=T0)
    moved = client.record(U, C, "user", "I moved to Lisbon.", at=T0 + timedelta(days=1),
                          metadata={"locale": "pt"})
    client.apply(U, C, [Op(op="update", target=str(first.written[0]), type="profile",
                           content="Lives in Lisbon", slot="home", evidence=[moved])],
                 now=T0 + timedelta(days=1))
    [now_lives] = client.memories(U, C, ["active"])
    assert now_lives.app_metadata == {"source": "onboarding", "locale": "pt"}


@pytest.mark.parametrize("bad", [[1, 2], "topic=x", {1: "a"}, {"a": float("nan")},
                                 {"big": "x" * 5000}])
def test_metadata_that_is_not_a_small_json_object_is_refused(client: Client,
                                                              bad: object) -> None:
    with pytest.raises(InvalidInput):
        client.record(U, C, "user", "hello", at=T0, metadata=bad)  # type: ignore[arg-type]
    assert client.log(U, C) == []


@pytest.mark.parametrize("bad", [{}, {"topic": []}, {"topic": {"a": 1}}, ["topic"]])
def test_a_filter_that_is_not_keys_to_values_is_refused(client: Client, bad: object) -> None:
    with pytest.raises(InvalidInput):
        client.recall(U, C, "hi", now=LATER, where=bad)  # type: ignore[arg-type]
