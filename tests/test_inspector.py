"""The inspector in a real browser: Debian's Chromium driven by Playwright, against the
service's app (create_app, the inspector at /ui) on uvicorn on 127.0.0.1, with API keys
from the service's key table, over the embedded PostgreSQL.

The pages' screenshots (docs/screenshots/) are made here, by the test that visits them."""

from __future__ import annotations

import re
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from datetime import time as time_of_day
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from engrammar import Client, Database, LocalEmbedder, Settings, store
from engrammar.errors import Error, NotFound
from engrammar.models import Op, Status
from engrammar.scheduler._registry import Job
from engrammar.scheduler._scheduler import run_job
from engrammar.service import Keys, create_app
from tests.conftest import T0

playwright_api = pytest.importorskip("playwright.sync_api")

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "docs" / "screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
HOSTILE = ["<script>document.title='pwned';alert('script')</script>",
           "<img src=x onerror=\"alert('img')\">",
           "<a href=\"javascript:alert('link')\">click me</a>"]


@dataclass
class Served:
    url: str
    client: Client
    acme: str  # a write key of tenant acme
    other: str  # a write key of tenant other
    memories: dict[str, int]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _seed(client: Client) -> dict[str, int]:
    """Tenant acme's alice: messages (hostile ones among them), memories through the gate,
    a rejection and a night's jobs; tenant other's bob: one secret."""
    u, c = "acme:alice", "c1"
    said = [client.record(u, c, "user", text, at=T0 + timedelta(minutes=i)) for i, text in
            enumerate(["I moved to Lisbon last spring, I love it here.",
                       "I'm vegetarian, so no meat suggestions please.",
                       "I play jazz piano most evenings.",
                       "Remind me to call the dentist on Friday.",
                       *HOSTILE])]
    client.record(u, c, "assistant", "Noted. " + HOSTILE[1], at=T0 + timedelta(minutes=9))
    ops = [Op(op="add", type="profile", content="Lives in Lisbon", slot="home",
              evidence=[said[0]], salience=0.8),
           Op(op="add", type="preference", content="Is vegetarian", evidence=[said[1]],
              salience=0.8),
           Op(op="add", type="preference", content="Plays jazz piano in the evenings",
              evidence=[said[2]]),
           Op(op="add", type="open_loop", content="Call the dentist on Friday",
              evidence=[said[3]], due=T0 + timedelta(days=3)),
           Op(op="add", type="episodic", content="Went to a fado concert",
              evidence=[said[0]]),
           *[Op(op="add", type="shared_lore", content=f"Says {h}", evidence=[said[4 + i]])
             for i, h in enumerate(HOSTILE)],
           Op(op="add", type="profile", content="x")]  # too short: a rejection
    written = client.apply(u, c, ops, now=T0, source="seed").written
    names = ["lisbon", "vegetarian", "jazz", "dentist", "concert", "script", "img", "link"]
    client.record("acme:carol", "c9", "user", "Carol's only message", at=T0)
    client.record("other:bob", "secret", "user", "Bob's secret: the vault code is 4711", at=T0)
    client.apply("other:bob", "secret", [Op(op="add", type="profile",
                                            content="Vault code is 4711")], now=T0)
    run_job(client, "lifecycle", T0 + timedelta(days=1))
    run_job(client, "import", T0 + timedelta(days=1), jobs={"import": Job(
        "import", _import_night, "0 1 * * *", "a night's import of each chat's ops")})
    return dict(zip(names, written, strict=True))


@dataclass
class _ImportReport:
    chats: int
    errors: list[dict[str, str]]

    def to_json(self) -> dict[str, Any]:
        return {"job": "import", "chats": self.chats, "errors": self.errors}


