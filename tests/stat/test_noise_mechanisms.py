"""Statistical tests of the noise mechanisms' output laws.

* Integer mechanisms and coarse-k float mechanisms: χ² against the exact discrete pmf (every
  float output must lie on the grid 2^k·ℤ).
* Default k (2^-1074 grid): KS against the continuous Laplace / Gaussian law.
Each test also rejects the law with scale × 0.7 and × 1.3.  ALPHA and N are fixed up front.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pytest

import opendp_lite.prelude as dp
from tests.conftest import scaled
from tests.stat._reference import (
    check_continuous,
    check_integer_law,
    discrete_gaussian_pmf,
    discrete_laplace_pmf,
)

scipy_stats = pytest.importorskip("scipy.stats")


N = 20_000
N_KS = 5_000
WRONG = (0.7, 1.3)


dl_pmf, dg_pmf = discrete_laplace_pmf, discrete_gaussian_pmf
PMF = {"laplace": dl_pmf, "gaussian": dg_pmf}


def check_discrete(z: Sequence[int], dist: str, scale: float) -> None:
    wrong = [PMF[dist](scale * f) for f in WRONG]
    check_integer_law(z, PMF[dist](scale), wrong, what=f"{dist}({scale})")


def make(dist: str, *args, **kwargs):
    return (dp.m.make_laplace if dist == "laplace" else dp.m.make_gaussian)(*args, **kwargs)


@pytest.mark.parametrize("dist", ["laplace", "gaussian"])
def test_integer_scalar(dist: str) -> None:
    meas = make(dist, dp.atom_domain(T="i64"), dp.absolute_distance(T="i64"), 2.5)
    z = [meas(7) - 7 for _ in range(N)]
    check_discrete(z, dist, 2.5)


@pytest.mark.parametrize("dist", ["laplace", "gaussian"])
def test_integer_vector(dist: str) -> None:
    metric = dp.l1_distance if dist == "laplace" else dp.l2_distance
    meas = make(dist, dp.vector_domain(dp.atom_domain(T=int)), metric(T=int), 1.5)
    x = np.arange(N, dtype=np.int32) % 100 - 50
    out = meas(x)
    assert out.dtype == np.int32
    check_discrete((out.astype(np.int64) - x).tolist(), dist, 1.5)


def test_geometric_unbounded_vector() -> None:
    domain = dp.vector_domain(dp.atom_domain(T="i16"), size=N)
    meas = dp.m.make_geometric(domain, dp.l1_distance(T="i16"), 4.0)
    out = meas(np.full(N, -3, dtype=np.int16))
    assert out.dtype == np.int16
    check_discrete((out.astype(np.int64) + 3).tolist(), "laplace", 4.0)


def test_geometric_censored_law() -> None:
    scale, lo, hi, x = 3.0, 0, 10, 2
    meas = dp.m.make_geometric(dp.atom_domain(T=int), dp.absolute_distance(T=int), scale, (lo, hi))
    y = [meas(x) for _ in range(N)]

    def censored(s: float) -> Callable[[int], float]:
        base = dl_pmf(s)
        low_tail = math.fsum(base(z - x) for z in range(lo - 2000, lo + 1))
        high_tail = math.fsum(base(z - x) for z in range(hi, hi + 2000))
        return lambda v: (
            0.0 if v < lo or v > hi
            else low_tail if v == lo
            else high_tail if v == hi
            else base(v - x)
        )  # fmt: skip

    check_integer_law(y, censored(scale), [censored(scale * f) for f in WRONG])


def test_geometric_censored_vector_law() -> None:
    # the bounded vector path is vectorised (clip, int_noise, clip): same censored law per element
    scale, lo, hi, x = 3.0, 0, 10, 2
    domain = dp.vector_domain(dp.atom_domain(T="i32"))
    meas = dp.m.make_geometric(domain, dp.l1_distance(T="i32"), scale, (lo, hi))
    y = meas(np.full(N, x, dtype=np.int32))
    assert y.dtype == np.int32 and y.min() >= lo and y.max() <= hi

    def censored(s: float) -> Callable[[int], float]:
        base = dl_pmf(s)
        low_tail = math.fsum(base(z - x) for z in range(lo - 2000, lo + 1))
        high_tail = math.fsum(base(z - x) for z in range(hi, hi + 2000))
        return lambda v: (
            0.0 if v < lo or v > hi
            else low_tail if v == lo
            else high_tail if v == hi
            else base(v - x)
        )  # fmt: skip

    check_integer_law(y.tolist(), censored(scale), [censored(scale * f) for f in WRONG])


@pytest.mark.parametrize(("dist", "k", "T"), [("laplace", -1, "f64"), ("gaussian", -2, "f32")])
def test_float_coarse_grid_has_the_exact_discrete_law(dist: str, k: int, T: str) -> None:
    scale, x = 1.5, 0.3
    metric = dp.l1_distance if dist == "laplace" else dp.l2_distance
    domain = dp.vector_domain(dp.atom_domain(T=T, nan=False), size=N)
    meas = make(dist, domain, metric(T=T), scale, k=k)
    out = meas(np.full(N, x)).astype(np.float64)
    grid = out / 2.0**k
    assert np.all(grid == np.round(grid)), "an output is off the 2^k grid"
    r = math.floor(float(np.float32(x) if T == "f32" else x) / 2.0**k + 0.5)  # ties up
    z = (grid.astype(np.int64) - r).tolist()
    check_discrete(z, dist, scale / 2.0**k)


@pytest.mark.parametrize("T", ["f64", "f32"])
def test_float_scalar_coarse_grid(T: str) -> None:
    meas = dp.m.make_laplace(dp.atom_domain(T=T, nan=False), dp.absolute_distance(T=T), 2.0, k=0)
    z = [meas(0.4) for _ in range(N)]
    assert all(v == round(v) for v in z)
    check_discrete([int(v) for v in z], "laplace", 2.0)


CONT = {"laplace": scipy_stats.laplace, "gaussian": scipy_stats.norm}


def check_ks(samples: np.ndarray, dist: str, scale: float) -> None:
    wrong = [CONT[dist](0.0, scale * f).cdf for f in WRONG]
    law = CONT[dist](0.0, scale).cdf
    check_continuous(samples, law, wrong, what=f"{dist}({scale})", symmetric_about=0.0)


@pytest.mark.parametrize("dist", ["laplace", "gaussian"])
def test_float_default_k_scalar_matches_continuous_law(dist: str) -> None:
    meas = make(dist, dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), 1.5)
    check_ks(np.array([meas(0.0) for _ in range(N_KS)]), dist, 1.5)


@pytest.mark.parametrize(("dist", "T"), [("laplace", "f32"), ("gaussian", "f64")])
def test_float_default_k_vector_matches_continuous_law(dist: str, T: str) -> None:
    metric = dp.l1_distance if dist == "laplace" else dp.l2_distance
    meas = make(dist, dp.vector_domain(dp.atom_domain(T=T, nan=False)), metric(T=T), 0.75)
    out = meas(np.full(N_KS, 10.0))
    check_ks(out.astype(np.float64) - 10.0, dist, 0.75)


@pytest.mark.slow
@pytest.mark.parametrize("dist", ["laplace", "gaussian"])
@pytest.mark.parametrize("scale", [0.01, 3.0, 1e6])
def test_float_default_k_large_sample(dist: str, scale: float) -> None:
    metric = dp.l1_distance if dist == "laplace" else dp.l2_distance
    meas = make(dist, dp.vector_domain(dp.atom_domain(T=float, nan=False)), metric(T=float), scale)
    check_ks(meas(np.zeros(scaled(100_000))), dist, scale)
