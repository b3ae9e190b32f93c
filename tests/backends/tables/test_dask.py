"""The Dask table engine: partial answers per partition, merged exactly, never the whole
frame computed; the same answer for every partitioning."""

from __future__ import annotations

import itertools
import math
import traceback
from collections.abc import Iterator
from typing import Any

import pytest

from opendp_lite.backends.tables import TableResult, of_table
from opendp_lite.backends.tables.dask import ENGINE
from opendp_lite.backends.tables.narwhals import ENGINE as NARWHALS
from opendp_lite.errors import FailedFunction, NotImplementedForType
from opendp_lite.table import nodes as N
from opendp_lite.transformations._aggregate import grid_k

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")


@pytest.fixture(autouse=True)
def _synchronous() -> Iterator[None]:
    with dask.config.set(scheduler="synchronous"):  # the machine is small and shared
        yield


def _frame() -> Any:
    return pd.DataFrame(
        {
            "g": pd.array([3, 1, 2, 1, None, 3, 2, 2], dtype="Int64"),
            "s": pd.array(["b", "a", "b", None, "a", "c", "a", "b"], dtype="string"),
            "x": [0.1, 2.5, -1.0, math.nan, 7.0, 0.3, 1e-3, 2.0],
            "i": pd.array([5, -2, 9, 1, 0, None, 3, 3], dtype="Int64"),
        }
    )


PLAN = N.FramePlan(
    (N.FilterRows(N.Binary(">", N.Col("i"), N.Lit(-5))),),
    (
        ("n", N.Length()),
        ("c", N.CountValid(N.Col("x"))),
        ("u", N.NUnique(N.Col("s"))),
        ("i", N.IntSum(N.Col("i"), -3, 4)),
        ("f", N.GridSum(N.Col("x"), -1.0, 2.0, 20)),
        ("q", N.QuantileCounts(N.Col("x"), (0.0, 1.0))),
    ),
    by=(N.Col("g"),),
)


def test_owns_dask_dataframes_only() -> None:
    ddf = dd.from_pandas(_frame(), npartitions=2)
    assert ENGINE.owns(ddf) and of_table(ddf) is ENGINE
    assert not ENGINE.owns(_frame())
    assert ENGINE.schema(ddf) == {"g": "Int64", "s": "String", "x": "Float64", "i": "Int64"}


@pytest.mark.parametrize("parts", [1, 2, 3, 8])
def test_every_partitioning_gives_the_pandas_answer(parts: int) -> None:
    want = NARWHALS.run(_frame(), PLAN)
    assert ENGINE.run(dd.from_pandas(_frame(), npartitions=parts), PLAN) == want
    # and the answer is the exact one, written out
    assert want.keys == {"g": [1, 2, 3, None]}
    assert want.values["f"][0] == grid_k(2.0, 20)  # 2.5 clipped; NaN skipped


def test_groups_sorted_by_the_total_order_across_partitions() -> None:
    df = pd.DataFrame({"k": pd.array(["z", "b", None, "a", "b", "z"], dtype="string")})
    plan = N.FramePlan((), (("n", N.Length()),), by=(N.Col("k"),))
    got = ENGINE.run(dd.from_pandas(df, npartitions=3), plan)
    assert got == TableResult(keys={"k": ["a", "b", "z", None]}, values={"n": [1, 2, 2, 1]})


def test_public_keys_with_absent_groups() -> None:
    plan = N.FramePlan((), (("n", N.Length()),), by=(N.Col("s"),), keys={"s": ["c", "q", "a"]})
    got = ENGINE.run(dd.from_pandas(_frame(), npartitions=3), plan)
    assert got == TableResult(keys={"s": ["c", "q", "a"]}, values={"n": [1, 0, 3]})


def test_the_whole_frame_is_never_computed(monkeypatch: pytest.MonkeyPatch) -> None:
    ddf = dd.from_pandas(_frame(), npartitions=4)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the engine computed the whole frame")

    monkeypatch.setattr(type(ddf), "compute", refuse)
    monkeypatch.setattr(type(ddf), "persist", refuse)
    assert ENGINE.run(ddf, PLAN) == NARWHALS.run(_frame(), PLAN)


