"""The MCP server, through the official SDK's own client: over stdio (``engram mcp``
spawned as a subprocess) and over streamable HTTP (``engram serve`` on 127.0.0.1, its /mcp
behind the API keys). Both run on this session's test database."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client as McpClient
from mcp import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from engrammar import Database
from engrammar.service import Keys

pytestmark = pytest.mark.anyio

TOOLS = {"remember", "recall", "list_memories", "forget", "memory_history"}
ENGRAM = str(Path(sys.executable).with_name("engram"))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def environment(database_url: str) -> dict[str, str]:
    return {**os.environ, "MEMORY_DATABASE_URL": database_url}


def stdio(database_url: str, *args: str) -> McpClient:
    return McpClient(StdioServerParameters(command=ENGRAM, args=["mcp", *args],
                                           env=environment(database_url)))


async def call(client: McpClient, tool: str, **arguments: Any) -> Any:
    """The tool's structured result (a list comes wrapped as {"result": [...]})."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    data = result.structured_content
    assert data is not None
    return data["result"] if set(data) == {"result"} else data


async def error_of(client: McpClient, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    return " ".join(getattr(c, "text", "") for c in result.content)


async def round_trip(client: McpClient, user: str = "u1") -> int:
    """remember, recall, history, forget, and what each leaves behind; the memory's id."""
    listed = await client.list_tools()
    assert {t.name for t in listed.tools} == TOOLS
    for tool in listed.tools:
        assert tool.description and len(tool.description) > 80, tool.name
        assert tool.input_schema["properties"]["user_id"]["type"] == "string"
        assert tool.output_schema is not None, tool.name
    remember = next(t for t in listed.tools if t.name == "remember")
    assert "profile" in remember.input_schema["$defs"]["MemoryType"]["enum"]

    added = await call(client, "remember", user_id=user, chat_id="c1", type="profile",
                       content="Works as a nurse in Porto", confidence=0.95)
    assert added["applied"] and added["op"] == "add" and added["code"] == "ok"
    memory_id = added["memory_id"]
    again = await call(client, "remember", user_id=user, chat_id="c1", type="profile",
                       content="Works as a nurse in Porto")
    assert again["op"] == "reinforce" and again["memory_id"] == memory_id

    recalled = await call(client, "recall", user_id=user, chat_id="c1",
                          query="Any advice for my night shifts at the hospital?")
    assert "Works as a nurse in Porto" in recalled["text"]
    assert [i["memory_id"] for i in recalled["items"]] == [memory_id]
    assert recalled["tokens"] <= recalled["budget"]

    listed_memories = await call(client, "list_memories", user_id=user, chat_id="c1",
                                 text="NURSE")
    assert [(m["id"], m["type"], m["status"]) for m in listed_memories] == \
        [(memory_id, "profile", "active")]
    assert "user_id" not in listed_memories[0]
    assert await call(client, "list_memories", user_id=user, chat_id="c1",
                      type="preference") == []

    forgotten = await call(client, "forget", user_id=user, chat_id="c1",
                           memory_id=memory_id, reason="the user asked")
    assert forgotten["applied"] and forgotten["op"] == "forget"
    events = await call(client, "memory_history", user_id=user, chat_id="c1",
                        memory_id=memory_id)
    assert [e["op"] for e in events] == ["add", "reinforce", "forget"]
    assert {e["source"] for e in events} == {"mcp"}
    assert events[-1]["after"]["status"] == "archived"
    assert all("user_id" not in (e["after"] or {}) for e in events)

    after = await call(client, "recall", user_id=user, chat_id="c1",
                       query="Any advice for my night shifts at the hospital?")
    assert "nurse" not in after["text"]
    assert await call(client, "list_memories", user_id=user, chat_id="c1") == []
    archived = await call(client, "list_memories", user_id=user, chat_id="c1",
                          status=["archived"])
    assert [m["id"] for m in archived] == [memory_id]

    missing = await error_of(client, "memory_history", user_id=user, chat_id="c1",
                             memory_id=memory_id + 1000)
    assert f"memory {memory_id + 1000} not found" in missing
    assert "exactly one" in await error_of(client, "forget", user_id=user, chat_id="c1")
    return int(memory_id)


# -- stdio ----------------------------------------------------------------------------------

async def test_stdio_round_trip(clean: Database, database_url: str) -> None:
    async with stdio(database_url) as client:
        memory_id = await round_trip(client)
    # Written to the database the test reads, under the user id as given.
    with clean.connection() as conn:
        row = conn.execute("SELECT user_id, status FROM memories WHERE id = %s",
                           (memory_id,)).fetchone()
    assert row == ("u1", "archived")


async def test_stdio_pinned_to_one_user(clean: Database, database_url: str) -> None:
    async with stdio(database_url, "--user", "alice") as client:
        added = await call(client, "remember", user_id="alice", chat_id="c1",
                           type="preference", content="Prefers tea over coffee")
        assert added["applied"]
        refused = await error_of(client, "list_memories", user_id="bob", chat_id="c1")
        assert "serves user 'alice' only" in refused


# -- streamable HTTP ------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running(database_url: str, *args: str) -> Iterator[str]:
    """``engram ARGS --local --port P`` on a free port of 127.0.0.1: its base URL, once
    /mcp answers (401, without a key)."""
    port = free_port()
    proc = subprocess.Popen([ENGRAM, *args, "--local", "--port", str(port)],
                            env=environment(database_url), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while post(f"{base}/mcp", None)[0] != 401:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise AssertionError(f"engram {args[0]} did not start: "
                                     f"{proc.communicate()[0]}")
            time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        if proc.stdout:
            proc.stdout.close()


@pytest.fixture(scope="module")
def server(db: Database, database_url: str) -> Iterator[str]:
    """``engram serve`` (the REST API with /mcp beside it): one for the module, as it takes
    seconds to start; each test names users of its own."""
    with running(database_url, "serve", "--log-level", "warning") as base:
        yield base


@asynccontextmanager
async def http(url: str, key: str | None, statuses: list[int] | None = None
               ) -> AsyncIterator[McpClient]:
    """The SDK's client over streamable HTTP with ``key``; each response's status is
    appended to ``statuses``."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}

    async def note(response: httpx2.Response) -> None:
        if statuses is not None:
            statuses.append(response.status_code)

    async with httpx2.AsyncClient(headers=headers, timeout=30,
                                  event_hooks={"response": [note]}) as http_client:
        async with McpClient(streamable_http_client(url, http_client=http_client)) as client:
            yield client


def post(url: str, key: str | None) -> tuple[int, dict[str, str], dict[str, Any]]:
    """A raw MCP request (tools/list) over HTTP: status, headers and body."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
    headers = {"Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(url, body, headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), {}
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), json.loads(exc.read() or b"{}")
    except OSError:  # not listening yet
        return 0, {}, {}


async def test_http_round_trip_in_the_keys_tenant(server: str, clean: Database) -> None:
    keys = Keys(clean)
    _, writer = keys.create("acme", ["write"])
    async with http(f"{server}/mcp", writer) as client:
        memory_id = await round_trip(client)
    with clean.connection() as conn:
        row = conn.execute("SELECT user_id FROM memories WHERE id = %s",
                           (memory_id,)).fetchone()
    assert row == ("acme:u1",)  # the tenant's user, as the HTTP routes store it


async def test_http_refuses_without_a_live_key(server: str, clean: Database) -> None:
    keys = Keys(clean)
    key_id, revoked = keys.create("acme", ["read"])
    keys.revoke(key_id)
    for key in (None, "egk_nope_" + "x" * 43, revoked, ""):
        status, headers, problem = post(f"{server}/mcp", key)
        assert status == 401, key
        assert headers.get("www-authenticate", headers.get("WWW-Authenticate")) == "Bearer"
        assert problem["status"] == 401 and "key" in problem["detail"]
    # The SDK's client gets no further than its first request either.
    for key in (None, "egk_wrong_" + "y" * 43):
        statuses: list[int] = []
        with pytest.raises(ExceptionGroup) as refused:
            async with http(f"{server}/mcp", key, statuses) as client:
                await client.list_tools()
        assert refused.group_contains(MCPError, depth=None)
        assert statuses and set(statuses) == {401}, statuses


async def test_http_tenants_and_scopes(server: str, clean: Database) -> None:
    keys = Keys(clean)
    _, acme = keys.create("acme", ["write"])
    _, acme_reader = keys.create("acme", ["read"])
    _, other = keys.create("globex", ["admin"])
    async with http(f"{server}/mcp", acme) as client:
        added = await call(client, "remember", user_id="u2", chat_id="c1", type="profile",
                           content="Lives in Lisbon with two cats")
    memory_id = added["memory_id"]

    async with http(f"{server}/mcp", acme_reader) as client:
        listed = await call(client, "list_memories", user_id="u2", chat_id="c1")
        assert [m["id"] for m in listed] == [memory_id]
        for tool, arguments in (("remember", {"type": "profile",
                                              "content": "Has a dog named Rex"}),
                                ("forget", {"memory_id": memory_id})):
            refused = await error_of(client, tool, user_id="u2", chat_id="c1", **arguments)
            assert "may read memories, not change them" in refused

    # Another tenant's key: the same user id is another (empty) user; nothing leaks.
    async with http(f"{server}/mcp", other) as client:
        assert await call(client, "list_memories", user_id="u2", chat_id="c1") == []
        missing = await error_of(client, "memory_history", user_id="u2", chat_id="c1",
                                 memory_id=memory_id)
        assert "not found" in missing and "acme" not in missing and "globex" not in missing
        forget = await error_of(client, "forget", user_id="u2", chat_id="c1",
                                memory_id=memory_id)
        assert "not found" in forget
        recalled = await call(client, "recall", user_id="u2", chat_id="c1",
                              query="where do I live?")
        assert "Lisbon" not in recalled["text"]
    with clean.connection() as conn:
        status = conn.execute("SELECT status FROM memories WHERE id = %s",
                              (memory_id,)).fetchone()
    assert status == ("active",)



async def test_engram_mcp_over_http_alone(clean: Database, database_url: str) -> None:
    """``engram mcp --http``: the same endpoint without the REST API, the same keys."""
    _, key = Keys(clean).create("solo", ["write"])
    with running(database_url, "mcp", "--http") as base:
        assert post(f"{base}/mcp", "egk_nope_" + "x" * 43)[0] == 401
        async with http(f"{base}/mcp", key) as client:
            listed = await client.list_tools()
            assert {t.name for t in listed.tools} == TOOLS
            added = await call(client, "remember", user_id="u3", chat_id="c1",
                               type="preference", content="Prefers window seats on trains")
            recalled = await call(client, "recall", user_id="u3", chat_id="c1",
                                  query="Book me a train to Porto")
        assert [i["memory_id"] for i in recalled["items"]] == [added["memory_id"]]
    with clean.connection() as conn:
        row = conn.execute("SELECT user_id FROM memories WHERE id = %s",
                           (added["memory_id"],)).fetchone()
    assert row == ("solo:u3",)
