"""The examples run as a user would run them, against the fake OpenAI-compatible server:
``examples/chat.py`` through its ``main`` with lines on standard input, and
``examples/fastapi_app.py`` through FastAPI's TestClient (its lifespan included). Their
settings come from the environment, as in a deployment."""

from __future__ import annotations

import importlib.util
import io
import sys
from pathlib import Path
from types import ModuleType

import pytest

from engrammar import Client
from tests.fake_openai import FakeOpenAI, Scripted, completion
from tests.fake_openai import fake_openai as fake_openai  # the fixture

EXAMPLES = Path(__file__).parent.parent / "examples"
REPLIES = ["Nice to meet you, Dana! Berlin is lovely.",
           "Tuesdays work for me.\nDecision: we meet on Tuesdays at the library",
           "We meet on Tuesdays at the library, Dana."]
MEMO = "Decided: we meet on Tuesdays at the library"
LINES = ["My name is Dana and I live in Berlin.", "When shall we meet each week?",
         "Remind me: when do we meet?"]


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def deployed(monkeypatch: pytest.MonkeyPatch, fake_openai: FakeOpenAI, database_url: str,
             client: Client) -> FakeOpenAI:
    """The environment of an app: the test database, the fake server as the model."""
    monkeypatch.setenv("MEMORY_DATABASE_URL", database_url)
    monkeypatch.setenv("MEMORY_LLM_BASE_URL", fake_openai.url)
    monkeypatch.setenv("MEMORY_LLM_API_KEY", "test-key")
    monkeypatch.setenv("MEMORY_LLM_MODEL", "gpt-4o-mini")
    fake_openai.enqueue(*(Scripted(body=completion(r)) for r in REPLIES))
    return fake_openai


def check_conversation(fake: FakeOpenAI, client: Client, user: str, chat: str) -> None:
    """Both messages of each turn in the log, the Decision observed, the window and the
    memory in the prompts the model was sent, the user's message last and once."""
    log = client.log(user, chat)
    assert [(m.role.value, m.content) for m in log] == [
        (role, text) for line, reply in zip(LINES, REPLIES, strict=True)
        for role, text in (("user", line), ("assistant", reply))]
    assert [m.content for m in client.memories(user, chat)] == [MEMO]
    assert len(fake.requests) == 3 and fake.pending == 0
    for n, request in enumerate(fake.requests):
        messages = request.messages
        assert request.headers["authorization"] == "Bearer test-key"
        assert request.body["model"] == "gpt-4o-mini"
        assert messages[-1] == {"role": "user", "content": LINES[n]}
        assert sum(m["content"] == LINES[n] for m in messages) == 1
        # The earlier turns are in the window, verbatim.
        for line, reply in zip(LINES[:n], REPLIES[:n], strict=True):
            assert {"role": "user", "content": line} in messages
            assert {"role": "assistant", "content": reply} in messages
    last = "\n".join(m["content"] for m in fake.requests[2].messages if m["role"] == "system")
    assert MEMO in last  # observed after turn 2: recalled


def test_the_chat_loop_example(deployed: FakeOpenAI, client: Client,
                               monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    chat = load("chat")
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(LINES) + "\n"))
    chat.main(["--user", "u1", "--chat", "c1"])
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"assistant> {REPLIES[0]}"
    check_conversation(deployed, client, "u1", "c1")


def test_the_fastapi_example(deployed: FakeOpenAI, client: Client) -> None:
    from fastapi.testclient import TestClient

    example = load("fastapi_app")
    with TestClient(example.create_app()) as http:
        replies = []
        for line in LINES:
            response = http.post("/chat/u1/c1", json={"message": line})
            assert response.status_code == 200, response.text
            replies.append(response.json())
        assert [r["reply"] for r in replies] == REPLIES
        assert replies[2]["memories"] == [MEMO]
        assert replies[2]["prompt_tokens"] > replies[0]["prompt_tokens"]
        listed = http.get("/memories/u1/c1").json()
        assert [m["content"] for m in listed] == [MEMO]
        bad = http.post("/chat/u1/c1", json={"message": "nul \x00 inside"})
        assert bad.status_code == 422
    check_conversation(deployed, client, "u1", "c1")


def test_the_readme_shows_what_the_quickstart_prints(
        monkeypatch: pytest.MonkeyPatch, database_url: str, client: Client,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The 30-second example of the README is examples/quickstart.py, and the block the
    README says it prints is the block it prints (offline, on the test database)."""
    monkeypatch.setenv("MEMORY_DATABASE_URL", database_url)
    monkeypatch.delenv("MEMORY_LLM", raising=False)
    load("quickstart")
    printed = capsys.readouterr().out
    block = printed[: printed.index("</memory>") + len("</memory>")]
    readme = (EXAMPLES.parent / "README.md").read_text(encoding="utf-8")
    after = readme[readme.index("prints (`python examples/quickstart.py`"):]
    shown = after[after.index("```\n") + 4: after.index("</memory>") + len("</memory>")]
    assert [line for line in block.splitlines() if line.strip()] == \
        [line for line in shown.splitlines() if line.strip()]
    code = (EXAMPLES / "quickstart.py").read_text(encoding="utf-8")
    for line in ('memory.record("ada", "chat-1", "user", "I\'m Ada, I just moved to Lisbon',
                 'run_nightly(memory, now + timedelta(hours=14))'):
        assert line in code and line in readme
