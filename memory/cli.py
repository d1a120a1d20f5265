"""The ``memory`` command: parses, calls the library, prints. ``--json`` for scripts."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from memory.client import Client, utcnow
from memory.db import embedded_status, stop_embedded
from memory.errors import Error
from memory.models import Op, Scope
from memory.settings import Settings


def _now(value: str | None) -> datetime:
    if not value:
        return utcnow()
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise click.BadParameter(f"{value!r} is not an ISO timestamp (2026-11-21T09:00Z)"
                                 ) from exc
    return parsed if parsed.tzinfo else parsed.astimezone()


def emit(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, default=str, ensure_ascii=False))


def table(rows: Sequence[Sequence[Any]], headers: Sequence[str],
          widths: dict[int, int] | None = None) -> str:
    """A plain text table; long cells are cut to the width given for their column."""
    cut = widths or {}
    cells = [[_cell(v, cut.get(i)) for i, v in enumerate(r)] for r in rows]
    sizes = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(s) for h, s in zip(headers, sizes, strict=True)).rstrip()
    body = ["  ".join(c.ljust(s) for c, s in zip(r, sizes, strict=True)).rstrip() for r in cells]
    return "\n".join([line, "  ".join("-" * s for s in sizes), *body])


def _cell(value: Any, width: int | None) -> str:
    text = "" if value is None else str(value)
    if isinstance(value, float):
        text = f"{value:.2f}"
    if width and len(text) > width:
        text = text[: width - 1] + "…"
    return text


@contextmanager
def opened(ctx: click.Context, **kwargs: Any) -> Iterator[Client]:
    client = Client.open(ctx.obj["settings"], **kwargs)
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


class MemoryGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except Error as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(1)


@click.group(cls=MemoryGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Typed long-term memory of each user, for LLM chat products.

    Record messages after each turn, run the nightly jobs, recall a memory block before
    the next turn. Configuration comes from MEMORY_* environment variables; with no
    MEMORY_DATABASE_URL an embedded PostgreSQL is started under MEMORY_DATA_DIR.
    """
    ctx.obj = {"settings": Settings()}


@cli.command()
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


@cli.group()
def db() -> None:
    """The embedded PostgreSQL server."""


