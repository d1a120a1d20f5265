"""The per-turn commands: `engram recall`, `engram context`, `engram observe`."""

from __future__ import annotations

import sys

import click

from engrammar._table import table
from engrammar.cli._app import emit, opened, parse_now


@click.command()
@click.option("--user", "user_id", required=True, help="User id.")
@click.option("--chat", "chat_id", required=True, help="Chat id.")
@click.option("--budget", type=int, help="Token budget of the block (default from settings).")
@click.option("--now", "now_", help="The clock, ISO (default: now).")
@click.option("--no-record", is_flag=True, help="Do not note what was surfaced (no cooldown).")
@click.option("--json", "as_json", is_flag=True,
              help="Print each memory's id, section and score components.")
@click.argument("query")
@click.pass_context
def recall(ctx: click.Context, user_id: str, chat_id: str, budget: int | None,
           now_: str | None, no_record: bool, as_json: bool, query: str) -> None:
    """Print the memory block for the next turn, given the user's message QUERY."""
    with opened(ctx) as client:
        block = client.recall(user_id, chat_id, query, now=parse_now(now_), budget_tokens=budget,
                              record=not no_record)
    if as_json:
        emit(block.to_json())
    elif block.text:
        click.echo(block.text)
    else:
        click.echo(f"(no memories to surface for {user_id}/{chat_id})", err=True)


@click.command()
@click.option("--user", "user_id", required=True, help="User id.")
@click.option("--chat", "chat_id", required=True, help="Chat id.")
@click.option("--budget", type=int, help="Token budget of the whole prompt.")
@click.option("--system", help="The system prompt (default: a generic one).")
@click.option("--now", "now_", help="The clock, ISO (default: now).")
@click.option("--explain", is_flag=True,
              help="Show layers, coverage of every pair and what was dropped, not the prompt.")
@click.option("--record", is_flag=True, help="Note what was surfaced and audit the prompt.")
@click.option("--json", "as_json", is_flag=True, help="Print the compiled turn as JSON.")
@click.argument("message")
@click.pass_context
def context(ctx: click.Context, user_id: str, chat_id: str, budget: int | None,
            system: str | None, now_: str | None, explain: bool, record: bool,
            as_json: bool, message: str) -> None:
    """Compile the whole prompt for a turn whose user message is MESSAGE."""
    with opened(ctx) as client:
        compiled = client.compile(user_id, chat_id, message, now=parse_now(now_),
                                  budget_tokens=budget, system=system, record=record)
    if as_json:
        emit(compiled.to_json())
        return
    if not explain:
        for m in compiled.messages:
            click.echo(f"--- {m['role']}\n{m['content']}")
        click.echo(f"--- {compiled.tokens}/{compiled.budget} tokens", err=True)
        return
    click.echo(f"{compiled.tokens}/{compiled.budget} tokens: " + ", ".join(
        f"{k} {v}" for k, v in compiled.layers.items()))
    rows = [(c.kind, f"{c.first_pair}-{c.last_pair}" if c.first_pair != c.last_pair
             else str(c.first_pair), c.block_no or "", "yes" if c.included else "no")
            for c in compiled.coverage]
    click.echo("\ncoverage of the chat's pairs (each exactly once):")
    click.echo(table(rows, ["kind", "pairs", "block", "in prompt"]) if rows else "(no pairs)")
    for title, parts in (("dropped", compiled.dropped), ("truncated", compiled.truncated)):
        if parts:
            click.echo(f"\n{title}:")
            for p in parts:
                click.echo(f"  {p.layer:10} {p.ref:30} {p.reason}")


@click.command()
@click.option("--user", "user_id", required=True, help="User id.")
@click.option("--chat", "chat_id", required=True, help="Chat id.")
@click.option("--now", "now_", help="The clock, ISO (default: now).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.argument("text", required=False)
@click.pass_context
def observe(ctx: click.Context, user_id: str, chat_id: str, now_: str | None,
            as_json: bool, text: str | None) -> None:
    """Lift "Decision:", "Constraint:" and "Open:" lines of an assistant reply (TEXT, or
    standard input) into memories now, through the gate."""
    body = text if text is not None else sys.stdin.read()
    with opened(ctx) as client:
        result = client.observe(user_id, chat_id, body, now=parse_now(now_))
    if as_json:
        emit(result.to_json())
        return
    for d in result.decisions:
        click.echo(f"{d.verdict.value:8} {d.code:12} {d.proposed.content}")
    if not result.decisions:
        click.echo("no Decision:, Constraint: or Open: lines")


COMMANDS = (recall, context, observe)
