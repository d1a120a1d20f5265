"""Job runs and the model-call audit (a user's rows are erased by store._userdata)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from engrammar.models import Scope
from engrammar.store._memories import Conn

# -- jobs and the model audit -----------------------------------------------------------------

def start_job_run(conn: Conn, job: str, now: datetime) -> int:
    row = conn.execute(
        "INSERT INTO job_runs (job, now_at) VALUES (%s, %s) RETURNING id", (job, now)
    ).fetchone()
    assert row is not None
    return int(row[0])


# A run's liveness: its process holds this session lock while the job runs, so a lock that
# can be taken means the run died (its process killed, or its database restarted).
_RUN_KEY = "hashtextextended('job_run' || chr(31) || id::text, 0)"


def start_held_job_run(conn: Conn, job: str, now: datetime) -> int:
    """start_job_run, holding the run's liveness lock in the same statement, so no other
    process ever sees the row 'running' and unheld; ``conn`` is a session of its own, in
    autocommit, that lives as long as the run."""
    row = conn.execute(
        "WITH run AS (INSERT INTO job_runs (job, now_at) VALUES (%s, %s) RETURNING id)"
        f" SELECT id, pg_advisory_lock({_RUN_KEY}) FROM run", (job, now)).fetchone()
    assert row is not None
    return int(row[0])


def fail_dead_job_runs(conn: Conn) -> list[int]:
    """Mark failed every run left 'running' whose process no longer holds it (see
    hold_job_run); the ids marked. The locks are the transaction's, released at commit."""
    rows = conn.execute(
        "UPDATE job_runs SET status = 'failed', finished_at = clock_timestamp(),"
        " report = coalesce(report, '{}'::jsonb) || jsonb_build_object('failed', true,"
        " 'error', 'the run died before it finished (its process or database stopped)')"
        f" WHERE user_id = '' AND status = 'running' AND pg_try_advisory_xact_lock({_RUN_KEY})"
        " RETURNING id").fetchall()
    return [int(r[0]) for r in rows]


def finish_job_run(conn: Conn, run_id: int, status: str, report: dict[str, Any]) -> None:
    conn.execute(
        "UPDATE job_runs SET finished_at = clock_timestamp(), status = %s, report = %s"
        " WHERE user_id = '' AND id = %s",
        (status, Jsonb(report), run_id),
    )


def list_job_runs(conn: Conn, job: str | None = None) -> list[dict[str, Any]]:
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT id, job, now_at, started_at, finished_at, status, report FROM job_runs"
            " WHERE user_id = '' AND (%s::text IS NULL OR job = %s) ORDER BY id",
            (job, job),
        )
        return list(cur.fetchall())


def insert_llm_call(conn: Conn, scope: Scope | None, *, purpose: str, model: str,
                    request: dict[str, Any], response: str | None, error: str | None,
                    prompt_tokens: int | None, completion_tokens: int | None,
                    duration_ms: float) -> None:
    conn.execute(
        "INSERT INTO llm_calls (user_id, chat_id, purpose, model, request, response, error,"
        " prompt_tokens, completion_tokens, duration_ms)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (scope.user_id if scope else "", scope.chat_id if scope else "", purpose, model,
         Jsonb(request), response, error, prompt_tokens, completion_tokens, duration_ms),
    )


def list_llm_calls(conn: Conn, scope: Scope | None = None) -> list[dict[str, Any]]:
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT user_id, chat_id, id, purpose, model, request, response, error,"
            " prompt_tokens, completion_tokens, duration_ms, at FROM llm_calls"
            " WHERE %s::text IS NULL OR (user_id = %s AND chat_id = %s) ORDER BY id",
            (scope.user_id if scope else None, scope.user_id if scope else None,
             scope.chat_id if scope else None),
        )
        return list(cur.fetchall())

