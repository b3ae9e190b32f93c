"""χ² test of canonical (Tulap) noise against its exact CDF, binned on a half-integer grid.

α = 1e-4, n fixed; the laws with ε × 0.7 and × 1.3 (and the untruncated law) are rejected.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

import opendp_lite.prelude as dp
from tests.stat._reference import check_cells

N = 12000
EDGES = [-math.inf, *np.arange(-6.0, 6.01, 0.5).tolist(), math.inf]


def tulap_cdf(x: float, eps: float, delta: float) -> float:
    b = math.exp(-eps)
    q = 2 * delta * b / (1 - b + 2 * delta * b)

    def f0(y: float) -> float:
        if y > 0:
            return 1 - f0(-y)
        k = math.floor(y + 0.5)
        return b ** abs(k) / (1 + b) * (b + (1 - b) * (y - k + 0.5))

    if math.isinf(x):
        return 0.0 if x < 0 else 1.0
    return min(1.0, max(0.0, (f0(x) - q / 2) / (1 - q)))


def probs(eps: float, delta: float) -> np.ndarray:
    c = [tulap_cdf(e, eps, delta) for e in EDGES]
    return np.diff(c)


def pvalue(counts: np.ndarray, p: np.ndarray) -> float:
    keep = p * counts.sum() > 0
    observed, expected = counts[keep], p[keep] * counts.sum()
    if counts[~keep].sum():
        return 0.0
    return float(stats.chisquare(observed, expected * observed.sum() / expected.sum()).pvalue)


def test_tulap_law_and_scaling() -> None:
    eps, delta = 1.0, 0.05
    space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    m = dp.m.make_canonical_noise(*space, d_in=2.0, d_out=(eps, delta))
    xs = np.array([(m(10.0) - 10.0) / 2.0 for _ in range(N)])
    counts = np.histogram(xs, bins=EDGES)[0]
    wrong = [probs(eps * f, delta) for f in (0.7, 1.3)] + [probs(eps, 0.0)]
    check_cells(counts, probs(eps, delta), wrong)


def test_untruncated_when_delta_zero() -> None:
    eps = 0.7
    space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    m = dp.m.make_canonical_noise(*space, d_in=1.0, d_out=(eps, 0.0))
    counts = np.histogram([m(0.0) for _ in range(N)], bins=EDGES)[0]
    check_cells(counts, probs(eps, 0.0), [probs(eps * f, 0.0) for f in (0.7, 1.3)])
