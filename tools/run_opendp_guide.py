# ruff: noqa: S603, S607  (runs git and tar on a local mirror, and this script on its pages)
"""Run OpenDP's user-guide examples against opendp_lite, and write what happens.

OpenDP's documentation (``docs/source`` of the OpenDP repository) holds its examples as
doctests in ``.rst`` pages and as cells of ``.ipynb`` notebooks.  This tool reads them from a
local git mirror of the repository (it copies nothing into this repository), rewrites only the
imports (``opendp`` -> ``opendp_lite``, so ``import opendp.prelude as dp`` becomes ``import
opendp_lite.prelude as dp``), runs each page in a fresh process, and writes a report with the
page names and outcomes only::

    python tools/run_opendp_guide.py /work/.mirror/opendp+opendp/repo --ref v0.16.0 \\
        --out docs/opendp-guide-report.md

A page *completes* when every example runs without an exception; its *outputs match* when,
in addition, every doctest output is what OpenDP's page says (with OpenDP's own doctest
options: ``ELLIPSIS``, ``NUMBER``, ``IGNORE``; outputs of random releases differ by nature).
Pages that use Polars, and notebook cells that import it, are left out (opendp_lite has no
Polars support), as are pages with no Python examples.  ``dp.examples`` reads the example data
from ``OPENDP_LITE_DATA``, which the runner fills (in its temporary directory) with the
mirror's own copy (``docs/source/data``), so those pages run offline.

``--polars`` runs the Polars pages instead (``api/user-guide/polars/**`` and
``getting-started/tabular-data/**``): on OpenDP as they are, in ``--opendp-python`` (an
environment with the Polars OpenDP 0.16 supports, 1.36), and on opendp_lite with the imports
rewritten, in each ``--lite-python`` (Polars 2.x and 1.36 by default).  Their data, the France
LFS file (``dp.examples.get_france_lfs_path()``), cannot be downloaded here: both sides read
the stand-in of ``--lfs`` (``/work/shared/data``, V2's schema, other rows), so printed numbers
differ from the pages' on both sides, and what counts is whether each page *completes*::

    python tools/run_opendp_guide.py /work/.mirror/opendp+opendp/repo --ref HEAD --polars \\
        --out docs/opendp-polars-guide-report.md
"""

from __future__ import annotations

import argparse
import doctest
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

IMPORT = re.compile(r"^(\s*(?:>>>\s*|\.\.\.\s*)?(?:from|import)\s+)opendp(?=[\s.])", re.MULTILINE)
POLARS = re.compile(
    r"^\s*(?:>>>\s*)?(?:import polars|from polars)|\bpl\.(?:LazyFrame|col|lit)\b", re.M
)
SECTIONS = ("docs/source/api/user-guide/", "docs/source/getting-started/", "docs/source/theory/")
POLARS_SECTIONS = (
    "docs/source/api/user-guide/polars/",
    "docs/source/getting-started/tabular-data/",
)
TIMEOUT = 300
OPENDP_PYTHON = "/work/venv136/bin/python"
LITE_PYTHONS = ("/work/venv/bin/python", "/work/venv136/bin/python")
LFS_STANDIN = "/work/shared/data/v2_france_lfs.standin.csv.gz"

