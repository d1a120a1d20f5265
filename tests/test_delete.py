"""Delete for good: after ``delete(..., sources=True)`` no text or JSON column of any table
holds the memory's words or the words of the messages it rests on."""

from __future__ import annotations

from datetime import timedelta

import pytest

from engrammar import Client, Database, NotFound, store
from engrammar.scheduler import _blocks as blocks
from engrammar.scheduler import _index_log as index_log
from engrammar.scheduler import _summaries as summaries
from tests.conftest import T0

U, C = "sam", "kitchen"
CHATTER = ["The kettle broke again this morning.", "Work was quiet, mostly emails.",
           "We watched a film about octopuses.", "The bus was late, as usual.",
           "I made soup for lunch.", "My neighbour's dog barked all night.",
           "I'm reading a novel about a lighthouse.", "The weather turned cold.",
           "I finally fixed the squeaky door.", "Tomorrow is laundry day."]


def occurrences(conn: store.Conn, needle: str) -> dict[str, int]:
    """Rows holding ``needle`` in each text, JSON or text-array column of every table."""
    columns = conn.execute(
        "SELECT table_name, column_name FROM information_schema.columns"
        " WHERE table_schema = current_schema()"
        " AND udt_name IN ('text', 'varchar', 'json', 'jsonb', '_text', 'tsvector')"
        " ORDER BY 1, 2").fetchall()
    found = {}
    for table, column in columns:
        row = conn.execute(f'SELECT count(*) FROM "{table}" WHERE "{column}"::text ILIKE %s',
                           (f"%{needle}%",)).fetchone()
        if row and row[0]:
            found[f"{table}.{column}"] = int(row[0])
    return found


def _conversation(client: Client) -> tuple[int, int]:
    """A chat whose first pair says where the user lives; every job run over it."""
    said = client.record(U, C, "user", "I live in Lisbon.", at=T0)
    client.record(U, C, "assistant", "Noted. What is your neighbourhood like?",
                  at=T0 + timedelta(seconds=30))
    for n, text in enumerate(CHATTER, start=1):
        client.record(U, C, "user", text, at=T0 + timedelta(minutes=n))
        client.record(U, C, "assistant", "I see.", at=T0 + timedelta(minutes=n, seconds=30))
    night = T0 + timedelta(hours=14)
    client.extract(U, C, now=night)
    index_log.run(client, night)
    summaries.run(client, night + timedelta(days=8))
    blocks.run(client, night)
    [home] = [m for m in client.memories(U, C) if "Lisbon" in m.content]
    client.compile(U, C, "What should I cook for dinner?", now=night + timedelta(hours=1))
    client.recall(U, C, "Any plans for the weekend?", now=night + timedelta(hours=1))
    return home.id, said


def test_delete_with_sources_leaves_no_trace_in_any_table(client: Client, clean: Database
                                                          ) -> None:
    home, said = _conversation(client)
    with clean.connection() as conn:
        before = occurrences(conn, "Lisbon")
    # The scan sees the words where the pipeline put them (it can fail).
    for where in ("messages.content", "memories.content", "memory_events.after",
                  "prompts.messages", "summaries.content", "context_blocks.summary"):
        assert before.get(where), (where, before)
    deleted = client.delete(U, C, home, sources=True)
    assert deleted["memories"] == 1 and deleted["messages"] == 1
    with clean.connection() as conn:
        assert occurrences(conn, "Lisbon") == {}
        assert occurrences(conn, "I live in") == {}
        assert conn.execute("SELECT count(*) FROM messages WHERE id = %s",
                            (said,)).fetchone() == (0,)
    assert all(m.id != home for m in client.memories(U, C))
    block = client.recall(U, C, "Where do I live?", now=T0 + timedelta(days=2), record=False)
    assert "Lisbon" not in block.text
    with pytest.raises(NotFound):
        client.delete(U, C, home)
    # The jobs rebuild what was drawn from the rest, and find nothing of it.
    summaries.run(client, T0 + timedelta(days=9))
    blocks.run(client, T0 + timedelta(days=1))
    with clean.connection() as conn:
        assert occurrences(conn, "Lisbon") == {}
        assert occurrences(conn, "kettle").get("summaries.content")


def test_delete_without_sources_keeps_the_messages(client: Client, clean: Database) -> None:
    home, said = _conversation(client)
    content = client.get(U, C, home).content
    deleted = client.delete(U, C, home)
    assert deleted["memories"] == 1 and "messages" not in deleted
    with clean.connection() as conn:
        assert occurrences(conn, content) == {}
        assert "messages.content" in occurrences(conn, "I live in Lisbon.")
    assert [m.id for m in client.log(U, C, limit=100) if m.id == said] == [said]


def test_delete_refuses_another_chats_memory(client: Client) -> None:
    home, _ = _conversation(client)
    with pytest.raises(NotFound):
        client.delete(U, "elsewhere", home)
    with pytest.raises(NotFound):
        client.delete("alex", C, home)
    assert client.get(U, C, home).id == home


def test_engram_delete_and_private(client: Client, database_url: str,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from engrammar.cli import cli

    monkeypatch.setenv("MEMORY_DATABASE_URL", database_url)
    home, _ = _conversation(client)
    runner = CliRunner()
    out = runner.invoke(cli, ["delete", "--user", U, "--chat", C, str(home), "--sources",
                              "--yes"])
    assert out.exit_code == 0, out.output
    assert f"deleted memory {home} and the messages it rests on: " in out.output
    assert "1 memories" in out.output and "1 messages" in out.output
    assert all(m.id != home for m in client.memories(U, C))
    out = runner.invoke(cli, ["private", "--user", U, "--chat", C])
    assert out.exit_code == 0 and client.is_private(U, C), out.output
    out = runner.invoke(cli, ["private", "--user", U, "--chat", C, "--off"])
    assert out.exit_code == 0 and not client.is_private(U, C), out.output
