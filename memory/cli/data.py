"""The chat's data: `memory record`, `show`, `history`, `log`, `import`, `reembed`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from memory.cli.app import emit, opened, parse_now, progress_bar
from memory.models import Op, Scope
from memory.table import table


@click.command()
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
        message_id = client.record(user_id, chat_id, role, text, at=parse_now(at))
    click.echo(message_id)


@click.command()
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


@click.command()
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


@click.command()
@click.option("--user", "user_id", required=True, help="User id.")
@click.option("--chat", "chat_id", required=True, help="Chat id.")
@click.option("--before", type=int, help="Page backwards from this message id.")
@click.option("--limit", type=int, default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def log(ctx: click.Context, user_id: str, chat_id: str, before: int | None, limit: int,
        as_json: bool) -> None:
    """Page a chat's message log backwards: the scrollback stays in the log."""
    with opened(ctx) as client:
        page = client.log(user_id, chat_id, before=before, limit=limit)
    if as_json:
        emit([m.model_dump(mode="json") for m in page])
        return
    for m in page:
        click.echo(f"#{m.id} {m.at.isoformat(timespec='minutes')} {m.role.value}: {m.content}")
    if page:
        click.echo(f"(older: --before {page[0].id})", err=True)


@click.command("import")
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


@click.command()
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


COMMANDS = (record, show, history, log, import_, reembed)
