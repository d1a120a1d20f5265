"""Changes a user says in passing: a move to a place chat writes in lower case, and a doing
said to be over, from what was said to the memory it ends (extractor, gate and writer, on
the real database)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from engrammar import Client
from engrammar.extract.parser._extractor import ParserExtractor
from engrammar.models import MemoryType, Message, Op, Role, Scope, Status

AT = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def ops_of(text: str) -> list[Op]:
    said = Message(id=1, user_id="u", chat_id="c", role=Role.user, content=text, at=AT)
    return ParserExtractor().extract(Scope(user_id="u", chat_id="c"), [said], [], AT).ops


@pytest.mark.parametrize(("text", "home"), [
    # a lower-case place parsed as the noun of a "to" clause
    ("we moved to cork", "Lives in cork"),
    # the "to" hangs off the verb's adverb, before a name
    ("I moved back to Leeds", "Lives in Leeds"),
    ("we moved back to the uk", "Lives in the uk"),
])
def test_a_move_gives_the_home(text: str, home: str) -> None:
    ops = ops_of(text)
    assert any(op.type is MemoryType.profile and op.slot == "home"
               and op.content.startswith(home) for op in ops), ops


@pytest.mark.parametrize("text", [
    "i moved to help my mum", "i moved to work for the nhs", "i moved here to study",
    "we moved to downsize last year", "i got moved back to the warehouse",
    "i moved back to part time", "moved back to windows after trying linux",
    "we've moved the dog to raw feeding"])
def test_a_move_for_a_reason_names_no_home(text: str) -> None:
    assert not any(op.slot == "home" for op in ops_of(text)), ops_of(text)


def told(client: Client, before: str, after: str) -> tuple[Client, int]:
    """A chat told ``before`` one night and ``after`` the next, read by the offline
    extractor each night, and the id of the memory the first night stored of ``before``."""
    c = Client(client.db, settings=client.settings, embedder=client.embedder,
               extractor=ParserExtractor())
    c.record("u1", "c1", "user", before, at=AT)
    c.extract("u1", "c1", now=AT + timedelta(hours=1))
    [held] = c.memories("u1", "c1")
    c.record("u1", "c1", "user", after, at=AT + timedelta(days=1))
    c.extract("u1", "c1", now=AT + timedelta(days=1, hours=1))
    return c, held.id


def test_a_doing_said_to_be_over_retires_its_memory(client: Client) -> None:
    c, held = told(client, "I do the school run every morning",
                   "i dont do the school run anymore since my husband went part time. "
                   "what can i do with my mornings")
    after = {m.id: m for m in c.memories("u1", "c1")}
    assert after[held].status is not Status.active
    assert any(m.status is Status.active and "anymore" in m.content for m in after.values())


def test_someone_elses_doing_over_leaves_the_memory(client: Client) -> None:
    c, held = told(client, "I do the school run every morning",
                   "my sister doesnt do the school run anymore, her kids get the bus. is "
                   "that safe at 11?")
    assert c.get("u1", "c1", held).status is Status.active


@pytest.mark.parametrize("text", ["you can mention my sister tho",
                                  "you can talk about my ex now, im over it",
                                  "you may bring up my dad again"])
def test_a_permission_keeps_nothing_out(text: str) -> None:
    assert not any(op.content.startswith(("Never mention", "Does not want"))
                   for op in ops_of(text)), ops_of(text)


@pytest.mark.parametrize("text", ["please never mention my ex", "you can't mention my ex",
                                  "can you not mention my ex", "you can leave my ex out of it",
                                  "you can no longer mention my ex",
                                  "you can refuse to talk about my ex",
                                  "you can treat my ex as off limits"])
def test_a_boundary_still_keeps_its_topic_out(text: str) -> None:
    assert any(op.content == "Never mention their ex" for op in ops_of(text)), ops_of(text)


def test_a_boundary_lifted_leaves_the_prompt(client: Client) -> None:
    c, held = told(client, "please never mention my ex",
                   "you can talk about my ex now, im over it")
    assert c.get("u1", "c1", held).status is not Status.active


@pytest.mark.parametrize("text", ["can you mention my ex?", "could you talk about my ex?",
                                  "can u bring up my dad?"])
def test_asking_to_raise_a_topic_keeps_it_not_out(text: str) -> None:
    assert not any(op.content.startswith(("Never mention", "Does not want"))
                   for op in ops_of(text)), ops_of(text)


@pytest.mark.parametrize("text", ["can you not mention my ex",
                                  "can you never mention my ex again?"])
def test_asking_not_to_raise_it_is_a_boundary(text: str) -> None:
    assert any(op.content == "Never mention their ex" for op in ops_of(text)), ops_of(text)
