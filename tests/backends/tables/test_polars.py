"""The Polars engine: exact aggregates, key order, public keys, withheld errors."""

from __future__ import annotations

import polars as pl
import pytest

from opendp_lite.backends.tables import of_table
from opendp_lite.backends.tables.polars import ENGINE, compile_expr
from opendp_lite.errors import FailedFunction
from opendp_lite.table import nodes as n


def test_registered_and_schema() -> None:
    lf = pl.LazyFrame({"a": [1], "e": pl.Series(["x"], dtype=pl.Enum(["x", "y"]))})
    assert of_table(lf) is ENGINE and of_table(lf.collect()) is ENGINE
    assert ENGINE.schema(lf) == {"a": "Int64", "e": ("Enum", ("x", "y"))}


def test_exact_sums_do_not_overflow() -> None:
    big = 2**62
    lf = pl.LazyFrame({"v": [big, big, big, -1]})
    plan = n.FramePlan((), (("s", n.IntSum(n.Col("v"), -(2**63), 2**63 - 1)),))
    assert ENGINE.run(lf, plan).values["s"] == [3 * big - 1]  # beyond Int64: exact
    lf = pl.LazyFrame({"x": [0.5, 0.25, float("nan"), None, 9.0]})
    plan = n.FramePlan((), (("s", n.GridSum(n.Col("x"), 0.0, 1.0, 10)),))
    # grid units of 2^-10: 0.5 + 0.25 + 1.0 (9 clipped); NaN and null skipped
    assert ENGINE.run(lf, plan).values["s"] == [int(1.75 * 1024)]


def test_groups_in_shared_order_and_public_keys() -> None:
    lf = pl.LazyFrame({"g": [3, 1, 3, 2], "x": [1, None, 2, 3]})
    plan = n.FramePlan(
        (n.FilterRows(n.Binary(">", n.Col("g"), n.Lit(1))),),
        (
            ("n", n.Length()),
            ("c", n.CountValid(n.Col("x"))),
            ("q", n.QuantileCounts(n.Col("x"), (2,))),
        ),
        by=(n.Col("g"),),
    )
    r = ENGINE.run(lf, plan)
    assert r.keys == {"g": [2, 3]} and r.values["n"] == [1, 2]
    assert r.values["q"] == [([0], [1]), ([1], [0])]
    keyed = n.FramePlan(plan.steps, plan.aggregates, plan.by, keys={"g": [9, 3]})
    r = ENGINE.run(lf, keyed)
    assert r.keys == {"g": [9, 3]} and r.values["n"] == [0, 2] and r.values["c"] == [0, 2]


def test_polars_errors_are_withheld() -> None:
    lf = pl.LazyFrame({"s": ["secret-value"]})
    plan = n.FramePlan(
        (n.WithColumns((n.Binary("+", n.Col("s"), n.Col("nope")),)),), (("n", n.Length()),)
    )
    with pytest.raises(FailedFunction) as e:
        ENGINE.run(lf, plan)
    assert "secret" not in str(e.value) and e.value.__cause__ is None


def test_casts_are_not_strict() -> None:
    out = pl.DataFrame({"s": ["1", "x"]}).select(compile_expr(n.Cast(n.Col("s"), "Int64")))
    assert out["s"].to_list() == [1, None]


def test_replace_strict_without_default_cannot_fail_on_a_record() -> None:
    e = n.Replace(n.Col("s"), ("x",), (1,), strict=True)
    out = pl.DataFrame({"s": ["x", "unexpected"]}).select(compile_expr(e))
    assert out["s"].to_list() == [1, None]
