"""The blocks job: fold each chat's older pairs into block summaries (the window and its
invariant: recall._window).

Incremental: each new block starts where the block before it ended (the id after its last
message), so cutting reads only the pairs it cuts, never the chat from its start, and a
chat of 100,000 messages folds at the pace of one of 1,000. Each block is summarised and
activated as soon as it is ready, in a transaction of its own, so a turn sees it at once
and a job stopped anywhere leaves every pair covered exactly once: a block cut but not
activated is PENDING, and the next run finishes it before cutting further. When more
blocks are active than the chat may hold, the oldest fold into one, written ready and
activated with its children archived, in one transaction.

A chat's fault (its rows, or a summary the model could not write) fails that chat: the
block is reported with its id, its pairs stay raw (NOT_CREATED), and the job goes on with
the other chats. A database that is down ends the run.

``create``, ``prepare_one`` and ``activate_one`` are the lifecycle's single steps, each safe
to stop and rerun: the job is them, in a loop per chat.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import pairwise
from typing import Any

from engrammar import store
from engrammar.errors import chat_contained, chat_fault
from engrammar.extract._summarizer import Summarizer
from engrammar.models import Scope
from engrammar.recall._window import span
from engrammar.runtime._database import Database
from engrammar.runtime._tokens import TokenCounter
from engrammar.settings import ContextSettings

# Blocks cut per read of the log: one range of the chat's index for this many blocks.
CHUNK = 64


@dataclass
class BlocksReport:
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


@dataclass(frozen=True)
class Cut:
    """A PENDING block just cut, with the lines its summary is written from."""

    block_no: int
    first_pair: int
    last_pair: int
    first_id: int
    last_id: int
    texts: list[str]


class Blocks:
    def __init__(self, db: Database, summarizer: Summarizer, counter: TokenCounter,
                 settings: ContextSettings) -> None:
        self.db = db
        self.summarizer = summarizer
        self.counter = counter
        self.s = settings

    # -- the job ----------------------------------------------------------------------------

    def run(self, now: datetime, scopes: Sequence[Scope] | None = None) -> BlocksReport:
        report = BlocksReport(now=now)
        if scopes is None:
            with self.db.connection() as conn:
                scopes = store.list_chats(conn)
        for scope in scopes:
            # This chat's rows failed a read or a write (rolled back): reported with the
            # chat's id, and the other chats go on. A database that is down ends the run.
            with chat_contained(report.failed, scope.report_entry()):
                self.fold(scope, now, report)
        return report

    def fold(self, scope: Scope, now: datetime, report: BlocksReport) -> None:
        """Fold one chat: finish the blocks a stopped run left, then cut, summarise and
        activate block after block, merging as they pile up. A chat another worker is
        folding is passed by."""
        with self.db.connection() as conn:
            with conn.transaction():
                held = store.hold_chat_blocks(conn, scope)
            if not held:
                return
            try:
                if self._leftovers(conn, scope, now, report):
                    self._fold(conn, scope, now, report)
            finally:
                with conn.transaction():
                    store.release_chat_blocks(conn, scope)

    def _fold(self, conn: store.Conn, scope: Scope, now: datetime,
              report: BlocksReport) -> None:
        # The chat's active blocks, kept here as this worker changes them (it alone folds
        # the chat); every write checks them under the chat's lock, and a change by any
        # other writer (a deletion) sends the worker back to the database.
        with conn.transaction():
            active = store.live_blocks(conn, scope, active_only=True)
        if not self._merges(conn, scope, now, report, active):
            return
        while True:
            with conn.transaction():
                store.lock_chat(conn, scope)
                cuts = self._cut(conn, scope, now, CHUNK)
            if not cuts:
                return
            report.created += len(cuts)
            for cut in cuts:
                try:
                    text = self.summarizer.summarize("block", cut.texts, now, scope)
                except Exception as exc:
                    if not chat_fault(exc):
                        raise
                    self._fail(conn, scope, cut.block_no, cut.first_pair, cut.last_pair, exc,
                               report)
                    return
                report.prepared += 1
                with conn.transaction():
                    store.lock_chat(conn, scope)
                    activated = store.activate_block(
                        conn, scope, cut.block_no, cut.first_pair, cut.last_pair, now, text,
                        self.counter.count(text))
                if activated:
                    report.activated += 1
                    active.append({"block_no": cut.block_no, "first_pair": cut.first_pair,
                                   "last_pair": cut.last_pair, "first_id": cut.first_id,
                                   "last_id": cut.last_id, "summary": text})
                    active.sort(key=lambda b: (b["first_pair"], b["block_no"]))
                else:
                    with conn.transaction():
                        active = store.live_blocks(conn, scope, active_only=True)
                if not self._merges(conn, scope, now, report, active):
                    return

    def _merges(self, conn: store.Conn, scope: Scope, now: datetime, report: BlocksReport,
                active: list[dict[str, Any]]) -> bool:
        """Merge the oldest active blocks while more are active than the chat may hold, each
        merge written ready and activated with its children archived in one transaction;
        ``active`` follows. False when a merge's summary failed (the chat stops here)."""
        while (group := self._group(active)) is not None:
            first, last = group[0]["first_pair"], group[-1]["last_pair"]
            try:
                text = self.summarizer.summarize(
                    "block", [f"pairs {b['first_pair']}-{b['last_pair']}: {b['summary']}"
                              for b in group], now, scope)
            except Exception as exc:
                if not chat_fault(exc):
                    raise
                report.failed.append({**scope.report_entry(), "pairs": span(first, last),
                                      "error": str(exc)})
                return False
            merged = {"first_pair": first, "last_pair": last,
                      "first_id": group[0]["first_id"], "last_id": group[-1]["last_id"],
                      "summary": text}
            with conn.transaction():
                store.lock_chat(conn, scope)
                block_no = store.merge_blocks(
                    conn, scope, [b["block_no"] for b in group],
                    (first, last, merged["first_id"], merged["last_id"]), text,
                    self.counter.count(text), now)
            if block_no is None:  # the chat's blocks moved meanwhile: no merge this time
                with conn.transaction():
                    active[:] = store.live_blocks(conn, scope, active_only=True)
                return True
            report.merged += 1
            report.prepared += 1
            report.activated += 1
            active[:len(group)] = [{"block_no": block_no, **merged}]
        return True

    def _leftovers(self, conn: store.Conn, scope: Scope, now: datetime,
                   report: BlocksReport) -> bool:
        """The chat's PENDING and PREPARED blocks, summarised and activated in order; False
        when one failed (the chat stops here)."""
        with conn.transaction():
            waiting = [b for b in store.live_blocks(conn, scope) if b["state"] != "ACTIVE"]
        for block in waiting:
            text: str | None = None
            if block["state"] == "PENDING":
                try:
                    with conn.transaction():
                        text = self._summarize(conn, scope, block, now)
                except Exception as exc:
                    if not chat_fault(exc):
                        raise
                    self._fail(conn, scope, block["block_no"], block["first_pair"],
                               block["last_pair"], exc, report)
                    return False
                report.prepared += 1
            with conn.transaction():
                store.lock_chat(conn, scope)
                if store.activate_block(conn, scope, block["block_no"], block["first_pair"],
                                        block["last_pair"], now, text,
                                        None if text is None else self.counter.count(text)):
                    report.activated += 1
        return True

    def _fail(self, conn: store.Conn, scope: Scope, block_no: int, first: int, last: int,
              exc: Exception, report: BlocksReport) -> None:
        """The block could not be summarised: it and the blocks cut after it go back to
        NOT_CREATED (their pairs stay raw), and the chat is reported with the block's id."""
        with conn.transaction():
            store.lock_chat(conn, scope)
            store.delete_pending(conn, scope, first)
        report.failed.append({**scope.report_entry(), "block": str(block_no),
                              "pairs": span(first, last), "error": str(exc)})

    # -- cutting ----------------------------------------------------------------------------

    def _cut(self, conn: store.Conn, scope: Scope, now: datetime, limit: int | None
             ) -> list[Cut]:
        """In the caller's transaction, under the chat's lock: PENDING blocks over the next
        full runs of pairs no live block covers, older than the raw tail, from where the
        blocks before them end (at most ``limit``). A gap between live blocks narrower than
        a block gets one block of its own width. A block's last pair is closed: the next
        pair has begun, so no reply to it can arrive after the cut."""
        own = store.chat_overrides(conn, scope)  # the chat's overrides, else the defaults
        size = int(own.get("block_pairs", self.s.block_pairs))
        eligible = (store.pair_count(conn, scope) - int(own.get("raw_pairs", self.s.raw_pairs))
                    - int(own.get("trigger_offset", self.s.trigger_offset)))
        pair, after, bound = 1, 0, None
        for b in store.live_blocks(conn, scope):
            if b["first_pair"] > pair:
                bound = b["first_pair"] - 1  # a gap before this block
                break
            if b["last_pair"] >= pair:
                pair, after = b["last_pair"] + 1, b["last_id"]
        end = eligible if bound is None else min(eligible, bound)
        widths = [size] * ((end - pair + 1) // size) if end >= pair else []
        if bound is not None and bound <= eligible and (end - pair + 1) % size:
            widths.append((end - pair + 1) % size)
        widths = widths[:limit] if limit is not None else widths
        if not widths:
            return []
        rows, stop = store.pairs_ahead(conn, scope, after, sum(widths))
        if stop is None:
            widths.pop()  # the last block's pairs are not closed yet
        spans, texts = self._split(rows, stop, pair, after, widths)
        numbers = store.insert_blocks(conn, scope, spans, now)
        return [Cut(n, *cut, said) for n, cut, said in zip(numbers, spans, texts, strict=True)]

    @staticmethod
    def _split(rows: Sequence[tuple[int, str, str]], stop: int | None, pair: int, after: int,
               widths: Sequence[int]) -> tuple[list[tuple[int, int, int, int]],
                                               list[list[str]]]:
        """Blocks of ``widths`` pairs from pair ``pair`` on, out of the rows read after id
        ``after``: each block's (first pair, last pair, first id, last id) and lines. A block
        ends where the user message opening the next one begins (or at ``stop``); a block
        whose pairs the rows do not all hold (a deletion meanwhile) is not cut."""
        opens = [i for i, (_, role, _) in enumerate(rows) if role == "user"]
        spans: list[tuple[int, int, int, int]] = []
        texts: list[list[str]] = []
        first_id, start, seen = after + 1, 0, 0
        for width in widths:
            seen += width
            if seen < len(opens):
                end_row, last_id = opens[seen], rows[opens[seen]][0] - 1
            elif seen == len(opens) and stop is not None:
                end_row, last_id = len(rows), stop - 1
            else:
                break
            spans.append((pair, pair + width - 1, first_id, last_id))
            texts.append([f"{role}: {content}" for _, role, content in rows[start:end_row]])
            pair, first_id, start = pair + width, last_id + 1, end_row
        return spans, texts

    # -- summaries and activation -----------------------------------------------------------

    def _summarize(self, conn: store.Conn, scope: Scope, block: dict[str, Any],
                   now: datetime) -> str:
        """A block's summary: of its children's summaries when it is a merge that they
        cover whole, else of its messages."""
        first, last = block["first_pair"], block["last_pair"]
        children = [b for b in store.live_blocks(conn, scope, active_only=True)
                    if first <= b["first_pair"] and b["last_pair"] <= last
                    and b["block_no"] != block["block_no"]]
        if children and sum(b["last_pair"] - b["first_pair"] + 1 for b in children) == \
                last - first + 1:
            texts = [f"pairs {b['first_pair']}-{b['last_pair']}: {b['summary']}"
                     for b in children]
        else:
            texts = [f"{role}: {content}" for role, content in
                     store.block_messages(conn, scope, block["first_id"], block["last_id"])]
        return self.summarizer.summarize("block", texts, now, scope)

    # -- merging ----------------------------------------------------------------------------

    def _group(self, active: Sequence[dict[str, Any]]) -> list[dict[str, Any]] | None:
        """The oldest active blocks to merge when more are active than the chat may hold,
        if they are contiguous (so their summaries cover the merge whole)."""
        if len(active) <= self.s.max_active_blocks:
            return None
        group = list(active[:self.s.merge_blocks])
        if len(group) < 2 or any(b["first_pair"] != a["last_pair"] + 1
                                 for a, b in pairwise(group)):
            return None
        return group

    # -- the single steps -------------------------------------------------------------------

    def create(self, scope: Scope, now: datetime) -> tuple[int, int]:
        """PENDING blocks over every run of pairs older than the raw tail that no block
        covers yet, and a PENDING merge when too many blocks are active."""
        created = merged = 0
        with self.db.connection() as conn, conn.transaction():
            store.lock_chat(conn, scope)
            while cuts := self._cut(conn, scope, now, None):
                created += len(cuts)
            live = store.live_blocks(conn, scope)
            active = [b for b in live if b["state"] == "ACTIVE"]
            size = int(store.chat_overrides(conn, scope).get("block_pairs",
                                                              self.s.block_pairs))
            merging = any(b["state"] != "ACTIVE" and b["last_pair"] - b["first_pair"] + 1 > size
                          for b in live)
            group = None if merging else self._group(active)
            if group is not None:
                store.insert_block(conn, scope, group[0]["first_pair"], group[-1]["last_pair"],
                                   now, (group[0]["first_id"], group[-1]["last_id"]))
                merged += 1
        return created, merged

    def prepare_one(self, now: datetime, report: BlocksReport) -> bool:
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
                if not chat_fault(exc):
                    raise
                store.delete_block(conn, scope, block["block_no"])
                report.failed.append({**scope.report_entry(), "block": str(block["block_no"]),
                                      "pairs": span(block["first_pair"], block["last_pair"]),
                                      "error": str(exc)})
                return True
            store.update_block(conn, scope, block["block_no"], {
                "state": "PREPARED", "summary": text, "tokens": self.counter.count(text),
                "attempts": block["attempts"] + 1, "updated_at": now})
            report.prepared += 1
            return True

    def activate_one(self, now: datetime, report: BlocksReport) -> bool:
        """PREPARED -> ACTIVE, archiving the active blocks a merged block replaces, at once."""
        with self.db.connection() as conn, conn.transaction():
            claimed = store.claim_block(conn, "PREPARED")
            if claimed is None:
                return False
            scope, block = claimed
            store.lock_chat(conn, scope)
            if store.activate_block(conn, scope, block["block_no"], block["first_pair"],
                                    block["last_pair"], now):
                report.activated += 1
            return True
