"""The jobs as a tenant sees them: each run's job, times, status, counts and cost, and the
failures that name one of the tenant's chats.

Job runs belong to the store, not to a user: a run's report counts every tenant's chats and
may name any of them. A key sees the failures of its own tenant's chats only (others are
counted, never named); the counts and cost of a run, which add up every tenant's work, only
with the admin scope.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any


def last_runs(runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The newest run of each job (``runs`` newest first)."""
    seen: dict[str, dict[str, Any]] = {}
    for run in runs:
        seen.setdefault(run["job"], run)
    return list(seen.values())


def _errors(node: Any) -> Iterator[dict[str, Any]]:
    """Every object in a report that names a chat and an error, at any depth."""
    if isinstance(node, dict):
        if isinstance(node.get("chat"), str) and "error" in node:
            yield node
        for value in node.values():
            yield from _errors(value)
    elif isinstance(node, list):
        for item in node:
            yield from _errors(item)


def failures_by_chat(runs: Sequence[dict[str, Any]], prefix: str
                     ) -> dict[str, list[dict[str, str]]]:
    """The tenant's failing chats (``user_id/chat_id`` as the library names them) in these
    runs: each failure's job and error."""
    out: dict[str, list[dict[str, str]]] = {}
    for run in runs:
        for error in _errors(run.get("report") or {}):
            if error["chat"].startswith(prefix):
                out.setdefault(error["chat"], []).append(
                    {"job": run["job"], "error": str(error["error"]).replace(prefix, "")})
    return out


def run_rows(runs: Sequence[dict[str, Any]], prefix: str, admin: bool
             ) -> list[dict[str, Any]]:
    rows = []
    for run in runs:
        report: dict[str, Any] = run.get("report") or {}
        errors = list(_errors(report))
        own = [{"chat": e["chat"].removeprefix(prefix),
                "error": str(e["error"]).replace(prefix, "")}
               for e in errors if e["chat"].startswith(prefix)]
        finished, started = run.get("finished_at"), run["started_at"]
        llm = report.get("llm") or {}
        rows.append({
            "id": run["id"], "job": run["job"], "now_at": run["now_at"],
            "started_at": started, "status": run["status"],
            "seconds": (finished - started).total_seconds() if finished else None,
            # A report's counts: its top-level whole numbers, whatever the job.
            "counts": {k: v for k, v in report.items() if isinstance(v, int)
                       and not isinstance(v, bool)} if admin else None,
            "cost": llm.get("cost") if admin else None,
            "tokens": (llm.get("prompt_tokens", 0) + llm.get("completion_tokens", 0))
            if admin and llm else None,
            "failed": report.get("error") if admin and report.get("failed") else None,
            "failures": own, "others": len(errors) - len(own)})
    return rows
