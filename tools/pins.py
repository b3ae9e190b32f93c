"""Static dependency discovery for the proof pins (see :mod:`tools.proofs`).

The package is parsed with :mod:`ast` (never imported here).  A *unit* is one module-level
function (all its ``@overload`` variants together), one method, one class statement (its bases,
decorators and class-level assignments, without its methods), or one module-level assignment.
Closures and lambdas live inside their enclosing unit.

From a unit, every name and attribute chain its code mentions is resolved, through the package's
imports and re-exports, to other units, transitively:

* a name or ``module.attr`` chain that resolves to a package function, class or module-level
  constant pins that unit;
* a class that is pinned pins its class statement, every method it defines and (transitively)
  its package base classes: a class is pinned whole, so methods called on its instances
  (``plan.relax``, ``self._x()``) are covered without tracking types;
* ``obj.attr`` whose ``obj`` the analysis cannot type pins the methods named ``attr`` of every
  package class that is already pinned (over-approximation; covered by the rule above) and of
  every class that defines ``attr`` and nothing else in the package does (a unique method name
  is an unambiguous call target).

Type annotations are strings (every module uses ``from __future__ import annotations``), so
they pin nothing.  The result over-approximates the code a constructor's build, function and
map run (both branches of every ``if`` count), and is restricted to ``opendp_lite/``.

Each unit's digest is the SHA-256 of ``ast.unparse`` of its normalised tree: comments, blank
lines, line breaks, quotes and parentheses do not count (a formatting-only change flags
nothing); docstrings count with their whitespace collapsed (the map's formula is stated in the
docstring, so a changed formula flags the proof; re-wrapping it does not).  The digest does not
depend on the module the unit lives in: moving a function unchanged keeps its digest.
"""

from __future__ import annotations

import ast
import copy
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "opendp_lite"

#: Digest length in hex digits (per unit and combined).
DIGEST_LEN = 16


@dataclass
class Unit:
    """One pinnable piece of package code."""

    qualname: str
    module: str
    path: str
    nodes: list[ast.AST]
    #: for a class: the qualnames of its method units
    methods: list[str] = field(default_factory=list)
    #: for a class: its base expressions (resolved lazily)
    bases: list[ast.expr] = field(default_factory=list)
    is_class: bool = False
    _digest: str | None = None
    _snapshot: str | None = None

    @property
    def lineno(self) -> int:
        """The first line of the unit, its decorators included (as ``inspect.getsource``)."""
        return min(
            getattr(d, "lineno", 0)
            for n in self.nodes
            for d in [n, *getattr(n, "decorator_list", [])]
        )

    @property
    def end_lineno(self) -> int:
        return max(getattr(n, "end_lineno", 0) or 0 for n in self.nodes)

    @property
    def snapshot(self) -> str:
        """The normalised source: ``ast.unparse`` of the unit with docstrings folded."""
        if self._snapshot is None:
            self._snapshot = "\n\n".join(ast.unparse(_normalised(n)) for n in self.nodes) + "\n"
        return self._snapshot

    @property
    def digest(self) -> str:
        if self._digest is None:
            self._digest = hashlib.sha256(self.snapshot.encode("utf-8")).hexdigest()[:DIGEST_LEN]
        return self._digest


def _fold_docstring(body: list[ast.stmt]) -> None:
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body[0] = ast.Expr(ast.Constant(" ".join(body[0].value.value.split())))


def _normalised(node: ast.AST) -> ast.AST:
    """``node`` itself, or for a class a shallow copy without its methods (those are units of
    their own).  Docstrings were folded when the module was parsed (:func:`_fold_docstrings`)."""
    if isinstance(node, ast.ClassDef):
        new = copy.copy(node)
        new.body = [
            s for s in node.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
        ] or [ast.Pass()]
        return new
    return node


