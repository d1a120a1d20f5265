from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from engrammar import Client
from engrammar.errors import ConfigError, InvalidInput
from engrammar.scheduler import _scheduler as scheduler
from engrammar.scheduler._registry import JOBS, NIGHTLY, Job, index
from engrammar.settings import ScheduleSettings, Settings


def test_each_job_fires_at_its_time() -> None:
    settings = ScheduleSettings()
    triggers = scheduler.triggers(settings)
    fake_now = datetime(2026, 11, 21, 1, 59, tzinfo=UTC)  # a Saturday, just before 02:00
    fires = {name: t.get_next_fire_time(None, fake_now) for name, t in triggers.items()}
    assert fires["extract"] == datetime(2026, 11, 21, 2, 0, tzinfo=UTC)
    assert fires["index"] == datetime(2026, 11, 21, 2, 15, tzinfo=UTC)
    assert fires["lifecycle"] == datetime(2026, 11, 21, 2, 30, tzinfo=UTC)
    assert fires["summaries"] == datetime(2026, 11, 21, 3, 0, tzinfo=UTC)
    assert fires["reflect"] == datetime(2026, 11, 22, 4, 0, tzinfo=UTC)  # Sunday
    # The nightly order holds: extract, index, lifecycle, summaries, then reflect.
    nightly = [n for n in sorted(fires, key=lambda n: fires[n]) if n in NIGHTLY]
    assert nightly == list(NIGHTLY) == ["extract", "index", "lifecycle", "summaries",
                                        "reflect"]
    assert fires["blocks"] == datetime(2026, 11, 21, 2, 0, tzinfo=UTC)  # every 10 minutes
    # The next night, each fires exactly one day later.
    after = {name: t.get_next_fire_time(fires[name], fires[name] + timedelta(seconds=1))
             for name, t in triggers.items()}
    for name in ("extract", "index", "lifecycle", "summaries"):
        assert after[name] == fires[name] + timedelta(days=1)
    assert after["reflect"] == fires["reflect"] + timedelta(days=7)


def test_schedule_comes_from_settings_with_time_zone() -> None:
    settings = ScheduleSettings(extract="15 1 * * *", timezone="Europe/Berlin")
    trigger = scheduler.triggers(settings)["extract"]
    fire = trigger.get_next_fire_time(None, datetime(2026, 7, 1, tzinfo=UTC))
    assert fire is not None
    # 00:00 UTC is 02:00 in Berlin (CEST): the next 01:15 there is 23:15 UTC the same day.
    assert fire.astimezone(UTC) == datetime(2026, 7, 1, 23, 15, tzinfo=UTC)


def test_scheduler_job_options(client: Client) -> None:
    sched = scheduler.build_scheduler(client, ScheduleSettings())
    jobs = {j.id: j for j in sched.get_jobs()}
    assert set(jobs) == set(JOBS) == {*NIGHTLY, "blocks", "idle"}
    for job in jobs.values():
        assert job.max_instances == 1 and job.coalesce is True
        assert job.misfire_grace_time == ScheduleSettings().misfire_grace_seconds


def with_runs(**runs: Any) -> dict[str, Job]:
    """The registry's jobs with some run functions replaced."""
    return {name: replace(job, run=runs[name]) if name in runs else job
            for name, job in JOBS.items()}


def test_a_failing_job_does_not_stop_the_others(client: Client) -> None:
    ran: list[str] = []

    def ok(name: str) -> Any:
        class Report:
            def to_json(self) -> dict[str, Any]:
                return {"job": name}

        def job(c: Client, now: datetime | None) -> Any:
            ran.append(name)
            return Report()
        return job

    def boom(c: Client, now: datetime | None) -> Any:
        raise RuntimeError("disk full")

    jobs = with_runs(extract=ok("extract"), index=ok("index"), lifecycle=boom,
                     summaries=ok("summaries"), reflect=ok("reflect"), blocks=ok("blocks"))
    reports = scheduler.run_nightly(client, datetime(2026, 11, 21, tzinfo=UTC), jobs=jobs)
    assert ran == ["extract", "index", "summaries", "reflect"]
    assert reports[2] == {"job": "lifecycle", "failed": True,
                          "error": "RuntimeError: disk full"}


