"""The narwhals and Dask engines' fast paths and their guards.

Sums are int64 totals of one Arrow group-by only where no group's rows times the largest
value one row adds reach ``2^63`` (Arrow's sums wrap silently); at the guard they are split
in digits, and a Dask merge past it falls back to Python ints.  Each guard test sits exactly
at ``2^63``: with the guard off by one the answer wraps to ``-2^63`` and the test fails.
Integer, boolean and string keys are ordered and looked up without per-group canonical keys;
those answers are compared with the row-by-row reference.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opendp_lite.backends.tables import TableResult
from opendp_lite.backends.tables import narwhals as E
from opendp_lite.table import nodes as N
from tests.backends.tables import _reference as ref

pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")

TOP = 2**61  # 4 rows of 2^61: 2^63, one past int64's largest value


@pytest.fixture
def splits(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The bounds of the columns split in digits while the test runs."""
    seen: list[int] = []
    real = E._parts

    def spy(k: Any, bound: int, width: int) -> Any:
        seen.append(bound)
        return real(k, bound, width)

    monkeypatch.setattr(E, "_parts", spy)
    yield seen


def _plan(*aggs: N.ExactAgg, by: str | None = None, keys: Any = None) -> N.FramePlan:
    named = tuple((f"a{i}", a) for i, a in enumerate(aggs))
    return N.FramePlan((), named, by=None if by is None else (N.Col(by),), keys=keys)


def _same(got: TableResult, want: TableResult) -> None:
    def norm(v: Any) -> Any:
        return "NaN" if isinstance(v, float) and v != v else v

    assert {k: [norm(x) for x in v] for k, v in got.keys.items()} == {
        k: [norm(x) for x in v] for k, v in want.keys.items()
    }
    assert got.values == want.values


def test_int_sum_at_the_guard_is_split_and_exact(splits: list[int]) -> None:
    t = pa.table({"g": [1] * 4 + [2] * 3, "x": [TOP] * 7})
    plan = _plan(N.IntSum(N.Col("x"), -TOP, TOP), N.Length(), by="g")
    assert E.ENGINE.run(t, plan).values == {"a0": [4 * TOP, 3 * TOP], "a1": [4, 3]}
    assert splits == [TOP]


def test_int_sum_below_the_guard_is_one_int64_total(splits: list[int]) -> None:
    t = pa.table({"g": [1] * 3 + [2] * 3, "x": [TOP] * 6})
    plan = _plan(N.IntSum(N.Col("x"), -TOP, TOP), by="g")
    assert E.ENGINE.run(t, plan).values == {"a0": [3 * TOP, 3 * TOP]}
    assert splits == []  # 3 · 2^61 < 2^63: the fast path


def test_ungrouped_int_sum_at_the_guard(splits: list[int]) -> None:
    t = pa.table({"x": [TOP] * 4})
    assert E.ENGINE.run(t, _plan(N.IntSum(N.Col("x"), 0, TOP))).values == {"a0": [4 * TOP]}
    assert splits == [TOP]


def test_split_negative_sums_are_exact() -> None:
    # digits of negative values: the top digit floors (k >> s), the low ones are unsigned
    xs = [-TOP] * 5 + [TOP - 1, -1, None, -12345]
    t = pa.table({"x": pa.array(xs, pa.int64())})
    got = E.ENGINE.run(t, _plan(N.IntSum(N.Col("x"), -TOP, TOP)))
    assert got.values == {"a0": [sum(x for x in xs if x is not None)]}


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 2**62),
    st.integers(1, 2**40),
    st.lists(st.floats(-1, 1, allow_nan=False), min_size=1, max_size=20),
)
def test_digits_sum_back_and_fit_int64_totals(bound: int, longest: int, fs: list[float]) -> None:
    import numpy as np

    k = np.array([int(f * bound) for f in fs] + [bound, -bound], dtype=np.int64)
    width = 63 - longest.bit_length()
    parts = E._parts(k, bound, width)
    total = [0] * len(k)
    for part, shift, b in parts:
        assert longest * b < 2**63  # each digit's total over the longest group fits int64
        assert int(np.abs(part).max()) <= b
        total = [t + (int(d) << shift) for t, d in zip(total, part.tolist(), strict=True)]
    assert total == k.tolist()


