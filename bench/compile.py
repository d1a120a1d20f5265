"""The whole-turn context compiler against the naive full-history prompt, over 50 turns.

A scripted app loop on a clock of its own (three minutes a turn). Each turn the user writes a
short message with a ~300-token artifact pasted in (a log excerpt, a traceback, a query plan,
a code snippet or a config file, generated deterministically and different every turn); the
app compiles the prompt (``Client.compile``), the scripted assistant answers, the app records
both messages and lets ``Client.observe`` lift the reply's "Decision:"/"Constraint:"/"Open:"
lines. Every five turns a background worker runs the extract job (the offline rule
extractor) and the window job (block summaries); compile never summarises inline.

At turn 1 the user says "Always remember that my production database is called atlas-prod":
the rule extractor's "remember that" rule pins it when the extract job first runs (turn 5).
At turn 20 the assistant's reply carries a "Decision:" line; at turn 45 the user asks about
it in other words. The naive prompt is the system prompt, every earlier message verbatim and
the user's message, counted with the same ``recall._assembler.estimate``. Each budget runs in a
chat of its own, so the runs do not interact.

Reduction is 1 - (average compiled tokens / average naive tokens) over the 50 turns.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from engrammar import store
from engrammar.client import Client
from engrammar.recall._layers import Compiled, estimate
from engrammar.runtime._tokens import TokenCounter
from engrammar.scheduler import _blocks as blocks

OUT = Path(__file__).parent / "out"
DATABASE = "memory_bench_compile"
USER = "bench-user"
TURNS = 50
BUDGETS = (800, 2_000, 8_000)
JOBS_EVERY = 5
STEP = timedelta(minutes=3)
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
SEED = 20260302
ARTIFACT_TOKENS = 300
NEEDLE_TURN, DECISION_TURN, QUESTION_TURN = 1, 20, 45
NEEDLE = "atlas-prod"
DECISION = "hash-partition the events table by tenant_id into 16 partitions"
# The reference system's figures, from the issue.
REFERENCE = {"naive_turn_50": 19_888, "compiled_turn_50_max": 1_999,
             "reduction_at_2000": 0.824}

SYSTEM = ("You are a senior backend engineer pairing with the user on their services. "
          "Read pasted logs and code carefully, answer concretely, and say when you are "
          "unsure.")

SERVICES = ("billing-worker", "api-gateway", "ingest-pipeline", "search-indexer",
            "auth-service", "report-exporter", "notification-fanout", "session-cache")
TABLES = ("orders", "invoices", "events", "sessions", "line_items", "customers",
          "audit_log", "webhooks")
ROUTES = ("/v1/orders", "/v1/invoices/{id}", "/v1/events:batch", "/v2/search",
          "/v1/login", "/v1/reports/export", "/v1/webhooks/retry", "/healthz")
ERRORS = ("upstream timeout after 3000ms", "connection reset by peer",
          "pool exhausted (max=20, waiting=57)", "deadlock detected on relation",
          "statement timeout", "read-only transaction", "too many clients already",
          "TLS handshake failed", "429 from payments provider", "OOMKilled (limit 512Mi)")
LEVELS = ("INFO", "INFO", "WARN", "WARN", "ERROR", "DEBUG")
COLUMNS_ = ("tenant_id", "created_at", "status", "customer_id", "amount_cents", "kind",
            "external_ref", "updated_at")


# -- the artifacts ------------------------------------------------------------------------------

def _log_line(rng: random.Random, at: datetime) -> str:
    stamp = (at + timedelta(milliseconds=rng.randrange(0, 600_000))).strftime(
        "%Y-%m-%dT%H:%M:%S.%f")[:-3]
    return (f"{stamp}Z {rng.choice(LEVELS):5} {rng.choice(SERVICES)}[pid "
            f"{rng.randrange(1000, 9999)}] {rng.choice(ERRORS)} route={rng.choice(ROUTES)} "
            f"tenant=t-{rng.randrange(1, 999):04d} attempt={rng.randrange(1, 5)}")


def _traceback_lines(rng: random.Random, at: datetime) -> list[str]:
    svc = rng.choice(SERVICES).replace("-", "_")
    lines = ["Traceback (most recent call last):"]
    for _ in range(rng.randrange(4, 7)):
        fn = rng.choice(("handle_batch", "fetch_pending", "flush", "run_once", "dispatch",
                         "commit_offsets", "render_rows", "_execute"))
        lines.append(f'  File "/srv/app/{svc}/{rng.choice(("worker", "repo", "db", "tasks"))}'
                     f'.py", line {rng.randrange(20, 900)}, in {fn}')
        lines.append(f"    {rng.choice(('rows', 'batch', 'result', 'cur'))} = "
                     f"{rng.choice(('repo', 'self.db', 'conn', 'client'))}.{fn}("
                     f"limit={rng.choice((100, 250, 500, 1000))})")
    lines.append(f"psycopg.errors.{rng.choice(('QueryCanceled', 'DeadlockDetected'))}: "
                 f"{rng.choice(ERRORS)}")
    return lines


def _plan_lines(rng: random.Random, at: datetime) -> list[str]:
    table = rng.choice(TABLES)
    col = rng.choice(COLUMNS_)
    lines = ["EXPLAIN (ANALYZE, BUFFERS)",
             f"SELECT * FROM {table} WHERE {col} = $1 ORDER BY created_at DESC LIMIT 50;"]
    for depth in range(rng.randrange(5, 8)):
        node = rng.choice(("Seq Scan", "Index Scan using", "Bitmap Heap Scan", "Sort",
                           "Nested Loop", "Hash Join", "Limit"))
        cost = rng.uniform(0.4, 90_000)
        lines.append(f"{'  ' * depth}->  {node} on {table}  (cost=0.43..{cost:.2f} "
                     f"rows={rng.randrange(1, 400_000)} width={rng.randrange(16, 300)}) "
                     f"(actual time={rng.uniform(0.01, 4000):.3f} rows={rng.randrange(0, 9000)} "
                     f"loops=1)")
        lines.append(f"{'  ' * depth}      Buffers: shared hit={rng.randrange(0, 90_000)} "
                     f"read={rng.randrange(0, 40_000)}")
    lines.append(f"Planning Time: {rng.uniform(0.1, 3):.3f} ms")
    lines.append(f"Execution Time: {rng.uniform(5, 9000):.3f} ms")
    return lines


def _code_lines(rng: random.Random, at: datetime) -> list[str]:
    table = rng.choice(TABLES)
    fn = rng.choice(("sync_batch", "backfill", "retry_failed", "export_rows", "compact"))
    size = rng.choice((100, 250, 500, 1000))
    return [
        f"def {fn}(conn, since, batch_size={size}):",
        f'    """Move {table} rows changed since `since` in batches."""',
        "    cursor = None",
        "    while True:",
        "        rows = conn.execute(",
        f'            "SELECT id, {rng.choice(COLUMNS_)}, updated_at FROM {table} "',
        '            "WHERE updated_at > %s AND (%s IS NULL OR id > %s) "',
        '            "ORDER BY id LIMIT %s",',
        "            (since, cursor, cursor, batch_size),",
        "        ).fetchall()",
        "        if not rows:",
        "            return",
        "        for row in rows:",
        f"            push_{rng.choice(('webhook', 'event', 'metric'))}(row, "
        f"timeout={rng.choice((2, 5, 10))})",
        "        cursor = rows[-1][0]",
        f"        time.sleep({rng.choice(('0.05', '0.1', '0.25'))})",
        "",
        f"# called from {rng.choice(SERVICES)} every {rng.choice((1, 5, 15))} minutes",
    ]


def _config_lines(rng: random.Random, at: datetime) -> list[str]:
    svc = rng.choice(SERVICES)
    lines = [f"name: {svc}", f"replicas: {rng.randrange(2, 12)}", "resources:",
             f"  requests: {{cpu: {rng.choice(('250m', '500m', '1'))}, memory: "
             f"{rng.choice(('256Mi', '512Mi', '1Gi'))}}}",
             f"  limits: {{cpu: {rng.choice(('1', '2'))}, memory: "
             f"{rng.choice(('512Mi', '1Gi', '2Gi'))}}}",
             "database:", f"  host: pg-{rng.choice(('primary', 'replica-1', 'replica-2'))}"
             ".internal", f"  pool_size: {rng.choice((10, 20, 40))}",
             f"  statement_timeout_ms: {rng.choice((3000, 15000, 60000))}",
             "env:"]
    for _ in range(rng.randrange(6, 10)):
        key = rng.choice(("LOG_LEVEL", "BATCH_SIZE", "RETRY_MAX", "RETRY_BACKOFF_MS",
                          "FEATURE_FAST_PATH", "QUEUE_URL", "CACHE_TTL_S", "WORKERS"))
        lines.append(f"  - {{name: {key}, value: \"{rng.randrange(1, 5000)}\"}}")
    return lines


KINDS = {
    "log excerpt": lambda rng, at: [_log_line(rng, at) for _ in range(12)],
    "traceback": _traceback_lines,
    "query plan": _plan_lines,
    "code snippet": _code_lines,
    "config": _config_lines,
}


def artifact(counter: TokenCounter, turn: int, at: datetime) -> tuple[str, str]:
    """A ~300-token artifact of this turn's kind: lines are added until the next would take
    it past the target, and generators are re-run until it is near it."""
    rng = random.Random(SEED * 100 + turn)
    kind = list(KINDS)[turn % len(KINDS)]
    lines: list[str] = []
    while True:
        for line in KINDS[kind](rng, at):
            if counter.count("\n".join([*lines, line])) > ARTIFACT_TOKENS + 10:
                return kind, "\n".join(lines)
            lines.append(line)


# -- the script ------------------------------------------------------------------------------------

ASKS = (
    "Here's the {kind} from {svc} after this morning's deploy. What stands out to you?",
    "{svc} is misbehaving again. I pasted the {kind} below; where would you start?",
    "Can you sanity-check this {kind}? It's from {svc} on the staging cluster.",
    "New {kind} from {svc}. Is this the same problem as before or something else?",
    "Before we roll {svc} out further, could you look over this {kind}?",
    "This {kind} came in from the on-call channel for {svc}. Anything alarming?",
)
REPLIES = (
    "The {kind} points at {svc}: the trouble starts at the first {error} and everything "
    "after it is fallout. Check the pool settings and the slow query feeding it, fix the "
    "first failure, then re-run and paste the new output if it still looks wrong.",
    "Two things in this {kind}. First, {error} repeats on the same route, so it is not "
    "random noise. Second, the retries pile up behind it. Lower the batch size in {svc}, "
    "add a timeout on the caller, and watch whether the retries drop.",
    "Nothing fatal in this {kind}, but {svc} is close to its limits: {error} shows up under "
    "load. Add an index for the hot filter, keep an eye on the p99 latency for a day, and "
    "send me the next run.",
)
SCRIPTED: dict[int, tuple[str, str]] = {
    NEEDLE_TURN: (
        "Always remember that my production database is called atlas-prod. Here's the "
        "{kind} from {svc} that woke me up tonight.",
        "That {kind} shows {svc} failing on {error} repeatedly. Start with the connection "
        "limits on the primary and the slowest query in the window, then look again."),
    3: ("Please keep answers short. Another {kind}, this time from {svc}.",
        "Short version: {error} in {svc}; raise the timeout and retry the batch."),
    8: ("We can't take downtime this week. Here's the {kind} for the {svc} change.",
        "Understood. The {kind} looks safe to apply online.\n"
        "Constraint: no downtime for schema changes this week; use online migrations only."),
    19: ("The events table passed 900 million rows and vacuum can't keep up. Here's the "
         "{kind} from {svc}. Should we split it somehow?",
         "Yes, at that size a single heap is the problem: vacuum, index bloat and every "
         "tenant's scans fight over it. Options are time-based range partitions or hash "
         "partitions on the tenant key. Let's pick one next turn once you've checked the "
         "query mix."),
    20: ("Checked the query mix: almost every query filters by tenant, rarely by date. "
         "{kind} from {svc} attached. What do we go with?",
         "Then tenant is the key: queries prune to one partition, and vacuum works per "
         "partition.\n"
         f"Decision: {DECISION}.\n"
         "Create the partitioned table alongside the old one, backfill in batches, then "
         "swap the names in one transaction."),
    33: ("The {kind} below is from {svc} after the replica failover.",
         "The failover itself was clean; {error} afterwards is the app reconnecting.\n"
         "Open: check replica lag on the new standby after tonight's vacuum."),
    QUESTION_TURN: (
        "I'm about to write the migration and I've lost track: how did we agree to split "
        "up that huge event data, and on what key? {kind} from {svc} attached.",
        "We agreed to split it by tenant, with a fixed number of hash buckets, created "
        "alongside the old table and backfilled in batches before the swap."),
}


def script(counter: TokenCounter, turn: int, at: datetime) -> tuple[str, str]:
    """The user's message (artifact pasted in) and the assistant's scripted reply."""
    rng = random.Random(SEED + turn)
    kind, text = artifact(counter, turn, at)
    values = {"kind": kind, "svc": rng.choice(SERVICES), "error": rng.choice(ERRORS)}
    ask, reply = SCRIPTED.get(turn, (rng.choice(ASKS), rng.choice(REPLIES)))
    fence = "```" if kind in ("code snippet", "config") else "```text"
    user = f"{ask.format(**values)}\n\n{fence}\n{text}\n```"
    return user, reply.format(**values)


# -- the run ---------------------------------------------------------------------------------------

@dataclass
class Run:
    budget: int
    chat: str
    tokens: list[int] = field(default_factory=list)
    layers: list[dict[str, int]] = field(default_factory=list)
    needle_kept: bool = False
    needle_where: list[str] = field(default_factory=list)
    decision_kept: bool = False
    decision_where: list[str] = field(default_factory=list)

    def summary(self, naive_average: float) -> dict[str, Any]:
        average = sum(self.tokens) / len(self.tokens)
        return {"peak": max(self.tokens), "average": round(average, 1),
                "reduction": round(1 - average / naive_average, 4),
                "needle_kept": self.needle_kept, "decision_kept": self.decision_kept,
                "over_budget_turns": sum(1 for t in self.tokens if t > self.budget),
                "turn_50": self.tokens[-1],
                "layers_average": {k: round(sum(lay.get(k, 0) for lay in self.layers)
                                            / len(self.layers), 1)
                                   for k in self.layers[-1]},
                "layers_turn_50": self.layers[-1], "needle_where": self.needle_where,
                "decision_where": self.decision_where, "per_turn": self.tokens}


def _where(compiled: Compiled, text: str) -> list[str]:
    """Which layers of a compiled prompt hold ``text``."""
    found = []
    for m in compiled.messages:
        if text not in m["content"]:
            continue
        if m["content"].startswith("<memory>"):
            found.append("memory")
        elif m["content"].startswith("Summary of earlier turns"):
            found.append("block summary")
        elif m["content"].startswith("Earlier periods"):
            found.append("temporal summary")
        elif m["role"] == "system":
            found.append("system")
        else:
            found.append(f"window ({m['role']})")
    return found


def _reset(client: Client) -> None:
    """The bench database is ours alone: empty every table but the bookkeeping."""
    with client.db.connection() as conn:
        store.erase_everything(conn)


def simulate(client: Client) -> tuple[list[int], list[Run], str | None]:
    from engrammar.scheduler import _extract as extract

    counter = client.counter
    runs = [Run(b, f"budget-{b}") for b in BUDGETS]
    history: list[dict[str, str]] = [{"role": "system", "content": SYSTEM}]
    naive: list[int] = []
    pinned: str | None = None
    for turn in range(1, TURNS + 1):
        now = T0 + STEP * (turn - 1)
        user_text, reply = script(counter, turn, now)
        naive.append(estimate(counter, [*history, {"role": "user", "content": user_text}]))
        for run in runs:
            compiled = client.compile(USER, run.chat, user_text, now=now,
                                      budget_tokens=run.budget, system=SYSTEM, record=True)
            run.tokens.append(compiled.tokens)
            run.layers.append(compiled.layers)
            if turn == QUESTION_TURN:
                run.decision_where = _where(compiled, DECISION)
                run.decision_kept = bool(run.decision_where)
            if turn == TURNS:
                # The pinned memory's own text, so a stray "atlas-prod" elsewhere won't do.
                needle = pinned or NEEDLE
                run.needle_where = _where(compiled, needle)
                run.needle_kept = bool(run.needle_where)
            said = now + timedelta(seconds=40)
            client.record(USER, run.chat, "user", user_text, at=now)
            client.record(USER, run.chat, "assistant", reply, at=said)
            client.observe(USER, run.chat, reply, now=said)
        history += [{"role": "user", "content": user_text},
                    {"role": "assistant", "content": reply}]
        if turn % JOBS_EVERY == 0:
            worker_at = now + timedelta(minutes=1)
            extract.run(client, worker_at)
            blocks.run(client, worker_at)
            if pinned is None:
                pinned = next((m.content for m in client.memories(USER, runs[0].chat)
                               if m.pinned and NEEDLE in m.content), None)
    return naive, runs, pinned


def plot(naive: list[int], runs: list[Run], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    turns = list(range(1, TURNS + 1))
    fig, ax = plt.subplots(figsize=(9, 5.5))
    ax.plot(turns, naive, color="black", linewidth=2, label="naive full history")
    for run, color in zip(runs, ("tab:red", "tab:blue", "tab:green"), strict=True):
        ax.plot(turns, run.tokens, color=color, marker=".", label=f"compile, budget {run.budget:,}")
        ax.axhline(run.budget, color=color, linestyle=":", linewidth=1)
    for turn, label in ((DECISION_TURN, "decision"), (QUESTION_TURN, "question")):
        ax.axvline(turn, color="grey", linestyle="--", linewidth=0.8)
        ax.text(turn + 0.3, max(naive) * 0.95, label, color="grey", fontsize=8)
    ax.set_xlabel("turn")
    ax.set_ylabel("prompt tokens (heuristic counter)")
    ax.set_title("Prompt size per turn: naive history vs compile")
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    """``--mode turns`` (the default): the 50-turn script above. ``--mode size``: compile's
    p95 at 1,000 messages against 100,000 (bench.turn_cost; its options follow)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench compile")
    parser.add_argument("--mode", choices=("turns", "size"), default="turns")
    args, rest = parser.parse_known_args(argv or [])
    if args.mode == "size":
        from bench import turn_cost

        turn_cost.main(rest)
        return
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    turns()


