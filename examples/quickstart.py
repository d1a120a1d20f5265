"""The 30-second example of the README: two messages today, the night's jobs, and the
memory block before tomorrow's first turn. Run: python examples/quickstart.py"""

from datetime import UTC, datetime, timedelta

from engrammar import Client
from engrammar.scheduler import run_nightly

now = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
with Client.open() as memory:  # an embedded PostgreSQL unless MEMORY_DATABASE_URL is set
    memory.erase_user("ada")  # start clean on every run
    memory.record("ada", "chat-1", "user", "I'm Ada, I just moved to Lisbon with my cat Miso.",
                  at=now)
    memory.record("ada", "chat-1", "user", "I'm vegetarian, and please never bring up my ex.",
                  at=now)
    memory.record("ada", "chat-1", "user", "I have a dentist appointment on Friday.", at=now)

    run_nightly(memory, now + timedelta(hours=14))  # extract, index, lifecycle, summaries

    block = memory.recall("ada", "chat-1", "What should I cook tonight?",
                          now=now + timedelta(days=1))
    print(block.text)
    print(f"\n{block.tokens} tokens; items: " + ", ".join(
        f"{i.section}:{i.memory_id}" for i in block.items))
