"""The nightly schedule on APScheduler 3.x: a blocking scheduler with one cron trigger per
job from settings, one instance of each at a time, missed runs coalesced.

`memory jobs schedule` runs it in the foreground; `memory jobs run NAME` runs one job once,
for cron. The nightly order is extract, lifecycle, summaries, reflect, and a job that fails
is reported without stopping the ones after it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

from apscheduler.schedulers.blocking import BlockingScheduler
from apscheduler.triggers.cron import CronTrigger

from jobs import blocks, extract, lifecycle, reflect, summaries
from memory import store
from memory.client import Client, utcnow
from memory.errors import Error
from memory.settings import ScheduleSettings

log = logging.getLogger(__name__)

NIGHTLY = ("extract", "lifecycle", "summaries", "reflect")
# Scheduled on their own triggers, outside the nightly order.
SCHEDULED = (*NIGHTLY, "blocks")
Job = Callable[[Client, datetime | None], Any]
JOBS: Mapping[str, Job] = {
    "extract": lambda client, now: extract.run(client, now),
    "lifecycle": lifecycle.run,
    "summaries": summaries.run,
    "reflect": reflect.run,
    "blocks": blocks.run,
}


def run_job(client: Client, name: str, now: datetime | None = None,
            jobs: Mapping[str, Job] = JOBS) -> dict[str, Any]:
    """Run one job; its report as JSON, or the error it raised, never an exception. Each
    run is recorded in job_runs with its report, when the database takes it."""
    now = now or utcnow()
    run_id = _record(client, lambda conn: store.start_job_run(conn, name, now))
    try:
        out: dict[str, Any] = jobs[name](client, now).to_json()
    except Exception as exc:  # reported, so that the jobs after it still run
        log.exception("job %s failed", name)
        out = {"job": name, "failed": True, "error": f"{type(exc).__name__}: {exc}"}
    if run_id is not None:
        status = "failed" if out.get("failed") else ("errors" if out.get("errors") else "ok")
        _record(client, lambda conn: store.finish_job_run(conn, run_id, status, out))
    return out


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
                names: Sequence[str] = NIGHTLY,
                jobs: Mapping[str, Job] = JOBS) -> list[dict[str, Any]]:
    now = now or utcnow()
    return [run_job(client, name, now, jobs) for name in names]


def triggers(settings: ScheduleSettings) -> dict[str, CronTrigger]:
    return {name: CronTrigger.from_crontab(getattr(settings, name),
                                           timezone=settings.timezone)
            for name in SCHEDULED}


def build_scheduler(client: Client, settings: ScheduleSettings,
                    on_report: Callable[[dict[str, Any]], None] = lambda r: None
                    ) -> BlockingScheduler:
    scheduler = BlockingScheduler(timezone=settings.timezone)
    for name, trigger in triggers(settings).items():
        # A slow night must not stack runs of the same job; missed runs collapse into one.
        scheduler.add_job(lambda n=name: on_report(run_job(client, n)), trigger, id=name,
                          name=name, max_instances=1, coalesce=True,
                          misfire_grace_time=settings.misfire_grace_seconds)
    return scheduler
