"""The eval command: ``python -m engrammar.evals`` (``make eval``), mountable as ``engram eval``."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from engrammar.client import Client
from engrammar.errors import Error
from engrammar.evals._fixtures import FIXTURES_DIR, FixtureError, load_all
from engrammar.evals._metrics import FixtureResult
from engrammar.evals._report import OUT_DIR, terminal, write
from engrammar.evals._runner import run_fixtures
from engrammar.settings import Settings

EVAL_DATABASE = "memory_eval"


@click.command("eval", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--llm", type=click.Choice(["none", "openai"]), default="none", show_default=True,
              help="The extractor to measure: the offline parser, or an OpenAI-compatible "
                   "model from MEMORY_LLM_BASE_URL / _API_KEY / _MODEL.")
@click.option("--fixture", "names", multiple=True, metavar="NAME",
              help="Run only this fixture (repeatable).")
@click.option("-v", "--verbose", is_flag=True,
              help="Show each op, each gate decision and each block.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--database", default=EVAL_DATABASE, show_default=True,
              help="The database the fixtures run in (embedded server unless "
                   "MEMORY_DATABASE_URL is set).")
@click.option("--fixtures-dir", type=click.Path(file_okay=False, path_type=Path),
              default=FIXTURES_DIR, show_default=True, help="Where the fixtures are.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=OUT_DIR, show_default=True, help="Where report.json and report.md go.")
@click.option("--keep", is_flag=True, help="Keep the fixtures' scopes instead of erasing them.")
@click.pass_context
def main(ctx: click.Context, llm: str, names: Sequence[str], verbose: bool, as_json: bool,
         database: str, fixtures_dir: Path, out_dir: Path, keep: bool) -> None:
    """Run the conversation fixtures through the whole pipeline and measure it.

    Three phases per fixture: extraction and retrieval (precision, recall, hit@3), duplicate
    detection (each night replayed over its own memories) and cross-chat isolation. Exits
    non-zero when any threshold of evals/metrics.py is missed.
    """
    try:
        fixtures = load_all(fixtures_dir, list(names) or None)
    except FixtureError as exc:
        raise click.UsageError(str(exc)) from exc
    base = ctx.obj.get("settings") if isinstance(ctx.obj, dict) else None
    settings = (base if isinstance(base, Settings) else Settings()).model_copy(
        update={"llm": llm})
    log = (lambda line: click.echo(line, err=as_json)) if verbose else None

    def progress(result: FixtureResult) -> None:
        if not verbose:
            mark = "pass" if result.passed else "FAIL"
            click.echo(f"  {result.name:40} {mark} ({result.seconds:.1f}s)", err=True)

    try:
        with Client.open(settings, database=database) as client:
            click.echo(f"{len(fixtures)} fixtures, extractor {client.extractor.name}, "
                       f"database {database}", err=True)
            report = run_fixtures(client, fixtures, log=log, keep=keep, database=database,
                                  progress=progress)
    except Error as exc:
        click.echo(f"error: {exc}", err=True)
        ctx.exit(1)
    paths = write(report, out_dir)
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        click.echo("\n" + terminal(report))
        click.echo(f"report: {paths['json']}, {paths['markdown']}")
    ctx.exit(0 if report.ok else 1)


def cli_main(argv: Sequence[str] | None = None) -> int:
    """Run the command with ``argv``; return its exit code instead of exiting."""
    try:
        main.main(args=list(argv) if argv is not None else sys.argv[1:],
                  prog_name="python -m engrammar.evals", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    return 0
