"""The narwhals engine (pandas and pyarrow frames): Polars' semantics, exact aggregates,
group order, schemas, and failures that carry no value."""

from __future__ import annotations

import math
import traceback
from typing import Any

import pytest

from opendp_lite.backends.tables import TableResult, of_table
from opendp_lite.backends.tables.narwhals import ENGINE
from opendp_lite.errors import FailedFunction, NotImplementedForType
from opendp_lite.table import nodes as N
from opendp_lite.transformations._aggregate import grid_k
from tests.backends.tables import _reference as ref

pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")


def _cols(table: Any, *exprs: N.Expr) -> dict[str, list[Any]]:
    """The values of ``exprs`` per row, read back through a NUnique-free plan: each row its
    own group (by a row id), the value as the group key."""
    ids = pa.array(range(table.num_rows), pa.int64())
    t = table.append_column("__row", ids)
    plan = N.FramePlan(
        (N.Select((N.Col("__row"), *exprs)),),
        (("n", N.Length()),),
        by=(N.Col("__row"), *(N.Col(N.output_name(e)) for e in exprs)),
    )
    res = ENGINE.run(t, plan)
    return {k: v for k, v in res.keys.items() if k != "__row"}


def _same_values(got: list[Any], want: list[Any]) -> None:
    def norm(v: Any) -> Any:
        return "NaN" if isinstance(v, float) and v != v else v

    assert [norm(v) for v in got] == [norm(v) for v in want]


def test_owns_pandas_and_arrow_but_not_polars() -> None:
    assert ENGINE.owns(pd.DataFrame({"a": [1]}))
    assert ENGINE.owns(pa.table({"a": [1]}))
    assert of_table(pd.DataFrame({"a": [1]})) is ENGINE
    assert not ENGINE.owns({"a": [1]})
    pl = pytest.importorskip("polars")
    assert not ENGINE.owns(pl.DataFrame({"a": [1]}))
    assert not ENGINE.owns(pl.LazyFrame({"a": [1]}))


def test_integer_floor_division_and_modulus_follow_polars() -> None:
    a = [7, -7, 7, -7, 5, None]
    b = [2, 2, -2, -2, 0, 1]
    t = pa.table({"a": pa.array(a, pa.int64()), "b": pa.array(b, pa.int64())})
    got = _cols(
        t,
        N.Alias(N.Binary("//", N.Col("a"), N.Col("b")), "q"),
        N.Alias(N.Binary("%", N.Col("a"), N.Col("b")), "r"),
    )
    # floor toward -inf, sign of % the divisor's, a zero divisor gives null (Polars 2.1)
    assert got["q"] == [3, -4, -4, 3, None, None]
    assert got["r"] == [1, 1, -1, -1, None, None]


def test_float_floor_division_modulus_and_division_by_zero() -> None:
    t = pa.table({"a": [7.5, -7.5, 1.0, 5.5, math.inf], "b": [-2.0, 2.0, 0.1, 0.0, 2.0]})
    got = _cols(
        t,
        N.Alias(N.Binary("//", N.Col("a"), N.Col("b")), "q"),
        N.Alias(N.Binary("%", N.Col("a"), N.Col("b")), "r"),
        N.Alias(N.Binary("/", N.Col("a"), N.Col("b")), "d"),
    )
    _same_values(got["q"], [-4.0, -4.0, 10.0, math.inf, math.inf])
    # a - b * floor(a / b): 1 % 0.1 is 0.0 in Polars (Python's fmod gives 0.0999...)
    _same_values(got["r"], [-0.5, 0.5, 0.0, math.nan, math.nan])
    _same_values(got["d"], [-3.75, -3.75, 10.0, math.inf, math.inf])


def test_nan_compares_above_every_number_and_clip_keeps_it() -> None:
    t = pa.table({"f": [math.nan, 1.0, None, -math.inf]})
    got = _cols(
        t,
        N.Alias(N.Binary(">", N.Col("f"), N.Lit(1e308)), "gt"),
        N.Alias(N.Binary("==", N.Col("f"), N.Lit(math.nan)), "eq"),
        N.Alias(N.Clip(N.Col("f"), 0.0, 3.0), "c"),
        N.Alias(N.Unary("is_nan", N.Col("f")), "isnan"),
    )
    assert got["gt"] == [True, False, None, False]
    assert got["eq"] == [True, False, None, False]
    _same_values(got["c"], [math.nan, 1.0, None, 0.0])
    assert got["isnan"] == [True, False, None, False]


