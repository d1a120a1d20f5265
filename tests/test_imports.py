"""No import cycles between modules, and the packages stay in their layers.

The graph is grimp's (the library behind import-linter), built from the source of the
packages ``memory``, ``jobs``, ``evals`` and ``bench``. It has an edge for every import
statement between two of their modules: at module level, inside a function, and under
``if TYPE_CHECKING:``. A type-only import makes no cycle at run time, but two modules that
each need the other to be read are still one tangled unit, so those imports count here too
(``exclude_type_checking_imports=False``). A package's ``__init__`` is a module of its own:
importing ``memory.cli.app`` is an edge to it, not to ``memory.cli``.

The layers, lowest first:

- the library: ``memory`` without ``memory.cli``; imports none of the others;
- ``jobs``: the batch jobs over the library; never imports ``memory.cli``, ``evals``,
  ``bench``;
- ``memory.cli``, ``evals``, ``bench``: the programs on top.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("memory", "jobs", "evals", "bench")

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


def library(module: str) -> bool:
    return within("memory")(module) and not within("memory.cli")(module)


LAYERS: list[tuple[str, Callable[[str], bool], tuple[str, ...]]] = [
    ("the library (memory without memory.cli)", library,
     ("jobs", "evals", "bench", "memory.cli")),
    ("jobs", within("jobs"), ("memory.cli", "evals", "bench")),
]


@pytest.mark.parametrize(("name", "member", "forbidden"), LAYERS,
                         ids=["library", "jobs"])
def test_each_layer_imports_only_below_it(graph: grimp.ImportGraph, name: str,
                                          member: Callable[[str], bool],
                                          forbidden: tuple[str, ...]) -> None:
    above = within(*forbidden)
    bad = [(importer, imported) for importer, targets in sorted(edges_of(graph).items())
           if member(importer) for imported in sorted(targets) if above(imported)]
    # Any chain out of the layer leaves it by one direct import, so direct ones suffice.
    assert not bad, f"{name} imports what it must not ({', '.join(forbidden)}):\n" + \
        "\n".join(f"  {where(graph, a, b)}" for a, b in bad)


def test_the_checks_see_a_cycle_and_a_layer_broken() -> None:
    """The checks themselves, on a graph with a cycle of three and a library module that
    imports the command line."""
    g = grimp.ImportGraph()
    for importer, imported in [("memory.a", "memory.b"), ("memory.b", "memory.c"),
                               ("memory.c", "memory.a"), ("memory.c", "memory.cli.app"),
                               ("memory.cli.app", "memory.a"), ("jobs.x", "memory.a")]:
        g.add_import(importer=importer, imported=imported, line_number=1,
                     line_contents=f"import {imported}")
    edges = edges_of(g)
    assert cycles(edges) == [["memory.a", "memory.b", "memory.c", "memory.cli.app"]]
    assert loop_through("memory.a", cycles(edges)[0], edges) == [
        "memory.a", "memory.b", "memory.c", "memory.a"]
    assert "memory.c:1 `import memory.cli.app`" in describe_chain(
        g, ["memory.c", "memory.cli.app"])
    with pytest.raises(AssertionError, match=r"memory.a -> memory.b -> memory.c -> memory.a"):
        test_there_is_no_import_cycle(g)
    with pytest.raises(AssertionError, match=r"memory.c:1 `import memory.cli.app`"):
        test_each_layer_imports_only_below_it(g, *LAYERS[0])
    test_each_layer_imports_only_below_it(g, *LAYERS[1])


# The library's own layers, lowest first: a module imports only from its own layer and the
# ones below. The data flows models/settings -> store -> write/read -> client, never back.
LIBRARY_LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("foundation", ("memory.errors", "memory.settings", "memory.models", "memory.table")),
    ("store", ("memory.store", "memory.db")),
    ("write and read", ()),  # every other library module
    ("client", ("memory.client", "memory.aio", "memory.chat")),  # and what drives a Client
]


def library_layer(module: str) -> int:
    if module == "memory":  # the package's __init__ only re-exports
        return len(LIBRARY_LAYERS) - 1
    for i, (_, prefixes) in enumerate(LIBRARY_LAYERS):
        if prefixes and within(*prefixes)(module):
            return i
    return 2


def test_the_library_flows_one_way(graph: grimp.ImportGraph) -> None:
    bad = [(importer, imported) for importer, targets in sorted(edges_of(graph).items())
           if library(importer) for imported in sorted(targets)
           if library(imported) and library_layer(imported) > library_layer(importer)]
    assert not bad, "a library module imports from a layer above its own:\n" + "\n".join(
        f"  {where(graph, a, b)} ({LIBRARY_LAYERS[library_layer(a)][0]} -> "
        f"{LIBRARY_LAYERS[library_layer(b)][0]})" for a, b in bad)
    assert library_layer("memory.store.recall") == 1 and library_layer("memory.gate") == 2
