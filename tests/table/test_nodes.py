"""The table API's nodes: values (equal, hashable), and Polars' naming rule."""

from __future__ import annotations

from opendp_lite.table.nodes import (
    Alias,
    Binary,
    Cast,
    Col,
    DPAgg,
    FillNull,
    FramePlan,
    Len,
    Length,
    Lit,
    children,
    output_name,
)


def test_nodes_are_values() -> None:
    a = Binary("+", Col("x"), Lit(1))
    assert a == Binary("+", Col("x"), Lit(1))
    assert hash(a) == hash(Binary("+", Col("x"), Lit(1)))
    assert a != Binary("+", Col("y"), Lit(1))
    plan = FramePlan(steps=(), aggregates=(("n", Length()),), keys={"g": [1]})
    assert plan == FramePlan(steps=(), aggregates=(("n", Length()),), keys={"g": [1]})
    # a plan releasing other groups is another plan
    assert plan != FramePlan(steps=(), aggregates=(("n", Length()),), keys={"g": [2]})
    assert hash(FramePlan(steps=(), aggregates=(("n", Length()),))) == hash(
        FramePlan(steps=(), aggregates=(("n", Length()),))
    )


def test_output_name_follows_the_leftmost_input() -> None:
    assert output_name(Binary("*", Lit(2), Col("x"))) == "literal"
    assert output_name(Cast(FillNull(Col("x"), Lit(0)), "Int64")) == "x"
    assert output_name(Alias(DPAgg("len", Len()), "n")) == "n"
    assert output_name(DPAgg("len", Len())) == "len"
    assert children(FillNull(Col("x"), Col("y"))) == (Col("x"), Col("y"))
