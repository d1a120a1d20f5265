"""What a process's caches hold after it recalled many chats and one very long one: the
estimated bytes of each cache (recall copies, log copies, token counts) against its budget,
and the process's resident memory above its baseline.

``python -m bench caches [--chats N] [--long N]``. Works in a database of its own
(``memory_bench_caches``), emptied first. The chats are written with SQL (one message and
one memory each, with a vector; the long chat's messages all indexed), so what is timed
and measured is recall alone: 10,000 chats recalled once each, then the first and a second
recall of a chat of 100,000 messages. Queries are given as vectors (no model time).
"""

from __future__ import annotations

import argparse
import resource
import time
from datetime import UTC, datetime

from engrammar import Client, Settings, store
from engrammar.runtime._tokens import CountCache

DATABASE = "memory_bench_caches"
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
MB = 2**20


def rss() -> int:
    """Resident bytes now (Linux /proc), falling back to the peak."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def fill(client: Client, chats: int, long: int) -> None:
    dim = client.embedder.dim
    vector = "[" + ",".join(["0.05"] * dim) + "]"
    with client.db.connection() as conn:
        store.erase_everything(conn)
        conn.execute(
            "INSERT INTO messages (user_id, chat_id, role, content, at, embedding)"
            " SELECT 'u' || i, 'c', 'user', 'I live in city number ' || i || ' and like tea.',"
            " %s, %s::vector FROM generate_series(1, %s) i", (T0, vector, chats))
        conn.execute(
            "INSERT INTO memories (user_id, chat_id, type, content, confidence, salience,"
            " surface, created_at, updated_at, embedding)"
            " SELECT 'u' || i, 'c', 'profile', 'Lives in city number ' || i, 0.9, 0.5,"
            " 'speak', %s, %s, %s::vector FROM generate_series(1, %s) i",
            (T0, T0, vector, chats))
        conn.execute(
            "INSERT INTO messages (user_id, chat_id, role, content, at, embedding)"
            " SELECT 'long', 'c', CASE WHEN i %% 2 = 0 THEN 'user' ELSE 'assistant' END,"
            " 'Message ' || i || ': we talked about the garden, the trip to Porto and the"
            " new job at the clinic again today.', %s, %s::vector"
            " FROM generate_series(1, %s) i", (T0, vector, long))
        conn.execute("INSERT INTO chats (user_id, chat_id) SELECT DISTINCT user_id, chat_id"
                     " FROM messages ON CONFLICT DO NOTHING")
        conn.execute("UPDATE chats c SET indexed_through = m.last FROM (SELECT user_id,"
                     " chat_id, max(id) AS last FROM messages GROUP BY 1, 2) m"
                     " WHERE m.user_id = c.user_id AND m.chat_id = c.chat_id")
        conn.execute("ANALYZE")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench caches")
    parser.add_argument("--chats", type=int, default=10_000)
    parser.add_argument("--long", type=int, default=100_000)
    args = parser.parse_args(argv or [])
    settings = Settings()
    with Client.open(settings, database=DATABASE) as client:
        started = time.perf_counter()
        fill(client, args.chats, args.long)
        print(f"filled {args.chats:,} chats and one of {args.long:,} messages in "
              f"{time.perf_counter() - started:.1f}s")
        query = client.embedder.embed(["where does the user live?"])[0]
        client.recall("u1", "c", "where?", now=T0, vector=query, record=False)
        base = rss()
        started = time.perf_counter()
        for i in range(1, args.chats + 1):
            client.recall(f"u{i}", "c", f"where does user {i} live?", now=T0,
                          vector=query, record=False)
        many = time.perf_counter() - started
        print(f"{args.chats:,} chats recalled once: {1000 * many / args.chats:.2f} ms each")
        for attempt in ("first", "second"):
            started = time.perf_counter()
            block = client.recall("long", "c", "the trip to Porto", now=T0, vector=query,
                                  record=False)
            print(f"{attempt} recall of the {args.long:,}-message chat: "
                  f"{time.perf_counter() - started:.2f}s "
                  f"({sum(1 for i in block.items if i.section == 'excerpt')} excerpts)")
        counts = client.counter.count
        tokens = counts.nbytes if isinstance(counts, CountCache) else 0
        held = {"recall copies": (client.snapshots.nbytes, settings.recall.cache_bytes),
                "log copies": (client.logs.nbytes, settings.log.cache_bytes),
                "token counts": (tokens, settings.token_cache_bytes)}
        for name, (used, budget) in held.items():
            print(f"{name:14} {used / MB:7.1f} MB of {budget / MB:.0f} MB")
        total = sum(used for used, _ in held.values())
        budget = sum(b for _, b in held.values())
        print(f"{'caches':14} {total / MB:7.1f} MB of {budget / MB:.0f} MB; resident "
              f"+{(rss() - base) / MB:.1f} MB above the baseline")


if __name__ == "__main__":
    main()
