"""dp.col / dp.len: the Polars-free builder produces the shared nodes."""

from __future__ import annotations

import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import InvalidParameter, ParameterTypeError
from opendp_lite.table import nodes as n
from opendp_lite.table.builder import to_node


def test_operators_and_methods() -> None:
    e = ((dp.col("a") + 1) * 2 >= dp.col("b")) & ~dp.col("c").is_null()
    assert e.node == n.Binary(
        "&",
        n.Binary(">=", n.Binary("*", n.Binary("+", n.Col("a"), n.Lit(1)), n.Lit(2)), n.Col("b")),
        n.Unary("not", n.Unary("is_null", n.Col("c"))),
    )
    assert (1 - dp.col("a")).node == n.Binary("-", n.Lit(1), n.Col("a"))
    assert (dp.col("s") == "x").node == n.Binary("==", n.Col("s"), n.Lit("x"))
    assert dp.col("a").cast(float).node == n.Cast(n.Col("a"), "Float64")
    assert dp.col("d").dt.year().node == n.DtPart(n.Col("d"), "year")
    assert dp.col("a").fill_null(0).alias("z").node == n.Alias(
        n.FillNull(n.Col("a"), n.Lit(0)), "z"
    )


def test_dp_namespace() -> None:
    a = dp.col("x").dp.mean((0.0, 1.0), scale=2.0).node
    assert a == n.DPAgg("mean", n.Col("x"), bounds=(0.0, 1.0), scale=2.0)
    assert dp.col("x").dp.median([1, 2]).node == n.DPAgg(
        "median", n.Col("x"), candidates=(1, 2), alpha=0.5
    )
    assert dp.col("x").dp.gaussian().node.mechanism == "gaussian"
    with pytest.raises(ParameterTypeError):
        dp.len(signed=1)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameter):
        dp.col("x").dp.sum(5)  # type: ignore[arg-type]


def test_truth_value_refused_and_to_node() -> None:
    with pytest.raises(InvalidParameter, match="truth value"):
        bool(dp.col("a") > 1)
    assert to_node("a") == n.Col("a")
    assert to_node(n.Lit(1)) == n.Lit(1)
