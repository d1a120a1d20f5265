"""Fuzz of the public entry points with arbitrary text, ids, numbers and datetimes: whatever
goes in, what comes out is a result or a ``memory.Error``, never another exception."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engrammar import Client, Op
from engrammar.errors import Error
from engrammar.models import MemoryType, OpKind

EXAMPLES = 25
fuzz = settings(max_examples=EXAMPLES, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])

EDGES = ["", " ", "\x00", "a\x00b", "\ud800", "x\udfffy", "\x1f", "é" * 300, "x" * 40_000]
texts = st.one_of(st.sampled_from(EDGES), st.text(max_size=50),
                  st.text(st.characters(exclude_categories=()), max_size=50))
ids = st.one_of(st.sampled_from(["u1", "c1", *EDGES]), st.text(max_size=8),
                st.text(st.characters(exclude_categories=()), max_size=8))
numbers = st.one_of(st.none(), st.integers(-2**70, 2**70), st.sampled_from([0, -1, 1]))
times = st.one_of(st.none(), st.datetimes(), st.datetimes(timezones=st.sampled_from(
    [UTC, timezone(timedelta(hours=14)), timezone(timedelta(hours=-12))])))
# An op's fields, built into an Op inside the test: building one is an entry point too
# (a NUL or an out-of-range number is refused there, with the library's error).
ops = st.builds(lambda kind, type_, content, target, slot, due, evidence: dict(
    op=kind, type=type_, content=content, target=target, slot=slot, due=due,
    evidence=evidence),
    st.sampled_from(list(OpKind)), st.one_of(st.none(), st.sampled_from(list(MemoryType))),
    texts, st.one_of(st.none(), texts), st.one_of(st.none(), texts), times,
    st.lists(st.integers(-2**70, 2**70), max_size=2))


def only_library_errors(call: Callable[[], Any]) -> None:
    try:
        call()
    except Error:
        pass


@fuzz
@given(user=ids, chat=ids, text=texts, at=times, role=st.sampled_from(["user", "x", ""]))
def test_record_recall_compile_observe(client: Client, user: str, chat: str, text: str,
                                       at: datetime | None, role: str) -> None:
    only_library_errors(lambda: client.record(user, chat, role, text, at=at))
    only_library_errors(lambda: client.recall(user, chat, text, now=at))
    only_library_errors(lambda: client.compile(user, chat, text, now=at, system=text))
    only_library_errors(lambda: client.observe(user, chat, f"Decision: {text}", now=at))


@fuzz
@given(user=ids, chat=ids, batch=st.lists(ops, max_size=3), now=times)
def test_apply(client: Client, user: str, chat: str, batch: list[dict[str, Any]],
               now: datetime | None) -> None:
    only_library_errors(lambda: client.apply(user, chat, [Op(**op) for op in batch],
                                             now=now))


@fuzz
@given(user=ids, chat=ids, before=numbers, limit=numbers, budget=numbers)
def test_reads_and_numbers(client: Client, user: str, chat: str, before: int | None,
                           limit: int | None, budget: int | None) -> None:
    only_library_errors(lambda: client.log(user, chat, before=before, limit=limit or 0))
    only_library_errors(lambda: client.memories(user, chat))
    only_library_errors(lambda: client.history(user, chat, before))
    only_library_errors(lambda: client.get(user, chat, limit or 0))
    only_library_errors(lambda: client.recall(user, chat, "x", budget_tokens=budget,
                                              now=datetime(2026, 1, 1, tzinfo=UTC)))
    only_library_errors(lambda: client.erase_chat(user, chat))


@fuzz
@given(data=st.one_of(st.binary(max_size=200), texts.map(
    lambda t: t.encode("utf-8", "surrogatepass"))))
def test_import_file(client: Client, data: bytes) -> None:
    only_library_errors(lambda: client.import_file(data))


@pytest.mark.parametrize("line", [
    '{"user_id": "u1", "chat_id": "c1", "op": "add", "content": "x", "due": "2026-01-01"}',
    '{"user_id": "u1", "chat_id": "c1", "op": "add", "evidence": [1e400]}',
    '{"format": "memory-export", "version": 1, "user_id": "u1"}\n'
    '{"table": "messages", "row": {"user_id": "u1", "chat_id": "c1", "id": "x"}}',
    '{"format": "memory-export", "version": 1, "user_id": "u1"}\n'
    '{"table": "memories", "row": {"user_id": "u1", "tsv": "x"}}',
])
def test_import_odd_lines(client: Client, line: str) -> None:
    only_library_errors(lambda: client.import_file(line.encode()))
