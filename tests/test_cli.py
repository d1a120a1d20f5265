"""The command line's jobs: `engram jobs list` and `engram jobs run` read the registry."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from engrammar.cli import cli
from engrammar.scheduler._registry import JOBS, NIGHTLY


def test_jobs_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_SCHEDULE__REFLECT", "0 5 * * sat")
    runner = CliRunner()
    out = runner.invoke(cli, ["jobs", "list", "--json"])
    assert out.exit_code == 0, out.output
    rows = json.loads(out.output)
    assert [r["name"] for r in rows] == list(JOBS)
    by_name = {r["name"]: r for r in rows}
    assert by_name["reflect"]["schedule"] == "0 5 * * sat"
    assert [by_name[n]["nightly"] for n in NIGHTLY] == [1, 2, 3, 4, 5]
    assert by_name["blocks"]["nightly"] is None
    assert by_name["blocks"]["help"] == JOBS["blocks"].help
    text = runner.invoke(cli, ["jobs", "list"]).output
    assert text.splitlines()[0].split() == ["job", "schedule", "(UTC)", "nightly", "help"]
    monkeypatch.setenv("MEMORY_SCHEDULE__NOPE", "0 5 * * *")
    bad = runner.invoke(cli, ["jobs", "list"])
    assert bad.exit_code == 1
    assert "error: MEMORY_SCHEDULE__NOPE: no such job" in bad.output


def test_jobs_run_takes_its_choices_and_help_from_the_registry() -> None:
    runner = CliRunner()
    out = runner.invoke(cli, ["jobs", "run", "--help"]).output
    for name, job in JOBS.items():
        assert f"{name}" in out and job.help in out
    assert "nightly" in out
    bad = runner.invoke(cli, ["jobs", "run", "compact"])
    assert bad.exit_code == 2
    assert "'compact' is not one of 'extract', 'index', 'lifecycle', 'summaries', 'reflect', " \
        "'blocks', 'idle', 'nightly'" in bad.output


def test_every_command_has_help() -> None:
    """The console script's target, and every command and group under it, answers --help."""
    import click

    from engrammar.cli import main

    assert callable(main)
    runner = CliRunner()

    def walk(group: click.Group, path: list[str]) -> list[list[str]]:
        found = [path]
        for name, command in group.commands.items():
            sub = [*path, name]
            found += walk(command, sub) if isinstance(command, click.Group) else [sub]
        return found

    paths = walk(cli, [])
    assert ["jobs", "list"] in paths and ["eval"] in paths and ["db", "status"] in paths
    assert ["serve"] in paths and ["keys", "create"] in paths
    assert len(paths) == 32  # the root, 22 commands, 3 groups of 2, 4 and 3
    for path in paths:
        out = runner.invoke(cli, [*path, "--help"])
        assert out.exit_code == 0, (path, out.output)
        assert out.output.startswith(f"Usage: {' '.join(['cli', *path])}")


def test_a_bad_setting_is_one_line_naming_the_variable(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_POOL_MAX", "lots")
    monkeypatch.setenv("MEMORY_GATE__MIN_CONFIDENCE", "high")
    out = CliRunner().invoke(cli, ["db", "status"])
    assert out.exit_code == 1
    (line,) = out.output.strip().splitlines()
    assert line.startswith("error: ") and "MEMORY_POOL_MAX" in line
    assert "MEMORY_GATE__MIN_CONFIDENCE" in line and "'lots'" in line
    assert "Traceback" not in out.output
