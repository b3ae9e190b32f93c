"""A Dask DataFrame in a Context: nothing is computed until a query runs, and a query reads
each partition once, on the workers, returning only the aggregate."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import NotInDomain

pd = pytest.importorskip("pandas")
dd = pytest.importorskip("dask.dataframe")
dask = pytest.importorskip("dask")

LOADS: list[int] = []


def _load(i: int) -> Any:
    LOADS.append(i)
    n = 50
    return pd.DataFrame(
        {
            "age": pd.Series([(i * n + j) % 90 for j in range(n)], dtype="int64"),
            "region": pd.Series([["n", "s", "e"][j % 3] for j in range(n)], dtype="string"),
        }
    )


META = pd.DataFrame({"age": pd.Series([], dtype="int64"), "region": pd.Series([], dtype="string")})


def test_context_on_dask_checks_every_cell_once_where_the_data_enters() -> None:
    """The schema comes from the metadata; building the context reads each partition once
    (every declared cell checked where the owner passes the data, so no query can fail on one
    record), and each query reads each partition once more; the check is not repeated."""
    LOADS.clear()
    with dask.config.set(scheduler="synchronous"):
        frame = dd.from_map(_load, range(4), meta=META)
        context = dp.Context.compositor(
            data=frame,
            privacy_unit=dp.unit_of(contributions=1),
            privacy_loss=dp.loss_of(epsilon=1.0),
            split_evenly_over=2,
        )
        assert context.schema == {"age": "i64", "region": "String"}
        assert sorted(LOADS) == [0, 1, 2, 3]  # one pass for both columns' checks
        LOADS.clear()
        count = context.query().filter("age", ">=", 18).count().laplace().release()
        assert isinstance(count, int)
        assert sorted(LOADS) == [0, 1, 2, 3]  # each partition read once, for the one query
        hist = context.query().histogram("region", categories=["n", "s"]).laplace().release()
        assert list(hist.index) == ["n", "s", "other"]


def test_dask_nullable_column_refused_on_the_workers_before_noise() -> None:
    frame = dd.from_pandas(
        pd.DataFrame({"n": pd.Series([1, 2, None, 4], dtype="Int64")}), npartitions=2
    )
    meas = dp.t.make_select_column("n", TOA="i64") >> dp.t.then_count() >> dp.m.then_laplace(1.0)
    with dask.config.set(scheduler="synchronous"):
        with pytest.raises(NotInDomain, match=r"column 'n', position 0: a missing value \(<NA>\)"):
            meas(frame)


def test_dask_value_outside_the_bounds_is_named_with_its_position() -> None:
    da = pytest.importorskip("dask.array")
    x = da.from_array(np.array([1.0, 2.0, 30.0, 4.0]), chunks=2)
    bounded = dp.vector_domain(dp.atom_domain(bounds=(0.0, 10.0)))
    total = dp.t.make_sum(bounded, dp.symmetric_distance())
    with dask.config.set(scheduler="synchronous"):
        with pytest.raises(NotInDomain, match=r"position 0 of a block: 30\.0 .*then_clamp"):
            total(x)
