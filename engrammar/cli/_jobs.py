"""`engram jobs ...`: run one job once (for cron), the whole night, list the jobs, or run
the scheduler. The job names, schedules and help lines come from ``scheduler._registry``."""

from __future__ import annotations

import json
from typing import Any

import click

from engrammar._table import table
from engrammar.cli._app import emit, opened, parse_now, progress_bar, settings_of
from engrammar.models import Scope
from engrammar.nightly import _batch as batch
from engrammar.scheduler import _extract as extract
from engrammar.scheduler import _scheduler as scheduler
from engrammar.scheduler._registry import JOBS, NIGHTLY

NIGHTLY_HELP = f"The night's jobs in order: {', '.join(NIGHTLY)}."


def _run_help() -> str:
    """The run command's help, with one line per job from the registry."""
    width = max(len(name) for name in [*JOBS, "nightly"])
    lines = [f"{name:{width}}  {job.help}" for name, job in JOBS.items()]
    lines.append(f"{'nightly':{width}}  {NIGHTLY_HELP}")
    return ("Run one job once (or the whole night, in order) and print its report.\n\n"
            "For cron: `0 2 * * * engram jobs run nightly --json >> /var/log/engram.jsonl`."
            "\n\n\b\n" + "\n".join(lines))


@click.group()
def jobs() -> None:
    """Batch jobs: run one now (for cron), list them, or schedule them."""


@jobs.command("run", help=_run_help())
@click.argument("name", type=click.Choice([*JOBS, "nightly"]))
@click.option("--user", "user_id", help="extract: only this user's chat (with --chat).")
@click.option("--chat", "chat_id", help="extract: only this chat (with --user).")
@click.option("--now", "now_", help="The job's clock, ISO (default: now).")
@click.option("--dry-run", is_flag=True, help="extract: print proposed ops and gate "
                                              "decisions; write nothing.")
@click.option("--batch", "batch_mode", type=click.Choice(["submit", "collect"]),
              help="extract through the OpenAI Batch API: submit the chats with new messages "
                   "as a batch, or collect finished batches and apply them (without it, "
                   "MEMORY_LLM_BATCH=1 does both, collect first).")
@click.option("--sync-failed", is_flag=True, help="extract --batch collect: extract the chats "
                                                  "of failed and expired requests at once, "
                                                  "synchronously.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def jobs_run(ctx: click.Context, name: str, user_id: str | None, chat_id: str | None,
             now_: str | None, dry_run: bool, batch_mode: str | None, sync_failed: bool,
             as_json: bool) -> None:
    if bool(user_id) != bool(chat_id):
        raise click.UsageError("--user and --chat go together")
    if (dry_run or user_id or batch_mode) and name != "extract":
        raise click.UsageError("--dry-run, --user, --chat and --batch apply to extract only")
    if batch_mode and (dry_run or user_id):
        raise click.UsageError("--batch takes neither --dry-run nor --user/--chat")
    if sync_failed and batch_mode != "collect":
        raise click.UsageError("--sync-failed goes with --batch collect")
    scope = Scope(user_id=user_id, chat_id=chat_id) if user_id and chat_id else None
    now = parse_now(now_)
    with opened(ctx) as client:
        batched = batch_mode is not None or (
            client.settings.llm_batch and name == "extract" and not dry_run and scope is None)
        if batched:
            reports = [extract.batch(client, now, collect=batch_mode in (None, "collect"),
                                     submit=batch_mode in (None, "submit"),
                                     sync_failed=sync_failed).to_json()]
        elif name == "extract":
            worker = extract.worker(client)
            with progress_bar("extracting", worker.pending(now)) as bar:
                report = worker.run(now, chat=scope, dry_run=dry_run, progress=bar)
            reports = [report.to_json(verbose=dry_run)]
            if dry_run and not as_json:
                _print_decisions(report)
        elif name == "nightly":
            reports = scheduler.run_nightly(client, now)
        else:
            reports = [scheduler.run_job(client, name, now)]
    if as_json:
        # One JSON line per run, so cron can append each night to a .jsonl file.
        for r in reports:
            click.echo(json.dumps(r, default=str, ensure_ascii=False))
    else:
        for r in reports:
            click.echo(_summary(r))
    failed = [r for r in reports if r.get("failed") or r.get("errors")]
    for r in failed:
        for err in r.get("errors", []) or [{"chat": "-", "error": r.get("error", "")}]:
            click.echo(f"error: {r['job']}: chat {err.get('chat', '-')}: {err['error']}",
                       err=True)
    if failed:
        ctx.exit(2)


@jobs.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def jobs_list(ctx: click.Context, as_json: bool) -> None:
    """List the jobs: schedule, place in the nightly order, what each does.

    The schedule is the registry's default unless MEMORY_SCHEDULE__<JOB> overrides it."""
    settings = settings_of(ctx).schedule
    scheduler.triggers(settings)  # a bad job name, expression or time zone stops here
    crons = scheduler.schedules(settings)
    rows = [{"name": name, "schedule": crons[name], "timezone": settings.timezone,
             "nightly": NIGHTLY.index(name) + 1 if name in NIGHTLY else None,
             "help": job.help} for name, job in JOBS.items()]
    if as_json:
        emit(rows)
        return
    click.echo(table([(r["name"], r["schedule"], r["nightly"] or "-", r["help"]) for r in rows],
                     ["job", f"schedule ({settings.timezone})", "nightly", "help"]))


