"""The short-term window: the newest pairs verbatim, older pairs folded into block summaries.

A block covers a fixed run of pairs (default 5) and moves
NOT_CREATED -> PENDING -> PREPARED -> ACTIVE -> ARCHIVED, back to NOT_CREATED (its row
deleted) when its summary fails. When too many blocks are active, the oldest are merged into
one larger block; on its activation they are ARCHIVED in the same transaction.

The invariant: every pair 1..N of a chat is covered exactly once in the effective context,
as a raw pair or inside exactly one ACTIVE block, whatever state any block is in and
wherever a job stopped. Only ACTIVE blocks cover; every other state leaves its pairs raw.
Summaries are written here, by a job, never inline in ``compile``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from engrammar import store
from engrammar.errors import Error, chat_fault
from engrammar.extract._summarizer import Summarizer
from engrammar.models import Scope
from engrammar.runtime._database import Database
from engrammar.runtime._tokens import TokenCounter
from engrammar.settings import ContextSettings


@dataclass(frozen=True)
class Unit:
    """One piece of the effective window: a raw pair, or an active block's summary."""

    kind: Literal["raw", "summary"]
    first_pair: int
    last_pair: int
    block_no: int | None = None
    summary: str | None = None


def plan(n_pairs: int, active: Sequence[dict[str, Any]]) -> list[Unit]:
    """The coverage of pairs 1..n: active blocks where they are, raw pairs elsewhere."""
    units: list[Unit] = []
    blocks = sorted(active, key=lambda b: (b["first_pair"], b["block_no"]))
    pair = 1
    for b in blocks:
        if b["first_pair"] < pair or b["last_pair"] > n_pairs:
            raise Error(f"block {b['block_no']} (pairs {b['first_pair']}-{b['last_pair']}) "
                        "overlaps another active block or the end of the log")
        units.extend(Unit("raw", p, p) for p in range(pair, b["first_pair"]))
        units.append(Unit("summary", b["first_pair"], b["last_pair"], b["block_no"],
                          b["summary"]))
        pair = b["last_pair"] + 1
    units.extend(Unit("raw", p, p) for p in range(pair, n_pairs + 1))
    return units


def coverage_problems(units: Sequence[Unit], n_pairs: int) -> list[str]:
    """Gaps and duplicates of pairs 1..n in ``units``: empty when the invariant holds."""
    seen: dict[int, int] = {}
    for u in units:
        for p in range(u.first_pair, u.last_pair + 1):
            seen[p] = seen.get(p, 0) + 1
    problems = [f"pair {p} missing" for p in range(1, n_pairs + 1) if p not in seen]
    problems += [f"pair {p} covered {k} times" for p, k in sorted(seen.items()) if k > 1]
    problems += [f"pair {p} beyond the log" for p in sorted(seen) if p > n_pairs or p < 1]
    return problems


