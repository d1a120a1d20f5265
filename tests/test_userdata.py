"""Data control: erase leaves no row of the user in any table the catalog lists (job
reports included), export then erase then import reproduces the user, and an import file
is all or nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engrammar import Client, Database, LocalEmbedder, Op, Settings, store
from engrammar._userdata import dump
from engrammar.cli import cli
from engrammar.errors import InvalidInput
from engrammar.models import MemoryType, OpKind, Scope
from engrammar.runtime._database import ensure_database, resolve_url
from engrammar.scheduler import _scheduler as scheduler
from tests.conftest import T0, TEST_DATABASE

U = "erase-me-7f3a"
KEEP = "keep-me-2b9c"


def _populate(client: Client, user: str) -> None:
    for chat in ("c1", "c2"):
        for i in range(12):
            client.record(user, chat, "user", f"My name is Dana and I live in Berlin ({i}).",
                          at=T0 + timedelta(minutes=i))
            client.record(user, chat, "assistant", f"Noted, Dana ({i}).",
                          at=T0 + timedelta(minutes=i, seconds=30))
        client.apply(user, chat, [Op(op=OpKind.add, type=MemoryType.preference,
                                     content="Likes green tea in the morning")], now=T0)
    # Every job, each writing its own rows and a job report naming the chats.
    scheduler.run_nightly(client, T0 + timedelta(days=1))
    scheduler.run_job(client, "blocks", T0 + timedelta(days=1))
    client.recall(user, "c1", "where does Dana live?", now=T0 + timedelta(days=1))
    client.compile(user, "c1", "tea?", now=T0 + timedelta(days=1))
    with client.db.connection() as conn:
        store.insert_llm_call(conn, Scope(user_id=user, chat_id="c1"), purpose="extract", model="m",
                              request={"user": user}, response=f"about {user}", error=None,
                              prompt_tokens=1, completion_tokens=1, duration_ms=1.0)
        store.finish_job_run(conn, store.start_job_run(conn, "extract", T0), "errors",
                             {"job": "extract", "errors": [
                                 {"chat": f"{user}/c1", "error": f"model said {user} ..."}]})


def _mentions(client: Client, needle: str) -> dict[str, int]:
    """Rows of every table in the catalog with any column whose text holds ``needle``."""
    found: dict[str, int] = {}
    with client.db.connection() as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")]
        for table in tables:
            row = conn.execute(
                f"SELECT count(*) FROM {table} t WHERE strpos(t::text, %s) > 0",
                (needle,)).fetchone()
            if row and row[0]:
                found[table] = int(row[0])
    return found


def test_erase_user_leaves_no_row_in_any_table(client: Client) -> None:
    _populate(client, U)
    _populate(client, KEEP)
    before = _mentions(client, U)
    assert {"messages", "memories", "memory_events", "chats", "job_runs", "llm_calls",
            "recalls", "prompts", "context_blocks", "summaries"} <= set(before), before
    client.recall(U, "c1", "tea", now=T0 + timedelta(days=1), record=False)
    assert any(s.user_id == U for s in client.snapshots._chats)

    assert client.erase_user(U) > 0

    assert _mentions(client, U) == {}
    assert not any(s.user_id == U for s in client.snapshots._chats)
    # The other user is untouched.
    assert set(_mentions(client, KEEP)) == set(before)
    assert client.recall(U, "c1", "tea", now=T0 + timedelta(days=2), record=False).items == []


def test_erase_chat_leaves_the_users_other_chats(client: Client) -> None:
    _populate(client, U)
    kept = client.memories(U, "c2")
    assert client.erase_chat(U, "c1") > 0
    assert _mentions(client, f"{U}/c1") == {}
    assert client.memories(U, "c1") == [] and client.log(U, "c1") == []
    assert client.memories(U, "c2") == kept


# Where an export holds ids, by key (at any depth of a row): the table they name.
_MESSAGE_KEYS = {"source_message_ids", "evidence", "ids"}
_MEMORY_KEYS = {"memory_id", "src_id", "dst_id", "superseded_by", "memory_ids", "spoken_ids",
                "source_memory_ids", "sources"}


def content(records: list[dict[str, Any]]) -> list[str]:
    """An export with every id replaced by its rank among its table's ids (an import keeps
    their order), each chat's watermarks and its blocks' message bounds by how many of its
    messages they have reached,
    and the summaries' input hashes left out (see test_summaries_stay_up_to_date): two
    exports of the same data compare equal whatever ids each store drew."""
    ids: dict[str, list[int]] = {}
    by_chat: dict[str, list[int]] = {}
    for r in records[1:]:
        if "id" in r["row"]:
            ids.setdefault(r["table"], []).append(r["row"]["id"])
        if r["table"] == "messages":
            by_chat.setdefault(r["row"]["chat_id"], []).append(r["row"]["id"])
    rank = {t: {v: i for i, v in enumerate(sorted(vs), 1)} for t, vs in ids.items()}

    def relabel(value: Any, table: str) -> Any:
        if isinstance(value, list):
            return [relabel(v, table) for v in value]
        return rank.get(table, {}).get(value, ("gone", value)) if isinstance(value, int) \
            else value

    def walk(node: Any, top: bool) -> Any:
        if isinstance(node, list):
            return [walk(v, False) for v in node]
        if not isinstance(node, dict):
            return node
        out = {}
        for key, value in node.items():
            if key in _MESSAGE_KEYS:
                value = relabel(value, "messages")
            elif key in _MEMORY_KEYS or (key == "id" and not top):  # a snapshot's memory
                value = relabel(value, "memories")
            elif key != "id":
                value = walk(value, False)
            out[key] = value
        return out
    out = []
    for r in records[1:]:
        row, table = dict(r["row"]), r["table"]
        if "id" in row:
            row["id"] = rank[table][row["id"]]
        # Watermarks, and a window block's last message id (migration 017): how many of
        # the chat's messages they have reached; its first id: how many are before it.
        for mark in ("extracted_through", "indexed_through", "last_id"):
            if mark in row:
                row[mark] = sum(m <= row[mark] for m in by_chat.get(row["chat_id"], []))
        if "first_id" in row:
            row["first_id"] = sum(m < row["first_id"] for m in by_chat.get(row["chat_id"], []))
        row.pop("source_hash", None)
        out.append(json.dumps({"table": table, "row": walk(row, True)}, sort_keys=True))
    return sorted(out)


def test_export_erase_import_reproduces_the_user(client: Client, tmp_path: Path) -> None:
    _populate(client, U)
    exported = client.export_user(U)
    tables = {r["table"] for r in exported[1:]}
    assert {"chats", "messages", "memories", "memory_events", "summaries",
            "context_blocks", "memory_links", "recalls"} <= tables
    path = tmp_path / "u.jsonl"
    path.write_text("".join(dump(exported)), encoding="utf-8")
    block = client.recall(U, "c1", "tea", now=T0 + timedelta(days=2), record=False)

    client.erase_user(U)
    restored = client.import_file(path.read_bytes(), name=str(path))

    assert restored == len(exported) - 1
    again = client.export_user(U)
    assert content(again) == content(exported)
    # Every row took a fresh id: none of the file's ids is reused.
    for table in ("messages", "memories", "memory_events"):
        old = {r["row"]["id"] for r in exported[1:] if r["table"] == table}
        new = {r["row"]["id"] for r in again[1:] if r["table"] == table}
        assert len(new) == len(old) and not new & old, table
    recalled = client.recall(U, "c1", "tea", now=T0 + timedelta(days=2), record=False)
    assert recalled.text == block.text
    # New rows after a restore take new ids past the restored ones.
    new_id = client.record(U, "c1", "user", "One more thing.", at=T0 + timedelta(days=2))
    assert new_id > max(m.id for m in client.log(U, "c1")[:-1])
    result = client.apply(U, "c1", [Op(op=OpKind.add, type=MemoryType.preference,
                                       content="Collects vintage maps")], now=T0)
    assert result.applied == 1


def test_a_restored_user_needs_no_job_run_again(client: Client) -> None:
    """The watermarks and the summaries' hashes follow the renumbering: a night right after
    an import extracts, indexes and summarises nothing of the restored user."""
    _populate(client, U)
    now = T0 + timedelta(days=40)  # November is over: its weeks and month are summarised
    scheduler.run_nightly(client, now)
    exported = client.export_user(U)
    assert {r["row"]["period"] for r in exported[1:] if r["table"] == "summaries"} == \
        {"day", "week", "month"}
    client.erase_user(U)
    client.import_file("".join(dump(exported)).encode())
    with client.db.connection() as conn:
        assert store.days_to_summarize(conn, now) == []
        assert store.periods_to_roll_up(conn, "day", "week", now) == []
        assert store.periods_to_roll_up(conn, "week", "month", now) == []
    reports = scheduler.run_nightly(client, now)
    extract = next(r for r in reports if r["job"] == "extract")
    assert extract["messages"] == 0 and extract["applied"] == 0, extract
    index = next(r for r in reports if r["job"] == "index")
    assert index["embedded"] == 0, index
    written = next(r for r in reports if r["job"] == "summaries")["written"]
    assert written == {"day": 0, "week": 0, "month": 0}, written
    assert content(client.export_user(U)) == content(exported)


def test_importing_twice_is_refused_and_replace_restores(client: Client) -> None:
    """An export restores a whole user: into a store that holds them already it is refused
    (naming what they hold), never merged into a second copy; --replace swaps them."""
    _populate(client, U)
    exported = client.export_user(U)
    data = "".join(dump(exported)).encode()
    with pytest.raises(InvalidInput, match=f"user '{U}' already has data in this store"):
        client.import_file(data)
    assert client.export_user(U) == exported
    assert client.import_file(data, replace=True) == len(exported) - 1
    assert content(client.export_user(U)) == content(exported)


def test_user_wide_memories_round_trip(clean: Database, embedder: LocalEmbedder) -> None:
    shared = Client(clean, settings=Settings(scopes={"user_wide": ["profile"]}),
                    embedder=embedder)
    shared.apply(U, "c1", [Op(op=OpKind.add, type=MemoryType.profile,
                              content="Lives in Glasgow", slot="home")], now=T0)
    shared.apply(U, "c2", [Op(op=OpKind.update, type=MemoryType.profile, target="1",
                              content="Lives in Edinburgh", slot="home")], now=T0)
    exported = shared.export_user(U)
    assert any(r["row"].get("chat_id") == "" for r in exported[1:])
    seen = [(m.content, m.status) for m in shared.memories(U, "c3")]
    assert ("Lives in Edinburgh", "active") in seen
    shared.erase_user(U)
    shared.import_file("".join(dump(exported)).encode())
    assert content(shared.export_user(U)) == content(exported)
    assert [(m.content, m.status) for m in shared.memories(U, "c3")] == seen


def test_an_export_after_erasing_a_chat_restores(clean: Database,
                                                 embedder: LocalEmbedder) -> None:
    """A user-wide reflection drawn from a chat's memory: erasing the chat takes the link
    to it too, so the export names no memory it does not hold, and restores."""
    shared = Client(clean, settings=Settings(scopes={"user_wide": ["reflection"]}),
                    embedder=embedder)
    ran = shared.apply(U, "c1", [Op(op=OpKind.add, type=MemoryType.episodic,
                                    content="Ran a marathon in Berlin last week")], now=T0)
    shared.apply(U, "c1", [Op(op=OpKind.add, type=MemoryType.reflection, sources=ran.written,
                              content="The user is into endurance sports")], now=T0)
    shared.record(U, "c2", "user", "Hello again.", at=T0)
    shared.erase_chat(U, "c1")
    exported = shared.export_user(U)
    assert not any(r["table"] == "memory_links" for r in exported[1:])
    shared.erase_user(U)
    assert shared.import_file("".join(dump(exported)).encode()) == len(exported) - 1
    assert [m.content for m in shared.memories(U, "c2")] == \
        ["The user is into endurance sports"]


@pytest.fixture(scope="module")
def second_db(settings: Settings) -> Iterator[Database]:
    """A second, fresh database on the same server (the embedded one, or
    MEMORY_DATABASE_URL's, whose role may create databases)."""
    name = f"{TEST_DATABASE}_second"
    url = ensure_database(settings.database_url, name) if settings.database_url \
        else resolve_url(settings, name)
    with Database(url, max_size=2) as db:
        yield db


def test_an_export_restores_into_another_database(client: Client, second_db: Database,
                                                  settings: Settings,
                                                  embedder: LocalEmbedder) -> None:
    """Into another store whose own rows already hold the file's ids: the user comes back
    whole under ids of that store, and its own users are untouched."""
    _populate(client, U)
    exported = client.export_user(U)
    with second_db.connection() as conn:
        store.erase_everything(conn)
    other = Client(second_db, settings=settings, embedder=embedder)
    _populate(other, KEEP)
    theirs = other.export_user(KEEP)
    assert {r["row"]["id"] for r in theirs[1:] if r["table"] == "messages"} & \
        {r["row"]["id"] for r in exported[1:] if r["table"] == "messages"}

    assert other.import_file("".join(dump(exported)).encode()) == len(exported) - 1

    assert content(other.export_user(U)) == content(exported)
    assert other.export_user(KEEP) == theirs
    when = T0 + timedelta(days=2)
    assert other.recall(U, "c1", "tea", now=when, record=False).text == \
        client.recall(U, "c1", "tea", now=when, record=False).text


def test_import_is_all_or_nothing(client: Client) -> None:
    good = {"user_id": "u1", "chat_id": "c1", "op": "add", "type": "profile",
            "content": "Lives in Lisbon"}
    # Parses, but the writer refuses it: over MEMORY_MAX_MEMORY_CHARS.
    huge = {**good, "chat_id": "c2", "content": "x" * 5000}
    data = (json.dumps(good) + "\n" + json.dumps(huge) + "\n").encode()
    with pytest.raises(InvalidInput, match="limit is 2000"):
        client.import_file(data)
    assert client.memories("u1", "c1") == []
    for bad, message in [(b"\xff\xfe{}", "not UTF-8"),
                         (json.dumps({**good, "user_id": "u\x00"}).encode(), "NUL"),
                         (json.dumps({**good, "evidence": [2**70]}).encode(), "between"),
                         (b'{"format": "memory-export", "version": 1, "user_id": "u1"}\n'
                          b'{"table": "nope", "row": {"user_id": "u1"}}', "no table")]:
        with pytest.raises(InvalidInput, match=message):
            client.import_file(bad)
    assert client.import_file(json.dumps(good).encode())["u1/c1"].applied == 1


def test_cli_erase_export_and_bad_numbers(client: Client, database_url: str,
                                          monkeypatch: pytest.MonkeyPatch,
                                          tmp_path: Path) -> None:
    monkeypatch.setenv("MEMORY_DATABASE_URL", database_url)
    client.record(U, "c1", "user", "I live in Berlin.", at=T0)
    runner = CliRunner()
    out = tmp_path / "u.jsonl"
    assert runner.invoke(cli, ["export", "--user", U, "--out", str(out)]).exit_code == 0
    assert json.loads(out.read_text().splitlines()[0])["user_id"] == U
    for args in (["log", "--user", U, "--chat", "c1", "--limit", "-1"],
                 ["log", "--user", U, "--chat", "c1", "--before", str(2**70)]):
        bad = runner.invoke(cli, args)
        assert bad.exit_code == 1 and bad.output.startswith("error: "), bad.output
        assert bad.exception is None or isinstance(bad.exception, SystemExit)
    erased = runner.invoke(cli, ["erase", "--user", U, "--yes"])
    assert erased.exit_code == 0 and "erased user" in erased.output
    assert client.log(U, "c1") == []
    restored = runner.invoke(cli, ["import", str(out)])
    assert restored.exit_code == 0, restored.output
    assert [m.content for m in client.log(U, "c1")] == ["I live in Berlin."]


def _entries(client: Client) -> list[dict[str, str]]:
    """Every entry naming a chat in every job report, at any depth."""
    found: list[dict[str, str]] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("chat"), str):
                found.append(node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)
    with client.db.connection() as conn:
        walk([r["report"] for r in store.list_job_runs(conn)])
    return found


