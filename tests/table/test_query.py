"""The table query end to end on Polars LazyFrames: releases, budget, keys, refusals."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

import opendp_lite.prelude as dp
from opendp_lite.combinators.composition import BudgetExceeded
from opendp_lite.errors import InvalidParameter, NotImplementedForType, NotInDomain

N = 200
LF = pl.LazyFrame(
    {
        "g": ["a", "b", "a", "c"] * (N // 4),
        "x": [1.0, 2.0, 3.0, None] * (N // 4),
        "i": [1, 2, 3, 4] * (N // 4),
    }
)


def context(
    margins: list[dp.polars.Margin] | None = None, split: int = 1, **loss: float
) -> dp.Context:
    return dp.Context.compositor(
        data=LF,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(**(loss or {"epsilon": 1.0})),
        split_evenly_over=split,
        margins=margins,
    )


KEYS = dp.polars.Margin(by=["g"], invariant="keys", max_length=1000)


def test_grouped_release_with_invariant_keys_has_opendp_schema() -> None:
    q = (
        context([KEYS])
        .query()
        .group_by("g")
        .agg(
            dp.len(signed=False),
            dp.col("x").fill_null(0.0).dp.sum((0.0, 5.0)),
            dp.col("i").dp.sum((0, 5)),
            dp.col("x").fill_null(0.0).dp.mean((0.0, 5.0)).alias("m"),
        )
    )
    out = q.release().collect()
    assert out.columns == ["g", "len", "x", "i", "m"]
    assert out.dtypes == [pl.String, pl.UInt32, pl.Float64, pl.Int64, pl.Float64]
    assert out["g"].to_list() == ["a", "b", "c"]  # every key, in the shared order


def test_scales_match_opendp_global_scale() -> None:
    """As OpenDP 0.16 (measured in /work/venv136): one global scale times each sensitivity."""
    q = (
        context([KEYS], split=4)
        .query()
        .group_by("g")
        .agg(dp.len(signed=True), dp.col("i").dp.sum((0, 5)))
    )
    s = q.summarize(alpha=0.05)
    assert s.columns == ["column", "aggregate", "distribution", "scale", "accuracy"]
    assert s["scale"].to_list() == [8.0, 40.0]  # ε = 0.25 split over two releases
    assert s["distribution"].to_list() == ["Integer Laplace", "Integer Laplace"]
    assert s["aggregate"].to_list() == ["Frame Length", "Sum"]


def test_zcdp_uses_gaussian_and_spends_the_share() -> None:
    c = context([dp.polars.Margin(max_length=1000)], split=2, rho=0.5)
    q = c.query().select(dp.len(signed=True), dp.col("x").fill_null(0.0).dp.sum((0.0, 5.0)))
    m = q.resolve()
    assert m.map(1) <= 0.25
    assert m.map(1) > 0.2499
    assert m(LF).collect().columns == ["len", "x"]  # as OpenDP's: a OnceFrame
    assert q.summarize()["distribution"].to_list() == ["Integer Gaussian", "Float Gaussian"]
    out = q.release().collect()
    assert out.columns == ["len", "x"] and out.height == 1
    assert c.remaining_privacy_loss() == [0.25]


def test_private_keys_are_thresholded_under_approximate_dp() -> None:
    c = context([dp.polars.Margin(by=["g"], max_length=1000)], epsilon=1.0, delta=1e-7)
    q = c.query().group_by("g").agg(dp.len(signed=True), dp.col("i").dp.sum((0, 5)))
    s = q.summarize(alpha=0.05)
    assert s.columns[-1] == "threshold" and s.schema["threshold"] == pl.UInt32
    threshold = s["threshold"][0]
    assert threshold is not None and s["threshold"][1] is None
    eps, delta = q.resolve().map(1)
    assert eps <= 1.0 and delta <= 1e-7
    out = q.release().collect()
    assert out.columns == ["g", "len", "i"]
    assert set(out["g"].to_list()) <= {"a", "b", "c"}
    # a key is released only when its noisy count clears the threshold
    assert all(v >= threshold for v in out["len"].to_list())


def test_private_keys_need_delta_and_a_len() -> None:
    q = context([dp.polars.Margin(by=["g"], max_length=9)]).query().group_by("g")
    with pytest.raises(InvalidParameter, match="delta"):
        q.agg(dp.len(signed=True)).summarize()  # (with_keys could still follow the agg)
    c = context([dp.polars.Margin(by=["g"], max_length=9)], epsilon=1.0, delta=1e-7)
    with pytest.raises(InvalidParameter, match=r"dp\.len"):
        c.query().group_by("g").agg(dp.col("i").dp.sum((0, 5))).release()


def test_with_keys_releases_exactly_the_given_keys() -> None:
    c = context([dp.polars.Margin(by=["g"], max_length=1000)], epsilon=1.0, delta=1e-7)
    keys = pl.DataFrame({"g": ["z", "a"]})
    q = c.query().group_by("g").agg(dp.len(signed=True)).with_keys(keys)
    out = q.release().collect()
    assert out["g"].to_list() == ["z", "a"]  # the keys, in their order; "z" has no rows
    assert "threshold" not in q.summarize().columns


def test_several_aggregates_share_one_key_release() -> None:
    c = context([dp.polars.Margin(by=["g"], max_length=1000)], epsilon=1.0, delta=1e-7)
    q = (
        c.query()
        .group_by("g")
        .agg(
            dp.len(signed=True),
            dp.col("i").dp.sum((0, 5)),
            dp.col("x").fill_null(0.0).dp.sum((0.0, 5.0)),
        )
    )
    s = q.summarize()
    assert s["threshold"].null_count() == 2  # one threshold, on the len
    out = q.release().collect()
    assert out.height == out["g"].n_unique()  # every aggregate for each released key


def test_budget_is_charged_and_enforced() -> None:
    c = context([KEYS], split=1)
    q = c.query().group_by("g").agg(dp.len(signed=True))
    q.release()
    assert c.remaining_privacy_loss() == []
    with pytest.raises(BudgetExceeded):
        c.query()


def test_filter_keeps_invariant_keys_of_the_input() -> None:
    """After a filter, invariant keys are the input's: an emptied group is still released."""
    q = context([KEYS]).query().filter(dp.col("g") != "c").group_by("g").agg(dp.len(signed=True))
    assert q.release().collect()["g"].to_list() == ["a", "b", "c"]


