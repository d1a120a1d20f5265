"""The ``memory`` command: the root group, with every command module's commands mounted.

Each command module defines its commands and lists them in ``COMMANDS``; this module is the
only one that imports them all, and none of them imports it back.
"""

from __future__ import annotations

import logging

import click

from evals.cli import main as eval_command
from memory.cli import chat, data, database, jobs, turn
from memory.cli.app import CONTEXT_SETTINGS, MemoryGroup
from memory.settings import Settings


@click.group(cls=MemoryGroup, context_settings=CONTEXT_SETTINGS)
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Typed long-term memory of each user, for LLM chat products.

    Record messages after each turn, run the nightly jobs, recall a memory block before
    the next turn. Configuration comes from MEMORY_* environment variables; with no
    MEMORY_DATABASE_URL an embedded PostgreSQL is started under MEMORY_DATA_DIR.
    """
    ctx.obj = {"settings": Settings()}
    # While the database is down the pool logs a warning per reconnection attempt; on a
    # terminal they would bury the one `error:` line that names the cause.
    logging.getLogger("psycopg").setLevel(logging.ERROR)


for command in (*database.COMMANDS, *data.COMMANDS, *turn.COMMANDS, *jobs.COMMANDS,
                *chat.COMMANDS, eval_command):
    cli.add_command(command)


def main() -> None:
    cli(prog_name="memory")
