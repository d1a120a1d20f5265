"""The HTTP service, called over real HTTP on 127.0.0.1: a turn end to end, keys and
tenants (the auth matrix over every route), idempotent posts, problem documents, the body
cap, the CLI's keys and the refusal to serve without one, and SIGTERM with a request in
flight."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from engrammar import Database, Settings, store
from engrammar.runtime._database import resolve_url
from engrammar.service import Keys
from tests._service import ENGRAM, Server
from tests.test_userdata import content

SERVICE_DATABASE = "memory_service_test"
USER = "/v1/users/alice"
CHAT = USER + "/chats/home"
SECRET = "Alice's secret: she keeps a spare key under the blue flowerpot"


@pytest.fixture(scope="module")
def service_url(settings: Settings) -> str:
    return resolve_url(settings, SERVICE_DATABASE)


@pytest.fixture(scope="module")
def service_db(service_url: str) -> Iterator[Database]:
    with Database(service_url, max_size=2) as db:
        with db.connection() as conn:
            store.erase_everything(conn)
            conn.execute("DELETE FROM api_keys")
        yield db


@pytest.fixture(scope="module")
def tokens(service_db: Database) -> dict[str, str]:
    keys = Keys(service_db)
    return {name: keys.create(tenant, scopes)[1] for name, tenant, scopes in [
        ("acme", "acme", ["write"]), ("acme_read", "acme", ["read"]),
        ("acme_admin", "acme", ["admin"]), ("globex", "globex", ["admin"])]}


@pytest.fixture(scope="module")
def server(service_url: str, tokens: dict[str, str]) -> Iterator[Server]:
    with Server(service_url) as running:
        yield running


def call(server: Server, method: str, path: str, token: str | None = None,
         **kwargs: Any) -> httpx.Response:
    headers = kwargs.pop("headers", {})
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return httpx.request(method, server.base + path, headers=headers, timeout=60, **kwargs)


@pytest.fixture(scope="module")
def alice(server: Server, tokens: dict[str, str]) -> dict[str, Any]:
    """Acme's user alice, with a chat, messages and a memory holding a secret."""
    t = tokens["acme"]
    assert call(server, "PUT", CHAT, t).json()["created"] is True
    assert call(server, "POST", CHAT + "/messages", t,
                json={"user": SECRET, "assistant": "Noted."}).status_code == 201
    applied = call(server, "POST", CHAT + "/memories/ops", t, json={"ops": [
        {"op": "add", "type": "profile", "content": SECRET, "confidence": 0.9,
         "salience": 0.9}]}).json()
    assert applied["applied"] == 1, applied
    return {"memory_id": applied["written"][0]}


def test_health_and_ready_answer_without_a_key(server: Server) -> None:
    assert call(server, "GET", "/health").json() == {"status": "ok"}
    ready = call(server, "GET", "/ready")
    assert ready.status_code == 200 and ready.json()["status"] == "ready"
    spec = call(server, "GET", "/openapi.json").json()
    assert spec["openapi"].startswith("3.1")
    assert call(server, "GET", "/docs").status_code == 200


