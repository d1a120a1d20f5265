"""A real `engram serve` on 127.0.0.1 for the service's tests: its own database on the
test server (so other tests' truncations never touch it), its own port, stopped by
SIGTERM."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ENGRAM = str(Path(sys.executable).parent / "engram")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``engram serve --local`` in a subprocess, on the database at ``url``."""

    def __init__(self, url: str, *, workers: int = 1, env: dict[str, str] | None = None
                 ) -> None:
        self.url = url
        self.workers = workers
        self.env = {**os.environ, "MEMORY_DATABASE_URL": url, "MEMORY_EMBEDDER_THREADS": "1",
                    **(env or {})}
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        fd, name = tempfile.mkstemp(prefix="engram-serve-", suffix=".log")
        self.log = os.fdopen(fd, "wb")
        self.log_path = Path(name)
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 90) -> Server:
        self.proc = subprocess.Popen(
            [ENGRAM, "serve", "--local", "--host", "127.0.0.1", "--port", str(self.port),
             "--workers", str(self.workers), "--log-level", "warning"],
            env=self.env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"engram serve exited {self.proc.returncode}:\n"
                                   f"{self.output()}")
            try:
                if httpx.get(self.base + "/health", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"engram serve did not answer in {timeout}s:\n{self.output()}")

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def terminate(self) -> None:
        """SIGTERM, as a process manager stops it."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)

    def stop(self) -> int | None:
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        self.terminate()
        try:
            return self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
