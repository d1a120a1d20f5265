"""The main job end to end: record a conversation, run the nightly extraction, show memories.

Run with `make demo`. It uses the embedded database under .memory/ (or MEMORY_DATABASE_URL)
and the offline rule extractor unless an LLM is configured (MEMORY_LLM=openai).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from jobs import extract
from memory import Client
from memory.cli import table

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
    (4, "user", "I called my mom, she's doing fine."),
]


def main() -> None:
    with Client.open() as client:
        client.erase_user(USER)  # the demo starts from a clean slate on every run
        print(f"extractor: {client.extractor.name}, embedder: {client.embedder.name}\n")
        for day in sorted({d for d, _, _ in CONVERSATION}):
            for i, (d, role, text) in enumerate(CONVERSATION):
                if d == day:
                    client.record(USER, CHAT, role, text, at=START + timedelta(days=d,
                                                                               minutes=i))
            night = START + timedelta(days=day, hours=8)
            report = extract.run(client, night)
            print(f"night of day {day}: {report.messages} messages, {report.proposed} ops "
                  f"proposed, {report.applied} applied, rejected {dict(report.rejected)}")
            for detail in report.details:
                for d in detail.result.decisions:
                    print(f"    {d.proposed.op.value:10} {d.verdict.value:8} {d.code:22} "
                          f"{d.proposed.content!r}")
        print()
        rows = [(m.id, m.type.value, m.status.value, m.surface.value, m.content)
                for m in client.memories(USER, CHAT)]
        print(table(rows, ["id", "type", "status", "surface", "content"]))
        query = "Any plans for the weekend? Where are you these days?"
        block = client.recall(USER, CHAT, query, now=START + timedelta(days=5), record=False)
        print(f"\nrecall before the next turn ({query!r}), {block.tokens}/{block.budget} "
              f"tokens:\n")
        print(block.text)


if __name__ == "__main__":
    main()
