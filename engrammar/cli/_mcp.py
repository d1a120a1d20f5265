"""`engram mcp`: the memory tools over MCP, for agents (``service._mcp``).

Over stdio (the default) the server is a local process its client spawned: whoever can
start it can read the database anyway, so it serves every user id the model passes, or,
with ``--user``, that one user only (calls naming another are refused). Over streamable
HTTP (``--http``) the tools sit behind the service's API keys at ``/mcp``, each key's user
ids inside its tenant, exactly as ``engram serve`` mounts them beside the REST API.
"""

from __future__ import annotations

import click

from engrammar.cli._app import opened, settings_of


@click.command("mcp")
@click.option("--user", "user_id",
              help="stdio: serve this user only (default: any user id the model names).")
@click.option("--http", "over_http", is_flag=True,
              help="Serve streamable HTTP at /mcp, behind the API keys, not stdio.")
@click.option("--host", default="127.0.0.1", show_default=True, help="--http: address.")
@click.option("--port", default=8001, show_default=True, type=click.IntRange(0, 65535),
              help="--http: port.")
@click.option("--local", is_flag=True,
              help="--http: allow starting with no API key, on 127.0.0.1 only.")
@click.pass_context
def mcp(ctx: click.Context, user_id: str | None, over_http: bool, host: str, port: int,
        local: bool) -> None:
    """Serve the memory tools (remember, recall, list_memories, forget, memory_history) to
    MCP clients: over stdio, or over streamable HTTP with --http.

    For a desktop agent, configure it to run `engram mcp` with the same MEMORY_*
    environment as your application; each tool takes the user and chat ids. Over HTTP
    every request needs `Authorization: Bearer <key>` (engram keys create); `engram serve`
    serves the same endpoint at /mcp beside the REST API.
    """
    # Imported here: the SDK and the service are needed by this command only.
    from engrammar.service._mcp import build_mcp, open_access

    if not over_http:
        access = open_access(user_id)
        with opened(ctx) as client:
            build_mcp(client, lambda _ctx: access).run("stdio")
        return
    if user_id is not None:
        raise click.UsageError("--user is for stdio: over HTTP the key names the tenant")
    import uvicorn

    from engrammar.service._keys import Keys
    from engrammar.service._mcp_http import mcp_app
    from engrammar.service._server import check_start

    settings = settings_of(ctx)
    live = check_start(settings, host, local=local)
    click.echo(f"engram mcp: http://{host}:{port}/mcp ({live} live key"
               f"{'' if live == 1 else 's'})", err=True)
    with opened(ctx) as client:
        uvicorn.run(mcp_app(client, Keys(client.db), max_body=settings.service_max_body),
                    host=host, port=port, log_level="warning", access_log=False)


COMMANDS = (mcp,)