def test_a_failing_partition_carries_no_value(monkeypatch: pytest.MonkeyPatch) -> None:
    df = pd.DataFrame({"s": pd.array(["a", "a", "secret-4711", "a"], dtype="string")})
    plan = N.FramePlan(
        (), (("n", N.CountValid(N.Replace(N.Col("s"), ("a",), ("b",), strict=True))),)
    )

    def fail(*_: object) -> None:  # a library failure quoting a record, injected (no plan
        raise ValueError("could not convert 'secret-4711'")  # fails on data any more)

    monkeypatch.setattr("opendp_lite.backends.tables.narwhals._replace", fail)
    with pytest.raises(FailedFunction) as info:
        ENGINE.run(dd.from_pandas(df, npartitions=2), plan)
    text, e = "", info.value
    while e is not None:  # the messages of the whole chain
        text += "".join(traceback.format_exception_only(e))
        e = e.__cause__ or e.__context__
    assert "4711" not in text and "secret" not in text


def test_object_columns_are_refused_before_computing() -> None:
    df = pd.DataFrame({"o": pd.Series(["a", 1], dtype=object)})
    with dask.config.set({"dataframe.convert-string": False}):  # keep the object dtype
        ddf = dd.from_pandas(df, npartitions=1)
    assert ddf.dtypes["o"].kind == "O"
    with pytest.raises(NotImplementedForType, match="object"):
        ENGINE.run(ddf, N.FramePlan((), (("n", N.Length()),)))


def test_empty_frame_ungrouped_is_one_group_of_zeros() -> None:
    df = _frame().iloc[:0]
    plan = N.FramePlan((), (("n", N.Length()), ("u", N.NUnique(N.Col("s")))))
    assert ENGINE.run(dd.from_pandas(df, npartitions=1), plan) == TableResult(
        keys={}, values={"n": [0], "u": [0]}
    )


# ----------------------------------------------------------------------------------------------
# Truncation in two stages (issue 25): never the frame on one partition, the kernel's answer

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from opendp_lite.backends.tables import dask as dask_engine  # noqa: E402

ID, G, V, X = N.Col("id"), N.Col("g"), N.Col("v"), N.Col("x")


def _by_x(step: N.Step, *more: N.Step) -> N.FramePlan:
    """A plan whose answer is the kept rows (``x`` is a unique row label)."""
    return N.FramePlan((step, *more), (("n", N.Length()),), by=(X,))


def _chunks(chunks: list[Any]) -> Any:
    """One Dask partition per pandas frame, in order."""
    return dd.concat([dd.from_pandas(c, npartitions=1, sort=False) for c in chunks])


_ID_TYPES = {
    "Int64": st.one_of(st.none(), st.integers(0, 3)),
    "Float64": st.one_of(st.none(), st.sampled_from([-0.0, 0.0, 1.0, 2.5])),
    "string": st.one_of(st.none(), st.sampled_from(["p", "q", "r"])),
}


@st.composite
def _spread_frames(draw: Any) -> tuple[Any, list[Any]]:
    """A pandas frame (ids of one dtype with nulls) and its cut into 1..5 partitions, with
    one person (the id of the first row) having a row in every partition."""
    id_type = draw(st.sampled_from(sorted(_ID_TYPES)))
    parts = draw(st.integers(1, 5))
    rows = draw(
        st.lists(
            st.tuples(
                _ID_TYPES[id_type],
                st.one_of(st.none(), st.sampled_from(["a", "b"])),
                st.one_of(st.none(), st.sampled_from([-1.5, 0.0, 2.0])),
            ),
            min_size=1,
            max_size=20,
        )
    )
    spread = rows[0][0]
    cut = sorted(draw(st.lists(st.integers(0, len(rows)), min_size=parts - 1, max_size=parts - 1)))
    bounds = [0, *cut, len(rows)]
    chunks, x = [], 0
    for lo, hi in itertools.pairwise(bounds):
        chunk = [*rows[lo:hi], (spread, draw(st.sampled_from(["a", "b"])), 1.0)]
        chunks.append(
            pd.DataFrame(
                {
                    "id": pd.array([r[0] for r in chunk], dtype=id_type),
                    "g": pd.array([r[1] for r in chunk], dtype="string"),
                    "v": pd.array([r[2] for r in chunk], dtype="Float64"),
                    "x": pd.array(range(x, x + len(chunk)), dtype="Int64"),
                }
            )
        )
        x += len(chunk)
    return pd.concat(chunks, ignore_index=True), chunks


