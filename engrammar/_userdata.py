"""A user's data out and back: the export file, and reading it (or a file of ops) for import.

An export is JSON lines: a header ``{"format": "memory-export", "version": 1, "user_id":
...}``, then one ``{"table": ..., "row": {...}}`` per row of the user, every table that
holds user data (chats, messages, memories with their vectors, their events and links,
summaries, blocks, recall notes, prompts and model calls), ids included. Its ids are labels
within the file: an import restores the user into any store (this one after an erase, or
another database), every row under a fresh id from its table's sequence and every
reference rewritten to match (store._restore), so the user comes back the same but for
the numbers. A user who still has data in the store is refused (``replace`` erases them
first, in the same transaction): one user's history is never merged with a second copy.

An import file is either an export (its first line is the header) or ops, one JSON op per
line with its scope. Either way a file is all or nothing: a line that does not parse, or a
row or op the store refuses, stops the import with nothing written, naming the line.

A line ends at ``\n`` and nowhere else. The writer escapes every other character some reader
takes for a line break (U+2028, U+2029, U+0085, \r, \v, \f, \x1c-\x1e), so a text that holds
one round-trips whatever splits the file; the reader splits on ``\n`` only.

Every row is checked against its column's type before anything is written (see
:func:`check_rows`): ids, texts and their caps, times (never infinity, always
representable), numbers within their column, vectors of the store's width.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any

from pydantic import ValidationError

from engrammar import _inputs as inputs
from engrammar.errors import InvalidInput
from engrammar.models import Op, Scope
from engrammar.settings import Settings
from engrammar.store import Table

FORMAT = "memory-export"
VERSION = 1


def header(user_id: str) -> dict[str, Any]:
    return {"format": FORMAT, "version": VERSION, "user_id": user_id}


@dataclass
class ImportFile:
    """What a file holds: an export of one user's rows, or ops by chat (in file order)."""

    user_id: str | None = None
    rows: list[tuple[int, str, dict[str, Any]]] = field(default_factory=list)
    ops: dict[Scope, list[Op]] = field(default_factory=dict)

    @property
    def is_export(self) -> bool:
        return self.user_id is not None


def parse(data: bytes, name: str = "input", settings: Settings | None = None
          ) -> ImportFile:
    """Read an import file whole, checking every line before anything is written."""
    settings = settings or Settings()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{name}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    parsed = ImportFile()
    # Only \n ends a line: str.splitlines() also splits at U+2028, U+0085, \v..., which the
    # writer may have left inside a string (an export of an older version).
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        where = f"{name}:{number}"
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise InvalidInput(f"{where}: not JSON: {exc}") from None
        if not isinstance(record, dict):
            raise InvalidInput(f"{where}: each line must be a JSON object")
        if number == 1 and record.get("format") == FORMAT:
            if record.get("version") != VERSION:
                raise InvalidInput(f"{where}: export version {record.get('version')!r}; "
                                   f"this library reads version {VERSION}")
            parsed.user_id = inputs.user(record.get("user_id"))
            continue
        if parsed.is_export:
            parsed.rows.append(_row(record, parsed.user_id or "", where, number))
        else:
            scope, op = _op(record, where, settings.max_memory_chars)
            parsed.ops.setdefault(scope, []).append(op)
    return parsed


# Text columns whose size the settings cap, by (table, column); any other text column is
# capped at _OTHER_TEXT characters and any JSON value at _JSON_CHARS.
_OTHER_TEXT = 200_000
_JSON_CHARS = 2_000_000
_INT_RANGE = {"integer": (-inputs.MAX_INT - 1, inputs.MAX_INT), "smallint": (-2**15, 2**15 - 1),
              "bigint": (-inputs.MAX_ID - 1, inputs.MAX_ID)}


# The tables that hold rows of the user's scope, under the reserved chat id "".
_USER_SCOPED = frozenset({"memories", "memory_events", "memory_links"})


def _cap(table: str, column: str, settings: Settings) -> int:
    if (table, column) in {("memories", "content"), ("memories", "slot")}:
        return settings.max_memory_chars
    if (table, column) in {("messages", "content"), ("summaries", "content"),
                           ("context_blocks", "summary"), ("recalls", "query")}:
        return settings.max_message_chars
    return _OTHER_TEXT


