"""Per-chat fault containment: a hostile or broken model answer for one chat fails that
chat only, rolled back and reported with its id, whether it comes first, in the middle or
last; the other chats are extracted as if it were not there. Through the fake server and
the real openai client."""

from __future__ import annotations

from typing import Any

import pytest

from engrammar import Scope
from engrammar.models import Status
from engrammar.scheduler import _extract as extract
from tests.fake_openai import Scripted, completion, ops_reply
from tests.fake_openai import fake_openai as fake_openai  # the fixture
from tests.test_llm_extract import Rig, night
from tests.test_llm_extract import make_rig as make_rig  # the fixture
from tests.test_llm_extract import rig as rig  # the fixture

CHATS = [Scope(user_id="u1", chat_id=c) for c in ("a", "b", "c")]


def _add(content: str) -> dict[str, Any]:
    return {"op": "add", "type": "preference", "content": content, "confidence": 0.9,
            "salience": 0.7, "evidence": []}


BAD: dict[str, Scripted] = {
    # A lone surrogate in the content: no UTF-8 encoder (nor the tokenizer) takes it.
    "surrogate": ops_reply([_add("Likes green tea \ud800 every morning")]),
    # 2 MB of content: over the memory cap, and over what a tsvector holds.
    "huge": ops_reply([_add("Likes tea " + "x" * 2_000_000)]),
    # More ops in one answer than MEMORY_MAX_OPS_PER_ANSWER.
    "runaway": ops_reply([_add(f"Likes tea number {i}") for i in range(101)]),
    # Not JSON at all.
    "garbage": Scripted(body=completion('{"ops": [{"op": "add", "content": ')),
    # A NUL inside an id the model made up.
    "nul_target": ops_reply([{"op": "forget", "target": "m1\x00", "content": "x"}]),
}


@pytest.mark.parametrize("kind", sorted(BAD))
@pytest.mark.parametrize("position", [0, 1, 2], ids=["first", "middle", "last"])
def test_a_bad_answer_fails_its_chat_only(rig: Rig, position: int, kind: str) -> None:
    for scope in CHATS:
        rig.record(scope, [f"I really like the tea shop in {scope.chat_id}-town, always."])
    answers = [ops_reply([_add(f"Likes the tea shop in {s.chat_id}-town")]) for s in CHATS]
    answers[position] = BAD[kind]
    rig.fake.enqueue(*answers)

    report = extract.run(rig.client, now=night(1))

    bad = CHATS[position]
    assert [e["chat"] for e in report.errors] == [str(bad)], report.errors
    assert report.chats == 2 and report.applied == 2
    for scope in CHATS:
        memories = rig.memories(scope, Status.active)
        if scope == bad:
            # Rolled back whole: nothing written, the watermark where it was.
            assert memories == [] and rig.watermark(scope) == 0
        else:
            assert [m.content for m in memories] == [
                f"Likes the tea shop in {scope.chat_id}-town"]