_DIFF = "documented in docs/differences.md"
#: Why a page fails or differs, by page (checked by hand against the run; a page not listed
#: here that fails is new and shows as "not analysed").
REASONS: dict[str, str] = {
    "combinators/amplification.rst": (
        "`check(2, 0.4941)` is False: `make_population_amplification` charges k records "
        f"hitting the sample for d_in = k > 1 ({_DIFF})"
    ),
    "measurements/thresholded-noise-mechanisms.rst": (
        "δ differs: for integer values OpenDP's δ is one tail unit smaller (lines 297, 376; "
        f"{_DIFF}); δ here is a certified bound on the exact discrete tail, below OpenDP's in "
        "its last digits for the Laplace grid (139, 237) and far below OpenDP's 2^-53 floor for "
        f"the Gaussian (178, 334; {_DIFF}); the ε of `make_fix_delta` at the Laplace δ follows "
        "(218, 242)"
    ),
    "plugins/code/theil-sen-regression.rst": (
        "`atom_domain(T=float)` excludes NaN here, so the page's `then_drop_null` refuses it "
        f"({_DIFF}; making NaN the default as in OpenDP is open)"
    ),
    "transformations/aggregation-mean.rst": (
        f"data outside the input domain is refused with `NotInDomain` (line 74, {_DIFF}; the "
        "page shows OpenDP computing on it); from line 126, `make_impute_constant` refuses "
        "`atom_domain(T=float)`, which excludes NaN here (as in typical-workflow-framework); "
        f"line 56: the float mean's map is tighter ({_DIFF})"
    ),
    "transformations/aggregation-quantile.ipynb": (
        "`make_drop_null` refuses `atom_domain(T=float)`, which excludes NaN here (as in "
        "typical-workflow-framework); the run environment has `seaborn` installed for its plots"
    ),
    "transformations/preprocess-resize.ipynb": (
        "`make_impute_constant` refuses `atom_domain(T=float)`, which excludes NaN here (as in "
        "typical-workflow-framework); `dp.examples` reads the mirror's copy of the data"
    ),
    "theory/attacks/membership.ipynb": (
        "environment: downloads its data from OpenDP's cs208 repository (no network here)"
    ),
    "theory/attacks/reconstruction.ipynb": "environment: downloads its data (as above)",
    "code/typical-workflow-framework.rst": (
        "`atom_domain(T=float)` excludes NaN here, so `make_impute_constant` refuses it "
        f"({_DIFF}; making NaN the default as in OpenDP is open)"
    ),
    "combinators/measure-casting.rst": (
        "a loss printed 1 ulp apart (opendp_lite's, rounded up from the exact value, is 1 ulp "
        f"below OpenDP's; {_DIFF})"
    ),
    "programming-framework/supporting-elements.rst": (
        f"prints the class's module (`opendp_lite.core.Transformation`; {_DIFF})"
    ),
    "utilities/parameter-search.rst": (
        f"the float sum's map is tighter ({_DIFF}), so the search finds a wider clipping range"
    ),
    "getting-started/utility.rst": f"a scale printed 1 ulp apart (directed rounding; {_DIFF})",
    "theory/dp-with-opendp.rst": (
        f"a float sum differs in its last digits (exact sum on a grid, {_DIFF}); `help()` "
        "shows opendp_lite's module and annotations (also documented there)"
    ),
}


def reason(page: str) -> str:
    for key, why in REASONS.items():
        if page.endswith(key):
            return why
    return "not analysed"


def rewrite(code: str) -> str:
    """Only the imports change: ``opendp`` becomes ``opendp_lite``."""
    return IMPORT.sub(r"\1opendp_lite", code)


# ----------------------------------------------------------------------------------------------
# running one page (in a child process)


def _checker() -> type[doctest.OutputChecker]:
    ignore = doctest.register_optionflag("IGNORE")
    fuzzy_df = doctest.register_optionflag("FUZZY_DF")

    class Checker(doctest.OutputChecker):
        """OpenDP's doctest options (its ``python/conftest.py``): IGNORE only asks that an
        output exists when one is expected."""

        def check_output(self, want: str, got: str, optionflags: int) -> bool:
            if optionflags & ignore:
                return "Traceback" not in got and bool(want) == bool(got)
            if optionflags & fuzzy_df:
                return True
            return super().check_output(want, got, optionflags)

    return Checker


