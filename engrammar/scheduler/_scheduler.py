"""The schedule on APScheduler 3.x: a blocking scheduler with one cron trigger per job of
``scheduler._registry``, one instance of each at a time, missed runs coalesced.

`engram jobs schedule` runs it in the foreground; `engram jobs run NAME` runs one job once,
for cron. The nightly order is the registry's (extract, lifecycle, summaries, reflect), and
a job that fails is reported without stopping the ones after it.

Each job's cron expression is the registry's default unless the settings override it
(``MEMORY_SCHEDULE__EXTRACT="0 2 * * *"``); an override naming no job, or one that is not a
cron expression, is a :class:`ConfigError` when the triggers are built.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from datetime import datetime
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

import psycopg
from apscheduler.schedulers.blocking import BlockingScheduler
from apscheduler.triggers.cron import CronTrigger

from engrammar import store
from engrammar._inputs import aware
from engrammar.client import Client
from engrammar.errors import ConfigError, Error, InvalidInput
from engrammar.runtime import _telemetry as telemetry
from engrammar.scheduler._registry import JOBS, NIGHTLY, Job, nightly
from engrammar.settings import ScheduleSettings

__all__ = ["JOBS", "NIGHTLY", "build_scheduler", "run_job", "run_nightly", "schedules",
           "triggers"]

log = logging.getLogger(__name__)


def run_job(client: Client, name: str, now: datetime | None = None,
            jobs: Mapping[str, Job] = JOBS) -> dict[str, Any]:
    """Run one job; its report as JSON, or the error it raised, never an exception (a name
    that is no job is the caller's error: InvalidInput). Each run is recorded in job_runs
    with its report, when the database takes it."""
    if name not in jobs:
        raise InvalidInput(f"no job named {name!r}; the jobs are {', '.join(jobs)}")
    now = aware(now)
    # Runs that died (their process killed, their database restarted) are failed, not left
    # 'running' for ever: a run holds a session lock while alive (store.start_held_job_run).
    _record(client, store.fail_dead_job_runs)
    before = client.llm.meter.read() if client.llm else None
    with ExitStack() as held:
        run_id = _start(client, name, now, held)
        try:
            with telemetry.job(name):
                out: dict[str, Any] = jobs[name].run(client, now).to_json()
        except Exception as exc:  # reported, so that the jobs after it still run
            log.exception("job %s failed", name)
            out = {"job": name, "failed": True, "error": f"{type(exc).__name__}: {exc}"}
        if client.llm and before is not None:
            # What this run's model calls were billed (and cost, with a price for the model).
            out["llm"] = (client.llm.meter.read() - before).to_json(
                client.llm.model, client.settings.llm_prices)
        if run_id is not None:
            status = "failed" if out.get("failed") else ("errors" if out.get("errors")
                                                         else "ok")
            _record(client, lambda conn: store.finish_job_run(conn, run_id, status, out))
    return out


def _start(client: Client, name: str, now: datetime, held: ExitStack) -> int | None:
    """Record the run, holding its liveness lock on a session of its own until ``held``
    closes; unheld on a pooled connection if no session can be had (the run then looks
    dead to the next one, which is the worst it can be told)."""
    try:
        conn = held.enter_context(client.db.session())
        return store.start_held_job_run(conn, name, now)
    except (Error, psycopg.Error) as exc:
        log.warning("could not hold the job run: %s", exc)
    return _record(client, lambda conn: store.start_job_run(conn, name, now))


T = TypeVar("T")


def _record(client: Client, write: Callable[[store.Conn], T]) -> T | None:
    """The audit never stops a job: a database that refuses it is logged and passed over
    (the job itself will then report the same failure)."""
    try:
        with client.db.connection() as conn:
            return write(conn)
    except Error as exc:
        log.warning("could not record the job run: %s", exc)
        return None


def run_nightly(client: Client, now: datetime | None = None,
                jobs: Mapping[str, Job] = JOBS) -> list[dict[str, Any]]:
    """The night's jobs in order, on one clock; a failing job does not stop the next."""
    now = aware(now)
    return [run_job(client, name, now, jobs) for name in nightly(jobs)]


def schedules(settings: ScheduleSettings, jobs: Mapping[str, Job] = JOBS) -> dict[str, str]:
    """Each job's cron expression: the settings' override, or the registry's default."""
    overrides = settings.overrides()
    unknown = sorted(set(overrides) - set(jobs))
    if unknown:
        named = ", ".join(f"MEMORY_SCHEDULE__{name.upper()}" for name in unknown)
        raise ConfigError(f"{named}: no such job; the jobs are {', '.join(jobs)}, and the "
                          "scheduler's own keys TIMEZONE and MISFIRE_GRACE_SECONDS")
    out: dict[str, str] = {}
    for name, job in jobs.items():
        cron = overrides.get(name, job.schedule)
        if not isinstance(cron, str):
            raise ConfigError(f"MEMORY_SCHEDULE__{name.upper()}={cron!r} is not a cron "
                              "expression (minute hour day month day_of_week)")
        out[name] = cron
    return out


def triggers(settings: ScheduleSettings, jobs: Mapping[str, Job] = JOBS
             ) -> dict[str, CronTrigger]:
    """One cron trigger per job, in the settings' time zone; ConfigError names a bad one."""
    try:
        zone = ZoneInfo(settings.timezone)
    except (LookupError, ValueError) as exc:  # ZoneInfoNotFoundError is a KeyError
        raise ConfigError(f"MEMORY_SCHEDULE__TIMEZONE={settings.timezone!r} is not a time "
                          "zone (Europe/Berlin, UTC)") from exc
    out: dict[str, CronTrigger] = {}
    for name, cron in schedules(settings, jobs).items():
        try:
            out[name] = CronTrigger.from_crontab(cron, timezone=zone)
        except ValueError as exc:
            raise ConfigError(f"MEMORY_SCHEDULE__{name.upper()}={cron!r} is not a cron "
                              f"expression (minute hour day month day_of_week): {exc}"
                              ) from exc
    return out


def build_scheduler(client: Client, settings: ScheduleSettings,
                    on_report: Callable[[dict[str, Any]], None] = lambda r: None,
                    jobs: Mapping[str, Job] = JOBS) -> BlockingScheduler:
    """A scheduler with every job of ``jobs`` on its trigger; ConfigError on a bad schedule."""
    planned = triggers(settings, jobs)
    scheduler = BlockingScheduler(timezone=settings.timezone)
    for name, trigger in planned.items():
        # A slow night must not stack runs of the same job; missed runs collapse into one.
        scheduler.add_job(lambda n=name: on_report(run_job(client, n, jobs=jobs)), trigger,
                          id=name, name=name, max_instances=1, coalesce=True,
                          misfire_grace_time=settings.misfire_grace_seconds)
    return scheduler