def test_a_turn_over_http(server: Server, tokens: dict[str, str]) -> None:
    t = tokens["acme"]
    chat = USER + "/chats/turn"
    made = call(server, "PUT", chat, t)
    assert made.status_code == 200 and made.json()["created"] is True
    assert call(server, "PUT", chat, t).json()["created"] is False
    for i in range(3):
        posted = call(server, "POST", chat + "/messages", t,
                      json={"user": f"I moved to Porto in step {i}.", "assistant": "Nice."})
        assert posted.status_code == 201 and len(posted.json()["ids"]) == 2
    one = call(server, "POST", chat + "/messages", t, json={"role": "user",
                                                            "content": "And I have a cat."})
    assert len(one.json()["ids"]) == 1
    page = call(server, "GET", chat + "/messages?limit=4", t).json()
    assert [m["content"] for m in page["messages"]][-1] == "And I have a cat."
    older = call(server, "GET", chat + f"/messages?limit=4&before={page['next_before']}",
                 t).json()
    assert len(older["messages"]) == 3 and older["next_before"] is None

    applied = call(server, "POST", chat + "/memories/ops", t, json={"ops": [
        {"op": "add", "type": "profile", "content": "The user lives in Porto",
         "confidence": 0.9, "salience": 0.8},
        {"op": "add", "type": "preference", "content": "The user prefers green tea",
         "confidence": 0.9, "salience": 0.6}]}).json()
    assert applied["applied"] == 2
    porto, tea = applied["written"]
    listed = call(server, "GET", chat + "/memories?type=preference", t).json()
    assert [m["id"] for m in listed] == [tea] and "embedding" not in listed[0]
    assert listed[0]["user_id"] == "alice"
    assert [m["id"] for m in call(server, "GET", chat + "/memories?text=porto", t).json()] \
        == [porto]
    assert call(server, "GET", chat + f"/memories/{porto}", t).json()["content"] == \
        "The user lives in Porto"

    pinned = call(server, "POST", chat + f"/memories/{tea}/pin", t, json={})
    assert pinned.json()["pinned"] is True
    history = call(server, "GET", chat + f"/memories/{tea}/history", t).json()
    assert [e["op"] for e in history][-1] == "pin"
    assert history[-1]["after"]["user_id"] == "alice"

    block = call(server, "POST", chat + "/recall", t, json={"query": "where do I live?"})
    assert block.status_code == 200
    assert porto in [i["memory_id"] for i in block.json()["items"]]
    compiled = call(server, "POST", chat + "/context", t,
                    json={"message": "Any tea ideas?", "budget_tokens": 1500}).json()
    assert compiled["messages"][0]["role"] == "system"
    assert compiled["messages"][-1] == {"role": "user", "content": "Any tea ideas?"}
    assert compiled["tokens"] <= 1500 and "memory" in compiled["layers"]
    observed = call(server, "POST", chat + "/observe", t,
                    json={"content": "Sure.\nDecision: suggest one tea a week."}).json()
    assert observed["applied"] == 1

    forgot = call(server, "POST", chat + f"/memories/{porto}/forget", t, json={}).json()
    assert forgot["applied"] == 1
    assert call(server, "GET", chat + f"/memories/{porto}", t).json()["status"] == "archived"

    settings = call(server, "GET", chat + "/settings", t).json()
    assert settings["overrides"] == {}
    patched = call(server, "PATCH", chat + "/settings", t,
                   json={"raw_pairs": 1, "block_pairs": 2}).json()
    assert (patched["raw_pairs"], patched["block_pairs"]) == (1, 2)
    assert patched["overrides"] == {"raw_pairs": 1, "block_pairs": 2}
    reset = call(server, "PATCH", chat + "/settings", t, json={"raw_pairs": None}).json()
    assert reset["overrides"] == {"block_pairs": 2}
    diagnostics = call(server, "GET", chat + "/diagnostics", t).json()
    assert diagnostics["pairs"] == 4 and diagnostics["ok"] is True
    # The four pairs are one raw stretch.
    assert [(u["kind"], u["first_pair"], u["last_pair"]) for u in diagnostics["coverage"]] \
        == [("raw", 1, 4)]
    # The window job reads the chat's own settings: 1 raw pair, blocks of 2.
    call(server, "PATCH", chat + "/settings", t, json={"raw_pairs": 1})
    ran = call(server, "POST", "/v1/jobs/blocks/run", tokens["acme_admin"])
    assert ran.status_code == 200, ran.text
    diagnostics = call(server, "GET", chat + "/diagnostics", t).json()
    assert [(b["first_pair"], b["last_pair"], b["state"]) for b in diagnostics["blocks"]] \
        == [(1, 2, "ACTIVE")]
    assert [(u["kind"], u["first_pair"], u["last_pair"]) for u in diagnostics["coverage"]] \
        == [("summary", 1, 2), ("raw", 3, 4)]
    assert diagnostics["ok"] is True and diagnostics["problems"] == []


