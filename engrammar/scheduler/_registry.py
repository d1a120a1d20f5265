"""Every batch job, in one place: its name, its run function, its default schedule, its help
line and whether it belongs to the night.

The scheduler (``scheduler._scheduler``), ``engram jobs run`` / ``engram jobs list`` and the
schedule overrides (``MEMORY_SCHEDULE__<NAME>``) all read :data:`JOBS`, so a new job is one
entry below. The nightly order is the order of the entries marked ``nightly``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import Any, Protocol

from engrammar.client import Client
from engrammar.scheduler import _blocks as blocks
from engrammar.scheduler import _extract as extract
from engrammar.scheduler import _index_log as index_log
from engrammar.scheduler import _lifecycle as lifecycle
from engrammar.scheduler import _reflect as reflect
from engrammar.scheduler import _summaries as summaries


class Report(Protocol):
    """What a job returns: a report that says what it did, as JSON with a ``job`` key."""

    def to_json(self) -> dict[str, Any]: ...


Run = Callable[[Client, datetime | None], Report]


@dataclass(frozen=True)
class Job:
    name: str
    run: Run
    # The default cron expression (minute hour day month day_of_week), in the scheduler's
    # time zone. Day-of-week by name: APScheduler 3 numbers days from Monday = 0, unlike cron.
    schedule: str
    help: str
    # Runs in `nightly`, in the order of JOBS; otherwise only on its own trigger.
    nightly: bool = False


def index(*jobs: Job) -> Mapping[str, Job]:
    """Jobs by name, in the order given (which is the nightly order), read-only."""
    by_name = {job.name: job for job in jobs}
    if len(by_name) != len(jobs):
        raise ValueError(f"two jobs share a name: {[job.name for job in jobs]}")
    return MappingProxyType(by_name)


JOBS: Mapping[str, Job] = index(
    Job("extract", extract.scheduled, "0 2 * * *",
        "Propose ops from new messages; apply what the gate accepts.",
        nightly=True),
    # After extract: it changes no memory, so extraction's output is never held up by it;
    # excerpts are checked against the memories at recall, so the order changes no result.
    Job("index", index_log.run, "15 2 * * *",
        "Embed new messages in batches, so recall can quote earlier conversation.",
        nightly=True),
    Job("lifecycle", lifecycle.run, "30 2 * * *",
        "Fold recall notes; make memories stale, archive them, close loops.",
        nightly=True),
    Job("summaries", summaries.run, "0 3 * * *",
        "Roll messages up into day, week and month summaries.",
        nightly=True),
    Job("reflect", reflect.run, "0 4 * * sun",
        "Write reflections across each chat's memories (needs an LLM).",
        nightly=True),
    Job("blocks", blocks.run, "*/10 * * * *",
        "Fold older turns into block summaries of the short-term window."),
    Job("idle", extract.idle, "*/5 * * * *",
        "Extract the chats quiet for MEMORY_FRESH__IDLE_MINUTES, so a session's facts "
        "are memories soon after it ends."),
)


def nightly(jobs: Mapping[str, Job] = JOBS) -> tuple[str, ...]:
    """The names of the night's jobs, in the order they run."""
    return tuple(name for name, job in jobs.items() if job.nightly)


NIGHTLY = nightly()
