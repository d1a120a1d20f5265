"""The embedded PostgreSQL: cold start (initdb + start), warm start (existing data, server
stopped) and attach (server already running), each to a first query."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path

import psycopg

from engrammar.runtime._database import start_embedded, stop_embedded
from engrammar.settings import Settings

OUT = Path(__file__).parent / "out"


def _to_first_query(data_dir: Path) -> float:
    started = time.perf_counter()
    with psycopg.connect(start_embedded(data_dir)) as conn:
        conn.execute("SELECT 1")
    return time.perf_counter() - started


def main() -> None:
    # A data directory of its own beside the project's (never under a home directory).
    parent = Settings().data_dir.resolve()
    parent.mkdir(parents=True, exist_ok=True)
    data_dir = Path(tempfile.mkdtemp(prefix="bench-server-", dir=parent))
    try:
        cold = _to_first_query(data_dir)
        attach = _to_first_query(data_dir)
        stop_embedded(data_dir)
        warm = _to_first_query(data_dir)
    finally:
        stop_embedded(data_dir)
        shutil.rmtree(data_dir, ignore_errors=True)
    result = {"cold_start_s": round(cold, 2), "warm_start_s": round(warm, 2),
              "attach_s": round(attach, 3)}
    OUT.mkdir(exist_ok=True)
    (OUT / "server.json").write_text(json.dumps(result, indent=2))
    for key, value in result.items():
        print(f"{key:14} {value}")
