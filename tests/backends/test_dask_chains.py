"""The same chains on numpy and on Dask input (a real LocalCluster): same outputs, no driver-side
materialisation, lazily checked membership, honest layout."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

import opendp_lite.prelude as dp
from opendp_lite.backends import dask as _dask
from opendp_lite.errors import FailedFunction, NotInDomain
from opendp_lite.samplers import rng

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")

SYM = dp.symmetric_distance()
N = 60_013  # not a multiple of the chunk size: the last block is short
CHUNK = 7_001


class Materialised(AssertionError):
    pass


@pytest.fixture
def no_driver_compute(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if a whole Dask array is computed or converted on the driver.

    Only ``_dask.reduce_blocks`` may compute, and it computes the small reduced total.
    """

    def refuse(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise Materialised(f"a Dask array of shape {self.shape} was materialised")

    monkeypatch.setattr(da.Array, "__array__", refuse)
    monkeypatch.setattr(da.Array, "compute", refuse)
    monkeypatch.setattr(da.Array, "persist", refuse)


@pytest.fixture(scope="module")
def floats() -> npt.NDArray[np.float64]:
    return np.random.default_rng(11).uniform(-1.0, 3.0, N)


def _d(x: npt.NDArray[Any], chunk: int = CHUNK) -> Any:
    return da.from_array(x, chunks=chunk)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and a.tolist() == b.tolist()
    return type(a) is type(b) and a == b


def test_float_aggregates_match_numpy(
    client: Any, floats: npt.NDArray[np.float64], no_driver_compute: None
) -> None:
    sized = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=N), SYM
    unsized = dp.vector_domain(dp.atom_domain(T=float, nan=False)), SYM
    chains = [
        sized >> dp.t.then_clamp((0.0, 2.0)) >> dp.t.then_mean(),
        sized >> dp.t.then_clamp((0.0, 2.0)) >> dp.t.then_variance(),
        sized >> dp.t.then_clamp((-1.0, 2.0)) >> dp.t.then_sum_of_squared_deviations(),
        sized >> dp.t.then_clamp((0.0, 2.0)) >> dp.t.then_sum(),
        unsized >> dp.t.then_clamp((-0.5, 2.5)) >> dp.t.then_sum(),
        unsized >> dp.t.then_count(),
        unsized >> dp.t.then_quantile_score_candidates([-1.0, 0.0, 0.5, 2.0, 9.0], alpha=0.3),
        unsized
        >> dp.t.then_find_bin([0.0, 1.0, 2.0])
        >> dp.t.then_count_by_categories([0, 2, 3, 9]),
    ]
    for t in chains:
        a, b = t(floats), t(_d(floats))
        assert _same(a, b), (t, a, b)


def test_clamp_is_fused_into_exact_aggregates(client: Any) -> None:
    # the aggregates clamp each sub-chunk of the clamp's source: same result as numpy, for
    # both float carriers, and the clamped array itself is still right for other consumers
    x = np.random.default_rng(16).uniform(-1.0, 3.0, N)
    for T, xs in (("f64", x), ("f32", x.astype(np.float32))):
        sized = dp.vector_domain(dp.atom_domain(T=T, nan=False), size=N), SYM
        clamp = sized >> dp.t.then_clamp((0.25, 2.0))
        out = clamp(_d(xs))
        assert _dask.clip_source(out)[1] is not None
        assert np.array_equal(out.compute(), clamp(xs))
        for agg in (dp.t.then_mean(), dp.t.then_variance(), dp.t.then_sum()):
            t = clamp >> agg
            assert t(_d(xs)) == t(xs), (T, t)


def test_integer_aggregates_are_exact(client: Any, no_driver_compute: None) -> None:
    x = np.random.default_rng(12).integers(-(2**40), 2**40, N)
    space = dp.vector_domain(dp.atom_domain(T="i64")), SYM
    split = space >> dp.t.then_clamp((-(2**40), 2**40)) >> dp.t.then_sum()
    mono = space >> dp.t.then_clamp((0, 2**40)) >> dp.t.then_sum()
    assert split(_d(x)) == split(x) == sum(int(v) for v in x.tolist())
    assert mono(_d(x)) == mono(x)
    # the exact sum of a 64-bit array beyond int64: partials are Python ints, never wrapping
    big = np.full(4 * CHUNK, 2**62, dtype=np.int64)
    wide = dp.vector_domain(dp.atom_domain(bounds=(0, 2**62), T="i64"), size=len(big)), SYM
    exact = wide >> dp.t.then_sum()
    assert exact(_d(big)) == exact(big) == 2**63 - 1  # saturates at the carrier, never wraps
    assert _dask.reduce_blocks(_d(big), _sum_block) == len(big) * 2**62


def _sum_block(b: npt.NDArray[Any]) -> int:
    return sum(int(v) for v in b.tolist())


