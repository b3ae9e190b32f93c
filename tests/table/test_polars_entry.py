"""``pl.Expr.dp`` exists whichever of Polars and opendp_lite is imported first, and importing
opendp_lite does not import Polars."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("polars")

_CHECK = "import polars as pl; assert hasattr(pl.col('x'), 'dp'); e = pl.col('x').dp.sum((0, 1))"


@pytest.mark.parametrize(
    "program",
    [
        "import opendp_lite.prelude as dp; import sys; assert 'polars' not in sys.modules; "
        + _CHECK,
        "import polars; import opendp_lite.prelude as dp; " + _CHECK,
        "import opendp_lite.prelude as dp; import polars.selectors; " + _CHECK,
    ],
    ids=["opendp_lite first", "polars first", "a polars submodule first"],
)
def test_the_dp_namespace_whatever_the_import_order(program: str) -> None:
    done = subprocess.run(  # noqa: S603 - this interpreter, a fixed program
        [sys.executable, "-c", program], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_dp_len_is_a_polars_expression_when_polars_is_installed() -> None:
    import polars as pl

    import opendp_lite.prelude as dp
    from opendp_lite.table.polars_reader import read_expr

    e = dp.len(signed=True)
    assert isinstance(e, pl.Expr)
    assert read_expr(e).kind == "len"
