"""The short-term window: the newest pairs verbatim, older pairs folded into block summaries.

A block covers a run of pairs and moves NOT_CREATED -> PENDING -> PREPARED -> ACTIVE ->
ARCHIVED, back to NOT_CREATED (its row deleted) when its summary fails; the blocks job
(nightly._blocks) writes them. When too many blocks are active, the oldest are merged into
one larger block; on its activation they are ARCHIVED in the same transaction.

The invariant: every pair 1..N of a chat is covered exactly once in the effective context,
as a raw pair or inside exactly one ACTIVE block, whatever state any block is in and
wherever a job stopped. Only ACTIVE blocks cover; every other state leaves its pairs raw.

What a turn reads of it is bounded whatever the chat's length: the chat's pair count (kept
by triggers), its active blocks (kept few by merging), and the raw pairs that can fit,
newest first. The plan is a handful of units: each block, and each stretch of raw pairs
between them as one unit, never an object per pair.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from engrammar import store
from engrammar.errors import Error
from engrammar.models import Message, Scope


@dataclass(frozen=True)
class Unit:
    """One piece of the effective window: a stretch of raw pairs, or an active block's
    summary. ``after_id`` and ``before_id`` bound the ids of its messages: a block's own
    span; for raw pairs, the end of the block before them (0: the start of the log) and the
    start of the block after them (None: the end of the log)."""

    kind: Literal["raw", "summary"]
    first_pair: int
    last_pair: int
    block_no: int | None = None
    summary: str | None = None
    after_id: int = 0
    before_id: int | None = None

    @property
    def pairs(self) -> int:
        return self.last_pair - self.first_pair + 1

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "first_pair": self.first_pair, "last_pair": self.last_pair,
                "block_no": self.block_no, "summary": self.summary}


def plan(n_pairs: int, active: Sequence[dict[str, Any]]) -> list[Unit]:
    """The coverage of pairs 1..n: active blocks where they are, raw stretches elsewhere."""
    units: list[Unit] = []
    blocks = sorted(active, key=lambda b: (b["first_pair"], b["block_no"]))
    pair, after = 1, 0
    for b in blocks:
        if b["first_pair"] < pair or b["last_pair"] > n_pairs:
            raise Error(f"block {b['block_no']} (pairs {b['first_pair']}-{b['last_pair']}) "
                        "overlaps another active block or the end of the log")
        if b["first_pair"] > pair:
            units.append(Unit("raw", pair, b["first_pair"] - 1, after_id=after,
                              before_id=b["first_id"]))
        units.append(Unit("summary", b["first_pair"], b["last_pair"], b["block_no"],
                          b["summary"], after_id=b["first_id"] - 1,
                          before_id=b["last_id"] + 1))
        pair, after = b["last_pair"] + 1, b["last_id"]
    if pair <= n_pairs:
        units.append(Unit("raw", pair, n_pairs, after_id=after))
    return units


def span(first: int, last: int) -> str:
    return f"pair {first}" if first == last else f"pairs {first}-{last}"


def coverage_problems(units: Sequence[Unit], n_pairs: int) -> list[str]:
    """Gaps and duplicates of pairs 1..n in ``units``: empty when the invariant holds. By
    stretches, so a chat of 100,000 pairs is checked in as many steps as it has units."""
    problems = []
    expected = 1
    for u in sorted(units, key=lambda u: (u.first_pair, u.last_pair)):
        if u.first_pair < 1 or u.last_pair > n_pairs or u.first_pair > u.last_pair:
            problems.append(f"{span(u.first_pair, u.last_pair)} beyond the log")
        if u.first_pair > expected:
            problems.append(f"{span(expected, u.first_pair - 1)} missing")
        elif u.first_pair < expected:
            problems.append(f"{span(u.first_pair, min(u.last_pair, expected - 1))} covered "
                            "more than once")
        expected = max(expected, u.last_pair + 1)
    if expected <= n_pairs:
        problems.append(f"{span(expected, n_pairs)} missing")
    return problems


@dataclass
class RawPairs:
    """The raw pairs a turn read: their messages by pair, and for each raw stretch (by its
    first pair) the oldest pair read; older ones could not fit."""

    messages: dict[int, list[Message]] = field(default_factory=dict)
    oldest: dict[int, int] = field(default_factory=dict)

    def ids(self) -> frozenset[int]:
        return frozenset(m.id for said in self.messages.values() for m in said)


class Window:
    """What a turn reads of the short-term window, on the turn's connection."""

    def units(self, conn: store.Conn, scope: Scope) -> tuple[int, list[Unit]]:
        """The chat's pair count and the plan of its window. The blocks are read first: a
        pair recorded after them is raw, never beyond a plan that counted it."""
        active = store.live_blocks(conn, scope, active_only=True)
        n = store.pair_count(conn, scope)
        return n, plan(n, active)

    @staticmethod
    def read_raw(conn: store.Conn, scope: Scope, units: Sequence[Unit], most: int
                 ) -> RawPairs:
        """The newest ``most`` raw pairs of the plan, newest stretch first: each stretch one
        bounded read back from its end."""
        read = RawPairs()
        left = most
        for unit in reversed(units):
            if left <= 0:
                break
            if unit.kind != "raw":
                continue
            take = min(left, unit.pairs)
            before = unit.before_id
            for pair, msg in store.pairs_back(conn, scope, unit.after_id, before,
                                              unit.last_pair if before is not None else None,
                                              take):
                if unit.first_pair <= pair <= unit.last_pair:
                    read.messages.setdefault(pair, []).append(msg)
            read.oldest[unit.first_pair] = unit.last_pair - take + 1
            left -= take
        return read
