"""The actions: sign in and out, pin, edit, forget and delete a memory, export and erase a
user. Each is a POST carrying the form's CSRF token (or a Bearer key), needs the write
scope, and goes through the library's API: an edit is an ``update`` op and a forget a
``forget`` op through the write gate, so each lands in the memory's history like any write,
with ``inspector`` as its source."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response, StreamingResponse

from engrammar import _userdata as userdata
from engrammar.errors import Error, InvalidInput
from engrammar.models import Op, OpKind
from engrammar.service.inspector import _session as sessions
from engrammar.service.inspector._pages import chat_row, user_chats
from engrammar.service.inspector._session import Session
from engrammar.service.inspector._web import HEADERS, Inspector, form_of, segment
from engrammar.write._writer import ApplyResult

SOURCE = "inspector"


def register(router: APIRouter, ui: Inspector) -> None:

    async def acting(request: Request, act: Callable[[Session, dict[str, str]], Response]
                     ) -> Response:
        """Sign-in without a live key; 403 without the form's CSRF token or the write
        scope; the library's refusals as pages."""
        session = await run_in_threadpool(ui.session, request)  # the key check may query
        if session is None:
            return ui.sign_in(request)
        try:
            form = await form_of(request)
            if not sessions.csrf_ok(session, form.get("csrf")):
                return ui.problem(request, session, 403, "the form's CSRF token is missing "
                                  "or wrong: reload the page and try again")
            if not session.principal.can("write"):
                return ui.problem(request, session, 403, "this key has no write scope")
            return await run_in_threadpool(act, session, form)
        except Error as exc:
            return ui.failure(request, session, exc)

    @router.get("/login", response_model=None)
    def login_page(request: Request) -> Response:
        session = ui.session(request)
        if session is not None:
            return ui.redirect("/")
        return ui.sign_in(request, status=200)

    @router.post("/login", response_model=None)
    async def login(request: Request) -> Response:
        form = await form_of(request)
        if not sessions.login_csrf_ok(request, form.get("csrf")):
            return ui.sign_in(request, "The form expired: sign in again.", 403)
        token = form.get("key", "").strip()
        principal = await run_in_threadpool(ui.authenticate, token) if token and \
            len(token) <= 400 else None
        if principal is None:
            return ui.sign_in(request, "That is not a live API key.", 401)
        response = ui.redirect("/")
        sessions.set_session(response, request, token, ui.cookie_path)
        return response

    @router.post("/logout", response_model=None)
    async def logout(request: Request) -> Response:
        session = await run_in_threadpool(ui.session, request)
        form = await form_of(request)
        if session is not None and not sessions.csrf_ok(session, form.get("csrf")):
            return ui.problem(request, session, 403, "the form's CSRF token is wrong")
        response = ui.redirect("/login")
        sessions.end_session(response, ui.cookie_path)
        return response

    base = "/users/{user_id}/chats/{chat_id}/memories/{memory_id}"

    def back(user_id: str, chat_id: str, memory_id: int, done: str) -> Response:
        return ui.redirect(f"/users/{segment(user_id)}/chats/{segment(chat_id)}/memories/"
                           f"{memory_id}?done={done}")

    @router.post(base + "/pin", response_model=None)
    async def pin(request: Request, user_id: str, chat_id: str, memory_id: int) -> Response:
        def act(s: Session, form: dict[str, str]) -> Response:
            chat_row(ui, s, user_id, chat_id)
            pinned = form.get("pinned", "1") == "1"
            ui.client.pin(s.principal.user(user_id), chat_id, memory_id, pinned, source=SOURCE)
            return back(user_id, chat_id, memory_id, "pinned" if pinned else "unpinned")
        return await acting(request, act)

    @router.post(base + "/edit", response_model=None)
    async def edit(request: Request, user_id: str, chat_id: str, memory_id: int) -> Response:
        def act(s: Session, form: dict[str, str]) -> Response:
            chat_row(ui, s, user_id, chat_id)
            full = s.principal.user(user_id)
            target = ui.client.get(full, chat_id, memory_id)
            op = Op(op=OpKind.update, target=str(memory_id), content=form.get("content", ""),
                    type=target.type, surface=target.surface,
                    confidence=target.confidence, salience=target.salience,
                    reason="edited in the inspector")
            result = _through_gate(ui, full, chat_id, op, "the edit")
            new_id = result.written[0] if result.written else memory_id
            return back(user_id, chat_id, new_id, "edited")
        return await acting(request, act)

    @router.post(base + "/forget", response_model=None)
    async def forget(request: Request, user_id: str, chat_id: str,
                     memory_id: int) -> Response:
        def act(s: Session, form: dict[str, str]) -> Response:
            chat_row(ui, s, user_id, chat_id)
            op = Op(op=OpKind.forget, target=str(memory_id),
                    reason=form.get("reason") or "forgotten in the inspector")
            _through_gate(ui, s.principal.user(user_id), chat_id, op, "the forget")
            return back(user_id, chat_id, memory_id, "forgotten")
        return await acting(request, act)

    @router.post(base + "/delete", response_model=None)
    async def delete(request: Request, user_id: str, chat_id: str,
                     memory_id: int) -> Response:
        def act(s: Session, form: dict[str, str]) -> Response:
            chat_row(ui, s, user_id, chat_id)
            if form.get("confirm") != str(memory_id):
                raise InvalidInput(f"type the memory's id ({memory_id}) to delete it")
            ui.client.delete(s.principal.user(user_id), chat_id, memory_id)
            return ui.redirect(f"/users/{segment(user_id)}/chats/{segment(chat_id)}"
                               "?done=deleted")
        return await acting(request, act)

    @router.post("/users/{user_id}/export", response_model=None)
    async def export(request: Request, user_id: str) -> Response:
        def act(s: Session, form: dict[str, str]) -> Response:
            full = s.principal.user(user_id)
            user_chats(ui, s, user_id)
            records = ui.client.export_user(full)
            name = "".join(ch if ch.isalnum() else "_" for ch in user_id)[:60]
            return StreamingResponse(
                iter(list(userdata.dump(records))), media_type="application/x-ndjson",
                headers={**HEADERS,
                         "Content-Disposition": f'attachment; filename="{name}.jsonl"'})
        return await acting(request, act)

    @router.post("/users/{user_id}/erase", response_model=None)
    async def erase(request: Request, user_id: str) -> Response:
        def act(s: Session, form: dict[str, str]) -> Response:
            if form.get("confirm") != user_id:
                raise InvalidInput("type the user's id to confirm the erase")
            user_chats(ui, s, user_id)
            ui.client.erase_user(s.principal.user(user_id))
            return ui.redirect("/?done=erased")
        return await acting(request, act)


def _through_gate(ui: Inspector, user_id: str, chat_id: str, op: Op, what: str
                  ) -> ApplyResult:
    """One op applied through the write gate like any other write; a refusal is the
    user's error, with the gate's code and reason."""
    result = ui.client.apply(user_id, chat_id, [op], source=SOURCE)
    decision = result.decisions[0]
    if not decision.accepted:
        raise InvalidInput(f"the gate refused {what} ({decision.code}): {decision.reason}")
    return result
