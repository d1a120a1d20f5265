"""Serving the app: the factory each uvicorn worker calls, and ``serve`` (what ``engram
serve`` runs).

Each worker process builds its own client (its own pool and per-process copies) from the
settings; uvicorn's supervisor forwards SIGTERM to the workers, and each stops accepting,
lets the requests in flight finish (up to ``GRACE`` seconds), then closes its client."""

from __future__ import annotations

import ipaddress

from fastapi import FastAPI

from engrammar.client import Client
from engrammar.errors import ConfigError
from engrammar.runtime._database import Database
from engrammar.service._app import create_app
from engrammar.service._keys import Keys
from engrammar.settings import Settings

# Seconds a stopping worker waits for the requests in flight.
GRACE = 30
# Seconds a worker may take to start (open the pool, load the embedder) or to answer the
# supervisor's ping before it is replaced: uvicorn's 5 s kill slow starts in a loop on a
# loaded machine.
HEALTHCHECK = 120


def app_from_settings() -> FastAPI:
    """The app on a client opened from the environment's settings (uvicorn's factory)."""
    settings = Settings()
    client = Client.open(settings)
    return create_app(client, keys=Keys(client.db), max_body=settings.service_max_body,
                      close_client=True)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_start(settings: Settings, host: str, *, local: bool) -> int:
    """Refuse to serve with no live key, unless ``local`` on a loopback address; the
    live keys. Migrates the database first, so the workers start on a current one."""
    if local and not is_loopback(host):
        raise ConfigError(f"--local serves on 127.0.0.1 only, not on {host}")
    with Database.from_settings(settings) as db:
        live = Keys(db).count()
    if live == 0 and not local:
        raise ConfigError("no API key: make one with `engram keys create --tenant T`, or "
                          "serve on 127.0.0.1 with --local")
    return live


def serve(host: str, port: int, workers: int = 1, *, log_level: str = "info") -> None:
    import uvicorn

    uvicorn.run("engrammar.service._server:app_from_settings", factory=True, host=host,
                port=port, workers=workers, timeout_graceful_shutdown=GRACE,
                log_level=log_level, access_log=False, proxy_headers=False,
                timeout_worker_healthcheck=HEALTHCHECK)
