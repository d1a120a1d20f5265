"""`engram chat`: talk to the configured model, with memory, one line a turn."""

from __future__ import annotations

import sys

import click

from engrammar.chat import Chat, Turn
from engrammar.cli._app import emit, opened
from engrammar.errors import LLMError
from engrammar.recall._window import span

QUIT = {"/quit", "/exit", "/q"}


def explain(turn: Turn) -> None:
    """What the turn's prompt held: the layers' tokens, each memory and summary, the window's
    coverage and what was left out."""
    c = turn.compiled
    click.echo(f"[prompt] {c.tokens}/{c.budget} tokens: "
               + ", ".join(f"{k} {v}" for k, v in c.layers.items()))
    memories, summaries = turn.memories, turn.summaries
    click.echo(f"[memories] {len(memories)}" + ("" if memories else " (none)"))
    for m in memories:
        sources = f"  (messages {', '.join(map(str, m.message_ids))})" if m.message_ids else ""
        flags = " pinned" if m.pinned else ""
        click.echo(f"  {m.section:9} #{m.memory_id}{flags} {m.score:.2f} {m.content}{sources}")
    click.echo(f"[summaries] {len(summaries)}" + ("" if summaries else " (none)"))
    for s in summaries:
        click.echo(f"  {' '.join(s.notes)}: {s.content}")
    shown = [cv for cv in c.coverage if cv.included]
    if c.coverage:
        raw = [span(cv.first_pair, cv.last_pair) for cv in shown if cv.kind == "raw"]
        blocks = [f"{cv.first_pair}-{cv.last_pair}" for cv in shown if cv.kind == "summary"]
        click.echo(f"[window] {len(c.coverage)} earlier pairs' units, {len(shown)} in the "
                   f"prompt: raw {', '.join(raw) or 'none'}, block summaries "
                   f"{blocks or 'none'}")
    for part in [*c.dropped, *c.truncated]:
        click.echo(f"[left out] {part.layer} {part.ref}: {part.reason}")


@click.command()
@click.option("--user", "user_id", required=True, help="User id.")
@click.option("--chat", "chat_id", required=True, help="Chat id.")
@click.option("--system", help="The system prompt (default: a generic one).")
@click.option("--budget", type=int, help="Token budget of each turn's prompt.")
@click.option("--explain", "explain_", is_flag=True,
              help="Before each reply, show the memories and summaries the turn used.")
@click.option("--json", "as_json", is_flag=True, help="Print each turn as one JSON object.")
@click.pass_context
def chat(ctx: click.Context, user_id: str, chat_id: str, system: str | None,
         budget: int | None, explain_: bool, as_json: bool) -> None:
    """Chat with the configured model (MEMORY_LLM=openai, MEMORY_LLM_BASE_URL), one line a
    turn, remembered: each turn compiles the prompt from memory, records both messages and
    observes the reply. End with /quit or end of input."""
    interactive = sys.stdin.isatty()
    with opened(ctx) as client:
        session = Chat(client, user_id, chat_id, system=system, budget_tokens=budget)
        if interactive:
            click.echo(f"chatting as {user_id}/{chat_id} with {session.llm.model}; "
                       "/quit to end", err=True)
        while True:
            if interactive:
                click.echo("you> ", nl=False, err=True)
            line = sys.stdin.readline()
            if not line or line.strip() in QUIT:
                break
            if not line.strip():
                continue
            try:
                turn = session.turn(line.rstrip("\n"))
            except LLMError as exc:  # the model failed this turn: say so, keep chatting
                click.echo(f"error: {exc}", err=True)
                continue
            if as_json:
                emit(turn.to_json())
                continue
            if explain_:
                explain(turn)
            click.echo(f"assistant> {turn.reply}")
            for d in turn.observed.decisions:
                if d.accepted:
                    click.echo(f"[observed] {d.proposed.content}")


COMMANDS = (chat,)
