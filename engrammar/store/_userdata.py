"""A user's data as a whole: erase it from every table, export its rows, restore them.

The tables are read from the catalog, not listed here: every table with a ``user_id``
column holds user data, so a table added by a later migration is erased and exported too.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from psycopg import sql
from psycopg.types.json import Jsonb

from engrammar.store._log import list_chats, lock_chat
from engrammar.store._memories import Conn
from engrammar.store._scopes import lock_user_scope

# Derived by triggers, rebuilt on restore: from memories (recall copies' change log), and
# from messages (each chat's pair count, migration 017).
DERIVED = ("memory_changes", "chat_pairs")
# The job runs are the store's, not a user's: a user's entries in their reports are
# scrubbed on erase, and the rows stay.
SHARED = ("job_runs", "llm_batches")
# Work in flight (extraction requests waiting for a provider batch): erased with the user,
# neither exported nor restored, since the batch they wait for is this store's.
TRANSIENT = ("llm_batch_requests",)


@dataclass(frozen=True)
class Table:
    name: str
    has_chat: bool
    columns: tuple[str, ...]        # the columns a row is written with (not generated)
    identity: str | None            # its GENERATED ... AS IDENTITY column, if any
    types: tuple[str, ...] = ()     # each column's information_schema data_type


def user_tables(conn: Conn) -> list[Table]:
    """Every base table of the schema with a ``user_id`` column, by name."""
    rows = conn.execute(
        """
        SELECT c.table_name,
               array_agg(c.column_name::text ORDER BY c.ordinal_position)
                   FILTER (WHERE c.is_generated = 'NEVER'),
               bool_or(c.column_name = 'chat_id'),
               max(c.column_name::text) FILTER (WHERE c.is_identity = 'YES'),
               array_agg(c.data_type::text ORDER BY c.ordinal_position)
                   FILTER (WHERE c.is_generated = 'NEVER')
        FROM information_schema.columns c
        JOIN information_schema.tables t
          ON t.table_schema = c.table_schema AND t.table_name = c.table_name
        WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
        GROUP BY c.table_name
        HAVING bool_or(c.column_name = 'user_id')
        ORDER BY c.table_name
        """).fetchall()
    return [Table(r[0], bool(r[2]), tuple(r[1]), r[3], tuple(r[4])) for r in rows]


# What a database keeps when it is emptied whole: which migrations it has and its embedder.
BOOKKEEPING = ("schema_migrations", "store_meta")


def erase_everything(conn: Conn) -> None:
    """Empty every table but the bookkeeping and restart the identities: for tests and
    benchmarks, on a database of their own."""
    tables = [r[0] for r in conn.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        " AND tablename <> ALL(%s) ORDER BY tablename", (list(BOOKKEEPING),))]
    conn.execute(sql.SQL("TRUNCATE {} RESTART IDENTITY").format(
        sql.SQL(", ").join(sql.Identifier(t) for t in tables)))


def erase_user(conn: Conn, user_id: str, chat_id: str | None = None) -> dict[str, int]:
    """Delete every row of the user (or of one chat of theirs) from every table, under the
    chats' write locks, and scrub their entries from the job reports; rows deleted by
    table. The caller owns the transaction."""
    chats = [s for s in list_chats(conn, user_id) if chat_id in (None, s.chat_id)]
    for scope in chats:  # in (user, chat) order, as every other holder of two takes them
        lock_chat(conn, scope)
    deleted: dict[str, int] = {}
    if chat_id is not None:
        deleted.update(_unlink_chat(conn, user_id, chat_id))
    tables = user_tables(conn)
    # Deleting memories appends to the change log: the log goes last.
    for table in sorted(tables, key=lambda t: t.name in DERIVED):
        if table.name in SHARED or (chat_id is not None and not table.has_chat):
            continue
        where = sql.SQL("user_id = %s") if chat_id is None else \
            sql.SQL("user_id = %s AND chat_id = %s")
        params = (user_id,) if chat_id is None else (user_id, chat_id)
        cur = conn.execute(sql.SQL("DELETE FROM {} WHERE ").format(sql.Identifier(table.name))
                           + where, params)
        deleted[table.name] = cur.rowcount
    # An entry of an older report names its chat by the joined "user/chat" alone: it is
    # dropped when that text is exactly one of the erased chats' (never by prefix, which
    # took user "sl"'s chat "a/b" for user "sl/a"'s).
    legacy = {str(s) for s in chats} | {f"{user_id}/{chat_id or ''}"}
    deleted["job_runs (entries)"] = _scrub_job_runs(
        conn, user_id, lambda entry: _names(entry, user_id, chat_id, legacy))
    return deleted


def _unlink_chat(conn: Conn, user_id: str, chat_id: str) -> dict[str, int]:
    """What the user's other scopes hold naming the chat's memories, which would name
    nothing once they go (a user-wide reflection's links to the memories it was drawn
    from): the links deleted, a supersedes cleared, as delete_memory does for one."""
    gone = [r[0] for r in conn.execute(
        "SELECT id FROM memories WHERE user_id = %s AND chat_id = %s", (user_id, chat_id))]
    if not gone:
        return {}
    lock_user_scope(conn, user_id)  # after the chat's, as every writer takes the two
    links = conn.execute(
        "DELETE FROM memory_links WHERE user_id = %(u)s AND chat_id <> %(c)s"
        " AND (src_id = ANY(%(m)s) OR dst_id = ANY(%(m)s))",
        {"u": user_id, "c": chat_id, "m": gone}).rowcount
    conn.execute("UPDATE memories SET superseded_by = NULL WHERE user_id = %(u)s"
                 " AND chat_id <> %(c)s AND superseded_by = ANY(%(m)s)",
                 {"u": user_id, "c": chat_id, "m": gone})
    return {"memory_links (other scopes)": links}


def _names(entry: dict[str, Any], user_id: str, chat_id: str | None, legacy: set[str]
           ) -> bool:
    """Whether a report's entry is about the erased user (or chat): by its ``user_id`` and
    ``chat_id`` (Scope.report_entry), or in an older report by a value equal to one of the
    erased chats' joined names."""
    if isinstance(entry.get("user_id"), str) and isinstance(entry.get("chat_id"), str):
        return entry["user_id"] == user_id and chat_id in (None, entry["chat_id"])
    return any(isinstance(v, str) and v in legacy for v in entry.values())


