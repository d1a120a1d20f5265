"""The type of what a message states, learned from typed messages (parser._kinds): a taste
is a preference, a thing done on a day is an event, a thing ahead is a plan. None of these
messages, nor their topics, is in the files the model is trained on (bench/data)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engrammar.extract.parser._extractor import ParserExtractor
from engrammar.models import MemoryType, Message, OpKind, Role, Scope

AT = datetime(2026, 11, 4, 9, 0, tzinfo=UTC)  # a Wednesday


def typed(text: str, asked: str | None = None) -> list[tuple[MemoryType | None, str]]:
    messages = [Message(id=1, user_id="u", chat_id="c", role=Role.assistant, content=asked,
                        at=AT)] if asked else []
    messages.append(Message(id=2, user_id="u", chat_id="c", role=Role.user, content=text,
                            at=AT))
    ops = ParserExtractor().extract(Scope(user_id="u", chat_id="c"), messages, [], AT).ops
    # (a thing done is proposed as a resolution with its type: with no plan to close it
    # is kept as that type, an episode)
    return [(op.type, op.content) for op in ops if op.op is OpKind.add
            or (op.op is OpKind.close_loop and op.type is not None)]


@pytest.mark.parametrize(("text", "kind"), [
    ("anime every night after work, currently rewatching Frieren", MemoryType.preference),
    ("geocaching most sundays with the kids, we're up to 300 finds", MemoryType.preference),
    ("lost my wallet on the tram on monday, cards all cancelled now", MemoryType.episodic),
    ("handed in my notice at the garage yesterday, 4 weeks to go", MemoryType.episodic),
    ("my allotment show is a week on saturday and the marrows are not ready",
     MemoryType.open_loop),
])
def test_a_statement_is_kept_as_the_type_people_give_it(text: str, kind: MemoryType
                                                        ) -> None:
    found = typed(text)
    assert found and found[0][0] is kind, found


def test_a_state_with_a_day_soon_ahead_is_a_plan_when_the_type_model_leans_to_one() -> None:
    trip = typed("Whaddya at b'y. goin out to Funk Island on the boat in 5 days if the "
                 "weather holds, me and the brother")
    assert trip and trip[0][0] is MemoryType.open_loop, trip
    # a date that recurs is no plan, whatever day it names
    birthday = typed("my birthday is on the 14th of March")
    assert birthday and birthday[0][0] is MemoryType.profile, birthday


def test_a_weekday_said_in_the_present_is_ahead_and_in_the_past_is_done() -> None:
    ahead = typed("ugh the moshing gig is on friday and I still have no ticket sorted")
    done = typed("went to a moshing gig on friday, ears still ringing")
    assert ahead and ahead[0][0] is MemoryType.open_loop, ahead
    assert done and done[0][0] is MemoryType.episodic, done


@pytest.mark.parametrize(("text", "asked"), [
    ("3 lads", "Got any kids who'll be crowding round the telly too?"),
    ("two, both teenagers", "Do you have kids?"),
])
def test_an_answer_that_tells_of_nothing_done_is_no_episode(text: str, asked: str) -> None:
    # the type model leans to an event for these; nothing is told as done, on no day gone
    found = typed(text, asked)
    assert found and found[0][0] is not MemoryType.episodic, found
