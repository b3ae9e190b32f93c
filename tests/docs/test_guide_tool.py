"""The OpenDP guide runner rewrites only imports, and reads doctests as OpenDP's pages do."""

from __future__ import annotations

from pathlib import Path

from tools.run_opendp_guide import _run_rst, rewrite


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
