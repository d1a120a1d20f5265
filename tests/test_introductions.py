"""The user's name given without "my name is" (parser._introductions)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engrammar.extract.parser._extractor import ParserExtractor
from engrammar.models import Message, Role, Scope

AT = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def names_in(text: str) -> list[str]:
    said = Message(id=1, user_id="u", chat_id="c", role=Role.user, content=text, at=AT)
    ops = ParserExtractor().extract(Scope(user_id="u", chat_id="c"), [said], [], AT).ops
    return [op.content for op in ops if op.slot == "name"]


@pytest.mark.parametrize(("text", "name"), [
    ("Priyanka here, need a hand with a cover letter", "Priyanka"),
    ("I'm Tomás by the way, nice to meet you", "Tomás"),
    ("myself Karthik, from Chennai", "Karthik"),
    # (a greeting before it)
    ("hey, Marisol here, quick one about my tax code", "Marisol"),
    ("Hello, Chidi here.", "Chidi"),
    ("so, myself Ramesh, from Pune", "Ramesh"),
    # (a name written with a hyphen is one name)
    ("Hi. I am Min-jun, from Daegu.", "Min-jun"),
])
def test_an_introduction_gives_the_users_name(text: str, name: str) -> None:
    assert names_in(text) == [f"Name is {name}"]


@pytest.mark.parametrize("text", ["I'm Irish, from Sligo", "I'm Hindu so no beef please",
                                  "honestly I'm Exhausted today",
                                  "I'm Type 1 and walking the Camino next spring",
                                  "I'm Year 10 so keep it simple"])
def test_a_nationality_a_faith_or_a_state_is_no_name(text: str) -> None:
    assert names_in(text) == []


def test_a_name_given_is_not_also_what_they_are() -> None:
    said = Message(id=1, user_id="u", chat_id="c", role=Role.user, content="I'm Tomás btw",
                   at=AT)
    ops = ParserExtractor().extract(Scope(user_id="u", chat_id="c"), [said], [], AT).ops
    assert [op.content for op in ops] == ["Name is Tomás"]


@pytest.mark.parametrize(("text", "name"), [
    ("names Kwame btw, im a bus driver in Accra", "Kwame"),  # (a chat word after it: no name)
    ("my name is Soo-ah", "Soo-ah"),
])
def test_my_name_is_gives_the_name_alone_and_whole(text: str, name: str) -> None:
    assert names_in(text) == [f"Name is {name}"]


def test_what_an_introduction_says_beside_who_they_are_is_kept() -> None:
    # The origin and the age are read as slots; the place, the studies and the college
    # said between them are no slot's, and stay in the speaker's words beside them.
    said = Message(id=1, user_id="u", chat_id="c", role=Role.user, at=AT,
                   content="I'm from Lagos but now in Toronto studying nursing at Humber, 27.")
    ops = ParserExtractor().extract(Scope(user_id="u", chat_id="c"), [said], [], AT).ops
    assert any(op.slot == "origin" for op in ops)
    assert any("Toronto" in op.content and "Humber" in op.content for op in ops)
    # nothing is left out of a name and a home town, and nothing is said twice
    said = said.model_copy(update={"content": "I'm Priya, from Pune."})
    ops = ParserExtractor().extract(Scope(user_id="u", chat_id="c"), [said], [], AT).ops
    assert [op.content for op in ops] == ["Name is Priya", "Is from Pune"]
