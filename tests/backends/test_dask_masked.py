"""Masked arrays: refused by type on every path, before any randomness.

A masked block's own reductions (``min``, ``max``, ``isnan(...).any()``) skip the masked
entries, while the aggregate kernels write into plain buffers and read them; a check that
trusted those reductions let a masked 10^6 (or NaN) through into a sum with bounds (0, 10).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import NotInDomain
from opendp_lite.samplers import rng

da = pytest.importorskip("dask.array")

SYM = dp.symmetric_distance()
N = 1_000
CHUNK = 300


def _masked(bad: float, dtype: Any = np.float64) -> np.ma.MaskedArray[Any, Any]:
    """Values in (0, 10), plus one masked ``bad`` value in the third block."""
    x = np.ma.masked_array(np.full(N, 5.0, dtype=dtype), mask=np.zeros(N, dtype=bool))
    x[700] = bad
    x[700] = np.ma.masked
    return x


def _hide_meta(x: Any) -> Any:
    """The masked blocks behind metadata that claims plain ndarrays (a lying ``meta``)."""
    return x.map_blocks(lambda b: b, meta=np.empty(0, dtype=x.dtype))


def _aggregates(T: str) -> list[Any]:
    bounds = (0.0, 10.0)
    unsized = dp.vector_domain(dp.atom_domain(bounds=bounds, T=T)), SYM
    sized = dp.vector_domain(dp.atom_domain(bounds=bounds, T=T), size=N), SYM
    raw = dp.vector_domain(dp.atom_domain(T=T, nan=False)), SYM
    return [
        unsized >> dp.t.then_sum(),
        sized >> dp.t.then_sum(),
        sized >> dp.t.then_mean(),
        sized >> dp.t.then_variance(),
        sized >> dp.t.then_sum_of_squared_deviations(),
        raw >> dp.t.then_clamp(bounds) >> dp.t.then_sum(),
        raw >> dp.t.then_count(),
        raw >> dp.t.then_count_by_categories([5.0, 7.0]),
        raw >> dp.t.then_quantile_score_candidates([0.0, 5.0, 10.0], alpha=0.5),
        raw >> dp.t.then_find_bin([0.0, 10.0]) >> dp.t.then_count_by_categories([0, 1, 2]),
    ]


@pytest.mark.parametrize("T", ["f64", "f32"])
@pytest.mark.parametrize("bad", [1e6, -1e6, np.nan])
@pytest.mark.parametrize("hide", [False, True], ids=["meta", "lying-meta"])
def test_every_dask_aggregate_refuses_masked_blocks(
    client: Any, T: str, bad: float, hide: bool
) -> None:
    dtype = np.float32 if T == "f32" else np.float64
    x = da.from_array(_masked(bad, dtype), chunks=CHUNK, asarray=False)
    if hide:
        x = _hide_meta(x)
        assert not isinstance(x._meta, np.ma.MaskedArray)  # only the blocks are masked
    for t in _aggregates(T):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NaN arithmetic on the blocks may warn
            with pytest.raises(NotInDomain, match="masked"):
                t(x)


def test_masked_integer_blocks_are_refused(client: Any) -> None:
    x = np.ma.masked_array(np.full(N, 3, dtype=np.int64), mask=np.zeros(N, dtype=bool))
    x[5] = 2**40
    x[5] = np.ma.masked
    t = (dp.vector_domain(dp.atom_domain(bounds=(0, 10), T="i64")), SYM) >> dp.t.then_sum()
    for arr in (da.from_array(x, chunks=CHUNK, asarray=False),):
        with pytest.raises(NotInDomain, match="masked"):
            t(arr)
        with pytest.raises(NotInDomain, match="masked"):
            t(_hide_meta(arr))


def test_masked_input_draws_no_randomness(client: Any) -> None:
    x = da.from_array(_masked(1e6), chunks=CHUNK, asarray=False)
    space = dp.vector_domain(dp.atom_domain(bounds=(0.0, 10.0))), SYM
    meas = space >> dp.t.then_sum() >> dp.m.then_laplace(100.0)
    drawn: list[int] = []

    def source(n: int) -> bytes:
        drawn.append(n)
        raise AssertionError("randomness was drawn for a masked input")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for arr in (x, _hide_meta(x)):
            with rng.scripted_randomness(source=source), pytest.raises(NotInDomain):
                meas(arr)
    assert drawn == []
    assert not space[0].member(x) and not space[0].member(_hide_meta(x))


def test_numpy_path_refuses_masked_arrays_too() -> None:
    # the same rule on numpy, even when every raw value is in the domain: a masked array
    # is refused by its type, so the paths agree and the mask is never silently ignored
    space = dp.vector_domain(dp.atom_domain(bounds=(0.0, 10.0))), SYM
    t = space >> dp.t.then_sum()
    for bad in (1e6, 5.0):
        x: npt.NDArray[Any] = _masked(bad)
        with pytest.raises(NotInDomain, match="masked"):
            t(x)
        with pytest.raises(NotInDomain, match="masked"):
            t(da.from_array(x, chunks=CHUNK, asarray=False))
    # the unmasked values, filled or compressed, are accepted on both paths alike
    filled = np.ma.filled(_masked(1e6), 0.0)
    assert t(filled) == t(da.from_array(filled, chunks=CHUNK)) == 5.0 * (N - 1)
