"""No import cycles between modules, and every module stays in its layer.

The graph is grimp's (the library behind import-linter), built from the source of
``engrammar`` and ``bench``. It has an edge for every import statement between two of their
modules: at module level, inside a function, and under ``if TYPE_CHECKING:``. A type-only
import makes no cycle at run time, but two modules that each need the other to be read are
still one tangled unit, so those imports count here too (``exclude_type_checking_imports=
False``). A package's ``__init__`` is a module of its own: importing ``engrammar.cli._app``
is an edge to it, not to ``engrammar.cli``. The layers are named in :data:`LAYERS`.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engrammar", "bench")

Graph = Mapping[str, set[str]]


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(ROOT))  # bench is not installed: found in the checkout
        return grimp.build_graph(*PACKAGES, exclude_type_checking_imports=False,
                                 cache_dir=None)


def edges_of(graph: grimp.ImportGraph) -> dict[str, set[str]]:
    return {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}


def cycles(edges: Graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(edges.get(nxt, ())))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def loop_through(start: str, component: Iterable[str], edges: Graph) -> list[str]:
    """A shortest chain of imports from ``start`` back to itself, inside ``component``."""
    members = set(component)
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in sorted(edges.get(node, set()) & members):
            if nxt == start:
                chain = [node]
                while chain[-1] != start:
                    chain.append(came_from[chain[-1]])
                return [start, *reversed(chain[:-1]), start]
            if nxt not in came_from:
                came_from[nxt] = node
                queue.append(nxt)
    raise AssertionError(f"{start} is in no loop of {sorted(members)}")


def where(graph: grimp.ImportGraph, importer: str, imported: str) -> str:
    """``importer:line `import statement``` for the first import of ``imported``."""
    details = graph.get_import_details(importer=importer, imported=imported)
    if not details:
        return f"{importer} -> {imported}"
    first = min(details, key=lambda d: d["line_number"])
    return f"{importer}:{first['line_number']} `{first['line_contents']}`"


def describe_chain(graph: grimp.ImportGraph, chain: list[str]) -> str:
    steps = [where(graph, a, b) for a, b in itertools.pairwise(chain)]
    return " -> ".join(chain) + "".join(f"\n      {s}" for s in steps)


def test_there_is_no_import_cycle(graph: grimp.ImportGraph) -> None:
    edges = edges_of(graph)
    found = cycles(edges)
    report = [f"  {', '.join(c)}:\n    {describe_chain(graph, loop_through(c[0], c, edges))}"
              for c in found]
    assert not found, "import cycles (each a set of modules, and one loop in it):\n" + \
        "\n".join(report)


def within(*prefixes: str) -> Callable[[str], bool]:
    return lambda module: any(module == p or module.startswith(p + ".") for p in prefixes)


# The layers, lowest first, each named for its stage of the data flow. A module may import
# its own layer and the ones below it, never one above: data flows from the models through
# the store and the stages to the client, and the programs sit on top.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("foundation: errors, settings, models, input checks, text tables",
     ("engrammar.errors", "engrammar.settings", "engrammar.models", "engrammar._inputs",
      "engrammar._table")),
    ("store: all SQL", ("engrammar.store",)),
    ("runtime: database, embedder, LLM client, tokens, telemetry", ("engrammar.runtime",)),
    ("extract: the LLM extractor, the parser, the summarizers", ("engrammar.extract",)),
    ("write: gate, pool, writer", ("engrammar.write",)),
    ("recall: candidates, ranking, block, assembler, log search, copies",
     ("engrammar.recall",)),
    ("nightly: the logic of every job", ("engrammar.nightly",)),
    ("client: the facade and its async surface",
     ("engrammar.client", "engrammar.aio", "engrammar.chat", "engrammar._userdata",
      "engrammar._parts", "engrammar._chats", "engrammar._data", "engrammar._inspection")),
    ("scheduler: the jobs' registry and the cron loop", ("engrammar.scheduler",)),
    ("service: HTTP API, MCP server, inspector", ("engrammar.service",)),
    ("evals: the fixtures through the pipeline", ("engrammar.evals",)),
    ("cli: the command line", ("engrammar.cli",)),
    ("bench: measurements, outside the wheel", ("bench",)),
]


def layer_of(module: str) -> int:
    if module == "engrammar":  # the package's __init__ only re-exports the client's API
        return next(i for i, (name, _) in enumerate(LAYERS) if name.startswith("client"))
    for i, (_, prefixes) in enumerate(LAYERS):
        if within(*prefixes)(module):
            return i
    raise AssertionError(f"{module} is in no layer: add it to LAYERS")


def test_every_module_has_a_layer(graph: grimp.ImportGraph) -> None:
    for module in graph.modules:
        if within(*PACKAGES)(module):
            layer_of(module)


def upward(edges: Graph) -> list[tuple[str, str]]:
    return [(a, b) for a, targets in sorted(edges.items()) for b in sorted(targets)
            if within(*PACKAGES)(a) and within(*PACKAGES)(b) and layer_of(b) > layer_of(a)]


def test_each_layer_imports_only_below_it(graph: grimp.ImportGraph) -> None:
    # Any chain out of a layer leaves it by one direct import, so direct ones suffice.
    bad = upward(edges_of(graph))
    assert not bad, "a module imports from a layer above its own:\n" + "\n".join(
        f"  {where(graph, a, b)} ({LAYERS[layer_of(a)][0]} -> {LAYERS[layer_of(b)][0]})"
        for a, b in bad)


def test_the_checks_see_a_cycle_and_a_layer_broken() -> None:
    """The checks themselves, on a graph with a cycle of three and a store module that
    imports the command line."""
    g = grimp.ImportGraph()
    for importer, imported in [("engrammar.store.a", "engrammar.store.b"),
                               ("engrammar.store.b", "engrammar.store.c"),
                               ("engrammar.store.c", "engrammar.store.a"),
                               ("engrammar.store.c", "engrammar.cli.app"),
                               ("engrammar.cli.app", "engrammar.store.a")]:
        g.add_import(importer=importer, imported=imported, line_number=1,
                     line_contents=f"import {imported}")
    edges = edges_of(g)
    found = cycles(edges)
    assert found == [["engrammar.cli.app", "engrammar.store.a", "engrammar.store.b",
                      "engrammar.store.c"]]
    assert loop_through("engrammar.store.a", found[0], edges) == [
        "engrammar.store.a", "engrammar.store.b", "engrammar.store.c", "engrammar.store.a"]
    with pytest.raises(AssertionError, match=r"store.a -> engrammar.store.b"):
        test_there_is_no_import_cycle(g)
    with pytest.raises(AssertionError, match=r"store.c:1 `import engrammar.cli.app`"):
        test_each_layer_imports_only_below_it(g)
    assert layer_of("engrammar.store._recall") < layer_of("engrammar.write._gate")
