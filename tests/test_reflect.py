"""Reflection through the real openai client against the local fake server."""

from __future__ import annotations

import json
from datetime import timedelta

import openai

from engrammar import Client, Database, LocalEmbedder, Op, Settings
from engrammar.runtime._llm import LLM
from engrammar.scheduler import _reflect as reflect
from tests.conftest import T0
from tests.fake_openai import FakeOpenAI, Scripted, completion
from tests.fake_openai import fake_openai as fake_openai  # the fixture

U, C = "u1", "c1"
FACTS = ["Runs every morning before work", "Trains for the Berlin marathon",
         "Tracks their pace on a watch", "Eats oatmeal before long runs",
         "Bought new running shoes last month"]


def test_reflections_cite_sources_and_second_run_changes_nothing(
        fake_openai: FakeOpenAI, clean: Database, embedder: LocalEmbedder) -> None:
    oa = openai.OpenAI(base_url=fake_openai.url, api_key="test", max_retries=0, timeout=5)
    client = Client(clean, settings=Settings(), embedder=embedder,
                    llm=LLM(oa, "gpt-4o-mini", db=clean, max_retries=0))
    client.apply(U, C, [Op(op="add", type="profile", content=f) for f in FACTS], now=T0)
    answer = {"reflections": [
        {"content": "Running is central to their daily life", "sources": ["m1", "m2", "m9"],
         "confidence": 0.8},
        {"content": "Has an unfounded guess", "sources": [], "confidence": 0.9}]}
    fake_openai.enqueue(Scripted(body=completion(json.dumps(answer))))
    now = T0 + timedelta(days=7)
    report = reflect.run(client, now)
    assert report.to_json()["applied"] == 1 and report.errors == []
    reflection = next(m for m in client.memories(U, C) if m.type.value == "reflection")
    ids = sorted(m.id for m in client.memories(U, C) if m.type.value == "profile")[:2]
    assert reflection.metadata["source_memory_ids"] == ids  # m9 does not exist: dropped
    sent = fake_openai.requests[0].content("user")
    assert "m1 [profile] Runs every morning" in sent
    again = reflect.run(client, now + timedelta(hours=1))
    assert again.chats == 0 and fake_openai.pending == 0
    oa.close()
