"""Restoring an export into any store: every row takes a fresh id from its own table's
sequence, and every reference to it is rewritten to match, in the caller's transaction.

An export's ids are labels, good only inside the file: a store draws its ids for every
user from one sequence per table, so the ids of another database, or of this one before an
erase, may be held by live rows or lie past the sequence. A restore never sets a sequence,
so a file (of made-up ids up to 2**63 - 1, say) cannot exhaust the ids everyone draws, and a
restored row never collides with a live one.

What a file's ids are checked for, before anything is drawn or written (KeyError naming the
line): each table's ids are whole numbers from 1 to 2**53 - 1 (what a JSON number holds
exactly in every reader, RFC 8259 section 6) and unique; a row that belongs to another (an
event to its memory, a link to both its memories, a memory to the one that superseded it)
names a row of the file. Provenance and history (a memory's source messages, a recall's
memories, the snapshots in events, an idempotent post's answer) may name rows deleted on
request since (``Client.delete`` with its sources, ``erase_chat``): those ids are dropped
rather than kept, since the number would name nothing here, or later someone else's row.

What is rewritten: the ids; memories' ``source_message_ids``, ``superseded_by`` and
``metadata.source_memory_ids``; events' ``memory_id``, ``source_message_ids`` and the ids in
their ``before``/``after`` snapshots (or the rejected op's evidence, sources and target);
links' ends; recalls' memory ids; an idempotent post's message ids; each chat's watermarks
(``extracted_through``, ``indexed_through``: the new id of the last message they had
reached, since new ids keep the old order); the summaries' input hashes (a summary that was
up to date stays so: the hash is of its messages' ids); the window's blocks' first and last
message ids (their pair numbers stand, since the order is kept). Prompts and model calls
are kept verbatim, being the record of what was sent.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from psycopg import sql
from psycopg.types.json import Jsonb

from engrammar.store._log import _ALL_CHATS_KEY, _WRITE_KEY
from engrammar.store._memories import Conn
from engrammar.store._userdata import DERIVED, SHARED, TRANSIENT, Table, user_tables

Row = tuple[int, str, dict[str, Any]]
Ids = dict[str, dict[int, int]]        # by table: old id -> new id

MAX_FILE_ID = 2**53 - 1
# A row that belongs to another row: the reference must resolve within the file.
OWNED = {("memory_events", "memory_id"): "memories", ("memory_links", "src_id"): "memories",
         ("memory_links", "dst_id"): "memories", ("memories", "superseded_by"): "memories"}
# Lists of ids that may name rows deleted since: remapped, and the gone ones dropped.
HISTORY = {("memories", "source_message_ids"): "messages",
           ("memory_events", "source_message_ids"): "messages",
           ("recalls", "memory_ids"): "memories", ("recalls", "spoken_ids"): "memories"}
WATERMARKS = ("extracted_through", "indexed_through")


def restore_rows(conn: Conn, user_id: str, rows: Iterable[Row]) -> int:
    """Insert an export's rows (line number, table, row) as new rows of ``user_id``, every
    id drawn fresh and every reference rewritten; how many. KeyError names the line of a
    row no store could hold, and refuses a user who already has data here (an export
    restores a whole user: erase first). The caller owns the transaction."""
    tables = {t.name: t for t in user_tables(conn) if t.name not in DERIVED + SHARED + TRANSIENT}
    rows = list(rows)
    for number, name, row in rows:
        table = tables.get(name)
        if table is None:
            raise KeyError(f"line {number}: no table {name!r} to restore into")
        unknown = set(row) - set(table.columns)
        if unknown:
            raise KeyError(f"line {number}: {name} has no column {sorted(unknown)}")
    lines = _file_ids(rows, tables)
    _check_references(rows, lines)
    _hold(conn, user_id, {str(row["chat_id"]) for _, _, row in rows
                          if isinstance(row.get("chat_id"), str)})
    _refuse_live_user(conn, user_id, tables.values())
    ids = {name: _draw(conn, name, tables[name].identity or "id", sorted(by_id))
           for name, by_id in lines.items()}
    rows = _watermarks(rows, ids.get("messages", {}))
    rows = _summary_hashes(conn, rows, ids.get("messages", {}))
    rows = [(number, name, _rewritten(name, row, ids)) for number, name, row in rows]
    # One statement per table and set of columns (a round trip per row took most of the
    # time: bench/restore.py).
    batches: dict[tuple[str, tuple[str, ...]], list[dict[str, Any]]] = {}
    for _, name, row in rows:
        columns = tuple(c for c in tables[name].columns if c in row)
        batches.setdefault((name, columns), []).append(row)
    for (name, columns), batch in batches.items():
        conn.execute(
            sql.SQL("INSERT INTO {t} ({cols}) OVERRIDING SYSTEM VALUE SELECT {cols}"
                    " FROM jsonb_populate_recordset(NULL::{t}, %s)").format(
                t=sql.Identifier(name),
                cols=sql.SQL(", ").join(sql.Identifier(c) for c in columns)),
            (Jsonb(batch),))
    return len(rows)


def _file_id(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or \
            not 1 <= value <= MAX_FILE_ID:
        raise KeyError(f"{where} {value!r}: an export's ids are whole numbers from 1 to "
                       f"{MAX_FILE_ID} (2**53 - 1)")
    return value


def _file_ids(rows: list[Row], tables: dict[str, Table]) -> dict[str, dict[int, int]]:
    """Each identity table's ids in the file, and the line of each; KeyError on an id out
    of range or given twice."""
    lines: dict[str, dict[int, int]] = {t.name: {} for t in tables.values()
                                        if t.identity is not None}
    for number, name, row in rows:
        column = tables[name].identity
        if column is None:
            continue
        ident = _file_id(row.get(column), f"line {number}: {name}.{column}")
        first = lines[name].setdefault(ident, number)
        if first != number:
            raise KeyError(f"line {number}: {name} id {ident} is also the id of line {first}")
    return lines


def _check_references(rows: list[Row], lines: dict[str, dict[int, int]]) -> None:
    for number, name, row in rows:
        for (table, column), target in OWNED.items():
            if table != name or row.get(column) is None:
                continue
            where = f"line {number}: {name}.{column}"
            if _file_id(row[column], where) not in lines.get(target, {}):
                raise KeyError(f"{where} {row[column]} names no {target} row of the file")
        for (table, column), _ in HISTORY.items():
            if table == name and isinstance(row.get(column), list):
                for item in row[column]:
                    _file_id(item, f"line {number}: {name}.{column}")
        if name == "chats":
            for column in WATERMARKS:
                value = row.get(column)
                if value is not None and value != 0:
                    _file_id(value, f"line {number}: chats.{column}")
        if name == "context_blocks":
            for column in ("first_id", "last_id"):
                if row.get(column) is not None:
                    _file_id(row[column], f"line {number}: context_blocks.{column}")


def _hold(conn: Conn, user_id: str, chats: set[str]) -> None:
    """The write locks of the chats restored into, the user scope's last (as every writer
    takes them), without registering a chat: the rows come from the file."""
    for chat in sorted(chats - {""}) + ([""] if "" in chats else []):
        conn.execute(f"SELECT pg_advisory_xact_lock_shared({_ALL_CHATS_KEY}),"
                     f" pg_advisory_xact_lock({_WRITE_KEY})", {"u": user_id, "c": chat})


def _refuse_live_user(conn: Conn, user_id: str, tables: Iterable[Table]) -> None:
    """KeyError when the user holds any row here: a restore would merge two histories of
    one user (two copies of each memory, say), so it is refused, never half done."""
    held: dict[str, int] = {}
    for table in sorted(tables, key=lambda t: t.name):
        row = conn.execute(sql.SQL("SELECT count(*) FROM {} WHERE user_id = %s").format(
            sql.Identifier(table.name)), (user_id,)).fetchone()
        if row and row[0]:
            held[table.name] = int(row[0])
    if held:
        counts = ", ".join(f"{n} {t}" for t, n in held.items())
        raise KeyError(f"user {user_id!r} already has data in this store ({counts}): an "
                       "export restores a whole user, so it goes into a store without them "
                       "(erase the user first) or replaces them (--replace)")


def _draw(conn: Conn, table: str, column: str, old: list[int]) -> dict[int, int]:
    """Fresh ids from the table's own sequence for ``old`` (sorted), in the same order."""
    fresh = sorted(int(r[0]) for r in conn.execute(
        "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
        (table, column, len(old))))
    return dict(zip(old, fresh, strict=True))