def test_redefined_group_column_loses_its_margin() -> None:
    """The #2949 class: a margin (keys invariant, max_length) on g no longer holds once g is
    redefined; the keys become private (refused under pure DP) and a sum lacks max_length."""
    base = context([KEYS]).query()
    base.group_by("g").agg(dp.len(signed=True))  # fine: g is the input's g
    redefined = base.with_columns((dp.col("i") % 2).cast(str).alias("g"))
    with pytest.raises(InvalidParameter, match="delta"):
        redefined.group_by("g").agg(dp.len(signed=True)).resolve()
    c = context([KEYS], epsilon=1.0, delta=1e-7).query()
    with pytest.raises(InvalidParameter, match="max_length"):
        c.with_columns(dp.col("g").cast(str)).group_by("g").agg(
            dp.len(signed=True), dp.col("i").dp.sum((0, 5))
        )


def test_float_sum_needs_max_length() -> None:
    with pytest.raises(InvalidParameter, match="max_length"):
        context().query().select(dp.col("x").fill_null(0.0).dp.sum((0.0, 1.0)))


def test_shape_is_checked_when_the_query_is_built() -> None:
    q = context().query()
    with pytest.raises(InvalidParameter, match="unknown column 'nope'"):
        q.with_columns(dp.col("nope") + 1)
    with pytest.raises(InvalidParameter, match="Boolean"):
        q.filter(dp.col("i") + 1)
    with pytest.raises(NotImplementedForType, match="private aggregate"):
        q.with_columns(dp.len(signed=True))


