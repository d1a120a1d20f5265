"""The rules SQL and Python must agree on (store._indexes) against what the migrations
actually created: a migration that changes an index or the change-log trigger without the
code, or the other way round, fails here."""

from __future__ import annotations

import re
from datetime import timedelta

import numpy as np

from engrammar import Client, Database, Op, store
from engrammar.models import MemoryType, Scope, Surface
from engrammar.recall._candidates import Columns, Recalled
from tests.conftest import T0


def _predicate(conn: store.Conn, sql: str) -> str:
    """PostgreSQL's own rendering of a predicate over memories, as pg_indexes shows one."""
    with conn.transaction(force_rollback=True):
        conn.execute(f"CREATE INDEX probe_index ON memories (user_id) WHERE {sql}")
        row = conn.execute(
            "SELECT pg_get_expr(indpred, indrelid) FROM pg_index"
            " WHERE indexrelid = 'probe_index'::regclass").fetchone()
    assert row is not None
    return str(row[0])


def test_the_scans_predicates_are_the_indexes(db: Database) -> None:
    with db.connection() as conn:
        for name, sql in store.PARTIAL_INDEXES.items():
            row = conn.execute(
                "SELECT pg_get_expr(i.indpred, i.indrelid) FROM pg_index i"
                " WHERE i.indexrelid = %s::regclass", (name,)).fetchone()
            assert row is not None, f"index {name} is missing"
            assert row[0] == _predicate(conn, sql), name


def test_every_column_recall_reads_is_watched_by_the_change_log(db: Database) -> None:
    with db.connection() as conn:
        row = conn.execute(
            "SELECT pg_get_triggerdef(oid) FROM pg_trigger"
            " WHERE tgname = 'memories_changed_update'").fetchone()
    assert row is not None
    watched = set(re.findall(r"old\.(\w+) IS DISTINCT FROM", row[0]))
    assert watched == set(store.CHANGE_COLUMNS)


def test_the_always_rule_is_the_same_in_sql_and_numpy(client: Client) -> None:
    """Every type and surface, pinned and not: the rows SQL calls always-candidates are the
    rows Columns.always marks."""
    scope = Scope(user_id="u1", chat_id="c1")
    with client.db.connection() as conn:  # straight into the store: every combination
        for t in MemoryType:
            for s in Surface:
                for pinned in (False, True):
                    store.insert_memory(conn, scope, {
                        "type": t.value, "surface": s.value, "pinned": pinned,
                        "content": f"{t.value} {s.value} {pinned}", "confidence": 0.9,
                        "salience": 0.9, "created_at": T0, "updated_at": T0})
    with client.db.connection() as conn:
        in_sql = {int(r[0]) for r in conn.execute(
            f"SELECT id FROM memories WHERE status = 'active' AND {store.ALWAYS}")}
        rows, _, _ = store.active_rows(conn, Scope(user_id="u1", chat_id="c1"))
    columns = Columns.of([Recalled.from_row(r) for r in rows])
    in_numpy = {int(i) for i in columns.ids[columns.always()]}
    assert len(rows) == len(MemoryType) * len(Surface) * 2 and in_sql == in_numpy
    assert np.any(~columns.always())  # the rule does leave some out


def test_rendered_items_name_their_source_messages(client: Client) -> None:
    first = client.record("u1", "c1", "user", "I live in Lisbon.", at=T0)
    client.apply("u1", "c1", [Op(op="add", type="profile", content="Lives in Lisbon",
                                  evidence=[first])], now=T0)
    block = client.recall("u1", "c1", "where do I live?", now=T0 + timedelta(hours=1),
                          record=False)
    item = next(i for i in block.items if i.memory_id is not None)
    assert item.message_ids == [first]
    assert block.to_json()["items"][0]["message_ids"] == [first]