def _scrub_job_runs(conn: Conn, user_id: str, names: Callable[[dict[str, Any]], bool]
                    ) -> int:
    """Drop from every job report each entry naming one of the erased chats."""
    rows = conn.execute(
        "SELECT user_id, id, report FROM job_runs"
        " WHERE strpos(report::text, %s) > 0 FOR UPDATE",
        (json.dumps(user_id, ensure_ascii=False)[1:-1],)).fetchall()
    scrubbed = 0
    for user, run_id, report in rows:
        clean, dropped = _scrub(report, names)
        if dropped:
            scrubbed += dropped
            conn.execute("UPDATE job_runs SET report = %s WHERE user_id = %s AND id = %s",
                         (Jsonb(clean), user, run_id))
    return scrubbed


def _scrub(node: Any, names: Callable[[dict[str, Any]], bool]) -> tuple[Any, int]:
    """``node`` without the objects (at any depth, in a list) that ``names``."""
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        dropped = 0
        for key, value in node.items():
            out[key], n = _scrub(value, names)
            dropped += n
        return out, dropped
    if isinstance(node, list):
        kept: list[Any] = []
        dropped = 0
        for item in node:
            if isinstance(item, dict) and names(item):
                dropped += 1
                continue
            clean, n = _scrub(item, names)
            kept.append(clean)
            dropped += n
        return kept, dropped
    return node, 0


def export_rows(conn: Conn, user_id: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(table, row) for every row of the user, table by table, each in key order."""
    for table in user_tables(conn):
        if table.name in DERIVED + SHARED + TRANSIENT:
            continue
        columns = sql.SQL(", ").join(sql.Identifier(c) for c in table.columns)
        query = sql.SQL("SELECT json_build_object({}) FROM {} t WHERE user_id = %s"
                        " ORDER BY {}").format(
            sql.SQL(", ").join(sql.SQL("{}, t.{}").format(sql.Literal(c), sql.Identifier(c))
                               for c in table.columns),
            sql.Identifier(table.name), columns)
        for (row,) in conn.execute(query, (user_id,)):
            yield table.name, row
