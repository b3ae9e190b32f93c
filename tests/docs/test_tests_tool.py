"""The OpenDP test-suite runner rewrites only imports, isolates missing names per test, and
sorts each failure into one category (pure parts of tools/run_opendp_tests.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tools.run_opendp_tests import (
    CATEGORIES,
    DOC,
    GAP,
    MISSING,
    NAN,
    NEXT,
    PIN,
    POLARS,
    POLARS_CATEGORIES,
    POLARS_RULES,
    RULES,
    RUST,
    Result,
    categorise,
    is_polars_case,
    isolate,
    polars_cases,
    polars_report,
    report,
    rewrite,
)

ROOT = Path(__file__).resolve().parents[2]


def test_only_imports_are_rewritten() -> None:
    src = (
        "import opendp  # for a private name\n"
        "import opendp.prelude as dp\n"
        "from opendp.mod import enable_features\n"
        "    from opendp.domains import atom_domain\n"
        "x = 'opendp.context'  # a string is left alone\n"
        "import opendpx\n"
    )
    out = rewrite(src).splitlines()
    assert out[0] == "import opendp_lite as opendp  # for a private name"
    assert out[1] == "import opendp_lite.prelude as dp"
    assert out[2] == "from opendp_lite.mod import enable_features"
    assert out[3] == "    from opendp_lite.domains import atom_domain"
    assert out[4:] == ["x = 'opendp.context'  # a string is left alone", "import opendpx"]


def test_a_missing_name_fails_only_the_tests_that_use_it(tmp_path: Path) -> None:
    src = rewrite(
        '"""A test file."""\n'
        "from __future__ import annotations\n"
        "import pytest\n"
        "from opendp.mod import (\n"
        "    enable_features,\n"
        "    no_such_name_here,\n"
        ")\n"
        "\n"
        "@pytest.mark.parametrize('f', [no_such_name_here, enable_features])\n"
        "def test_param(f):\n"
        "    assert f is not None\n"
        "\n"
        "def test_uses_present():\n"
        "    enable_features('contrib')\n"
        "\n"
        "def test_uses_missing():\n"
        "    no_such_name_here()\n"
    )
    out = isolate(src)
    assert out.startswith('"""A test file."""\nfrom __future__ import annotations\n')
    compile(out, "t.py", "exec")
    (tmp_path / "test_x.py").write_text(out, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA", "--tb=no"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
        check=False,
    )
    passed = set(re.findall(r"^PASSED \S+::(\S+)", proc.stdout, re.M))
    failed = set(re.findall(r"^FAILED \S+::(\S+)", proc.stdout, re.M))
    assert "test_uses_present" in passed, proc.stdout
    assert "test_uses_missing" in failed, proc.stdout
    assert len(passed | failed) == 4, proc.stdout  # the file collects, parametrized too


def test_categories() -> None:
    assert categorise("test/test_convert.py::test_roundtrip_int", "ImportError: ctypes")[0] == RUST
    assert categorise("t.py::test_x", "module has no attribute 'lazyframe_domain'")[0] == POLARS
    assert categorise("t.py::test_cast_impute", "NotInDomain: NaN is not a member")[0] == NAN
    category, note = categorise("test/test_meas.py::test_gaussian_threshold_int", "assert")
    assert category == DOC and "differences.md#maps-that-differ" in note
    assert categorise("t.py::test_something_new", "AssertionError: assert 1 == 2") == (GAP, "")
    # every rule's category is reported, and every documented difference links its section
    for category, alternatives, note in RULES:
        assert category in CATEGORIES and alternatives
        for a in alternatives:
            re.compile(a)
        if category == DOC:
            anchor = re.search(r"\(differences\.md#([a-z-]+)\)", note)
            assert anchor, note
            headings = (ROOT / "docs/differences.md").read_text(encoding="utf-8")
            assert f"## {anchor.group(1).replace('-', ' ')}".lower() in headings.lower()


def test_report_counts() -> None:
    theirs = {
        "test/a.py::test_1": Result("passed", ""),
        "test/a.py::test_2": Result("passed", ""),
        "test/b.py::test_3": Result("passed", ""),
        "test/b.py::test_4": Result("failed", "x"),
    }
    ours = {
        "test/a.py::test_1": Result("passed", ""),
        "test/a.py::test_2": Result("failed", "AssertionError: assert 1 == 2"),
        "test/b.py": Result("error", "AttributeError: no attribute 'lazyframe_domain'"),
    }
    text = report(theirs, ours, "HEAD", "0" * 40, "0.16.0")
    assert "**1 of the 3 tests that pass on OpenDP 0.16.0 also pass on opendp_lite.**" in text
    assert "| `test/a.py` | 2 | 1 |" in text and "| `test/b.py` | 1 | 0 |" in text
    assert "| `test/b.py::test_3` | Polars / identifier units" in text
    assert "| open gap | 1 |" in text


# -- --polars: which tests are OpenDP's Polars tests, their categories, the report


def test_polars_cases_select_by_code_and_by_parameters() -> None:
    code = (
        "import pytest\n"
        "def test_plain():\n    assert 1\n"
        "def test_frame():\n    dp.lazyframe_domain([])\n"
        "def test_skip_if_no_polars():\n    pytest.importorskip('polars')\n"
        "@pytest.mark.parametrize('x', [dp.atom_domain(T=int), dp.series_domain('A', a)])\n"
        "def test_param(x):\n    assert x\n"
        "def test_local_name():\n    def datetime_domain(m):\n        return m\n"
    )
    cases = polars_cases("test/test_x.py", code)
    assert cases == {"test_frame": "all", "test_skip_if_no_polars": "all", "test_param": "params"}
    assert polars_cases("test/polars/test_y.py", code)["test_plain"] == "all"
    by_file = {"test/test_x.py": cases}
    assert is_polars_case("test/test_x.py::test_frame", by_file)
    assert is_polars_case('test/test_x.py::test_param[SeriesDomain("A", f64)]', by_file)
    assert not is_polars_case("test/test_x.py::test_param[AtomDomain(T=i32)]", by_file)
    assert not is_polars_case("test/test_x.py::test_plain", by_file)
    assert not is_polars_case("test/other.py::test_frame", by_file)


def test_polars_categories() -> None:
    def cat(test: str, error: str) -> str:
        return categorise(test, error, POLARS_RULES)[0]

    assert cat("test/test_polars.py::test_polars_version", "AssertionError") == PIN
    assert cat("test/polars/test_truncation.py::test_truncate_per_group[first]", "x") == NEXT
    assert cat("test/test_polars.py::test_a", "AttributeError: ... has no attribute 'polars'") == (
        MISSING
    )
    assert cat(
        "test/test_convert.py::test_polars_expr", "ImportError: opendp_lite has no 'py_to_c'"
    ) == (RUST)
    assert cat("test/test_polars.py::test_b", "AssertionError: assert 1 == 2") == GAP
    for category, alternatives, _ in POLARS_RULES:
        assert category in POLARS_CATEGORIES
        for a in alternatives:
            re.compile(a)


def test_polars_report_counts_each_environment() -> None:
    theirs = {
        "test/test_polars.py::test_1": Result("passed", ""),
        "test/test_polars.py::test_2": Result("passed", ""),
        "test/test_polars.py::test_3": Result("failed", "x"),
    }
    ours = {
        "Polars 2.1.0": {
            "test/test_polars.py::test_1": Result("passed", ""),
            "test/test_polars.py::test_2": Result("failed", "AssertionError: assert 1 == 2"),
        },
        "Polars 1.36.1": {
            "test/test_polars.py::test_1": Result("passed", ""),
            "test/test_polars.py::test_2": Result("passed", ""),
        },
    }
    versions = {"opendp": "0.16.0", "opendp polars": "1.36.1"}
    text = polars_report(theirs, ours, "HEAD", "0" * 40, versions)
    assert "**1 of the 2 tests that pass on OpenDP 0.16.0 on Polars 1.36.1 also pass on " in text
    assert "opendp_lite with Polars 2.1.0.**" in text
    assert "**2 of the 2 tests" in text and "with Polars 1.36.1.**" in text
    assert "| open gap | 1 | 0 |" in text
    assert "| `test/test_polars.py` | 2 | 1 | 2 |" in text
    assert "| `test/test_polars.py::test_2` | failed | passed | open gap |" in text


def test_openDPs_import_helper_is_provided(tmp_path: Path) -> None:
    # test files call opendp._lib.import_optional_dependency at module level: the file collects
    src = isolate(
        rewrite(
            "from opendp._lib import import_optional_dependency\n"
            "import_optional_dependency('json')\n"
            "def test_x():\n    assert import_optional_dependency('json').dumps(1) == '1'\n"
        )
    )
    path = tmp_path / "test_helper.py"
    path.write_text(src, encoding="utf-8")
    proc = subprocess.run(  # noqa: S603 - runs pytest on a file this test wrote
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert "1 passed" in proc.stdout, proc.stdout
