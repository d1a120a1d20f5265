"""The fuzz of tests/test_fuzz.py through the command line: the same arbitrary text, ids,
numbers and times given to the main commands, through click's CliRunner and the real
``memory`` group. Whatever goes in, a command succeeds or ends with one clean line, the
library's ``error: ...`` (exit 1) or click's own usage error (exit 2); never a traceback.

Each command opens a client (and loads the embedder) as it does from a shell, so the
examples are few; the edges every run must see are given as explicit examples."""

from __future__ import annotations

import traceback
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from engrammar import Database
from engrammar.cli import cli
from tests.test_fuzz import ids, numbers, texts, times

fuzz = settings(max_examples=3, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])
# Times as the CLI takes them: ISO text (naive or not), or text that is no time at all.
stamps = st.one_of(times.map(lambda t: t.isoformat() if t else ""), texts)


@pytest.fixture
def runner(clean: Database) -> CliRunner:
    return CliRunner(env={"MEMORY_DATABASE_URL": clean.url, "MEMORY_LLM": "none",
                          "MEMORY_EMBEDDER": "local"})


@pytest.fixture
def seeded(runner: CliRunner) -> CliRunner:
    """A chat with a message and a memory, for the reads to find."""
    run(runner, "record", "--user", "u1", "--chat", "c1", "--at", "2026-01-01", "I live here")
    run(runner, "observe", "--user", "u1", "--chat", "c1", "--now", "2026-01-01",
        "Decision: we meet on Fridays")
    return runner


def run(runner: CliRunner, *args: str) -> Result:
    """Invoke ``memory ARGS``; assert it succeeded or failed cleanly."""
    result = runner.invoke(cli, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        assert result.exc_info is not None
        raise AssertionError(f"memory {args!r} raised:\n" + "".join(
            traceback.format_exception(*result.exc_info)))
    assert "Traceback" not in result.output
    if result.exit_code == 1:  # the library's error, its message (a database's DETAIL too)
        assert result.stderr.startswith("error: "), (args, result.stderr)
    elif result.exit_code != 0:  # click's usage errors: usage, a hint, then "Error: ..."
        assert result.exit_code == 2 and "\nError: " in result.stderr, (
            args, result.exit_code, result.stderr)
    return result


@fuzz
@given(user=ids, chat=ids, text=texts, at=stamps)
@example(user="u\x00", chat="c\ud800", text="I live in Berlin", at="")
@example(user="u1", chat="c1", text="a\x00b \udfff", at="yesterday")
@example(user="u1", chat="c1", text="x" * 40_000, at="2026-01-01T00:00+14:00")
def test_turn_commands(runner: CliRunner, user: str, chat: str, text: str, at: str) -> None:
    scope = ("--user", user, "--chat", chat)
    run(runner, "record", *scope, "--at", at, "--", text)
    run(runner, "recall", *scope, "--now", at, "--", text)
    run(runner, "context", *scope, "--now", at, "--system", text, "--", text)
    run(runner, "observe", *scope, "--now", at, "--", f"Decision: {text}")


@fuzz
@given(user=ids, chat=ids, before=numbers, limit=numbers, budget=numbers, memory=numbers)
@example(user="u1", chat="c1", before=2**70, limit=-1, budget=-1, memory=2**70)
@example(user="\x1f", chat="", before=-1, limit=0, budget=0, memory=-1)
def test_read_commands(seeded: CliRunner, user: str, chat: str, before: int | None,
                       limit: int | None, budget: int | None, memory: int | None) -> None:
    runner, scope = seeded, ("--user", user, "--chat", chat)
    page = ["--before", str(before)] if before is not None else []
    run(runner, "log", *scope, *page, "--limit", str(limit or 0))
    run(runner, "show", *scope, "--json")
    run(runner, "history", *scope, *(["--memory", str(memory)] if memory is not None else []))
    run(runner, "recall", *scope, "--now", datetime(2026, 1, 2).isoformat(),
        *(["--budget", str(budget)] if budget is not None else []), "--", "where?")


@fuzz
@given(user=ids, chat=ids, data=st.one_of(st.binary(max_size=200), texts.map(
    lambda t: t.encode("utf-8", "surrogatepass"))))
@example(user="u\x00", chat="c1", data=b'{"user_id": "u1", "chat_id": "c1", "op": "add",'
         b' "content": "Likes tea", "evidence": [99999999999999999999999]}\n\xff\xfe')
@example(user="u1", chat="\ud800", data=b'{"format": "memory-export", "version": 1,'
         b' "user_id": "u1"}\n{"table": "memories", "row": {"user_id": "u1"}}')
def test_data_commands(runner: CliRunner, tmp_path: Path, user: str, chat: str,
                       data: bytes) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(data)
    run(runner, "import", str(path))
    run(runner, "export", "--user", user, "--out", str(tmp_path / "out.jsonl"))
    run(runner, "erase", "--user", user, "--chat", chat, "--yes")