def _import_night(client: Client, now: datetime) -> _ImportReport:
    """A job whose every chat fails the library's own check (a memory over
    the store's limit), reported per chat as the nightly jobs report them."""
    report = _ImportReport(0, [])
    for user_id, chat_id in (("acme:alice", "c1"), ("other:bob", "secret")):
        report.chats += 1
        try:
            client.apply(user_id, chat_id, [Op(op="add", type="profile", content="x" * 9000)],
                         now=now, source="import")
        except Error as exc:
            report.errors.append({"chat": f"{user_id}/{chat_id}", "error": str(exc)})
    return report


@pytest.fixture(scope="module")
def served(db: Database, settings: Settings, embedder: LocalEmbedder) -> Iterator[Served]:
    with db.connection() as conn:
        store.erase_everything(conn)
    client = Client(db, settings=settings, embedder=embedder)
    keys = Keys(db)
    _, acme = keys.create("acme", ["read", "write", "admin"])
    _, other = keys.create("other", ["read", "write"])
    memories = _seed(client)
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(client, keys=keys), host="127.0.0.1",
                                           port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield Served(f"http://127.0.0.1:{port}", client, acme, other, memories)
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with playwright_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


@dataclass
class Watched:
    page: object
    dialogs: list[str]
    errors: list[str]


@pytest.fixture
def watched(browser: object) -> Iterator[Watched]:
    """A fresh page (no cookies) that records every dialog, page error and console error:
    a script of stored content that ran, or one the CSP had to block, shows up here."""
    context = browser.new_context(viewport={"width": 1360, "height": 900})  # type: ignore[attr-defined]
    page = context.new_page()
    w = Watched(page, [], [])
    page.on("dialog", lambda d: (w.dialogs.append(d.message), d.dismiss()))
    page.on("pageerror", lambda e: w.errors.append(str(e)))
    # A page answered 401 or 404 on purpose logs "Failed to load resource": no script.
    page.on("console", lambda m: w.errors.append(m.text) if m.type == "error" and not
            m.text.startswith("Failed to load resource") else None)
    yield w
    context.close()


def sign_in(w: Watched, served: Served, key: str) -> None:
    w.page.goto(served.url + "/ui/")  # type: ignore[attr-defined]
    w.page.fill("input[name=key]", key)  # type: ignore[attr-defined]
    w.page.click("#login button")  # type: ignore[attr-defined]
    w.page.wait_for_selector("#chats")  # type: ignore[attr-defined]


def shot(w: Watched, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    w.page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)  # type: ignore[attr-defined]


def test_without_a_key_only_the_sign_in_page(served: Served, watched: Watched) -> None:
    page = watched.page
    for path in ("/ui/", "/ui/jobs", "/ui/users/alice/chats/c1"):
        response = page.goto(served.url + path)  # type: ignore[attr-defined]
        assert response.status == 401
        assert page.locator("#login").count() == 1  # type: ignore[attr-defined]
        # (the page's random tokens may hold "c1" by chance: the chat id is looked for as
        # a path, and as a word of the text shown)
        content, shown = page.content(), page.inner_text("body")  # type: ignore[attr-defined]
        assert "Lisbon" not in content and "chats/c1" not in content
        assert not re.search(r"\bc1\b", shown), shown
    shot(watched, "sign-in")
    page.fill("input[name=key]", "egk_nothing_" + "x" * 43)  # type: ignore[attr-defined]
    page.click("#login button")  # type: ignore[attr-defined]
    assert "not a live API key" in page.inner_text("#message")  # type: ignore[attr-defined]
    assert page.locator("#chats").count() == 0  # type: ignore[attr-defined]
    assert not watched.dialogs and not watched.errors


