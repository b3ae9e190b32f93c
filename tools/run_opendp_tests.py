# ruff: noqa: S603, S607  (runs git, tar and pytest on a local mirror's tests)
"""Run OpenDP's own Python tests against opendp_lite, and write what happens.

OpenDP's test suite (``python/test`` of the OpenDP repository) is a measuring stick for "OpenDP
code runs unchanged, only the import rewritten".  This tool reads the tests from a local git
mirror of the repository into a temporary directory (it copies nothing into this repository),
runs them twice, each run in its own process:

* as they are, against the installed ``opendp`` (0.16), which gives the tests that pass there;
* with only the imports rewritten (``import opendp.prelude as dp`` -> ``import
  opendp_lite.prelude as dp``, ``from opendp.x import y`` -> ``from opendp_lite.x import y``,
  ``import opendp`` -> ``import opendp_lite as opendp``), against this repository.  Each
  top-level ``from opendp_lite... import name`` is wrapped so that a missing name fails only the
  tests that use it, not the whole file (OpenDP's test helper ``import_optional_dependency``,
  which files call at module level, is provided by the runner instead).

and writes a report with test names, outcomes and reasons only::

    python tools/run_opendp_tests.py /work/.mirror/opendp+opendp/repo --ref HEAD \\
        --out docs/opendp-tests-report.md

Files about Polars (and ``mbi``, which needs it) are left out.  Each test that passes on OpenDP
but not here gets a category from :data:`RULES` (keyed by test name or error text).

``--polars`` runs OpenDP's Polars tests instead: ``test_polars.py``, ``polars/``, and the
Polars cases of the other files (:func:`polars_cases`: the tests whose code uses Polars, a
frame domain, a margin or an identifier unit).  OpenDP's side runs in ``--opendp-python`` (an
environment whose Polars OpenDP supports: 0.16 pins 1.36.1); opendp_lite's side runs in each
``--lite-python`` (by default ``/work/venv`` with Polars 2.x and ``/work/venv136`` with
1.36), and the report (``docs/opendp-polars-report.md``) gives each test's outcome on each::

    python tools/run_opendp_tests.py /work/.mirror/opendp+opendp/repo --polars \\
        --out docs/opendp-polars-report.md
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

EXCLUDE = re.compile(r"polars|mbi")
TIMEOUT = 1800
#: the environments of ``--polars`` (OpenDP 0.16 works on Polars 1.36 only)
OPENDP_PYTHON = "/work/venv136/bin/python"
LITE_PYTHONS = ("/work/venv/bin/python", "/work/venv136/bin/python")

# ----------------------------------------------------------------------------------------------
# rewriting the tests (pure functions, tested in tests/docs/test_tests_tool.py)

_BARE = re.compile(r"^(\s*)import opendp(?=\s*(?:#.*)?$)", re.MULTILINE)
_DOTTED = re.compile(r"^(\s*(?:from|import)\s+)opendp(?=[\s.])", re.MULTILINE)


def rewrite(code: str) -> str:
    """Only the imports change: ``opendp`` becomes ``opendp_lite`` (and a bare ``import opendp``
    becomes ``import opendp_lite as opendp``, so ``opendp.x`` still resolves)."""
    code = _BARE.sub(r"\1import opendp_lite as opendp", code)
    return _DOTTED.sub(r"\1opendp_lite", code)


_STUB = '''
class _Missing:
    """A name opendp_lite does not have: using it fails the test that uses it."""

    def __init__(self, name):
        self._n = name

    def __getattr__(self, a):
        if a.startswith("__"):
            raise AttributeError(a)
        raise ImportError(f"opendp_lite has no {self._n!r}")

    def __call__(self, *a, **k):
        raise ImportError(f"opendp_lite has no {self._n!r}")

    def __repr__(self):
        return f"<missing {self._n}>"


def _import_optional_dependency(name, raise_error=True):
    """OpenDP's test helper (``opendp._lib``): import a module the test needs."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        if raise_error:
            raise
        return None
