"""A lazy (chunked) array flows through the vector domain, clamp, numeric casts and
impute_constant without being materialised.

``Lazy`` stands in for a Dask array: it implements the numpy API through
``__array_function__``/``__array_ufunc__`` but refuses ``__array__`` (materialisation), so a
test fails if any step calls ``np.asarray`` on it.  Reductions return numpy scalars, as a
computed Dask reduction would.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

import opendp_lite.prelude as dp
from opendp_lite.domains import is_lazy_array
from opendp_lite.errors import NotInDomain


class Materialised(AssertionError):
    pass


def _unwrap(x: Any) -> Any:
    if isinstance(x, Lazy):
        return x._data
    if isinstance(x, (list, tuple)):
        return type(x)(_unwrap(v) for v in x)
    return x


def _wrap(x: Any) -> Any:
    return Lazy(x) if isinstance(x, np.ndarray) and x.ndim >= 1 else x


class Lazy(np.lib.mixins.NDArrayOperatorsMixin):
    def __init__(self, data: npt.ArrayLike) -> None:
        self._data = np.asarray(data)

    dtype = property(lambda self: self._data.dtype)
    ndim = property(lambda self: self._data.ndim)
    shape = property(lambda self: self._data.shape)
    size = property(lambda self: self._data.size)

    def __len__(self) -> int:
        return len(self._data)

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise Materialised("a lazy array was materialised")

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return _wrap(getattr(ufunc, method)(*_unwrap(inputs), **_unwrap(kwargs)))

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return _wrap(func(*_unwrap(args), **_unwrap(kwargs)))

    def astype(self, dtype: Any, copy: bool = True) -> Lazy:
        return Lazy(self._data.astype(dtype))

    def min(self) -> Any:
        return self._data.min()

    def max(self) -> Any:
        return self._data.max()

    def any(self) -> Any:
        return self._data.any()

    def compute(self) -> npt.NDArray[Any]:
        return self._data


def test_the_fake_refuses_materialisation() -> None:
    with pytest.raises(Materialised):
        np.asarray(Lazy([1.0]))
    assert is_lazy_array(Lazy([1.0])) and not is_lazy_array(np.zeros(1))


def test_clamp_stays_lazy() -> None:
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    clamp = space >> dp.t.then_clamp((0.0, 1.0))
    out = clamp(Lazy([-1.0, 0.5, 2.0]))
    assert isinstance(out, Lazy)
    assert out.compute().tolist() == [0.0, 0.5, 1.0]
    assert clamp.output_domain.member(out)


def test_numeric_casts_and_impute_stay_lazy() -> None:
    space = dp.vector_domain(dp.atom_domain(T=float, nan=True)), dp.symmetric_distance()
    chain = space >> dp.t.then_impute_constant(0.0) >> dp.t.then_cast_default(TOA=int)
    out = chain(Lazy([1.7, float("nan"), -2.5, 1e20]))
    assert isinstance(out, Lazy)
    assert out.compute().tolist() == [1, 0, -2, 0]
    ints = dp.vector_domain(dp.atom_domain(T="i64")), dp.symmetric_distance()
    to_f = (  # as in OpenDP, a cast to float may hold NaN: impute before clamping
        ints
        >> dp.t.then_cast_default(TOA=float)
        >> dp.t.then_impute_constant(0.0)
        >> dp.t.then_clamp((0.0, 9.0))
    )
    res = to_f(Lazy(np.array([3, 12], dtype=np.int64)))
    assert isinstance(res, Lazy) and res.compute().tolist() == [3.0, 9.0]


def test_lazy_membership_is_checked() -> None:
    d = dp.vector_domain(dp.atom_domain(bounds=(0, 10)))
    assert d.member(Lazy(np.array([0, 10], dtype=np.int64)))
    for bad in (Lazy([11]), Lazy([1.5]), Lazy([[1]]), Lazy([True])):
        with pytest.raises(NotInDomain):
            d._normalize(bad)
    f = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    assert not f.member(Lazy([float("nan")]))
    assert not dp.vector_domain(dp.atom_domain(T="f32", nan=False)).member(Lazy([1e39]))
    assert not dp.vector_domain(dp.atom_domain(T=int), size=3).member(Lazy([1, 2]))
    assert dp.vector_domain(dp.atom_domain(T=int)).member(Lazy(np.array([], dtype=np.int64)))
