"""`engram chat`: the interactive loop against the configured model, driven through click's
CliRunner with lines on standard input, the model being the fake OpenAI-compatible server."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner

from engrammar import Client, ConfigError
from engrammar.chat import Chat
from engrammar.cli import cli
from engrammar.scheduler import _summaries as summaries
from tests.fake_openai import FakeOpenAI, Scripted, completion
from tests.fake_openai import fake_openai as fake_openai  # the fixture

DECISION = "Decision: we meet on Tuesdays at the library"
MEMO = "Decided: we meet on Tuesdays at the library"  # what observe makes of it


@pytest.fixture
def configured(monkeypatch: pytest.MonkeyPatch, fake_openai: FakeOpenAI, database_url: str,
               client: Client) -> FakeOpenAI:
    monkeypatch.setenv("MEMORY_DATABASE_URL", database_url)
    monkeypatch.setenv("MEMORY_LLM", "openai")
    monkeypatch.setenv("MEMORY_LLM_BASE_URL", fake_openai.url)
    monkeypatch.setenv("MEMORY_LLM_MODEL", "gpt-4o-mini")
    monkeypatch.setenv("MEMORY_LLM_MAX_RETRIES", "0")
    return fake_openai


def test_chat_explains_each_turn_and_remembers(configured: FakeOpenAI, client: Client
                                               ) -> None:
    # Yesterday's talk, summarised by the night's job, is a summary the chat can use.
    yesterday = datetime.now(UTC) - timedelta(days=1)
    client.record("u1", "c1", "user", "I spent the day repotting my basil plants.", yesterday)
    client.record("u1", "c1", "assistant", "Basil loves a sunny window.", yesterday)
    report = summaries.run(client, datetime.now(UTC))
    assert report.written["day"] == 1, report.written
    # What a prompt of the chat holds of them: yesterday's, and the week's or the month's
    # when yesterday closed one (on a Monday, the run closes the week).
    held = [i for i in client.compile("u1", "c1", "hi", record=False).items
            if i.memory_id is None]
    assert held
    configured.enqueue(Scripted(body=completion("Hello Dana!")),
                       Scripted(body=completion(f"Tuesdays suit me.\n{DECISION}")),
                       Scripted(body=completion("On Tuesdays, at the library.")))
    out = CliRunner().invoke(cli, ["chat", "--user", "u1", "--chat", "c1", "--explain"],
                             input="My name is Dana.\n\nWhen do we meet?\n"
                                   "Remind me when we meet.\n/quit\nnever sent\n")
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert [line for line in lines if line.startswith("assistant> ")] == [
        "assistant> Hello Dana!", "assistant> Tuesdays suit me.",
        "assistant> On Tuesdays, at the library."]
    assert f"[observed] {MEMO}" in lines
    # Each turn says what its prompt held: three turns, the summary in each, the memo in
    # the last only.
    assert sum(line.startswith("[prompt] ") for line in lines) == 3
    assert [line for line in lines if line.startswith("[summaries]")] == [
        f"[summaries] {len(held)}"] * 3
    assert sum("repotting" in line and "day of" in line for line in lines) == 3
    memories = [line for line in lines if line.startswith("[memories]")]
    assert memories == ["[memories] 0 (none)", "[memories] 0 (none)", "[memories] 1"]
    shown = lines[lines.index("[memories] 1") + 1]
    assert shown.split()[:2] == ["factcheck", "#1"] and shown.endswith(MEMO)
    assert len(configured.requests) == 3  # the empty line and what follows /quit: no turn
    log = client.log("u1", "c1")
    assert [m.content for m in log][-2:] == ["Remind me when we meet.",
                                              "On Tuesdays, at the library."]
    with client.db.connection() as conn:
        purposes = [r[0] for r in conn.execute("SELECT purpose FROM llm_calls ORDER BY id")]
    assert purposes[-3:] == ["chat"] * 3  # each model call is audited


def test_a_failed_model_call_is_reported_and_the_chat_goes_on(configured: FakeOpenAI,
                                                              client: Client) -> None:
    configured.enqueue(Scripted(status=500, body={"error": {"message": "boom",
                                                            "type": "server_error"}}),
                       Scripted(body=completion("Back again.")))
    out = CliRunner().invoke(cli, ["chat", "--user", "u1", "--chat", "c1"],
                             input="first try\nsecond try\n")
    assert out.exit_code == 0, out.output
    assert "error: chat c1: chat failed after 1 attempts: InternalServerError (HTTP 500)" \
        in out.output
    assert "assistant> Back again." in out.output
    # The failed turn left nothing in the log: only the turn that completed, whole.
    assert [(m.role.value, m.content) for m in client.log("u1", "c1")] == [
        ("user", "second try"), ("assistant", "Back again.")]


def test_chat_needs_a_model(monkeypatch: pytest.MonkeyPatch, database_url: str,
                            client: Client) -> None:
    monkeypatch.setenv("MEMORY_DATABASE_URL", database_url)
    monkeypatch.setenv("MEMORY_LLM", "none")
    out = CliRunner().invoke(cli, ["chat", "--user", "u1", "--chat", "c1"], input="hi\n")
    assert out.exit_code == 1
    assert "error: a chat needs a model: set MEMORY_LLM=openai" in out.output
    with pytest.raises(ConfigError):
        Chat(client, "u1", "c1")