def test_grid_sum_at_the_guard_is_split_and_exact(splits: list[int]) -> None:
    # bound 2^52 grid units (p = 0), 2^11 rows in one group: 2^63
    t = pa.table({"g": [0] * 2048 + [1], "x": [2.0**52] * 2049})
    plan = _plan(N.GridSum(N.Col("x"), 0.0, 2.0**52, 0), by="g")
    assert E.ENGINE.run(t, plan).values == {"a0": [2**63, 2**52]}
    assert splits == [2**52]


def test_grid_sum_below_the_guard_is_one_int64_total(splits: list[int]) -> None:
    t = pa.table({"g": [0] * 2047 + [1] * 2047, "x": [2.0**52] * 4094})
    plan = _plan(N.GridSum(N.Col("x"), 0.0, 2.0**52, 0), by="g")
    assert E.ENGINE.run(t, plan).values == {"a0": [2047 * 2**52] * 2}
    assert splits == []


def _with_slots(values: list[float], valid: list[bool], dtype: Any = None) -> Any:
    """An Arrow array whose null slots hold the given (hostile) values."""
    import numpy as np

    dtype = dtype or pa.float64()
    data = np.asarray(values, dtype=dtype.to_pandas_dtype())
    bits = np.packbits(np.asarray(valid, dtype=np.uint8), bitorder="little")
    return pa.Array.from_buffers(
        dtype,
        len(values),
        [pa.py_buffer(bits.tobytes()), pa.py_buffer(data.tobytes())],
        null_count=valid.count(False),
    )


def test_values_under_nulls_are_never_read() -> None:
    x = _with_slots([math.nan, math.inf, 1e308, 1.5, -0.5], [False, False, False, True, True])
    i = _with_slots([2**62, -(2**63), 7, 3, -2], [False, False, True, True, True], pa.int64())
    t = pa.table({"g": [0, 0, 0, 0, 1], "x": x, "i": i})
    plan = _plan(
        N.GridSum(N.Col("x"), -1.0, 2.0, 3),
        N.CountValid(N.Col("x")),
        N.NullCount(N.Col("x")),
        N.IntSum(N.Col("i"), -4, 4),
        by="g",
    )
    assert E.ENGINE.run(t, plan).values == {
        "a0": [12, -4],
        "a1": [1, 1],
        "a2": [3, 0],
        "a3": [4 + 3, -2],
    }
    # the same rows sliced off a longer table (Arrow arrays with an offset)
    pad = pa.table({"g": [9, 9, 9], "x": [1.0, None, 2.0], "i": [1, None, 2]})
    longer = pa.concat_tables([pad, t.cast(pad.schema)]).combine_chunks().slice(3)
    assert E.ENGINE.run(longer, plan) == E.ENGINE.run(t, plan)


def _frame() -> ref.Frame:
    return {
        "g": [2, None, 0, 1, 2, 1, None, 0],
        "s": ["é", "z", None, "\U00010000", "\uffff", "a", "z", "A"],
        "b": [True, None, False, True, True, None, False, False],
        "x": [1.5, 2.0, None, math.nan, -0.0, 3.0, 0.25, -1.0],
    }


def _arrow(f: ref.Frame) -> Any:
    return pa.table(
        {
            "g": pa.array(f["g"], pa.int64()),
            "s": pa.array(f["s"], pa.large_string()),
            "b": pa.array(f["b"], pa.bool_()),
            "x": pa.array(f["x"], pa.float64()),
        }
    )


AGGS = (
    N.Length(),
    N.GridSum(N.Col("x"), -1.0, 2.0, 4),
    N.CountValid(N.Col("x")),
    N.NullCount(N.Col("x")),
    N.QuantileCounts(N.Col("x"), (0.0, 1.0)),
)


@pytest.mark.parametrize("by", [("g",), ("s",), ("b",), ("s", "g"), ("b", "s")])
def test_private_groups_in_the_total_order(by: tuple[str, ...]) -> None:
    # strings by code point (U+FFFF before U+10000; UTF-16 would order them the other way),
    # False before True, null last in every column
    plan = N.FramePlan(
        (), tuple((f"a{i}", a) for i, a in enumerate(AGGS)), by=tuple(map(N.Col, by))
    )
    _same(E.ENGINE.run(_arrow(_frame()), plan), ref.run(_frame(), plan))


