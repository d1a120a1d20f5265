"""`engram init` and `engram db ...`: the database, embedded or not."""

from __future__ import annotations

from typing import Any

import click

from engrammar.cli._app import emit, opened, settings_of
from engrammar.runtime._database import (
    EMBEDDED_DATABASE,
    embedded_status,
    shown_url,
    stop_embedded,
    with_database,
)


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def init(ctx: click.Context, as_json: bool) -> None:
    """Start the database if needed, apply migrations and load the embedder."""
    with opened(ctx) as client:
        info = {"database": client.db.url, "migrations_applied": client.db.applied,
                "embedder": client.embedder.name, "dim": client.embedder.dim,
                "extractor": client.extractor.name}
    if as_json:
        emit(info)
    else:
        for key, value in info.items():
            click.echo(f"{key:20} {value}")


@click.group()
def db() -> None:
    """The embedded PostgreSQL server."""


@db.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def db_status(ctx: click.Context, as_json: bool) -> None:
    """Say where the data is: the URL of the database that holds it (password hidden), and
    for the embedded server whether it runs and its data directory."""
    settings = settings_of(ctx)
    if settings.database_url:
        info: dict[str, Any] = {"embedded": False, "url": shown_url(settings.database_url)}
    else:
        st = embedded_status(settings.data_dir)
        url = with_database(st.url, EMBEDDED_DATABASE) if st.url else None
        info = {"embedded": True, "running": st.running, "pid": st.pid, "url": url,
                "data_dir": str(st.data_dir)}
    if as_json:
        emit(info)
    else:
        for key, value in info.items():
            click.echo(f"{key:10} {value}")


@db.command("stop")
@click.pass_context
def db_stop(ctx: click.Context) -> None:
    """Stop the embedded server (it outlives the processes that use it)."""
    stopped = stop_embedded(settings_of(ctx).data_dir)
    click.echo("stopped" if stopped else "not running")


COMMANDS = (init, db)
