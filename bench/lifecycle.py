"""One nightly lifecycle run (``nightly._lifecycle.run_lifecycle``) over 1,000,000 memories of
2,000 users.

The store is the one a daily job would leave behind: memories created over the last 120 days
(chats and physical order as in bench.recall), reinforced and surfaced at random times, and
every earlier nightly run (at the same time of day) already applied, so statuses, status
times, closed open loops and the events table are what those runs wrote.
The timed run at ``NOW`` is the next night's: it moves one day's worth of rows. The generator
knows which rows that is, and the benchmark checks the run's counts against it.

Embeddings are NULL: the lifecycle job reads and writes none. Its UPDATEs write whole row
versions, though, and a 384-d vector makes a row ~1.6 kB wider:
``python -c "from bench.lifecycle import run; run(dim=384)"`` measures that case (its own
template, ~6 GB; drop it after). Weight is derived at read (sql/006), so the run only
moves the rows whose rule fires; when it was stored and rewritten nightly the same run
took ~33 s (NULL embeddings) and ~68 s (384-d).

The loaded store is a template database, built once (the migrations as they are then);
each measurement runs on a fresh copy of it (CREATE DATABASE ... TEMPLATE, a file copy),
since the run changes rows.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql
from psycopg.types import TypeInfo
from psycopg.types.json import Jsonb

from bench.recall import DEFAULT_SURFACE, TEMPLATES, TOTAL, TYPE_P, TYPES, USERS, _fill, plan_chats

OUT = Path(__file__).parent / "out"
DATABASE = "memory_bench_lifecycle"
TEMPLATE = "memory_bench_lifecycle_template"
# Bump when the generated data changes: a template loaded by another version is rebuilt.
DATA_VERSION = 2
SEED = 20261103
CHUNK = 50_000
GOAL_S = 10.0
# The default schedule runs lifecycle at 02:30; earlier runs were at the same time each day.
NOW = datetime(2026, 11, 2, 2, 30, tzinfo=UTC)
DAY = 86_400
HISTORY_DAYS = 120
STATUSES = ("active", "stale", "archived", "contradicted")
ACTIVE, STALE, ARCHIVED, CONTRADICTED = range(4)
RULES = ("ephemeral_stale", "episodic_stale", "open_loop_due", "open_loop_silent",
         "stale_archived")
# Share of each type's memories the write gate later archives or contradicts (a new value
# for a profile slot, a loop closed in conversation, a correction), before decay would.
GATE_P = {"profile": 0.30, "preference": 0.15, "episodic": 0.03, "open_loop": 0.25,
          "shared_lore": 0.05, "protocol": 0.20, "reflection": 0.10, "ephemeral": 0.02}
REINFORCE_P = (0.55, 0.18, 0.10, 0.06, 0.04, 0.03, 0.02, 0.01, 0.005, 0.005)
MEMORY_COLUMNS = ("user_id", "chat_id", "type", "content", "status", "confidence", "salience",
                  "pinned", "surface", "slot", "created_at", "updated_at", "last_reinforced_at",
                  "last_surfaced_at", "due_at", "status_changed_at", "reinforce_count",
                  "surface_count", "metadata")
MEMORY_TYPES = ("text", "text", "text", "text", "text", "float4", "float4", "bool", "text",
                "text", "timestamptz", "timestamptz", "timestamptz", "timestamptz",
                "timestamptz", "timestamptz", "int4", "int4", "jsonb")
EVENT_COLUMNS = ("user_id", "chat_id", "memory_id", "op", "before", "after", "reason",
                 "source", "at")
EVENT_TYPES = ("text", "text", "int8", "text", "jsonb", "jsonb", "text", "text", "timestamptz")


# -- the store a daily job leaves behind ----------------------------------------------------

def _first_run(threshold: np.ndarray) -> np.ndarray:
    """For each threshold (seconds from NOW), k of the first nightly run at or after it
    (runs are at NOW - k days); negative when that is after NOW, -1 for NaN."""
    k = np.floor(-np.nan_to_num(threshold, nan=DAY) / DAY)
    return np.where(np.isnan(threshold), -1, k).astype(np.int64)


def simulate(rng: np.random.Generator, types: np.ndarray) -> dict[str, np.ndarray]:
    """Times (seconds from NOW, NaN for none) and statuses after every nightly
    run before NOW, and ``today``: the rule (index into RULES) that moves each row at NOW,
    or -1."""
    n = len(types)
    name = np.array(TYPES)[types]
    eph, epi, loop = name == "ephemeral", name == "episodic", name == "open_loop"
    created = -rng.integers(60, HISTORY_DAYS * DAY, n).astype(np.float64)
    count = rng.choice(len(REINFORCE_P), n, p=REINFORCE_P)
    # The last of `count` reinforcements: the latest of that many uniform times since creation.
    last = np.floor(created * (1 - rng.random(n) ** (1 / np.maximum(count, 1))))
    reinforced = np.where(count > 0, np.minimum(last, -1.0), np.nan)
    last_reinforced = np.fmax(created, reinforced)
    due = np.where(loop & (rng.random(n) < 0.5),
                   created + rng.integers(DAY, 21 * DAY, n), np.nan)
    pinned = (rng.random(n) < 0.015) & ~loop

    # Episodic memories go stale on reinforcement alone; one is surfaced only while active.
    k_epi = _first_run(last_reinforced + 30 * DAY)
    surface_end = np.where(epi & (k_epi >= 1), -k_epi * float(DAY), 0.0)
    surfaced = np.where(
        rng.random(n) < 0.35,
        np.floor(created + (np.minimum(surface_end, 0.0) - created) * rng.random(n)), np.nan)
    surfaced = np.where(surfaced > created, surfaced, np.nan)
    surface_count = np.where(np.isnan(surfaced), 0, 1 + rng.geometric(0.4, n))
    last_ref = np.fmax(last_reinforced, surfaced)

    # The first lifecycle move of each row: stale (ephemeral, episodic) or archived (loops),
    # at the defaults: one half-life (ephemeral 3, episodic 30, open loop 60 days, see
    # recall._decay), 2 days' grace after a due date.
    k_eph = _first_run(last_ref + 3 * DAY)
    k_due = _first_run(due + 2 * DAY)
    k_silent = _first_run(last_reinforced + 60 * DAY)  # the user's silence, not ours
    k_loop = np.maximum(k_due, k_silent)
    k_first = np.where(eph, k_eph, np.where(epi, k_epi, np.where(loop, k_loop, -1)))
    k_first = np.where(pinned, -1, k_first)
    decay_at = np.where(k_first >= 1, -k_first * float(DAY), np.inf)

    # The gate archives or contradicts some rows first, between their last reference and
    # the moment decay would have moved them.
    gate_p = np.array([GATE_P[t] for t in TYPES])[types]
    gate_at = np.floor(last_ref + (np.minimum(decay_at, 0.0) - last_ref) * rng.random(n))
    gated = (rng.random(n) < gate_p) & ~pinned & (gate_at > last_ref)
    gate_status = np.where(rng.random(n) < 0.7, ARCHIVED, CONTRADICTED)

    status = np.full(n, ACTIVE)
    changed = np.full(n, np.nan)
    stale_at = np.full(n, np.nan)  # for the events: when a row went stale
    closed = np.zeros(n, dtype=np.int8)  # 1: due date passed, 2: silence
    today = np.full(n, -1)

    decays = ~gated & ~pinned
    staling = decays & (eph | epi)
    went_stale = staling & (k_first >= 1)
    k_archive = k_first - 30
    archived_stale = went_stale & (k_archive >= 1)
    status[went_stale] = STALE
    stale_at[went_stale] = -k_first[went_stale] * float(DAY)
    changed[went_stale] = stale_at[went_stale]
    status[archived_stale] = ARCHIVED
    changed[archived_stale] = -k_archive[archived_stale] * float(DAY)
    today[staling & eph & (k_first == 0)] = RULES.index("ephemeral_stale")
    today[staling & epi & (k_first == 0)] = RULES.index("episodic_stale")
    today[went_stale & (k_archive == 0)] = RULES.index("stale_archived")

    loops = decays & loop
    loop_closed = loops & (k_first >= 1)
    status[loop_closed] = ARCHIVED
    changed[loop_closed] = -k_first[loop_closed] * float(DAY)
    closed[loop_closed] = np.where(k_due[loop_closed] == k_first[loop_closed], 1, 2)
    today[loops & (k_first == 0) & (k_due == 0)] = RULES.index("open_loop_due")
    today[loops & (k_first == 0) & (k_due != 0)] = RULES.index("open_loop_silent")

    status[gated] = gate_status[gated]
    changed[gated] = gate_at[gated]

    updated = np.fmax(last_reinforced, changed)
    return {"created": created, "reinforced": reinforced, "surfaced": surfaced, "due": due,
            "changed": changed, "updated": updated, "stale_at": stale_at, "status": status,
            "pinned": pinned, "count": count, "surface_count": surface_count,
            "closed": closed, "today": today}


@dataclass
class Plan:
    users: list[str]
    chats: list[str]
    types: np.ndarray
    rows: dict[str, np.ndarray]
    order: np.ndarray  # physical (COPY) order; row order[i] gets id i + 1


def plan(rng: np.random.Generator) -> Plan:
    chats = plan_chats(rng)
    chat_of = np.repeat(np.arange(len(chats)), [c.size for c in chats])
    types = rng.choice(len(TYPES), TOTAL, p=TYPE_P)
    rows = simulate(rng, types)
    rows["chat"] = chat_of
    return Plan([c.user_id for c in chats], [c.chat_id for c in chats], types, rows,
                rng.permutation(TOTAL))


def expected(p: Plan) -> dict[str, Any]:
    """What the run at NOW should do, from the generator alone."""
    today = p.rows["today"]
    status = p.rows["status"]
    moved = {rule: int((today == i).sum()) for i, rule in enumerate(RULES)}
    return {"moved": moved,
            "statuses_before": {s: int((status == i).sum()) for i, s in enumerate(STATUSES)},
            "pinned": int(p.rows["pinned"].sum())}


def _at(seconds: float) -> datetime | None:
    return None if seconds != seconds else NOW + timedelta(seconds=seconds)


def memory_rows(rng: np.random.Generator, p: Plan, dim: int) -> Iterator[tuple[Any, ...]]:
    """MEMORY_COLUMNS, then the vector when ``dim``."""
    surfaces = np.array([DEFAULT_SURFACE[t] for t in TYPES], dtype=object)
    r = p.rows
    meta = (Jsonb({}), Jsonb({"closed_reason": "due date passed"}),
            Jsonb({"closed_reason": "silence"}))
    for start in range(0, TOTAL, CHUNK):
        idx = p.order[start:start + CHUNK]
        m = len(idx)
        topics = rng.integers(0, 64, m).tolist()
        picks = rng.integers(0, 1 << 30, (m, 9)).tolist()
        conf = rng.uniform(0.5, 1.0, m).tolist()
        sal = rng.uniform(0.2, 1.0, m).tolist()
        vectors = rng.standard_normal((m, dim), dtype=np.float32) if dim else None
        if vectors is not None:
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        cols = [r[k][idx].tolist() for k in (
            "chat", "status", "pinned", "created", "updated", "reinforced", "surfaced", "due",
            "changed", "count", "surface_count", "closed")]
        for i, (c, st, pin, cr, up, re, su, du, ch, cnt, scnt, cl) in enumerate(
                zip(*cols, strict=True)):
            t = TYPES[p.types[idx[i]]]
            templates = TEMPLATES[t]
            topic = topics[i]
            yield (p.users[c], p.chats[c], t, _fill(templates[topic % len(templates)], topic,
                                                     picks[i]),
                   STATUSES[st], conf[i], sal[i], pin, surfaces[p.types[idx[i]]],
                   "home" if t == "profile" and topic % 5 == 0 else None,
                   _at(cr), _at(up), _at(re), _at(su), _at(du), _at(ch), cnt, scnt, meta[cl],
                   *(() if vectors is None else (vectors[i],)))


def event_rows(p: Plan) -> Iterator[tuple[Any, ...]]:
    """One event per memory for its creation, one per earlier lifecycle move and gate change
    (the events table a store of this size has; each run inserts into it)."""
    r = p.rows
    added = Jsonb({"status": "active"})
    status_json = {s: Jsonb({"status": s}) for s in STATUSES}
    for start in range(0, TOTAL, CHUNK):
        idx = p.order[start:start + CHUNK]
        cols = [r[k][idx].tolist() for k in ("chat", "status", "created", "changed",
                                              "stale_at", "closed")]
        for i, (c, st, cr, ch, sa, cl) in enumerate(zip(*cols, strict=True)):
            u, chat, mid = p.users[c], p.chats[c], start + i + 1
            yield (u, chat, mid, "add", None, added, "extracted", "job:extract", _at(cr))
            if sa == sa:
                yield (u, chat, mid, "lifecycle", status_json["active"], status_json["stale"],
                       "no reference", "job:lifecycle", _at(sa))
                if st == ARCHIVED:
                    yield (u, chat, mid, "lifecycle", status_json["stale"],
                           status_json["archived"], "stale for 30 days", "job:lifecycle",
                           _at(ch))
            elif st >= ARCHIVED:
                source = "job:lifecycle" if cl else "job:extract"
                yield (u, chat, mid, "lifecycle" if cl else "update", status_json["active"],
                       status_json[STATUSES[st]], "closed" if cl else "superseded", source,
                       _at(ch))


def _copy(conn: psycopg.Connection[Any], table: str, columns: tuple[str, ...],
          types: tuple[str | int, ...], rows: Iterator[tuple[Any, ...]]) -> int:
    n = 0
    with conn.cursor() as cur, cur.copy(
            f"COPY {table} ({', '.join(columns)}) FROM STDIN WITH (FORMAT BINARY, FREEZE)"
    ) as copy:
        copy.set_types(list(types))
        for n, row in enumerate(rows, 1):
            copy.write_row(row)
            if n % 250_000 == 0:
                print(f"  {table}: {n:,} rows", flush=True)
    return n


def load(url: str, dim: int) -> dict[str, Any]:
    """Load the store with binary COPY FREEZE; secondary indexes are rebuilt after it.
    Embeddings are NULL, or random unit vectors of ``dim`` dimensions."""
    rng = np.random.default_rng(SEED)
    p = plan(rng)
    exp = expected(p)
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("SET maintenance_work_mem = '1GB'")
        columns: tuple[str, ...] = MEMORY_COLUMNS
        types: tuple[str | int, ...] = MEMORY_TYPES
        if dim:
            info = TypeInfo.fetch(conn, "vector")
            assert info is not None
            columns, types = (*columns, "embedding"), (*types, info.oid)
        indexes = conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes i"
            " WHERE tablename IN ('memories', 'memory_events')"
            " AND NOT EXISTS (SELECT 1 FROM pg_constraint c"
            "  WHERE c.conname = i.indexname AND c.contype = 'p')").fetchall()
        with conn.transaction():
            conn.execute("TRUNCATE memories, memory_events RESTART IDENTITY")
            conn.execute("DELETE FROM store_meta WHERE key = 'bench_lifecycle'")
            for name, _ in indexes:
                conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(name)))
            _copy(conn, "memories", columns, types, memory_rows(rng, p, dim))
            events = _copy(conn, "memory_events", EVENT_COLUMNS, EVENT_TYPES, event_rows(p))
            for _, ddl in indexes:
                conn.execute(ddl)
        conn.execute("VACUUM (ANALYZE) memories, memory_events")
        migrations = [r[0] for r in conn.execute(
            "SELECT name FROM schema_migrations ORDER BY name")]
        meta = {"version": DATA_VERSION, "rows": TOTAL, "dim": dim, "events": events,
                "migrations": migrations, "expected": exp,
                "load_s": round(time.perf_counter() - started, 1)}
        conn.execute("INSERT INTO store_meta (key, value) VALUES ('bench_lifecycle', %s)",
                     (Jsonb(meta),))
    return meta


def loaded(url: str, migrations: list[str]) -> dict[str, Any] | None:
    """The template's load record, if it was loaded by this DATA_VERSION under exactly the
    migrations in sql/ now (one added or removed since means a rebuild)."""
    try:
        with psycopg.connect(url) as conn:
            row = conn.execute(
                "SELECT value FROM store_meta WHERE key = 'bench_lifecycle'").fetchone()
    except psycopg.errors.UndefinedTable:
        return None
    if row is None or row[0].get("version") != DATA_VERSION or \
            row[0].get("migrations") != migrations:
        return None
    meta: dict[str, Any] = row[0]
    return meta


# -- copies and timing ------------------------------------------------------------------------

def fresh_copy(admin_url: str, template: str) -> tuple[str, float]:
    """DATABASE as a new file copy of the template; its URL and the seconds the copy took."""
    from engrammar.runtime._database import with_database

    started = time.perf_counter()
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                     " WHERE datname = %s AND pid <> pg_backend_pid()", (template,))
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
            sql.Identifier(DATABASE)))
        conn.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {} STRATEGY FILE_COPY").format(
            sql.Identifier(DATABASE), sql.Identifier(template)))
    return with_database(admin_url, DATABASE), time.perf_counter() - started


def drop_copy(admin_url: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
            sql.Identifier(DATABASE)))


def settle(url: str) -> str:
    """Fresh statistics, and a checkpoint so the run does not share the disk with the copy's;
    the WAL position after them."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ANALYZE memories, memory_events")
        conn.execute("CHECKPOINT")
        return wal_lsn(conn)