@pytest.mark.parametrize(
    "keys",
    [
        [1.0, True, -0.0, "1", None, math.nan, 7, 2**70],  # the plain types: Python equality
        [Decimal(1), Decimal("NaN"), 0, None, pd.NA],  # others: canonical keys
    ],
)
def test_public_keys_match_as_the_canonical_keys(keys: list[Any]) -> None:
    plan = _plan(*AGGS, by="g", keys={"g": keys})
    _same(E.ENGINE.run(_arrow(_frame()), plan), ref.run(_frame(), plan))


def test_public_string_and_boolean_keys() -> None:
    for col, keys in (("s", ["z", "\uffff", None, 1, "Z"]), ("b", [1, False, None, 0.0, "True"])):
        plan = _plan(*AGGS, by=col, keys={col: keys})
        _same(E.ENGINE.run(_arrow(_frame()), plan), ref.run(_frame(), plan))


def test_pandas_input_gives_the_arrow_answer() -> None:
    t = _arrow(_frame())
    df = t.to_pandas(types_mapper=pd.ArrowDtype)  # keeps NaN apart from null
    for by in ("g", "s", "b"):
        plan = _plan(*AGGS, by=by)
        assert E.ENGINE.run(df, plan) == E.ENGINE.run(t, plan)


# ---------------------------------------------------------------------------------------------
# Dask: partial totals merged by one more group-by while exact, else in Python ints


def _dask(xs: list[int], groups: list[int], parts: int) -> Any:
    dd = pytest.importorskip("dask.dataframe")
    return dd.from_pandas(pd.DataFrame({"g": groups, "x": xs}), npartitions=parts, sort=True)


@pytest.fixture
def synchronous() -> Iterator[None]:
    dask = pytest.importorskip("dask")
    with dask.config.set(scheduler="synchronous"):
        yield


@pytest.mark.usefixtures("synchronous")
def test_dask_merge_at_the_guard_is_exact(splits: list[int]) -> None:
    from opendp_lite.backends.tables.dask import ENGINE

    # two partitions of 2 rows of 2^61 each: each total fits int64, the merged one is 2^63
    ddf = _dask([TOP] * 4, [5] * 4, 2)
    assert ddf.map_partitions(len).compute().tolist() == [2, 2]
    plan = _plan(N.IntSum(N.Col("x"), 0, TOP), N.Length(), by="g")
    assert ENGINE.run(ddf, plan).values == {"a0": [4 * TOP], "a1": [4]}
    assert splits == []  # no partition split: the merge itself was guarded


@pytest.mark.usefixtures("synchronous")
def test_dask_merge_below_the_guard_and_of_split_partials() -> None:
    from opendp_lite.backends.tables.dask import ENGINE

    ddf = _dask([TOP] * 3, [5] * 3, 2)
    plan = _plan(N.IntSum(N.Col("x"), 0, TOP), by="g")
    assert ENGINE.run(ddf, plan).values == {"a0": [3 * TOP]}
    # one partition split (4 rows), the other not (1 row): read differently, merged exactly
    dd = pytest.importorskip("dask.dataframe")
    df = pd.DataFrame({"g": [5] * 5, "x": [TOP] * 5})
    ddf = dd.from_pandas(df, chunksize=4, sort=True)
    assert ddf.map_partitions(len).compute().tolist() == [4, 1]
    assert ENGINE.run(ddf, plan).values == {"a0": [5 * TOP]}


# ---------------------------------------------------------------------------------------------
# Only the columns a plan reads are converted (none is copied), at least one