def test_pandas_numpy_nan_reads_as_null() -> None:
    df = pd.DataFrame({"f": [1.0, math.nan]})
    plan = N.FramePlan(
        (),
        (
            ("nulls", N.NullCount(N.Col("f"))),
            ("nans", N.CountValid(N.FilterExpr(N.Col("f"), N.Unary("is_nan", N.Col("f"))))),
        ),
    )
    assert ENGINE.run(df, plan).values == {"nulls": [1], "nans": [0]}


def test_cut_labels_and_casts_to_string_follow_polars() -> None:
    t = pa.table({"f": [0.5, 2.0, None, math.nan, 1e-7, 1e20]})
    got = _cols(
        t,
        N.Alias(N.Cut(N.Col("f"), (0.0, 1.0, 2.5)), "cut"),
        N.Alias(N.Cut(N.Col("f"), (0.0, 2.0), left_closed=True), "cutl"),
        N.Alias(N.Cast(N.Col("f"), "String"), "s"),
    )
    assert got["cut"] == ["(0, 1]", "(1, 2.5]", None, None, "(0, 1]", "(2.5, inf]"]
    assert got["cutl"] == ["[0, 2)", "[2, inf)", None, None, "[0, 2)", "[2, inf)"]
    assert got["s"] == ["0.5", "2.0", None, "NaN", "1e-7", "1e+20"]


def test_grid_sum_is_exact_where_float_sums_round() -> None:
    values = [0.1] * 1000 + [1e-3, 2.5, -0.7]
    t = pa.table({"x": values})
    plan = N.FramePlan((), (("s", N.GridSum(N.Col("x"), -1.0, 3.0, 40)),))
    want = sum(grid_k(v, 40) for v in values)
    assert ENGINE.run(t, plan).values["s"] == [want]


def test_grid_sum_splits_when_the_int64_total_could_overflow() -> None:
    # 3000 values of 2^52 grid units each: the total passes 2^63, the answer is exact
    values = [1.0] * 3000
    t = pa.table({"x": values})
    plan = N.FramePlan((), (("s", N.GridSum(N.Col("x"), -1.0, 1.0, 52)),))
    assert ENGINE.run(t, plan).values["s"] == [3000 * 2**52]


def test_grid_sum_beyond_2_53_units_per_value_is_still_exact() -> None:
    values = [1e6, -3.3, 123.456]
    plan = N.FramePlan((), (("s", N.GridSum(N.Col("x"), -1e6, 1e6, 80)),))
    assert ENGINE.run(pa.table({"x": values}), plan).values["s"] == [
        sum(grid_k(v, 80) for v in values)
    ]


def test_int_sum_beyond_int64_is_exact() -> None:
    big = 2**62 - 1
    t = pa.table({"x": pa.array([big] * 8 + [None], pa.int64())})
    plan = N.FramePlan((), (("s", N.IntSum(N.Col("x"), -(2**62), 2**62)),))
    assert ENGINE.run(t, plan).values["s"] == [8 * big]
    u = pa.table({"x": pa.array([2**64 - 1, 3], pa.uint64())})
    plan = N.FramePlan((), (("s", N.IntSum(N.Col("x"), 0, 2**63)),))
    assert ENGINE.run(u, plan).values["s"] == [2**63 + 3]


def test_groups_in_the_total_order_whatever_the_data_order() -> None:
    plan = N.FramePlan((), (("n", N.Length()),), by=(N.Col("k"),))
    a = pa.table({"k": ["b", None, "a", "b"]})
    b = pa.table({"k": ["a", "b", "b", None]})
    assert (
        ENGINE.run(a, plan)
        == ENGINE.run(b, plan)
        == TableResult(keys={"k": ["a", "b", None]}, values={"n": [1, 2, 1]})
    )
    f = pa.table({"k": [0.0, math.nan, None, -0.0, 2.0]})
    res = ENGINE.run(f, plan)
    assert res.values == {"n": [2, 1, 1, 1]}  # 0.0 and -0.0 one group; 2.0; null; NaN
    assert res.keys["k"][1:3] == [2.0, None] and math.isnan(res.keys["k"][3])


