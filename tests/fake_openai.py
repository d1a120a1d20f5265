"""A local OpenAI-compatible server that replays scripted responses, for the LLM-path tests.

The code under test talks to it through the real ``openai`` client over HTTP on 127.0.0.1;
nothing is patched. Each request takes the next scripted response from a queue (status,
JSON or raw body, headers, an optional delay to provoke client timeouts) and is recorded,
parsed, so a test can assert on what the library sent. Recorded chat completions live in
``tests/recordings/`` in the shape the OpenAI API returns them.

It also keeps files (``POST /v1/files`` multipart, ``GET /v1/files/{id}[/content]``) and
batches (``POST /v1/batches``, ``GET /v1/batches/{id}``, ``POST .../cancel``). A batch
stays ``in_progress`` until the test calls :meth:`FakeOpenAI.settle_batch`, which answers
its JSONL lines from the same queue of scripted responses, in order, and sets its status.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

RECORDINGS = Path(__file__).parent / "recordings"
PATHS = ("/v1/chat/completions", "/chat/completions")
BATCH_LINE = "batch:"  # the path prefix of a batch line among the recorded requests


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


@dataclass
class FakeFile:
    id: str
    filename: str
    purpose: str
    data: bytes
    created_at: int

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "object": "file", "bytes": len(self.data),
                "created_at": self.created_at, "filename": self.filename,
                "purpose": self.purpose, "status": "processed"}


@dataclass
class FakeBatch:
    id: str
    input_file_id: str
    endpoint: str
    completion_window: str
    created_at: int
    metadata: dict[str, str] | None = None
    status: str = "in_progress"
    output_file_id: str | None = None
    error_file_id: str | None = None
    counts: dict[str, int] = field(default_factory=lambda: {"total": 0, "completed": 0,
                                                              "failed": 0})

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "object": "batch", "endpoint": self.endpoint, "errors": None,
                "input_file_id": self.input_file_id,
                "completion_window": self.completion_window, "status": self.status,
                "output_file_id": self.output_file_id, "error_file_id": self.error_file_id,
                "created_at": self.created_at, "request_counts": self.counts,
                "metadata": self.metadata}


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
    """Serves ``POST /v1/chat/completions`` from a queue of :class:`Scripted` responses,
    and the files and batches endpoints of the Batch API."""

    def __init__(self) -> None:
        self._queue: deque[Scripted] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.requests: list[Received] = []
        self.files: dict[str, FakeFile] = {}
        self.batches: dict[str, FakeBatch] = {}
        # Scripted failures of the files and batches endpoints, by route ("files", "batches").
        self.api_failures: dict[str, deque[Scripted]] = {}
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep the test output quiet

            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                parts = path.strip("/").split("/")
                with fake._lock:
                    if parts[:2] == ["v1", "files"] and len(parts) in (3, 4) \
                            and parts[2] in fake.files:
                        found = fake.files[parts[2]]
                        if len(parts) == 4 and parts[3] == "content":
                            self._send(Scripted(body=found.data.decode(),
                                                content_type="application/octet-stream"))
                            return
                        if len(parts) == 3:
                            self._send(Scripted(body=found.to_json()))
                            return
                    if parts[:2] == ["v1", "batches"] and len(parts) == 3 \
                            and parts[2] in fake.batches:
                        self._send(Scripted(body=fake.batches[parts[2]].to_json()))
                        return
                self._send(Scripted(status=404, body={"error": {
                    "message": f"fake server: nothing at {path}",
                    "type": "invalid_request_error", "param": None, "code": None}}))

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                path = self.path.split("?", 1)[0]
                if path.startswith(("/v1/files", "/v1/batches")):
                    self._send(fake._api(path, self.headers.get("content-type") or "", raw))
                    return
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

    def _api(self, path: str, content_type: str, raw: bytes) -> Scripted:
        """The files and batches endpoints (POST)."""
        route = path.strip("/").split("/")[1]
        now = int(time.time())
        with self._lock:
            failures = self.api_failures.get(route)
            if failures:
                return failures.popleft()
            if path == "/v1/files":
                form = _multipart(content_type, raw)
                upload = form["file"]
                made = FakeFile(f"file-{len(self.files) + 1}", upload.get_filename() or "",
                                form["purpose"].get_content().strip(),
                                upload.get_payload(decode=True) or b"", now)
                self.files[made.id] = made
                return Scripted(body=made.to_json())
            if path == "/v1/batches":
                body = json.loads(raw)
                if body.get("input_file_id") not in self.files:
                    return Scripted(status=400, body={"error": {
                        "message": "fake server: no such input file",
                        "type": "invalid_request_error", "param": "input_file_id",
                        "code": None}})
                batch = FakeBatch(f"batch_{len(self.batches) + 1}", body["input_file_id"],
                                  body["endpoint"], body["completion_window"], now,
                                  body.get("metadata"))
                self.batches[batch.id] = batch
                return Scripted(body=batch.to_json())
            parts = path.strip("/").split("/")
            if len(parts) == 4 and parts[3] == "cancel" and parts[2] in self.batches:
                self.batches[parts[2]].status = "cancelled"
                return Scripted(body=self.batches[parts[2]].to_json())
        return Scripted(status=404, body={"error": {
            "message": f"fake server: no route {path}", "type": "invalid_request_error",
            "param": None, "code": None}})

    def settle_batch(self, status: str = "completed", *, batch_id: str | None = None,
                     answer: int | None = None,
                     line_errors: dict[int, dict[str, Any]] | None = None) -> FakeBatch:
        """Run a batch (the latest if ``batch_id`` is None) and give it ``status``. The first
        ``answer`` lines (all when completed, none otherwise) take the next scripted
        responses in order: a 200 goes to the output file, any other status to the error
        file. ``line_errors``: lines (by index) that fail with that error instead."""
        with self._lock:
            batch = self.batches[batch_id] if batch_id else list(self.batches.values())[-1]
            lines = [json.loads(x) for x in
                     self.files[batch.input_file_id].data.decode().splitlines() if x]
            if answer is None:
                answer = len(lines) if status == "completed" else 0
            output: list[str] = []
            errors: list[str] = []
            for n, line in enumerate(lines[:answer]):
                self.requests.append(Received(BATCH_LINE + line["url"], {}, line["body"]))
                if line_errors and n in line_errors:
                    errors.append(json.dumps({"id": f"batch_req_{n}",
                                              "custom_id": line["custom_id"],
                                              "response": None, "error": line_errors[n]}))
                    continue
                scripted = self._queue.popleft()
                result = {"id": f"batch_req_{n}", "custom_id": line["custom_id"],
                          "response": {"status_code": scripted.status,
                                       "request_id": f"req_{n}", "body": scripted.body},
                          "error": None}
                (output if scripted.status == 200 else errors).append(json.dumps(result))
            for name, kept in (("output_file_id", output), ("error_file_id", errors)):
                if kept:
                    made = FakeFile(f"file-{len(self.files) + 1}", f"{batch.id}_{name}.jsonl",
                                    "batch_output", ("\n".join(kept) + "\n").encode(),
                                    int(time.time()))
                    self.files[made.id] = made
                    setattr(batch, name, made.id)
            batch.status = status
            batch.counts = {"total": len(lines), "completed": len(output),
                            "failed": len(errors)}
            return batch

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


def _multipart(content_type: str, raw: bytes) -> dict[str, EmailMessage]:
    """The parts of a multipart/form-data body, by field name."""
    message = BytesParser(policy=HTTP).parsebytes(
        f"content-type: {content_type}\r\n\r\n".encode() + raw)
    assert isinstance(message, EmailMessage)
    out: dict[str, EmailMessage] = {}
    for part in message.iter_parts():
        assert isinstance(part, EmailMessage)
        name = part.get_param("name", header="content-disposition")
        out[str(name)] = part
    return out


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A running fake server; import this fixture into a test module to use it."""
    with FakeOpenAI() as server:
        yield server