def turns() -> None:
    from engrammar.settings import Settings

    with Client.open(Settings(), database=DATABASE) as client:
        _reset(client)
        naive, runs, pinned = simulate(client)
        counter = client.counter.name
    naive_average = sum(naive) / len(naive)
    result: dict[str, Any] = {
        "turns": TURNS,
        "artifact_tokens": ARTIFACT_TOKENS,
        "counter": counter,
        "pinned_by": "rule extractor ('remember that'), extract job every "
                     f"{JOBS_EVERY} turns",
        "pinned_memory": pinned,
        "reduction_is": "1 - average compiled / average naive, over all turns",
        "naive": {"peak": max(naive), "average": round(naive_average, 1),
                  "turn_50": naive[-1], "per_turn": naive},
        "budgets": {str(r.budget): r.summary(naive_average) for r in runs},
        "reference": REFERENCE,
    }
    OUT.mkdir(exist_ok=True)
    plot(naive, runs, OUT / "compile.png")
    (OUT / "compile.json").write_text(json.dumps(result, indent=2))

    print(f"{TURNS} turns, ~{ARTIFACT_TOKENS}-token artifact each; fact pinned by "
          f"{result['pinned_by']}: {pinned!r}")
    print(f"{'prompt':>14} {'peak':>7} {'average':>8} {'turn 50':>8} {'reduction':>9} "
          f"{'over':>5} {'needle@50':>10} {'decision@45':>12}")
    print(f"{'naive':>14} {max(naive):>7,} {naive_average:>8,.0f} {naive[-1]:>8,} "
          f"{'':>9} {'':>5} {'':>10} {'':>12}")
    for r in runs:
        s = r.summary(naive_average)
        print(f"{'budget ' + format(r.budget, ','):>14} {s['peak']:>7,} {s['average']:>8,.0f} "
              f"{s['turn_50']:>8,} {s['reduction']:>9.1%} {s['over_budget_turns']:>5} "
              f"{_yes(r.needle_kept, r.needle_where):>10} "
              f"{_yes(r.decision_kept, r.decision_where):>12}")
    print("tokens per turn:")
    print(f"{'turn':>4} {'naive':>7} " + " ".join(f"{b:>7,}" for b in BUDGETS))
    for i, n in enumerate(naive):
        print(f"{i + 1:>4} {n:>7,} " + " ".join(f"{r.tokens[i]:>7,}" for r in runs))
    two = next(r for r in runs if r.budget == 2_000).summary(naive_average)
    goals = {
        "budget never exceeded": all(r.summary(naive_average)["over_budget_turns"] == 0
                                     for r in runs),
        "needle kept at every budget": all(r.needle_kept for r in runs),
        "decision kept at every budget": all(r.decision_kept for r in runs),
        f"reduction at 2,000 >= {REFERENCE['reduction_at_2000']:.1%}":
            two["reduction"] >= REFERENCE["reduction_at_2000"],
    }
    for goal, met in goals.items():
        print(f"goal: {goal}: {'met' if met else 'MISSED'}")
    print(f"wrote {OUT / 'compile.json'} and {OUT / 'compile.png'}")


def _yes(kept: bool, where: list[str]) -> str:
    return ("yes" if kept else "NO") + (f" ({where[0].split()[0]})" if where else "")
