"""``engram keys``: the HTTP service's API keys (create, list, revoke)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import click

from engrammar.cli._app import emit, settings_of
from engrammar.runtime._database import Database
from engrammar.service._keys import SCOPES, Keys


@contextmanager
def _keys(ctx: click.Context) -> Iterator[Keys]:
    # Keys need the database only: no embedder is loaded.
    with Database.from_settings(settings_of(ctx)) as db:
        yield Keys(db)


@click.group("keys")
def keys() -> None:
    """API keys of the HTTP service, each bound to a tenant and scopes."""


@keys.command("create")
@click.option("--tenant", required=True, help="The tenant: 1-32 of a-z, 0-9, _ and -.")
@click.option("--scope", "scopes", multiple=True, type=click.Choice(SCOPES),
              help="read, write (implies read) or admin (implies both); repeatable. "
                   "Default: read and write.")
@click.option("--json", "as_json", is_flag=True, help='Print {"key": ..., "id": ...}.')
@click.pass_context
def keys_create(ctx: click.Context, tenant: str, scopes: tuple[str, ...],
                as_json: bool) -> None:
    """Make a key and print it, once: only its hash is kept."""
    with _keys(ctx) as k:
        key_id, token = k.create(tenant, scopes or ("read", "write"))
    if as_json:
        emit({"key": token, "id": key_id, "tenant": tenant})
    else:
        click.echo(token)
        click.echo(f"key {key_id} for tenant {tenant}: shown once, keep it now", err=True)


@keys.command("list")
@click.option("--tenant", help="Only this tenant's keys.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def keys_list(ctx: click.Context, tenant: str | None, as_json: bool) -> None:
    """The keys: id, tenant, scopes, when made and revoked (never the key itself)."""
    with _keys(ctx) as k:
        found = k.list(tenant)
    if as_json:
        emit([i.to_json() for i in found])
        return
    for i in found:
        state = f"revoked {i.revoked_at:%Y-%m-%d %H:%M}" if i.revoked_at else "live"
        click.echo(f"{i.id}  {i.tenant}  {','.join(i.scopes)}  "
                   f"{i.created_at:%Y-%m-%d %H:%M}  {state}")


@keys.command("revoke")
@click.argument("key_id")
@click.pass_context
def keys_revoke(ctx: click.Context, key_id: str) -> None:
    """Revoke a key by its id: every server refuses it within seconds."""
    with _keys(ctx) as k:
        k.revoke(key_id)
    click.echo(f"revoked {key_id}", err=True)


COMMANDS = [keys]
