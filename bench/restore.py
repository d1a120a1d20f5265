"""Export, erase and import of one user: the seconds of each and the rows a second the import
restores (every row under a fresh id, every reference rewritten: store._restore), for a
user of 4,000 messages and 400 memories in 20 chats, with a night of jobs run over them."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from engrammar import Op, Settings, store
from engrammar._userdata import dump
from engrammar.client import Client
from engrammar.models import MemoryType, OpKind
from engrammar.runtime._embedder import LocalEmbedder
from engrammar.scheduler import _scheduler as scheduler

OUT = Path(__file__).parent / "out"
DATABASE = "memory_bench_restore"
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
USER = "bench-user"
CHATS = 20
MESSAGES = 4000
MEMORIES = 400
WORDS = ("the plumber came and fixed the kitchen sink before lunch", "my sister Ines is "
         "getting married in Porto next spring", "work is fine, the audit wraps up friday",
         "we watched a documentary about octopus intelligence", "thinking of taking up "
         "the cello again after ten years", "the cat knocked a glass off the table")


def _populate(client: Client) -> None:
    for i in range(MESSAGES):
        client.record(USER, f"c{i % CHATS}", "user" if i // CHATS % 2 == 0 else "assistant",
                      f"{WORDS[i % len(WORDS)]} ({i})", at=T0 + timedelta(minutes=i))
    for chat in range(CHATS):
        client.apply(USER, f"c{chat}", [
            Op(op=OpKind.add, type=MemoryType.episodic, content=f"Memory {n} of chat {chat}: "
               f"{WORDS[n % len(WORDS)]}") for n in range(MEMORIES // CHATS)], now=T0)
    scheduler.run_nightly(client, T0 + timedelta(days=5))


def main() -> None:
    with Client.open(Settings(), database=DATABASE, embedder=LocalEmbedder()) as client:
        with client.db.connection() as conn:
            store.erase_everything(conn)
        _populate(client)
        started = time.perf_counter()
        data = "".join(dump(client.export_user(USER))).encode()
        exported = time.perf_counter() - started
        rows = data.count(b"\n") - 1
        started = time.perf_counter()
        client.erase_user(USER)
        erased = time.perf_counter() - started
        started = time.perf_counter()
        restored = client.import_file(data)
        imported = time.perf_counter() - started
        started = time.perf_counter()
        client.import_file(data, replace=True)
        replaced = time.perf_counter() - started
    assert restored == rows
    result = {"rows": rows, "bytes": len(data), "export_s": round(exported, 3),
              "erase_s": round(erased, 3), "import_s": round(imported, 3),
              "import_rows_per_s": round(rows / imported), "replace_s": round(replaced, 3)}
    print(f"restore {rows} rows ({len(data) / 1e6:.1f} MB): export {exported:.2f} s, "
          f"erase {erased:.2f} s, import {imported:.2f} s ({rows / imported:.0f} rows/s), "
          f"import --replace {replaced:.2f} s")
    OUT.mkdir(exist_ok=True)
    (OUT / "restore.json").write_text(json.dumps(result, indent=2))
