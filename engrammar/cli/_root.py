"""The ``engram`` command: the root group, with every command module's commands mounted.

Each command module defines its commands and lists them in ``COMMANDS``; this module is the
only one that imports them all, and none of them imports it back.
"""

from __future__ import annotations

import logging

import click

from engrammar import __version__
from engrammar.cli import _chat as chat
from engrammar.cli import _data as data
from engrammar.cli import _database as database
from engrammar.cli import _demo as demo
from engrammar.cli import _jobs as jobs
from engrammar.cli import _keys as keys
from engrammar.cli import _mcp as mcp
from engrammar.cli import _serve as serve
from engrammar.cli import _turn as turn
from engrammar.cli._app import CONTEXT_SETTINGS, MemoryGroup
from engrammar.evals._cli import main as eval_command
from engrammar.settings import Settings


@click.group(cls=MemoryGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, "-V", "--version", prog_name="engram",
                      message="%(prog)s (engrammar) %(version)s")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """engram: typed long-term memory of each user, for LLM chat products.

    Record messages after each turn, run the nightly jobs, recall a memory block before
    the next turn. Configuration comes from MEMORY_* environment variables; with no
    MEMORY_DATABASE_URL an embedded PostgreSQL is started under MEMORY_DATA_DIR.
    """
    ctx.obj = {"settings": Settings()}
    # While the database is down the pool logs a warning per reconnection attempt; on a
    # terminal they would bury the one `error:` line that names the cause.
    logging.getLogger("psycopg").setLevel(logging.ERROR)


for command in (*database.COMMANDS, *data.COMMANDS, *turn.COMMANDS, *jobs.COMMANDS,
                *chat.COMMANDS, *demo.COMMANDS, *keys.COMMANDS, *serve.COMMANDS,
                *mcp.COMMANDS, eval_command):
    cli.add_command(command)


def main() -> None:
    cli(prog_name="engram")
