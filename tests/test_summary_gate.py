"""Whether a sentence asks not to be mentioned is decided by the rules on a parse, where only
sentences that could ask are given to them (parser._requests.could_ask_not_to_mention), and
by the request model (parser._intent): every request the rules find must still be found,
for requests phrased every way the rules know and for every sentence of the eval fixtures;
the model adds what the rules miss."""

from __future__ import annotations

import re
from importlib.resources import files
from typing import Any

import yaml

from engrammar.extract.parser._clauses import Owner, analyse
from engrammar.extract.parser._nlp import parse
from engrammar.extract.parser._requests import (
    asks_not_to_mention,
    boundary_wish,
    could_ask_not_to_mention,
    request,
)
from engrammar.models import Surface

REQUESTS = [
    "Please never mention my ex.",
    "Don't bring up my divorce, it's still raw.",
    "I'd rather not talk about my dad.",
    "pls don't ask me about my weight",
    "pls dont ask me about my weight",
    "can we just not do the whole weight loss thing.",
    "my mum passed in march. id really rather we didnt go there, if thats ok",
    "Stop talking about my job.",
    "Can you stop asking about my sister?",
    "I don’t want to discuss the accident.",
    "Do not remind me of the exam.",
    "I really don't want you to bring that up again.",
    "never raise the subject of my brother again",
    "I would prefer you didn't reference my old company.",
    "Don't mention the wedding to me anymore.",
    "I'd rather we didn't talk about politics.",
    "Please DON'T ASK ABOUT MY EX",
    "I don't like talking about my health.",
]
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def parsed(texts: list[str]) -> list[bool]:
    """The answer of the parse alone, for every text."""
    out = []
    for doc in parse(texts):
        ops = [op for c in analyse(doc)
               for op in (request(c) if c.owner in (Owner.command, Owner.assistant)
                          else boundary_wish(c))]
        out.append(any(op.surface in (Surface.avoid, Surface.never) for op in ops))
    return out


def fixture_sentences() -> list[str]:
    texts: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("content", "text", "user", "assistant") and isinstance(value, str):
                    texts.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for f in sorted((files("engrammar") / "evals" / "fixtures").iterdir(),
                    key=lambda f: f.name):
        if f.name.endswith(".yaml"):
            walk(yaml.safe_load(f.read_text(encoding="utf-8")))
    return [s.strip() for t in texts for s in _SENTENCE.split(t) if s.strip()]


def test_every_request_the_parse_finds_passes_the_gate() -> None:
    truth = parsed(REQUESTS)
    assert sum(truth) >= len(REQUESTS) // 2  # the rules know most of these phrasings
    assert all(could_ask_not_to_mention(t) for t, asks in zip(REQUESTS, truth, strict=True)
               if asks)
    asks = asks_not_to_mention(REQUESTS)
    assert all(a for a, t in zip(asks, truth, strict=True) if t)
    assert sum(asks) > sum(truth)  # the model finds some the rules miss


def test_the_gate_changes_no_answer_on_the_fixtures() -> None:
    sentences = fixture_sentences()
    assert len(sentences) > 300
    truth = parsed(sentences)
    assert any(truth)
    asks = asks_not_to_mention(sentences)
    assert all(a for a, t in zip(asks, truth, strict=True) if t)
    assert sum(asks) - sum(truth) < len(sentences) // 50  # the model adds few of its own
    # Most sentences need no parse by the rules.
    assert sum(map(could_ask_not_to_mention, sentences)) < len(sentences) // 10
