"""A turn's cost against the conversation's length: ``compile`` p50/p95 on a chat of 1,000
messages and on one of 100,000, neither with any block summary (the worst case: every pair
is raw), and the ratio of the two p95s (the goal: within 1.5x).

``python -m bench turn_cost [--small N] [--large N] [--turns N] [--fold]`` (or ``python -m
bench compile --mode size ...``); ``--fold`` then runs the blocks job over both chats and
measures again, the window as a chat that has been folded sees it. Works in a database of
its own (``memory_bench_turn``), emptied first; the chats are written with SQL (user and
assistant in turn, ~20 words each), so only compile is timed. Each compile is given its
``now`` and notes nothing (``record=False``), so every turn reads the same state.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from bench import blocks
from engrammar import Client, Settings

DATABASE = "memory_bench_turn"
OUT = Path(__file__).parent / "out"
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def fill(client: Client, chats: dict[str, int]) -> None:
    """Each chat: user and assistant in turn, every message its own (numbered) line."""
    said = [f"Message {i}: we talked about the garden, the trip to Porto and the new job at"
            " the clinic again today, and what to cook on Sunday."
            for i in range(1, max(chats.values(), default=0) + 1)]
    blocks.fill(client, chats, said)


def measure(client: Client, chats: dict[str, int], turns: int, label: str) -> dict[str, Any]:
    """compile p50/p95 in each chat, and the ratio of the largest's p95 to the smallest's."""
    p95: dict[str, float] = {}
    out: dict[str, Any] = {}
    for chat, n in chats.items():
        times = []
        for turn in range(turns + 10):
            started = time.perf_counter()
            client.compile("u", chat, f"What did we say about Porto? ({turn})", now=T0,
                           record=False)
            if turn >= 10:  # the first turns warm the process's copies
                times.append(time.perf_counter() - started)
        ms = np.array(times) * 1000
        p95[chat] = float(np.percentile(ms, 95))
        out[chat] = {"messages": n, "p50_ms": round(float(np.percentile(ms, 50)), 1),
                     "p95_ms": round(p95[chat], 1), "load": round(os.getloadavg()[0], 1)}
        print(f"{label}: compile at {n:>7,} messages: p50 {np.percentile(ms, 50):7.1f} ms, "
              f"p95 {p95[chat]:7.1f} ms ({turns} turns, load {os.getloadavg()[0]:.1f})")
    small, large = min(chats, key=chats.__getitem__), max(chats, key=chats.__getitem__)
    out["p95_ratio"] = round(p95[large] / p95[small], 2)
    print(f"{label}: p95 ratio {chats[large]:,} / {chats[small]:,} messages: "
          f"{out['p95_ratio']:.2f}x (goal <= 1.5x)")
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench turn_cost")
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--fold", action="store_true",
                        help="then fold both chats with the blocks job and measure again")
    args = parser.parse_args(argv or [])
    chats = {"small": args.small, "large": args.large}
    result: dict[str, Any] = {}
    with Client.open(Settings(), database=DATABASE) as client:
        fill(client, chats)
        result["raw"] = measure(client, chats, args.turns, "every pair raw")
        if args.fold:
            started = time.perf_counter()
            report = client.blocks.run(T0)
            print(f"blocks job: {report.created:,} blocks, {report.merged:,} merges in "
                  f"{time.perf_counter() - started:.1f} s")
            result["folded"] = measure(client, chats, args.turns, "after the blocks job")
    OUT.mkdir(exist_ok=True)
    (OUT / "turn_cost.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
