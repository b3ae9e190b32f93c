"""The grid sum of a short block (value by value in Python) is the numpy kernel's, bit for bit:
the same clamp in binary64, the same exact products by 2^p (one or two factors) and the same
truncation toward zero, for f64 and f32 data, with and without a fused clamp."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from opendp_lite.transformations._aggregate import (
    _SMALL_SUM,
    _grid_sums_np,
    _grid_sums_small,
    _grid_sums_vec,
    _scales,
    grid_shift,
)

finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(finite, min_size=0, max_size=_SMALL_SUM),
    st.sampled_from([np.float64, np.float32]),
    st.one_of(st.none(), st.tuples(finite, finite).map(sorted)),
)
def test_small_grid_sum_is_the_numpy_kernel(values: list[float], dtype: type, clip: object) -> None:
    x = np.array(values, dtype=np.float64)
    with np.errstate(over="ignore"):
        x = x.astype(dtype)
    x = x[np.isfinite(x)]
    bounds = tuple(float(dtype(b)) for b in clip) if clip is not None else None  # type: ignore[attr-defined]
    if bounds is not None and not all(np.isfinite(bounds)):
        return
    top = max([abs(v) for v in (bounds or ())] + [float(np.max(np.abs(x))) if len(x) else 0.0])
    if top == 0.0:
        top = 1.0
    p = grid_shift(top)  # as the constructors choose it: every product is exact, at most 2^46
    s1, s2 = _scales(p)
    small = _grid_sums_small(x.tolist(), s1, s2, bounds)  # type: ignore[arg-type]
    assert small == _grid_sums_vec(x, p, bounds)  # type: ignore[arg-type]
    assert small == _grid_sums_np(x, p, bounds)  # type: ignore[arg-type]


def test_subnormal_bounds_use_two_factors() -> None:
    x = np.array([5e-324, 1e-310, -3e-320, 2.2e-308])
    p = grid_shift(float(np.max(np.abs(x))))
    s1, s2 = _scales(p)
    assert s2 != 1.0
    assert _grid_sums_small(x.tolist(), s1, s2, None) == _grid_sums_vec(x, p)
    assert _grid_sums_small(x.tolist(), s1, s2, (0.0, 1e-310)) == _grid_sums_vec(
        x, p, (0.0, 1e-310)
    )


def test_the_dispatch_switches_at_the_limit() -> None:
    for n in (_SMALL_SUM, _SMALL_SUM + 1):
        x = np.linspace(-3.7, 11.2, n)
        p = grid_shift(11.2)
        assert _grid_sums_np(x, p, (0.0, 10.0)) == _grid_sums_vec(x, p, (0.0, 10.0))
