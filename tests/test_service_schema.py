"""Property tests of the HTTP service from its own OpenAPI document (schemathesis): every
operation with generated requests, on a real server over HTTP, with an admin key of a
tenant of its own. Checks: no 5xx, every status documented, every content type and body
as the document says.

The default run is small (SCHEMATHESIS_EXAMPLES, default 8 per operation) to keep the
suite quick; the full-size run is

    SCHEMATHESIS_EXAMPLES=100 .venv/bin/python -m pytest -q tests/test_service_schema.py
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from engrammar import Database, Settings, store
from engrammar.runtime._database import resolve_url
from engrammar.service import Keys, openapi
from tests._service import Server

EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "8"))
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]


@schemathesis.serializer("application/x-ndjson")
def ndjson(context: Any, value: Any) -> bytes:
    """An import body as schemathesis generates it (a string), sent as its bytes."""
    if isinstance(value, bytes):
        return value
    return str(value).encode("utf-8", "surrogatepass")


@pytest.fixture(scope="module")
def fuzzed(settings: Settings) -> Iterator[tuple[Server, str]]:
    url = resolve_url(settings, "memory_service_fuzz")
    with Database(url, max_size=1) as db:
        with db.connection() as conn:
            store.erase_everything(conn)
        _, token = Keys(db).create("fuzz", ["admin"])
    with Server(url) as server:
        yield server, token


# Each operation of the document is a test of its own.
OPERATIONS = [f"{method.upper()} {path}" for path, ops in openapi()["paths"].items()
              for method in ops]


@pytest.mark.parametrize("operation", OPERATIONS)
def test_every_operation_keeps_to_its_document(operation: str,
                                               fuzzed: tuple[Server, str]) -> None:
    server, token = fuzzed
    loaded = schemathesis.openapi.from_url(server.base + "/openapi.json")
    method, path = operation.split(" ", 1)
    op = loaded[path][method]
    seen = 0

    @given(case=op.as_strategy(GenerationMode.POSITIVE) | op.as_strategy(
        GenerationMode.NEGATIVE))
    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck),
              database=None)
    def run(case: Any) -> None:
        nonlocal seen
        seen += 1
        case.call_and_validate(base_url=server.base,
                               headers={"Authorization": f"Bearer {token}"}, checks=CHECKS)

    run()
    assert seen >= min(EXAMPLES, 1)