def test_unsupported_methods_are_refused_by_name() -> None:
    q = context().query()
    with pytest.raises(NotImplementedForType, match=r"head is not supported.*select"):
        q.head(3)
    # a row-level unit: truncation needs an identifier (OpenDP's words); by is a list
    with pytest.raises(InvalidParameter, match="truncation is only valid when"):
        q.truncate_per_group(1)
    with pytest.raises(InvalidParameter, match="truncation is only valid when"):
        q.truncate_num_groups(1, ["g"])
    with pytest.raises(NotImplementedForType, match="join"):
        q.join(LF, on="g", how="inner")


def test_sort_only_before_the_aggregation_and_collect_refused() -> None:
    q = context([KEYS]).query()
    assert q.sort("i") is q  # order-free aggregates: dropped
    with pytest.raises(NotImplementedForType, match="Found sort in query plan"):
        q.group_by("g").agg(dp.len(signed=True)).sort("g")
    with pytest.raises(ValueError, match="collect is not supported"):
        q.collect()
    schema = q.with_columns((dp.col("i") / 2).alias("h")).collect_schema()
    assert schema == {"g": pl.String, "x": pl.Float64, "i": pl.Int64, "h": pl.Float64}


def test_plans_are_immutable_values() -> None:
    q = context().query()
    q2 = q.with_columns(dp.col("i") + 1)
    assert q._state.steps == () and len(q2._state.steps) == 1


def test_data_outside_the_schema_is_refused_at_the_boundary() -> None:
    from opendp_lite.table.analysis import TableDomain

    domain = TableDomain((("g", "String"),))
    with pytest.raises(NotInDomain, match="'g' is"):
        domain._normalize(pl.LazyFrame({"g": [1]}))


def test_summarize_reports_zero_accuracy_at_zero_noise_and_post_processing() -> None:
    c = context([dp.polars.Margin(max_length=1000)], split=1, epsilon=1e9)
    q = c.query().select(
        (dp.len(signed=True, scale=0.0) * 2).alias("twice"),
        dp.col("i").dp.sum((0, 5), scale=1.0),
    )
    s = q.summarize(alpha=0.05)
    assert s["column"].to_list() == ["twice", "i"]
    assert s["accuracy"].to_list()[0] == 0.0  # OpenDP gives NaN (#2311)
    with pytest.raises(Exception, match="infinite"):
        q.release()  # no noise: an infinite loss, never released
    q = c.query().select((dp.len(signed=True, scale=1e-9) * 2).alias("twice"))
    out = q.release().collect()
    assert out["twice"].to_list() == [2 * N]


def test_once_frame_is_collected_once() -> None:
    once = context([KEYS]).query().group_by("g").agg(dp.len(signed=True)).release()
    once.collect()
    with pytest.raises(Exception, match="already been collected"):
        once.collect()


def test_signed_unset_warns_as_opendp() -> None:
    with pytest.warns(FutureWarning, match="signed=True"):
        dp.len()


def test_private_keys_under_approximate_zcdp_use_the_gaussian_threshold() -> None:
    c = context([dp.polars.Margin(by=["g"], max_length=1000)], rho=0.1, delta=1e-7)
    q = c.query().group_by("g").agg(dp.len(signed=True), dp.col("x").dp.sum((0.0, 2.0)))
    s = q.summarize(alpha=0.05)
    assert s["distribution"].to_list() == ["Integer Gaussian", "Float Gaussian"]
    rho, delta = q.resolve().map(1)
    assert rho <= 0.1 and delta <= 1e-7
    assert q.release().collect().columns == ["g", "len", "x"]