def _fold_docstrings(tree: ast.AST) -> None:
    """Collapse the whitespace of every docstring in ``tree``, in place."""
    for sub in ast.walk(tree):
        if isinstance(sub, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            _fold_docstring(sub.body)


@dataclass
class Module:
    name: str
    path: str
    is_package: bool
    tree: ast.Module
    #: name -> unit qualname (definitions in this module)
    defs: dict[str, str] = field(default_factory=dict)
    #: name -> ("module", modname) | ("from", modname, attr)
    imports: dict[str, tuple[str, ...]] = field(default_factory=dict)


def _abs_module(current: str, is_package: bool, level: int, module: str | None) -> str:
    if level == 0:
        return module or ""
    parts = current.split(".")
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)]
    base = ".".join(parts)
    return f"{base}.{module}" if module else base


def _import_bindings(
    stmts: Iterable[ast.AST], current: str, is_package: bool
) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for node in stmts:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    out[alias.asname] = ("module", alias.name)
                else:
                    top = alias.name.split(".")[0]
                    out[top] = ("module", top)
        elif isinstance(node, ast.ImportFrom):
            mod = _abs_module(current, is_package, node.level, node.module)
            for alias in node.names:
                if alias.name != "*":
                    out[alias.asname or alias.name] = ("from", mod, alias.name)
    return out


@lru_cache(maxsize=512)
def _parse_module(rel: str, text: str) -> tuple[Module, list[Unit]]:
    """One package file's module record and units (cached by path and text, so that an
    :class:`Index` with one file edited re-parses that file only)."""
    parts = list(Path(rel).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    tree = ast.parse(text, filename=rel)
    _fold_docstrings(tree)
    mod = Module(".".join(parts), rel, is_package, tree)
    units: dict[str, Unit] = {}

    def add(unit: Unit) -> None:
        if unit.qualname in units:
            units[unit.qualname].nodes.extend(unit.nodes)  # overloads, redefinitions
        else:
            units[unit.qualname] = unit

    top: list[ast.stmt] = list(tree.body)
    # module-level ``if``/``try`` blocks (TYPE_CHECKING imports, optional dependencies)
    flat: list[ast.stmt] = []
    while top:
        stmt = top.pop(0)
        if isinstance(stmt, ast.If):
            top[:0] = stmt.body + stmt.orelse
        elif isinstance(stmt, ast.Try):
            top[:0] = stmt.body + [s for h in stmt.handlers for s in h.body] + stmt.orelse
        else:
            flat.append(stmt)
    mod.imports = _import_bindings(flat, mod.name, mod.is_package)
    for stmt in flat:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            qn = f"{mod.name}.{stmt.name}"
            mod.defs[stmt.name] = qn
            add(Unit(qn, mod.name, mod.path, [stmt]))
        elif isinstance(stmt, ast.ClassDef):
            qn = f"{mod.name}.{stmt.name}"
            mod.defs[stmt.name] = qn
            cls = Unit(qn, mod.name, mod.path, [stmt], bases=list(stmt.bases), is_class=True)
            for sub in stmt.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    mq = f"{qn}.{sub.name}"
                    if mq not in cls.methods:
                        cls.methods.append(mq)
                    add(Unit(mq, mod.name, mod.path, [sub]))
            add(cls)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name) and n.id != "__all__":
                        qn = f"{mod.name}.{n.id}"
                        mod.defs[n.id] = qn
                        add(Unit(qn, mod.name, mod.path, [stmt]))
        elif not isinstance(stmt, (ast.Import, ast.ImportFrom)) and not _is_docstring(stmt):
            # a statement run at import (``register_backend(...)``, ``register_space(...)``):
            # pinned by the proofs whose code it calls (see Index.closure); named by its ordinal
            # so that moving it by a line keeps its name
            k = sum(1 for q in units if q.startswith(f"{mod.name}.<toplevel "))
            add(Unit(f"{mod.name}.<toplevel {k}>", mod.name, mod.path, [stmt]))
    return mod, list(units.values())


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


#: methods that change a container in place (a registry filled by a call)
_MUTATING = frozenset(
    {"append", "extend", "insert", "update", "setdefault", "add", "pop", "remove", "clear"}
)


