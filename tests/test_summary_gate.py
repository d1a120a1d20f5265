"""Whether a sentence asks not to be mentioned is the extractor's own decision (the request
gate on the parse, then the model: parser._intent), so what the extractor keeps as a
boundary a summary never repeats: for requests phrased many ways, and on every sentence of
the eval fixtures, few of which are such requests."""

from __future__ import annotations

import re
from importlib.resources import files
from typing import Any

import yaml

from engrammar.extract.parser._extractor import ParserExtractor
from engrammar.extract.parser._requests import asks_not_to_mention
from engrammar.models import Message, Role, Surface
from tests.test_offline import AT

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


def boundaries(texts: list[str]) -> list[bool]:
    """Whether the extractor keeps a boundary from each text, each its own message."""
    out = []
    for text in texts:
        msg = Message(id=1, user_id="u", chat_id="c", role=Role.user, content=text, at=AT)
        ops = ParserExtractor().read([msg])[1][0]
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


def test_every_boundary_the_extractor_keeps_stays_out_of_summaries() -> None:
    kept = boundaries(REQUESTS)
    assert sum(kept) >= len(REQUESTS) * 3 // 4  # the model finds most of these wordings
    asks = asks_not_to_mention(REQUESTS)
    assert all(a for a, k in zip(asks, kept, strict=True) if k)


def test_few_fixture_sentences_are_such_requests_and_those_are_left_out() -> None:
    sentences = fixture_sentences()
    assert len(sentences) > 300
    asks = asks_not_to_mention(sentences)
    assert 0 < sum(asks) < len(sentences) // 50
    kept = boundaries(sentences)
    assert all(a for a, k in zip(asks, kept, strict=True) if k)
