"""Scalar noise mechanisms expose ``function.sample_many(x, n)``: n independent releases in one
batch, with the same law as n calls (the auditor uses it).  Two-sample tests at fixed α and n,
which also reject a batch drawn at the wrong scale."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import opendp_lite.prelude as dp
from tests.stat._reference import (
    assert_fits,
    assert_rejects,
    discrete_laplace_pmf,
    ks2_power_pointwise,
)

N = 20_000  # n sized so that x1.3 on the integer case is rejected at p ~ 1e-20
F64 = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
I32 = dp.atom_domain(T=int), dp.absolute_distance(T=int)


GRID = np.linspace(0.0, 40.0, 40_001)


def folded_cdf(make: object, space: object, scale: float):  # type: ignore[no-untyped-def]
    """The cdf of |noise| (integer noise: the discrete Laplace law, at the grid's points)."""
    if space is I32:
        pmf = discrete_laplace_pmf(scale)
        cum = np.cumsum([pmf(0)] + [2 * pmf(k) for k in range(1, 41)])
        return lambda y: cum[np.clip(np.floor(y).astype(int), 0, 40)]
    law = stats.expon if make is dp.m.make_laplace else stats.halfnorm
    return law(scale=scale).cdf


@pytest.mark.parametrize(
    ("space", "x", "make"),
    [(F64, 1.5, dp.m.make_laplace), (F64, -2.0, dp.m.make_gaussian), (I32, 3, dp.m.make_laplace)],
)
def test_batch_law_matches_calls_and_rejects_a_wrong_scale(space, x, make) -> None:
    meas = make(*space, scale=2.0)
    calls = np.array([meas(x) for _ in range(N)], dtype=float)
    batch = np.asarray(meas.function.sample_many(x, N), dtype=float)
    assert batch.shape == (N,)
    if space is I32:
        assert batch.dtype == float and np.all(batch == np.round(batch))
    assert_fits(stats.ks_2samp(calls, batch).pvalue)
    for wrong in (0.7, 1.3):
        other = make(*space, scale=2.0 * wrong).function.sample_many(x, N)
        # folded about the input: the scale alternative doubles its KS distance
        power = ks2_power_pointwise(
            N, N, GRID, *(folded_cdf(make, space, s) for s in (2.0, 2.0 * wrong))
        )
        folded = np.abs(np.asarray(calls, dtype=float) - x), np.abs(np.asarray(other, float) - x)
        assert_rejects(stats.ks_2samp(*folded).pvalue, power, f"(scale x {wrong})")


def test_batch_refuses_non_finite_input() -> None:
    meas = dp.m.make_laplace(*F64, scale=1.0)
    with pytest.raises(dp.OpenDPLiteError):
        meas.function.sample_many(float("inf"), 10)