def test_release_dtypes_follow_the_summed_column_as_opendp() -> None:
    """Measured with OpenDP 0.16 (Polars 1.36): a sum keeps its column's dtype, a quantile has
    its candidates', a mean is Float64."""
    lf = pl.LazyFrame(
        {"x": [1.0, 2.0] * 50, "i": [1, 2] * 50, "u": [1, 2] * 50},
        schema={"x": pl.Float32, "i": pl.Int32, "u": pl.UInt32},
    )
    c = dp.Context.compositor(
        data=lf,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=1,
        margins=[dp.polars.Margin(max_length=1000)],
    )
    out = (
        c.query()
        .select(
            dp.col("i").fill_null(0).dp.sum((0, 5)),
            dp.col("x").fill_nan(0.0).fill_null(0.0).dp.sum((0.0, 5.0)),
            dp.col("u").fill_null(0).dp.sum((0, 5)),
            dp.col("i").fill_null(0).dp.quantile(0.5, [1, 2, 3]).alias("q"),
            dp.col("x").fill_nan(0.0).fill_null(0.0).dp.mean((0.0, 5.0)).alias("m"),
        )
        .release()
        .collect()
    )
    assert out.dtypes == [pl.Int32, pl.Float32, pl.UInt32, pl.Int64, pl.Float64]
    assert out["q"][0] in (1, 2, 3)


def test_a_change_unit_is_two_symmetric_changes() -> None:
    c = dp.Context.compositor(
        data=LF,
        privacy_unit=dp.unit_of(changes=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=1,
        margins=[KEYS],
    )
    q = c.query().group_by("g").agg(dp.len(signed=True))
    assert q.summarize()["scale"].to_list() == [2.0]  # sensitivity 2 for ε = 1
    assert q.resolve().map(1) <= 1.0
    assert q.release().collect().columns == ["g", "len"]


def test_a_margin_on_an_expression_covers_that_grouping_key() -> None:
    """As OpenDP's test_cut: invariant keys on ``cut(...).to_physical()``; the bin index is
    computed from each value (never a Categorical's data-dependent codes)."""
    by = dp.col("x").cut([1.0, 2.0, 3.0]).to_physical()
    c = dp.Context.compositor(
        data=pl.LazyFrame({"x": [0.4, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5]}),
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=10000.0),
        split_evenly_over=1,
        margins=[dp.polars.Margin(by=[by], invariant="keys")],
    )
    out = c.query().group_by(by).agg(dp.len(signed=False)).release().collect().sort("x")
    assert out.schema == {"x": pl.UInt32, "len": pl.UInt32}
    assert out["x"].to_list() == [0, 1, 2, 3]
    assert out["len"].to_list() == [2, 2, 2, 1]


def test_to_physical_of_a_categorical_is_refused() -> None:
    c = dp.Context.compositor(
        data=pl.LazyFrame({"c": ["b", "a"]}, schema={"c": pl.Categorical}),
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=1,
    )
    with pytest.raises(NotImplementedForType, match="codes depend on the order"):
        c.query().with_columns(dp.col("c").to_physical())


def test_a_duplicate_output_name_is_summarized_but_not_released() -> None:
    q = context([KEYS]).query().group_by("g").agg(dp.col("i").dp.sum((0, 3)).alias("g"))
    assert q.summarize()["column"].to_list() == ["g"]  # as OpenDP's summarize
    with pytest.raises(InvalidParameter, match="given twice"):
        q.release()


def test_dp_namespace_is_registered_when_polars_is_imported_after_the_prelude() -> None:
    import subprocess
    import sys

    code = (
        "import sys; import opendp_lite.prelude as dp; a = 'polars' in sys.modules; "
        "import polars as pl; print(a, hasattr(pl.col('x'), 'dp'))"
    )
    out = subprocess.run(  # noqa: S603 - our own interpreter and code
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "True"]  # no Polars import of its own; then .dp