_KEEPS: list[Any] = [
    "first",
    "last",
    N.SortKey((V,), (True,), (True,)),
    N.SortKey((G, V), (False, True), (False, False)),
]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    _spread_frames(),
    st.integers(1, 3),
    st.sampled_from(["none", "g", "tuple"]),
    st.sampled_from(range(len(_KEEPS))),
    st.booleans(),
)
def test_truncation_on_partitions_keeps_the_rows_of_the_one_table_kernel(
    frames: tuple[Any, list[Any]], k: int, by: str, keep: int, groups: bool
) -> None:
    whole, chunks = frames
    ident = (ID, G) if by == "tuple" else (ID,)
    step: N.Step
    if groups:
        step = N.TruncateGroups(
            ident, (V,) if by == "tuple" else (G,), k, "last" if keep % 2 else "first"
        )
    else:
        step = N.TruncateRows(ident, (G,) if by == "g" else (), k, _KEEPS[keep])
    ddf = _chunks(chunks)
    assert ddf.npartitions == len(chunks)
    assert ENGINE.run(ddf, _by_x(step)) == NARWHALS.run(whole, _by_x(step))


def test_chained_truncations_and_steps_between_them() -> None:
    ids = [1, 1, 2, 1, None, 2, 1, None, 3, 1]
    whole = pd.DataFrame(
        {
            "id": pd.array(ids, dtype="Int64"),
            "g": pd.array(list("abbacabcaa"), dtype="string"),
            "v": pd.array([float(i % 4) for i in range(10)], dtype="Float64"),
            "x": pd.array(range(10), dtype="Int64"),
        }
    )
    steps = (
        N.FilterRows(N.Binary(">", X, N.Lit(0))),
        N.TruncateGroups((ID,), (G,), 2, "first"),
        N.WithColumns((N.Alias(N.Binary("*", V, N.Lit(2.0)), "w"),)),
        N.TruncateRows((ID,), (), 2, N.SortKey((N.Col("w"),), (True,), (False,))),
    )
    plan = N.FramePlan(steps, (("n", N.Length()), ("s", N.IntSum(X, 0, 9))), by=(G,))
    want = NARWHALS.run(whole, plan)
    for parts in (1, 2, 3, 5):
        assert ENGINE.run(dd.from_pandas(whole, npartitions=parts, sort=False), plan) == want


def test_truncation_never_puts_the_frame_on_one_partition(monkeypatch: pytest.MonkeyPatch) -> None:
    whole = pd.DataFrame(
        {"id": pd.array([i % 5 for i in range(40)], dtype="Int64"), "x": range(40)}
    )
    ddf = dd.from_pandas(whole, npartitions=4)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the engine repartitioned or computed the whole frame")

    for name in ("repartition", "compute", "persist"):
        monkeypatch.setattr(type(ddf), name, refuse)
    for keep in ("first", "sample"):
        step = N.TruncateRows((ID,), (), 3, keep)  # type: ignore[arg-type]
        assert len(ENGINE.run(ddf, _by_x(step)).keys["x"]) == 15
    got = ENGINE.run(ddf, _by_x(N.TruncateGroups((ID,), (X,), 2, "sample")))
    assert len(got.keys["x"]) == 10