def test_sign_in_shows_only_the_tenant(served: Served, watched: Watched) -> None:
    sign_in(watched, served, served.acme)
    page = watched.page
    chats = page.inner_text("#chats")  # type: ignore[attr-defined]
    assert "alice" in chats and "c1" in chats
    assert "bob" not in page.content() and "secret" not in chats  # type: ignore[attr-defined]
    cookie = next(c for c in page.context.cookies() if c["name"] == "engram_session")  # type: ignore[attr-defined]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/ui"
    assert "lifecycle" in page.inner_text("main")  # type: ignore[attr-defined]
    # Last night's per-chat failure: the tenant's own named, the other tenant's counted.
    assert "import: op 1 for chat alice/c1: content is 9000 characters" in chats
    assert "1 in other tenants' chats" in page.inner_text("main")  # type: ignore[attr-defined]
    shot(watched, "chats")
    page.goto(served.url + "/ui/jobs")  # type: ignore[attr-defined]
    assert "lifecycle" in page.inner_text(".runs")  # type: ignore[attr-defined]
    shot(watched, "jobs")
    assert not watched.dialogs and not watched.errors


def test_filter_history_ask_and_forget(served: Served, watched: Watched) -> None:
    sign_in(watched, served, served.acme)
    page = watched.page
    page.click("a.chat-link")  # type: ignore[attr-defined]
    page.wait_for_selector("#memories")  # type: ignore[attr-defined]
    assert page.locator("tr.memory").count() == 8  # type: ignore[attr-defined]
    shot(watched, "memories")
    # The filter swaps the table in place (htmx) and puts the filter in the address.
    page.select_option("select[name=type]", "preference")  # type: ignore[attr-defined]
    playwright_api.expect(page.locator("tr.memory")).to_have_count(2)  # type: ignore[attr-defined]
    assert "type=preference" in page.url  # type: ignore[attr-defined]
    page.fill("input[name=q]", "JAZZ")  # type: ignore[attr-defined]
    page.click("#filters button")  # type: ignore[attr-defined]
    playwright_api.expect(page.locator("tr.memory")).to_have_count(1)  # type: ignore[attr-defined]
    assert "Plays jazz piano" in page.inner_text("#memories")  # type: ignore[attr-defined]
    page.select_option("select[name=type]", "")  # type: ignore[attr-defined]
    page.fill("input[name=q]", "lisbon")  # type: ignore[attr-defined]
    page.click("#filters button")  # type: ignore[attr-defined]
    playwright_api.expect(page.locator("tr.memory")).to_have_count(1)  # type: ignore[attr-defined]

    # A memory: its fields, decay curve, source message and history.
    page.click("a.memory-link")  # type: ignore[attr-defined]
    page.wait_for_selector("#history")  # type: ignore[attr-defined]
    assert page.inner_text("#content") == "Lives in Lisbon"  # type: ignore[attr-defined]
    assert page.locator("svg.decay polyline").count() == 1  # type: ignore[attr-defined]
    assert "I moved to Lisbon" in page.inner_text("#sources")  # type: ignore[attr-defined]
    assert page.locator("#history li[data-op=add]").count() == 1  # type: ignore[attr-defined]
    shot(watched, "memory")
    page.click("#sources a")  # type: ignore[attr-defined]
    page.wait_for_selector("#log li.marked.remembered")  # type: ignore[attr-defined]
    assert f"memory #{served.memories['lisbon']}" in page.inner_text("#log li.marked")  # type: ignore[attr-defined]
    shot(watched, "log")

    # The chat's history shows the gate's rejections with their reasons.
    page.click("text=History & gate")  # type: ignore[attr-defined]
    page.click("#rejections")  # type: ignore[attr-defined]
    page.wait_for_selector("#history li[data-op=reject]")  # type: ignore[attr-defined]
    text = page.inner_text("#history")  # type: ignore[attr-defined]
    assert "too_short" in text
    shot(watched, "history")

    # Ask: the block as the model gets it, score components as bars, tokens vs budget.
    page.click("text=Ask")  # type: ignore[attr-defined]
    page.fill("#ask input[name=q]", "where do I live and what do I eat?")  # type: ignore[attr-defined]
    page.fill("#ask input[name=at]", (T0 + timedelta(days=2)).date().isoformat())  # type: ignore[attr-defined]
    page.click("#ask button")  # type: ignore[attr-defined]
    page.wait_for_selector("#block-text")  # type: ignore[attr-defined]
    block = page.inner_text("#block-text")  # type: ignore[attr-defined]
    direct = served.client.recall("acme:alice", "c1", "where do I live and what do I eat?",
                                  now=datetime.combine((T0 + timedelta(days=2)).date(),
                                                       time_of_day(23, 59, 59), UTC),
                                  record=False)
    assert block.strip() == direct.text.strip() and "Lisbon" in block
    assert page.locator("#items svg.bars").count() >= 1  # type: ignore[attr-defined]
    page.wait_for_selector("#compiled pre.prompt")  # type: ignore[attr-defined]
    assert "where do I live" in page.inner_text("#compiled")  # type: ignore[attr-defined]
    shot(watched, "ask")

    # Forget, through the gate: the store says archived, and the history says who.
    memory_id = served.memories["concert"]
    page.goto(f"{served.url}/ui/users/alice/chats/c1/memories/{memory_id}")  # type: ignore[attr-defined]
    page.click("#forget button")  # type: ignore[attr-defined]
    page.wait_for_selector("#done")  # type: ignore[attr-defined]
    assert page.inner_text("#status") == "archived"  # type: ignore[attr-defined]
    assert served.client.get("acme:alice", "c1", memory_id).status is Status.archived
    last = served.client.history("acme:alice", "c1", memory_id)[-1]
    assert (last.op, last.source) == ("forget", "inspector")
    # Pin, through the library's pin: recorded in the history too.
    pinned = served.memories["vegetarian"]
    page.goto(f"{served.url}/ui/users/alice/chats/c1/memories/{pinned}")  # type: ignore[attr-defined]
    page.click("#pin button")  # type: ignore[attr-defined]
    page.wait_for_selector("#pinned")  # type: ignore[attr-defined]
    assert served.client.get("acme:alice", "c1", pinned).pinned
    assert page.locator("#history li[data-op=pin]").count() == 1  # type: ignore[attr-defined]
    # Edit: an update op through the gate; the new version supersedes the old one.
    old = served.memories["jazz"]
    page.goto(f"{served.url}/ui/users/alice/chats/c1/memories/{old}")  # type: ignore[attr-defined]
    page.fill("#edit textarea", "Plays jazz guitar in the evenings")  # type: ignore[attr-defined]
    page.click("#edit button")  # type: ignore[attr-defined]
    page.wait_for_selector("#done")  # type: ignore[attr-defined]
    assert page.inner_text("#content") == "Plays jazz guitar in the evenings"  # type: ignore[attr-defined]
    before = served.client.get("acme:alice", "c1", old)
    assert before.status is Status.archived and before.superseded_by is not None
    events = served.client.history("acme:alice", "c1", before.superseded_by)
    assert [(e.op, e.source) for e in events] == [("update", "inspector")]
    assert not watched.dialogs and not watched.errors


