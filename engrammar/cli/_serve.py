"""``engram serve``: the HTTP API (engrammar.service) on uvicorn."""

from __future__ import annotations

import click

from engrammar.cli._app import settings_of
from engrammar.service import _server as server


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Worker processes (each with its own pool and copies).")
@click.option("--local", is_flag=True,
              help="Allow starting with no API key, on 127.0.0.1 only.")
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["critical", "error", "warning", "info", "debug"]))
@click.pass_context
def serve(ctx: click.Context, host: str, port: int, workers: int, local: bool,
          log_level: str) -> None:
    """Serve the HTTP API under /v1 (OpenAPI at /openapi.json, docs at /docs).

    Every route but /health and /ready takes an API key (engram keys create). SIGTERM
    lets the requests in flight finish."""
    live = server.check_start(settings_of(ctx), host, local=local)
    click.echo(f"engram serve: http://{host}:{port} ({workers} worker"
               f"{'s' if workers > 1 else ''}, {live} live key{'' if live == 1 else 's'})",
               err=True)
    server.serve(host, port, workers, log_level=log_level)


COMMANDS = [serve]