def test_with_keys_refuses_a_key_given_twice() -> None:
    """A key given twice would release its group twice while the map charges it once."""
    q = context([KEYS]).query().group_by("g").agg(dp.len(signed=True))
    with pytest.raises(InvalidParameter, match="distinct"):
        q.with_keys(pl.DataFrame({"g": ["a", "b", "a"]}))


def test_constructor_refusals_surface_when_the_query_is_built() -> None:
    q = context([dp.polars.Margin(max_length=1000)]).query()
    with pytest.raises(InvalidParameter, match="strictly increasing"):
        q.select(dp.col("x").fill_null(0.0).dp.quantile(0.5, [3.0, 1.0]))


def test_comparisons_polars_would_refuse_are_refused_when_the_query_is_built() -> None:
    pl = pytest.importorskip("polars")
    import opendp_lite.prelude as dp
    from opendp_lite.errors import OpenDPLiteError

    lf = pl.LazyFrame({"f": [1.0, 2.0] * 50, "s": ["a", "b"] * 50})
    context = dp.Context.compositor(
        data=lf,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=3,
        margins=[dp.polars.Margin(max_length=1000)],
    )
    for bad in (pl.col("f").cut([0.0]) < "a", pl.col("f") > "a", pl.col("s") == 1):
        with pytest.raises(OpenDPLiteError, match="cannot"):
            context.query().filter(bad).select(dp.len(signed=True))
    # equality of a cut's labels and ordering of a String column are read as written
    ok = context.query().filter(pl.col("f").cut([0.0]) == "(0, inf]").filter(pl.col("s") < "b")
    assert ok.select(dp.len(signed=True)).release().collect().columns == ["len"]


def test_verbs_take_generators_and_named_expressions_as_polars_does() -> None:
    pl = pytest.importorskip("polars")
    import opendp_lite.prelude as dp

    lf = pl.LazyFrame({"x": [1.0, 2.0] * 50, "g": ["a", "b"] * 50})
    context = dp.Context.compositor(
        data=lf,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=2,
        margins=[dp.polars.Margin(max_length=1000)],
    )
    quantiles = context.query().select(
        pl.col("x").fill_null(0.0).dp.quantile(a, [0.0, 1.0, 2.0]).alias(f"q{a}")
        for a in (0.25, 0.75)
    )
    assert quantiles.release().collect().columns == ["q0.25", "q0.75"]
    named = (
        context.query()
        .with_columns(y=pl.col("x") * 2)
        .select(total=pl.col("y").fill_null(0.0).dp.sum((0.0, 4.0)))
    )
    assert named.release().collect().columns == ["total"]


def _change_context(unit: tuple[object, int], margins: list[dp.polars.Margin]) -> dp.Context:
    return dp.Context.compositor(
        data=pl.LazyFrame({"g": ["a", "b", "c"] * 100, "id": [1, 2, 3] * 100}),
        privacy_unit=unit,
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=1,
        margins=margins,
    )


@pytest.mark.parametrize(
    ("bounds", "k", "scale"),
    [((0, 3), 1, 3.0), ((1, 3), 1, 3.0), ((-2, 3), 1, 5.0), ((0, 3), 2, 6.0)],
)
def test_an_ungrouped_integer_sum_under_a_change_unit_compares_frames_of_equal_length(
    bounds: tuple[int, int], k: int, scale: float
) -> None:
    """As OpenDP's test_private_lazyframe_bounded_dp: under changes=k the frames compared have
    the same length, so an ungrouped integer sum moves by at most k·(max(U, 0) − min(L, 0))
    (a null or filtered row counts 0), not 2k·max(|L|, |U|) (scale 6 on (0, 3) before)."""
    for unit in (dp.unit_of(changes=k), dp.unit_of(changes=k, ordered=True)):
        c = _change_context(unit, [dp.polars.Margin(by=(), max_length=300)])
        q = c.query().select(dp.col("id").dp.sum(bounds))
        assert q.summarize()["scale"].to_list() == [scale]
        assert q.resolve().map(k) <= 1.0
    # grouped, a changed row can leave one group for another: the symmetric analysis stays
    c = _change_context(
        dp.unit_of(changes=k), [dp.polars.Margin(by=["g"], invariant="keys", max_length=300)]
    )
    q = c.query().group_by("g").agg(dp.col("id").dp.sum(bounds))
    assert q.summarize()["scale"].to_list() == [2 * k * max(abs(b) for b in bounds)]