def _run_rst(text: str, name: str, opendp: bool = False) -> dict[str, Any]:
    """Run a page's doctests: on opendp_lite with the imports rewritten, or (``opendp``) on the
    installed OpenDP as they are."""
    import importlib

    dp = importlib.import_module("opendp.prelude" if opendp else "opendp_lite.prelude")
    checker = _checker()()  # registers OpenDP's option names before the page is parsed
    doctest.register_optionflag("NUMBER")  # pytest's, accepted in directives
    parser = doctest.DocTestParser()
    source = text if opendp else rewrite(text)
    test = parser.get_doctest(source, {"dp": dp, "__name__": "__main__"}, name, name, 0)
    if not test.examples:
        return {"examples": 0}
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    errors: list[str] = []
    mismatches: list[str] = []
    refused: list[str] = []

    class Runner(doctest.DocTestRunner):
        def report_failure(self, out: Any, test: Any, example: Any, got: str) -> None:
            if example.exc_msg is not None and "Traceback" in got:
                refused.append(f"line {example.lineno + 1}")  # refused too, in other words
                return
            mismatches.append(f"line {example.lineno + 1}")
            if os.environ.get("GUIDE_VERBOSE"):
                print(
                    f"--- {name}:{example.lineno + 1}\n{example.source}want: {example.want}"
                    f"got:  {got}",
                    file=sys.stderr,
                )

        def report_unexpected_exception(self, out: Any, test: Any, example: Any, exc: Any) -> None:
            kind, value, _ = exc
            if example.exc_msg is not None:  # an expected exception of another kind
                mismatches.append(f"line {example.lineno + 1}")
                return
            errors.append(f"line {example.lineno + 1}: {kind.__name__}: {_short(value)}")
            if os.environ.get("GUIDE_VERBOSE"):
                print(
                    f"--- {name}:{example.lineno + 1}\n{example.source}{value!r}", file=sys.stderr
                )

    runner = Runner(checker=checker, optionflags=flags, verbose=False)
    runner.run(test, out=lambda s: None, clear_globs=False)
    return {
        "examples": len(test.examples),
        "errors": errors,
        "mismatches": mismatches,
        "refused": refused,
    }


def _run_ipynb(text: str, name: str, opendp: bool = False, polars: bool = False) -> dict[str, Any]:
    nb = json.loads(text)
    cells = [
        "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        for c in nb.get("cells", [])
        if c.get("cell_type") == "code"
    ]
    namespace: dict[str, Any] = {"__name__": "__main__"}
    errors: list[str] = []
    ran = 0
    skipped = ""
    for i, src in enumerate(cells):
        if not polars and POLARS.search(src):
            skipped += src + "\n"
            continue
        lines = [ln for ln in src.splitlines() if not ln.lstrip().startswith(("%", "!"))]
        code = "\n".join(lines) if opendp else rewrite("\n".join(lines))
        if not code.strip():
            continue
        ran += 1
        try:
            exec(compile(code, f"{name}[cell {i}]", "exec"), namespace)  # noqa: S102
        except NameError as e:
            if e.name and re.search(rf"\b{re.escape(e.name)}\b", skipped):
                return {"examples": ran, "polars": True}  # needs what a Polars cell defines
            errors.append(f"cell {i}: NameError: {_short(e)}")
            break
        except Exception as e:  # the outcome is the point
            errors.append(f"cell {i}: {type(e).__name__}: {_short(e)}")
            break  # later cells depend on this one
    return {"examples": ran, "errors": errors, "mismatches": []}