def test_the_candidates_shuffled_are_at_most_k_per_run_and_part(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    whole = pd.DataFrame(
        {"id": pd.array([i % 3 for i in range(60)], dtype="Int64"), "x": range(60)}
    )
    seen: list[int] = []
    stage2 = dask_engine._rows_stage2

    def spy(step: Any, *pieces: Any) -> Any:
        seen.append(sum(p[1] for p in pieces))
        assert len(pieces) == 5  # one piece from each part
        return stage2(step, *pieces)

    monkeypatch.setattr(dask_engine, "_rows_stage2", spy)
    ENGINE.run(dd.from_pandas(whole, npartitions=5), _by_x(N.TruncateRows((ID,), (), 2, "first")))
    assert len(seen) == 5  # the candidates in 5 partitions (not one)
    assert sum(seen) == 3 * 2 * 5  # 3 people, 2 rows each, in each of 5 parts: not 60 rows


def test_ids_equal_by_value_meet_across_partitions_of_other_dtypes() -> None:
    # 1 (int), 1.0 (float) and True (bool) are one person, the missing ids one more: the
    # partitions' columns have different dtypes, as a Dask frame built from parts may
    chunks = [
        pd.DataFrame({"id": pd.array([1, 1, None], dtype="Int64"), "x": [0, 1, 2]}),
        pd.DataFrame({"id": pd.array([1.0, 2.0, None], dtype="Float64"), "x": [3, 4, 5]}),
        pd.DataFrame({"id": pd.array([1, None, None], dtype="Int64"), "x": [6, 7, 8]}),
    ]
    got = ENGINE.run(_chunks(chunks), _by_x(N.TruncateRows((ID,), (), 2, "first")))
    assert got.keys["x"] == [0, 1, 2, 4, 5]  # person 1: x 0, 1 (all equal ids: the row order)


def test_a_failing_truncation_carries_no_value(monkeypatch: pytest.MonkeyPatch) -> None:
    whole = pd.DataFrame({"id": pd.array([1, 2, 1, 2], dtype="Int64"), "x": range(4)})

    def fail(*_: object, **__: object) -> None:
        raise ValueError("could not order 'secret-4711'")

    monkeypatch.setattr("opendp_lite._truncation.rows_mask", fail)
    with pytest.raises(FailedFunction) as info:
        ENGINE.run(
            dd.from_pandas(whole, npartitions=2), _by_x(N.TruncateRows((ID,), (), 1, "first"))
        )
    text, e = "", info.value
    while e is not None:
        text += "".join(traceback.format_exception_only(e))
        e = e.__cause__ or e.__context__
    assert "4711" not in text and "secret" not in text


def test_num_groups_moves_only_the_distinct_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    # one person, 100 rows in 2 groups, over 4 partitions: the exchange carries at most 2 pairs
    # per partition (not the person's 100 rows), and the kept group keeps all its rows
    whole = pd.DataFrame(
        {
            "id": pd.array([7] * 100, dtype="Int64"),
            "g": pd.array(["a", "b"] * 50, dtype="string"),
            "x": range(100),
        }
    )
    seen: list[int] = []
    stage2 = dask_engine._pairs_stage2

    def spy(step: Any, parts: int, *pieces: Any) -> Any:
        seen.append(sum(p[1] for p in pieces))
        return stage2(step, parts, *pieces)

    monkeypatch.setattr(dask_engine, "_pairs_stage2", spy)
    for keep in ("sample", "first"):
        seen.clear()
        step = N.TruncateGroups((ID,), (G,), 1, keep)  # type: ignore[arg-type]
        got = ENGINE.run(dd.from_pandas(whole, npartitions=4), _by_x(step))
        assert sum(seen) <= 2 * 4 and len(seen) == 4
        kept = got.keys["x"]
        assert len(kept) == 50 and len({x % 2 for x in kept}) == 1  # one whole group


# --- a stable group_by(...).agg(...) on Dask: rows move by the keys' classes --------------------


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.sampled_from([None, float("nan"), -0.0, 0.0, 1.0, 2.5]),
            st.integers(0, 9),
        ),
        min_size=1,
        max_size=30,
    ),
    st.integers(1, 5),
)
def test_a_stable_group_by_on_partitions_is_the_one_table_answer(
    rows: list[tuple[Any, int]], parts: int
) -> None:
    """Keys of one class (-0.0 with 0.0, NaN with null) meet in one bucket whatever the
    partitioning: the answer is the pandas engine's on the whole frame."""
    frame = pd.DataFrame(
        {
            "g": pd.array([r[0] for r in rows], dtype="float64"),
            "x": pd.array([r[1] for r in rows], dtype="int64"),
        }
    )
    step = N.GroupAgg(
        (N.Col("g"),),
        (N.Alias(N.Agg("sum", N.Col("x")), "s"), N.Alias(N.Agg("len", N.Col("x")), "n")),
    )
    plan = N.FramePlan(
        (step,), (("rows", N.Length()), ("total", N.IntSum(N.Col("s"), 0, 300))), by=None
    )
    want = NARWHALS.run(frame, plan)
    got = ENGINE.run(dd.from_pandas(frame, npartitions=parts, sort=False), plan)
    assert got == want


def test_a_stable_group_by_never_repartitions_and_uses_several_buckets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    frame = dd.from_pandas(
        pd.DataFrame({"g": [i % 7 for i in range(70)], "x": list(range(70))}),
        npartitions=5,
        sort=False,
    )

    def no_repartition(*_: Any, **__: Any) -> Any:
        raise AssertionError("the frame was repartitioned")

    monkeypatch.setattr(dd.DataFrame, "repartition", no_repartition)
    seen: list[int] = []
    stage2 = dask_engine._group_stage2

    def spy(pieces: Any, plan: Any, t: int) -> Any:
        seen.append(sum(p[1] for p in pieces))
        return stage2(pieces, plan, t)

    monkeypatch.setattr(dask_engine, "_group_stage2", spy)
    step = N.GroupAgg((N.Col("g"),), (N.Alias(N.Agg("max", N.Col("x")), "m"),))
    plan = N.FramePlan((step,), (("top", N.IntSum(N.Col("m"), 0, 100)),), by=None)
    result = ENGINE.run(frame, plan)
    assert result.values["top"] == [sum(63 + g for g in range(7))]  # each g's max is 63 + g
    assert len(seen) == 5 and sum(seen) == 70 and max(seen) < 70
