"""The suite's statistical budgets, counted from the sources and the collection.

* False alarms: every fit assertion of the suite goes through ``tests/stat/_reference.py``
  (no test compares a p-value or a normal quantile with ``ALPHA`` itself), its count per test
  is read from the source (times the collected items of that test), and Σ ALPHA over a full
  run is at most ``RUN_BUDGET`` = 1e-3.  The ``_statistical_ledger`` fixture of conftest fails
  a test that makes more fit assertions than counted here.
* Power: every rejection of a wrong law checks its own power (>= ``POWER_FLOOR`` = 0.999) at
  the sample it drew (``assert_rejects``), at whatever ``OPENDP_LITE_SLOW_SCALE``; a rejection
  that compares with ``ALPHA`` itself is listed here and may not be added to.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.stat import _reference as ref

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
_SELF = {Path(__file__).resolve(), Path(ref.__file__).resolve(), (TESTS / "conftest.py").resolve()}

#: A fit assertion written by hand: a p-value or a quantile compared with ALPHA directly.
_RAW_FIT = re.compile(r"(>\s*ALPHA\b|isf\(\s*ALPHA|ALPHA\s*/\s*2\s*<|<\s*1\s*-\s*ALPHA)")
#: A rejection written by hand (no power check).  The ones left are listed below, by file: on
#: a fixed seed (test_rowwise, the residual control of test_precision) or a control whose effect
#: is a deterministic artefact of naive float arithmetic (test_precision's numpy control).
_RAW_REJECT = re.compile(r"<\s*ALPHA\b")
RAW_REJECTS_LEFT = {
    "tests/security/test_precision.py": 2,
    "tests/transformations/test_rowwise.py": 2,
}


def _sources() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if p.resolve() not in _SELF)


def collected_items() -> Counter[tuple[str, str]]:
    """(file, test function) -> number of collected items, from pytest's own collection of
    the whole suite (the budget counts a full run, parametrisation included)."""
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    items = _count([line for line in out.stdout.splitlines() if "::" in line])
    assert items, f"collection failed:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}"
    return items


def _count(nodeids: list[str]) -> Counter[tuple[str, str]]:
    items: Counter[tuple[str, str]] = Counter()
    for nodeid in nodeids:
        path, _, rest = nodeid.partition("::")
        items[path, rest.split("::")[-1].split("[")[0]] += 1
    return items


def session_items(
    config: pytest.Config, session: pytest.Session
) -> Counter[tuple[str, str]] | None:
    """The count of :func:`collected_items` read from this session's own collection when it is
    a whole run of ``tests`` (no selection of files, node ids, keywords or markers, nothing
    ignored or deselected), else ``None``: it saves collecting the suite a second time."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    o = config.option
    if (
        reporter is None
        or reporter.stats.get("deselected")
        or getattr(o, "keyword", "")
        or getattr(o, "markexpr", "")
        or getattr(o, "deselect", None)
        or getattr(o, "ignore", None)
        or getattr(o, "ignore_glob", None)
        or any("::" in a for a in config.args)
    ):
        return None
    paths = [Path(config.invocation_params.dir, a).resolve() for a in config.args]
    if not all(p.is_dir() for p in paths) or not any(p in (TESTS, ROOT) for p in paths):
        return None
    if Path(config.rootpath).resolve() != ROOT:
        return None
    return _count([i.nodeid for i in session.items if i.nodeid.startswith("tests/")])


def run_budget(items: Counter[tuple[str, str]]) -> tuple[int, dict[tuple[str, str], int]]:
    """Fit assertions per full run, and the per-test counts; a test whose count the source
    does not state must carry ``@pytest.mark.stat(fits=k)`` (read from the source here)."""
    per_test: dict[tuple[str, str], int] = {}
    total = 0
    for (path, name), n in items.items():
        fits = ref.declared_fits(str(ROOT / path), name)
        if fits < 0:
            source = (ROOT / path).read_text(encoding="utf-8")
            m = re.search(
                r"@pytest\.mark\.stat\(fits=(\d+)\)\s*(?:@[^\n]*\n\s*)*def "
                + re.escape(name)
                + r"\(",
                source,
            )
            assert m, f"{path}::{name}: fit assertions in a loop of unstated length, no stat mark"
            fits = int(m[1])
        if fits:
            per_test[path, name] = fits * n
            total += fits * n
    return total, per_test


def test_every_fit_assertion_goes_through_the_reference_helpers() -> None:
    raw = [
        f"{p.relative_to(ROOT)}:{i}: {line.strip()}"
        for p in _sources()
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if _RAW_FIT.search(line) and not line.lstrip().startswith("#")
    ]
    assert not raw, "fit assertions outside tests/stat/_reference.py (not counted):\n" + "\n".join(
        raw
    )


def test_hand_written_rejections_are_not_added_to() -> None:
    found = Counter(
        str(p.relative_to(ROOT))
        for p in _sources()
        for line in p.read_text(encoding="utf-8").splitlines()
        if _RAW_REJECT.search(line) and not line.lstrip().startswith("#")
    )
    grown = {
        f: (c, RAW_REJECTS_LEFT.get(f, 0))
        for f, c in found.items()
        if c > RAW_REJECTS_LEFT.get(f, 0)
    }
    assert not grown, f"rejections without a power check (use assert_rejects / check_*): {grown}"


def test_the_false_alarm_budget_of_a_full_run(request: pytest.FixtureRequest) -> None:
    # in a whole run (CI), this session's collection is the full run's; otherwise collect it
    items = session_items(request.config, request.session) or collected_items()
    total, per_test = run_budget(items)
    print(
        f"{total} fit assertions per full run in {len(per_test)} tests, "
        f"Σ ALPHA = {total * ref.ALPHA:.3g}"
    )
    assert total > 100, f"only {total} fit assertions counted: the count is broken"
    assert total * ref.ALPHA <= ref.RUN_BUDGET, (
        f"{total} fit assertions x ALPHA = {total * ref.ALPHA:.3g} > {ref.RUN_BUDGET}: lower ALPHA "
        "or merge assertions"
    )


def test_the_power_floor_is_checked_at_the_assertion() -> None:
    # a wrong law that the sample cannot reject with power 0.999 fails even when it is rejected
    with pytest.raises(AssertionError, match="power"):
        ref.assert_rejects(1e-12, ref.binom_power(6000, 0.5, 0.45))
    ref.assert_rejects(1e-12, ref.binom_power(8000, 0.5, 0.45))
    assert ref.binom_power(6000, 0.5, 0.45) < ref.POWER_FLOOR < ref.binom_power(8000, 0.5, 0.45)


def test_the_power_computations() -> None:
    # exact binomial power against a normal approximation; chi-square and KS bounds are monotone
    n, p0, p1 = 4000, 0.5, 0.46
    z = ref.z_bound()
    sd0, sd1 = (p0 * (1 - p0) / n) ** 0.5, (p1 * (1 - p1) / n) ** 0.5
    from scipy import stats

    approx = stats.norm.cdf(((p0 - p1) - z * sd1) / sd0)
    assert abs(ref.binom_power(n, p0, p1) - approx) < 0.01
    assert ref.chi2_power(1000, [0.5, 0.5], [0.45, 0.55]) < ref.chi2_power(
        4000, [0.5, 0.5], [0.45, 0.55]
    )
    assert ref.ks_power(1000, 0.05) < ref.ks_power(20_000, 0.05)
    assert ref.ks_power(100, 0.01) == 0.0
