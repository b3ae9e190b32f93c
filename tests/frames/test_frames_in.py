"""pandas, Polars, pyarrow and Dask columns and frames through the constructors.

Each library's object must give exactly the numpy answer (no noise here: transformations),
missing values must follow the domain, and the conversion must share memory where promised.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import FailedFunction, NotInDomain, OpenDPLiteWarning
from opendp_lite.samplers import rng

SYM = dp.symmetric_distance()
VALUES = [3.5, -1.0, 7.25, 12.0, 0.5, 4.0]
INTS = [3, -1, 7, 12, 0, 4]
WORDS = ["north", "south", "north", "east", "west", "north"]


def _vec(T: Any, **kw: Any) -> Any:
    kw.setdefault("nan", False)  # NaN is the missing value these tests refuse
    return dp.vector_domain(dp.atom_domain(T=T, **kw))


def _out(x: Any) -> Any:
    """A result as plain Python (Dask results are computed)."""
    if hasattr(x, "compute"):
        x = x.compute()
    return np.asarray(x).tolist() if isinstance(x, np.ndarray) else x


# -- constructors -----------------------------------------------------------------------------


def test_count_sum_mean_clamp_on_columns(lib: str, series: Any) -> None:
    col = series(VALUES, "w")
    count = dp.t.make_count(_vec(float), SYM)
    assert _out(count(col)) == len(VALUES)
    clamp = dp.t.make_clamp(_vec(float), SYM, (0.0, 10.0))
    assert _out(clamp(col)) == np.clip(VALUES, 0.0, 10.0).tolist()
    total = clamp >> dp.t.then_sum()
    assert _out(total(col)) == pytest.approx(float(np.clip(VALUES, 0.0, 10.0).sum()))
    sized = dp.vector_domain(dp.atom_domain(bounds=(0.0, 10.0)), size=len(VALUES))
    mean = dp.t.make_mean(sized, SYM)
    clipped = series(np.clip(VALUES, 0.0, 10.0).tolist(), "w")
    assert _out(mean(clipped)) == pytest.approx(float(np.clip(VALUES, 0.0, 10.0).mean()))


def test_integer_and_string_columns(lib: str, series: Any) -> None:
    ints = dp.t.make_clamp(_vec("i64"), SYM, (0, 10)) >> dp.t.then_sum()
    assert _out(ints(series(INTS, "n"))) == sum(min(max(v, 0), 10) for v in INTS)
    hist = dp.t.make_count_by_categories(_vec(str), SYM, ["north", "south"])
    assert _out(hist(series(WORDS, "region"))) == [3, 1, 2]  # OpenDP's array, "other" last


def test_select_column_on_a_frame(lib: str, frame: Any) -> None:
    df = frame({"w": VALUES, "n": INTS, "region": WORDS})
    select = dp.t.make_select_column("w", TOA=float)
    assert _out(select(df)) == VALUES
    chain = dp.t.make_select_column("region", TOA=str) >> dp.t.then_count_by_categories(["north"])
    assert _out(chain(df)) == [3, 3]
    ints = dp.t.make_select_column("n", TOA="i64") >> dp.t.then_clamp((0, 5)) >> dp.t.then_sum()
    assert _out(ints(df)) == sum(min(max(v, 0), 5) for v in INTS)


@pytest.mark.parametrize(
    ("dtype", "values", "T"),
    [
        ("Int64", [1, 2, 3], "i64"),
        ("boolean", [True, False, True], "bool"),
        ("string", ["a", "b", "a"], "String"),
        ("category", ["a", "b", "a"], "String"),
        (None, ["a", "b", "a"], "String"),  # object dtype
    ],
)
def test_pandas_extension_dtypes(dtype: Any, values: list[Any], T: str) -> None:
    pd = pytest.importorskip("pandas")
    col = pd.Series(values, dtype=dtype)
    out = _vec(T)._normalize(col)
    assert out.tolist() == values


def test_polars_utf8_and_categorical() -> None:
    pl = pytest.importorskip("polars")
    for dtype in (pl.Utf8, pl.Categorical):
        out = _vec(str)._normalize(pl.Series("c", WORDS, dtype=dtype))
        assert out.tolist() == WORDS
        assert all(type(v) is str for v in out)


def test_a_frame_where_a_vector_is_expected_names_the_fix(lib: str, frame: Any) -> None:
    if lib == "dask":
        pytest.skip("a Dask frame is checked by the Dask backend")
    with pytest.raises(NotInDomain, match=r"expected a vector.*make_select_column"):
        dp.t.make_count(_vec(float), SYM)(frame({"w": VALUES}))


# -- missing values ---------------------------------------------------------------------------


def test_missing_values_follow_the_domain(lib: str, series: Any) -> None:
    floats = series([1.0, None, 3.0], "w")
    assert np.isnan(_out(_vec(float, nan=True)._normalize(floats))[1])
    if lib == "dask":
        return  # a Dask vector has atom elements only (option vectors: numpy and frames)
    opt = dp.vector_domain(dp.option_domain(dp.atom_domain(T=float, nan=False)))
    assert _out(opt._normalize(series([1.0, None, 3.0], "w"))) == [1.0, None, 3.0]
    ints = series([1, None, 3], "n", dtype="Int64" if lib in ("pandas", "dask") else None)
    opt_int = dp.vector_domain(dp.option_domain(dp.atom_domain(T="i64")))
    assert _out(opt_int._normalize(ints)) == [1, None, 3]


@pytest.mark.parametrize("kind", ["float", "int", "str"])
def test_missing_value_refused_naming_column_position_value(
    lib: str, series: Any, kind: str
) -> None:
    values = {"float": [1.0, 2.0, None], "int": [1, 2, None], "str": ["a", "b", None]}[kind]
    T = {"float": float, "int": "i64", "str": str}[kind]
    dtype = {"int": "Int64", "str": "string"}.get(kind) if lib in ("pandas", "dask") else None
    col = series(values, "w", dtype=dtype)
    count = dp.t.make_count(_vec(T), SYM)
    where = r"position 0" if lib == "dask" else r"position 2"  # Dask: within its partition
    name = "" if lib == "pyarrow" else r"column 'w', "  # a pyarrow array has no name
    pattern = name + where + r": a missing value .* Fix: "
    if lib == "dask" and kind == "float":  # a numpy-typed Dask block: checked as numpy is
        pattern = r"NaN is not a member of AtomDomain\(T=f64\)\. Fix: "
    with pytest.raises(NotInDomain, match=pattern):
        _out(count(col))


def test_pandas_na_and_nan_and_none_are_all_missing() -> None:
    pd = pytest.importorskip("pandas")
    opt = dp.vector_domain(dp.option_domain(dp.atom_domain(T=float, nan=False)))
    assert opt._normalize(pd.Series([1.0, np.nan, None])).tolist() == [1.0, None, None]
    assert opt._normalize(pd.Series([1.0, pd.NA], dtype="Float64")).tolist() == [1.0, None]
    strs = dp.vector_domain(dp.option_domain(dp.atom_domain(T=str)))
    assert strs._normalize(pd.Series(["a", None, pd.NA], dtype="string")).tolist() == [
        "a",
        None,
        None,
    ]


def test_frame_missing_values_reach_the_column_domain(lib: str, frame: Any) -> None:
    df = frame({"w": [1.0, None, 2.0], "n": [1, 2, 3]})
    nan_ok = dp.t.make_select_column("w", TOA=float)  # a float column admits NaN
    assert np.isnan(_out(nan_ok(df))[1])
    imputed = nan_ok >> dp.t.then_impute_constant(0.0) >> dp.t.then_clamp((0.0, 5.0))
    assert _out((imputed >> dp.t.then_sum())(df)) == 3.0


def test_masked_arrays_stay_refused() -> None:
    with pytest.raises(NotInDomain, match="masked"):
        dp.t.make_count(_vec(float), SYM)(np.ma.masked_array([1.0, 2.0], mask=[False, True]))


# -- no copies where none is needed ------------------------------------------------------------


def test_zero_copy_numeric_columns() -> None:
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    pa = pytest.importorskip("pyarrow")
    cases = [
        (pd.Series(np.array(VALUES)), lambda s: s.to_numpy(), float),
        (pd.Series(np.array(INTS, dtype=np.int64)), lambda s: s.to_numpy(), "i64"),
        (pl.Series("w", VALUES), lambda s: s.to_numpy(), float),
        (pl.Series("n", INTS, dtype=pl.Int64), lambda s: s.to_numpy(), "i64"),
        (pa.chunked_array([VALUES]), lambda s: s.chunk(0).to_numpy(), float),
        (pa.array(INTS, type=pa.int64()), lambda s: s.to_numpy(), "i64"),
    ]
    for col, native, T in cases:
        out = _vec(T)._normalize(col)
        assert np.shares_memory(out, native(col)), type(col)
        assert not out.flags.writeable
    buffer = np.array(VALUES)
    _vec(float)._normalize(pd.Series(buffer, copy=False))
    assert buffer.flags.writeable  # the caller's data is not made read-only (a view is)


def test_zero_copy_frame_columns() -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"w": np.array(VALUES), "n": np.array(INTS, dtype=np.int64)})
    out = dp.dataframe_domain()._normalize(df)
    assert np.shares_memory(out["w"], df["w"].to_numpy())
    assert np.shares_memory(out["n"], df["n"].to_numpy())


# -- refused before any randomness -------------------------------------------------------------


def _recording_source(drawn: list[int]) -> Any:
    def source(n: int) -> bytes:
        drawn.append(n)
        return rng._os_source(n)

    return source


def _drawn(meas: Any, data: Any) -> list[int]:
    drawn: list[int] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OpenDPLiteWarning)
        with rng.scripted_randomness(_recording_source(drawn)):
            meas(data)
    return drawn


def test_missing_value_refused_before_any_randomness(lib: str, series: Any, frame: Any) -> None:
    meas = dp.t.make_count(_vec("i64"), SYM) >> dp.m.then_laplace(1.0)
    dtype = "Int64" if lib in ("pandas", "dask") else None
    assert _drawn(meas, series([1, 2, 3], "n", dtype=dtype))  # the control draws noise
    drawn: list[int] = []
    with pytest.raises(NotInDomain, match="missing value"):
        drawn = _drawn(meas, series([1, None, 3], "n", dtype=dtype))
    assert drawn == []
    on_frame = (
        dp.t.make_select_column("n", TOA="i64") >> dp.t.then_count() >> dp.m.then_laplace(1.0)
    )
    bad = frame({"n": [1, None, 3]})  # pandas and Dask: a float column (NaN), not i64
    # NotInDomain (a FailedFunction) at normalisation; a Dask column by its dtype, in the chain
    with pytest.raises(FailedFunction):
        drawn = _drawn(on_frame, bad)
    assert drawn == []


def test_a_nan_in_a_float_column_is_refused_by_name_and_the_values_are_shared(
    lib: str, series: Any
) -> None:
    # a float column without nulls is read without a NaN scan and checked as a plain numpy
    # vector; a NaN (not a null) is then refused, and re-explained naming column and position
    if lib == "dask":
        pytest.skip("a Dask column is checked block by block by the Dask backend")
    dom = _vec(float)
    clean = series([1.0, 2.0, 3.0], "w")
    out = dom._normalize(clean)
    assert isinstance(out, np.ndarray) and out.tolist() == [1.0, 2.0, 3.0]
    assert not out.flags.writeable  # the plain path's read-only view
    name = "" if lib == "pyarrow" else r"column 'w', "  # a pyarrow array has no name
    with pytest.raises(NotInDomain, match=name + r"position 1: .*Fix: "):
        dom._normalize(series([1.0, float("nan"), 3.0], "w"))
