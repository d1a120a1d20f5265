"""The TypeScript client (clients/typescript): its checked-in OpenAPI document and types are
what the service and openapi-typescript make now, and its node tests pass against a real
``engram serve`` they start themselves, on this session's test database.

Node 20 and npm are required, not optional: without them these tests fail, naming what is
missing. The packages come from package-lock.json (``npm ci``, run here when
node_modules is missing or older than the lock)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engrammar import Client
from engrammar.service import Keys, create_app

PACKAGE = Path(__file__).resolve().parent.parent / "clients" / "typescript"
REGENERATE = "make typescript-types"


def run(args: list[str], timeout: float, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=PACKAGE, env={**os.environ, **env}, capture_output=True,
                          text=True, timeout=timeout, check=False)


@pytest.fixture(scope="module")
def npm() -> str:
    """npm, with the lock's packages installed; fails (never skips) without node 20+."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.fail("node and npm are required for the TypeScript client's tests "
                    "(node 20 or newer)")
    version = run([node, "--version"], 30).stdout.strip()
    assert int(version.lstrip("v").split(".")[0]) >= 20, f"node {version}: 20+ is needed"
    installed = PACKAGE / "node_modules" / ".package-lock.json"
    lock = PACKAGE / "package-lock.json"
    if not installed.exists() or installed.stat().st_mtime < lock.stat().st_mtime:
        done = run([npm, "ci", "--no-audit", "--no-fund"], 600)
        assert done.returncode == 0, f"npm ci failed:\n{done.stdout}\n{done.stderr}"
    return npm


def test_the_openapi_document_is_current(client: Client) -> None:
    live = create_app(client, keys=Keys(client.db)).openapi()
    checked_in = json.loads((PACKAGE / "openapi.json").read_text(encoding="utf-8"))
    assert checked_in == live, (f"clients/typescript/openapi.json is stale: {REGENERATE}")


def test_the_types_are_current(npm: str, tmp_path: Path) -> None:
    # The package's own generate script, writing elsewhere.
    script = json.loads((PACKAGE / "package.json").read_text())["scripts"]["generate"]
    args = script.split()
    assert args[0] == "openapi-typescript" and args[-2] == "-o", script
    out = tmp_path / "schema.ts"
    made = run([str(PACKAGE / "node_modules" / ".bin" / args[0]), *args[1:-1], str(out)], 300)
    assert made.returncode == 0, made.stderr
    assert out.read_text() == (PACKAGE / "src" / "schema.ts").read_text(), \
        f"clients/typescript/src/schema.ts is stale: {REGENERATE}"


def test_the_node_suite_passes(npm: str, database_url: str) -> None:
    engram = Path(sys.executable).with_name("engram")
    done = run([npm, "test"], 900, MEMORY_DATABASE_URL=database_url, ENGRAM=str(engram))
    report = done.stdout + done.stderr
    assert done.returncode == 0, report[-6000:]
    counts = {line.split()[1]: int(line.split()[2]) for line in report.splitlines()
              if line.startswith("# ") and len(line.split()) == 3
              and line.split()[2].isdigit()}
    assert counts.get("pass", 0) >= 10, report[-3000:]
    assert counts.get("fail") == 0 and counts.get("skipped") == 0 \
        and counts.get("todo") == 0 and counts.get("cancelled") == 0, counts