def test_columns_read_by_a_plan() -> None:
    plan = N.FramePlan(
        (
            N.WithColumns((N.Alias(N.Binary("+", N.Col("a"), N.Lit(1)), "y"),)),
            N.FilterRows(N.Unary("is_not_null", N.Col("b"))),
        ),
        (("n", N.Length()), ("s", N.GridSum(N.Col("y"), 0.0, 1.0, 2))),
        by=(N.Col("c"),),
    )
    assert E.columns_read(plan) == {"a", "b", "c", "y"}
    truncated = N.FramePlan((N.TruncateRows((N.Col("id"),), (), 1, "first"),), (("n", N.Length()),))
    assert E.columns_read(truncated) is None  # "first" orders rows by the whole row


def test_only_read_columns_are_converted(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []
    real = E.arrow_of_pandas

    def spy(df: Any, columns: Any = None) -> Any:
        out = real(df, columns)
        seen.append(out.column_names)
        return out

    monkeypatch.setattr(E, "arrow_of_pandas", spy)
    df = pd.DataFrame({"a": [1.0, 2.0], "g": [1, 1], "unread": ["x", "y"]})
    df["unread"] = df["unread"].astype("string")
    plan = _plan(N.GridSum(N.Col("a"), 0.0, 2.0, 0), by="g")
    assert E.ENGINE.run(df, plan).values == {"a0": [3]}
    assert seen == [["a", "g"]]


@pytest.mark.parametrize("native", ["pandas", "arrow", "dask"])
def test_a_plan_reading_no_column_still_counts_rows(native: str) -> None:
    from opendp_lite.backends.tables import of_table

    df = pd.DataFrame({"a": [1, 2, 3], "b": [4, 5, 6]})
    x: Any = df
    if native == "arrow":
        x = pa.Table.from_pandas(df, preserve_index=False)
    elif native == "dask":
        x = pytest.importorskip("dask.dataframe").from_pandas(df, npartitions=2)
    engine = of_table(x)
    assert engine is not None
    dask = pytest.importorskip("dask")
    with dask.config.set(scheduler="synchronous"):
        assert engine.run(x, _plan(N.Length())).values == {"a0": [3]}


# ---------------------------------------------------------------------------------------------
# The grid-unit pass: chunk by chunk, long columns in threads


@pytest.mark.parametrize("chunk, per_thread", [(3, 1), (4, 5), (1 << 16, 1 << 20)])
def test_grid_units_by_chunks_and_threads(
    monkeypatch: pytest.MonkeyPatch, chunk: int, per_thread: int
) -> None:
    monkeypatch.setattr(E, "_CHUNK", chunk)
    monkeypatch.setattr(E, "_PER_THREAD", per_thread)
    xs = [0.3, math.nan, -7.0, None, 2.5, 1e308, -0.0, math.inf, 0.125, None, math.nan, 1.75]
    gs = [0, 1, 2] * 4
    frame: ref.Frame = {"g": gs, "x": xs}
    t = pa.table({"g": pa.array(gs, pa.int64()), "x": pa.array(xs, pa.float64())})
    for lo, hi, p in ((-1.0, 2.0, 3), (0.0, 2.5, 40), (-4.0, 0.0, -2), (-1.5, 1e6, 1003)):
        plan = N.FramePlan((), (("s", N.GridSum(N.Col("x"), lo, hi, p)),), by=(N.Col("g"),))
        _same(E.ENGINE.run(t, plan), ref.run(frame, plan))
        serial = E.finish([E.run_arrow(t, plan, parallel=False)], plan)
        assert serial == E.ENGINE.run(t, plan)


_FLOATS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([math.nan, -math.nan, -0.0, 5e-324, -5e-324, 2.0**-1074, 1e308, -math.inf]),
)


@settings(max_examples=300, deadline=None)
@given(
    xs=st.lists(_FLOATS, min_size=1, max_size=70),
    chunk=st.integers(1, 40),
    p=st.integers(-30, 40),
    bounds=st.tuples(st.floats(-1e3, 1e3), st.floats(-1e3, 1e3)).map(sorted),
)
def test_grid_units_are_each_values_truncated_clipped_units(
    xs: list[float], chunk: int, p: int, bounds: list[float]
) -> None:
    # value by value: NaN adds 0, else trunc(clip(x, lo, hi) * 2^p), wherever the NaN sits in
    # a chunk (its first, last or any SIMD lane) and whatever the chunk's length
    import numpy as np

    lo, hi = bounds
    s1 = math.ldexp(1.0, p)
    want = [0 if x != x else math.trunc(math.ldexp(min(max(x, lo), hi), p)) for x in xs]
    out = np.full(len(xs), 7, dtype=np.int64)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(E, "_CHUNK", chunk)
        E._grid_units(np.asarray(xs, dtype=np.float64), s1, 1.0, lo * s1, hi * s1, out)
    assert out.tolist() == want