def test_the_turn_shortcuts_answer_as_their_routes(server: Server, tokens: dict[str, str],
                                                  alice: dict[str, Any]) -> None:
    # recall and context answer well-formed calls in front of FastAPI (service._fast); a
    # JSON body sent with a charset is one the shortcut hands to the route, so the two
    # answers of each pair come from both paths. Same store, query and now: same bytes.
    t, now = tokens["acme"], "2026-03-02T09:00:00+00:00"
    for path, body in ((CHAT + "/recall", {"query": "the spare key?", "record": False,
                                           "now": now}),
                       (CHAT + "/context", {"message": "Where is the spare key?",
                                            "record": False, "now": now})):
        call(server, "POST", path, t, json=body)  # this process has seen the key now
        raw = json.dumps(body).encode()
        short = call(server, "POST", path, t, content=raw,
                     headers={"Content-Type": "application/json"})
        routed = call(server, "POST", path, t, content=raw,
                      headers={"Content-Type": "application/json; charset=utf-8"})
        assert short.status_code == routed.status_code == 200
        assert short.content == routed.content and short.headers["content-type"] == \
            routed.headers["content-type"]
        assert "flowerpot" in short.text
        # Another tenant's key reaches a chat of its own user (empty), by either path.
        call(server, "POST", path, tokens["globex"], json=body)
        other = [call(server, "POST", path, tokens["globex"], content=raw,
                      headers={"Content-Type": kind})
                 for kind in ("application/json", "application/json; charset=utf-8")]
        assert other[0].status_code == 200 and other[0].content == other[1].content
        assert "flowerpot" not in other[0].text and "acme" not in other[0].text
        # What the shortcut does not answer is the route's answer: a field the model does
        # not know, a read key (allowed), a wrong method, no key.
        bad = call(server, "POST", path, t, json={**body, "extra": 1})
        assert bad.status_code == 422 and "extra" in bad.json()["detail"]
        assert call(server, "POST", path, tokens["acme_read"], json=body).status_code == 200
        wrong = call(server, "GET", path, t)
        assert wrong.status_code == 405
        assert wrong.headers["content-type"].startswith("application/problem+json")
        assert call(server, "POST", path, None, json=body).status_code == 401


def test_export_import_and_erase(server: Server, tokens: dict[str, str]) -> None:
    t = tokens["acme"]
    user = "/v1/users/bob"
    call(server, "POST", user + "/chats/c/messages", t,
         json={"user": "I play the cello on Sundays.", "assistant": "Lovely."})
    call(server, "POST", user + "/chats/c/memories/ops", t, json={"ops": [
        {"op": "add", "type": "profile", "content": "The user plays the cello",
         "confidence": 0.9, "salience": 0.7}]})
    exported = call(server, "GET", user + "/export", t)
    assert exported.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(x) for x in exported.text.splitlines()]
    assert lines[0]["user_id"] == "bob" and "acme" not in exported.text
    assert all(r["row"]["user_id"] == "bob" for r in lines[1:] if "user_id" in r["row"])
    assert any(r["table"] == "memories" for r in lines[1:])

    assert call(server, "DELETE", user, t).json()["deleted"] > 0
    assert call(server, "GET", user + "/chats/c", t).status_code == 404
    assert call(server, "GET", user + "/export", t).status_code == 404
    restored = call(server, "POST", user + "/import", t, content=exported.content,
                    headers={"content-type": "application/x-ndjson"})
    assert restored.status_code == 200 and restored.json()["rows"] == len(lines) - 1
    again = call(server, "GET", user + "/export", t).text.splitlines()
    assert content([json.loads(x) for x in again]) == content(lines)  # under new ids
    twice = call(server, "POST", user + "/import", t, content=exported.content,
                 headers={"content-type": "application/x-ndjson"})
    assert twice.status_code == 422 and "already has data" in twice.text, twice.text

    ops = "\n".join(json.dumps({"chat_id": "c2", "op": "add", "type": "preference",
                                "content": f"The user likes {x}", "confidence": 0.9,
                                "salience": 0.6}) for x in ("figs", "plums"))
    imported = call(server, "POST", user + "/import", t, content=ops.encode(),
                    headers={"content-type": "application/x-ndjson"}).json()
    assert imported["chats"]["c2"]["applied"] == 2


