"""The analysis: descriptors through the steps, items and their maps from the constructors."""

from __future__ import annotations

import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import InvalidParameter, NotImplementedForType
from opendp_lite.measures import max_divergence, zero_concentrated_divergence
from opendp_lite.table import analysis as an
from opendp_lite.table import nodes as n

SCHEMA = {"g": "String", "x": "Float64", "i": "Int64"}


def test_redefinition_keeps_only_what_the_new_expression_establishes() -> None:
    steps = (
        n.WithColumns((n.Clip(n.Col("i"), 0, 5),)),
        n.WithColumns((n.Binary("*", n.Col("i"), n.Lit(100)),)),
    )
    env, _ = an.walk_steps(SCHEMA, steps[:1])
    assert env["i"].bounds == (0, 5) and env["i"].origin is None
    env, _ = an.walk_steps(SCHEMA, steps)
    assert env["i"].bounds is None  # the old clip does not survive the redefinition
    env, _ = an.walk_steps(SCHEMA, (n.WithColumns((n.Cast(n.Clip(n.Col("i"), 0, 5), "Int8"),)),))
    assert env["i"].bounds is None and env["i"].dtype == "Int8"


def test_passthrough_keeps_origin_alias_does_not() -> None:
    env, _ = an.walk_steps(SCHEMA, (n.Select((n.Col("g"), n.Alias(n.Col("g"), "h"))),))
    assert env["g"].origin == "g" and env["h"].origin is None
    assert set(env) == {"g", "h"}


def test_margin_on_a_redefined_column_is_not_used() -> None:
    margin = dp.polars.Margin(by=["g"], invariant="keys", max_length=10)
    domain = an.TableDomain(tuple(SCHEMA.items()), (margin,))
    agg = (n.DPAgg("sum", n.Col("i"), bounds=(0, 5)),)
    tp = an.plan_query(domain, (), (n.Col("g"),), agg, None, max_divergence())
    assert tp.keys == "invariant" and tp.items[0].max_length == 10
    redefine = (n.WithColumns((n.Alias(n.Col("i"), "g"),)),)
    with pytest.raises(InvalidParameter, match="max_length"):
        an.plan_query(domain, redefine, (n.Col("g"),), agg, None, max_divergence(), True)


def test_items_maps_are_the_constructors_maps() -> None:
    """A count's map is make_grouped_count >> make_laplace's; a float sum's is
    make_grouped_sum's (with max_length as its size limit) >> make_laplace's."""
    part = dp.t.make_partition_by(dp.dataframe_domain(), dp.symmetric_distance(), "k", keys=[0])
    count = an.Item("#0", "len", "Frame Length", n.Length(), "count")
    m = an.item_measurement(count, max_divergence(), 3.0)
    t = part >> dp.t.then_grouped_count()
    assert m.map(2) == (t >> dp.m.then_laplace(3.0)).map(2) >= 2 / 3.0
    fsum = an.Item(
        "#1",
        "x",
        "Sum",
        n.GridSum(n.Col("x"), 0.0, 4.0, 44),
        "fsum",
        bounds=(0.0, 4.0),
        max_length=100,
    )
    t2 = part >> dp.t.then_grouped_sum("k", (0.0, 4.0), size_limit=100)
    assert an.item_measurement(fsum, max_divergence(), 2.0).map(1) == (
        t2 >> dp.m.then_laplace(2.0)
    ).map(1)
    g = an.item_measurement(count, zero_concentrated_divergence(), 2.0)
    assert g.map(1) == (part >> dp.t.then_grouped_count(norm=2) >> dp.m.then_gaussian(2.0)).map(1)


def test_composition_adds_the_items() -> None:
    domain = an.TableDomain(tuple(SCHEMA.items()), (dp.polars.Margin(max_length=50),))
    aggs = (n.DPAgg("len", n.Len(), signed=True), n.DPAgg("sum", n.Col("i"), bounds=(-2, 3)))
    tp = an.plan_query(domain, (), None, aggs, None, max_divergence())
    scales = {"#0": 1.0, "#1": 3.0}
    m, thr = an.composed(tp, max_divergence(), scales, None)
    assert thr is None
    assert m.map(1) == pytest.approx(1 / 1.0 + 3 / 3.0)


def test_stable_expressions_refuse_aggregates_and_wrong_types() -> None:
    env = {"s": an.ColInfo("String")}
    with pytest.raises(NotImplementedForType, match="private aggregate"):
        an.infer(n.DPAgg("len", n.Len()), env)
    with pytest.raises(InvalidParameter, match="numeric"):
        an.infer(n.Binary("+", n.Col("s"), n.Lit(1)), env)
    with pytest.raises(NotImplementedForType, match="length"):
        an.walk_steps({"s": "String"}, (n.WithColumns((n.Unary("drop_nulls", n.Col("s")),)),))


def test_an_exact_aggregate_asked_twice_runs_once() -> None:
    domain = an.TableDomain(tuple(SCHEMA.items()), (dp.polars.Margin(max_length=50),))
    x = n.FillNull(n.Col("x"), n.Lit(0.0))
    aggs = (
        n.Alias(n.DPAgg("mean", x, bounds=(0.0, 1.0)), "m"),
        n.DPAgg("sum", x, bounds=(0.0, 1.0)),
        n.DPAgg("len", n.Len(), signed=True),
    )
    tp = an.plan_query(domain, (), None, aggs, None, max_divergence())
    assert len(tp.items) == 4  # four noisy releases (the mean is a sum and a length)...
    assert len(tp.plan.aggregates) == 2  # ...of two exact aggregates
    assert tp.sources == {"#0": "#0", "#1": "#1", "#2": "#0", "#3": "#1"}