def _short(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return text[:160] + ("…" if len(text) > 160 else "")


def _opendp_reads_local_data() -> None:
    """On OpenDP's side, ``dp.examples`` reads the files of ``OPENDP_LITE_DATA`` (the runner's
    copies) instead of downloading them (this machine has no network)."""
    import importlib

    examples: Any = importlib.import_module("opendp.extras.examples")
    data = Path(os.environ.get("OPENDP_LITE_DATA", "."))
    examples.get_france_lfs_path = lambda: data / "v2_france_lfs.csv"
    examples.get_california_pums_path = lambda: data / "california_pums.csv"


def run_one(path: Path, opendp: bool = False, polars: bool = False) -> dict[str, Any]:
    """Run one page (in this process, with its directory as the working directory)."""
    import matplotlib

    matplotlib.use("Agg")
    import warnings

    warnings.simplefilter("ignore")
    if opendp:
        _opendp_reads_local_data()
    os.chdir(path.parent)
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        return _run_ipynb(text, path.name, opendp, polars)
    return _run_rst(text, path.name, opendp)


# ----------------------------------------------------------------------------------------------
# the whole guide


@dataclass
class Outcome:
    page: str
    examples: int
    errors: list[str]
    mismatches: list[str]

    @property
    def complete(self) -> bool:
        return not self.errors

    @property
    def status(self) -> str:
        if self.errors:
            return "fails"
        return "outputs differ" if self.mismatches else "complete, outputs match"


def _pages(root: Path) -> tuple[list[Path], list[str]]:
    pages, polars = [], []
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.suffix not in (".rst", ".ipynb") or not rel.startswith(SECTIONS):
            continue
        text = p.read_text(encoding="utf-8")
        if "/polars/" in rel or (p.suffix == ".rst" and POLARS.search(text)):
            polars.append(rel)
            continue
        pages.append(p)
    return pages, polars


def run_guide(mirror: Path, ref: str, repo_root: Path) -> tuple[list[Outcome], list[str]]:
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(
            ["git", f"--git-dir={mirror}", "archive", ref, "docs/source"],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        root = Path(tmp)
        pages, polars = _pages(root)
        outcomes = []
        # dp.examples reads its public data from OPENDP_LITE_DATA: seed it (in the temporary
        # directory) with the copy in the mirror's docs, so those pages run offline
        data = root / "examples-data"
        data.mkdir()
        pums = root / "docs/source/data/PUMS_california_demographics_1000/data.csv"
        if pums.is_file():
            shutil.copyfile(pums, data / "california_pums.csv")
        env = {
            **os.environ,
            "PYTHONPATH": str(repo_root),
            "MPLBACKEND": "Agg",
            "OPENDP_LITE_DATA": str(data),
        }
        for p in pages:
            rel = p.relative_to(root).as_posix()
            try:
                proc = subprocess.run(
                    [sys.executable, str(Path(__file__).resolve()), "--run-one", str(p)],
                    capture_output=True,
                    text=True,
                    timeout=TIMEOUT,
                    env=env,
                )
                last = proc.stdout.strip().splitlines()[-1:] or ["{}"]
                result = json.loads(last[0]) if proc.returncode == 0 else None
            except subprocess.TimeoutExpired:
                result = {"examples": -1, "errors": [f"timed out after {TIMEOUT} s"]}
            except json.JSONDecodeError:
                result = None
            if result is None:
                tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
                result = {
                    "examples": -1,
                    "errors": [f"the page crashed: {_short(Exception(tail))}"],
                }
            if result.get("polars"):
                polars.append(rel + " (its examples need a Polars cell)")
                continue
            if result.get("examples", 0) == 0:
                continue  # no Python examples on this page
            outcomes.append(
                Outcome(
                    rel, result["examples"], result.get("errors", []), result.get("mismatches", [])
                )
            )
            print(f"{outcomes[-1].status:>24}  {rel}", file=sys.stderr)
        return outcomes, polars


def _run_page(page: Path, python: str, env: dict[str, str], flags: list[str]) -> dict[str, Any]:
    """Run one page in a fresh ``python`` process; its result, or a crash as an error."""
    try:
        proc = subprocess.run(
            [python, str(Path(__file__).resolve()), "--run-one", str(page), *flags],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            env=env,
        )
    except subprocess.TimeoutExpired:
        return {"examples": -1, "errors": [f"timed out after {TIMEOUT} s"]}
    last = proc.stdout.strip().splitlines()[-1:] or ["{}"]
    try:
        result: dict[str, Any] | None = json.loads(last[0]) if proc.returncode == 0 else None
    except json.JSONDecodeError:
        result = None
    if result is None:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"examples": -1, "errors": [f"the page crashed: {_short(Exception(tail))}"]}
    return result


def _version(python: str, module: str) -> str:
    code = f"from importlib.metadata import version; print(version({module!r}))"
    proc = subprocess.run([python, "-c", code], capture_output=True, text=True, check=False)
    return proc.stdout.strip() or "?"


def run_polars_guide(
    mirror: Path,
    ref: str,
    repo_root: Path,
    opendp_python: str,
    lite_pythons: list[str],
    lfs: Path,
) -> tuple[dict[str, dict[str, Outcome]], dict[str, str]]:
    """The Polars pages' outcomes: ``{label: {page: outcome}}``, the first label OpenDP's
    (``"OpenDP"``), then opendp_lite's per Polars version; and the versions."""
    import gzip

    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(
            ["git", f"--git-dir={mirror}", "archive", ref, "docs/source"],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        root = Path(tmp)
        pages = [
            p
            for p in sorted(root.rglob("*"))
            if p.suffix in (".rst", ".ipynb")
            and p.relative_to(root).as_posix().startswith(POLARS_SECTIONS)
        ]
        data = root / "examples-data"
        data.mkdir()
        if lfs.is_file():
            with gzip.open(lfs, "rb") as src:
                (data / "v2_france_lfs.csv").write_bytes(src.read())
        pums = root / "docs/source/data/PUMS_california_demographics_1000/data.csv"
        if pums.is_file():
            shutil.copyfile(pums, data / "california_pums.csv")
        base = {**os.environ, "MPLBACKEND": "Agg", "OPENDP_LITE_DATA": str(data)}
        base.pop("PYTHONPATH", None)
        runs = [("OpenDP", opendp_python, ["--opendp", "--polars"])]
        versions = {"opendp": _version(opendp_python, "opendp")}
        versions["OpenDP"] = _version(opendp_python, "polars")
        for python in lite_pythons:
            label = f"Polars {_version(python, 'polars')}"
            runs.append((label, python, ["--polars"]))
        out: dict[str, dict[str, Outcome]] = {}
        for label, python, flags in runs:
            env = dict(base)
            if label != "OpenDP":
                env["PYTHONPATH"] = str(repo_root)
            out[label] = {}
            for p in pages:
                rel = p.relative_to(root).as_posix()
                result = _run_page(p, python, env, flags)
                if result.get("examples", 0) == 0:
                    continue
                out[label][rel] = Outcome(
                    rel, result["examples"], result.get("errors", []), result.get("mismatches", [])
                )
                print(f"{label:>14} {out[label][rel].status:>24}  {rel}", file=sys.stderr)
        return out, versions


def polars_guide_report(
    outcomes: dict[str, dict[str, Outcome]], versions: dict[str, str], ref: str, commit: str
) -> str:
    """The ``--polars`` report: each Polars page's outcome on OpenDP and on opendp_lite."""
    labels = list(outcomes)
    pages = sorted({p for by_page in outcomes.values() for p in by_page})
    theirs = outcomes.get("OpenDP", {})
    on_opendp = [p for p in pages if p in theirs and theirs[p].complete]
    ours = [lab for lab in labels if lab != "OpenDP"]
    opendp_label = f"OpenDP {versions.get('opendp', '?')} on Polars {versions.get('OpenDP', '?')}"
    lines = [
        "# OpenDP's Polars user guide, run on opendp_lite",
        "",
        f"Generated by `python tools/run_opendp_guide.py <opendp mirror> --ref {ref} --polars` "
        f"(OpenDP commit `{commit[:12]}`): every `.rst` doctest and `.ipynb` code cell of "
        "OpenDP's Polars pages (`api/user-guide/polars/**`, `getting-started/tabular-data/**`), "
        f"each page in a fresh process, on {opendp_label} as they are, and on opendp_lite with "
        "only the imports rewritten, once per Polars version. Both sides read the stand-in of "
        "the France LFS file (`../shared/data`: V2's schema, other rows), so printed numbers "
        "differ from the pages' on both sides; a page *completes* when every example runs.",
        "",
        f"**{len(on_opendp)} of {len(pages)} pages complete on {opendp_label}.**",
        "",
        *(
            f"**{sum(1 for p in on_opendp if p in outcomes[lab] and outcomes[lab][p].complete)} "
            f"of those {len(on_opendp)} complete on opendp_lite with {lab}.**"
            for lab in ours
        ),
        "",
        "| Page | Examples | "
        + " | ".join(labels)
        + " | First error here | First error on OpenDP |",
        "|---|---|" + "---|" * len(labels) + "---|---|",
    ]
    for page in pages:
        cells = []
        first = ""
        for lab in labels:
            o = outcomes[lab].get(page)
            cells.append("—" if o is None else o.status)
            if lab != "OpenDP" and o is not None and o.errors and not first:
                first = f"{lab}: {o.errors[0]}"
        n = max(outcomes[lab][page].examples for lab in labels if page in outcomes[lab])
        name = page.removeprefix("docs/source/")
        first = first.replace("|", "\\|")
        o = theirs.get(page)
        theirs_first = (o.errors[0] if o is not None and o.errors else "").replace("|", "\\|")
        lines.append(f"| `{name}` | {n} | " + " | ".join(cells) + f" | {first} | {theirs_first} |")
    return "\n".join(lines) + "\n"


def report(outcomes: list[Outcome], polars: list[str], ref: str, commit: str) -> str:
    complete = [o for o in outcomes if o.complete]
    match = [o for o in complete if not o.mismatches]
    lines = [
        "# OpenDP's user guide, run on opendp_lite",
        "",
        "Generated by `python tools/run_opendp_guide.py <opendp mirror> --ref "
        f"{ref}` (OpenDP commit `{commit[:12]}`): every `.rst` doctest and `.ipynb` code cell of",
        "OpenDP's user guide, getting-started and theory pages that does not use Polars, run with",
        "only the imports rewritten (`import opendp.prelude as dp` → `import opendp_lite.prelude "
        "as dp`), each page in a fresh process. `dp.examples` reads OpenDP's example data from "
        "the mirror's `docs/source/data` (this machine has no network).",
        "",
        f"**{len(complete)} of {len(outcomes)} pages complete** (every example runs); "
        f"{len(match)} of them also print what OpenDP's page shows (outputs of random releases "
        "and of maps that opendp_lite computes differently are expected to differ). "
        f"{len(polars)} Polars pages are left out.",
        "",
        *(
            []
            if ref.startswith("v0.16")
            else [
                f"The OpenDP mirror this ran on has no `v0.16.0` tag, so `{ref}` stood in for it "
                "(its pages are OpenDP 0.16's with later edits; a page's printed reprs can be "
                "older or newer than the installed 0.16.0).",
                "",
            ]
        ),
        "| Page | Examples | Outcome | First difference | Why |",
        "|---|---|---|---|---|",
    ]
    for o in outcomes:
        first = o.errors[0] if o.errors else (", ".join(o.mismatches[:3]) if o.mismatches else "")
        first = first.replace("|", "\\|")
        why = reason(o.page) if (o.errors or o.mismatches) else ""
        page = o.page.removeprefix("docs/source/")
        lines.append(f"| `{page}` | {o.examples} | {o.status} | {first} | {why} |")
    lines += ["", "Polars pages, not run: " + ", ".join(f"`{p}`" for p in polars) + "."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mirror", nargs="?", help="the git directory of an OpenDP mirror")
    ap.add_argument("--ref", default="v0.16.0", help="the OpenDP tag or branch (default v0.16.0)")
    ap.add_argument(
        "--out",
        default=None,
        help="the report (default docs/opendp-guide-report.md, "
        "or docs/opendp-polars-guide-report.md with --polars)",
    )
    ap.add_argument("--polars", action="store_true", help="run the Polars pages instead")
    ap.add_argument("--opendp-python", default=OPENDP_PYTHON, help="python with opendp (--polars)")
    ap.add_argument(
        "--lite-python",
        action="append",
        help="python for opendp_lite's side (--polars; repeatable; default: "
        + ", ".join(LITE_PYTHONS)
        + ")",
    )
    ap.add_argument("--lfs", default=LFS_STANDIN, help="the France LFS stand-in (.csv.gz)")
    ap.add_argument("--run-one", help=argparse.SUPPRESS)
    ap.add_argument("--opendp", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.run_one:
        result = run_one(Path(args.run_one), opendp=args.opendp, polars=args.polars)
        print()  # a page may leave a line unfinished (a progress bar): the result gets its own
        print(json.dumps(result))
        return 0
    if not args.mirror:
        ap.error("the mirror path is required")
    mirror = Path(args.mirror)
    git = ["git", f"--git-dir={mirror}"]
    commit = subprocess.run(
        [*git, "rev-parse", args.ref], check=True, capture_output=True, text=True
    ).stdout.strip()
    repo_root = Path(__file__).resolve().parents[1]
    if args.polars:
        pythons = args.lite_python or [p for p in LITE_PYTHONS if Path(p).exists()]
        by_label, versions = run_polars_guide(
            mirror, args.ref, repo_root, args.opendp_python, pythons, Path(args.lfs)
        )
        text = polars_guide_report(by_label, versions, args.ref, commit)
        Path(args.out or "docs/opendp-polars-guide-report.md").write_text(text, encoding="utf-8")
        print(text.split("\n\n")[2:5], file=sys.stderr)
        return 0
    outcomes, polars = run_guide(mirror, args.ref, repo_root)
    out = args.out or "docs/opendp-guide-report.md"
    Path(out).write_text(report(outcomes, polars, args.ref, commit), encoding="utf-8")
    print(f"{sum(o.complete for o in outcomes)} of {len(outcomes)} pages complete", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
