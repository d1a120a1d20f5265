"""What someone says they do for a living, when no list knows the trade: "I'm a loss
adjuster" takes the job slot, so a new job said that way replaces the old one; a workplace,
a contract or an employer said where a job could be is no job. The phrases here are none
of the training file's (bench/data/job_nouns.jsonl)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from engrammar import Client
from engrammar.extract.parser._extractor import ParserExtractor
from engrammar.models import Message, Role, Scope
from engrammar.scheduler import _extract as extract
from tests.conftest import T0
from tests.test_extract import NIGHT1, NIGHT2, A, contents

AT = datetime(2026, 11, 2, 9, tzinfo=UTC)


def jobs(*turns: tuple[Role, str]) -> list[str]:
    """The contents of the job ops the extractor proposes for a chat."""
    messages = [Message(id=n + 1, user_id="u", chat_id="c", role=role, content=text,
                        at=AT + timedelta(minutes=n)) for n, (role, text) in enumerate(turns)]
    ops = ParserExtractor().extract(Scope(user_id="u", chat_id="c"), messages, [], AT).ops
    return [op.content for op in ops if op.slot == "job"]


@pytest.mark.parametrize(("text", "job"), [
    ("I'm a loss adjuster for Aviva, so claims are my whole week", "loss adjuster"),
    ("im freight forwarder for a shipping firm at the port now", "freight forwarder"),
])
def test_a_trade_no_list_names_takes_the_job_slot(text: str, job: str) -> None:
    (found,) = jobs((Role.user, text))
    assert found.startswith("Works as") and job in found, found


@pytest.mark.parametrize("turns", [
    [(Role.user, "I'm on a rolling contract at a care home, it's grim")],
    [(Role.assistant, "Where are you working these days?"),
     (Role.user, "big removals outfit near the airport")],
    [(Role.user, "I'm a season ticket holder at Elland Road")],
])
def test_a_workplace_or_an_arrangement_is_no_job(turns: list[tuple[Role, str]]) -> None:
    assert jobs(*turns) == []


def test_a_new_trade_replaces_the_job_it_follows(client: Client) -> None:
    client.record("u1", "c1", "user", "I work as a bank teller in Nakuru.", at=T0)
    extract.run(client, now=NIGHT1)
    assert any("teller" in c for c in contents(client, A)), contents(client, A)
    client.record("u1", "c1", "user", "so i finally left the bank, now im freight "
                  "forwarder for a shipping firm at the port", at=T0 + timedelta(days=1))
    extract.run(client, now=NIGHT2)
    now = contents(client, A)
    assert not any("teller" in c for c in now), now
    assert any("freight forwarder" in c for c in now), now
