"""The Context API on data frames: schema-only domains, columns, public filters, labelled
histograms and the summary, end to end on each library."""

from __future__ import annotations

from typing import Any

import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import InvalidParameter, NotImplementedForType, NotInDomain

N = 200
AGES = [(i * 7) % 80 + 5 for i in range(N)]
INCOME = [float((i * 37) % 1000) for i in range(N)]
REGION = [["north", "south", "east", "west", "centre"][i % 5] for i in range(N)]


def _context(data: Any, split: int = 4) -> Any:
    return dp.Context.compositor(
        data=data,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=split,
    )


def _frame(frame: Any) -> Any:
    return frame({"age": AGES, "income": INCOME, "region": REGION})


def test_schema_is_read_from_dtypes_not_values(lib: str, frame: Any) -> None:
    context = _context(_frame(frame))
    assert context.schema == {"age": "i64", "income": "f64", "region": "String"}
    assert context.library == lib
    assert context.accountant.input_domain == dp.dataframe_domain(str)


def test_filter_select_aggregate_release(lib: str, frame: Any) -> None:
    context = _context(_frame(frame))
    adults = context.query().filter("age", ">=", 18).count().laplace()
    scale = adults.param()
    # the filter is 1-stable: the count's scale is that of a plain count at ε = 1/4
    assert scale == context.query().count().laplace().param()
    assert isinstance(adults.release(), int)
    total = context.query().select("income", fill=0.0).clamp((0.0, 1000.0)).sum().laplace()
    assert isinstance(total.release(), float)
    assert context.remaining_privacy_loss() == [pytest.approx(0.25)] * 2


def test_filter_is_applied_before_the_aggregate(lib: str, frame: Any) -> None:
    """Without noise: the filtered chain counts exactly the rows the predicate keeps."""
    chain = dp.t.make_filter_rows(dp.dataframe_domain(), dp.symmetric_distance(), "age", "<", 18)
    counted = chain >> dp.t.make_select_column("region", TOA=str) >> dp.t.then_count()
    out = counted(_frame(frame))
    out = out.compute() if hasattr(out, "compute") else out
    assert out == sum(a < 18 for a in AGES)
    assert chain.map(3) == 3


def test_histogram_is_labelled_by_category(lib: str, frame: Any) -> None:
    context = _context(_frame(frame))
    hist = context.query().histogram("region", categories=["north", "south"]).laplace()
    released = hist.release()
    if lib in ("pandas", "dask"):
        pd = pytest.importorskip("pandas")
        assert isinstance(released, pd.Series)
        assert list(released.index) == ["north", "south", "other"]
        assert released.index.name == "region"
    elif lib == "polars":
        pl = pytest.importorskip("polars")
        assert isinstance(released, pl.DataFrame)
        assert released["region"].to_list() == ["north", "south", "other"]
        assert released.columns == ["region", "count"]
    else:
        assert isinstance(released, dict)
        assert list(released) == ["north", "south", "other"]


def test_histogram_on_plain_data_is_a_dict() -> None:
    context = _context(["a", "b", "a", "c"] * 10, split=1)
    released = context.query().histogram(categories=["a", "b"], other="(rest)").laplace().release()
    assert list(released) == ["a", "b", "(rest)"]
    assert all(isinstance(v, int) for v in released.values())


def test_histogram_refuses_without_categories_and_a_clashing_label() -> None:
    context = _context(["a", "b"] * 10)
    with pytest.raises(InvalidParameter, match=r"categories=\["):
        context.query().histogram()
    with pytest.raises(InvalidParameter, match="other='other' is also a category"):
        context.query().histogram(categories=["other"])


def test_opendp_named_constructor_keeps_its_array() -> None:
    context = _context(["a", "b", "a"] * 10, split=1)
    out = context.query().count_by_categories(categories=["a"]).laplace().release()
    # a vector, not a frame histogram's dict: a list for list data, as OpenDP 0.16 releases it
    assert isinstance(out, list) and len(out) == 2


def test_summary_reports_loss_scale_and_accuracy(lib: str, frame: Any) -> None:
    context = _context(_frame(frame))
    context.query().count().laplace().release()
    context.query().select("income", fill=0.0).clamp((0.0, 1000.0)).sum().laplace().release()
    summary = context.summary(alpha=0.05)
    first, second = summary.rows
    assert first["loss"] == pytest.approx(0.25) and second["loss"] == pytest.approx(0.25)
    assert first["mechanism"] == "laplace" and first["scale"] == 4.0
    assert first["accuracy"] == dp.discrete_laplacian_scale_to_accuracy(4.0, alpha=0.05)
    assert second["accuracy"] == dp.laplacian_scale_to_accuracy(second["scale"], alpha=0.05)
    text = str(summary)
    assert "select('income')" in text and "accuracy (α=0.05)" in text and "remaining" in text


def test_column_errors_name_the_fix(lib: str, frame: Any) -> None:
    context = _context(_frame(frame))
    with pytest.raises(InvalidParameter, match=r"column 'salary'.*columns: \['age'"):
        context.query().select("salary")
    with pytest.raises(InvalidParameter, match=r"needs a data frame.*Fix"):
        _context(AGES).query().select("age")


def test_missing_value_in_an_integer_column_is_refused_at_the_data_boundary() -> None:
    """The context's domain declares the schema's columns, so the data owner's call that
    builds the context refuses the missing value (naming it: only the owner sees this); no
    query can then fail on it (a refusal at release would name the position to the
    analyst)."""
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"n": pd.Series([1, None, 3] * 10, dtype="Int64")})
    with pytest.raises(NotInDomain, match=r"column 'n'.*position 1"):
        _context(df, split=1)