def _kept(values: Any, to: dict[int, int]) -> Any:
    """A list of ids with each known one rewritten and the others dropped."""
    if not isinstance(values, list):
        return values
    return [to[v] for v in values if isinstance(v, int) and v in to]


def _one(value: Any, to: dict[int, int]) -> Any:
    return to.get(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _rewritten(name: str, row: dict[str, Any], ids: Ids) -> dict[str, Any]:
    row = dict(row)
    messages, memories = ids.get("messages", {}), ids.get("memories", {})
    if name in ids and "id" in row:
        row["id"] = ids[name][row["id"]]
    for (table, column), target in OWNED.items():
        if table == name and row.get(column) is not None:
            row[column] = ids[target][row[column]]
    for (table, column), target in HISTORY.items():
        if table == name and column in row:
            row[column] = _kept(row[column], ids.get(target, {}))
    if name == "memories" and isinstance(row.get("metadata"), dict):
        row["metadata"] = _metadata(row["metadata"], memories)
    if name == "memory_events":
        for side in ("before", "after"):
            if isinstance(row.get(side), dict):
                row[side] = _snapshot(row[side], messages, memories)
    if name == "idempotency_keys" and isinstance(row.get("response"), dict):
        row["response"] = {**row["response"],
                           **({"ids": _kept(row["response"]["ids"], messages)}
                              if "ids" in row["response"] else {})}
    return row


def _metadata(meta: dict[str, Any], memories: dict[int, int]) -> dict[str, Any]:
    if "source_memory_ids" not in meta:
        return meta
    return {**meta, "source_memory_ids": _kept(meta["source_memory_ids"], memories)}


def _snapshot(snap: dict[str, Any], messages: dict[int, int], memories: dict[int, int]
              ) -> dict[str, Any]:
    """An event's snapshot of a memory, or (a rejection) the op that was proposed."""
    out = dict(snap)
    if "op" in out:  # an Op: evidence names messages, sources and target memories
        out["evidence"] = _kept(out.get("evidence", []), messages)
        out["sources"] = _kept(out.get("sources", []), memories)
        target = out.get("target")
        if isinstance(target, str) and target.isascii() and target.isdecimal() \
                and len(target) <= 19:
            found = memories.get(int(target))
            out["target"] = None if found is None else str(found)
        return out
    for key in ("id", "superseded_by"):
        if key in out:
            out[key] = _one(out[key], memories)
    if "source_message_ids" in out:
        out["source_message_ids"] = _kept(out["source_message_ids"], messages)
    if isinstance(out.get("metadata"), dict):
        out["metadata"] = _metadata(out["metadata"], memories)
    return out


def _watermarks(rows: list[Row], messages: dict[int, int]) -> list[Row]:
    """Each chat's watermarks moved to the new id of the last of its messages they had
    reached (0 when none of the file's messages is that old): new ids keep the old order,
    so what was past the watermark still is. ``rows`` as the file has them."""
    by_chat: dict[Any, list[int]] = {}
    for _, name, row in rows:
        if name == "messages":
            by_chat.setdefault(row.get("chat_id"), []).append(row["id"])
    for seen in by_chat.values():
        seen.sort()
    out: list[Row] = []
    for number, name, row in rows:
        if name == "chats":
            row = dict(row)
            seen = by_chat.get(row.get("chat_id"), [])
            for column in WATERMARKS:
                if isinstance(row.get(column), int):
                    i = bisect_right(seen, row[column])
                    row[column] = messages[seen[i - 1]] if i else 0
        elif name == "context_blocks":
            # A block's first and last message (migration 017), to the same messages' new
            # ids; one deleted since moves to its nearest neighbour inside the block.
            row = dict(row)
            seen = by_chat.get(row.get("chat_id"), [])
            first, last = row.get("first_id"), row.get("last_id")
            if isinstance(first, int) and seen:
                i = bisect_left(seen, first)
                row["first_id"] = messages[seen[min(i, len(seen) - 1)]]
            if isinstance(last, int) and seen:
                i = bisect_right(seen, last)
                row["last_id"] = messages[seen[max(i - 1, 0)]]
        out.append((number, name, row))
    return out


def _summary_hashes(conn: Conn, rows: list[Row], messages: dict[int, int]) -> list[Row]:
    """Each summary's input hash that matched its input in the file rewritten to what that
    input hashes to with the new ids, so an up-to-date summary stays up to date (the jobs
    would write it again, at a model's cost, and maybe in other words). A day's hash is of
    its messages' ids, a week's or month's of its children's hashes (store._summaries).
    ``rows`` as the file has them."""
    said = [(r["chat_id"], r["id"], r["at"]) for _, name, r in rows if name == "messages"
            and isinstance(r.get("chat_id"), str) and isinstance(r.get("at"), str)]
    summaries = [(i, r) for i, (_, name, r) in enumerate(rows) if name == "summaries"]
    if not summaries:
        return rows
    before = _day_hashes(conn, said)
    after = _day_hashes(conn, [(c, messages[m], at) for c, m, at in said])
    new: dict[int, str] = {}
    for child, parent in ((None, "day"), ("day", "week"), ("week", "month")):
        if child is not None:
            kids = [r for _, r in summaries if r.get("period") == child]
            before = _parent_hashes(conn, parent, [
                (r.get("chat_id"), r.get("start_at"), r.get("source_hash")) for r in kids])
            after = _parent_hashes(conn, parent, [
                (r.get("chat_id"), r.get("start_at"), new.get(i, r.get("source_hash")))
                for i, r in summaries if r.get("period") == child])
        for i, r in summaries:
            key = (r.get("chat_id"), _when(r.get("start_at")))
            if r.get("period") == parent and key in before and \
                    r.get("source_hash") == before[key]:
                new[i] = after[key]
    return [(n, name, {**r, "source_hash": new[i]} if i in new else r)
            for i, (n, name, r) in enumerate(rows)]


def _when(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


Hashes = dict[tuple[Any, datetime | None], str]


def _day_hashes(conn: Conn, said: list[tuple[str, int, str]]) -> Hashes:
    """(chat, UTC day) -> the hash days_to_summarize takes of that day's message ids."""
    rows = conn.execute(
        "SELECT chat_id, date_trunc('day', at::timestamptz, 'UTC'),"
        "       md5(string_agg(id::text, ',' ORDER BY id))"
        " FROM unnest(%s::text[], %s::bigint[], %s::text[]) AS m(chat_id, id, at)"
        " GROUP BY 1, 2",
        ([c for c, _, _ in said], [m for _, m, _ in said], [a for _, _, a in said]))
    return {(r[0], r[1]): str(r[2]) for r in rows}


def _parent_hashes(conn: Conn, parent: str, kids: list[tuple[Any, Any, Any]]) -> Hashes:
    """(chat, week or month start) -> the hash periods_to_roll_up takes of its children."""
    kids = [k for k in kids if all(isinstance(v, str) for v in k) and _when(k[1])]
    rows = conn.execute(
        "SELECT chat_id, date_trunc(%s, start_at::timestamptz, 'UTC'),"
        "       md5(string_agg(hash || start_at::timestamptz::text, ','"
        "                      ORDER BY start_at::timestamptz))"
        " FROM unnest(%s::text[], %s::text[], %s::text[]) AS s(chat_id, start_at, hash)"
        " GROUP BY 1, 2",
        (parent, [k[0] for k in kids], [k[1] for k in kids], [k[2] for k in kids]))
    return {(r[0], r[1]): str(r[2]) for r in rows}
