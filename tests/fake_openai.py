"""A local OpenAI-compatible server that replays scripted responses, for the LLM-path tests.

The code under test talks to it through the real ``openai`` client over HTTP on 127.0.0.1;
nothing is patched. Each request takes the next scripted response from a queue (status,
JSON or raw body, headers, an optional delay to provoke client timeouts) and is recorded,
parsed, so a test can assert on what the library sent. Recorded chat completions live in
``tests/recordings/`` in the shape the OpenAI API returns them.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

RECORDINGS = Path(__file__).parent / "recordings"
PATHS = ("/v1/chat/completions", "/chat/completions")


@dataclass
class Scripted:
    """One scripted HTTP response. ``body``: a dict or list is sent as JSON; a str is sent
    as it is (for malformed bodies), with ``content_type``."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    content_type: str = "application/json"


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body["messages"])

    def content(self, role: str) -> str:
        """The content of the request's (single) message with ``role``."""
        found = [m["content"] for m in self.messages if m["role"] == role]
        assert len(found) == 1, f"expected one {role} message, got {len(found)}"
        return str(found[0])


def recording(name: str) -> dict[str, Any]:
    """A recorded response body from ``tests/recordings/<name>.json``."""
    data: dict[str, Any] = json.loads((RECORDINGS / f"{name}.json").read_text())
    return data


def completion(content: str | None, *, refusal: str | None = None,
               finish_reason: str = "stop", model: str = "gpt-4o-mini-2024-07-18"
               ) -> dict[str, Any]:
    """A chat completion body in the API's shape, for responses built inside a test."""
    return {
        "id": "chatcmpl-fake0000000000000000000000",
        "object": "chat.completion",
        "created": 1793610000,
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content, "refusal": refusal,
                        "annotations": []},
            "logprobs": None,
            "finish_reason": finish_reason,
        }],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
        "system_fingerprint": "fp_fake",
    }


def ops_reply(ops: list[dict[str, Any]]) -> Scripted:
    """A successful extraction answer carrying ``ops``."""
    return Scripted(body=completion(json.dumps({"ops": ops})))


class FakeOpenAI:
    """Serves ``POST /v1/chat/completions`` from a queue of :class:`Scripted` responses."""

    def __init__(self) -> None:
        self._queue: deque[Scripted] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.requests: list[Received] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep the test output quiet

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                path = self.path.split("?", 1)[0]
                if path not in PATHS:
                    self._send(Scripted(status=404, body={"error": {
                        "message": f"fake server: no route {path}", "type": "invalid_request_error",
                        "param": None, "code": None}}))
                    return
                try:
                    body: Any = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                with fake._lock:
                    fake.requests.append(Received(path, dict(self.headers.items()), body))
                    scripted = fake._queue.popleft() if fake._queue else None
                if scripted is None:
                    scripted = Scripted(status=500, body={"error": {
                        "message": "fake server: no scripted response left",
                        "type": "server_error", "param": None, "code": None}})
                if scripted.delay and fake._stopping.wait(scripted.delay):
                    return
                self._send(scripted)

            def _send(self, scripted: Scripted) -> None:
                if isinstance(scripted.body, str):
                    payload = scripted.body.encode()
                else:
                    payload = json.dumps(scripted.body).encode()
                try:
                    self.send_response(scripted.status)
                    self.send_header("content-type", scripted.content_type)
                    self.send_header("content-length", str(len(payload)))
                    for key, value in scripted.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                    self.wfile.flush()
                except OSError:
                    pass  # the client gave up (a timeout): nothing to deliver to

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        name="fake-openai", daemon=True)

    @property
    def url(self) -> str:
        """The base URL to give ``openai.OpenAI(base_url=...)``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def enqueue(self, *responses: Scripted) -> None:
        with self._lock:
            self._queue.extend(responses)

    @property
    def pending(self) -> int:
        """Scripted responses not served yet."""
        with self._lock:
            return len(self._queue)

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers still delaying a response
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A running fake server; import this fixture into a test module to use it."""
    with FakeOpenAI() as server:
        yield server