def wal_lsn(conn: psycopg.Connection[Any]) -> str:
    row = conn.execute("SELECT pg_current_wal_lsn()::text").fetchone()
    assert row is not None
    return str(row[0])


def wal_mb(conn: psycopg.Connection[Any], since: str) -> float:
    row = conn.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s::pg_lsn)",
                       (since,)).fetchone()
    assert row is not None
    return round(float(row[0]) / 1e6, 1)


def table_mb(conn: psycopg.Connection[Any]) -> dict[str, Any]:
    row = conn.execute(
        "SELECT pg_relation_size('memories'), pg_indexes_size('memories'),"
        " (SELECT n_tup_hot_upd::float8 / nullif(n_tup_upd, 0) FROM pg_stat_user_tables"
        "  WHERE relname = 'memories'),"
        " (SELECT reloptions FROM pg_class WHERE relname = 'memories')").fetchone()
    assert row is not None
    return {"heap_mb": round(row[0] / 1e6), "indexes_mb": round(row[1] / 1e6),
            "hot_share": None if row[2] is None else round(row[2], 3),
            "reloptions": row[3] or []}


def main() -> None:
    run(dim=0)


def run(dim: int) -> None:
    """Measure on a store whose embeddings are NULL (dim 0) or of ``dim`` dimensions."""
    from engrammar.nightly._lifecycle import run_lifecycle
    from engrammar.runtime._database import Database, migrations, resolve_url, with_database
    from engrammar.settings import DecaySettings, LifecycleSettings, Settings

    settings = Settings()
    template = TEMPLATE if not dim else f"{TEMPLATE}_{dim}d"
    template_url = resolve_url(settings, template)
    admin_url = with_database(template_url, "postgres")
    meta = loaded(template_url, [name for name, _ in migrations()])
    if meta is None:
        print(f"loading {TOTAL:,} memories into {template} (once)...", flush=True)
        # From scratch: a migration removed from sql/ cannot be undone in place.
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                sql.Identifier(template)))
        template_url = resolve_url(settings, template)
        Database(template_url, max_size=1).close()  # migrates
        meta = load(template_url, dim)
        print(f"  loaded in {meta['load_s']} s")
    else:
        print(f"reusing {template}: {TOTAL:,} memories already loaded")
    exp = meta["expected"]
    # The defaults: simulate() moves rows at the default half-lives and windows.
    cfg, half_lives = LifecycleSettings(), DecaySettings()
    load_before = os.getloadavg()[0]
    try:
        # run_lifecycle as the nightly job calls it, then again at the same now.
        url, copy_s = fresh_copy(admin_url, template)
        with Database(url, max_size=1) as db:
            lsn = settle(url)
            t = time.perf_counter()
            first = run_lifecycle(db, NOW, cfg, half_lives).to_json()
            first_s = time.perf_counter() - t
            with db.connection() as conn:
                first_wal = wal_mb(conn, lsn)
                sizes = table_mb(conn)
            t = time.perf_counter()
            second = run_lifecycle(db, NOW, cfg, half_lives).to_json()
            second_s = time.perf_counter() - t
    finally:
        drop_copy(admin_url)
    load_after = os.getloadavg()[0]
    assert first["moved"] == exp["moved"], (first["moved"], exp["moved"])

    result = {
        "rows": TOTAL, "users": USERS, "now": NOW.isoformat(),
        "embeddings": (f"{dim}-d" if dim else
                       "NULL (lifecycle reads none; rows with vectors are ~1.6 kB wider)"),
        "weight": "derived at read (recall._decay.weight_of), not stored",
        "statuses_before": exp["statuses_before"], "pinned": exp["pinned"],
        "run_s": round(first_s, 3), "moved": first["moved"],
        "transitions": first["transitions"], "wal_mb": first_wal, "after_run": sizes,
        "second_run_s": round(second_s, 3), "second_moved": second["transitions"],
        "expected": {"moved": exp["moved"]},
        "template_copy_s": round(copy_s, 1), "goal_s": GOAL_S, "met": first_s < GOAL_S,
    }
    OUT.mkdir(exist_ok=True)
    name = "lifecycle.json" if not dim else f"lifecycle_{dim}d.json"
    (OUT / name).write_text(json.dumps(result, indent=2))

    print(f"one lifecycle run over {TOTAL:,} memories of {USERS:,} users at {NOW:%Y-%m-%d %H:%M}"
          + (f" ({dim}-d embeddings)" if dim else " (embeddings NULL: lifecycle reads none)"))
    print("before: " + ", ".join(f"{k} {v:,}" for k, v in exp["statuses_before"].items())
          + f"; pinned {exp['pinned']:,}")
    print(f"{'rule':<18} {'moved':>8} {'expected':>9}")
    for rule in RULES:
        print(f"{rule:<18} {first['moved'].get(rule, 0):>8,} {exp['moved'][rule]:>9,}")
    print(f"{'run_lifecycle':<18} {first_s:>8.2f} s (WAL {first_wal:,.0f} MB)")
    hot = sizes["hot_share"]
    print(f"memories after the run: heap {sizes['heap_mb']:,} MB, indexes "
          f"{sizes['indexes_mb']:,} MB, HOT updates {'-' if hot is None else f'{hot:.0%}'}")
    print(f"{'second run':<18} {second_s:>8.2f} s (same now: moved {second['transitions']})")
    print(f"goal < {GOAL_S:g} s: {'met' if first_s < GOAL_S else 'MISSED'}; template copy "
          f"{copy_s:.1f} s (not timed)")
    print(f"load average {load_before:.1f} -> {load_after:.1f} on {os.cpu_count()} cores")