def test_a_retried_post_stores_one_message(server: Server, tokens: dict[str, str]) -> None:
    t = tokens["acme"]
    chat = USER + "/chats/retry"
    body = {"user": "Remember my flight on Friday.", "assistant": "Will do."}
    first = call(server, "POST", chat + "/messages", t, json=body,
                 headers={"Idempotency-Key": "turn-1"})
    again = call(server, "POST", chat + "/messages", t, json=body,
                 headers={"Idempotency-Key": "turn-1"})
    assert first.status_code == again.status_code == 201
    assert again.json() == {"ids": first.json()["ids"], "replayed": True}
    assert again.headers["idempotent-replayed"] == "true"
    # Retries racing each other (the client timed out and retried at once): still one.
    answers: list[httpx.Response] = []
    racers = [threading.Thread(target=lambda: answers.append(call(
        server, "POST", chat + "/messages", t, json={"role": "user", "content": "Hi"},
        headers={"Idempotency-Key": "turn-2"}))) for _ in range(6)]
    for r in racers:
        r.start()
    for r in racers:
        r.join()
    assert {a.status_code for a in answers} == {201}
    assert len({tuple(a.json()["ids"]) for a in answers}) == 1
    stored = call(server, "GET", chat + "/messages", t).json()["messages"]
    assert [m["content"] for m in stored] == [body["user"], body["assistant"], "Hi"]
    other = call(server, "POST", chat + "/messages", t, json={"role": "user", "content": "No"},
                 headers={"Idempotency-Key": "turn-1"})
    assert other.status_code == 422 and other.json()["error"] == "InvalidInput"


def test_errors_are_problem_documents(server: Server, tokens: dict[str, str],
                                      alice: dict[str, Any]) -> None:
    t = tokens["acme"]
    missing = call(server, "GET", CHAT + "/memories/999999", t)
    assert missing.status_code == 404
    assert missing.headers["content-type"] == "application/problem+json"
    body = missing.json()
    assert body["error"] == "NotFound" and body["id"] == "999999" and body["status"] == 404
    assert "acme" not in body["detail"]
    bad = call(server, "POST", CHAT + "/messages", t, json={"role": "robot", "content": "x"})
    assert bad.status_code == 422 and bad.json()["error"] == "InvalidInput"
    nul = call(server, "POST", CHAT + "/recall", t, json={"query": "a\u0000b"})
    assert nul.status_code == 422 and nul.json()["error"] == "InvalidInput"
    huge = call(server, "POST", CHAT + "/recall", t,
                content=b'{"query": "' + b"x" * (9 << 20) + b'"}',
                headers={"content-type": "application/json"})
    assert huge.status_code == 413 and huge.json()["error"] == "TooLarge"

    def chunks() -> Iterator[bytes]:  # no Content-Length: the cap counts as it streams in
        yield b'{"query": "'
        for _ in range(10):
            yield b"x" * (1 << 20)
        yield b'"}'

    streamed = call(server, "POST", CHAT + "/recall", t, content=chunks(),
                    headers={"content-type": "application/json"})
    assert "content-length" not in streamed.request.headers
    assert streamed.status_code == 413, streamed.text
    assert streamed.headers["content-type"] == "application/problem+json"
    assert streamed.json()["error"] == "TooLarge"


# Every operation of the API with a request that would succeed for its owner.
def routes(memory_id: int) -> list[tuple[str, str, dict[str, Any] | None]]:
    m = f"{CHAT}/memories/{memory_id}"
    return [
        ("PUT", CHAT, None), ("GET", CHAT, None),
        ("GET", CHAT + "/settings", None), ("PATCH", CHAT + "/settings", {"raw_pairs": 3}),
        ("GET", CHAT + "/diagnostics", None),
        ("POST", CHAT + "/messages", {"role": "user", "content": "hello"}),
        ("GET", CHAT + "/messages", None),
        ("POST", CHAT + "/recall", {"query": "flowerpot key"}),
        ("POST", CHAT + "/context", {"message": "where is the key?"}),
        ("POST", CHAT + "/observe", {"content": "Open: find the key."}),
        ("GET", CHAT + "/memories", None), ("GET", m, None), ("GET", m + "/history", None),
        ("POST", CHAT + "/memories/ops", {"ops": [], "dry_run": True}),
        ("POST", m + "/forget", {}), ("POST", m + "/pin", {"pinned": True}),
        ("DELETE", m, None),
        ("GET", USER + "/export", None), ("POST", USER + "/import", None),
        ("DELETE", USER, None),
        ("GET", "/v1/jobs", None), ("POST", "/v1/jobs/lifecycle/run", None),
    ]


