"""What every command shares: the root group's error handling, the settings in the click
context, an opened client, JSON output, a progress bar and the ``--now`` clock.

The command modules (``database``, ``data``, ``turn``, ``jobs``) import from here and
define their commands; ``cli._root`` mounts them on the root group. Nothing here
imports a command module, so the modules never import each other in a circle.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import click

from engrammar.client import Client, utcnow
from engrammar.errors import Error
from engrammar.settings import Settings

CONTEXT_SETTINGS: dict[str, Any] = {"help_option_names": ["-h", "--help"]}


class MemoryGroup(click.Group):
    """A group that turns the library's errors into ``error: ...`` and exit status 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except Error as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(1)


def settings_of(ctx: click.Context) -> Settings:
    """The settings the root group read from the environment."""
    settings: Settings = ctx.obj["settings"]
    return settings


def parse_now(value: str | None) -> datetime:
    """An ISO timestamp from ``--now``/``--at``; now when not given; UTC when it names no
    time zone (the one datetime rule, _inputs)."""
    if not value:
        return utcnow()
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise click.BadParameter(f"{value!r} is not an ISO timestamp (2026-11-21T09:00Z)"
                                 ) from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def emit(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, default=str, ensure_ascii=False))


@contextmanager
def opened(ctx: click.Context, **kwargs: Any) -> Iterator[Client]:
    client = Client.open(settings_of(ctx), **kwargs)
    try:
        yield client
    finally:
        client.close()


@contextmanager
def progress_bar(label: str, total: int) -> Iterator[Callable[[int], Any]]:
    """A progress bar on a terminal; silent when stderr is not one (cron, pipes)."""
    if not sys.stderr.isatty() or total == 0:
        yield lambda n: None
        return
    with click.progressbar(length=total, label=label, file=sys.stderr) as bar:
        yield bar.update
