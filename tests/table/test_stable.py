"""The table API's transformations (opendp_lite/table/stable.py): make_stable_lazyframe and
make_stable_expr, dp.t's (row-by-row steps: the identity map)."""

from __future__ import annotations

from fractions import Fraction

import polars as pl
import pytest

import opendp_lite.prelude as dp
from opendp_lite._registry import CONSTRUCTORS, family
from opendp_lite.errors import NotImplementedForType
from opendp_lite.table import dp_namespace as ns
from opendp_lite.table.stable import make_stable_expr, make_stable_lazyframe

ns.ensure_registered()
SCHEMA = {"A": pl.Float64, "B": pl.Int32}
SEED = pl.LazyFrame(schema=SCHEMA)
DATA = pl.LazyFrame({"A": [0.5] * 10, "B": [1, 2] * 5}, schema=SCHEMA)


def domain(*margins: dp.polars.Margin) -> dp.LazyFrameDomain:
    out = dp.lazyframe_domain(
        [
            dp.series_domain("A", dp.atom_domain(T=float)),
            dp.series_domain("B", dp.atom_domain(T=dp.i32)),
        ]
    )
    for m in margins:
        out = dp.with_margin(out, m)
    return out


def test_they_are_dp_ts_declared_constructors() -> None:
    for fn in (make_stable_lazyframe, make_stable_expr):
        assert getattr(dp.t, fn.__name__) is fn is CONSTRUCTORS[fn.__name__]
        assert family(fn) == "t"


def test_stable_lazyframe() -> None:
    t = make_stable_lazyframe(
        domain(),
        dp.symmetric_distance(),
        SEED.with_columns(C=pl.col("A") * 2).filter(pl.col("B") > 1),
    )
    assert t.map(3) == 3 and t.output_metric == dp.symmetric_distance()
    assert t.output_domain.columns == ["A", "B", "C"]
    out = t(DATA).collect()
    assert out.shape == (5, 3) and out["C"].to_list() == [1.0] * 5
    with pytest.raises(NotImplementedForType, match="make_private_lazyframe"):
        make_stable_lazyframe(domain(), dp.symmetric_distance(), SEED.select(ns.len(signed=True)))


def test_stable_expr() -> None:
    t = make_stable_expr(
        dp.wild_expr_domain(domain().series_domains),
        dp.symmetric_distance(),
        pl.col("A").clip(0.0, 0.25),
    )
    assert t.map(2) == 2 and t.output_domain.columns == ["A"]
    assert t(DATA).collect()["A"].to_list() == [0.25] * 10
    assert Fraction(t.map(1)) == 1