def test_export_and_erase_a_user(served: Served) -> None:
    with httpx.Client(base_url=served.url,
                      headers={"Authorization": f"Bearer {served.acme}"}) as http:
        exported = http.post("/ui/users/carol/export")
        assert exported.status_code == 200
        assert "Carol's only message" in exported.text and "code is 4711" not in exported.text
        assert http.post("/ui/users/carol/erase", data={"confirm": "carol?"}
                         ).status_code == 400
        assert served.client.chats("acme:carol")
        assert http.post("/ui/users/bob/erase", data={"confirm": "bob"}).status_code == 404
        erased = http.post("/ui/users/carol/erase", data={"confirm": "carol"})
        assert erased.status_code == 303
        assert not served.client.chats("acme:carol")
        assert served.client.chats("other:bob")  # the other tenant's bob is untouched


def test_another_tenants_chat_is_refused(served: Served, watched: Watched) -> None:
    sign_in(watched, served, served.acme)
    page = watched.page
    for path in ("/ui/users/bob/chats/secret", "/ui/users/bob",
                 "/ui/users/bob/chats/secret/log", "/ui/users/bob/chats/secret/ask?q=code"):
        response = page.goto(served.url + path)  # type: ignore[attr-defined]
        assert response.status == 404
        # (the words, not the bare number, which a hash in the page may hold by chance)
        assert "code is 4711" not in page.content()  # type: ignore[attr-defined]
    # The other tenant's key, as a script would send it, cannot reach acme's chat either.
    with httpx.Client(base_url=served.url) as http:
        bearer = {"Authorization": f"Bearer {served.other}"}
        assert http.get("/ui/users/alice/chats/c1", headers=bearer).status_code == 404
        mine = http.get("/ui/users/bob/chats/secret", headers=bearer)
        assert mine.status_code == 200 and "code is 4711" in mine.text
        assert http.get("/ui/", headers={"Authorization": "Bearer egk_wrong"}
                        ).status_code == 401