def test_erasing_a_user_keeps_the_entries_of_a_user_whose_joined_name_collides(
        client: Client) -> None:
    """User "sl/a" with chat "b" and user "sl" with chat "a/b" both print as "sl/a/b": the
    reports key entries by user and chat, so erasing one leaves the other's."""
    mine, theirs = Scope(user_id="sl/a", chat_id="b"), Scope(user_id="sl", chat_id="a/b")
    with client.db.connection() as conn:
        for scope in (mine, theirs):  # a message no job can read: each chat reports an error
            client.record(scope.user_id, scope.chat_id, "user", "hi", at=T0)
            conn.execute("INSERT INTO messages (user_id, chat_id, role, content, at)"
                         " VALUES (%s, %s, 'user', 'hi', '-infinity')",
                         (scope.user_id, scope.chat_id))
        # An older report named its chats by the joined text alone.
        store.finish_job_run(conn, store.start_job_run(conn, "extract", T0), "errors", {
            "job": "extract", "errors": [{"chat": "sl/a/c", "error": "legacy"}]})
    client.record("sl", "a/c", "user", "hi", at=T0)
    scheduler.run_nightly(client, T0 + timedelta(days=1))
    entries = _entries(client)
    for scope in (mine, theirs):
        assert any(e.get("user_id") == scope.user_id and e.get("chat_id") == scope.chat_id
                   and e["chat"] == str(scope) for e in entries), (scope, entries)

    client.erase_user("sl/a")

    left = _entries(client)
    assert not any(e.get("user_id") == "sl/a" for e in left), left
    assert any(e.get("user_id") == "sl" and e.get("chat_id") == "a/b" for e in left), left
    assert any(e == {"chat": "sl/a/c", "error": "legacy"} for e in left), left
    # The other way round: erasing user sl's chat "a/b" leaves nothing of it.
    client.erase_chat("sl", "a/b")
    assert not any(e["chat"] == "sl/a/b" for e in _entries(client))
    assert any(e["chat"] == "sl/a/c" for e in _entries(client))
