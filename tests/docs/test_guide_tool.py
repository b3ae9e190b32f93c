"""The OpenDP guide runner rewrites only imports, and reads doctests as OpenDP's pages do."""

from __future__ import annotations

from pathlib import Path

from tools.run_opendp_guide import Outcome, _run_rst, polars_guide_report, rewrite


def test_only_imports_are_rewritten() -> None:
    src = (
        ">>> import opendp.prelude as dp\n"
        ">>> from opendp.mod import enable_features\n"
        "import opendp\n"
        ">>> x = 'opendp.prelude'  # a string is left alone\n"
        ">>> import opendpx\n"
    )
    out = rewrite(src)
    assert ">>> import opendp_lite.prelude as dp" in out
    assert ">>> from opendp_lite.mod import enable_features" in out
    assert "import opendp_lite\n" in out
    assert "'opendp.prelude'" in out and "import opendpx" in out


def test_a_page_reports_errors_mismatches_and_refusals(tmp_path: Path) -> None:
    page = (
        ".. code:: pycon\n\n"
        "    >>> import opendp.prelude as dp\n"
        "    >>> dp.atom_domain(T=int)\n"
        "    AtomDomain(T=i32)\n"
        "    >>> 1 + 1\n"
        "    3\n"
        "    >>> dp.m.make_laplace(dp.atom_domain(T=int), dp.absolute_distance(T=int), -1.0)\n"
        "    Traceback (most recent call last):\n"
        "    ...\n"
        "    opendp.mod.OpenDPException: scale\n"
        "    >>> undefined_name\n"
    )
    result = _run_rst(page, "page.rst")
    assert result["examples"] == 5
    assert result["mismatches"] == ["line 6"]
    assert result["refused"] == ["line 8"]
    assert len(result["errors"]) == 1 and "NameError" in result["errors"][0]


def test_opendp_side_runs_the_page_as_it_is(tmp_path: Path) -> None:
    # --polars runs each page on OpenDP too: nothing is rewritten there
    page = ">>> import opendp.prelude as m\n>>> m.__name__\n'opendp.prelude'\n"
    assert _run_rst(page, "page.rst", opendp=True)["mismatches"] == []
    assert _run_rst(page, "page.rst")["mismatches"] == ["line 2"]  # rewritten: opendp_lite


def test_polars_guide_report_counts_pages_that_complete_on_opendp() -> None:
    ok = Outcome("docs/source/a.rst", 3, [], [])
    fails = Outcome("docs/source/a.rst", 3, ["line 2: AttributeError: no"], [])
    other = Outcome("docs/source/b.rst", 2, ["line 1: X"], [])
    outcomes = {
        "OpenDP": {"docs/source/a.rst": ok, "docs/source/b.rst": other},
        "Polars 2.1.0": {"docs/source/a.rst": fails},
        "Polars 1.36.1": {"docs/source/a.rst": ok},
    }
    text = polars_guide_report(outcomes, {"opendp": "0.16.0", "OpenDP": "1.36.1"}, "HEAD", "0" * 40)
    assert "**1 of 2 pages complete on OpenDP 0.16.0 on Polars 1.36.1.**" in text
    assert "**0 of those 1 complete on opendp_lite with Polars 2.1.0.**" in text
    assert "**1 of those 1 complete on opendp_lite with Polars 1.36.1.**" in text
    assert "| `a.rst` | 3 | complete, outputs match | fails | complete, outputs match |" in text
    assert "| `b.rst` | 2 | fails | — | — |  | line 1: X |" in text
