"""What someone is, when no list knows the word: a lasting fact ("narcoleptic",
"immunocompromised") is kept, a judgement or a passing state ("frazzled", "a wee rascal")
is not, for the user and for their people. The words here are none of the training file's
complements (bench/data/attribute_labels.jsonl)."""

from __future__ import annotations

import pytest

from tests.test_whose import said


@pytest.mark.parametrize(("text", "fact"), [
    ("im narcoleptic so mornings are rough", "Is narcoleptic"),
    ("I'm immunocompromised, for what it's worth", "Is immunocompromised"),
])
def test_what_the_user_lastingly_is_is_kept(text: str, fact: str) -> None:
    found = said(text)
    assert any(c.startswith(fact) for c in found), found


@pytest.mark.parametrize("text", ["I'm frazzled", "I'm so frazzled today lol"])
def test_a_passing_state_of_the_user_is_no_profile(text: str) -> None:
    assert not any(c.startswith("Is frazzled") for c in said(text)), said(text)


def test_a_condition_the_user_has_is_kept() -> None:
    assert any(c.startswith("Has sarcoidosis") for c in said("I've got sarcoidosis so stairs "
                                                            "are hard"))
    assert not any(c.startswith("Has a splinter") for c in said("got a splinter lol"))


def test_a_relatives_condition_is_kept_and_a_judgement_is_not() -> None:
    assert any("narcoleptic" in c for c in said("my husband is narcoleptic"))
    assert not any("rascal" in c for c in said("my son is a wee rascal"))
