"""One record never decides whether a frame release raises.

Every frame-consuming constructor runs on neighbouring frames that differ in one bad cell (a
missing value, a NaN, a string in a numeric column, an integer beyond the declared type).
The outcome is the same: either both frames release, or the frame with the bad cell is
outside the measurement's own input domain (refused where the data enters, by the data
owner's call, before any function runs).  A frame that is a member and then raises inside
the function is the failure this file looks for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import NotInDomain

G = ["a", "b", "a", "c", "b", "a"]
X = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
N = [10, 20, 30, 40, 50, 60]
KEYS = ["a", "b"]  # rows with key "c" (row 3) are dropped by the partition
SPACE = dp.dataframe_domain(), dp.symmetric_distance()

#: the bad cells: (column, row, value); row 3's key is dropped, row 0's is kept
BAD = [
    ("x", 0, None),
    ("x", 3, None),
    ("x", 0, float("nan")),
    ("x", 3, float("nan")),
    ("x", 0, "oops"),
    ("x", 3, "oops"),
    ("n", 0, None),
    ("n", 3, 70_000_000_000),
    ("n", 0, "oops"),
]


def _columns(bad: tuple[str, int, Any] | None = None) -> dict[str, list[Any]]:
    cols: dict[str, list[Any]] = {"g": list(G), "x": list(X), "n": list(N)}
    if bad is not None:
        column, row, value = bad
        cols[column][row] = value
    return cols


def _frame(lib: str, cols: dict[str, list[Any]]) -> Any:
    if lib == "pandas":
        pd = pytest.importorskip("pandas")
        return pd.DataFrame(cols)
    if lib == "polars":
        pl = pytest.importorskip("polars")
        try:
            return pl.DataFrame(cols, strict=False)
        except Exception:  # a column Polars cannot hold (a string among floats): not a frame
            pytest.skip("Polars cannot build this column")
    return cols


def _inner(T: object, column: str) -> Any:
    select = dp.t.make_select_column(column, TOA=T)
    return select >> dp.t.then_count() >> dp.m.then_laplace(1.0)


def _sum_of(column: str, T: Any, bounds: tuple[Any, Any], fill: Any) -> Any:
    return (
        dp.t.make_select_column(column, TOA=T)
        >> dp.t.then_impute_constant(fill)
        >> dp.t.then_clamp(bounds)
        >> dp.t.then_sum()
        >> dp.m.then_laplace(100.0)
    )


#: every frame-consuming constructor, as a measurement on SPACE
MEASUREMENTS: dict[str, Callable[[], Any]] = {
    "select_column": lambda: _inner(float, "x"),
    "select_column_int": lambda: _inner(int, "n"),
    "filter_rows>>select_column": lambda: (
        dp.t.make_filter_rows(*SPACE, "g", "==", "a") >> _sum_of("x", float, (0.0, 10.0), 0.0)
    ),
    "partition_by>>grouped_count": lambda: (
        dp.t.make_partition_by(*SPACE, by="g", keys=KEYS)
        >> dp.t.then_grouped_count()
        >> dp.m.then_laplace(1.0)
    ),
    "partition_by>>grouped_sum": lambda: (
        dp.t.make_partition_by(*SPACE, by="g", keys=KEYS)
        >> dp.t.then_grouped_sum("x", (0.0, 10.0))
        >> dp.m.then_laplace(10.0)
    ),
    "partition_by>>grouped(float)": lambda: (
        dp.t.make_partition_by(*SPACE, by="g", keys=KEYS) >> dp.c.then_grouped(_inner(float, "x"))
    ),
    "partition_by>>grouped(i64)": lambda: (
        dp.t.make_partition_by(*SPACE, by="g", keys=KEYS) >> dp.c.then_grouped(_inner("i64", "n"))
    ),
    "filter_rows>>partition_by>>grouped": lambda: (
        dp.t.make_filter_rows(*SPACE, "g", "!=", "z")
        >> dp.t.then_partition_by(by="g", keys=KEYS)
        >> dp.c.then_grouped(_inner(float, "x"))
    ),
}


def _outcome(run: Callable[[Any], Any], domain: Any, data: Any) -> str:
    if not domain.member(data):
        return "outside"  # refused where the data enters, before any function
    try:
        run(data)
    except Exception as e:
        return f"raised {type(e).__name__}"
    return "released"


@pytest.mark.parametrize("lib", ["dict", "pandas", "polars"])
@pytest.mark.parametrize("bad", BAD, ids=[f"{c}{r}={v!r}" for c, r, v in BAD])
@pytest.mark.parametrize("name", sorted(MEASUREMENTS))
def test_one_bad_cell_never_decides_whether_a_release_raises(
    name: str, bad: tuple[str, int, Any], lib: str
) -> None:
    m = MEASUREMENTS[name]()
    clean, neighbour = _frame(lib, _columns()), _frame(lib, _columns(bad))
    assert _outcome(m, m.input_domain, clean) == "released"
    assert _outcome(m, m.input_domain, neighbour) in ("released", "outside")


@pytest.mark.parametrize("lib", ["dict", "pandas", "polars"])
@pytest.mark.parametrize("bad", BAD, ids=[f"{c}{r}={v!r}" for c, r, v in BAD])
@pytest.mark.parametrize("helper", ["grouped_count", "grouped_sum", "grouped_mean"])
def test_grouped_helpers_release_on_both_neighbours(
    helper: str, bad: tuple[str, int, Any], lib: str
) -> None:
    f = getattr(dp.c, helper)
    extra = {} if helper == "grouped_count" else {"column": "x", "bounds": (0.0, 10.0)}
    for cols in (_columns(), _columns(bad)):
        out = f(_frame(lib, cols), by="g", epsilon=1.0, keys=KEYS, **extra)
        assert sorted(out) == KEYS


def _context(data: Any) -> Any:
    return dp.Context.compositor(
        data=data,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=10.0),
    )


#: the Context's frame verbs (its domain is the accountant's)
CONTEXT_QUERIES: dict[str, Callable[[Any], Any]] = {
    # no float column left: the rows are counted through the first column ("g")
    "count": lambda c: c.query(epsilon=1.0).count().laplace(scale=1.0),
    "select_sum": lambda c: (
        c.query(epsilon=1.0).select("n").clamp((0, 100)).sum().laplace(scale=100.0)
    ),
    "group_by": lambda c: c.query(epsilon=1.0).group_by("g", keys=KEYS).grouped(_inner("i64", "n")),
}


@pytest.mark.parametrize("lib", ["pandas", "polars", "dask"])
@pytest.mark.parametrize("bad", [("g", 0, None), ("g", 3, None), ("n", 0, None), ("n", 3, None)])
@pytest.mark.parametrize("query", sorted(CONTEXT_QUERIES))
def test_one_bad_cell_never_decides_whether_a_context_query_raises(
    query: str, bad: tuple[str, int, Any], lib: str
) -> None:
    """In a Context, a None in the first column, or in a pandas Int64 / Polars i64 column, is
    refused when the owner builds the context (a refusal at release would name its position),
    so no query can raise on it."""
    pd = pytest.importorskip("pandas")

    def frame(cols: dict[str, list[Any]]) -> Any:
        cols = {"g": cols["g"], "n": cols["n"]}  # no float column
        if lib in ("pandas", "dask"):
            pdf = pd.DataFrame({"g": cols["g"], "n": pd.Series(cols["n"], dtype="Int64")})
            if lib == "pandas":
                return pdf
            # a lazy frame: its declared columns are checked where the owner passes it
            return pytest.importorskip("dask.dataframe").from_pandas(pdf, npartitions=2)
        return pytest.importorskip("polars").DataFrame(cols)

    def outcome(data: Any) -> str:
        try:
            context = _context(data)
        except NotInDomain:
            return "outside"
        try:
            CONTEXT_QUERIES[query](context).release()
        except Exception as e:
            return f"raised {type(e).__name__}"
        return "released"

    assert outcome(frame(_columns())) == "released"
    assert outcome(frame(_columns(bad))) in ("released", "outside")