def test_the_same_length_sum_bound_holds_for_every_change_of_a_row() -> None:
    """The sensitivity the analysis charges bounds the exact sum's move over every change of
    one row of a small frame, nulls and filtered rows included (they are not summed)."""
    from opendp_lite.table import analysis as an

    values: list[int | None] = [None, -3, -2, 0, 1, 3, 5]
    for bounds in ((0, 3), (1, 3), (-2, 3), (-3, -1)):
        c = _change_context(dp.unit_of(changes=1), [dp.polars.Margin(by=(), max_length=300)])
        q = c.query().filter(dp.col("id") != 0).select(dp.col("id").dp.sum(bounds))
        (item,) = q._plan().items
        assert item.same_size
        sens = an.sensitivity(item, 2)

        def total(rows: list[int | None], b: tuple[int, int] = bounds) -> int:
            kept = [v for v in rows if v is not None and v != 0]
            return sum(min(max(v, b[0]), b[1]) for v in kept)

        base = [1, None, 0, 3]
        for i in range(len(base)):
            for v in values:
                other = [*base[:i], v, *base[i + 1 :]]
                assert abs(total(base) - total(other)) <= sens
        # and the bound is reached: it is not looser than the row's range
        assert sens == max(bounds[1], 0) - min(bounds[0], 0)


def test_under_a_change_unit_the_frame_length_is_released_exact_and_counts_move_by_one() -> None:
    """As OpenDP's test_zero_budget: ``pl.len()`` of the frame is the same in neighbours that
    differ by changed rows, so it is released without noise or cost; after a filter it is not
    (refused), and a count moves by at most one per changed row (sensitivity k, was 2k)."""
    for unit in (dp.unit_of(changes=1), dp.unit_of(changes=1, ordered=True)):
        c = _change_context(unit, [])
        q = c.query().select(pl.len(), dp.len(signed=True).alias("n"))
        c = _change_context(unit, [])  # (a fresh budget for the checks after the release)
        assert q.resolve().map(1) == 0.0
        out = q.release().collect()
        assert out.rows() == [(300, 300)] and out.schema["len"] == pl.UInt32
        with pytest.raises(NotImplementedForType, match="after a filter differs"):
            c.query().filter(pl.col("id") > 1).select(pl.len())
        q = c.query().filter(pl.col("id") > 1).select(dp.len(signed=True))
        assert q.summarize()["scale"].to_list() == [1.0]
        q = c.query().select(
            pl.col("id").dp.count(signed=True), dp.col("id").dp.null_count(signed=True)
        )
        assert q.summarize()["scale"].to_list() == [2.0, 2.0]  # ε = 1 over two releases
    # added or removed rows: the length is private
    c = _change_context(dp.unit_of(contributions=1), [])
    with pytest.raises(NotImplementedForType, match=r"dp\.len"):
        c.query().select(pl.len()).release()


def test_the_same_length_count_bounds_hold_for_every_change_of_a_row() -> None:
    """Brute force over every change of one row of a small frame: the frame length after a
    filter and the non-null count move by at most the sensitivity the analysis charges."""
    from opendp_lite.table import analysis as an

    c = _change_context(dp.unit_of(changes=1), [])
    q = (
        c.query()
        .filter(dp.col("id") != 0)
        .select(dp.len(signed=True), dp.col("id").dp.count(signed=True))
    )
    sens = [an.sensitivity(it, 2) for it in q._plan().items]
    assert sens == [1, 1]
    base: list[int | None] = [1, None, 0, 3]
    for i in range(len(base)):
        for v in (None, 0, 2):
            other = [*base[:i], v, *base[i + 1 :]]

            def stats(rows: list[int | None]) -> tuple[int, int]:
                kept = [r for r in rows if r != 0]  # a model filter that keeps the nulls
                return len(kept), sum(r is not None for r in kept)

            moved = [abs(a - b) for a, b in zip(stats(base), stats(other), strict=True)]
            assert all(m <= s for m, s in zip(moved, sens, strict=True))


