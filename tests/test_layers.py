"""The package's import graph follows its layers (docs/architecture.md), with no cycles.

Every import inside ``opendp_lite`` is read from the source (top-level and function-level alike,
since a lazy import is still a dependency), and each module is placed in a layer.  A module may
import from its own layer or a lower one, never from a higher one; and no set of modules may
import each other in a cycle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "opendp_lite"

#: Layers from the bottom up.  A module is placed by the longest dotted prefix listed here
#: (``table.nodes``, the table API's plain IR, sits below the engines that read it).
LAYERS: list[tuple[str, ...]] = [
    ("errors",),
    (
        "_types",
        "_validate",
        "_arith",
        "typing",
        "_frames",
        "_order",
        "_math",
        "_progress",
        "_registry",
    ),
    ("core", "_spine"),
    ("samplers", "_truncation"),
    ("domains", "metrics", "measures", "table.nodes"),
    ("backends",),
    ("transformations", "measurements"),
    ("combinators",),
    ("accuracy", "search", "audit", "sensitivity", "mod", "serialization"),
    ("context", "prelude", "extras", "helpers", "table", "planner"),
    ("data", "tour", "__main__", "__init__"),
]


def _layer_of(module: str) -> int:
    rel = module.split(".", 1)[1] if "." in module else "__init__"
    found = [
        (len(name), i)
        for i, names in enumerate(LAYERS)
        for name in names
        if rel == name or rel.startswith(name + ".")
    ]
    if not found:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS in {__file__}")
    return max(found)[1]


def _modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield ".".join(parts), path


def _imports(module: str, path: Path) -> set[str]:
    """The ``opendp_lite`` modules that ``module`` imports (resolved to module names)."""
    is_pkg = path.name == "__init__.py"
    package = module if is_pkg else module.rpartition(".")[0]
    known = {m for m, _ in _modules()}
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                out.add(sub if sub in known else target)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m == "opendp_lite" or m.startswith("opendp_lite.")} - {module}


GRAPH = {module: _imports(module, path) for module, path in _modules()}


def _in_package(module: str) -> bool:
    """``opendp_lite.x.y`` is inside the package ``opendp_lite.x`` (its own family)."""
    return module.count(".") >= 1


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_imports_never_run_up_the_layers(module: str) -> None:
    mine = _layer_of(module)
    upward = sorted(t for t in GRAPH[module] if t != "opendp_lite" and _layer_of(t) > mine)
    assert not upward, f"{module} (layer {mine}) imports higher layers: {upward}"


def test_no_import_cycles() -> None:
    """Tarjan's strongly connected components: every component must be a single module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH.get(v, ()):
            if w not in GRAPH or _is_parent(w, v):
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles: {cycles}"


def _is_parent(package: str, module: str) -> bool:
    """A family module importing its own package's ``__init__`` is not a cycle of concern."""
    return module.startswith(package + ".")


def test_the_checker_sees_an_upward_import_and_a_cycle() -> None:
    """Teeth: a module of a low layer importing a high one is flagged, and so is a cycle."""
    assert _layer_of("opendp_lite.domains") < _layer_of("opendp_lite.backends.dask")
    assert _layer_of("opendp_lite.core") < _layer_of("opendp_lite.transformations.sum")
    fake = {"opendp_lite.a": {"opendp_lite.b"}, "opendp_lite.b": {"opendp_lite.a"}}
    saved = dict(GRAPH)
    try:
        GRAPH.clear()
        GRAPH.update(fake)
        with pytest.raises(AssertionError, match="import cycles"):
            test_no_import_cycles()
    finally:
        GRAPH.clear()
        GRAPH.update(saved)
