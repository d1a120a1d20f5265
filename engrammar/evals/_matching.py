"""How a fixture's matchers meet the store and the blocks, and how both are shown."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from engrammar.client import Client
from engrammar.evals._fixtures import USER_SCOPE, Match
from engrammar.models import Decision, Memory
from engrammar.recall._block import Block


class Matcher:
    """Which stored memories a fixture's matcher means; embeddings cached per text."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self._vectors: dict[str, np.ndarray] = {}

    def vector(self, text: str) -> np.ndarray:
        if text not in self._vectors:
            v = np.asarray(self.client.embedder.embed([text])[0], dtype=np.float32)
            norm = float(np.linalg.norm(v))
            self._vectors[text] = v / norm if norm else v
        return self._vectors[text]

    def content(self, m: Match, memory: Memory) -> bool:
        if m.type is not None and memory.type is not m.type:
            return False
        if not all(has_keyword(memory.content, kw) for kw in m.keywords):
            return False
        if m.similar_to is not None:
            cos = float(self.vector(memory.content) @ self.vector(m.similar_to))
            return cos >= m.threshold
        return True

    def select(self, m: Match, memories: Sequence[Memory]) -> list[Memory]:
        chat = "" if m.chat == USER_SCOPE else m.chat  # the user's scope: store.USER_CHAT
        return [x for x in memories if x.chat_id == chat and self.content(m, x)]


def has_keyword(text: str, keyword: str) -> bool:
    """Any ``|``-separated alternative of ``keyword`` at the start of a word, ignoring case:
    a stem matches its forms ("retire" in "retired", "firefight" in "firefighter"), and no
    keyword matches inside a word ("tea" not in "steam")."""
    return any(re.search(rf"(?<!\w){re.escape(alt.strip())}", text, re.IGNORECASE)
               for alt in keyword.split("|"))


def ranked_ids(block: Block) -> list[int]:
    """The block's memories best first by score alone (ids break ties)."""
    items = [i for i in block.items if i.memory_id is not None]
    return [i.memory_id for i in sorted(items, key=lambda i: (-i.score, i.memory_id or 0))
            if i.memory_id is not None]


def describe_decision(d: Decision) -> str:
    p = d.proposed
    kind = f" {p.type.value}" if p.type else ""
    target = f" -> memory {d.target_id}" if d.target_id is not None else ""
    became = f" as {d.op.op.value}" if d.op is not None and d.op.op is not p.op else ""
    return (f"{p.op.value}{kind} {p.content!r}: {d.verdict.value} ({d.code}){became}{target}"
            f" - {d.reason}")


def render_block(block: Block) -> str:
    ranked = {mid: n for n, mid in enumerate(ranked_ids(block), start=1)}
    lines = [f"    {block.tokens}/{block.budget} tokens"]
    lines += [f"    | {line}" for line in block.text.splitlines()] or ["    | (empty)"]
    for item in block.items:
        if item.memory_id is not None:
            lines.append(f"    #{ranked[item.memory_id]} memory {item.memory_id} "
                         f"[{item.section}] {item.score:.3f} {item.content!r}")
    lines += [f"    dropped {d.memory_id}: {d.reason}" for d in block.dropped]
    return "\n".join(lines)


