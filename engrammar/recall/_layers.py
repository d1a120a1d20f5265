"""The compiled prompt and its layers: what each layer holds and reports (its tokens, what
it dropped, what it cut), how chat messages are costed, and the two layers rendered apart
from the memory block's: the memory block's report as layers, and the window.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from engrammar.recall._block import Block, BlockItem, quote, redact
from engrammar.recall._ranking import Topics
from engrammar.recall._window import RawPairs, Unit, span
from engrammar.runtime._tokens import TokenCounter, truncate_to

# Per-message overhead of chat formats (role, separators), as OpenAI counts it.
MESSAGE_OVERHEAD = 4
REPLY_PRIMING = 3

class Part(BaseModel):
    layer: str
    ref: str
    reason: str


class Covered(BaseModel):
    kind: Literal["raw", "summary"]
    first_pair: int
    last_pair: int
    block_no: int | None = None
    included: bool


class Compiled(BaseModel):
    messages: list[dict[str, str]]
    tokens: int
    budget: int
    layers: dict[str, int] = Field(default_factory=dict)
    # What the memory block holds: its memories, then its summaries (section "summary").
    items: list[BlockItem] = Field(default_factory=list)
    coverage: list[Covered] = Field(default_factory=list)
    dropped: list[Part] = Field(default_factory=list)
    truncated: list[Part] = Field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


@dataclass
class Layer:
    """One layer rendered into its room: its text ("" when empty), tokens, and what it left
    out or cut."""

    name: str
    text: str = ""
    tokens: int = 0
    items: list[BlockItem] = field(default_factory=list)
    dropped: list[Part] = field(default_factory=list)
    truncated: list[Part] = field(default_factory=list)


def estimate(counter: TokenCounter, messages: Sequence[dict[str, str]]) -> int:
    return REPLY_PRIMING + sum(counter.count(m["content"]) + MESSAGE_OVERHEAD
                               for m in messages)


def fit(counter: TokenCounter, text: str, room: int) -> str:
    return truncate_to(counter, text, max(0, room - MESSAGE_OVERHEAD))


def layers_of(block: Block) -> tuple[Layer, Layer]:
    """The memory and summary layers of a rendered block, as compile reports them: the
    block's text is the memory layer's (the summaries ride in its frame); each layer its
    tokens, its items, and what the budget kept out or cut."""
    summary_tokens = block.layers.get("summaries", 0)
    memory = Layer("memory", block.text, block.tokens - summary_tokens,
                   [i for i in block.items if i.section != "summary"])
    summary = Layer("summaries", "", summary_tokens,
                    [i for i in block.items if i.section == "summary"])
    for d in block.dropped:
        if d.layer == "summaries":
            summary.dropped.append(Part(layer="summaries", ref=d.ref, reason="over the budget"))
        elif d.for_budget:
            memory.dropped.append(Part(layer="memory", ref=d.ref, reason=(
                d.reason if d.memory_id is not None else "over the budget")))
    memory.truncated = [Part(layer="memory", ref=f"memory {i.memory_id}",
                             reason="pinned, truncated to fit")
                        for i in memory.items if i.truncated]
    return memory, summary


def window_layer(counter: TokenCounter, units: Sequence[Unit], room: int,
                 suppressed: Topics, read: RawPairs
                 ) -> tuple[Layer, list[dict[str, str]], list[Covered]]:
    """Newest units first while they fit; the first that does not fit ends the window, so
    what the model sees is one unbroken stretch up to now. A stretch of raw pairs is taken
    pair by pair from its newest; the pairs not read (more than could fit) end the window.
    Every unit is listed in the coverage, a raw stretch split where the window ended, and
    every exclusion is reported: one entry for each block or stretch of pairs left out."""
    layer = Layer("window")
    chosen: list[list[dict[str, str]]] = []
    covered: list[Covered] = []
    used = 0
    full = False

    def leave_out(kind: Literal["raw", "summary"], first: int, last: int,
                  block_no: int | None = None) -> None:
        covered.append(Covered(kind=kind, first_pair=first, last_pair=last,
                               block_no=block_no, included=False))
        ref = span(first, last) if kind == "raw" else f"block {block_no} ({span(first, last)})"
        layer.dropped.append(Part(layer="window", ref=ref, reason="over the budget"))

    for unit in reversed(units):
        if full:
            leave_out(unit.kind, unit.first_pair, unit.last_pair, unit.block_no)
            continue
        if unit.kind == "summary":
            rendered = [{"role": "system", "content":
                         f"Summary of earlier turns {unit.first_pair}-{unit.last_pair}: "
                         f"{quote(redact(unit.summary or '', suppressed))}"}]
            cost = sum(counter.count(m["content"]) + MESSAGE_OVERHEAD for m in rendered)
            if used + cost > room:
                full = True
                leave_out("summary", unit.first_pair, unit.last_pair, unit.block_no)
                continue
            chosen.append(rendered)
            used += cost
            covered.append(Covered(kind="summary", first_pair=unit.first_pair,
                                   last_pair=unit.last_pair, block_no=unit.block_no,
                                   included=True))
            continue
        pair = unit.last_pair
        oldest = read.oldest.get(unit.first_pair, unit.last_pair + 1)
        while pair >= unit.first_pair:
            if pair < oldest:  # not read: more pairs than the room could hold
                full = True
                break
            rendered = [{"role": m.role.value, "content": m.content}
                        for m in read.messages.get(pair, [])]
            cost = sum(counter.count(m["content"]) + MESSAGE_OVERHEAD for m in rendered)
            if not chosen and cost > room and rendered:
                # The newest pair alone is over the room (a long paste): keep it cut to half
                # the room, so the model still sees the last exchange and what is behind it.
                share = room // 2 // len(rendered)
                cut = [{**m, "content": fit(counter, m["content"], share)} for m in rendered]
                if all(m["content"] for m in cut):
                    rendered = cut
                    cost = sum(counter.count(m["content"]) + MESSAGE_OVERHEAD for m in rendered)
                    layer.truncated.append(Part(layer="window", ref=f"pair {pair}",
                                                reason="newest pair over the budget: cut to "
                                                       "fit"))
            if used + cost > room:
                full = True
                break
            chosen.append(rendered)
            used += cost
            pair -= 1
        if pair < unit.last_pair:
            covered.append(Covered(kind="raw", first_pair=pair + 1, last_pair=unit.last_pair,
                                   included=True))
        if pair >= unit.first_pair:
            leave_out("raw", unit.first_pair, pair)
    covered.sort(key=lambda c: c.first_pair)
    window = [m for rendered in reversed(chosen) for m in rendered]
    layer.tokens = used
    layer.text = "\n".join(m["content"] for m in window)
    return layer, window, covered
