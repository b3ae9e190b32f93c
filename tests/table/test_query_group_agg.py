"""The stable ``group_by(...).agg(...)`` before the private aggregation (issues 24 and 25).

* the scales of OpenDP's guide queries (bounds.rst: grouping by the identifier is a
  truncation to one row per person; preparing-microdata.rst: sample and aggregate under a
  row-level unit, then under ``dp.polars.Bound`` lists);
* the refusals when the query is built (an order-dependent or unknown aggregation, the
  identifier missing from the keys, a key redefined after the step);
* every engine computes the stable output a row-by-row reference computes, exactly (a float
  sum or mean does not depend on the rows' order);
* the map: one added or removed row moves the output by at most 2 rows; one removed person
  removes that person's rows only (at most one per group of the other keys);
* the law of a release through the step (scale × 0.7 and × 1.3 rejected).
"""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import opendp_lite.prelude as dp
from opendp_lite.backends.tables import narwhals as _nw  # noqa: F401  (registers the engine)
from opendp_lite.backends.tables import of_table
from opendp_lite.errors import InvalidParameter, NotImplementedForType
from opendp_lite.table import nodes as N
from tests.conftest import scaled
from tests.stat._reference import check_integer_law, discrete_laplace_pmf

pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")


def _lfs(n: int = 400) -> pl.LazyFrame:
    pident = [i // 3 for i in range(n)]
    return pl.LazyFrame(
        {"PIDENT": pident, "HWUSUAL": [(7 * i) % 100 for i in range(n)]},
        schema={"PIDENT": pl.Int64, "HWUSUAL": pl.Int64},
    )


def _approx(scales: list[float]) -> Any:
    # the scale search lands a hair above the exact scale (the map never understates)
    return pytest.approx(scales, rel=1e-12)


# -- the guide's queries ------------------------------------------------------------------------


def test_grouping_by_the_identifier_is_a_truncation_bounds_rst() -> None:
    # bounds.rst: OpenDP prints Sum 640.0, Length 8.0 (one row per person after the group_by)
    context = dp.Context.compositor(
        data=_lfs(),
        privacy_unit=dp.unit_of(contributions=1, identifier="PIDENT"),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=4,
        margins=[dp.polars.Margin(max_length=150_000 * 36)],
    )
    query = (
        context.query()
        .filter(pl.col.HWUSUAL != 99)
        .group_by(pl.col.PIDENT)
        .agg(pl.col.HWUSUAL.mean())
        .select(pl.col.HWUSUAL.cast(int).dp.mean((0, 80)))
    )
    assert query.summarize()["scale"].to_list() == _approx([640.0, 8.0])
    assert query.release().collect().columns == ["HWUSUAL"]


def _microdata(contributions: Any) -> Any:
    return dp.Context.compositor(
        data=_lfs(),
        privacy_unit=dp.unit_of(contributions=contributions),
        privacy_loss=dp.loss_of(epsilon=1.0, delta=1e-7),
        split_evenly_over=4,
        margins=[dp.polars.Margin(max_length=150_000 * 36)],
    )


def _sample_and_aggregate(context: Any) -> Any:
    return (
        context.query()
        .filter(pl.col.HWUSUAL != 99)
        .group_by(pl.col.PIDENT % 1000)
        .agg(pl.col.HWUSUAL.min())
        .select(pl.col.HWUSUAL.cast(int).dp.mean((0, 30)))
    )


def test_sample_and_aggregate_row_unit_preparing_microdata_rst() -> None:
    # OpenDP prints 17280.0 / 576.0: 36 rows change 36 groups, each one removal and one addition
    query = _sample_and_aggregate(_microdata(36))
    assert query.summarize()["scale"].to_list() == _approx([17280.0, 576.0])
    assert query.release().collect()["HWUSUAL"].dtype == pl.Float64


def test_sample_and_aggregate_under_bounds_preparing_microdata_rst() -> None:
    # by hand: one individual changes min(36 rows, 1 group) = 1 group: output distance 2;
    # ε = 1/4 split over sum and length (1/8 each): Length 2·8 = 16, Sum 30·2·8 = 480
    # (OpenDP's page prints 480.0 / 16.0)
    bounds = [
        dp.polars.Bound(per_group=36),
        dp.polars.Bound(by=[pl.col.PIDENT % 1000], num_groups=1),
    ]
    query = _sample_and_aggregate(_microdata(bounds))
    assert query.summarize()["scale"].to_list() == _approx([480.0, 16.0])


def test_changes_unit_doubles_through_the_step() -> None:
    # changes=1: a removal and an addition (2 rows) each change one output row: distance 4
    q = _sample_and_aggregate(_microdata(1))
    q2 = (
        dp.Context.compositor(
            data=_lfs(),
            privacy_unit=dp.unit_of(changes=1),
            privacy_loss=dp.loss_of(epsilon=1.0, delta=1e-7),
            split_evenly_over=4,
            margins=[dp.polars.Margin(max_length=150_000 * 36)],
        )
        .query()
        .group_by(pl.col.PIDENT % 1000)
        .agg(pl.col.HWUSUAL.min())
        .select(pl.col.HWUSUAL.cast(int).dp.mean((0, 30)))
    )
    assert q.summarize()["scale"].to_list() == _approx([480.0, 16.0])
    assert q2.summarize()["scale"].to_list() == _approx([960.0, 32.0])


# -- refusals when the query is built ---------------------------------------------------------


def _id_context() -> Any:
    return dp.Context.compositor(
        data=_lfs().with_columns(g=pl.col.PIDENT % 4),
        privacy_unit=dp.unit_of(contributions=1, identifier="PIDENT"),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=1,
        margins=[dp.polars.Margin(max_length=10_000)],
    )


@pytest.mark.parametrize("method", ["first", "last"])
def test_order_dependent_aggregation_is_refused(method: str) -> None:
    with pytest.raises(NotImplementedForType, match=f"{method}\\(\\).*order"):
        _id_context().query().group_by("PIDENT").agg(getattr(pl.col.HWUSUAL, method)())


def test_unknown_aggregation_is_refused_naming_it() -> None:
    with pytest.raises(NotImplementedForType, match=r"Product|product"):
        _id_context().query().group_by("PIDENT").agg(pl.col.HWUSUAL.product())


def test_identifier_not_among_the_keys_is_refused() -> None:
    with pytest.raises(InvalidParameter, match=r"must group by the identifier.*Fix"):
        _id_context().query().group_by("g").agg(pl.col.HWUSUAL.mean())


def test_redefining_a_key_after_the_step_drops_the_bound() -> None:
    base = (
        _id_context()
        .query()
        .truncate_num_groups(1, by=["g"])
        .group_by("PIDENT", "g")
        .agg(pl.col.HWUSUAL.max())
    )
    ok = base.group_by("g").agg(dp.len(signed=True)).with_keys(pl.DataFrame({"g": [0, 1, 2, 3]}))
    # one row per person in each g
    assert ok.summarize()["scale"].to_list() == _approx([1.0])
    moved = (
        base.with_columns(g=pl.col.g + 1)
        .group_by("g")
        .agg(dp.len(signed=True))
        .with_keys(pl.DataFrame({"g": [1, 2, 3, 4]}))
    )
    with pytest.raises(InvalidParameter, match="redefined or dropped \\['g'\\]"):
        moved.summarize()


def test_grouping_by_a_redefined_identifier_is_refused() -> None:
    q = _id_context().query().with_columns(PIDENT=pl.col.PIDENT // 2)
    with pytest.raises(InvalidParameter, match="no longer be grouped by person"):
        q.group_by("PIDENT").agg(pl.col.HWUSUAL.max())


def test_margins_keep_max_length_only_over_a_subset_of_the_keys() -> None:
    context = dp.Context.compositor(
        data=_lfs().with_columns(g=pl.col.PIDENT % 4),
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=1,
        margins=[dp.polars.Margin(by=["g"], max_length=500, invariant="keys")],
    )
    step = context.query().group_by("g", "PIDENT").agg(pl.col.HWUSUAL.max())
    # the invariant is dropped: the keys of g after the step are private (no δ: refused)
    with pytest.raises(InvalidParameter, match="is private"):
        step.group_by("g").agg(dp.len(signed=True)).summarize()
    # the max_length per g survives (a sum needs it)
    summary = (
        step.group_by("g")
        .agg(pl.col.HWUSUAL.dp.sum((0, 100)))
        .with_keys(pl.DataFrame({"g": [0, 1, 2, 3]}))
        .summarize()
    )
    assert summary["scale"].to_list() == [200.0]  # distance 2, one row of at most 100
    # grouped by other keys only, the margin on g does not survive
    with pytest.raises(InvalidParameter, match=r"max_length|Margin"):
        context.query().group_by("PIDENT").agg(pl.col.g.max()).group_by("g").agg(
            pl.col.PIDENT.dp.sum((0, 100))
        ).with_keys(pl.DataFrame({"g": [0, 1, 2, 3]})).summarize()


# -- every engine: the stable output equals a row-by-row reference ------------------------------

_KINDS = ["len", "count", "null_count", "n_unique", "sum", "mean", "min", "max", "median", "var"]


def _ref_agg(kind: str, values: list[Any]) -> Any:
    nn = [v for v in values if v is not None]
    if kind == "len":
        return len(values)
    if kind == "count":
        return len(nn)
    if kind == "null_count":
        return len(values) - len(nn)
    if kind == "n_unique":
        return len(set(values))
    if kind == "sum":
        return math.fsum(nn) if nn and isinstance(nn[0], float) else sum(nn)
    if not nn:
        return None
    if kind == "min":
        return min(nn)
    if kind == "max":
        return max(nn)
    xs = sorted(Fraction(v) for v in nn)
    if kind == "mean":
        return float(sum(xs) / len(xs))
    if kind == "median":
        m = len(xs) // 2
        return float(xs[m] if len(xs) % 2 else (xs[m - 1] + xs[m]) / 2)
    if len(xs) < 2:
        return None
    mu = sum(xs) / len(xs)
    return float(sum((x - mu) ** 2 for x in xs) / (len(xs) - 1))


def _reference(rows: list[tuple[Any, Any, Any]], kind: str) -> Counter[tuple[Any, ...]]:
    groups: dict[Any, list[tuple[Any, Any]]] = {}
    for g, i, f in rows:
        groups.setdefault(g, []).append((i, f))
    return Counter(
        (g, _ref_agg(kind, [i for i, _ in v]), _ref_agg(kind, [f for _, f in v]))
        for g, v in groups.items()
    )


def _engine_output(data: Any, kind: str) -> Counter[tuple[Any, ...]]:
    """The stable output's rows as a multiset, through the engine interface (the output
    grouped by all its columns, each row counted)."""
    step = N.GroupAgg(
        (N.Col("g"),),
        (N.Alias(N.Agg(kind, N.Col("i")), "ai"), N.Alias(N.Agg(kind, N.Col("f")), "af")),
    )
    plan = N.FramePlan(
        steps=(step,),
        aggregates=(("#n", N.Length()),),
        by=(N.Col("g"), N.Col("ai"), N.Col("af")),
    )
    engine = of_table(data)
    assert engine is not None
    res = engine.run(data, plan)
    out: Counter[tuple[Any, ...]] = Counter()
    for j, c in enumerate(res.values["#n"]):
        out[(res.keys["g"][j], res.keys["ai"][j], res.keys["af"][j])] += int(c)
    return out


_ROWS = st.lists(
    st.tuples(
        st.integers(0, 3),
        st.one_of(st.none(), st.integers(-(2**40), 2**40)),
        st.one_of(st.none(), st.sampled_from([0.1, 0.2, -0.3, 1e16, -1e16, 1.0, 2.5, 1e-300])),
    ),
    min_size=1,
    max_size=12,
)


def _frames(rows: list[tuple[Any, Any, Any]]) -> list[Any]:
    g, i, f = (list(c) for c in zip(*rows, strict=True))
    schema = {"g": pl.Int64, "i": pl.Int64, "f": pl.Float64}
    polars_df = pl.DataFrame({"g": g, "i": i, "f": f}, schema=schema)
    arrow = polars_df.to_arrow()
    pandas_df = arrow.to_pandas(types_mapper=pd.ArrowDtype)
    frames = [polars_df.lazy(), arrow, pandas_df]
    try:
        import dask.dataframe as dd

        frames.append(dd.from_pandas(pandas_df, npartitions=2))
    except ImportError:  # pragma: no cover
        pass
    return frames


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=_ROWS, kind=st.sampled_from(_KINDS))
def test_every_engine_computes_the_reference_stable_output(rows: Any, kind: str) -> None:
    want = _reference(rows, kind)
    for data in _frames(rows):
        assert _engine_output(data, kind) == want, type(data).__name__
    # and not the rows' order: reversed rows give the same output
    assert _engine_output(_frames(rows[::-1])[0], kind) == want


def test_float_sum_and_mean_are_exact_and_order_free() -> None:
    rows = [(0, 1, 1e16), (0, 1, 1.0), (0, 1, -1e16), (1, 1, 0.1)] + [(1, 1, 0.1)] * 9
    for kind, want in (("sum", {0: 1.0, 1: 1.0}), ("mean", {0: 1 / 3, 1: 0.1})):
        for order in (rows, rows[::-1]):
            out = _engine_output(
                pl.DataFrame(
                    dict(zip("gif", zip(*order, strict=True), strict=True)),
                    schema={"g": pl.Int64, "i": pl.Int64, "f": pl.Float64},
                ),
                kind,
            )
            assert {g: af for (g, _, af) in out} == want


# -- the map: neighbours' outputs ------------------------------------------------------------


def _output(rows: list[tuple[Any, Any, Any]], by: tuple[N.Expr, ...]) -> Counter[Any]:
    if not rows:
        return Counter()
    g, i, f = (list(c) for c in zip(*rows, strict=True))
    data = pl.DataFrame(
        {"g": g, "i": i, "f": f}, schema={"g": pl.Int64, "i": pl.Int64, "f": pl.Float64}
    )
    step = N.GroupAgg(
        by, (N.Alias(N.Agg("mean", N.Col("f")), "m"), N.Alias(N.Agg("len", N.Col("f")), "n"))
    )
    names = tuple(N.output_name(b) for b in by)
    plan = N.FramePlan(
        steps=(step,),
        aggregates=(("#n", N.Length()),),
        by=(*(N.Col(c) for c in names), N.Col("m"), N.Col("n")),
    )
    engine = of_table(data)
    assert engine is not None
    res = engine.run(data, plan)
    cols = [*names, "m", "n"]
    return Counter(
        {tuple(res.keys[c][j] for c in cols): int(k) for j, k in enumerate(res.values["#n"])}
    )


def _sym(a: Counter[Any], b: Counter[Any]) -> int:
    return sum(((a - b) + (b - a)).values())


@settings(max_examples=30, deadline=None)
@given(rows=_ROWS, extra=_ROWS, data=st.data())
def test_one_added_or_removed_row_moves_the_output_by_at_most_two_rows(
    rows: Any, extra: Any, data: Any
) -> None:
    by = (N.Col("g"),)
    base = _output(rows, by)
    assert _sym(base, _output(rows + extra[:1], by)) <= 2
    j = data.draw(st.integers(0, len(rows) - 1))
    assert _sym(base, _output(rows[:j] + rows[j + 1 :], by)) <= 2


@settings(max_examples=30, deadline=None)
@given(rows=_ROWS, person=st.integers(0, 3))
def test_removing_one_person_removes_only_their_rows_one_per_group(rows: Any, person: int) -> None:
    # the identifier is g here; the other key is i % 2
    by = (N.Col("g"), N.Alias(N.Binary("%", N.Col("i"), N.Lit(2)), "k"))
    with_p = _output(rows, by)
    without = _output([r for r in rows if r[0] != person], by)
    diff = with_p - without
    assert without - with_p == Counter()  # nothing else changes
    assert all(key[0] == person for key in diff)
    per_k = Counter(key[1] for key in diff.elements())
    assert all(c == 1 for c in per_k.values())  # one row per group of the other keys


# -- the law of a release through the step ------------------------------------------------------


@pytest.mark.slow
def test_release_through_the_step_has_the_reported_discrete_laplace_law() -> None:
    groups = scaled(20_000, minimum=8_000)
    # group g holds h = 0..(g % 3), each h twice: after group_by(g, h).agg(x.max()), g % 3 + 1
    # rows per g; one row changes one output row (distance 2): dp.len has scale 2/ε
    g = [k for k in range(groups) for h in range(k % 3 + 1) for _ in range(2)]
    h = [h for k in range(groups) for h in range(k % 3 + 1) for _ in range(2)]
    context = dp.Context.compositor(
        data=pl.LazyFrame(
            {"g": g, "h": h, "x": h}, schema={"g": pl.Int64, "h": pl.Int64, "x": pl.Int64}
        ),
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=1,
    )
    keys = pl.DataFrame({"g": list(range(groups))}, schema={"g": pl.Int64})
    query = (
        context.query()
        .group_by("g", "h")
        .agg(pl.col.x.max())
        .group_by("g")
        .agg(dp.len(signed=True))
        .with_keys(keys)
    )
    scale = query.summarize()["scale"][0]
    assert scale == 2.0
    out = query.release().collect()
    z = [v - (k % 3 + 1) for k, v in zip(out["g"].to_list(), out["len"].to_list(), strict=True)]
    check_integer_law(
        z, discrete_laplace_pmf(scale), [discrete_laplace_pmf(scale * f) for f in (0.7, 1.3)]
    )


def test_the_new_aggregations_are_refused_outside_a_stable_agg() -> None:
    q = _id_context().query()
    with pytest.raises(NotImplementedForType, match="mean\\(\\) is an exact aggregation"):
        q.with_columns(m=pl.col.HWUSUAL.mean())
    with pytest.raises(NotImplementedForType, match=r"'mean' under \.dp\.noise"):
        q.group_by("g").agg(pl.col.HWUSUAL.mean().dp.noise())


def test_identifier_step_combines_with_the_units_bounds() -> None:
    # an individual holds up to 2 identifiers, in 1 group of g: after group_by(PIDENT, g),
    # each identifier has 1 row per g, so a group of g changes by ids × 1 = 2 rows, in 1 group
    context = dp.Context.compositor(
        data=_lfs().with_columns(g=pl.col.PIDENT % 4),
        privacy_unit=dp.unit_of(
            contributions=[dp.polars.Bound(per_group=2), dp.polars.Bound(by=["g"], num_groups=1)],
            identifier="PIDENT",
        ),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=1,
    )
    step = context.query().group_by("PIDENT", "g").agg(pl.col.HWUSUAL.max())
    grouped = (
        step.group_by("g").agg(dp.len(signed=True)).with_keys(pl.DataFrame({"g": [0, 1, 2, 3]}))
    )
    assert grouped.summarize()["scale"].to_list() == _approx([2.0])
    # ungrouped: the rows of g are not bounded per identifier in all (groups of g unknown)
    with pytest.raises(InvalidParameter, match="per_group"):
        step.select(dp.len(signed=True)).summarize()


def test_output_schema_is_polars_and_the_engines_agree() -> None:
    from opendp_lite.backends.tables.narwhals import _group_agg_arrow, arrow_dtype_name
    from opendp_lite.backends.tables.polars import _group_agg, dtype_of

    lf = pl.LazyFrame(
        {
            "k": [1, 1, 2],
            "i": [1, 2, 3],
            "s": [1, 2, 3],
            "f": [0.5, 1.0, 2.0],
            "t": ["a", "b", "c"],
        },
        schema={"k": pl.Int64, "i": pl.Int64, "s": pl.Int16, "f": pl.Float32, "t": pl.String},
    )
    context = dp.Context.compositor(
        data=lf,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=1,
    )
    aggs = [
        pl.col.i.mean().alias("mean_i"),
        pl.col.i.min().alias("min_i"),
        pl.len(),
        pl.col.s.sum().alias("sum_s"),
        pl.col.f.median().alias("med_f"),
        pl.col.t.max().alias("max_t"),
        pl.col.i.n_unique().alias("nu"),
    ]
    want = dict(lf.group_by("k").agg(aggs).collect_schema())  # Polars' own dtypes
    declared = dict(context.query().group_by("k").agg(aggs).collect_schema())
    assert declared == want
    step = context.query().group_by("k").agg(aggs)._state.steps[-1]
    got_polars = {c: dtype_of(t) for c, t in _group_agg(lf, step).collect_schema().items()}
    arrow = lf.collect().to_arrow()
    cols, _ = _group_agg_arrow({c: arrow.column(c) for c in arrow.column_names}, 3, step)
    got_arrow = {c: arrow_dtype_name(a.type) for c, a in cols.items()}
    assert got_polars == got_arrow == {c: dtype_of(t) for c, t in want.items()}


def test_signed_zeros_do_not_depend_on_the_rows_order() -> None:
    from opendp_lite.backends.tables.narwhals import stable_aggregate, stable_group_rows

    for vals in ([0.0, -0.0], [-0.0, 0.0]):
        assert math.copysign(1, stable_aggregate("min", vals, "Float64", "Float64")) == -1
        assert math.copysign(1, stable_aggregate("max", vals, "Float64", "Float64")) == 1
        ((key,),), _ = stable_group_rows([vals], [])
        assert math.copysign(1, key) == 1


def test_groups_split_by_an_engine_are_merged_by_key_class() -> None:
    from opendp_lite.backends.tables.narwhals import stable_grouped_rows

    keys, aggs = stable_grouped_rows(
        [[-0.0], [0.0], [math.nan], [float("nan")]],
        [[[1], [2], [3], [4]]],
        [("sum", "Int64", "Int64")],
    )
    assert [str(k) for k in keys[0]] == ["nan", "0.0"]  # (null, then NaN, then values)
    assert aggs == [[7, 3]]


def test_an_empty_frame_gives_an_empty_output_on_every_engine() -> None:
    rows = [(1, 2, 0.5)]
    for data in _frames(rows):
        step = N.GroupAgg((N.Col("g"),), (N.Alias(N.Agg("mean", N.Col("f")), "m"),))
        plan = N.FramePlan(
            steps=(N.FilterRows(N.Binary(">", N.Col("g"), N.Lit(5))), step),
            aggregates=(("#n", N.Length()),),
        )
        engine = of_table(data)
        assert engine is not None
        assert engine.run(data, plan).values["#n"] == [0], type(data).__name__


@pytest.mark.parametrize("kind", ["sum", "mean", "min", "max", "median", "var", "std", "count"])
def test_non_finite_values_follow_polars(kind: str) -> None:
    from opendp_lite.backends.tables.polars import _group_agg

    inf, nan = math.inf, math.nan
    groups = [[1.0, nan], [inf, 1.0], [inf, -inf], [nan], [None, None], [5.0], [-inf, 2.0, 3.0]]
    g = [i for i, v in enumerate(groups) for _ in v]
    f = [x for v in groups for x in v]
    lf = pl.LazyFrame({"g": g, "f": f}, schema={"g": pl.Int64, "f": pl.Float64})
    step = N.GroupAgg((N.Col("g"),), (N.Alias(N.Agg(kind, N.Col("f")), "a"),))
    ours = _group_agg(lf, step).sort("g").collect()["a"].to_list()
    agg = getattr(pl.col("f"), kind)().alias("a")
    polars = lf.group_by("g").agg(agg).sort("g").collect()["a"].to_list()
    assert [repr(v) for v in ours] == [repr(v) for v in polars]


def test_schema_and_explain_of_the_step_read_no_data() -> None:
    q = _id_context().query().group_by("PIDENT").agg(pl.col.HWUSUAL.mean(), n=pl.len())
    assert dict(q.collect_schema()) == {"PIDENT": pl.Int64, "HWUSUAL": pl.Float64, "n": pl.UInt32}
    assert "AGGREGATE" in q.explain()
