"""The pages: the tenant's chats, a chat's memories, one memory, ask, the log, the chat's
history and the jobs. Each reads through the library client, scoped by the key's tenant:
a user id in a path is the caller's, turned into the library's by ``Principal.user``, so
another tenant's chat is a chat this key cannot find (404)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from engrammar.client import utcnow
from engrammar.errors import Error, InvalidInput, NotFound
from engrammar.models import MemoryType, Status, Surface
from engrammar.service.inspector import _charts as charts
from engrammar.service.inspector._jobs import failures_by_chat, last_runs, run_rows
from engrammar.service.inspector._session import Session
from engrammar.service.inspector._web import Inspector, parse_at

PAGE = 100  # memories or events a page
LOG_PAGE = 100
TYPES = [t.value for t in MemoryType]
STATUSES = [s.value for s in Status]
SURFACES = [s.value for s in Surface]


def guarded(ui: Inspector, request: Request,
            build: Callable[[Session], Response]) -> Response:
    """The sign-in page without a live key; the library's refusals as pages."""
    session = ui.session(request)
    if session is None:
        return ui.sign_in(request)
    try:
        return build(session)
    except Error as exc:
        return ui.failure(request, session, exc)


def chat_row(ui: Inspector, session: Session, user_id: str, chat_id: str) -> dict[str, Any]:
    """The chat's overview row; NotFound when the tenant has no such chat."""
    full = session.principal.user(user_id)
    rows = [r for r in ui.client.chats(full, limit=10_000) if r["user_id"] == full]
    found = next((r for r in rows if r["chat_id"] == chat_id), None)
    if found is None:
        raise NotFound("chat", chat_id, f"user {user_id}")
    return decorate(found, session)


def user_chats(ui: Inspector, session: Session, user_id: str) -> list[dict[str, Any]]:
    """The user's chats, as overview rows; NotFound when the tenant has no such user."""
    full = session.principal.user(user_id)
    chats = [decorate(r, session) for r in ui.client.chats(full, limit=10_000)
             if r["user_id"] == full]
    if not chats:
        raise NotFound("user", user_id)
    return chats


def decorate(row: dict[str, Any], session: Session) -> dict[str, Any]:
    counts: dict[tuple[str, str], int] = row["counts"]
    by_type: Counter[str] = Counter()
    by_status: Counter[str] = Counter()
    for (type_, status), n in counts.items():
        by_status[status] += n
        if status == Status.active.value:
            by_type[type_] += n
    return {**row, "user": session.principal.external(row["user_id"]),
            "by_type": dict(sorted(by_type.items())),
            "by_status": {s: by_status.get(s, 0) for s in STATUSES},
            "total": sum(by_status.values())}


