"""A second allergen the tagger took for a verb, and hung on the copula, is kept."""

from __future__ import annotations

from datetime import UTC, datetime

from engrammar.extract.parser._extractor import ParserExtractor
from engrammar.models import Message, Role, Scope

AT = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def contents(text: str) -> list[str]:
    said = Message(id=1, user_id="u", chat_id="c", role=Role.user, content=text, at=AT)
    return [op.content for op in
            ParserExtractor().extract(Scope(user_id="u", chat_id="c"), [said], [], AT).ops]


def test_a_second_allergy_the_tagger_took_for_a_verb_is_kept() -> None:
    assert "Is allergic to nuts and shellfish" in contents("I'm allergic to nuts and shellfish")
    found = contents("I'm allergic to cats and I love dogs")
    assert "Is allergic to cats" in found and "Likes dogs" in found, found