def check_rows(rows: Iterable[tuple[int, str, dict[str, Any]]], tables: Iterable[Table],
               name: str, settings: Settings, dim: int) -> None:
    """Refuse, naming the line, a row no column of its table would hold as the library
    writes it: an id that is empty, long or holds a control character; a text over its
    cap; a time that is infinity or outside years 1-9999 in UTC; a number outside its
    column; a vector of another width than the store's (``dim``)."""
    by_name = {t.name: t for t in tables}
    for number, table_name, row in rows:
        table = by_name.get(table_name)
        if table is None:
            raise InvalidInput(f"{name}:{number}: no table {table_name!r} to restore into")
        types = dict(zip(table.columns, table.types, strict=True))
        for column, value in row.items():
            kind = types.get(column)
            if kind is None:
                raise InvalidInput(f"{name}:{number}: {table_name} has no column {column!r}")
            where = f"{name}:{number}: {table_name}.{column}"
            if value is None:
                continue
            if column == "chat_id" and value == "" and table_name in _USER_SCOPED:
                continue  # the user's scope (store.USER_CHAT): their user-wide memories
            if column in ("user_id", "chat_id"):
                inputs.ident(value, where)
            elif kind == "text":
                inputs.text(value, where, _cap(table_name, column, settings))
            elif kind == "timestamp with time zone":
                inputs.stamp(value, where)
            elif kind in _INT_RANGE:
                low, high = _INT_RANGE[kind]
                if column == table.identity:
                    low = 1
                inputs.count(value, where, low, high)
            elif kind in ("real", "double precision"):
                inputs.number(value, where, -1e30, 1e30)
            elif kind == "boolean":
                if not isinstance(value, bool):
                    raise InvalidInput(f"{where} must be true or false")
            elif kind == "ARRAY":
                if not isinstance(value, list) or len(value) > 100_000:
                    raise InvalidInput(f"{where} must be a list of ids")
                for item in value:
                    inputs.count(item, where, 1, inputs.MAX_ID)
            elif kind == "jsonb":
                if len(json.dumps(value, ensure_ascii=False)) > _JSON_CHARS:
                    raise InvalidInput(f"{where} is over {_JSON_CHARS} characters")
            elif column == "embedding":
                _vector(value, where, dim)


def _vector(value: Any, where: str, dim: int) -> None:
    """A pgvector value as export writes it: the text ``[x,y,...]`` of the store's width."""
    if not isinstance(value, str) or not value.startswith("[") or not value.endswith("]"):
        raise InvalidInput(f"{where} must be a vector written [x,y,...]")
    try:
        numbers = [float(x) for x in value[1:-1].split(",")]
    except ValueError:
        raise InvalidInput(f"{where} must be a vector written [x,y,...]") from None
    inputs.vector(numbers, dim, where)


def _row(record: dict[str, Any], user_id: str, where: str, number: int
         ) -> tuple[int, str, dict[str, Any]]:
    table, row = record.get("table"), record.get("row")
    if not isinstance(table, str) or not isinstance(row, dict):
        raise InvalidInput(f"{where}: an export line is {{\"table\": ..., \"row\": {{...}}}}")
    if row.get("user_id") != user_id:
        raise InvalidInput(f"{where}: a row of user {row.get('user_id')!r} in the export "
                           f"of {user_id!r}")
    _clean(row, where)
    return number, table, row


def _clean(value: Any, where: str) -> None:
    """Refuse what PostgreSQL cannot hold anywhere in a row: NUL, lone surrogates, ints
    over bigint."""
    if isinstance(value, str):
        inputs.text(value, where)
    elif isinstance(value, bool):
        return
    elif isinstance(value, int):
        inputs.count(value, where, -inputs.MAX_ID - 1, inputs.MAX_ID)
    elif isinstance(value, dict):
        for key, item in value.items():
            _clean(key, where)
            _clean(item, where)
    elif isinstance(value, list):
        for item in value:
            _clean(item, where)


def _op(record: dict[str, Any], where: str, max_chars: int) -> tuple[Scope, Op]:
    try:
        scope = inputs.scope(record.pop("user_id", None), record.pop("chat_id", None))
        op = Op.model_validate(record)
        if op.due is not None and op.due.tzinfo is None:  # text: a time with no zone is UTC
            op = op.model_copy(update={"due": op.due.replace(tzinfo=UTC)})
        inputs.ops([op], scope, max_chars)
    except ValidationError as exc:
        raise InvalidInput(f"{where}: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}"
                           ) from None
    except InvalidInput as exc:
        raise InvalidInput(f"{where}: {exc}") from None
    return scope, op


# Characters that some reader takes for a line break, escaped in the export's strings (a
# raw one can only stand inside a JSON string, where its escape means the same).
_BREAKS = {ord(ch): f"\\u{ord(ch):04x}" for ch in
           "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"}


def dump(records: Iterable[dict[str, Any]]) -> Iterable[str]:
    """The export's lines, each a JSON object and a newline, with no other line break."""
    for record in records:
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str)
        yield line.translate(_BREAKS) + "\n"