def test_series_data_gives_a_vector_context(lib: str, series: Any) -> None:
    if lib == "dask":
        pytest.skip("a Dask series context: the vector path (tests/backends/test_dask_*.py)")
    context = _context(series(INCOME, "income"), split=1)
    assert context.accountant.input_domain == dp.vector_domain(dp.atom_domain(T=float, nan=True))
    out = context.query().impute_constant(0.0).clamp((0.0, 1000.0)).sum().laplace().release()
    assert isinstance(out, float)


def test_group_by_is_a_documented_hook() -> None:
    pd = pytest.importorskip("pandas")
    context = _context(pd.DataFrame({"r": ["a", "b"], "x": [1.0, 2.0]}))
    try:
        dp.t.then_partition_by  # noqa: B018 - present once the grouped constructors land
    except AttributeError:
        with pytest.raises(NotImplementedForType, match="make_partition_by"):
            context.query().group_by("r")


def test_a_polars_lazy_frame_gets_the_table_query() -> None:
    """A LazyFrame is served by the table API (issue 24), not by the chain-style Query."""
    pl = pytest.importorskip("polars")
    from opendp_lite.table.query import LazyFrameQuery

    assert isinstance(_context(pl.LazyFrame({"a": [1, 2]})).query(), LazyFrameQuery)


def test_grouped_release_is_labelled_when_the_grouped_constructors_are_installed() -> None:
    pd = pytest.importorskip("pandas")
    if not hasattr(dp.t, "then_partition_by"):
        pytest.skip("the grouped-aggregate constructors are not in this build")
    df = pd.DataFrame({"region": ["n", "s", "n", "e"] * 50, "income": [1.0, 2.0, 3.0, 4.0] * 50})
    context = _context(df, split=1)
    per_group = (
        dp.t.make_select_column("income", TOA=float) >> dp.t.then_count() >> dp.m.then_laplace(4.0)
    )
    released = context.query().group_by("region", keys=["n", "s"]).grouped(per_group).release()
    assert isinstance(released, pd.Series)
    assert list(released.index) == ["n", "s"] and released.index.name == "region"


def test_a_vector_grouped_release_is_labelled_by_its_public_keys() -> None:
    """grouped_sum/grouped_count release one value per declared key, in the keys' order: the
    context labels them by key (a pandas Series for pandas data), never a bare vector."""
    pd = pytest.importorskip("pandas")
    if not hasattr(dp.t, "then_grouped_sum"):
        pytest.skip("the grouped-aggregate constructors are not in this build")
    df = pd.DataFrame({"region": ["n"] * 150 + ["s"] * 50, "income": [10.0] * 200})
    context = dp.Context.compositor(
        data=df,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=float("inf")),
    )
    keys = ["s", "w", "n"]
    sums = context.query().group_by("region", keys=keys).grouped_sum("income", bounds=(0.0, 10.0))
    released = sums.laplace(1e-9).release()
    assert isinstance(released, pd.Series) and released.index.name == "region"
    assert list(released.index) == keys
    assert released.to_dict() == pytest.approx({"s": 500.0, "w": 0.0, "n": 1500.0}, abs=1e-6)
    counts = context.query().group_by("region", keys=keys).grouped_count().laplace(1e-9)
    assert counts.release().to_dict() == {"s": 50, "w": 0, "n": 150}


def test_grouped_labels_follow_the_data_type() -> None:
    from opendp_lite.context import _labelled_groups

    assert _labelled_groups({"a": 1}, "g", None) == {"a": 1}
    pytest.importorskip("pandas")
    out = _labelled_groups({("a", 1): 5, ("b", 2): 6}, ("g", "h"), "pandas")
    assert list(out.index.names) == ["g", "h"] and out[("b", 2)] == 6
    pytest.importorskip("polars")
    frame = _labelled_groups({"a": 1, "b": 2}, "g", "polars")
    assert frame["g"].to_list() == ["a", "b"] and frame["value"].to_list() == [1, 2]


def test_a_nested_context_on_a_frame_keeps_its_schema(lib: str, frame: Any) -> None:
    outer = _context(_frame(frame), split=2)
    inner = outer.query().compositor(split_evenly_over=2).release()
    assert inner.schema == outer.schema and inner.library == lib
    released = inner.query().histogram("region", categories=["north"]).laplace().release()
    assert len(released) == 2


def test_labels_and_filter_match_the_exact_answer_at_negligible_noise(lib: str, frame: Any) -> None:
    """With an unbounded budget and noise of scale 1e-9, releases equal the exact answers:
    each label sits on its own category's count, and the filter keeps exactly its rows."""
    context = dp.Context.compositor(
        data=_frame(frame),
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=float("inf")),
    )
    cats = ["south", "north", "nowhere"]
    hist = context.query(epsilon=1e10).histogram("region", categories=cats)
    released = hist.laplace(scale=1e-9).release()
    if lib == "polars":
        released = dict(zip(released["region"].to_list(), released["count"].to_list(), strict=True))
    exact = {c: REGION.count(c) for c in cats}
    exact["other"] = N - sum(exact.values())
    assert {k: int(released[k]) for k in [*cats, "other"]} == exact
    adults = context.query(epsilon=1e10).filter("age", "in", [5, 12, 19]).count()
    assert adults.laplace(scale=1e-9).release() == sum(a in (5, 12, 19) for a in AGES)
