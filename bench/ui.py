"""The inspector's pages on a big chat: 5,000 memories and 20,000 messages.

Builds one chat of tenant ``bench``: 20,000 messages (pipelined inserts) and 5,000 memories
through ``Writer.apply`` in chunks of 250 (the gate and the history as any write makes
them; random unit vectors stand in for the embedder's, which only the ask page reads, and
it embeds its query for real), each resting on one of the messages. Then the service's app
(the inspector at /ui) runs on uvicorn on 127.0.0.1, and each page is fetched ``--samples``
times with a Bearer key: the figure is the request's time over loopback HTTP, the server's
time and one local round trip. Goal: p95 <= 300 ms for every page.

``python -m bench ui [--database NAME] [--samples N]``; figures go to ``bench/out/ui.json``.
"""

from __future__ import annotations

import argparse
import json
import socket
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import numpy as np
import uvicorn

from bench.chat_size import statements
from bench.timing import timing
from engrammar import store
from engrammar.client import Client
from engrammar.models import Scope
from engrammar.scheduler._scheduler import run_job
from engrammar.service import Keys, create_app

OUT = Path(__file__).parent / "out"
MEMORIES = 5_000
MESSAGES = 20_000
CHUNK = 250
SCOPE = Scope(user_id="bench:long", chat_id="chat")
T0 = datetime(2025, 1, 1, 9, 0, tzinfo=UTC)
NOW = datetime(2026, 11, 3, 2, 0, tzinfo=UTC)


def build(client: Client) -> None:
    with client.db.connection() as conn:
        store.erase_user(conn, SCOPE.user_id)
    words = ["I went", "to the", "market and", "bought some", "apples", "then I", "called",
             "my sister", "about the", "trip to", "Lisbon", "next week"]
    rng = np.random.default_rng(7)
    step = (NOW - T0) / MESSAGES
    started = time.perf_counter()
    with client.db.connection() as conn, conn.pipeline():
        for i in range(MESSAGES):
            text = " ".join(rng.choice(words, size=8)) + f" ({i})"
            store.insert_message(conn, SCOPE, "user" if i % 2 == 0 else "assistant", text,
                                 T0 + step * i)
    print(f"  {MESSAGES:,} messages in {time.perf_counter() - started:.1f} s")
    # One pipeline into a database of its own: the ids are consecutive.
    first = client.log(SCOPE.user_id, SCOPE.chat_id, limit=1)[0].id - MESSAGES + 1
    ops = statements(MEMORIES)
    started = time.perf_counter()
    for at in range(0, MEMORIES, CHUNK):
        chunk = [op.model_copy(update={"evidence": [first + 4 * (at + i)]})
                 for i, op in enumerate(ops[at:at + CHUNK])]
        vectors = rng.standard_normal((len(chunk), client.embedder.dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        with client.db.connection() as conn, conn.transaction():
            client.writer.apply(conn, SCOPE, chunk, now=T0 + step * 4 * at, source="bench",
                                vectors=list(vectors))
    print(f"  {MEMORIES:,} memories in {time.perf_counter() - started:.1f} s")
    # The window's blocks, as the blocks job keeps them (every 10 minutes): without them a
    # compiled turn reads all 20,000 messages as raw pairs.
    started = time.perf_counter()
    run_job(client, "blocks", NOW)
    print(f"  the window's blocks in {time.perf_counter() - started:.1f} s")
    run_job(client, "lifecycle", NOW)


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench ui")
    parser.add_argument("--database", default="memory_bench_ui")
    parser.add_argument("--samples", type=int, default=40)
    args = parser.parse_args(argv if argv is not None else [])
    client = Client.open(database=args.database)
    try:
        counted = client.chats(SCOPE.user_id)
        row = next((r for r in counted if r["user_id"] == SCOPE.user_id), None)
        if row is None or sum(row["counts"].values()) < MEMORIES // 2:
            build(client)
        keys = Keys(client.db)
        _, token = keys.create("bench", ["read", "write", "admin"])
        memory = client.find_memories(SCOPE.user_id, SCOPE.chat_id, limit=1,
                                      offset=MEMORIES // 2)[1][0]
        middle = client.log(SCOPE.user_id, SCOPE.chat_id, limit=1)[0].id - MESSAGES // 2
        chat = "/ui/users/long/chats/chat"
        pages = {
            "users and chats": "/ui/",
            "jobs": "/ui/jobs",
            "memories": chat,
            "memories, filtered": f"{chat}?type=episodic&status=active&q=Lisbon",
            "memories, page 40": f"{chat}?page=40",
            "a memory": f"{chat}/memories/{memory.id}",
            "ask": f"{chat}/ask?q=what+did+I+do+in+Lisbon&at=2026-11-02",
            "ask, compiled prompt": f"{chat}/ask/compiled?q=what+did+I+do+in+Lisbon"
                                    "&at=2026-11-02",
            "log": f"{chat}/log",
            "log, scrolled back": f"{chat}/log?before={middle}",
            "history": f"{chat}/history",
            "history, rejections": f"{chat}/history?rejected=1",
        }
        port = _port()
        server = uvicorn.Server(uvicorn.Config(create_app(client, keys=keys),
                                               host="127.0.0.1", port=port,
                                               log_level="warning"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        results: dict[str, dict[str, float]] = {}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60,
                          headers={"Authorization": f"Bearer {token}"}) as http:
            for name, path in pages.items():
                for _ in range(3):  # warm: the embedder, the recall copies, the templates
                    assert http.get(path).status_code == 200, path
                samples = []
                for _ in range(args.samples):
                    started = time.perf_counter()
                    response = http.get(path)
                    samples.append((time.perf_counter() - started) * 1000)
                    assert response.status_code == 200, (path, response.status_code)
                t = timing(samples)
                results[name] = {"p50_ms": t.p50, "p95_ms": t.p95}
                flag = "" if t.p95 <= 300 else "  (over the 300 ms goal)"
                print(f"  {name:22s} p50 {t.p50:7.1f} ms  p95 {t.p95:7.1f} ms{flag}")
        server.should_exit = True
        thread.join(10)
        OUT.mkdir(exist_ok=True)
        (OUT / "ui.json").write_text(json.dumps(
            {"memories": MEMORIES, "messages": MESSAGES, "samples": args.samples,
             "pages": results}, indent=2))
    finally:
        client.close()


if __name__ == "__main__":
    main()
