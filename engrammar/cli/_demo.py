"""The main job end to end: record a conversation over a few days, run the nightly jobs after
each day, recall a memory block before the next turn, then move the clock 40 days and show
what decayed.

Run with `engram demo` (`make demo` in a checkout). It uses the embedded database under
MEMORY_DATA_DIR (or MEMORY_DATABASE_URL) and the offline parser extractor and extractive
summarizer unless an LLM is configured (MEMORY_LLM=openai). Time is a parameter: the demo
passes its own clock to every job.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import click

from engrammar._table import table
from engrammar.cli._app import opened
from engrammar.client import Client
from engrammar.recall._decay import weight_of
from engrammar.scheduler import _scheduler as scheduler

USER, CHAT = "demo-user", "companion"
START = datetime(2026, 11, 2, 18, 0, tzinfo=UTC)  # a Monday evening

CONVERSATION = [
    (0, "user", "Hi! My name is Dana and I live in Berlin."),
    (0, "assistant", "Nice to meet you, Dana! What do you do in Berlin?"),
    (0, "user", "I work as a software engineer. I love hiking in the Alps."),
    (0, "user", "Please never mention my ex. I promised to call mom on Friday."),
    (0, "user", "I'm so tired today."),
    (1, "user", "I'm based in Berlin, by the way, near the river."),
    (1, "user", "Actually I work in design now, not engineering."),
    (1, "user", "I'm going to visit the Pergamon museum next week."),
    (2, "user", "Yesterday I ran my first 10k race in the rain."),
    (4, "user", "I called my mom, she's doing fine."),
]


def show(client: Client, now: datetime) -> None:
    # weight: R = 0.5 ** (days since last referenced / the type's half-life), recall._decay
    settings = client.settings.decay
    rows = [(m.id, m.type.value, m.status.value, m.surface.value,
             f"{weight_of(m, now, settings):.2f}", m.content)
            for m in client.memories(USER, CHAT)]
    print(table(rows, ["id", "type", "status", "surface", "weight", "content"]))


def night(client: Client, now: datetime) -> None:
    for report in scheduler.run_nightly(client, now):
        if report["job"] == "extract":
            print(f"  extract: {report['messages']} messages, {report['proposed']} ops "
                  f"proposed, {report['applied']} applied, rejected {report['rejected']}")
        elif report["job"] == "lifecycle":
            print(f"  lifecycle: {report['transitions']} transitions "
                  f"{ {k: v for k, v in report['moved'].items() if v} }")
        elif report["job"] == "index":
            print(f"  index: {report['embedded']} messages embedded for recall over the log")
        elif report["job"] == "summaries":
            print(f"  summaries: written {report['written']}")
        else:
            print(f"  {report['job']}: {report.get('skipped') or report}")


@click.command()
@click.pass_context
def demo(ctx: click.Context) -> None:
    """Run the main job end to end on a sample conversation: record five days, run the
    nights, recall a block, move the clock 40 days. It erases and rewrites the user
    "demo-user" only."""
    with opened(ctx) as client:
        client.erase_user(USER)  # the demo starts from a clean slate on every run
        print(f"extractor: {client.extractor.name}, summarizer: {client.summarizer.name}, "
              f"embedder: {client.embedder.name}\n")
        days = sorted({d for d, _, _ in CONVERSATION})
        for day in days:
            for i, (d, role, text) in enumerate(CONVERSATION):
                if d == day:
                    client.record(USER, CHAT, role, text,
                                  at=START + timedelta(days=d, minutes=i))
            print(f"night after day {day}:")
            night(client, START + timedelta(days=day, hours=8))
        now = START + timedelta(days=5)
        print()
        show(client, now)

        query = "Any plans for the weekend? Where are you these days?"
        block = client.recall(USER, CHAT, query, now=now)
        print(f"\nrecall before the next turn ({query!r}): {block.tokens}/{block.budget} "
              f"tokens\n\n{block.text}\n")

        later = now + timedelta(days=40)
        print(f"the clock moves 40 days, to {later.date()}; the night runs:")
        night(client, later)
        print()
        show(client, later)
        stale = [m.content for m in client.memories(USER, CHAT, ["stale", "archived"])]
        print(f"\nno longer recalled: {stale}")


COMMANDS = (demo,)