WRITES = {"PUT", "PATCH", "POST", "DELETE"}
# Posts that only read (what they note for the cooldown is the library's own business).
READS = ("/recall", "/context")


def is_write(method: str, path: str) -> bool:
    return method in WRITES and not path.endswith(READS)


def sent(path: str, body: dict[str, Any] | None) -> dict[str, Any]:
    if path.endswith("/import"):
        return {"content": b"", "headers": {"content-type": "application/x-ndjson"}}
    return {} if body is None else {"json": body}


def test_the_auth_matrix(server: Server, tokens: dict[str, str],
                         alice: dict[str, Any]) -> None:
    """Every route with no key, a wrong key, another tenant's key and a read key: 401,
    401, what a user that does not exist gets (404 on every read, never 403, never a byte
    of acme's) and 403 on writes; the matrix covers every operation of the OpenAPI
    document."""
    table = routes(alice["memory_id"])
    spec = call(server, "GET", "/openapi.json").json()
    documented = {(method.upper(), path) for path, ops in spec["paths"].items()
                  for method in ops if path.startswith("/v1")}
    names = {"alice": "{user_id}", "home": "{chat_id}", str(alice["memory_id"]): "{memory_id}",
             "lifecycle": "{name}"}
    covered = {(method, "/".join(names.get(p, p) for p in path.split("/")))
               for method, path, _ in table}
    assert documented == covered, documented ^ covered

    forged = tokens["acme"][:-4] + "AAAA"
    for method, path, body in table:
        for token in (None, forged, "not-even-a-key"):
            got = call(server, method, path, token, **sent(path, body))
            assert got.status_code == 401, (method, path, got.text)
            assert got.headers["www-authenticate"] == "Bearer"
            assert SECRET not in got.text

    # Another tenant: reads first (its writes make a user of its own by the same name).
    user_routes = [r for r in table if r[1].startswith(USER)]
    targeted = ("/forget", "/pin", "/history", "/export")
    for method, path, body in sorted(user_routes, key=lambda r: is_write(r[0], r[1])):
        other = call(server, method, path, tokens["globex"], **sent(path, body))
        assert SECRET not in other.text and "acme" not in other.text, (method, path)
        if method == "GET" or path.endswith(targeted) or (method == "DELETE"
                                                          and "/memories/" in path):
            assert other.status_code == 404, (method, path, other.text)
        else:
            assert other.status_code < 300, (method, path, other.text)

    for method, path, body in table:
        reader = call(server, method, path, tokens["acme_read"], **sent(path, body))
        if path.startswith("/v1/jobs"):
            assert reader.status_code == 403, (method, path)
            writer = call(server, method, path, tokens["acme"], **sent(path, body))
            assert writer.status_code == 403, (method, path)
            admin = call(server, method, path, tokens["acme_admin"], **sent(path, body))
            assert admin.status_code == 200, (method, path, admin.text)
        elif is_write(method, path):
            assert reader.status_code == 403, (method, path, reader.text)
        else:
            assert reader.status_code == 200, (method, path, reader.text)
    # Acme's data is all still there, untouched by globex's writes.
    mine = call(server, "GET", CHAT + "/memories", tokens["acme"]).json()
    assert SECRET in [m["content"] for m in mine]