class Index:
    """The parsed package: modules, units and the resolution of names to units."""

    def __init__(self, root: Path = ROOT, overrides: Mapping[str, str] | None = None) -> None:
        self.root = root
        self.modules: dict[str, Module] = {}
        self.units: dict[str, Unit] = {}
        #: method name -> qualnames of the methods so named
        self.methods_by_name: dict[str, list[str]] = {}
        overrides = overrides or {}
        for path in sorted((root / PACKAGE).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            text = overrides[rel] if rel in overrides else path.read_text(encoding="utf-8")
            mod, units = _parse_module(rel, text)
            self.modules[mod.name] = mod
            for unit in units:
                self.units[unit.qualname] = unit
                if unit.is_class:
                    for mq in unit.methods:
                        self.methods_by_name.setdefault(mq.rsplit(".", 1)[1], []).append(mq)
        self._deps: dict[str, frozenset[str]] = {}
        self._direct: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
        self._stores: dict[str, set[str]] = {}
        self._reverse: tuple[dict[str, set[str]], dict[str, set[str]]] | None = None

    # -- resolution -----------------------------------------------------------------------------

    def resolve(self, modname: str, name: str, _seen: frozenset[str] = frozenset()) -> str | None:
        """The unit qualname or ``"module:<name>"`` that ``name`` means in ``modname``."""
        key = f"{modname}:{name}"
        if key in _seen:
            return None
        _seen = _seen | {key}
        mod = self.modules.get(modname)
        if mod is None:
            return None
        if name in mod.defs:
            return mod.defs[name]
        if name in mod.imports:
            return self._resolve_binding(mod.imports[name], _seen)
        sub = f"{modname}.{name}"
        if sub in self.modules:
            return f"module:{sub}"
        return None

    def _resolve_binding(self, binding: tuple[str, ...], seen: frozenset[str]) -> str | None:
        if binding[0] == "module":
            return f"module:{binding[1]}" if binding[1] in self.modules else None
        _, src, attr = binding
        if f"{src}.{attr}" in self.modules:
            return f"module:{src}.{attr}"
        return self.resolve(src, attr, seen)

    def _expr_target(
        self, expr: ast.expr, mod: Module, local: dict[str, tuple[str, ...]]
    ) -> str | None:
        """What a ``Name``/``Attribute`` chain refers to, if it is package code."""
        if isinstance(expr, ast.Name):
            if expr.id in local:
                return self._resolve_binding(local[expr.id], frozenset())
            return self.resolve(mod.name, expr.id)
        if isinstance(expr, ast.Attribute):
            base = self._expr_target(expr.value, mod, local)
            if base is None:
                return None
            if base.startswith("module:"):
                return self.resolve(base[len("module:") :], expr.attr)
            unit = self.units.get(base)
            if unit is not None and unit.is_class:
                mq = f"{base}.{expr.attr}"
                if mq in self.units:
                    return mq
            return None
        return None

    def direct(self, qualname: str) -> tuple[frozenset[str], frozenset[str]]:
        """The units ``qualname``'s own code refers to, and the attribute names it reads on
        objects the analysis cannot type (``plan.relax``, ``self._x``).

        Also records in ``self._stores[qualname]`` the module-level names (assignment units)
        whose value it changes in place (``_BACKENDS[:] = ...``, ``_REGISTRY.append(...)``,
        ``global X; X = ...``)."""
        if qualname in self._direct:
            return self._direct[qualname]
        unit = self.units[qualname]
        mod = self.modules[unit.module]
        out: set[str] = set()
        attrs: set[str] = set()
        for node in unit.nodes:
            body: list[ast.AST]
            if isinstance(node, ast.ClassDef):
                body = [
                    s
                    for s in node.body
                    if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
                ]
                body += list(node.bases) + list(node.decorator_list)
                body += [kw.value for kw in node.keywords]
            else:
                body = [node]
            stmts = [s for b in body for s in ast.walk(b)]
            local = _import_bindings(
                (s for s in stmts if isinstance(s, (ast.Import, ast.ImportFrom))),
                mod.name,
                mod.is_package,
            )
            stored: list[ast.expr] = []
            for sub in stmts:
                if isinstance(sub, ast.Global):
                    stored += [ast.Name(n) for n in sub.names]
                elif isinstance(sub, ast.Subscript) and isinstance(sub.ctx, (ast.Store, ast.Del)):
                    stored.append(sub.value)
                elif (
                    isinstance(sub, ast.Call)
                    and isinstance(sub.func, ast.Attribute)
                    and sub.func.attr in _MUTATING
                ):
                    stored.append(sub.func.value)
            for e in stored:
                target = self._expr_target(e, mod, local)
                if target is not None and target in self.units and target != qualname:
                    self._stores.setdefault(qualname, set()).add(target)
            for sub in stmts:
                if isinstance(sub, (ast.Name, ast.Attribute)):
                    target = self._expr_target(sub, mod, local)
                    if target is not None and not target.startswith("module:"):
                        out.add(target)
                    elif target is None and isinstance(sub, ast.Attribute):
                        attrs.add(sub.attr)
                elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                    # getattr(obj, "name") and dispatch tables keyed by method name
                    if sub.value.isidentifier():
                        attrs.add(sub.value)
        # a method pins its class statement (class attributes, bases)
        owner = qualname.rsplit(".", 1)[0]
        if owner in self.units and self.units[owner].is_class:
            out.add(owner)
        out.discard(qualname)
        result = (frozenset(out), frozenset(attrs))
        self._direct[qualname] = result
        return result

    def _class_methods(self, cls: str, seen: set[str] | None = None) -> list[str]:
        """The methods of ``cls`` and of its package base classes."""
        seen = seen if seen is not None else set()
        if cls in seen or cls not in self.units:
            return []
        seen.add(cls)
        unit = self.units[cls]
        out = list(unit.methods)
        mod = self.modules[unit.module]
        for base in unit.bases:
            target = self._expr_target(base, mod, {})
            if target is not None and target in self.units and self.units[target].is_class:
                out += self._class_methods(target, seen)
        return out

    def reverse(self) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
        """``(mutators, import-time users)``: for a module-level name, the units that change it
        in place; for any unit, the import-time statements that refer to it."""
        if self._reverse is None:
            mutators: dict[str, set[str]] = {}
            users: dict[str, set[str]] = {}
            for q in self.units:
                refs, _ = self.direct(q)
                for x in self._stores.get(q, ()):
                    mutators.setdefault(x, set()).add(q)
                if ".<toplevel " in q:
                    for r in refs:
                        users.setdefault(r, set()).add(q)
            self._reverse = (mutators, users)
        return self._reverse

    def closure(self, qualname: str) -> frozenset[str]:
        """``qualname`` and every unit it reaches, transitively.

        A reached class contributes its class statement, its dunder methods (called
        implicitly: ``__init__``, ``__call__``, ``__rshift__``, ...) and every method whose name
        some reached unit reads as an attribute of an untyped object (or names in a string,
        as ``getattr`` does), in it or its package base classes.
        """
        if qualname in self._deps:
            return self._deps[qualname]
        seen: set[str] = set()
        attrs: set[str] = set()
        classes: set[str] = set()
        todo = [qualname]
        while True:
            while todo:
                q = todo.pop()
                if q in seen:
                    continue
                seen.add(q)
                refs, names = self.direct(q)
                attrs |= names
                # a registry the code reads is pinned with what fills it: the functions that
                # change it in place and the import-time statements that call them
                mutators, users = self.reverse()
                todo.extend(mutators.get(q, ()))
                todo.extend(users.get(q, ()))
                if self.units[q].is_class:
                    classes.add(q)
                todo.extend(r for r in refs if r not in seen)
            for cls in list(classes):
                for m in self._class_methods(cls):
                    name = m.rsplit(".", 1)[1]
                    if m not in seen and (
                        name in attrs or (name.startswith("__") and name.endswith("__"))
                    ):
                        todo.append(m)
            if not todo:
                break
        result = frozenset(seen)
        self._deps[qualname] = result
        return result
