"""Extractors turn a chat's new messages into proposed ops against its memories.

The model sees existing memories under short handles (m1, m2, ...), never their ids, so it
cannot invent an id; the gate resolves handles and rejects any it does not know.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from engrammar.errors import MalformedOutput
from engrammar.extract._prompts import ExtractionResponse, extraction_prompt
from engrammar.models import Memory, MemoryType, Message, Op, OpKind, Scope, Surface
from engrammar.runtime._llm import LLM
from engrammar.runtime._tokens import TokenCounter


@dataclass
class Extraction:
    ops: list[Op]
    handles: dict[str, int]


@dataclass
class Plan:
    """An LLM extraction's requests: one prompt per chunk of messages."""

    chunks: list[list[Message]]
    prompts: list[list[dict[str, str]]]
    handles: dict[str, int]


class Extractor(Protocol):
    name: str

    def extract(self, scope: Scope, messages: Sequence[Message], memories: Sequence[Memory],
                now: datetime) -> Extraction: ...


def handles_for(memories: Sequence[Memory]) -> list[tuple[str, Memory]]:
    return [(f"m{i}", m) for i, m in enumerate(memories, start=1)]


class LLMExtractor:
    """Structured output from any OpenAI-compatible model, one call per chunk of messages."""

    def __init__(self, llm: LLM, counter: TokenCounter, chunk_tokens: int = 6000,
                 max_ops: int = 100) -> None:
        self.llm = llm
        self.counter = counter
        self.chunk_tokens = chunk_tokens
        # More ops in one answer than this fails the chat's extraction (a runaway answer).
        self.max_ops = max_ops
        self.name = f"llm:{llm.model}"

    def chunks(self, messages: Sequence[Message], reserved: int) -> list[list[Message]]:
        """Consecutive runs of messages, each within the token budget left by the prompt."""
        budget = max(200, self.chunk_tokens - reserved)
        out: list[list[Message]] = []
        current: list[Message] = []
        used = 0
        for msg in messages:
            cost = self.counter.count(msg.content) + 12
            if current and used + cost > budget:
                out.append(current)
                current, used = [], 0
            current.append(msg)
            used += cost
        if current:
            out.append(current)
        return out

    def plan(self, messages: Sequence[Message], memories: Sequence[Memory], now: datetime
             ) -> Plan:
        """The prompts the chat's new messages need, one per chunk, and the handles they
        list the memories under: what ``extract`` asks, and what a batch submits."""
        listed = handles_for(memories)
        reserved = sum(self.counter.count(p["content"])
                       for p in extraction_prompt([], listed, now))
        chunks = self.chunks(messages, reserved)
        return Plan(chunks=chunks,
                    prompts=[extraction_prompt(chunk, listed, now) for chunk in chunks],
                    handles={h: m.id for h, m in listed})

    def ops(self, scope: Scope, answer: ExtractionResponse, messages: Sequence[Message]
            ) -> list[Op]:
        """The ops of one chunk's answer; ``messages``: every message the chat's extraction
        read, which the evidence must cite."""
        if len(answer.ops) > self.max_ops:
            raise MalformedOutput(
                f"extract: the answer proposes {len(answer.ops)} ops; the cap is "
                f"{self.max_ops} (MEMORY_MAX_OPS_PER_ANSWER)", chat_id=str(scope))
        known = {m.id for m in messages}
        ops: list[Op] = []
        for extracted in answer.ops:
            data = extracted.model_dump()
            # Evidence the model made up is dropped rather than trusted.
            data["evidence"] = [i for i in extracted.evidence if i in known]
            ops.append(Op.model_validate(data))
        return ops

    def extract(self, scope: Scope, messages: Sequence[Message], memories: Sequence[Memory],
                now: datetime) -> Extraction:
        plan = self.plan(messages, memories, now)
        ops: list[Op] = []
        for prompt in plan.prompts:
            answer = self.llm.structured("extract", prompt, ExtractionResponse, scope)
            ops.extend(self.ops(scope, answer, messages))
        return Extraction(ops=ops, handles=plan.handles)


_OBSERVED = re.compile(r"^\s*(?:[-*]\s*)?\**(decision|constraint|open)\**\s*:\s*(.+?)\s*$",
                       re.IGNORECASE | re.MULTILINE)


def observed_ops(assistant_text: str) -> list[Op]:
    """Ops for the lines an assistant marks "Decision:", "Constraint:" or "Open:".

    Decisions are facts not to contradict (factcheck), constraints are how to work with the
    user (protocol), open items are threads to pick up (open loops).
    """
    ops: list[Op] = []
    for m in _OBSERVED.finditer(assistant_text):
        kind, text = m.group(1).lower(), m.group(2).strip()
        if kind == "decision":
            ops.append(Op(op=OpKind.add, type=MemoryType.episodic, surface=Surface.factcheck,
                          content=f"Decided: {text}", salience=0.8, confidence=0.9))
        elif kind == "constraint":
            ops.append(Op(op=OpKind.add, type=MemoryType.protocol, surface=Surface.adapt,
                          content=f"Constraint: {text}", salience=0.8, confidence=0.9))
        else:
            ops.append(Op(op=OpKind.add, type=MemoryType.open_loop, content=f"Open: {text}",
                          salience=0.7, confidence=0.9))
    return ops