@dataclass
class WindowReport:
    now: datetime
    created: int = 0
    merged: int = 0
    prepared: int = 0
    activated: int = 0
    failed: list[dict[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"job": "blocks", "now": self.now.isoformat(), "created": self.created,
                "merged": self.merged, "prepared": self.prepared,
                "activated": self.activated, "errors": self.failed}


class Window:
    def __init__(self, db: Database, summarizer: Summarizer, counter: TokenCounter,
                 settings: ContextSettings) -> None:
        self.db = db
        self.summarizer = summarizer
        self.counter = counter
        self.s = settings

    # -- the job's three steps; each is safe to stop and rerun at any point ----------------

    def create(self, scope: Scope, now: datetime) -> tuple[int, int]:
        """PENDING blocks for every full run of pairs older than the raw tail that no block
        covers yet, and a PENDING merge when too many blocks are active."""
        created = merged = 0
        with self.db.connection() as conn, conn.transaction():
            store.lock_chat(conn, scope)
            # The chat's own overrides (set through the service), else the defaults.
            own = store.chat_overrides(conn, scope)
            size = int(own.get("block_pairs", self.s.block_pairs))
            eligible = (store.pair_count(conn, scope) - int(own.get("raw_pairs", self.s.raw_pairs))
                        - int(own.get("trigger_offset", self.s.trigger_offset)))
            live = store.list_blocks(conn, scope, ["PENDING", "PREPARED", "ACTIVE"])
            for first in range(1, eligible - size + 2, size):
                last = first + size - 1
                if not any(b["first_pair"] <= last and first <= b["last_pair"] for b in live):
                    store.insert_block(conn, scope, first, last, now)
                    created += 1
            active = [b for b in live if b["state"] == "ACTIVE"]
            merging = any(b["state"] != "ACTIVE" and b["last_pair"] - b["first_pair"] + 1 > size
                          for b in live)
            if len(active) > self.s.max_active_blocks and not merging:
                group = sorted(active, key=lambda b: b["first_pair"])[:self.s.merge_blocks]
                store.insert_block(conn, scope, group[0]["first_pair"], group[-1]["last_pair"],
                                   now)
                merged += 1
        return created, merged

    def prepare_one(self, now: datetime, report: WindowReport) -> bool:
        """Summarise one PENDING block into PREPARED; on failure delete it (NOT_CREATED)."""
        with self.db.connection() as conn, conn.transaction():
            claimed = store.claim_block(conn, "PENDING")
            if claimed is None:
                return False
            scope, block = claimed
            try:
                with conn.transaction():  # a savepoint: the claim outlives a failed read
                    text = self._summarize(conn, scope, block, now)
            except Exception as exc:
                # This chat's rows or its summary failed: the block goes back to
                # NOT_CREATED (its pairs stay raw), reported with the chat's id, and the
                # other chats' blocks go on. A database that is down ends the run.
                if not chat_fault(exc):
                    raise
                store.delete_block(conn, scope, block["block_no"])
                report.failed.append({**scope.report_entry(), "block": str(block["block_no"]),
                                      "error": str(exc)})
                return True
            store.update_block(conn, scope, block["block_no"], {
                "state": "PREPARED", "summary": text, "tokens": self.counter.count(text),
                "attempts": block["attempts"] + 1, "updated_at": now})
            report.prepared += 1
            return True

    def activate_one(self, now: datetime, report: WindowReport) -> bool:
        """PREPARED -> ACTIVE, archiving the active blocks a merged block replaces, at once."""
        with self.db.connection() as conn, conn.transaction():
            claimed = store.claim_block(conn, "PREPARED")
            if claimed is None:
                return False
            scope, block = claimed
            store.lock_chat(conn, scope)
            covering = [b for b in store.list_blocks(conn, scope, ["ACTIVE"])
                        if b["first_pair"] <= block["first_pair"]
                        and block["last_pair"] <= b["last_pair"]]
            if covering:
                # A merge activated over this block while it was being summarised (two
                # overlapping runs): it is already covered, so it retires unused.
                store.update_block(conn, scope, block["block_no"],
                                   {"state": "ARCHIVED", "updated_at": now})
                return True
            store.archive_blocks_within(conn, scope, block["first_pair"], block["last_pair"],
                                        block["block_no"], now)
            store.update_block(conn, scope, block["block_no"],
                               {"state": "ACTIVE", "updated_at": now})
            report.activated += 1
            return True

    def run(self, now: datetime, scopes: Sequence[Scope] | None = None) -> WindowReport:
        report = WindowReport(now=now)
        if scopes is None:
            with self.db.connection() as conn:
                scopes = store.list_chats(conn)
        for scope in scopes:
            try:
                created, merged = self.create(scope, now)
            except Exception as exc:
                if not chat_fault(exc):
                    raise
                report.failed.append({**scope.report_entry(), "error": str(exc),
                                      "kind": type(exc).__name__})
                continue
            report.created += created
            report.merged += merged
        while self.prepare_one(now, report):
            pass
        while self.activate_one(now, report):
            pass
        return report

    def _summarize(self, conn: store.Conn, scope: Scope, block: dict[str, Any],
                   now: datetime) -> str:
        first, last = block["first_pair"], block["last_pair"]
        children = [b for b in store.list_blocks(conn, scope, ["ACTIVE"])
                    if first <= b["first_pair"] and b["last_pair"] <= last]
        if children and sum(b["last_pair"] - b["first_pair"] + 1 for b in children) == \
                last - first + 1:
            texts = [f"pairs {b['first_pair']}-{b['last_pair']}: {b['summary']}"
                     for b in children]
        else:
            texts = [f"{m.role.value}: {m.content}" for _, m in
                     store.pairs_after(conn, scope, first - 1, last - first + 1)]
        return self.summarizer.summarize("block", texts, now, scope)

    # -- reading ----------------------------------------------------------------------------

    def units(self, conn: store.Conn, scope: Scope) -> tuple[int, list[Unit]]:
        n = store.pair_count(conn, scope)
        return n, plan(n, store.list_blocks(conn, scope, ["ACTIVE"]))
