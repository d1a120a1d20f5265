"""The public surface, pinned as httpx pins its own: what ``engrammar`` exports, which
modules are public, and that every exception it exports derives from the one root.

A change to the public API is a deliberate edit of these lists (and a CHANGELOG line)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import engrammar

PUBLIC_API = [
    "ApplyResult", "AsyncClient", "Block", "BlockItem", "Client", "Compiled", "ConfigError",
    "Covered", "Database", "DatabaseError", "Decision", "Dropped", "Embedder", "Error",
    "ExcerptReply", "InvalidInput", "LLMError", "LocalEmbedder", "MalformedOutput", "Memory",
    "MemoryEvent", "MemoryType", "Message", "NotFound", "Op", "OpKind", "OpenAIEmbedder",
    "Part", "Refusal", "Role", "Scope", "Settings", "Status", "Surface", "Tense", "Verdict",
    "__version__",
]

# Modules a user may import by name; everything else is private (a leading underscore in
# its own name or its package's) or a package whose __init__ is its public face.
PUBLIC_MODULES = {
    "engrammar", "engrammar.aio", "engrammar.chat", "engrammar.client", "engrammar.errors",
    "engrammar.models", "engrammar.settings",
}


def test_the_public_api_is_pinned() -> None:
    assert sorted(engrammar.__all__) == sorted(PUBLIC_API)
    for name in engrammar.__all__:
        assert hasattr(engrammar, name), name


def test_every_public_name_of_the_package_is_in_all() -> None:
    exported = {name for name, value in vars(engrammar).items()
                if not name.startswith("_") and not inspect.ismodule(value)}
    assert exported <= set(engrammar.__all__)


def test_every_exported_exception_derives_from_the_root() -> None:
    errors = [getattr(engrammar, n) for n in engrammar.__all__
              if inspect.isclass(getattr(engrammar, n))
              and issubclass(getattr(engrammar, n), BaseException)]
    assert len(errors) >= 7
    assert all(issubclass(e, engrammar.Error) for e in errors)


def test_modules_that_are_not_api_are_private() -> None:
    public = []
    for info in pkgutil.walk_packages(engrammar.__path__, "engrammar."):
        parts = info.name.split(".")
        if info.ispkg or any(p.startswith("_") for p in parts[1:]):
            continue
        public.append(info.name)
    assert set(public) <= PUBLIC_MODULES, sorted(set(public) - PUBLIC_MODULES)


def test_each_stage_package_imports() -> None:
    for stage in ("store", "runtime", "extract", "extract.parser", "write", "recall",
                  "nightly", "scheduler", "cli", "evals"):
        assert importlib.import_module(f"engrammar.{stage}").__doc__, stage
