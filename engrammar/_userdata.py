"""A user's data out and back: the export file, and reading it (or a file of ops) for import.

An export is JSON lines: a header ``{"format": "memory-export", "version": 1, "user_id":
...}``, then one ``{"table": ..., "row": {...}}`` per row of the user, every table that
holds user data (chats, messages, memories with their vectors, their events and links,
summaries, blocks, recall notes, prompts and model calls), ids included. Restored into a
store that does not hold those ids (after an erase, or a store of its own), it reproduces
the user exactly.

An import file is either an export (its first line is the header) or ops, one JSON op per
line with its scope. Either way a file is all or nothing: a line that does not parse, or a
row or op the store refuses, stops the import with nothing written, naming the line.
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


def parse(data: bytes, name: str = "input") -> ImportFile:
    """Read an import file whole, checking every line before anything is written."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{name}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    parsed = ImportFile()
    for number, line in enumerate(text.splitlines(), start=1):
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
            scope, op = _op(record, where)
            parsed.ops.setdefault(scope, []).append(op)
    return parsed


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


def _op(record: dict[str, Any], where: str) -> tuple[Scope, Op]:
    try:
        scope = inputs.scope(record.pop("user_id", None), record.pop("chat_id", None))
        op = Op.model_validate(record)
        if op.due is not None and op.due.tzinfo is None:  # text: a time with no zone is UTC
            op = op.model_copy(update={"due": op.due.replace(tzinfo=UTC)})
        inputs.ops([op], scope, 10**9)  # the content cap is the writer's, at apply
    except ValidationError as exc:
        raise InvalidInput(f"{where}: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}"
                           ) from None
    except InvalidInput as exc:
        raise InvalidInput(f"{where}: {exc}") from None
    return scope, op


def dump(records: Iterable[dict[str, Any]]) -> Iterable[str]:
    """The export's lines, each a JSON object and a newline."""
    for record in records:
        yield json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str) + "\n"