'''

#: test helpers of OpenDP's private modules that the test files call at module level (so a
#: stub would stop the whole file from collecting): the runner provides them
_HELPERS = {"import_optional_dependency": "_import_optional_dependency"}


def isolate(code: str) -> str:
    """Wrap each top-level ``from opendp_lite... import a, b`` so that a missing name becomes a
    stub that fails only the tests that use it (the file still collects)."""
    tree = ast.parse(code)
    lines = code.splitlines()
    edits: list[tuple[int, int, str]] = []
    for node in tree.body:
        if not (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("opendp_lite")):
            continue
        body = []
        for a in node.names:
            if a.name == "*":
                body.append(f"try:\n    from {node.module} import *\nexcept Exception:\n    pass")
                continue
            nm = a.asname or a.name
            fallback = _HELPERS.get(a.name, f"_Missing({nm!r})")
            body.append(
                f"try:\n    from {node.module} import {a.name} as {nm}\n"
                f"except Exception:\n    {nm} = {fallback}"
            )
        edits.append((node.lineno, node.end_lineno or node.lineno, "\n".join(body)))
    if not edits:
        return code
    for start, end, text in sorted(edits, reverse=True):
        lines[start - 1 : end] = text.splitlines()
    insert_at = 0  # after a module docstring and `from __future__` imports
    for i, node in enumerate(tree.body):
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            insert_at = node.end_lineno or node.lineno
        elif i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            insert_at = node.end_lineno or node.lineno
    lines[insert_at:insert_at] = _STUB.splitlines()
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------------------------
# which tests are OpenDP's Polars tests (pure functions, tested in tests/docs/test_tests_tool.py)

#: a test whose code (or parameters) matches is a Polars case
POLARS_CASE = re.compile(
    r"\bpl\.|polars|[Ll]azy[Ff]rame|series_domain|wild_expr_domain|with_margin|frame_distance"
    r"|FrameDistance|enum_domain|dp\.datetime_domain|\bMargin\b|\bBound\b|_get_bound"
    r"|identifier_distance|make_private_expr|make_stable_expr|\bdp\.len\("
)
#: files that are all Polars cases
POLARS_FILES = re.compile(r"(^|/)test_polars\.py$|(^|/)polars/")


def polars_cases(path: str, code: str) -> dict[str, str]:
    """The Polars cases of a test file: test function name -> ``"all"`` (every case of it) or
    ``"params"`` (only the parametrized cases whose id matches :data:`POLARS_CASE` or names a
    frame/series/expression domain: Polars appears only in the parameter list)."""
    tree = ast.parse(code)
    whole = bool(POLARS_FILES.search(path))
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if not node.name.startswith("test"):
            continue
        if whole:
            out[node.name] = "all"
            continue
        body = "\n".join(ast.get_source_segment(code, b) or "" for b in node.body)
        decos = "\n".join(ast.get_source_segment(code, d) or "" for d in node.decorator_list)
        if POLARS_CASE.search(body):
            out[node.name] = "all"
        elif POLARS_CASE.search(decos):
            out[node.name] = "params"
    return out


_PARAM_ID = re.compile(r"SeriesDomain|FrameDomain|WildExprDomain|ExprDomain|FrameDistance|Margin")


def is_polars_case(node_id: str, cases: dict[str, dict[str, str]]) -> bool:
    """Whether the pytest ``node_id`` is one of the Polars ``cases`` (by file)."""
    path, _, rest = node_id.partition("::")
    name, _, param = rest.partition("[")
    mode = cases.get(path, {}).get(name.split("::")[-1])
    if mode == "all":
        return True
    return mode == "params" and bool(_PARAM_ID.search(param) or POLARS_CASE.search(param))


# ----------------------------------------------------------------------------------------------
# why a test that passes on OpenDP fails here

RUST = "OpenDP Rust internals"
POLARS = "Polars / identifier units"
DOC = "documented difference"
NAN = "pending NaN default"
PORT = "OpenDP 0.16 extra not ported"
REPO = "OpenDP's repository and environment"
GAP = "open gap"
CATEGORIES = (DOC, NAN, RUST, POLARS, REPO, PORT, GAP)

_D = "differences.md"
_T = f"{_D}#the-dp-table-api-polars-queries"
_U = f"{_D}#privacy-units-by-person"
#: (category, alternatives, note): the first rule one of whose regular expressions matches
#: ``"<node id> :: <error>"`` decides.  A note may link a section of docs/differences.md.
RULES: list[tuple[str, tuple[str, ...], str]] = [
    # -- Polars and identifier-level units
    (
        POLARS,
        (
            "identifier",
            "polars",
            "lazyframe",
            "series_domain",
            "frame_distance",
            r"\bBound\b",
            "Margin",
            "_get_bound",
            "test_df_",
            "then_df_",
            "FUZZY_DF",
            "test_unit_of",
            "test_extras_object",
        ),
        "needs OpenDP's Polars integration (not in opendp_lite)",
    ),
    # -- bounded float domains hold no NaN here (and say so)
    (
        DOC,
        ("a bounded domain cannot admit NaN", "test_new_domain"),
        f"[bounded float domains exclude NaN]({_D}#types)",
    ),
    # -- waiting for the NaN default of atom_domain(T=float)
    (
        NAN,
        (
            "make_impute_constant needs elements that can be null",
            "NaN is not a member",
            r"AtomDomain\(nan=true, T=f64\) != AtomDomain\(T=f64\)",
            "test_cast_impute",
            "test_cast_drop_null",
            "test_cast_default",
            "test_transformation_release_error",
        ),
        "`atom_domain(T=float)` excludes NaN here; making NaN the default (as in OpenDP) is "
        "under way",
    ),
    # -- documented differences
    (
        DOC,
        (r"test_(?:laplace|gaussian)_threshold", "test_make_count_by_ptr"),
        f"[the threshold mechanisms' δ]({_D}#maps-that-differ)",
    ),
    (
        DOC,
        (r"test_accuracy_to_discrete", "test_fix_delta", "test_cast_zcdp_approxdp"),
        f"[printed losses and scales are rounded up]({_D}#sampling-and-rounding)",
    ),
    (
        DOC,
        ("test_gaussian_curve", "test_lipschitz_mul_float"),
        f"[printed losses and scales are rounded up]({_D}#sampling-and-rounding)",
    ),
    (DOC, ("test_stuck",), f"[infinite maps raise `FailedMap`]({_D}#maps-that-differ)"),
    (
        DOC,
        ("test_disallowed_default_int_type", r"\[i128\]", r"\[u128\]", r"\[isize\]"),
        f"[`i128`, `u128`, `isize`]({_D}#types)",
    ),
    (
        DOC,
        ("test_set_feature",),
        f"[an unknown feature name is refused, with a suggestion]({_D}#types)",
    ),
    (
        DOC,
        ("test_resize", "test_make_sized_bounded_float_checked_sum", "NotInDomain"),
        f"[data outside the domain is refused at call time]({_D}#checks-at-call-time)",
    ),
    (
        DOC,
        ("test_loss_of_logging",),
        f"[module names are opendp_lite's]({_D}#types)",
    ),
    (
        DOC,
        ("test_filter_pure_dp",),
        f"[the context checks a query's loss before submitting it]({_D}#the-context-api)",
    ),
    (
        DOC,
        ("test_exponential_bounds_search",),
        f"[`exponential_bounds_search` may return a tighter bracket]({_D}#the-context-api)",
    ),
    (
        DOC,
        ("test_sscp_domain",),
        f"[the SSCP domain needs the number of columns]({_D}#refusals-at-construction)",
    ),
    (
        DOC,
        (r"opendp_lite\.extras\.numpy\._make_np_", "has no 'make_private_theil_sen'"),
        f"[imports OpenDP's private modules; `dp.numpy` exports these constructors]"
        f"({_D}#extensions-that-opendp-does-not-have)",
    ),
    # -- OpenDP's Rust library and its FFI
    (
        RUST,
        (
            r"test/test_convert\.py",
            "_call_rust_search",
            r"\b_lib\b",
            "_internal",
            r"\b_convert\b",
            r"\b_data\b",
            "ctypes",
            "py_to_c",
            "c_to_py",
            "_extrinsic_",
            "test_extrinsic_free",
            "test_pointer_classes",
            "proven",
            "test_binary_search_fail",
            "__notes__",
            "test_erfc",
            "install_names",
            "test_plugin_queryable_error",
            r"void \*",
            "test_struct_iter",
            "_new_pure_function",
        ),
        "OpenDP's FFI, Rust error forwarding or private helpers; opendp_lite has no Rust core",
    ),
    (
        RUST,
        ("_make_measurement", "_make_transformation", "test_register"),
        "OpenDP's private constructors (`opendp.measurements._make_measurement`)",
    ),
    # -- OpenDP's own repository, tooling or network
    (
        REPO,
        (
            "test_subprocess",
            r"test_tests\.py",
            r"test_docs\.py",
            r"test_ast\.py",
            "test_no_shell_http",
            "could not be downloaded",
            "test_version",
        ),
        "checks OpenDP's own repository, tooling or network access",
    ),
    # -- open gaps, with what is known about them
    (
        GAP,
        ("test_lipschitz_b_ary_tree",),
        "`make_count_by_categories` outputs a sized vector here (OpenDP: unsized) and `>>` "
        "needs equal domains; joining a sized vector into an unsized one is sound (a subset) "
        "but changes the chaining rule",
    ),
    (
        GAP,
        ("test_deprecated_composition",),
        "OpenDP 0.16 warns (`DeprecationWarning`) on the former composition names; "
        "opendp_lite's own code and docs still use them",
    ),
    (
        GAP,
        ("test_deprecated_floating_point",),
        '"floating-point" is its own feature here; OpenDP 0.16 maps it to '
        '"idealized-numerics" with a `DeprecationWarning`',
    ),
    (
        GAP,
        ("test_numpy_user_transformation_roundtrip",),
        "a user function receives a numpy vector as the numpy array it was given; OpenDP "
        "passes it a list",
    ),
    (
        GAP,
        ("test_canonical_context",),
        "`canonical_noise` is not a Context query step here (docs/context.md)",
    ),
    (
        GAP,
        ("test_count_by_threshold",),
        "the threshold is searched as a float (accepted here for integer counts; OpenDP infers "
        "an integer), and its δ differs (documented)",
    ),
    (
        GAP,
        ("DID NOT WARN",),
        "OpenDP warns with the reason a value is refused (e.g. by `member`); opendp_lite "
        "returns or raises without that warning",
    ),
    # -- parts of OpenDP 0.16's extras that opendp_lite does not have (a test that passes on
    # OpenDP 0.16 uses only what 0.16 has: none of these is newer than 0.16)
    (
        PORT,
        ("BinomialCND", "_cnd_cdf", "one_sided_uniformly"),
        "canonical-noise inference helpers (p-values, confidence intervals, UMP tests)",
    ),
    (PORT, ("cardinalities",), "`array2_domain(cardinalities=...)` (categorical columns)"),
    (
        PORT,
        ("_make_eigenval",),
        f"OpenDP's private eigenvalue mechanism ([PCA differs]({_D}#maps-that-differ))",
    ),
]


NEXT = "identifier units and truncation (open)"
MISSING = "table API not built yet"
PIN = "OpenDP's Polars version pin"
POLARS_CATEGORIES = (DOC, NEXT, MISSING, RUST, PIN, REPO, GAP)

#: the rules of ``--polars`` (same form as :data:`RULES`; the first match decides)
POLARS_RULES: list[tuple[str, tuple[str, ...], str]] = [
    (PIN, ("test_polars_version", "_EXPECTED_POLARS_VERSION"), "checks OpenDP's pinned Polars"),
    (
        DOC,
        (r"assert (\d+)\.0 == \1\.0{10,}\d+$",),
        f"[the least scale whose exact map fits (2.0, not 2.0000000000000004)]({_T})",
    ),
    (DOC, ("test_truncation.py::test_frame_distance",), f"[l1 under a unit of bounds]({_U})"),
    (DOC, ("test_identifier_distance",), f"[the identifier is kept as a name]({_U})"),
    (
        DOC,
        ("test_polars_accuracy_threshold", "test_polars_threshold_epsilon"),
        f"[the private-key threshold]({_T})",
    ),
    (DOC, ("test_polars_grouped_quantile_max_groups",), f"[grouped quantiles]({_T})"),
    (DOC, ("test_private_lazyframe_bounded_dp",), f"[the change unit's analysis]({_T})"),
    (DOC, (r"test_private_expr\b",), f"[make_private_expr's function]({_T})"),
    (
        DOC,
        ("test_categorical_context", "test_categorical_domain_no_mapping"),
        f"[grouping by and filling a Categorical]({_T})",
    ),
    (DOC, ("test_polars_non_wrapping",), f"[no serialized plan, no `_ldf`]({_T})"),
    (DOC, ("test_large_keys_warns",), f"[no large-keys warning]({_T})"),
    (
        DOC,
        ("test_unrecognized_column", "test_without_max_partition_length"),
        f"[shape errors when the query is built]({_T})",
    ),
    (
        RUST,
        ("py_to_c", "_get_bound"),
        "OpenDP's FFI or private helpers; opendp_lite has no Rust core",
    ),
    (
        NEXT,
        (
            "identifier",
            "truncat",
            r"\bBound\b",
            "_get_bound",
            "test_frame_distance.*test_truncation|test_truncation",
            "per_group",
            "num_groups",
        ),
        "an identifier-unit or truncation case not explained by a documented difference",
    ),
    (
        DOC,
        ("a bounded domain cannot admit NaN",),
        f"[bounded float domains exclude NaN]({_D}#types)",
    ),
    (
        RUST,
        (
            r"\b_lib\b",
            r"\b_convert\b",
            "py_to_c",
            "c_to_py",
            "ctypes",
            "_internal",
            "_lazyframe_from_domain",
            "lib_path",
            "FfiSlice",
            "AnyObjectPtr",
            # OpenDP's Queryable(value, query_type) wraps the Rust core's pointer (called at
            # module level by test_serialization.py, so that file does not collect)
            r"Queryable\.__init__\(\) takes",
        ),
        "OpenDP's FFI or private helpers; opendp_lite has no Rust core",
    ),
    (
        MISSING,
        (
            "has no attribute 'polars'",
            "has no attribute 'dp'",
            "has no attribute 'len'",
            "has no 'Margin'",
            "has no 'Bound'",
            "has no attribute 'make_private_lazyframe'",
            "has no attribute 'make_private_expr'",
            "has no attribute 'make_stable_lazyframe'",
            "has no attribute 'make_stable_expr'",
            "Context.* frame|frame.*Context|compositor.*LazyFrame",
            r"has no attribute 'query'|'Query' object has no attribute",
            "opendp_lite does not support data of type|data must be",
            "a Polars LazyFrame is a query plan, not data",
        ),
        "a part of the table API (the query layer, the `.dp` expressions, the constructors "
        "over them) that is not on the branch this ran on",
    ),
    (REPO, ("could not be downloaded", "socket", "urlopen"), "needs the network"),
]


def categorise(
    test: str, error: str, rules: list[tuple[str, tuple[str, ...], str]] | None = None
) -> tuple[str, str]:
    """The category and note of the first rule that matches ``"<test> :: <error>"``."""
    text = f"{test} :: {error}"
    for category, alternatives, note in RULES if rules is None else rules:
        if any(re.search(a, text, re.MULTILINE) for a in alternatives):
            return category, note
    return GAP, ""


# ----------------------------------------------------------------------------------------------
# running pytest (each run in its own process)

_PLUGIN = """
import json, os

_results = {}


def _message(report):
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return crash.message
    text = str(report.longrepr or "").strip().splitlines()
    return text[-1] if text else ""


def pytest_collectreport(report):
    if report.failed:
        _results[report.nodeid] = {"outcome": "error", "message": _message(report)}


def pytest_runtest_logreport(report):
    prior = _results.get(report.nodeid)
    if prior is not None and prior["outcome"] != "passed":
        return
    if report.failed:
        _results[report.nodeid] = {"outcome": "failed", "message": _message(report)}
    elif report.skipped:
        _results[report.nodeid] = {"outcome": "skipped", "message": ""}
    elif report.when == "call":
        _results[report.nodeid] = {"outcome": "passed", "message": ""}


def pytest_collection_modifyitems(session, config, items):
    path = os.environ.get("ODT_CASES")
    if not path:
        return
    import re

    with open(path, encoding="utf-8") as f:
        spec = json.load(f)
    cases, params = spec["cases"], [re.compile(p) for p in spec["param_patterns"]]

    def keep(item):
        file, _, rest = item.nodeid.partition("::")
        name, _, param = rest.partition("[")
        mode = cases.get(file, {}).get(name.split("::")[-1])
        return mode == "all" or (mode == "params" and any(p.search(param) for p in params))

    kept = [i for i in items if keep(i)]
    config.hook.pytest_deselected(items=[i for i in items if not keep(i)])
    items[:] = kept


def pytest_sessionfinish(session):
    with open(os.environ["ODT_RESULTS"], "w", encoding="utf-8") as f:
        json.dump(_results, f)
"""


@dataclass
class Result:
    outcome: str
    message: str


def run_pytest(
    root: Path,
    pythonpath: str,
    files: list[str],
    python: str = sys.executable,
    cases: dict[str, dict[str, str]] | None = None,
) -> dict[str, Result]:
    """Run ``pytest`` on ``files`` (relative to ``root``) with ``python`` and return each node's
    outcome; with ``cases`` (:func:`polars_cases` by file) only those tests run."""
    plugin_dir = root / "_odt_plugin"
    plugin_dir.mkdir(exist_ok=True)
    (plugin_dir / "_odt_results.py").write_text(_PLUGIN, encoding="utf-8")
    out = plugin_dir / "results.json"
    out.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(plugin_dir), pythonpath) if p)
    env["ODT_RESULTS"] = str(out)
    env["MPLBACKEND"] = "Agg"
    if cases is not None:
        spec = plugin_dir / "cases.json"
        patterns = [_PARAM_ID.pattern, POLARS_CASE.pattern]
        spec.write_text(json.dumps({"cases": cases, "param_patterns": patterns}), "utf-8")
        env["ODT_CASES"] = str(spec)
    subprocess.run(
        [
            python,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            "-p",
            "_odt_results",
            "--tb=no",
            "--continue-on-collection-errors",
            f"--rootdir={root}",
            *files,
        ],
        cwd=root,
        env=env,
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
    )
    raw = json.loads(out.read_text(encoding="utf-8")) if out.is_file() else {}
    return {k: Result(v["outcome"], " ".join(v["message"].split())) for k, v in raw.items()}


def _extract(mirror: Path, ref: str, dest: Path) -> None:
    archive = subprocess.run(
        ["git", f"--git-dir={mirror}", "archive", ref, "python/test"],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)


def _files(root: Path) -> list[str]:
    return sorted(
        p.relative_to(root).as_posix()
        for p in (root / "test").rglob("test_*.py")
        if not EXCLUDE.search(p.relative_to(root).as_posix())
    )


def run_both(
    mirror: Path, ref: str, repo_root: Path
) -> tuple[dict[str, Result], dict[str, Result]]:
    """The outcomes on the installed OpenDP and on opendp_lite (the repository at repo_root)."""
    with tempfile.TemporaryDirectory() as tmp:
        theirs_root = Path(tmp) / "opendp" / "python"
        ours_root = Path(tmp) / "lite" / "python"
        for d in (theirs_root.parent, ours_root.parent):
            d.mkdir(parents=True)
            _extract(mirror, ref, d)
        for p in ours_root.rglob("*.py"):
            p.write_text(isolate(rewrite(p.read_text(encoding="utf-8"))), encoding="utf-8")
        files = _files(theirs_root)
        print(f"running {len(files)} files on the installed opendp", file=sys.stderr)
        theirs = run_pytest(theirs_root, "", files)
        print("running them on opendp_lite", file=sys.stderr)
        ours = run_pytest(ours_root, str(repo_root), files)
        return theirs, ours


#: OpenDP's tests of its own repository and tooling (not of its Polars API)
_TOOLING = ("test/test_docs.py", "test/test_tests.py")


def _polars_files(root: Path) -> dict[str, dict[str, str]]:
    out = {}
    for p in sorted((root / "test").rglob("test_*.py")):
        rel = p.relative_to(root).as_posix()
        if "mbi" in rel or rel in _TOOLING:
            continue
        cases = polars_cases(rel, p.read_text(encoding="utf-8"))
        if cases:
            out[rel] = cases
    return out


def _version(python: str, module: str) -> str:
    code = f"from importlib.metadata import version; print(version({module!r}))"
    proc = subprocess.run([python, "-c", code], capture_output=True, text=True, check=False)
    return proc.stdout.strip() or "?"


def run_polars(
    mirror: Path, ref: str, repo_root: Path, opendp_python: str, lite_pythons: list[str]
) -> tuple[dict[str, Result], dict[str, dict[str, Result]], dict[str, str]]:
    """OpenDP's Polars tests: their outcomes on OpenDP (in ``opendp_python``) and on
    opendp_lite in each of ``lite_pythons`` (keyed ``"Polars <version>"``), and the versions."""
    with tempfile.TemporaryDirectory() as tmp:
        theirs_root = Path(tmp) / "opendp" / "python"
        ours_root = Path(tmp) / "lite" / "python"
        for d in (theirs_root.parent, ours_root.parent):
            d.mkdir(parents=True)
            _extract(mirror, ref, d)
        cases = _polars_files(theirs_root)
        for p in ours_root.rglob("*.py"):
            p.write_text(isolate(rewrite(p.read_text(encoding="utf-8"))), encoding="utf-8")
        files = sorted(cases)
        versions = {"opendp": _version(opendp_python, "opendp")}
        versions["opendp polars"] = _version(opendp_python, "polars")
        print(f"running the Polars cases of {len(files)} files on opendp", file=sys.stderr)
        theirs = run_pytest(theirs_root, "", files, opendp_python, cases)
        ours: dict[str, dict[str, Result]] = {}
        for python in lite_pythons:
            label = f"Polars {_version(python, 'polars')}"
            print(f"running them on opendp_lite ({label})", file=sys.stderr)
            ours[label] = run_pytest(ours_root, str(repo_root), files, python, cases)
        return theirs, ours, versions


# ----------------------------------------------------------------------------------------------
# the report


def _file_of(node: str) -> str:
    return node.split("::", 1)[0]


def _ours(node: str, ours: dict[str, Result]) -> Result:
    if node in ours:
        return ours[node]
    file_error = ours.get(_file_of(node))
    if file_error is not None and file_error.outcome == "error":
        return Result("error", f"the file does not collect: {file_error.message}")
    return Result("missing", "not collected here")


def _cell(text: str, limit: int = 150) -> str:
    """A table cell of an error message: pipes, backticks and brackets escaped (a message
    such as Polars' ``[u32] [ 65 null ]`` would read as a Markdown link reference)."""
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return (
        text.replace("\\", "\\\\")
        .replace("|", "\\|")
        .replace("`", "'")
        .replace("[", "\\[")
        .replace("]", "\\]")
    )


def report(
    theirs: dict[str, Result], ours: dict[str, Result], ref: str, commit: str, version: str
) -> str:
    passing = sorted(k for k, v in theirs.items() if v.outcome == "passed")
    also = [k for k in passing if _ours(k, ours).outcome == "passed"]
    rows = []
    counts: Counter[str] = Counter()
    for node in passing:
        r = _ours(node, ours)
        if r.outcome == "passed":
            continue
        category, note = categorise(node, r.message)
        counts[category] += 1
        rows.append((node, category, note, r.message))
    per_file: dict[str, list[int]] = {}
    for node in passing:
        c = per_file.setdefault(_file_of(node), [0, 0])
        c[0] += 1
        c[1] += node in also
    lines = [
        "# OpenDP's tests, run on opendp_lite",
        "",
        f"Generated by `python tools/run_opendp_tests.py <opendp mirror> --ref {ref}` (OpenDP "
        f"commit `{commit[:12]}`, installed `opendp` {version}): OpenDP's Python tests "
        "(`python/test`, without the Polars and `mbi` files) run on the installed OpenDP as they "
        "are, and on opendp_lite with only the imports rewritten (`import opendp.prelude as dp` → "
        "`import opendp_lite.prelude as dp`); a name opendp_lite lacks fails only the tests that "
        "use it. Each run is one `pytest` process.",
        "",
        f"**{len(also)} of the {len(passing)} tests that pass on OpenDP {version} also pass on "
        "opendp_lite.**",
        "",
        "| Why the others fail here | Tests |",
        "|---|---|",
        *(f"| {c} | {counts[c]} |" for c in CATEGORIES if counts[c]),
        "",
        "A *documented difference* links its row in [Differences from OpenDP](differences.md); "
        "*OpenDP Rust internals* are tests of OpenDP's FFI, Rust error forwarding or private "
        "helpers; an *OpenDP 0.16 extra not ported* is a larger part of OpenDP's `extras` "
        "that opendp_lite does not have; an *open gap* is something smaller opendp_lite could "
        "do and does not yet. (No test here fails for using an API newer than OpenDP 0.16: "
        "the tests come from OpenDP's main branch, but only those that pass on 0.16 count.)",
        "",
        "## By file",
        "",
        "| File | Pass on OpenDP | Also here |",
        "|---|---|---|",
        *(f"| `{f}` | {a} | {b} |" for f, (a, b) in sorted(per_file.items())),
        "",
        "## Tests that pass on OpenDP but not here",
        "",
        "| Test | Why | Error here |",
        "|---|---|---|",
    ]
    for node, category, note, message in rows:
        why = f"{category}: {note}" if note else category
        lines.append(f"| `{_cell(node, 120)}` | {why} | {_cell(message)} |")
    return "\n".join(lines) + "\n"


def polars_report(
    theirs: dict[str, Result],
    ours: dict[str, dict[str, Result]],
    ref: str,
    commit: str,
    versions: dict[str, str],
) -> str:
    """The ``--polars`` report: each test that passes on OpenDP, and its outcome on opendp_lite
    in each environment of ``ours`` (label -> outcomes)."""
    passing = sorted(k for k, v in theirs.items() if v.outcome == "passed")
    labels = list(ours)
    passed = {
        lab: [k for k in passing if _ours(k, ours[lab]).outcome == "passed"] for lab in labels
    }
    counts: dict[str, Counter[str]] = {lab: Counter() for lab in labels}
    rows = []
    for node in passing:
        results = {lab: _ours(node, ours[lab]) for lab in labels}
        failing = {lab: r for lab, r in results.items() if r.outcome != "passed"}
        if not failing:
            continue
        message = next(iter(failing.values())).message
        category, note = categorise(node, message, POLARS_RULES)
        for lab in failing:
            counts[lab][category] += 1
        rows.append((node, results, category, note, message))
    opendp_label = (
        f"OpenDP {versions.get('opendp', '?')} on Polars {versions.get('opendp polars', '?')}"
    )
    lines = [
        "# OpenDP's Polars tests, run on opendp_lite",
        "",
        f"Generated by `python tools/run_opendp_tests.py <opendp mirror> --ref {ref} --polars` "
        f"(OpenDP commit `{commit[:12]}`): OpenDP's Polars tests (`python/test/test_polars.py`, "
        "`python/test/polars/`, and the tests of the other files whose code uses Polars, a frame "
        "domain, a margin or an identifier unit) run on "
        f"{opendp_label} as they are, and on opendp_lite with only the imports rewritten, once "
        "per Polars version. Each run is one `pytest` process. Only the tests that pass on "
        "OpenDP count.",
        "",
        *(
            f"**{len(passed[lab])} of the {len(passing)} tests that pass on {opendp_label} also "
            f"pass on opendp_lite with {lab}.**"
            for lab in labels
        ),
        "",
        "| Why the others fail here | " + " | ".join(labels) + " |",
        "|---|" + "---|" * len(labels),
        *(
            f"| {c} | " + " | ".join(str(counts[lab][c]) for lab in labels) + " |"
            for c in POLARS_CATEGORIES
            if any(counts[lab][c] for lab in labels)
        ),
        "",
        f"*{NEXT}*: an identifier-level unit (`dp.unit_of(identifier=...)`, "
        "`dp.polars.Bound`) or truncation case that no documented difference explains; "
        f"*{MISSING}*: a part of the table API this branch does not have yet; *{PIN}*: a test "
        "of the Polars version OpenDP pins; *OpenDP Rust internals*: OpenDP's FFI and private "
        "helpers; a *documented difference* links its row in "
        "[Differences from OpenDP](differences.md); an *open gap* is anything else.",
        "",
        "## By file",
        "",
        "| File | Pass on OpenDP | " + " | ".join(f"Also here, {lab}" for lab in labels) + " |",
        "|---|---|" + "---|" * len(labels),
    ]
    per_file: dict[str, list[int]] = {}
    for node in passing:
        c = per_file.setdefault(_file_of(node), [0] * (1 + len(labels)))
        c[0] += 1
        for i, lab in enumerate(labels):
            c[i + 1] += node in passed[lab]
    lines += [f"| `{f}` | " + " | ".join(map(str, c)) + " |" for f, c in sorted(per_file.items())]
    lines += [
        "",
        "## Tests that pass on OpenDP but not here",
        "",
        "| Test | " + " | ".join(labels) + " | Why | Error here |",
        "|---|" + "---|" * len(labels) + "---|---|",
    ]
    for node, results, category, note, message in rows:
        why = f"{category}: {note}" if note else category
        cells = " | ".join(results[lab].outcome for lab in labels)
        lines.append(f"| `{_cell(node, 120)}` | {cells} | {why} | {_cell(message)} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("mirror", help="the git directory of an OpenDP mirror")
    ap.add_argument("--ref", default="HEAD", help="the OpenDP commit, tag or branch (default HEAD)")
    ap.add_argument(
        "--out",
        default=None,
        help="the report (default docs/opendp-tests-report.md, "
        "or docs/opendp-polars-report.md with --polars)",
    )
    ap.add_argument("--polars", action="store_true", help="run OpenDP's Polars tests instead")
    ap.add_argument("--opendp-python", default=OPENDP_PYTHON, help="python with opendp (--polars)")
    ap.add_argument(
        "--lite-python",
        action="append",
        help="python to run opendp_lite's side in (--polars; repeatable; default: "
        + ", ".join(LITE_PYTHONS)
        + ")",
    )
    args = ap.parse_args(argv)
    mirror = Path(args.mirror)
    commit = subprocess.run(
        ["git", f"--git-dir={mirror}", "rev-parse", args.ref],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    from importlib.metadata import version

    repo_root = Path(__file__).resolve().parents[1]
    if args.polars:
        pythons = args.lite_python or [p for p in LITE_PYTHONS if Path(p).exists()]
        theirs_p, ours_p, versions = run_polars(
            mirror, args.ref, repo_root, args.opendp_python, pythons
        )
        text = polars_report(theirs_p, ours_p, args.ref, commit, versions)
        Path(args.out or "docs/opendp-polars-report.md").write_text(text, encoding="utf-8")
        print(text.split("\n\n")[2], file=sys.stderr)
        return 0
    theirs, ours = run_both(mirror, args.ref, repo_root)
    text = report(theirs, ours, args.ref, commit, version("opendp"))
    Path(args.out or "docs/opendp-tests-report.md").write_text(text, encoding="utf-8")
    print(text.split("\n\n")[2], file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