def test_noise_of_an_exact_sum_takes_its_bounds_from_its_own_clip(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``pl.col("i").clip(0, 5).sum().dp.noise()``: the bounds are the clip's, read from the
    summed expression's descriptor; without a clip (or after a redefinition) it is refused."""
    from dataclasses import dataclass

    agg_type = getattr(n, "Agg", None)
    if agg_type is None:  # until the reader's Agg node is on main: the same shape

        @dataclass(frozen=True)
        class Agg:
            kind: str
            expr: n.Expr

        monkeypatch.setattr(n, "Agg", Agg, raising=False)
        agg_type = Agg
    domain = an.TableDomain(tuple(SCHEMA.items()), (dp.polars.Margin(max_length=50),))
    clipped = agg_type("sum", n.Clip(n.Col("i"), 0, 5))
    tp = an.plan_query(domain, (), None, (n.DPAgg("noise", clipped),), None, max_divergence())
    assert tp.items[0].family == "isum" and tp.items[0].bounds == (0, 5)
    tp = an.plan_query(
        domain,
        (),
        None,
        (n.DPAgg("noise", agg_type("n_unique", n.Col("g"))),),
        None,
        max_divergence(),
    )
    assert tp.items[0].aggregate == "N Unique" and not tp.items[0].signed
    steps = (n.WithColumns((n.Clip(n.Col("i"), 0, 5),)), n.WithColumns((n.Col("x"),)))
    redefined = (*steps, n.WithColumns((n.Binary("*", n.Col("i"), n.Lit(9)),)))
    with pytest.raises(InvalidParameter, match="needs bounds"):
        an.plan_query(
            domain,
            redefined,
            None,
            (n.DPAgg("noise", agg_type("sum", n.Col("i"))),),
            None,
            max_divergence(),
        )
    tp = an.plan_query(
        domain,
        steps,
        None,
        (n.DPAgg("noise", agg_type("sum", n.Col("i"))),),
        None,
        max_divergence(),
    )
    assert tp.items[0].bounds == (0, 5)  # the clip of an earlier step, still in force


def test_fill_null_widens_known_bounds_to_its_value() -> None:
    env = {"i": an.ColInfo("Int64", bounds=(2, 5))}
    assert an.infer(n.FillNull(n.Col("i"), n.Lit(0)), env).bounds == (0, 5)
    assert an.infer(n.FillNull(n.Col("i"), n.Lit(3)), env).bounds == (2, 5)
    assert an.infer(n.FillNull(n.Col("i"), n.Col("i")), env).bounds is None


def test_private_keys_under_pure_dp_name_the_key_set() -> None:
    """As OpenDP's usability test: the refusal names the private key set (OpenDP's words)."""
    margin = dp.polars.Margin(by=[], max_length=10)
    domain = an.TableDomain(tuple(SCHEMA.items()), (margin,))
    agg = (n.DPAgg("len", n.Len()),)
    with pytest.raises(InvalidParameter, match=r'The key-set of \{col\("g"\), col\("i"\)\}'):
        an.plan_query(domain, (), (n.Col("g"), n.Col("i")), agg, None, max_divergence())


def test_to_physical_of_a_categorical_is_refused_in_opendps_words() -> None:
    """OpenDP's test_to_physical_unordered matches "to_physical: to prevent"; a cut's bin
    index stays allowed (computed from each value)."""
    env, _ = an.walk_steps({"c": "Categorical", "x": "Float64"}, ())
    with pytest.raises(NotImplementedForType, match=r"^to_physical: to prevent"):
        an.infer(n.Unary("to_physical", n.Col("c")), env)


def test_global_scale_splits_as_opendp_under_identifier_bounds() -> None:
    # OpenDP's bounds.rst (two Bounds, an identifier, truncation to 1 row in <= 5 quarters):
    # per individual (L0, L∞, L1) = (10, 1, 10); the sum's share of the global scale is its L1
    # sensitivity over all groups, 80 · 10 = 800 (was 80: one group's), so the scales are
    # OpenDP's 80 and 6400 (it printed 440 and 3520: the same total ε, split otherwise)
    import polars as pl

    import opendp_lite.prelude as dp

    quarterly = [pl.col.QUARTER, pl.col.YEAR]
    context = dp.Context.compositor(
        data=pl.LazyFrame(
            {"PIDENT": [1, 2, 3], "HWUSUAL": [1, 2, 3], "QUARTER": [1, 2, 3], "YEAR": [1, 1, 1]}
        ),
        privacy_unit=dp.unit_of(
            contributions=[
                dp.polars.Bound(per_group=2),
                dp.polars.Bound(by=quarterly, per_group=1),
            ],
            identifier="PIDENT",
        ),
        privacy_loss=dp.loss_of(epsilon=1.0, delta=1e-8),
        split_evenly_over=4,
        margins=[dp.polars.Margin(max_length=150_000 * 36)],
    )
    query = (
        context.query()
        .truncate_per_group(1, by=quarterly)
        .truncate_num_groups(5, by=quarterly)
        .group_by(quarterly)
        .agg(dp.len(signed=True), pl.col.HWUSUAL.cast(int).dp.sum((0, 80)))
    )
    assert query.summarize()["scale"].to_list() == pytest.approx([80.0, 6400.0], rel=1e-9)
