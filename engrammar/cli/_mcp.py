"""`engram mcp`: the memory tools over MCP, for agents (``service._mcp``).

Over stdio (the default) the server is a local process its client spawned: whoever can
start it can read the database anyway, so it serves every user id the model passes, or,
with ``--user``, that one user only (calls naming another are refused). Over streamable
HTTP the same tools sit behind the service's API keys (``engram serve`` mounts them at
/mcp).
"""

from __future__ import annotations

import click

from engrammar.cli._app import opened


@click.command("mcp")
@click.option("--user", "user_id",
              help="Serve this user only (default: any user id the model names).")
@click.pass_context
def mcp(ctx: click.Context, user_id: str | None) -> None:
    """Serve the memory tools (remember, recall, list_memories, forget, memory_history) to
    an MCP client over stdio.

    Configure your MCP client to run `engram mcp` with the same MEMORY_* environment as
    your application; each tool takes the user and chat ids.
    """
    # Imported here: the SDK is needed by this command only.
    from engrammar.service._mcp import build_mcp, open_access

    access = open_access(user_id)
    with opened(ctx) as client:
        build_mcp(client, lambda _ctx: access).run("stdio")


COMMANDS = (mcp,)