def test_the_private_key_threshold_is_the_least_sound_one_one_above_opendps() -> None:
    """OpenDP's test_polars_threshold_epsilon expects 33; a key of count 1 is released when
    1 + Z >= T, with probability Pr[Z >= T - 1]: at T = 33 that is Pr[Z >= 32] = 7.0e-8 at
    scale 2, above the query's δ = 5e-8 (OpenDP charges Pr[Z >= 33], its issue #2922)."""
    import math

    c = dp.Context.compositor(
        data=pl.LazyFrame({"A": [1] * 1000, "B": ["x"] * 500 + ["y"] * 500}),
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0, delta=1e-7),
        split_evenly_over=2,
    )
    out = c.query().group_by("B").agg(dp.len(signed=False)).summarize()
    assert out["scale"].to_list() == [2.0] and out["threshold"].to_list() == [34]
    a = math.exp(-1 / 2)

    def tail(m: int) -> float:  # Pr[Z >= m] for the discrete Laplace of scale 2, m >= 1
        return a**m / (1 + a)

    assert tail(34 - 1) <= 5e-8 < tail(33 - 1)


def test_margins_given_as_an_empty_list_ask_for_the_table_api_on_any_frame() -> None:
    """A pandas frame without margins keeps the chain-style query, which refuses an
    expression naming the fix (before: a TypeError from hashing the expression); with
    ``margins=[]`` the same frame serves OpenDP's Polars-style query."""
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": [1, 2, 3] * 10, "g": ["x", "y", "z"] * 10})

    def context(**kw: Any) -> Any:
        return dp.Context.compositor(
            data=frame,
            privacy_unit=dp.unit_of(contributions=1),
            privacy_loss=dp.loss_of(epsilon=1.0),
            split_evenly_over=1,
            **kw,
        )

    with pytest.raises(InvalidParameter, match=r"margins=\[\]"):
        context().query().select(dp.len(signed=True))
    with pytest.raises(InvalidParameter, match=r"margins=\[\]"):
        context().query().group_by(pl.col("g"))
    release = (
        context(margins=[dp.polars.Margin(by=["g"], invariant="keys")])
        .query()
        .group_by("g")
        .agg(dp.len(signed=True))
        .release()
        .collect()
    )
    assert release.columns == ["g", "len"]
    release = context(margins=[]).query().select(dp.len(signed=True)).release().collect()
    assert release.columns == ["len"]


def test_summarize_shows_a_public_frame_length_without_a_distribution() -> None:
    """Under a change unit the frame length is public: OpenDP's summarize gives it no
    distribution and no scale (null), and accuracy 0; the noisy sum keeps its row."""
    context = dp.Context.compositor(
        data=pl.LazyFrame({"x": [1.0, 2.0, 3.0] * 100}),
        privacy_unit=dp.unit_of(changes=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=1,
        margins=[dp.polars.Margin(max_length=1000, invariant="lengths")],
    )
    query = context.query().select(pl.len(), pl.col("x").fill_null(0.0).dp.sum((0.0, 5.0)))
    summary = query.summarize(alpha=0.05)
    assert summary["aggregate"].to_list() == ["Frame Length", "Sum"]
    assert summary["distribution"].to_list() == [None, "Float Laplace"]
    assert summary["scale"][0] is None and summary["scale"][1] > 0
    assert summary["accuracy"][0] == 0.0
    assert query.release().collect()["len"].to_list() == [300]
