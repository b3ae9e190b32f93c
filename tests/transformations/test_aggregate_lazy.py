"""Lazy (chunked) arrays flow into the aggregates of part B one block at a time.

``Chunked`` stands in for a Dask array: it implements the numpy API through
``__array_function__``/``__array_ufunc__`` and lets ``np.asarray`` compute a *slice* of at
most ``BLOCK`` values (as Dask computes a slice), but fails the test if the whole array (or
any larger piece) is ever materialised.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

import opendp_lite.prelude as dp
from opendp_lite.transformations._aggregate import BLOCK

SYM = dp.symmetric_distance()


class Materialised(AssertionError):
    pass


def _unwrap(x: Any) -> Any:
    if isinstance(x, Chunked):
        return x._data
    if isinstance(x, (list, tuple)):
        return type(x)(_unwrap(v) for v in x)
    if isinstance(x, dict):
        return {k: _unwrap(v) for k, v in x.items()}
    return x


class Chunked(np.lib.mixins.NDArrayOperatorsMixin):
    def __init__(self, data: npt.ArrayLike) -> None:
        self._data = np.asarray(data)

    dtype = property(lambda self: self._data.dtype)
    ndim = property(lambda self: self._data.ndim)
    shape = property(lambda self: self._data.shape)
    size = property(lambda self: self._data.size)

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, key: Any) -> Chunked:
        return Chunked(self._data[key])

    def __array__(self, dtype: Any = None, copy: Any = None) -> npt.NDArray[Any]:
        if len(self._data) > BLOCK:
            raise Materialised(f"{len(self._data)} values materialised at once")
        return self._data if dtype is None else self._data.astype(dtype)

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        out = getattr(ufunc, method)(*_unwrap(inputs), **_unwrap(kwargs))
        return Chunked(out) if isinstance(out, np.ndarray) and out.ndim >= 1 else out

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        raise Materialised(f"{func.__name__} called on the whole lazy array")

    def astype(self, dtype: Any, copy: bool = True) -> Chunked:
        return Chunked(self._data.astype(dtype))

    def min(self) -> Any:
        return self._data.min()

    def max(self) -> Any:
        return self._data.max()

    def any(self) -> Any:
        return self._data.any()


N = 2 * BLOCK + 12345


@pytest.fixture(scope="module")
def floats() -> npt.NDArray[np.float64]:
    return np.random.default_rng(3).uniform(-1.0, 2.0, N)


def test_the_fake_refuses_whole_materialisation(floats: npt.NDArray[np.float64]) -> None:
    with pytest.raises(Materialised):
        np.asarray(Chunked(floats))
    assert len(np.asarray(Chunked(floats)[:10])) == 10


def test_float_aggregates_match_eager(floats: npt.NDArray[np.float64]) -> None:
    lazy = Chunked(floats)
    sum_t = dp.t.make_sum(dp.vector_domain(dp.atom_domain(bounds=(-1.0, 2.0))), SYM)
    assert sum_t(lazy) == sum_t(floats)
    sized = dp.vector_domain(dp.atom_domain(bounds=(-1.0, 2.0)), size=N)
    for make in (dp.t.make_sum, dp.t.make_mean, dp.t.make_variance):
        t = make(sized, SYM)
        assert t(lazy) == t(floats), make.__name__


def test_int_and_count_aggregates_match_eager() -> None:
    x = np.random.default_rng(4).integers(-(2**40), 2**40, N)
    lazy = Chunked(x)
    space = dp.vector_domain(dp.atom_domain(bounds=(-(2**40), 2**40), T="i64")), SYM
    t = space >> dp.t.then_sum()
    assert t(lazy) == t(x) == int(sum(int(v) for v in x.tolist()))
    small = np.random.default_rng(5).integers(0, 10, N)
    ispace = dp.vector_domain(dp.atom_domain(T="i64")), SYM
    for partial in (
        dp.t.then_count(),
        dp.t.then_count_distinct(),
        dp.t.then_count_by(),
    ):
        t = ispace >> partial
        assert t(Chunked(small)) == t(small)
    cats = ispace >> dp.t.then_count_by_categories([1, 3, 5])
    assert cats(Chunked(small)).tolist() == cats(small).tolist()
    scores = ispace >> dp.t.then_quantile_score_candidates([2, 5, 7], alpha=0.3)
    assert scores(Chunked(small)).tolist() == scores(small).tolist()
