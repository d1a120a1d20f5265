"""The whole-turn context compiler: one call gives the prompt for a turn, bounded and
deterministic. Layers, in order: the system prompt, the memory block (recall), the latest
temporal summaries, the short-term window (block summaries, then raw pairs), and the user's
message. The system prompt, pinned memories and the user's message are never dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from memory import store
from memory.block import quote, redact
from memory.errors import Error, InvalidInput
from memory.models import Message, Scope
from memory.tokens import TokenCounter, truncate_to
from memory.window import Unit

if TYPE_CHECKING:
    from memory.client import Client

DEFAULT_SYSTEM = "You are a helpful assistant."
# Per-message overhead of chat formats (role, separators), as OpenAI counts it.
MESSAGE_OVERHEAD = 4
REPLY_PRIMING = 3
# A word of system prompt and of the user's message, with their overheads.
MIN_BUDGET = REPLY_PRIMING + 2 * (MESSAGE_OVERHEAD + 1)


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
    coverage: list[Covered] = Field(default_factory=list)
    dropped: list[Part] = Field(default_factory=list)
    truncated: list[Part] = Field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def estimate(counter: TokenCounter, messages: Sequence[dict[str, str]]) -> int:
    return REPLY_PRIMING + sum(counter.count(m["content"]) + MESSAGE_OVERHEAD
                               for m in messages)


def _fit(counter: TokenCounter, text: str, room: int) -> str:
    return truncate_to(counter, text, max(0, room - MESSAGE_OVERHEAD))


def compile_turn(client: Client, scope: Scope, user_message: str, *, now: datetime,
                 budget: int, system: str | None = None, record: bool = True) -> Compiled:
    if budget < MIN_BUDGET:
        raise InvalidInput(f"a budget of {budget} tokens cannot hold a system prompt and the "
                           f"user's message; the least is {MIN_BUDGET}")
    counter = client.counter
    cfg = client.settings.context
    out = Compiled(messages=[], tokens=0, budget=budget)
    system_text = system if system is not None else DEFAULT_SYSTEM
    fixed = estimate(counter, [{"content": system_text}, {"content": user_message}])
    if fixed > budget:
        # Neither can be dropped: cut the user's message first, keeping room for a line of
        # system prompt, then the system prompt, and say so.
        # ... but never so much of it that not a token of the message is left.
        keep_system = min(counter.count(system_text), max(1, budget // 4),
                          budget - REPLY_PRIMING - 2 * MESSAGE_OVERHEAD - 1)
        user_room = budget - REPLY_PRIMING - MESSAGE_OVERHEAD - keep_system
        user_message = _fit(counter, user_message, user_room)
        out.truncated.append(Part(layer="user", ref="message", reason="over the budget"))
        system_text = _fit(counter, system_text,
                           budget - estimate(counter, [{"content": user_message}]))
        out.truncated.append(Part(layer="system", ref="prompt", reason="over the budget"))
    head = [{"role": "system", "content": system_text}]
    tail = [{"role": "user", "content": user_message}]
    room = budget - estimate(counter, head + tail)

    # Memory: its share of the room (the block keeps pinned memories whatever happens).
    # Pinned memories may take the whole room: they are never dropped for the window.
    suppressed: list[str] = []
    memory_room = int(room * cfg.memory_share) - MESSAGE_OVERHEAD
    if room - MESSAGE_OVERHEAD > 0:
        block = client.recall(scope.user_id, scope.chat_id, user_message, now=now,
                              budget_tokens=max(0, memory_room), record=record,
                              summaries=False, pinned_budget=room - MESSAGE_OVERHEAD)
        suppressed = block.suppressed
        if block.text:
            head.append({"role": "system", "content": block.text})
        out.dropped += [Part(layer="memory", ref=f"memory {d.memory_id}", reason=d.reason)
                        for d in block.dropped if "budget" in d.reason]
        out.truncated += [Part(layer="memory", ref=f"memory {i.memory_id}",
                               reason="pinned, truncated to fit")
                          for i in block.items if i.truncated]
    room = budget - estimate(counter, head + tail)

    with client.db.connection() as conn:
        # Temporal summaries: the latest of each period, within their share.
        # Its share, but never more than the memory block left: pinned memories may have
        # taken the whole room.
        summary_room = min(int((budget - fixed) * cfg.summary_share),
                           budget - estimate(counter, head + tail)) - MESSAGE_OVERHEAD
        lines: list[str] = []
        for s in store.latest_summaries(conn, scope, client.settings.recall.summaries):
            content = redact(s["content"], suppressed)
            if not content:
                continue
            line = f"- {s['period']} of {s['start_at'].date().isoformat()}: {quote(content)}"
            trial = "Earlier periods of this conversation:\n" + "\n".join([*lines, line])
            if counter.count(trial) <= summary_room:
                lines.append(line)
            else:
                out.dropped.append(Part(layer="summaries", ref=f"{s['period']} summary",
                                        reason="over the budget"))
        if lines:
            head.append({"role": "system", "content":
                         "Earlier periods of this conversation:\n" + "\n".join(lines)})
        room = budget - estimate(counter, head + tail)
        _, units = client.window.units(conn, scope)
        window, covered = _window(conn, counter, scope, units, room, out, suppressed)
    out.coverage = covered
    out.messages = head + window + tail
    out.tokens = estimate(counter, out.messages)
    if out.tokens > budget:  # a tokenizer the per-layer estimates undercounted
        raise Error(f"compiled prompt for chat {scope} is {out.tokens} tokens, over its "
                    f"budget of {budget}")
    out.layers = {
        "system": estimate(counter, head[:1]) - REPLY_PRIMING,
        "memory": sum(counter.count(m["content"]) + MESSAGE_OVERHEAD for m in head[1:]
                      if m["content"].startswith("<memory>")),
        "window": estimate(counter, window) - REPLY_PRIMING if window else 0,
        "user": counter.count(user_message) + MESSAGE_OVERHEAD,
    }
    out.layers["summaries"] = out.tokens - REPLY_PRIMING - sum(out.layers.values())
    if record:
        with client.db.connection() as conn:
            store.insert_llm_call(conn, scope, purpose="turn", model="compiled",
                                  request={"messages": out.messages, "tokens": out.tokens,
                                           "budget": budget},
                                  response=None, error=None, prompt_tokens=out.tokens,
                                  completion_tokens=None, duration_ms=0.0)
    return out


def _window(conn: store.Conn, counter: TokenCounter, scope: Scope, units: Sequence[Unit],
            room: int, out: Compiled, suppressed: Sequence[str] = ()
            ) -> tuple[list[dict[str, str]], list[Covered]]:
    """Newest units first while they fit; the first that does not fit ends the window, so
    what the model sees is one unbroken stretch up to now. Every unit is listed in the
    coverage, included or not, and every exclusion is reported."""
    raw_pairs = [u.first_pair for u in units if u.kind == "raw"]
    messages: dict[int, list[Message]] = {}
    if raw_pairs:
        for pair, msg in store.pairs_after(conn, scope, raw_pairs[0] - 1):
            messages.setdefault(pair, []).append(msg)
    chosen: list[tuple[Unit, list[dict[str, str]]]] = []
    used = 0
    full = False
    for unit in reversed(units):
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
            cut = [{**m, "content": _fit(counter, m["content"], share)} for m in rendered]
            if all(m["content"] for m in cut):
                rendered = cut
                cost = sum(counter.count(m["content"]) + MESSAGE_OVERHEAD for m in rendered)
                out.truncated.append(Part(layer="window", ref=f"pair {unit.first_pair}",
                                          reason="newest pair over the budget: cut to fit"))
        if full or used + cost > room:
            full = True
            ref = (f"pair {unit.first_pair}" if unit.kind == "raw"
                   else f"block {unit.block_no} (pairs {unit.first_pair}-{unit.last_pair})")
            out.dropped.append(Part(layer="window", ref=ref, reason="over the budget"))
            continue
        chosen.append((unit, rendered))
        used += cost
    included = {(u.first_pair, u.kind) for u, _ in chosen}
    covered = [Covered(kind=u.kind, first_pair=u.first_pair, last_pair=u.last_pair,
                       block_no=u.block_no, included=(u.first_pair, u.kind) in included)
               for u in units]
    window = [m for _, rendered in reversed(chosen) for m in rendered]
    return window, covered
