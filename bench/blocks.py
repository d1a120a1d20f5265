"""The blocks job's throughput against the chat's length: one chat of 1,000 messages and one
of 100,000 (by default), folded from nothing by the job with the offline summarizer (no LLM),
as ``python -m bench blocks`` or the scheduler runs it.

The chats are written with SQL, so only the job is timed: user and assistant in turn,
saying the turns of the public LoCoMo conversations in order, over and over (a few built-in
lines when the data set is not on the machine). Blocks/s counts the new blocks cut, summarised and
activated per second of the run; the merges the job writes on the way (as blocks pile up,
the oldest fold into one) are counted apart and their time is included. After each run the
window's coverage is checked: every pair raw or in exactly one active block.

``python -m bench blocks [--small N] [--large N]``. Works in a database of its own
(``memory_bench_blocks``), emptied first. Goal: >= 200 blocks/s at 100,000 messages.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engrammar import Client, Settings, store
from engrammar.models import Scope
from engrammar.recall._window import coverage_problems

DATABASE = "memory_bench_blocks"
OUT = Path(__file__).parent / "out"
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
GOAL = 200

# What people say, when the public conversations are not on this machine: everyday lines,
# some negated, one asking the assistant not to raise a topic.
LINES = [
    "We talked about the garden again today, and the tomatoes are finally turning red.",
    "That sounds lovely. Ripe tomatoes are worth the wait; keep watering in the evenings.",
    "My sister Mia is visiting from Porto next weekend, so I need to clean the spare room.",
    "A visit is a good reason to sort the spare room. Want a short checklist?",
    "I don't think the new job at the clinic is going to work out, honestly.",
    "It is fine not to be sure yet. What part of the job feels wrong so far?",
    "Please don't bring up my divorce again, I'd rather not talk about it.",
    "Understood. I will leave that topic alone.",
    "We can't do Friday for the dinner, Lena has her exam that day.",
    "Then Saturday could work, or the Friday after her exam.",
]


def lines() -> tuple[list[str], str]:
    """The turns of the LoCoMo conversations (bench.locomo.DATA) in order, or LINES."""
    from bench.locomo import DATA

    if not DATA.exists():
        return LINES, "built-in lines"
    said = [turn["text"] for sample in json.loads(DATA.read_text())
            for key, session in sample["conversation"].items()
            if key.startswith("session_") and isinstance(session, list) for turn in session]
    return said, f"the {len(said):,} turns of {DATA.name}, in turn"


def fill(client: Client, chats: dict[str, int], said: list[str]) -> None:
    """Each chat: user and assistant in turn, saying the lines in order, over and over."""
    with client.db.connection() as conn:
        store.erase_everything(conn)
        for chat, n in chats.items():
            conn.execute(
                "INSERT INTO messages (user_id, chat_id, role, content, at)"
                " SELECT 'u', %(c)s, CASE WHEN i %% 2 = 1 THEN 'user' ELSE 'assistant' END,"
                " (%(said)s::text[])[1 + (i - 1) %% %(k)s], %(t0)s"
                " FROM generate_series(1, %(n)s) i",
                {"c": chat, "n": n, "t0": T0, "said": said, "k": len(said)})
        conn.execute("INSERT INTO chats (user_id, chat_id) SELECT DISTINCT user_id, chat_id"
                     " FROM messages ON CONFLICT DO NOTHING")
        conn.execute("ANALYZE")


def fold(client: Client, chat: str, messages: int) -> dict[str, Any]:
    scope = Scope(user_id="u", chat_id=chat)
    load = os.getloadavg()[0]
    started = time.perf_counter()
    report = client.blocks.run(T0, [scope])
    seconds = time.perf_counter() - started
    with client.db.connection() as conn:
        pairs, units = client.window.units(conn, scope)
        active = len(store.live_blocks(conn, scope, active_only=True))
    return {"messages": messages, "pairs": pairs, "blocks": report.created,
            "merges": report.merged, "seconds": round(seconds, 2),
            "blocks_per_s": round(report.created / seconds, 1),
            "active_after": active, "failed": report.failed,
            "coverage_problems": coverage_problems(units, pairs), "load_before": load}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench blocks")
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--large", type=int, default=100_000)
    args = parser.parse_args(argv or [])
    said, source = lines()
    print(f"messages: {source}")
    with Client.open(Settings(), database=DATABASE) as client:
        fill(client, {"small": args.small, "large": args.large}, said)
        # The language model loads on the first sentence that needs a parse: not timed.
        client.blocks.summarizer.summarize("block", ["user: I'd rather not talk about it."],
                                           T0)
        runs = {chat: fold(client, chat, n)
                for chat, n in (("small", args.small), ("large", args.large))}
    OUT.mkdir(exist_ok=True)
    (OUT / "blocks.json").write_text(json.dumps({"messages_from": source, **runs}, indent=2))
    for run in runs.values():
        print(f"{run['messages']:>7,} messages: {run['blocks']:>6,} blocks and "
              f"{run['merges']:,} merges in {run['seconds']:.1f} s = "
              f"{run['blocks_per_s']:,.0f} blocks/s; {run['active_after']} active after; "
              f"coverage {'ok' if not run['coverage_problems'] else run['coverage_problems']}"
              f" (load {run['load_before']:.1f})")
    large = runs["large"]
    print(f"goal: >= {GOAL} blocks/s at {args.large:,} messages: "
          f"{'met' if large['blocks_per_s'] >= GOAL else 'MISSED'}")