def test_public_keys_exactly_in_their_order_absent_ones_zero() -> None:
    t = pa.table({"k": ["a", "b", "a", "z"], "x": [1, 2, 3, 4]})
    plan = N.FramePlan(
        (),
        (
            ("n", N.Length()),
            ("s", N.IntSum(N.Col("x"), 0, 10)),
            ("q", N.QuantileCounts(N.Col("x"), (2,))),
        ),
        by=(N.Col("k"),),
        keys={"k": ["c", "a", "b"]},
    )
    assert ENGINE.run(t, plan) == TableResult(
        keys={"k": ["c", "a", "b"]},
        values={"n": [0, 2, 1], "s": [0, 4, 2], "q": [([0], [0]), ([1], [1]), ([0], [0])]},
    )


def test_n_unique_counts_nan_and_null_quantile_counts_skip_them() -> None:
    t = pa.table({"f": [0.0, -0.0, math.nan, math.nan, None, 5.0]})
    plan = N.FramePlan(
        (),
        (("u", N.NUnique(N.Col("f"))), ("q", N.QuantileCounts(N.Col("f"), (1.0,)))),
    )
    # 0.0 = -0.0, NaN, null, 5.0 are four values; NaN and null are in neither count
    assert ENGINE.run(t, plan).values == {"u": [4], "q": [([2], [1])]}


def test_schema_from_declared_dtypes() -> None:
    df = pd.DataFrame(
        {
            "i": pd.array([1], dtype="Int64"),
            "u": pd.Series([1], dtype="uint8"),
            "f": [1.5],
            "s": pd.array(["a"], dtype="string"),
            "c": pd.Categorical(["x"]),
            "b": [True],
            "t": pd.to_datetime(["2024-01-01"]).astype("datetime64[ns]"),
        }
    )
    assert ENGINE.schema(df) == {
        "i": "Int64",
        "u": "UInt8",
        "f": "Float64",
        "s": "String",
        "c": "Categorical",
        "b": "Boolean",
        "t": ("Datetime", "ns", None),
    }
    t = pa.table({"d": pa.array([0], pa.date32()), "s": ["a"], "x": pa.array([1.0], pa.float32())})
    assert ENGINE.schema(t) == {"d": "Date", "s": "String", "x": "Float32"}


def test_object_columns_are_refused_by_dtype() -> None:
    df = pd.DataFrame({"o": pd.Series(["a", 1], dtype=object)})
    with pytest.raises(NotImplementedForType, match="object"):
        ENGINE.schema(df)
    with pytest.raises(NotImplementedForType, match="object"):
        ENGINE.run(df, N.FramePlan((), (("n", N.Length()),)))


def _chain(e: BaseException | None) -> str:
    """The messages of ``e`` and of every exception chained to it."""
    out = []
    while e is not None:
        out.append("".join(traceback.format_exception_only(e)))
        e = e.__cause__ or e.__context__
    return "".join(out)


def test_a_strict_cast_cannot_fail_on_a_record() -> None:
    # as on the Polars engine: a value that does not convert is null, whatever ``strict``
    t = pa.table({"s": ["1", "secret-4711", "3"]})
    plan = N.FramePlan(
        (N.WithColumns((N.Alias(N.Cast(N.Col("s"), "Int64", strict=True), "n"),)),),
        (("s", N.IntSum(N.Col("n"), 0, 10)), ("nulls", N.NullCount(N.Col("n")))),
    )
    assert ENGINE.run(t, plan).values == {"s": [4], "nulls": [1]}
    assert ref.run({"s": ["1", "secret-4711", "3"]}, plan).values == {"s": [4], "nulls": [1]}
    # Arrow's own string -> date cast fails on the first unreadable value, quoting it
    t = pa.table({"s": ["2024-01-02", "secret-4711", None]})
    plan = N.FramePlan((), (("nulls", N.NullCount(N.Cast(N.Col("s"), "Date", strict=True))),))
    assert ENGINE.run(t, plan).values == {"nulls": [2]}


def _failing_replace(secret: str) -> Any:
    """A stand-in for a library failure that quotes a record (Arrow's errors do): no plan
    fails on data any more (non-strict casts, unmatched replace_strict is null), so the
    failure is injected."""

    def fail(*_: Any) -> Any:
        raise pa.lib.ArrowInvalid(f"could not convert {secret!r}")

    return fail


