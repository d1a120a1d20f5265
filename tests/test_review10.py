"""What the tenth stop's review found its readings doing wrong, each kept from coming back:
a remark about the assistant taken for a style, thanks that hid one, a relative's details
after a label given to the user, "my X and I" losing the user's own home, a span of years
read as a due day or its "ago" lost, a title cutting a name, and a feeling's detail lost."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engrammar.extract.parser._extractor import ParserExtractor
from engrammar.models import MemoryType, Message, Op, Role, Scope

AT = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def ops_of(text: str) -> list[Op]:
    said = Message(id=1, user_id="u", chat_id="c", role=Role.user, content=text, at=AT)
    return ParserExtractor().extract(Scope(user_id="u", chat_id="c"), [said], [], AT).ops


def contents(text: str) -> list[str]:
    return [op.content for op in ops_of(text)]


@pytest.mark.parametrize("text", ["I hate that you use so many emojis",
                                  "I noticed you always answer in bullet points"])
def test_a_remark_about_the_assistant_is_no_style_of_reply(text: str) -> None:
    assert not any(op.type is MemoryType.protocol for op in ops_of(text)), ops_of(text)


def test_thanks_and_a_style_in_one_sentence_keep_the_style() -> None:
    ops = ops_of("Thank you for the tips, keep answers short from now on")
    assert any(op.type is MemoryType.protocol and "short" in op.content for op in ops), ops


def test_a_label_that_says_whose_keeps_them_theirs() -> None:
    found = contents("My wife: 38, teacher, lives in Leeds")
    assert not any(c.startswith(("Lives in", "Works as", "Is 38")) for c in found), found


def test_my_x_and_i_still_say_where_the_user_lives() -> None:
    assert "Lives in Bristol" in " ".join(contents("My husband and I live in Bristol"))


def test_a_span_of_years_is_no_due_day_and_ago_stays() -> None:
    assert not any(op.due is not None for op in ops_of("I'm retiring after 40 years of "
                                                       "teaching"))
    assert any("ago" in c for c in contents("I worked at Tesco 2 years ago")), \
        contents("I worked at Tesco 2 years ago")


def test_a_title_is_part_of_the_name() -> None:
    names = [op.content for op in ops_of("My name is Dr. Okoro") if op.slot == "name"]
    assert names == ["Name is Dr. Okoro"], names


def test_a_feeling_keeps_what_it_is_about() -> None:
    assert any("knee" in c for c in contents("I feel pain in my knee today"))
