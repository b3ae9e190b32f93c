"""The constructor level beneath the table API: make_private_lazyframe, make_private_expr,
make_stable_lazyframe, make_stable_expr (their maps are the analysis' maps)."""

from __future__ import annotations

from fractions import Fraction

import polars as pl
import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import (
    FailedMap,
    FeatureNotEnabled,
    InvalidParameter,
    NotImplementedForType,
    NotInDomain,
)
from opendp_lite.table import dp_namespace as ns
from opendp_lite.table.constructors import (
    make_private_expr,
    make_private_lazyframe,
    make_stable_expr,
    make_stable_lazyframe,
    rows_of,
)

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


def test_private_lazyframe_map_is_the_scale_relation() -> None:
    # a count's sensitivity is 1 row: at global scale 2, epsilon = d_in / 2
    m = make_private_lazyframe(
        domain(),
        dp.symmetric_distance(),
        dp.max_divergence(),
        SEED.select(ns.len(signed=True)),
        2.0,
    )
    assert m.map(1) == 0.5 and m.map(3) == 1.5
    assert m.input_domain == domain() and m.output_measure == dp.max_divergence()
    assert m(DATA).collect().columns == ["len"]


def test_private_lazyframe_matches_the_query_it_equals() -> None:
    # the same float sum as a context query: the same map (both are the analysis' composition)
    margin = dp.polars.Margin(by=[], max_length=100)
    plan = SEED.select(pl.col("A").fill_null(0.0).dp.sum((0.0, 1.0)))
    m = make_private_lazyframe(
        domain(margin), dp.symmetric_distance(), dp.max_divergence(), plan, 1.0
    )
    context = dp.Context.compositor(
        data=DATA,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=m.map(1)),
        split_evenly_over=1,
        margins=[margin],
    )
    resolved = context.query().select(pl.col("A").fill_null(0.0).dp.sum((0.0, 1.0))).resolve()
    assert resolved.map(1) == m.map(1)


def test_frame_distance_bounds_give_the_row_total() -> None:
    metric = dp.frame_distance(dp.symmetric_distance())
    m = make_private_lazyframe(
        domain(), metric, dp.max_divergence(), SEED.select(ns.len(signed=True)), 2.0
    )
    assert m.map([dp.polars.Bound(by=[], per_group=3)]) == 1.5
    assert m.map([dp.polars.Bound(by=["B"], per_group=2, num_groups=2)]) == 2.0
    with pytest.raises(FailedMap, match="identifier-level"):
        m.map([dp.polars.Bound(by=["B"], per_group=2)])
    assert rows_of(metric, 4) == 4


def test_private_keys_need_a_threshold_under_approximate_dp() -> None:
    plan = SEED.group_by("B").agg(ns.len(signed=True))
    approx = dp.approximate(dp.max_divergence())
    with pytest.raises(InvalidParameter, match="threshold"):
        make_private_lazyframe(domain(), dp.symmetric_distance(), approx, plan, 1.0)
    m = make_private_lazyframe(domain(), dp.symmetric_distance(), approx, plan, 1.0, threshold=50)
    eps, delta = m.map(1)
    assert eps == 1.0 and 0 < delta < 1e-15
    # public keys (a margin) need none
    keys = dp.polars.Margin(by=["B"], invariant="keys")
    assert (
        make_private_lazyframe(domain(keys), dp.symmetric_distance(), approx, plan, 1.0).map(1)[1]
        == 0
    )


def test_refusals() -> None:
    plan = SEED.select(ns.len(signed=True))
    with pytest.raises(InvalidParameter, match="global_scale"):
        make_private_lazyframe(domain(), dp.symmetric_distance(), dp.max_divergence(), plan)
    with pytest.raises(NotImplementedForType, match="symmetric_distance"):
        make_private_lazyframe(
            domain(), dp.insert_delete_distance(), dp.max_divergence(), plan, 1.0
        )
    with pytest.raises(NotImplementedForType):  # the whitelist refuses a plan step by name
        make_private_lazyframe(
            domain(),
            dp.symmetric_distance(),
            dp.max_divergence(),
            SEED.head(3).select(ns.len(signed=True)),
            1.0,
        )
    with pytest.raises(InvalidParameter, match="private aggregate"):
        make_private_lazyframe(domain(), dp.symmetric_distance(), dp.max_divergence(), SEED, 1.0)


def test_data_outside_the_domain_is_refused_before_any_noise() -> None:
    m = make_private_lazyframe(
        domain(),
        dp.symmetric_distance(),
        dp.max_divergence(),
        SEED.select(ns.len(signed=True)),
        1.0,
    )
    with pytest.raises(NotInDomain):
        m(DATA.with_columns(pl.col("B").cast(pl.Int64)))
    with pytest.raises(NotInDomain, match="expected Polars"):
        m("not a frame")


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


def test_private_expr_needs_honest_but_curious_and_public_keys() -> None:
    before = set(dp.GLOBAL_FEATURES)
    dp.disable_features("honest-but-curious")
    expr_domain = dp.wild_expr_domain(domain().series_domains, dp.polars.Margin(by=[]))
    with pytest.raises(FeatureNotEnabled):
        make_private_expr(
            expr_domain, dp.symmetric_distance(), dp.max_divergence(), ns.len(signed=True), 1.0
        )
    dp.enable_features("contrib", "honest-but-curious")
    try:
        m = make_private_expr(
            expr_domain, dp.symmetric_distance(), dp.max_divergence(), ns.len(signed=True), 4.0
        )
        assert m.map(2) == 0.5
        l01 = make_private_expr(
            expr_domain,
            dp.l01inf_distance(dp.symmetric_distance()),
            dp.max_divergence(),
            ns.len(signed=True),
            4.0,
        )
        assert l01.map((1, 2, 2)) == 0.5  # l1 rows
        private = dp.wild_expr_domain(domain().series_domains, dp.polars.Margin(by=["B"]))
        with pytest.raises(InvalidParameter):
            make_private_expr(
                private, dp.symmetric_distance(), dp.max_divergence(), ns.len(signed=True), 1.0
            )
        with pytest.raises(InvalidParameter, match="expected Polars Expr"):  # checked first
            make_private_expr(
                dp.wild_expr_domain([]), dp.symmetric_distance(), dp.max_divergence(), SEED, 1.0
            )
        assert (
            make_private_expr(  # dp.col(...), the Polars-free builder, is an expression too
                expr_domain, dp.symmetric_distance(), dp.max_divergence(), dp.len(signed=True), 4.0
            ).map(1)
            == 0.25
        )
        with pytest.raises(InvalidParameter, match="expected Polars Expr"):
            make_private_expr(expr_domain, dp.symmetric_distance(), dp.max_divergence(), SEED, 1.0)
    finally:
        dp.disable_features(*(set(dp.GLOBAL_FEATURES) - before))
        dp.enable_features(*before)


def test_stable_expr() -> None:
    t = make_stable_expr(
        dp.wild_expr_domain(domain().series_domains),
        dp.symmetric_distance(),
        pl.col("A").clip(0.0, 0.25),
    )
    assert t.map(2) == 2 and t.output_domain.columns == ["A"]
    assert t(DATA).collect()["A"].to_list() == [0.25] * 10
    assert Fraction(t.map(1)) == 1
