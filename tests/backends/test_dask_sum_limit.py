"""Unsized float sums on Dask: no silent saturation at realistic sizes,
and the same limit logic as numpy at the boundary."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite.transformations import sum as sum_mod

da = pytest.importorskip("dask.array")

SYM = dp.symmetric_distance()


def test_unsized_f64_sum_does_not_saturate_above_2_to_25_rows(client: Any) -> None:
    # 2^25 + 2^21 values at the upper bound: a 2^25-row limit would release 2^25·10
    # (-6 %), silently; generated on the workers, so nothing large is built on the driver
    n = 2**25 + 2**21
    space = dp.vector_domain(dp.atom_domain(bounds=(0.0, 10.0))), SYM
    t = space >> dp.t.then_sum()
    x = da.full(n, 10.0, chunks=2**22, dtype=np.float64)
    assert t(x) == 10.0 * n


@pytest.mark.parametrize("T", ["f64", "f32"])
def test_unsized_float_sum_limit_boundary_on_dask(
    client: Any, monkeypatch: pytest.MonkeyPatch, T: str
) -> None:
    # the limit applies to the exact total of the workers' partials, as on numpy
    # (tests/transformations/test_sum.py::test_unsized_float_sum_limit_boundary)
    monkeypatch.setitem(sum_mod._DEFAULT_LIMIT, T, 1000)
    with pytest.warns(sum_mod.SizeLimitWarning):
        t = (dp.vector_domain(dp.atom_domain(bounds=(-2.0, 10.0), T=T)), SYM) >> dp.t.then_sum()
    dt = np.float32 if T == "f32" else np.float64
    for n, want in ((999, 9990.0), (1000, 10000.0), (1001, 10000.0)):
        x = np.full(n, 10.0, dtype=dt)
        assert t(da.from_array(x, chunks=97)) == t(x) == want, n
    neg = np.full(5001, -2.0, dtype=dt)
    assert t(da.from_array(neg, chunks=500)) == t(neg) == -10000.0