def test_rowwise_transformations_stay_lazy(client: Any, no_driver_compute: None) -> None:
    x = np.random.default_rng(13).uniform(-5.0, 5.0, N)
    x[::7] = np.nan
    nan_space = dp.vector_domain(dp.atom_domain(T=float, nan=True)), SYM
    rowwise = [
        nan_space >> dp.t.then_impute_constant(0.0) >> dp.t.then_clamp((-1.0, 1.0)),
        nan_space >> dp.t.then_is_null(),
        nan_space >> dp.t.then_drop_null(),
        nan_space >> dp.t.then_cast_default(TOA="i64"),
        nan_space >> dp.t.then_impute_constant(1.5) >> dp.t.then_cast_inherent(TOA="f32"),
    ]
    for t in rowwise:
        out = t(_d(x))
        assert _dask.is_dask_array(out), t  # still lazy: nothing ran on the driver
    # and their aggregates agree with numpy
    aggs = [
        nan_space >> dp.t.then_drop_null() >> dp.t.then_count(),
        nan_space >> dp.t.then_is_null() >> dp.t.then_count_by_categories([True, False]),
        nan_space
        >> dp.t.then_impute_constant(0.0)
        >> dp.t.then_clamp((-1.0, 1.0))
        >> dp.t.then_sum(),
        nan_space
        >> dp.t.then_cast_default(TOA="i64")
        >> dp.t.then_clamp((-3, 3))
        >> dp.t.then_sum(),
        nan_space
        >> dp.t.then_drop_null()
        >> dp.t.then_quantile_score_candidates([-1.0, 0.0, 1.0], alpha=0.5),
    ]
    for t in aggs:
        a, b = t(x), t(_d(x))
        assert _same(a, b), (t, a, b)


def test_dask_dataframe_input(client: Any) -> None:
    x = np.random.default_rng(14).uniform(0.0, 2.0, N)
    x[::5] = np.nan
    ids = np.arange(N, dtype=np.int64) % 7
    names = np.array(["ann", "bo", "cy", "di"], dtype=object)[ids % 4]
    frame = {"x": x, "id": ids, "name": names}
    ddf = dd.from_pandas(pd.DataFrame(frame), npartitions=5)
    chains = [
        dp.t.make_select_column("x", TOA=float)
        >> dp.t.then_drop_null()
        >> dp.t.then_clamp((0.0, 1.0))
        >> dp.t.then_sum(),
        dp.t.make_select_column("id", TOA="i64") >> dp.t.then_count_by_categories([0, 3, 6]),
        dp.t.make_select_column("x", TOA=float) >> dp.t.then_count(),
        dp.t.make_select_column("name", TOA=str)
        >> dp.t.then_count_by_categories(["bo", "di", "ed"]),
    ]
    for t in chains:
        a, b = t(frame), t(ddf)
        assert _same(a, b), (t, a, b)
    # a dataframe column has unknown partition lengths: its size is not read from the data
    col = dp.t.make_select_column("x", TOA=float)(ddf)
    assert _dask.layout(col).size is None and _dask.layout(ddf).npartitions == 5


def test_membership_is_checked_before_any_randomness(client: Any) -> None:
    x = np.random.default_rng(15).uniform(0.0, 1.0, N)
    x[N // 2] = np.nan  # one bad value, in one block in the middle
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=N), SYM
    meas = space >> dp.t.then_clamp((0.0, 1.0)) >> dp.t.then_mean() >> dp.m.then_laplace(0.1)
    drawn: list[int] = []

    def source(n: int) -> bytes:
        drawn.append(n)
        return bytes(n)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with rng.scripted_randomness(source=source), pytest.raises(NotInDomain, match="NaN"):
            meas(_d(x))
    assert drawn == []  # the worker's NotInDomain reached the driver before any noise
    assert not space[0].member(_d(x))
    assert space[0].member(_d(np.nan_to_num(x)))
    # integer range, dtype and dimension are checked too
    i32 = dp.vector_domain(dp.atom_domain(T="i32"))
    assert not i32.member(_d(np.array([0, 2**40], dtype=np.int64), 1))
    assert not i32.member(_d(np.array([0.5])))
    assert not i32.member(da.zeros((2, 2), dtype=np.int64))


def test_declared_size_is_verified_not_read(client: Any) -> None:
    x = np.zeros(N)
    sized = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=N)
    assert sized.member(_d(x)) and not sized.member(_d(x[:-1]))
    # unknown chunk lengths (after a filter): only the lengths are computed, to verify
    filtered = _d(np.concatenate([x, [np.nan]]))
    filtered = filtered[~np.isnan(filtered)]
    assert _dask.layout(filtered).size is None
    assert sized.member(filtered)
    # metadata that misstates a block's length is caught when the block is computed
    dask = pytest.importorskip("dask")
    part = dask.delayed(np.zeros)(10)
    lying = da.concatenate([da.from_delayed(part, shape=(12,), dtype=float), _d(x[:100])])
    count = (dp.vector_domain(dp.atom_domain(T=float, nan=False)), SYM) >> dp.t.then_count()
    with pytest.raises(NotInDomain, match="metadata declares 12"):
        count(lying)


def test_layout_reports_partitioning() -> None:
    x = da.zeros(10, chunks=4)
    assert _dask.layout(x) == _dask.Layout(npartitions=3, size=10, chunks=(4, 4, 2))
    assert _dask.layout(x[x > 0]).size is None


def test_uncomputable_row_maps_refuse_dask(client: Any) -> None:
    nan_space = dp.vector_domain(dp.atom_domain(T=float, nan=True)), SYM
    imp = nan_space >> dp.t.then_impute_uniform_float((0.0, 1.0))
    with pytest.raises(FailedFunction, match="Dask"):
        imp(_d(np.array([np.nan, 1.0])))
    cast = nan_space >> dp.t.then_cast(TOA="i64")
    with pytest.raises(FailedFunction, match="Dask"):
        cast(_d(np.array([np.nan, 1.0])))
