"""Proof headers and pins: each public constructor's proof ``docs/proofs/<name>.md`` opens with a
machine-checked header, and is pinned to all the code and proofs its argument rests on.

Usage (``python -m tools.proofs --help`` prints this)::

    python -m tools.proofs check            list stale proofs and what changed; exit 1 if any
    python -m tools.proofs diff NAME...     unified diff of each proof's pinned code and cited
                                            proofs since it was stamped
    python -m tools.proofs stamp NAME...    after reviewing: record the current pins of the named
                                            proofs (names are required; an unknown name is an
                                            error and nothing is written)
    python -m tools.proofs deps NAME...     list what each proof is pinned to
    python -m tools.proofs header NAME...   print a fresh header skeleton to start a proof from
    python -m tools.proofs list             list the public constructors

``python -m tools.proofs make_x`` (= ``header make_x``) and ``python -m tools.proofs --stamp
make_x`` (= ``stamp make_x``) keep working.

Header (front matter, valid YAML, every value a quoted string)::

    ---
    constructor: "make_laplace"
    module: "opendp_lite.measurements.noise"
    signature: "(input_domain: 'Domain[Any]', ...) -> 'Measurement[...]'"
    input_domain: "atom_domain(T) | vector_domain(atom_domain(T))"
    input_metric: "absolute_distance(T) | l1_distance(T)"
    output: "max_divergence()"
    map: "ε(d_in) = (d_in + penalty_k) / scale, rounded up"
    source: "3f1c0a9b27de"
    ---

``signature`` is ``str(inspect.signature(fn))`` exactly.  ``source`` is the combined digest of
the proof's pins (:func:`dependencies`): every package function, method, class statement and
module-level constant the constructor's code reaches, transitively (computed statically by
:mod:`tools.pins`, so untaken branches count), and every lemma or sampler proof it cites or whose
sampler code it runs.  Each pin's digest hashes a normalised AST, so a formatting-only change flags
nothing.  ``docs/proofs/_pins/<name>.json`` records each pin's digest at stamp time, and
``docs/proofs/_pins/snapshots.json`` the normalised text of each, so that ``diff`` shows what
changed since the proof was reviewed.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import inspect
import json
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from tools.pins import ROOT, Index

PROOFS = ROOT / "docs" / "proofs"
PINS = PROOFS / "_pins"
SNAPSHOTS = PINS / "snapshots.json"
SOURCE_KEY = "source"
REQUIRED_KEYS = (
    "constructor",
    "module",
    "signature",
    "input_domain",
    "input_metric",
    "output",
    "map",
    SOURCE_KEY,
)
HEADER_ORDER = REQUIRED_KEYS

# -- constructors -------------------------------------------------------------------------------


def public_constructors() -> Iterator[tuple[str, Callable[..., Any]]]:
    """Every public ``make_*`` constructor declared with ``@constructor`` (the registry
    ``opendp_lite._registry.CONSTRUCTORS``) in ``dp.t``, ``dp.m``, ``dp.c`` and the extras
    (``dp.numpy``; ``dp.sklearn``'s modules when scikit-learn is installed), family by family."""
    import opendp_lite.prelude  # noqa: F401 - declares the families' constructors and dp.numpy's
    from opendp_lite._registry import CONSTRUCTORS, family

    try:
        from opendp_lite.extras.sklearn import decomposition, linear_model  # noqa: F401
    except ImportError:  # pragma: no cover - the optional extra is not installed
        pass
    order = ("t", "m", "c", "numpy", "sklearn")
    makes = [
        (order.index(family(fn)), name, fn)
        for name, fn in list(CONSTRUCTORS.items())
        if name.startswith("make_") and family(fn) in order
    ]
    for _, name, fn in sorted(makes, key=lambda m: m[:2]):
        yield name, fn


@lru_cache(maxsize=1)
def _constructors() -> dict[str, Callable[..., Any]]:
    return dict(public_constructors())


def signature_of(fn: Callable[..., Any]) -> str:
    """The signature string a proof header must quote."""
    return str(inspect.signature(fn))


def _unit_of(fn: Callable[..., Any]) -> str:
    fn = inspect.unwrap(fn)
    return f"{fn.__module__}.{fn.__qualname__}"


# -- headers ------------------------------------------------------------------------------------


def _legacy_header(block: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in block.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith(" "):
            out[key.strip()] = value.strip()
    return out


def split_front_matter(text: str) -> tuple[str | None, str]:
    """``(front matter, body)`` of a markdown file; ``None`` if it has no front matter."""
    if not text.startswith("---\n"):
        return None, text
    end = text.find("\n---\n", 3)
    if end < 0:
        return None, text
    return text[4 : end + 1], text[end + 5 :]


def parse_header(text: str) -> dict[str, str]:
    """The ``key: value`` pairs of a proof's front matter (empty if there is none).

    The front matter is YAML; a header that is not valid YAML (the old unquoted format) is
    read line by line, so that a proof written in it still parses.
    """
    block, _ = split_front_matter(text)
    if block is None:
        return {}
    # PyYAML (installed with mkdocs) ships no type stubs: imported by name, it is typed Any
    yaml = importlib.import_module("yaml")
    try:
        data = yaml.safe_load(block)
    except yaml.YAMLError:  # the old unquoted format (e.g. ": " inside a signature)
        return _legacy_header(block)
    if not isinstance(data, dict):
        return _legacy_header(block)
    return {str(k): "" if v is None else str(v) for k, v in data.items()}


def read_header(path: Path) -> dict[str, str]:
    """Parse the front matter of the proof at ``path`` (``{}`` if it has none)."""
    return parse_header(Path(path).read_text(encoding="utf-8"))


def _quote(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def format_header(header: Mapping[str, str]) -> str:
    """Front matter with every value a double-quoted YAML string (keys in the usual order)."""
    keys = [k for k in HEADER_ORDER if k in header] + [k for k in header if k not in HEADER_ORDER]
    lines = ["---"] + [f"{k}: {_quote(str(header[k]))}" for k in keys] + ["---"]
    return "\n".join(lines) + "\n"


# -- pins ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Dep:
    """One thing a proof is pinned to.

    ``kind`` is ``"code"`` (a package function, method, class statement or module-level
    assignment; ``qualname`` like ``opendp_lite.transformations.sum._float_sum``) or ``"doc"``
    (a lemma or sampler proof; ``qualname`` is its repo-relative path).  ``path`` is repo-relative;
    ``lineno``/``end_lineno`` delimit the code (a doc: its whole file).
    """

    qualname: str
    path: str
    lineno: int
    end_lineno: int
    kind: str
    digest: str


_INDEX: Index | None = None
#: repo-relative path -> text that replaces the file's (see :func:`overridden`)
_OVERRIDES: dict[str, str] = {}


def index(refresh: bool = False) -> Index:
    """The parsed package (cached; ``refresh`` re-reads the files)."""
    global _INDEX
    if _INDEX is None or refresh:
        _INDEX = Index(ROOT, _OVERRIDES)
        _clear_caches()
    return _INDEX


def _read(path: Path) -> str:
    rel = path.resolve().relative_to(ROOT).as_posix()
    return _OVERRIDES[rel] if rel in _OVERRIDES else path.read_text(encoding="utf-8")


@contextmanager
def overridden(texts: Mapping[str, str]) -> Iterator[None]:
    """Compute pins as if the repo-relative files in ``texts`` had that text (nothing is
    written): how ``tools.mutations`` and the tests edit code and proofs in memory."""
    global _INDEX
    saved, saved_index = dict(_OVERRIDES), _INDEX
    _OVERRIDES.update(texts)
    try:
        index(refresh=True)
        yield
    finally:
        _OVERRIDES.clear()
        _OVERRIDES.update(saved)
        _INDEX = saved_index
        _clear_caches()


def _clear_caches() -> None:
    for f in (_doc_mentions, _doc_digest_text, _cited_docs, supporting_docs):
        f.cache_clear()


@cache
def _doc_digest_text(path: Path) -> str:
    """A doc's body (front matter dropped) with trailing spaces stripped: what is snapshotted."""
    _, body = split_front_matter(_read(path))
    return "\n".join(line.rstrip() for line in body.strip().splitlines()) + "\n"


def _doc_digest(text: str) -> str:
    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()[:16]


def constructor_proofs() -> set[str]:
    return {f"{name}.md" for name in _constructors()}


_LINK = re.compile(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)")
_PATH_MENTION = re.compile(r"docs/proofs/([\w./-]+\.md)")


@cache
def _cited_docs(path: Path) -> frozenset[Path]:
    """The non-constructor proofs (lemmas, sampler proofs) that ``path`` links to or names."""
    text = _read(path)
    out: set[Path] = set()
    cands = [(path.parent / t) for t in _LINK.findall(text)]
    cands += [PROOFS / t for t in _PATH_MENTION.findall(text)]
    skip = constructor_proofs()
    for cand in cands:
        cand = cand.resolve()
        if cand.is_file() and PROOFS in cand.parents and cand.name not in skip:
            out.add(cand)
    return frozenset(out)


@lru_cache(maxsize=1)
def supporting_docs() -> list[Path]:
    """Every proof under ``docs/proofs`` that is not a constructor's: lemmas, sampler proofs."""
    skip = constructor_proofs()
    return sorted(
        p
        for p in PROOFS.rglob("*.md")
        if p.name not in skip and PINS not in p.parents and not p.name.startswith(".")
    )


_TICK = re.compile(r"`([A-Za-z_][\w.]*)")


@cache
def _doc_mentions(path: Path) -> frozenset[str]:
    """The sampler code a supporting proof is *about*: the units of ``opendp_lite.samplers``
    (the randomness source ``rng`` aside) its text names in backticks (``fast.int_noise``,
    ``_float_out``): a dotted name by its suffix, a bare name if exactly one unit has it.

    A constructor whose code reaches one of them rests on that proof, cited or not.  Names of
    generic code (``vector_domain``, ``_arith.up``) do not count: a lemma that mentions them is
    pinned only by the proofs that cite it."""
    ix = index()
    by_last: dict[str, list[str]] = {}
    for qn in ix.units:
        if not qn.startswith("opendp_lite.samplers.") or qn.startswith("opendp_lite.samplers.rng."):
            continue
        by_last.setdefault(qn.rsplit(".", 1)[1], []).append(qn)
    out: set[str] = set()
    for ident in set(_TICK.findall(_read(path))):
        parts = ident.split(".")
        cands = by_last.get(parts[-1], [])
        if len(parts) > 1:
            out.update(c for c in cands if c.endswith("." + ident))
        elif len(cands) == 1 and len(ident) > 3:
            out.add(cands[0])
    return frozenset(out)


def _doc_deps(proof: Path, code: frozenset[str]) -> set[Path]:
    """Supporting proofs ``proof`` cites (transitively), and those about code it runs."""
    docs: set[Path] = set()
    todo = list(_cited_docs(proof))
    for doc in supporting_docs():
        if _doc_mentions(doc) & code:
            todo.append(doc.resolve())
    while todo:
        d = todo.pop()
        if d not in docs:
            docs.add(d)
            todo.extend(_cited_docs(d))
    return docs


def code_units(name: str) -> frozenset[str]:
    """The qualnames of the package code ``name``'s proof is pinned to."""
    fns = _constructors()
    if name not in fns:
        raise KeyError(name)
    ix = index()
    fn = fns[name]
    unit = _unit_of(fn)
    if unit not in ix.units:
        raise LookupError(f"{name}: its definition {unit} is not a module-level def")
    out = ix.closure(unit)
    wrapper = _wrapper_unit(fn)
    if wrapper is not None:
        out = out | ix.closure(wrapper)
    return out


def _wrapper_unit(fn: Callable[..., Any]) -> str | None:
    """The unit whose code wraps ``fn`` if the public object is a wrapper applied at import
    (``serialization``'s call recording), found from the wrapper's code object."""
    if fn is inspect.unwrap(fn):
        return None
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    try:
        rel = Path(code.co_filename).resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return None
    line = code.co_firstlineno
    spans = [
        (u.end_lineno - u.lineno, q)
        for q, u in index().units.items()
        if u.path == rel and u.lineno <= line <= u.end_lineno
    ]
    return min(spans)[1] if spans else None


def dependencies(constructor_name: str) -> list[Dep]:
    """Everything the proof of ``constructor_name`` is pinned to: code units (sorted by
    qualname), then supporting proofs (sorted by path)."""
    ix = index()
    code = code_units(constructor_name)
    out = []
    for qn in sorted(code):
        u = ix.units[qn]
        out.append(Dep(qn, u.path, u.lineno, u.end_lineno, "code", u.digest))
    for doc in sorted(_doc_deps(PROOFS / f"{constructor_name}.md", code)):
        rel = doc.relative_to(ROOT).as_posix()
        n = len(_read(doc).splitlines())
        out.append(Dep(rel, rel, 1, n, "doc", _doc_digest(_doc_digest_text(doc))))
    return out


def snapshot(dep: Dep) -> str:
    """The normalised text ``dep``'s digest is computed from (what ``diff`` compares)."""
    if dep.kind == "doc":
        return _doc_digest_text(ROOT / dep.path)
    return index().units[dep.qualname].snapshot


def combined(deps: list[Dep]) -> str:
    """The ``source:`` digest: 12 hex digits over every pin's kind, qualname and digest."""
    text = "\n".join(f"{d.kind} {d.qualname} {d.digest}" for d in sorted(deps, key=_key))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _key(d: Dep) -> tuple[str, str]:
    return (d.kind, d.qualname)


def source_hash(fn: Callable[..., Any]) -> str:
    """The combined pin digest of a public constructor (by its function object)."""
    for name, f in _constructors().items():
        if f is fn:
            return combined(dependencies(name))
    raise KeyError(f"{fn!r} is not a public constructor")


# -- lock files ---------------------------------------------------------------------------------


def lock_path(name: str) -> Path:
    return PINS / f"{name}.json"


def read_lock(name: str) -> dict[str, Any] | None:
    """``{"source": ..., "deps": {qualname: digest}}`` as stamped, or ``None``.

    On disk, code pins are grouped by module (``{"code": {module: {local name: digest}}}``)
    and doc pins by path (``{"docs": {path: digest}}``), to keep the files small."""
    path = lock_path(name)
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    deps = {f"{m}.{local}": d for m, units in data["code"].items() for local, d in units.items()}
    deps.update(data["docs"])
    return {"source": data["source"], "deps": deps}


def _lock_data(name: str, source: str, deps: list[Dep]) -> dict[str, Any]:
    ix = index()
    code: dict[str, dict[str, str]] = {}
    docs: dict[str, str] = {}
    for d in deps:
        if d.kind == "doc":
            docs[d.qualname] = d.digest
        else:
            mod = ix.units[d.qualname].module
            code.setdefault(mod, {})[d.qualname[len(mod) + 1 :]] = d.digest
    return {"constructor": name, "source": source, "code": code, "docs": docs}


def _read_snapshots() -> dict[str, str]:
    if not SNAPSHOTS.is_file():
        return {}
    data: dict[str, str] = json.loads(SNAPSHOTS.read_text(encoding="utf-8"))
    return data


def _write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8"
    )


@dataclass(frozen=True)
class Status:
    """Why a proof is stale (empty lists and ``ok`` if it is not)."""

    name: str
    signature_ok: bool
    source_ok: bool
    changed: list[str]
    added: list[str]
    removed: list[str]
    problems: list[str]

    @property
    def ok(self) -> bool:
        return self.signature_ok and self.source_ok and not self.problems


def status(name: str) -> Status:
    """Compare ``name``'s proof header and lock with the current code and proofs."""
    fn = _constructors()[name]
    path = PROOFS / f"{name}.md"
    problems: list[str] = []
    if not path.is_file():
        return Status(name, False, False, [], [], [], [f"missing proof {path}"])
    header = parse_header(_read(path))
    deps = dependencies(name)
    now = {d.qualname: d.digest for d in deps}
    lock = read_lock(name)
    before: dict[str, str] = {}
    if lock is None:
        problems.append(f"no lock file {lock_path(name).relative_to(ROOT)}")
    else:
        before = lock["deps"]
        if lock.get("source") != header.get(SOURCE_KEY):
            problems.append("the lock file and the header's source: disagree")
    changed = sorted(q for q in now if q in before and before[q] != now[q])
    added = sorted(set(now) - set(before))
    removed = sorted(set(before) - set(now))
    return Status(
        name,
        header.get("signature") == signature_of(fn),
        header.get(SOURCE_KEY) == combined(deps),
        changed,
        added if lock is not None else [],
        removed,
        problems,
    )


def stale() -> list[Status]:
    return [s for s in (status(n) for n in sorted(_constructors())) if not s.ok]


def describe(st: Status) -> str:
    lines = [f"{st.name}: stale"]
    if not st.signature_ok:
        fn = _constructors()[st.name]
        lines.append(f"  signature changed; the header must read: signature: {signature_of(fn)}")
    lines += [f"  {p}" for p in st.problems]
    lines += [f"  changed: {q}" for q in st.changed]
    lines += [f"  new pin: {q}" for q in st.added]
    lines += [f"  dropped pin: {q}" for q in st.removed]
    return "\n".join(lines)


def diff(name: str) -> str:
    """A unified diff of every pin of ``name`` that changed since its proof was stamped."""
    lock = read_lock(name) or {"deps": {}}
    snaps = _read_snapshots()
    out: list[str] = []
    deps = {d.qualname: d for d in dependencies(name)}
    for qn in sorted(set(deps) | set(lock["deps"])):
        old = lock["deps"].get(qn)
        new = deps.get(qn)
        if old is not None and new is not None and old == new.digest:
            continue
        a = snaps.get(old, "") if old else ""
        b = snapshot(new) if new else ""
        if old is not None and old not in snaps:
            out.append(f"# {qn}: no snapshot of the stamped version ({old})\n")
        label = qn if qn.endswith(".md") else f"{qn} ({new.path if new else 'removed'})"
        out.extend(
            difflib.unified_diff(
                a.splitlines(keepends=True),
                b.splitlines(keepends=True),
                fromfile=f"stamped/{label}" if old else "/dev/null",
                tofile=f"now/{label}" if new else "/dev/null",
            )
        )
    return "".join(out)


def stamp(*names: str) -> list[Status]:
    """Record the current pins of the named proofs in their headers and lock files.

    Run it only after reviewing each proof against ``diff``.  Returns what had changed.
    """
    snaps = _read_snapshots()
    out = []
    for name in names:
        out.append(status(name))
        path = PROOFS / f"{name}.md"
        deps = dependencies(name)
        text = path.read_text(encoding="utf-8")
        block, body = split_front_matter(text)
        header = parse_header(text) if block is not None else {}
        header[SOURCE_KEY] = combined(deps)
        new = format_header(header) + body
        if new != text:
            path.write_text(new, encoding="utf-8")
        for d in deps:
            snaps[d.digest] = snapshot(d)
        _write_json(lock_path(name), _lock_data(name, header[SOURCE_KEY], deps))
    # keep only the snapshots some lock refers to
    used = {
        digest
        for p in PINS.glob("*.json")
        if p != SNAPSHOTS
        for digest in (read_lock(p.stem) or {"deps": {}})["deps"].values()
    }
    _write_json(SNAPSHOTS, {k: v for k, v in snaps.items() if k in used})
    return out


def header_for(name: str, fn: Callable[..., Any]) -> str:
    """A fresh header for ``fn``: the computed fields (module, signature, and ``source`` if the
    proof exists) now; the hand-written ones from the proof's header, or ``TODO``."""
    path = PROOFS / f"{name}.md"
    old = read_header(path) if path.is_file() else {}
    fields = {k: old.get(k, "TODO") for k in ("input_domain", "input_metric", "output", "map")}
    return format_header(
        {
            "constructor": name,
            "module": fn.__module__,
            "signature": signature_of(fn),
            **fields,
            SOURCE_KEY: combined(dependencies(name)) if path.is_file() else "",
        }
    )


# -- command line -------------------------------------------------------------------------------

COMMANDS = ("check", "diff", "stamp", "deps", "header", "list")


def _usage() -> str:
    doc = __doc__ or ""
    return doc.split("Header (front matter")[0].strip() + "\n"


def _names(args: list[str], cmd: str) -> list[str] | None:
    if not args:
        print(f"tools.proofs {cmd}: name the constructors (no bulk {cmd})", file=sys.stderr)
        return None
    fns = _constructors()
    unknown = [a for a in args if a not in fns]
    if unknown:
        print(f"tools.proofs {cmd}: unknown constructor(s): {', '.join(unknown)}", file=sys.stderr)
        return None
    return list(dict.fromkeys(args))


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(_usage(), end="")
        return 0 if argv else 2
    if argv[0] == "--stamp":
        cmd, args = "stamp", argv[1:]
    elif argv[0] in COMMANDS:
        cmd, args = argv[0], argv[1:]
    elif argv[0].startswith("-"):
        print(f"tools.proofs: unknown option {argv[0]}\n\n{_usage()}", file=sys.stderr, end="")
        return 2
    else:
        cmd, args = "header", argv
    if cmd == "check":
        bad = stale()
        for st in bad:
            print(describe(st))
        if bad:
            names = " ".join(s.name for s in bad)
            print(
                f"\n{len(bad)} stale proof(s). Review each (python -m tools.proofs diff NAME), "
                f"then: python -m tools.proofs stamp {names}"
            )
            return 1
        print(f"all {len(_constructors())} proofs are current")
        return 0
    if cmd == "list":
        print("\n".join(sorted(_constructors())))
        return 0
    wanted = _names(args, cmd)
    if wanted is None:
        return 2
    if cmd == "stamp":
        for st in stamp(*wanted):
            what = (
                "already current"
                if st.ok
                else f"{len(st.changed)} changed, {len(st.added)} new, "
                f"{len(st.removed)} dropped pins"
            )
            print(f"stamped {st.name}: {combined(dependencies(st.name))} ({what})")
            for q in st.changed:
                print(f"  reviewed change: {q}")
        return 0
    for name in wanted:
        if cmd == "header":
            print(header_for(name, _constructors()[name]))
        elif cmd == "deps":
            for d in dependencies(name):
                print(f"{d.kind} {d.digest} {d.qualname} ({d.path}:{d.lineno}-{d.end_lineno})")
        elif cmd == "diff":
            text = diff(name)
            print(
                f"== {name}: "
                + (
                    "pinned code and proofs changed since the stamp"
                    if text
                    else "no change since the stamp"
                )
            )
            print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