def test_nightly_runs_the_real_jobs_offline(client: Client) -> None:
    now = datetime(2026, 11, 21, 2, tzinfo=UTC)
    client.record("u1", "c1", "user", "My name is Ada and I live in Lisbon.",
                  now - timedelta(days=1))
    reports = scheduler.run_nightly(client, now)
    assert [r["job"] for r in reports] == list(NIGHTLY)
    assert reports[0]["applied"] == 2
    assert reports[1]["embedded"] == 1
    assert reports[3]["written"]["day"] == 1
    assert reports[4]["skipped"].startswith("no LLM configured")


def test_each_run_is_recorded_with_its_report(client: Client) -> None:
    from engrammar import store

    now = datetime(2026, 11, 21, 2, tzinfo=UTC)
    scheduler.run_job(client, "lifecycle", now)

    def boom(c: Client, when: datetime | None) -> Any:
        raise RuntimeError("disk full")

    scheduler.run_job(client, "extract", now, jobs=with_runs(extract=boom))
    with client.db.connection() as conn:
        runs = store.list_job_runs(conn)
    assert [(r["job"], r["status"]) for r in runs] == [("lifecycle", "ok"),
                                                        ("extract", "failed")]
    assert runs[0]["now_at"] == now and runs[0]["finished_at"] is not None
    assert runs[0]["report"]["job"] == "lifecycle"
    assert runs[1]["report"]["error"] == "RuntimeError: disk full"


def test_an_unknown_job_is_the_callers_error(client: Client) -> None:
    with pytest.raises(InvalidInput, match="no job named 'extrakt'"):
        scheduler.run_job(client, "extrakt")


# -- the registry ----------------------------------------------------------------------------

def test_the_registry_is_the_one_list_of_jobs() -> None:
    assert list(JOBS) == ["extract", "index", "lifecycle", "summaries", "reflect", "blocks",
                          "idle"]
    for name, job in JOBS.items():
        assert job.name == name and job.help and callable(job.run)
    # Every default schedule is a cron expression the scheduler takes.
    assert set(scheduler.triggers(ScheduleSettings())) == set(JOBS)
    with pytest.raises(ValueError, match="share a name"):
        index(JOBS["extract"], JOBS["extract"])


def test_a_new_job_is_one_entry(client: Client) -> None:
    """A registry with one more job: scheduled, in the night at its place, overridable."""
    class Report:
        def to_json(self) -> dict[str, Any]:
            return {"job": "compact"}

    jobs = index(*JOBS.values(), Job("compact", lambda c, now: Report(), "0 5 * * *",
                                     "Compact things.", nightly=True))
    settings = ScheduleSettings.model_validate({"compact": "0 6 * * *"})
    assert scheduler.schedules(settings, jobs)["compact"] == "0 6 * * *"
    assert {j.id for j in scheduler.build_scheduler(client, settings, jobs=jobs).get_jobs()} \
        == set(jobs)
    reports = scheduler.run_nightly(client, datetime(2026, 11, 21, 2, tzinfo=UTC), jobs=jobs)
    assert [r["job"] for r in reports] == [*NIGHTLY, "compact"]


def test_overrides_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_SCHEDULE__EXTRACT", "15 1 * * *")
    monkeypatch.setenv("MEMORY_SCHEDULE__TIMEZONE", "Europe/Berlin")
    settings = Settings().schedule
    assert settings.timezone == "Europe/Berlin"
    crons = scheduler.schedules(settings)
    assert crons["extract"] == "15 1 * * *"
    assert crons["lifecycle"] == JOBS["lifecycle"].schedule


@pytest.mark.parametrize(("given", "message"), [
    ({"extrakt": "0 2 * * *"}, "MEMORY_SCHEDULE__EXTRAKT: no such job; the jobs are extract"),
    ({"extract": "0 25 * * *"}, "MEMORY_SCHEDULE__EXTRACT='0 25 \\* \\* \\*' is not a cron"),
    ({"blocks": "*/5 * * *"}, "MEMORY_SCHEDULE__BLOCKS='.*' is not a cron expression"),
    ({"reflect": 5}, "MEMORY_SCHEDULE__REFLECT=5 is not a cron expression"),
    ({"timezone": "Mars/Base"}, "MEMORY_SCHEDULE__TIMEZONE='Mars/Base' is not a time zone"),
])
def test_a_bad_schedule_is_a_config_error(client: Client, given: dict[str, Any],
                                          message: str) -> None:
    settings = ScheduleSettings.model_validate(given)
    with pytest.raises(ConfigError, match=message):
        scheduler.build_scheduler(client, settings)