@pytest.mark.parametrize("native", ["arrow", "pandas"])
def test_a_failure_on_a_secret_value_does_not_leak_it(
    native: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "secret-4711"  # noqa: S105 - a stand-in record value, not a credential
    t = pa.table({"s": ["a", secret, "a"]})
    x: Any = t if native == "arrow" else t.to_pandas(types_mapper=pd.ArrowDtype)
    plan = N.FramePlan(
        (N.WithColumns((N.Alias(N.Replace(N.Col("s"), ("a",), ("b",), strict=True), "r"),)),),
        (("n", N.CountValid(N.Col("r"))),),
    )
    assert ENGINE.run(x, plan).values == {"n": [2]}  # unmatched: null, as the reference
    assert ref.run({"s": ["a", secret, "a"]}, plan).values == {"n": [2]}
    monkeypatch.setattr("opendp_lite.backends.tables.narwhals._replace", _failing_replace(secret))
    with pytest.raises(FailedFunction) as info:
        ENGINE.run(x, plan)
    text = _chain(info.value)
    assert "4711" not in text and "secret" not in text
    assert "step 0" in str(info.value)
    assert info.value.__context__ is None and info.value.__cause__ is None


def test_length_changing_expressions_in_steps_are_refused_whatever_the_data() -> None:
    plan = N.FramePlan(
        (N.WithColumns((N.Alias(N.Unary("drop_nulls", N.Col("x")), "y"),)),),
        (("n", N.Length()),),
    )
    for values in ([1, 2], [1, None]):  # the same answer whether or not a row would drop
        with pytest.raises(FailedFunction, match="does not run"):
            ENGINE.run(pa.table({"x": pa.array(values, pa.int64())}), plan)


def test_filtered_aggregates_count_within_each_group() -> None:
    t = pa.table({"g": [1, 1, 2, 2], "x": [1, None, 3, 4], "p": [True, True, False, None]})
    keep = N.FilterExpr(N.Col("x"), N.Col("p"))
    plan = N.FramePlan(
        (),
        (
            ("c", N.CountValid(keep)),
            ("nc", N.NullCount(keep)),
            ("u", N.NUnique(keep)),
            ("d", N.CountValid(N.Unary("drop_nulls", N.Col("x")))),
        ),
        by=(N.Col("g"),),
    )
    assert ENGINE.run(t, plan).values == {"c": [1, 0], "nc": [1, 0], "u": [2, 0], "d": [1, 2]}


def test_datetime_parts_and_strptime() -> None:
    t = pa.table({"s": ["2024-03-10 13:45:06", "bad", None]})
    parsed = N.StrPTime(N.Col("s"), ("Datetime", "us", None), "%Y-%m-%d %H:%M:%S")
    got = _cols(
        t,
        *(
            N.Alias(N.DtPart(parsed, p), p)
            for p in ("year", "quarter", "month", "weekday", "week", "hour", "second")
        ),
    )
    assert got == {
        "year": [2024, None, None],
        "quarter": [1, None, None],
        "month": [3, None, None],
        "weekday": [7, None, None],  # a Sunday: ISO 7, as Polars
        "week": [10, None, None],
        "hour": [13, None, None],
        "second": [6, None, None],
    }


def test_signed_zero_survives_clip_and_floor_division_as_on_polars() -> None:
    """``clip(-0.0, lower=0.0)`` keeps -0.0 and ``-0.0 // 0.5`` is -0.0 on Polars; the sign
    shows in ``1 / x`` (-inf, not inf), and the Arrow engine must agree (it gave +inf)."""
    pl = pytest.importorskip("polars")
    frame = {"f": [-0.0, 1.0, 4.0]}
    for e in (N.Clip(N.Col("f"), 0.0, 2.0), N.Binary("//", N.Col("f"), N.Lit(0.5))):
        r = N.Alias(N.Binary("/", N.Lit(1.0), e), "r")
        plan = N.FramePlan((N.WithColumns((r,)),), (("n", N.Length()),), by=(N.Col("r"),))
        want = of_table(pl.DataFrame(frame)).run(pl.DataFrame(frame), plan)  # type: ignore[union-attr]
        assert want.keys["r"][0] == -math.inf
        assert ENGINE.run(pa.table(frame), plan) == want
        assert ref.run(frame, plan) == want