def register(router: APIRouter, ui: Inspector) -> None:

    @router.get("/", response_model=None)
    def home(request: Request) -> Response:
        def build(s: Session) -> Response:
            prefix = s.principal.user("")
            chats = [decorate(r, s) for r in ui.client.chats(prefix, limit=1000)]
            runs = ui.client.job_runs(50)
            failures = failures_by_chat(last_runs(runs), prefix)
            users: dict[str, list[dict[str, Any]]] = {}
            for chat in chats:
                chat["failures"] = failures.get(f"{chat['user_id']}/{chat['chat_id']}", [])
                users.setdefault(chat["user"], []).append(chat)
            return ui.page(request, "home.html", s, {
                "users": users, "last": run_rows(last_runs(runs), prefix,
                                                 s.principal.can("admin"))})
        return guarded(ui, request, build)

    @router.get("/jobs", response_model=None)
    def jobs(request: Request) -> Response:
        def build(s: Session) -> Response:
            runs = run_rows(ui.client.job_runs(100), s.principal.user(""),
                            s.principal.can("admin"))
            return ui.page(request, "jobs.html", s, {"runs": runs})
        return guarded(ui, request, build)

    @router.get("/users/{user_id}", response_model=None)
    def user(request: Request, user_id: str) -> Response:
        def build(s: Session) -> Response:
            return ui.page(request, "user.html", s, {"user": user_id,
                                                     "chats": user_chats(ui, s, user_id)})
        return guarded(ui, request, build)

    @router.get("/users/{user_id}/chats/{chat_id}", response_model=None)
    def memories(request: Request, user_id: str, chat_id: str, type: str = "",
                 status: str = "", surface: str = "", q: str = "",
                 page: int = 0) -> Response:
        def build(s: Session) -> Response:
            chat = chat_row(ui, s, user_id, chat_id)
            for value, allowed, what in ((type, TYPES, "type"), (status, STATUSES, "status"),
                                         (surface, SURFACES, "surface")):
                if value and value not in allowed:
                    raise InvalidInput(f"{what} {value!r}: one of {', '.join(allowed)}")
            total, found = ui.client.find_memories(
                s.principal.user(user_id), chat_id, types=[type] if type else [],
                statuses=[status] if status else [], surfaces=[surface] if surface else [],
                text=q, limit=PAGE, offset=max(0, page) * PAGE)
            return ui.page(request, "memories.html", s, {
                "chat": chat, "user": user_id, "chat_id": chat_id, "memories": found,
                "total": total, "page": max(0, page), "pages": -(-total // PAGE),
                "filters": {"type": type, "status": status, "surface": surface, "q": q},
                "types": TYPES, "statuses": STATUSES, "surfaces": SURFACES, "tab": "memories"})
        return guarded(ui, request, build)

    @router.get("/users/{user_id}/chats/{chat_id}/memories/{memory_id}", response_model=None)
    def memory(request: Request, user_id: str, chat_id: str, memory_id: int,
               done: str = "") -> Response:
        def build(s: Session) -> Response:
            chat = chat_row(ui, s, user_id, chat_id)
            full = s.principal.user(user_id)
            found = ui.client.get(full, chat_id, memory_id)
            events = ui.client.history(full, chat_id, memory_id)
            events += ui.client.rejections(full, chat_id, memory_id)
            events.sort(key=lambda e: e.id)
            sources = []
            for message_id in found.source_message_ids[:20]:
                page = ui.client.log(full, chat_id, before=message_id + 1, limit=1)
                sources.append(page[0] if page and page[0].id == message_id else None)
            now = utcnow()
            decay = ui.client.settings.decay
            return ui.page(request, "memory.html", s, {
                "chat": chat, "user": user_id, "chat_id": chat_id, "m": found,
                "events": events, "sources": list(zip(found.source_message_ids[:20], sources,
                                                      strict=True)),
                "curve": charts.decay_curve(found, now, decay),
                "stale_on": charts.stale_on(found, decay), "now": now, "done": done,
                "can_delete": callable(getattr(ui.client, "delete", None)),
                "can_pin": callable(getattr(ui.client, "pin", None)), "tab": "memories"})
        return guarded(ui, request, build)

    @router.get("/users/{user_id}/chats/{chat_id}/ask", response_model=None)
    def ask(request: Request, user_id: str, chat_id: str, q: str = "", at: str = "",
            budget: str = "") -> Response:
        def build(s: Session) -> Response:
            chat = chat_row(ui, s, user_id, chat_id)
            full = s.principal.user(user_id)
            block = None
            if q.strip():
                tokens = int(budget) if budget.strip().isdigit() else None
                # record=False: looking changes nothing (no cooldown, no audit row).
                block = ui.client.recall(full, chat_id, q, now=parse_at(at),
                                         budget_tokens=tokens, record=False)
            return ui.page(request, "ask.html", s, {
                "chat": chat, "user": user_id, "chat_id": chat_id, "q": q, "at": at,
                "budget": budget, "block": block,
                "prompts": ui.client.prompts(full, chat_id, 10),
                "bars": charts.bars, "gauge": charts.gauge, "tab": "ask"})
        return guarded(ui, request, build)

    @router.get("/users/{user_id}/chats/{chat_id}/ask/compiled", response_model=None)
    def compiled(request: Request, user_id: str, chat_id: str, q: str,
                 at: str = "") -> Response:
        """The whole prompt of a turn: loaded by the ask page after its block (htmx), so
        the block shows while the window is read; a page of its own without htmx."""
        def build(s: Session) -> Response:
            chat = chat_row(ui, s, user_id, chat_id)
            result = ui.client.compile(s.principal.user(user_id), chat_id, q,
                                       now=parse_at(at), record=False)
            template = "_compiled.html" if request.headers.get("hx-request") else \
                "compiled.html"
            return ui.page(request, template, s, {
                "chat": chat, "user": user_id, "chat_id": chat_id, "compiled": result,
                "gauge": charts.gauge, "tab": "ask"})
        return guarded(ui, request, build)

    @router.get("/users/{user_id}/chats/{chat_id}/log", response_model=None)
    def log(request: Request, user_id: str, chat_id: str, before: int | None = None,
            mark: int | None = None) -> Response:
        def build(s: Session) -> Response:
            chat = chat_row(ui, s, user_id, chat_id)
            full = s.principal.user(user_id)
            messages = ui.client.log(full, chat_id, before=before, limit=LOG_PAGE)
            resting = ui.client.resting_on(full, chat_id, messages[0].id,
                                           messages[-1].id) if messages else {}
            return ui.page(request, "log.html", s, {
                "chat": chat, "user": user_id, "chat_id": chat_id, "messages": messages,
                "resting": resting, "mark": mark, "before": before,
                "older": messages[0].id if len(messages) == LOG_PAGE else None, "tab": "log"})
        return guarded(ui, request, build)

    @router.get("/users/{user_id}/chats/{chat_id}/history", response_model=None)
    def history(request: Request, user_id: str, chat_id: str, before: int | None = None,
                rejected: int = 0) -> Response:
        def build(s: Session) -> Response:
            chat = chat_row(ui, s, user_id, chat_id)
            events = ui.client.events(s.principal.user(user_id), chat_id, before=before,
                                      limit=PAGE, rejected_only=bool(rejected))
            return ui.page(request, "history.html", s, {
                "chat": chat, "user": user_id, "chat_id": chat_id, "events": events,
                "rejected": bool(rejected), "tab": "history",
                "older": events[-1].id if len(events) == PAGE else None})
        return guarded(ui, request, build)
