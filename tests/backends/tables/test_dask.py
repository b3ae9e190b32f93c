"""The Dask table engine: partial answers per partition, merged exactly, never the whole
frame computed; the same answer for every partitioning."""

from __future__ import annotations

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