@pytest.mark.usefixtures("synchronous")
def test_dask_partitions_with_and_without_nulls_merge() -> None:
    from opendp_lite.backends.tables.dask import ENGINE

    dd = pytest.importorskip("dask.dataframe")
    # the first partition has no null (its count is its rows), the second has some
    df = pd.DataFrame({"g": [1, 2, 1, 2, 1, 2], "x": [1.0, 2.0, 3.0, None, None, 4.0]})
    ddf = dd.from_pandas(df, chunksize=3, sort=True)
    plan = _plan(N.CountValid(N.Col("x")), N.NullCount(N.Col("x")), N.Length(), by="g")
    assert ENGINE.run(ddf, plan).values == {"a0": [2, 2], "a1": [1, 1], "a2": [3, 3]}
    blocks = [E.run_arrow(E._arrow(p.compute()), plan) for p in ddf.to_delayed()]
    assert all(isinstance(b, E._Block) for b in blocks)
    assert E._merge_blocks(blocks) is not None  # one more group-by, not the Python merge


def test_an_arrow_failure_while_merging_falls_back_to_the_python_merge(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    t = _arrow(_frame())
    plan = _plan(*AGGS, by="s")
    want = E.ENGINE.run(t, plan)

    def fails(*_: Any) -> Any:
        raise pa.ArrowInvalid("the label 'secret' ...")  # a message quoting the data

    monkeypatch.setattr(E, "_finish_block", fails)
    assert E.ENGINE.run(t, plan) == want
    monkeypatch.setattr(E, "_merge_blocks", fails)
    assert E.ENGINE.run(t, plan) == want


# ---------------------------------------------------------------------------------------------
# n_unique: Arrow's distinct pairs (labels, canonical value), not a Python loop over rows


def _nan(payload: int) -> float:
    import struct

    out: float = struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000000 | payload))[0]
    return out


def test_n_unique_of_floats_by_the_canonical_values() -> None:
    # -0.0 is 0.0, NaNs of every payload one value, null one value (as in Polars)
    xs = [0.0, -0.0, _nan(0), _nan(0x123), None, 1.5, None, -_nan(7), 2.0, 2.0]
    gs = [0, 0, 0, 0, 0, 0, 1, 1, 1, 1]
    t = pa.table({"g": pa.array(gs, pa.int64()), "x": pa.array(xs, pa.float64())})
    keep = N.Binary("!=", N.Col("x"), N.Lit(1.5))
    for expr in (N.Col("x"), N.FilterExpr(N.Col("x"), keep)):
        plan = _plan(N.NUnique(expr), N.Length(), by="g")
        assert isinstance(E.run_arrow(t, plan), E._Block)  # no row read in Python
        _same(E.ENGINE.run(t, plan), ref.run({"g": gs, "x": xs}, plan))
    assert E.ENGINE.run(t, _plan(N.NUnique(N.Col("x")))).values == {"a0": [5]}


@pytest.mark.usefixtures("synchronous")
def test_dask_n_unique_merges_distinct_values_across_partitions() -> None:
    from opendp_lite.backends.tables.dask import ENGINE

    dd = pytest.importorskip("dask.dataframe")
    df = pd.DataFrame(
        {"g": [1, 1, 2, 1, 1, 2, 2], "s": ["a", "b", "a", "b", "c", None, "a"]}
    ).astype({"s": "string"})
    ddf = dd.from_pandas(df, chunksize=3, sort=True)
    plan = _plan(N.NUnique(N.Col("s")), by="g")
    assert ENGINE.run(ddf, plan).values == {"a0": [3, 2]}  # g=1: a, b, c; g=2: a, null
    assert ENGINE.run(ddf, _plan(N.NUnique(N.Col("s")))).values == {"a0": [4]}
