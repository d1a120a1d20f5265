"""The compiled prompt and its layers: what each layer holds and reports (its tokens, what
it dropped, what it cut), how chat messages are costed, and the two layers rendered apart
from the memory block's: the memory block's report as layers, and the window.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from engrammar import store
from engrammar.models import Message, Scope
from engrammar.recall._block import Block, BlockItem, quote, redact
from engrammar.recall._window import Unit
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


def window_layer(conn: store.Conn, counter: TokenCounter, scope: Scope, units: Sequence[Unit],
                 room: int, suppressed: frozenset[str] = frozenset(),
                 pairs: Sequence[tuple[int, Message]] | None = None
                 ) -> tuple[Layer, list[dict[str, str]], list[Covered]]:
    """Newest units first while they fit; the first that does not fit ends the window, so
    what the model sees is one unbroken stretch up to now. Every unit is listed in the
    coverage, included or not, and every exclusion is reported."""
    layer = Layer("window")
    raw_pairs = [u.first_pair for u in units if u.kind == "raw"]
    messages: dict[int, list[Message]] = {}
    if raw_pairs:
        if pairs is None:
            pairs = store.pairs_after(conn, scope, raw_pairs[0] - 1)
        for pair, msg in pairs:
            messages.setdefault(pair, []).append(msg)
    chosen: list[tuple[Unit, list[dict[str, str]]]] = []
    used = 0
    full = False
    # Raw pairs older than those read (see Assembler.compile) cannot fit: the window ends.
    oldest = min((p for p, _ in pairs), default=0) if pairs is not None else 0
    for unit in reversed(units):
        if unit.kind == "raw" and unit.first_pair < oldest:
            full = True
        if unit.kind == "raw":
            rendered = [{"role": m.role.value, "content": m.content}
                        for m in messages.get(unit.first_pair, [])]
        else:
            rendered = [{"role": "system", "content":
                         f"Summary of earlier turns {unit.first_pair}-{unit.last_pair}: "
                         f"{quote(redact(unit.summary or '', suppressed))}"}]
        cost = sum(counter.count(m["content"]) + MESSAGE_OVERHEAD for m in rendered)
        if not chosen and unit.kind == "raw" and cost > room and rendered:
            # The newest pair alone is over the room (a long paste): keep it cut to half the
            # room, so the model still sees the last exchange and the summaries behind it.
            share = room // 2 // len(rendered)
            cut = [{**m, "content": fit(counter, m["content"], share)} for m in rendered]
            if all(m["content"] for m in cut):
                rendered = cut
                cost = sum(counter.count(m["content"]) + MESSAGE_OVERHEAD for m in rendered)
                layer.truncated.append(Part(layer="window", ref=f"pair {unit.first_pair}",
                                            reason="newest pair over the budget: cut to fit"))
        if full or used + cost > room:
            full = True
            ref = (f"pair {unit.first_pair}" if unit.kind == "raw"
                   else f"block {unit.block_no} (pairs {unit.first_pair}-{unit.last_pair})")
            layer.dropped.append(Part(layer="window", ref=ref, reason="over the budget"))
            continue
        chosen.append((unit, rendered))
        used += cost
    included = {(u.first_pair, u.kind) for u, _ in chosen}
    covered = [Covered(kind=u.kind, first_pair=u.first_pair, last_pair=u.last_pair,
                       block_no=u.block_no, included=(u.first_pair, u.kind) in included)
               for u in units]
    window = [m for _, rendered in reversed(chosen) for m in rendered]
    layer.tokens = used
    layer.text = "\n".join(m["content"] for m in window)
    return layer, window, covered
