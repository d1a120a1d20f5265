"""The jobs over a :class:`~engrammar.client.Client`: ``_registry`` lists each job (its run
function, default schedule, help, nightly order), ``_scheduler`` runs them on cron and
records each run; the other modules hand a Client's parts to :mod:`engrammar.nightly`.

``run_nightly(client, now)`` runs the night's jobs in order; ``run_job(client, name, now)``
one of them; each returns its report as JSON-able dicts."""

from engrammar.scheduler._registry import JOBS, NIGHTLY
from engrammar.scheduler._scheduler import run_job, run_nightly

__all__ = ["JOBS", "NIGHTLY", "run_job", "run_nightly"]