def test_delete_a_memory_for_good(server: Server, tokens: dict[str, str],
                                  alice: dict[str, Any]) -> None:
    t = tokens["acme"]
    applied = call(server, "POST", CHAT + "/memories/ops", t, json={"ops": [
        {"op": "add", "type": "preference", "content": "Alice likes green tea in the morning",
         "confidence": 0.9, "salience": 0.8}]}).json()
    memory = f"{CHAT}/memories/{applied['written'][0]}"
    assert call(server, "GET", memory, t).status_code == 200
    gone = call(server, "DELETE", memory, t, params={"sources": "false"})
    assert gone.status_code == 200, gone.text
    assert gone.json()["deleted"]["memories"] == 1
    again = call(server, "DELETE", memory, t)
    assert again.status_code == 404 and again.json()["error"] == "NotFound"
    assert again.headers["content-type"] == "application/problem+json"
    assert call(server, "GET", memory, t).status_code == 404
    texts = [m["content"] for m in call(server, "GET", CHAT + "/memories", t).json()]
    assert SECRET in texts and "Alice likes green tea in the morning" not in texts


def test_keys_from_the_command_line(server: Server, service_url: str) -> None:
    env = {**server.env}
    made = subprocess.run([ENGRAM, "keys", "create", "--tenant", "initech", "--scope", "read",
                           "--json"], env=env, capture_output=True, text=True, check=True)
    created = json.loads(made.stdout)
    token = created["key"]
    assert token.startswith("egk_")
    assert call(server, "GET", "/v1/users/x/chats/y", token).status_code == 404
    listed = subprocess.run([ENGRAM, "keys", "list", "--json"], env=env,
                            capture_output=True, text=True, check=True).stdout
    assert token not in listed and created["id"] in listed
    subprocess.run([ENGRAM, "keys", "revoke", created["id"]], env=env, check=True,
                   capture_output=True)
    time.sleep(2.5)  # the server remembers a key's answer for 2 s (Keys.ttl)
    assert call(server, "GET", "/v1/users/x/chats/y", token).status_code == 401


def test_serve_refuses_to_start_without_a_key(settings: Settings) -> None:
    url = resolve_url(settings, "memory_service_nokeys")
    with Database(url, max_size=1) as db, db.connection() as conn:
        conn.execute("DELETE FROM api_keys")
    env = {**Server(url).env}
    refused = subprocess.run([ENGRAM, "serve", "--host", "127.0.0.1", "--port", "1"],
                             env=env, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 1 and "no API key" in refused.stderr
    public = subprocess.run([ENGRAM, "serve", "--local", "--host", "0.0.0.0", "--port", "1"],
                            env=env, capture_output=True, text=True, timeout=60)
    assert public.returncode == 1 and "127.0.0.1 only" in public.stderr


def test_sigterm_lets_requests_in_flight_finish(service_url: str,
                                                tokens: dict[str, str]) -> None:
    """A slow import (1,500 ops through the gate, each embedded) is under way when the
    server gets SIGTERM: it answers 200 with everything applied, then the server exits.
    (300 ops took over a second on a loaded machine and under one on a quiet one.)"""
    count = 1500
    ops = "\n".join(json.dumps({"chat_id": "slow", "op": "add", "type": "episodic",
                                "content": f"The user visited museum number {i} in town {i}",
                                "confidence": 0.9, "salience": 0.6}) for i in range(count))
    with Server(service_url) as server:
        answer: list[httpx.Response] = []
        sent = threading.Thread(target=lambda: answer.append(call(
            server, "POST", "/v1/users/carol/import", tokens["acme"], content=ops.encode(),
            headers={"content-type": "application/x-ndjson"})))
        sent.start()
        time.sleep(1.0)
        assert not answer, "the import finished before the signal: make it slower"
        signalled = time.monotonic()
        server.terminate()
        sent.join(60)
        # uvicorn re-raises the signal once it has shut down: killed by SIGTERM, cleanly.
        assert server.proc is not None and server.proc.wait(60) in (0, -signal.SIGTERM)
        assert answer and answer[0].status_code == 200, answer
        assert answer[0].json()["chats"]["slow"]["applied"] == count
        assert time.monotonic() > signalled
        with pytest.raises(httpx.ConnectError):
            httpx.get(server.base + "/health", timeout=2)
