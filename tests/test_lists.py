"""A list of fragments about the speaker, each read on its own, with or without a label
before it; a list that names someone else, or says nothing a fragment reading knows,
keeps nothing of the user's."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engrammar.extract.parser._extractor import ParserExtractor
from engrammar.models import Message, Role, Scope

AT = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def contents(text: str) -> list[str]:
    said = Message(id=1, user_id="u", chat_id="c", role=Role.user, content=text, at=AT)
    return [op.content for op in
            ParserExtractor().extract(Scope(user_id="u", chat_id="c"), [said], [], AT).ops]


@pytest.mark.parametrize(("text", "kept"), [
    ("vegan, 2 cats, live in Leeds", ["Is vegan", "Has 2 cats", "Lives in Leeds"]),
    ("about me: vegan, 2 cats, live in Leeds", ["Is vegan", "Has 2 cats", "Lives in Leeds"]),
    ("a bit about myself: 29, nurse, live in Hull",
     ["Is 29 years old", "Works as a nurse", "Lives in Hull"]),
    ("34, nurse, 2 kids, live in Derby. whats a good budget app",
     ["Is 34 years old", "Works as a nurse", "Has 2 kids", "Lives in Derby"]),
])
def test_each_fragment_of_a_list_is_read(text: str, kept: list[str]) -> None:
    found = contents(text)
    assert all(k in found for k in kept), found


@pytest.mark.parametrize("text", ["eggs, milk, bread, butter",
                                  "me, my wife and the kids, all vegan",
                                  "my wife: 38, teacher, lives in Leeds"])
def test_a_list_that_is_not_the_speakers_keeps_no_fact_of_theirs(text: str) -> None:
    found = contents(text)
    assert not any(c.startswith(("Is ", "Has ", "Lives in", "Works as")) for c in found), found


def test_a_second_allergy_the_tagger_took_for_a_verb_is_kept() -> None:
    assert "Is allergic to nuts and shellfish" in contents("I'm allergic to nuts and shellfish")
    found = contents("I'm allergic to cats and I love dogs")
    assert "Is allergic to cats" in found and "Likes dogs" in found, found
