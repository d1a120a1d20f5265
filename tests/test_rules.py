"""The offline rule extractor on common phrasings: what it proposes, and what it leaves out.
Pure: no database."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory.models import MemoryType, Message, OpKind, Role
from memory.rules import asks_not_to_mention, extract_rules
from memory.summary import ExtractiveSummarizer
from memory.tokens import counter_from_setting

AT = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)  # a Monday


def ops_of(*texts: str) -> list[tuple[str, str | None, str]]:
    messages = [Message(id=i, user_id="u", chat_id="c", role=Role.user, content=t, at=AT)
                for i, t in enumerate(texts, start=1)]
    return [(op.op.value, op.type.value if op.type else None, op.content)
            for op in extract_rules(messages)]


@pytest.mark.parametrize("text", [
    "I love that idea!", "I like it, thanks!", "I love it so much", "I like your style",
    "I have to go now, talk later.", "I need to think about it though.",
    "I want to know more about that.", "I have to run.",
])
def test_conversational_reactions_store_nothing(text: str) -> None:
    assert ops_of(text) == []


def test_real_preferences_and_plans_still_count() -> None:
    assert ops_of("I love that coffee shop on Elm Street.", "I need to call the bank.") == [
        ("add", "preference", "Likes that coffee shop on Elm Street"),
        ("add", "open_loop", "Plans to call the bank")]


def test_a_comma_before_a_new_subject_ends_the_statement() -> None:
    assert ops_of("I love coffee, it keeps me going.",
                  "Please don't bring up my divorce, it's still raw.") == [
        ("add", "preference", "Likes coffee"),
        ("add", "protocol", "Does not want their divorce brought up")]


def test_no_longer_liking_is_a_dislike_of_the_thing() -> None:
    assert ops_of("I don't like coffee anymore, it makes me jittery.") == [
        ("add", "preference", "Dislikes coffee")]


def test_a_dated_past_event_is_an_episode_and_maybe_a_resolution() -> None:
    ops = ops_of("Yesterday I visited the Art Gallery of Ontario.")
    assert [(kind, type_) for kind, type_, _ in ops] == [("close_loop", None),
                                                        ("add", MemoryType.episodic.value)]
    assert "Art Gallery of Ontario" in ops[1][2]
    assert [k for k, _, _ in ops_of("I finally called mom.")] == [OpKind.close_loop.value]


def test_requests_not_to_mention_stay_out_of_summaries() -> None:
    assert asks_not_to_mention("Please never mention my ex")
    assert asks_not_to_mention("Don't bring up my divorce, it's still raw.")
    assert not asks_not_to_mention("My ex moved to Paris.")
    summary = ExtractiveSummarizer(counter_from_setting(None)).summarize(
        "day", ["user: I started running again. Please don't bring up my divorce."], AT)
    assert "running" in summary and "divorce" not in summary