@jobs.command("status")
@click.option("--now", "now_", help="The clock ages are measured by, ISO (default: now).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def jobs_status(ctx: click.Context, now_: str | None, as_json: bool) -> None:
    """The extraction batches not collected yet (OpenAI Batch API): id, status, requests,
    age in hours."""
    now = parse_now(now_)
    with opened(ctx) as client:
        rows = batch.pending(client.db, now)
    if as_json:
        emit(rows)
        return
    if not rows:
        click.echo("no pending batches")
        return
    click.echo(table([(r["id"], r["batch_id"] or "-", r["status"], r["requests"],
                       f"{r['age_hours']:.1f}h") for r in rows],
                     ["batch", "provider id", "status", "requests", "age"]))


@jobs.command("schedule")
@click.pass_context
def jobs_schedule(ctx: click.Context) -> None:
    """Run the scheduler in the foreground: each job at its cron time from settings
    (MEMORY_SCHEDULE__EXTRACT="0 2 * * *", ...), one report line per run."""
    settings = settings_of(ctx)
    with opened(ctx) as client:
        sched = scheduler.build_scheduler(
            client, settings.schedule,
            on_report=lambda r: click.echo(json.dumps(r, default=str), nl=True))
        for job in sched.get_jobs():
            click.echo(f"{job.id:10} {job.trigger}", err=True)
        try:
            sched.start()
        except (KeyboardInterrupt, SystemExit):
            click.echo("scheduler stopped", err=True)


def _print_decisions(report: Any) -> None:
    for detail in report.details:
        click.echo(f"{detail.scope} ({detail.messages} messages, {detail.extractor})")
        for d in detail.result.decisions:
            target = f" -> memory {d.target_id}" if d.target_id else ""
            click.echo(f"  {d.proposed.op.value:10} {d.verdict.value:8} {d.code:22} "
                       f"{d.proposed.content[:50]!r}{target}")


def _unread_summary(report: dict[str, Any]) -> str:
    """The chats whose messages the offline extractor could not read, one line each."""
    return "".join(
        f"\n  skipped {u['messages']} messages in {', '.join(u['languages'])} in chat "
        f"{u['chat']}: the offline extractor reads English only"
        for u in report.get("unreadable", []))


def _summary(report: dict[str, Any]) -> str:
    job = report["job"]
    if report.get("failed"):
        return f"{job}: FAILED: {report['error']}"
    if job == "extract":
        rejected = ", ".join(f"{k} {v}" for k, v in report["rejected"].items()) or "none"
        return (f"extract: {report['chats']} chats, {report['messages']} messages, "
                f"{report['proposed']} ops proposed, {report['applied']} applied, "
                f"rejected: {rejected}, errors: {len(report['errors'])}"
                + (" (dry run: nothing written)" if report.get("dry_run") else "")
                + _batch_summary(report) + _unread_summary(report))
    if job == "lifecycle":
        moved = ", ".join(f"{k} {v}" for k, v in report["moved"].items() if v) or "nothing"
        return (f"lifecycle: {report['transitions']} transitions ({moved}); "
                f"{report['recalls_folded']} recall notes folded")
    if job == "summaries":
        w = report["written"]
        return (f"summaries ({report['summarizer']}): {w['day']} days, {w['week']} weeks, "
                f"{w['month']} months written, errors: {len(report['errors'])}")
    if job == "blocks":
        return (f"blocks: {report['created']} created, {report['merged']} merges planned, "
                f"{report['prepared']} summarised, {report['activated']} activated, "
                f"errors: {len(report['errors'])}")
    if report.get("skipped"):
        return f"{job}: skipped: {report['skipped']}"
    if job == "reflect":
        return (f"reflect: {report['chats']} chats, {report['proposed']} proposed, "
                f"{report['applied']} applied, errors: {len(report['errors'])}")
    # A job with no line of its own: its scalar fields, and how many errors.
    fields = [f"{k} {v}" for k, v in report.items()
              if k not in ("job", "now", "errors") and isinstance(v, int | float | str)]
    if "errors" in report:
        fields.append(f"errors: {len(report['errors'])}")
    return f"{job}: " + ", ".join(fields)


def _batch_summary(report: dict[str, Any]) -> str:
    out = ""
    if "collected" in report:
        c = report["collected"]
        out += (f"; collected {c['batches']} batches ({c['in_flight']} in flight), "
                f"{len(c['discarded'])} chats discarded, {len(c['requeued'])} requeued")
    if "synced" in report:
        out += f", {report['synced']['chats']} extracted at once"
    if "submitted" in report:
        s = report["submitted"]
        out += (f"; submitted {s['chats']} chats ({s['requests']} requests) as batch "
                f"{s['batch_id'] or '-'}" if s["chats"] else "; nothing to submit")
    return out


COMMANDS = (jobs,)
