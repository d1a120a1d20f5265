"""The chat's data: `engram record`, `show`, `history`, `log`, `import`, `export`, `erase`,
`delete`, `private`, `reembed`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from engrammar import _userdata as userdata
from engrammar._table import table
from engrammar.cli._app import emit, opened, parse_now, progress_bar


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
@click.option("--replace", is_flag=True,
              help="An export only: erase the user first, in the same transaction (a "
                   "failed import leaves them as they were).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def import_(ctx: click.Context, path: Path, source: str, dry_run: bool, replace: bool,
            as_json: bool) -> None:
    """Import a file: an export of `engram export`, or ops through the write gate.

    An export restores its user whole, into this store or another database: every row
    takes a new id here and every reference follows it, so the data comes back the same
    but for the numbers. The user must have no data in the store (after `engram erase`,
    or a store that never had them); importing while they do, a second import of the same
    file included, is refused with nothing written. --replace swaps them for the file.

    Each line of an ops file is an op with its scope: {"user_id": "u1", "chat_id": "c1",
    "op": "add", "type": "profile", "content": "Lives in Lisbon"}. A file is all or
    nothing: a line that does not parse, or that the store refuses, stops the import with
    nothing written, naming the line.
    """
    with opened(ctx) as client:
        results = client.import_file(path.read_bytes(), name=str(path), source=source,
                                     dry_run=dry_run, replace=replace)
    if isinstance(results, int):
        if as_json:
            emit({"restored": results, "dry_run": dry_run})
        else:
            click.echo(f"restored {results} rows" + (" (dry run)" if dry_run else ""))
        return
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
@click.option("--user", "user_id", required=True, help="User id.")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write here (default: standard output).")
@click.pass_context
def export(ctx: click.Context, user_id: str, out: Path | None) -> None:
    """Export every row of a user as JSON lines (`engram import` restores it)."""
    with opened(ctx) as client:
        records = client.export_user(user_id)
    lines = userdata.dump(records)
    if out is None:
        for line in lines:
            click.echo(line, nl=False)
        return
    with out.open("w", encoding="utf-8") as f:
        f.writelines(lines)
    click.echo(f"exported {len(records) - 1} rows of {user_id} to {out}", err=True)


@click.command()
@click.option("--user", "user_id", required=True, help="User id.")
@click.option("--chat", "chat_id", help="Only this chat.")
@click.option("--yes", is_flag=True, help="Do not ask.")
@click.pass_context
def erase(ctx: click.Context, user_id: str, chat_id: str | None, yes: bool) -> None:
    """Delete every row of a user (or of one chat) from every table; nothing else deletes."""
    what = f"chat {user_id}/{chat_id}" if chat_id else f"user {user_id}"
    if not yes:
        click.confirm(f"Delete everything of {what}?", abort=True)
    with opened(ctx) as client:
        deleted = (client.erase_chat(user_id, chat_id) if chat_id
                   else client.erase_user(user_id))
    click.echo(f"erased {what}: {deleted} rows")


@click.command()
@click.option("--user", "user_id", required=True, help="User id.")
@click.option("--chat", "chat_id", required=True, help="Chat id.")
@click.argument("memory_id", type=int)
@click.option("--sources", is_flag=True,
              help="Also the messages it rests on, and the summaries drawn from them.")
@click.option("--yes", is_flag=True, help="Do not ask.")
@click.pass_context
def delete(ctx: click.Context, user_id: str, chat_id: str, memory_id: int, sources: bool,
           yes: bool) -> None:
    """Delete one memory for good (forget only archives it): its text leaves every table."""
    what = f"memory {memory_id}" + (" and the messages it rests on" if sources else "")
    if not yes:
        click.confirm(f"Delete {what} for good?", abort=True)
    with opened(ctx) as client:
        deleted = client.delete(user_id, chat_id, memory_id, sources=sources)
    click.echo(f"deleted {what}: " + ", ".join(f"{n} {t}" for t, n in deleted.items()))


@click.command()
@click.option("--user", "user_id", required=True, help="User id.")
@click.option("--chat", "chat_id", required=True, help="Chat id.")
@click.option("--off", is_flag=True, help="Share again (undo).")
@click.pass_context
def private(ctx: click.Context, user_id: str, chat_id: str, off: bool) -> None:
    """Keep a chat out of the user's shared memories (MEMORY_SCOPES__USER_WIDE): it
    neither recalls them nor adds to them."""
    with opened(ctx) as client:
        client.set_private(user_id, chat_id, not off)
    click.echo(f"chat {user_id}/{chat_id} is {'shared' if off else 'private'}")


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


COMMANDS = (record, show, history, log, import_, export, erase, delete, private, reembed)