def test_forms_need_their_csrf_token(served: Served) -> None:
    memory_id = served.memories["dentist"]
    path = f"/ui/users/alice/chats/c1/memories/{memory_id}/forget"
    with httpx.Client(base_url=served.url, cookies={"engram_session": served.acme}) as http:
        refused = http.post(path, data={"reason": "csrf probe"})
        assert refused.status_code == 403
        assert served.client.get("acme:alice", "c1", memory_id).status is Status.active
        page = http.get(f"/ui/users/alice/chats/c1/memories/{memory_id}")
        assert page.headers["content-security-policy"].startswith("default-src 'none'")
        assert "'unsafe-inline'" not in page.headers["content-security-policy"]
        # A sign-in form posted without the token of its own cookie is refused too.
        assert http.post("/ui/login", data={"key": served.acme}).status_code == 403


def test_hostile_content_renders_inert(served: Served, watched: Watched) -> None:
    sign_in(watched, served, served.acme)
    page = watched.page
    base = f"{served.url}/ui/users/alice/chats/c1"
    for path in ("", "?q=says", f"/memories/{served.memories['script']}",
                 f"/memories/{served.memories['img']}", f"/memories/{served.memories['link']}",
                 "/log", "/history", "/ask?q=says+click+me+script"):
        page.goto(base + path)  # type: ignore[attr-defined]
        page.wait_for_load_state("load")  # type: ignore[attr-defined]
        assert page.title() != "pwned"  # type: ignore[attr-defined]
        assert page.locator("main img, main script").count() == 0  # type: ignore[attr-defined]
        assert page.locator("a[href^='javascript']").count() == 0  # type: ignore[attr-defined]
    page.goto(base + f"/memories/{served.memories['img']}")  # type: ignore[attr-defined]
    assert page.inner_text("#content") == f"Says {HOSTILE[1]}"  # type: ignore[attr-defined]
    page.goto(base + "/log")  # type: ignore[attr-defined]
    assert HOSTILE[0] in page.inner_text("#log")  # type: ignore[attr-defined]
    page.click("text=click me")  # type: ignore[attr-defined]
    assert not watched.dialogs, f"a script of stored content ran: {watched.dialogs}"
    assert not watched.errors, f"the page logged errors: {watched.errors}"


def test_delete_for_good_when_the_library_can(served: Served, watched: Watched) -> None:
    """The delete form shows only when the library has ``Client.delete``; then a typed
    confirmation deletes the memory for good."""
    memory_id = served.memories["link"]
    sign_in(watched, served, served.acme)
    page = watched.page
    page.goto(f"{served.url}/ui/users/alice/chats/c1/memories/{memory_id}")  # type: ignore[attr-defined]
    if not callable(getattr(served.client, "delete", None)):
        assert page.locator("#delete").count() == 0  # type: ignore[attr-defined]
        pytest.skip("this library has no Client.delete: the form is left out")
    page.fill("#delete input[name=confirm]", str(memory_id))  # type: ignore[attr-defined]
    page.click("#delete button")  # type: ignore[attr-defined]
    page.wait_for_selector("#done")  # type: ignore[attr-defined]
    with pytest.raises(NotFound):
        served.client.get("acme:alice", "c1", memory_id)