@db.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def db_status(ctx: click.Context, as_json: bool) -> None:
    """Say whether the embedded server runs, and where."""
    settings: Settings = ctx.obj["settings"]
    if settings.database_url:
        info: dict[str, Any] = {"embedded": False, "url": settings.database_url}
    else:
        st = embedded_status(settings.data_dir)
        info = {"embedded": True, "running": st.running, "pid": st.pid, "url": st.url,
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
    settings: Settings = ctx.obj["settings"]
    stopped = stop_embedded(settings.data_dir)
    click.echo("stopped" if stopped else "not running")


@cli.command()
@click.option("--user", "user_id", required=True, help="User id.")
@click.option("--chat", "chat_id", required=True, help="Chat id.")
@click.option("--role", default="user", show_default=True,
              type=click.Choice(["user", "assistant", "system"]))
@click.option("--at", help="ISO timestamp of the message (default: now).")
@click.argument("content", required=False)
@click.pass_context
def record(ctx: click.Context, user_id: str, chat_id: str, role: str, at: str | None,
           content: str | None) -> None:
    """Append a message to a chat's log (CONTENT, or standard input)."""
    text = content if content is not None else sys.stdin.read()
    with opened(ctx) as client:
        message_id = client.record(user_id, chat_id, role, text, at=_now(at))
    click.echo(message_id)


@cli.command()
@click.option("--user", "user_id", required=True, help="User id.")
@click.option("--chat", "chat_id", required=True, help="Chat id.")
@click.option("--status", "statuses", multiple=True,
              type=click.Choice(["active", "stale", "archived", "contradicted"]),
              help="Only these statuses (repeatable; default: all).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def show(ctx: click.Context, user_id: str, chat_id: str, statuses: tuple[str, ...],
         as_json: bool) -> None:
    """Show a chat's memories."""
    with opened(ctx) as client:
        found = client.memories(user_id, chat_id, list(statuses) or None)
    if as_json:
        emit([m.model_dump(mode="json", exclude={"embedding"}) for m in found])
        return
    if not found:
        click.echo(f"no memories for {user_id}/{chat_id}")
        return
    rows = [(m.id, m.type.value, m.status.value, m.surface.value, "*" if m.pinned else "",
             m.confidence, m.salience, m.due_at.date() if m.due_at else "", m.content)
            for m in found]
    click.echo(table(rows, ["id", "type", "status", "surface", "pin", "conf", "sal", "due",
                            "content"], {8: 70}))


@cli.command()
@click.option("--user", "user_id", required=True, help="User id.")
@click.option("--chat", "chat_id", required=True, help="Chat id.")
@click.option("--memory", "memory_id", type=int, help="Only this memory's events.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def history(ctx: click.Context, user_id: str, chat_id: str, memory_id: int | None,
            as_json: bool) -> None:
    """Show the event history of a chat's memories, rejections included."""
    with opened(ctx) as client:
        if memory_id is not None:
            client.get(user_id, chat_id, memory_id)  # NotFound names the id
        events = client.history(user_id, chat_id, memory_id)
    if as_json:
        emit([e.model_dump(mode="json") for e in events])
        return
    rows = [(e.id, e.at.isoformat(timespec="minutes"), e.memory_id, e.op, e.source,
             e.reason or "") for e in events]
    click.echo(table(rows, ["id", "at", "memory", "op", "source", "reason"], {5: 70}))


@cli.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--source", default="import", show_default=True, help="Recorded as the source.")
@click.option("--dry-run", is_flag=True, help="Decide, print, write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def import_(ctx: click.Context, path: Path, source: str, dry_run: bool, as_json: bool) -> None:
    """Send ops from a JSONL file through the write gate.

    Each line is an op with its scope: {"user_id": "u1", "chat_id": "c1", "op": "add",
    "type": "profile", "content": "Lives in Lisbon"}. A line that does not parse stops the
    import before anything is written, naming the line.
    """
    batches: dict[Scope, list[Op]] = {}
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if not isinstance(data, dict):
                raise ValueError("each line must be a JSON object")
            scope = Scope(user_id=data.pop("user_id"), chat_id=data.pop("chat_id"))
            batches.setdefault(scope, []).append(Op.model_validate(data))
        except (ValueError, KeyError) as exc:
            raise click.ClickException(f"{path}:{number}: {exc}") from exc
    results = {}
    with opened(ctx) as client:
        for scope, ops in batches.items():
            results[str(scope)] = client.apply(scope.user_id, scope.chat_id, ops,
                                               source=source, dry_run=dry_run)
    if as_json:
        emit({k: v.to_json() for k, v in results.items()})
        return
    for key, result in results.items():
        click.echo(f"{key}: {result.applied} applied, {sum(result.rejected.values())} rejected"
                   + (" (dry run)" if dry_run else ""))
        for d in result.decisions:
            click.echo(f"  {d.verdict.value:8} {d.proposed.op.value:10} {d.code:14} "
                       f"{d.proposed.content[:60]}")


@cli.command()
@click.option("--yes", is_flag=True, help="Do not ask.")
@click.pass_context
def reembed(ctx: click.Context, yes: bool) -> None:
    """Re-embed every memory with the configured embedder (after changing it)."""
    if not yes:
        click.confirm("Recompute every memory's vector?", abort=True)
    with opened(ctx, check_embedder=False) as client:
        with progress_bar("re-embedding", client.count_memories()) as bar:
            done = client.reembed(progress=bar)
    click.echo(f"re-embedded {done} memories")


def main() -> None:
    # Each module registers its commands on `cli` when imported.
    from evals.cli import main as eval_command
    from memory import cli_jobs, cli_turn  # noqa: F401

    cli.add_command(eval_command, "eval")
    cli(prog_name="memory")
