"""The wheel installs by its own name and carries what the commands need: built from the
source, installed into a fresh virtualenv, and run from outside the checkout, it holds only
``engrammar`` (no other top-level package), migrates a new database with `engram init`, runs
the demo, and runs the evals from the fixtures it ships, writing the report where it is run.

Installing the dependencies from PyPI into the new virtualenv would take minutes
(onnxruntime alone is large), so it sees the running environment's site-packages through a
``.pth`` line instead. That environment has this project installed editable (a finder,
enabled by its own ``.pth``, that maps ``engrammar`` to the checkout); a plain path line in a
``.pth`` only appends the directory to ``sys.path`` and does not process the ``.pth`` files
inside it, so the finder is never installed, and the wheel's ``engrammar`` in the new
environment's own site-packages, earlier on ``sys.path``, is the one imported. The test
checks both.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import psycopg
from psycopg import sql

from engrammar.runtime._database import with_database
from tests.conftest import TEST_DATABASE

ROOT = Path(__file__).resolve().parent.parent
# What the build reads: pyproject.toml's readme and the packages it finds.
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "engrammar")


def run(args: list[str | Path], cwd: Path, env: dict[str, str],
        timeout: float = 300) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)
    assert done.returncode == 0, (
        f"{' '.join(map(str, args))} exited {done.returncode}\n"
        f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}")
    return done


def isolated_env() -> dict[str, str]:
    """This process's environment without anything that would put other code on the path."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV")}
    env["PYTHONNOUSERSITE"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def can_build_here() -> bool:
    """Whether this environment's setuptools can build the project without isolation
    (77 reads the SPDX ``project.license``); else pip fetches one for an isolated build,
    from its cache or the index."""
    try:
        return int(version("setuptools").split(".")[0]) >= 77
    except (PackageNotFoundError, ValueError):
        return False


def build_wheel(tmp_path: Path, env: dict[str, str]) -> Path:
    # Built from a copy: an in-tree build would leave build/ and egg-info in the checkout,
    # shared with whoever else is working in it.
    src = tmp_path / "src"
    src.mkdir()
    # The fixtures are a link into the checkout's fixtures/: copied as the files they are.
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "out")
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=ignore)
        else:
            shutil.copy2(ROOT / name, src / name)
    wheels = tmp_path / "wheels"
    isolation = ["--no-build-isolation"] if can_build_here() else []
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation, "-w", wheels, src],
        tmp_path, env)
    (wheel,) = wheels.glob("engrammar-*.whl")
    return wheel


def make_venv(tmp_path: Path, wheel: Path, env: dict[str, str]) -> tuple[Path, Path]:
    """A virtualenv holding the wheel and seeing this environment's dependencies; its
    directory and its own site-packages."""
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", venv], tmp_path, env)
    python = venv / "bin" / "python"
    # pip runs under the new interpreter, so the `engram` script's shebang is its own.
    run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps",
         "--no-index", wheel], tmp_path, env)
    site = Path(run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                    tmp_path, env).stdout.strip())
    deps = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    (site / "zz_dependencies.pth").write_text("".join(f"{p}\n" for p in sorted(deps)))
    return venv, site


def test_the_wheel_holds_one_package_and_runs_init_demo_and_evals(
        database_url: str, tmp_path: Path) -> None:
    env = isolated_env()
    wheel = build_wheel(tmp_path, env)
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.split("/")[0] for name in archive.namelist()}
        files = archive.namelist()
    assert tops == {"engrammar", f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}"
                    ".dist-info"}, tops
    assert any(f.startswith("engrammar/evals/fixtures/") and f.endswith(".yaml")
               for f in files)
    assert "engrammar/runtime/data/minilm-tokenizer.json" in files
    venv, site = make_venv(tmp_path, wheel, env)
    python, script = venv / "bin" / "python", venv / "bin" / "engram"

    # The wheel's copy is imported, the checkout's editable finder is not installed.
    probe = run([python, "-c", (
        "import json, sys, engrammar, engrammar.runtime._database as db;"
        "print(json.dumps({'file': engrammar.__file__, 'version': engrammar.__version__,"
        " 'sql': str(db.SQL_DIR),"
        " 'editable': sorted(m for m in sys.modules if m.startswith('__editable__'))}))")],
        tmp_path, env)
    found = json.loads(probe.stdout)
    assert Path(found["file"]).is_relative_to(site), found
    assert Path(found["sql"]).is_relative_to(site), found
    assert found["editable"] == [], found
    assert found["version"] == version("engrammar")
    assert script.read_text().splitlines()[0] == f"#!{python}"
    assert run([script, "--version"], tmp_path, env).stdout.strip() == \
        f"engram (engrammar) {version('engrammar')}"

    name = f"{TEST_DATABASE}_install"
    admin = with_database(database_url, "postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
            sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        url = with_database(database_url, name)
        env = {**env, "MEMORY_DATABASE_URL": url, "MEMORY_DATA_DIR": str(tmp_path / "data")}
        done = run([script, "init", "--json"], tmp_path, env)
        expected = sorted(f.stem for f in (ROOT / "engrammar" / "sql").glob("*.sql"))
        assert json.loads(done.stdout)["migrations_applied"] == expected
        with psycopg.connect(url) as conn:
            names = [r[0] for r in conn.execute(
                "SELECT name FROM schema_migrations ORDER BY name")]
        assert names == expected

        demo = run([script, "demo"], tmp_path, env)
        assert "recall before the next turn" in demo.stdout
        assert "Lives in Berlin" in demo.stdout

        evals = run([script, "eval", "--fixture", "moved_home_update", "--fixture",
                     "explicit_forget", "--database", f"{name}_eval", "--json"],
                    tmp_path, env)
        report = json.loads(evals.stdout)
        assert (report["fixtures"], report["passed"]) == (2, 2), report
        assert (tmp_path / "eval-report" / "report.json").exists()
        assert not list(site.glob("engrammar/evals/out*")), "the report went into the wheel"
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            for db_name in (name, f"{name}_eval"):
                conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                    sql.Identifier(db_name)))
