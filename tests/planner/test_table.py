"""Planner specs from the table API (aggregate expressions and table queries), released on a
Polars LazyFrame through the plan."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import NotImplementedForType
from opendp_lite.planner import (
    Count,
    GroupedCount,
    GroupedSum,
    Mean,
    Plan,
    Quantile,
    Rows,
    Sum,
    specs_from_query,
    specs_from_table,
    within,
)

T = within(50.0)


def _lf(n: int = 600) -> pl.LazyFrame:
    i = np.arange(n)
    return pl.LazyFrame(
        {
            "g": np.array(["a", "b", "c"])[i % 3],
            "w": (i * 0.37) % 100,
            "age": (i % 90).astype(np.int64),
        }
    )


def test_expressions_become_the_equal_specs():
    specs = specs_from_table(
        [
            dp.len(signed=True),
            dp.col("w").fill_null(0.0).dp.sum((0.0, 80.0)).alias("total"),
            dp.col("age").dp.mean((0, 100)),
            dp.col("age").dp.quantile(0.25, list(range(0, 91, 10))).alias("q25"),
        ],
        T,
        min_rows=100,
        max_rows=10_000,
    )
    assert specs == [
        Count("len", T),
        Sum("total", T, column="w", bounds=(0.0, 80.0), max_rows=10_000),
        Mean("age", T, column="age", bounds=(0, 100), min_rows=100),
        Quantile("q25", T, column="age", q=0.25, candidates=tuple(range(0, 91, 10))),
    ]
    grouped = specs_from_table(
        [dp.len(signed=True), dp.col("w").dp.sum((0.0, 80.0))], T, by="g", keys=("a", "b", "c")
    )
    assert grouped == [
        GroupedCount("len", T, by="g", keys=("a", "b", "c")),
        GroupedSum("w", T, by="g", keys=("a", "b", "c"), column="w", bounds=(0.0, 80.0)),
    ]


@pytest.mark.parametrize(
    "agg",
    [
        (dp.col("w") * 2).dp.sum((0.0, 80.0)),  # a derived column
        dp.col("w").fill_null(1.0).dp.sum((0.0, 80.0)),  # a fill the chain does not do
        dp.col("w").dp.sum((0.0, 80.0), scale=1.0),  # a fixed scale
        dp.col("w").clip(0.0, 80.0),  # not an aggregate
    ],
)
def test_shapes_the_plan_would_not_release_as_written_are_refused(agg):
    with pytest.raises(NotImplementedForType):
        specs_from_table([agg], T)


def test_a_grouped_mean_is_refused_naming_the_fix():
    with pytest.raises(NotImplementedForType, match="grouped sum and a grouped count"):
        specs_from_table([dp.col("w").dp.mean((0.0, 80.0))], T, by="g", keys=("a",))


def test_a_table_query_becomes_specs_and_the_plan_releases_a_lazyframe():
    lf = _lf()
    context = dp.Context.compositor(
        data=lf,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=1,
        margins=[dp.polars.Margin(by=["g"], max_length=1000)],
    )
    query = (
        context.query()
        .filter(dp.col("age") >= 18)
        .group_by("g")
        .agg(dp.len(signed=True), dp.col("w").fill_null(0.0).dp.sum((0.0, 80.0)).alias("w_sum"))
        .with_keys({"g": ["a", "b", "c"]})
    )
    specs = specs_from_query(query, {"len": within(20.0), "w_sum": within(900.0)}, max_rows=1000)
    adults = Rows("age", ">=", 18)
    assert specs[0] == GroupedCount("len", within(20.0), adults, by="g", keys=("a", "b", "c"))
    assert specs[1].rows == adults and specs[1].max_rows == 1000
    plan = Plan.minimize(specs)
    out = plan.release(lf)
    df = lf.collect()
    truth = df.filter(pl.col("age") >= 18).group_by("g").agg(pl.col("w").clip(0, 80).sum())
    assert set(out["w_sum"].value) == {"a", "b", "c"}
    assert out.spent == pytest.approx(plan.total, rel=1e-12)
    for g, s in zip(truth["g"], truth["w"], strict=True):
        assert abs(out["w_sum"].value[g] - s) < 20 * out["w_sum"].half_width  # sanity, not law
