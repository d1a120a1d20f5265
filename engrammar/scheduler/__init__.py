"""The jobs over a :class:`~engrammar.client.Client`: ``_registry`` lists each job (its run
function, default schedule, help, nightly order), ``_scheduler`` runs them on cron and
records each run; the other modules hand a Client's parts to :mod:`engrammar.nightly`."""
