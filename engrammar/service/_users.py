"""Routes of a user as a whole (export, import, erase), of the jobs (admin keys), and the
unauthenticated probes (health, ready)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse, StreamingResponse

from engrammar import _userdata as userdata
from engrammar import store
from engrammar.errors import InvalidInput, NotFound
from engrammar.runtime._database import migrations
from engrammar.scheduler import _scheduler as scheduler
from engrammar.service import _schemas as s
from engrammar.service._auth import Admin, Memory, Reader, Writer
from engrammar.service._keys import Principal
from engrammar.service._problems import MEDIA, problem, responses

USER = "/v1/users/{user_id}"
users = APIRouter(tags=["users"], responses=responses(400, 401, 403, 404, 413, 422, 503))
jobs = APIRouter(tags=["jobs"], responses=responses(400, 401, 403, 404, 413, 422, 503))
probes = APIRouter(tags=["probes"])
NDJSON = "application/x-ndjson"


async def known(memory: Memory, user: str, user_id: str) -> None:
    if not await memory.has_user(user):
        raise NotFound("user", user_id)


@users.get(USER + "/export", response_class=StreamingResponse,
           summary="Everything of the user, as JSON lines",
           responses={200: {"content": {NDJSON: {"schema": {"type": "string"}}},
                            "description": "A header line, then one line per row"}})
async def export(user_id: s.UserId, who: Reader, memory: Memory) -> StreamingResponse:
    user = who.user(user_id)
    await known(memory, user, user_id)
    records = await memory.export_user(user)

    def lines() -> Iterator[str]:
        # Every value that is the library's id of the user (the rows' user_id, and the
        # memory snapshots inside the history's rows) leaves as the caller's id.
        for record in records:
            yield from userdata.dump([_renamed(record, user, user_id)])

    return StreamingResponse(lines(), media_type=NDJSON)


def _renamed(value: Any, old: str, new: str) -> Any:
    if isinstance(value, dict):
        return {k: _renamed(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed(v, old, new) for v in value]
    return new if value == old else value


def _internal(data: bytes, user: str) -> bytes:
    """An import file with every line's user id made the path's user (a file may hold no
    other user's data: the path, not the file, says whose it is)."""
    out: list[str] = []
    for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise InvalidInput(f"line {number}: not JSON: {exc}") from None
        if not isinstance(record, dict):
            raise InvalidInput(f"line {number}: each line must be a JSON object")
        if isinstance(record.get("row"), dict):
            record["row"] = {**record["row"], "user_id": user}
        else:
            record["user_id"] = user
        out.append(json.dumps(record, ensure_ascii=False))
    return "\n".join(out).encode("utf-8", "surrogatepass")


@users.post(USER + "/import", response_model=s.Imported,
            summary="Import an export, or a file of ops (through the gate), all or nothing",
            openapi_extra={"requestBody": {"required": True, "description": "JSON lines",
                                           "content": {NDJSON: {"schema": {"type": "string"}}}}})
async def import_file(user_id: s.UserId, who: Writer, memory: Memory, request: Request,
                      dry_run: Annotated[bool, Query()] = False) -> s.Imported:
    data = _internal(await request.body(), who.user(user_id))
    result = await memory.import_file(data, name="import", source="api", dry_run=dry_run)
    if isinstance(result, int):
        return s.Imported(rows=result, dry_run=dry_run)
    return s.Imported(chats={key.split("/", 1)[1]: s.Applied.of(r)
                             for key, r in result.items()}, dry_run=dry_run)


@users.delete(USER, response_model=s.Erased, summary="Erase every row of the user")
async def erase(user_id: s.UserId, who: Writer, memory: Memory) -> s.Erased:
    user = who.user(user_id)
    await known(memory, user, user_id)
    return s.Erased(deleted=await memory.erase_user(user))


# -- jobs -------------------------------------------------------------------------------------

@jobs.get("/v1/jobs", response_model=list[s.Job], summary="The jobs and their last runs")
async def list_jobs(who: Admin, memory: Memory) -> list[s.Job]:
    client = memory.sync
    crons = scheduler.schedules(client.settings.schedule)

    def runs() -> list[dict[str, Any]]:
        with client.db.connection() as conn:
            return store.list_job_runs(conn)

    last: dict[str, s.JobRun] = {}
    for r in await memory.run(runs):
        last[r["job"]] = s.JobRun(id=r["id"], started_at=r["started_at"],
                                  finished_at=r["finished_at"], status=r["status"])
    return [s.Job(name=name, schedule=crons[name], help=job.help, nightly=job.nightly,
                  last=last.get(name)) for name, job in scheduler.JOBS.items()]


@jobs.post("/v1/jobs/{name}/run", response_model=s.Ran,
           summary="Run a job now, over the whole store")
async def run_job(name: Annotated[str, Path(max_length=100)], who: Admin,
                  memory: Memory) -> s.Ran:
    if name not in scheduler.JOBS:
        raise NotFound("job", name)
    started = time.perf_counter()
    # The report names chats of every tenant: it stays in job_runs, not in the answer.
    await memory.run(lambda: scheduler.run_job(memory.sync, name))
    return s.Ran(job=name, seconds=round(time.perf_counter() - started, 3))


# -- probes -----------------------------------------------------------------------------------

@probes.get("/health", response_model=s.Health, summary="Alive")
async def health() -> s.Health:
    return s.Health(status="ok")


@probes.get("/ready", response_model=s.Ready, summary="Database reachable, migrations current",
            responses={503: {"description": "Not ready", "content": {MEDIA: {}}}})
async def ready(request: Request, memory: Memory) -> Any:
    wanted = {name for name, _ in migrations()}

    def applied() -> set[str]:
        with memory.sync.db.connection(timeout=1.0) as conn:
            return store.applied_migrations(conn)

    try:
        done = await memory.run(applied)
    except Exception as exc:  # any failure to read is "not ready", said plainly
        return problem(request, 503, "DatabaseError", f"database unreachable: {exc}")
    missing = sorted(wanted - done)
    if missing:
        return problem(request, 503, "NotReady", f"migrations not applied: {missing}")
    return JSONResponse(s.Ready(status="ready", migrations=len(done)).model_dump())


__all__ = ["Principal", "jobs", "probes", "users"]
