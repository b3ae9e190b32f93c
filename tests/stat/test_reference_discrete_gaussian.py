"""The variance of the *reference* discrete Gaussian sampler (CKS20 Algorithm 3, exact, scalar).

``samplers.discrete_gaussian.sample_discrete_gaussian`` is called directly (not the certified
fast path of ``samplers/fast/``).  A changed constant in its acceptance test (the 2 of 2σ², or
the centre σ²/t) leaves a symmetric law with a smaller variance (6–31% smaller for the centre
σ²/(t + 1); 9–15% for 1.4σ² in place of 2σ²); such an edit can pass the unit and law
tests.

Statistic: with the mean known (0), S = (1/N)·Σ z_i² has mean V = E[Z²] and variance
(E[Z⁴] − V²)/N, both computed from the exact pmf; the test is two-sided at ``ALPHA`` with the
normal approximation (|S − V| / sd <= z_{α/2} = 4.89; the Edgeworth correction for the skew of a
mean of 8,000 squares moves that tail by about 10% of α).  Power, fixed up front: N = 8,000 draws
per scale rejects a law whose variance is 15% low (a discrete Gaussian of scale σ' with
V(σ') = 0.85·V(σ)) with probability >= 0.99999 at each scale below (asserted in the test from
the same exact moments), so a 15–30% drop is missed with probability < 1e-5.  Each sample also
rejects scale × 0.7 and × 1.3.
"""

from __future__ import annotations

import math

import pytest

from opendp_lite.samplers.discrete_gaussian import sample_discrete_gaussian
from tests.stat._reference import assert_rejects, assert_within, z_bound

scipy_stats = pytest.importorskip("scipy.stats")
scipy_optimize = pytest.importorskip("scipy.optimize")

N = 8_000
SCALES = [0.7, 2.0, 5.5]  # t = ⌊σ⌋ + 1 = 1, 3, 6
REQUIRED_POWER = 0.999


def moments(sigma: float) -> tuple[float, float]:
    """E[Z²] and E[Z⁴] of the discrete Gaussian of scale σ, from its pmf."""
    half = int(40 * sigma) + 10
    weights = [(z, math.exp(-(z * z) / (2 * sigma * sigma))) for z in range(-half, half + 1)]
    norm = math.fsum(w for _, w in weights)
    v = math.fsum(z * z * w for z, w in weights) / norm
    m4 = math.fsum(z**4 * w for z, w in weights) / norm
    return v, m4


def z_score(mean_square: float, sigma: float, n: int) -> float:
    v, m4 = moments(sigma)
    return (mean_square - v) / math.sqrt((m4 - v * v) / n)


def critical() -> float:
    return z_bound()


def power_against_low_variance(sigma: float, n: int, drop: float = 0.15) -> float:
    """Pr[reject] when the draws have a variance (1 − drop)·V(σ) (a narrower discrete
    Gaussian), under the same normal approximation."""
    v, m4 = moments(sigma)
    low = scipy_optimize.brentq(lambda s: moments(s)[0] - (1 - drop) * v, 0.2 * sigma, sigma)
    v1, m41 = moments(low)
    sd0, sd1 = math.sqrt((m4 - v * v) / n), math.sqrt((m41 - v1 * v1) / n)
    return float(scipy_stats.norm.sf((critical() * sd0 - (v - v1)) / sd1))


def power_against_scale(sigma: float, wrong: float, n: int) -> float:
    """Pr[the z-test against scale wrong·σ rejects] when the draws have scale σ (the same normal
    approximation as the test)."""
    v, m4 = moments(sigma)
    vw, m4w = moments(sigma * wrong)
    sd, sdw = math.sqrt((m4 - v * v) / n), math.sqrt((m4w - vw * vw) / n)
    c = critical()
    # reject when |S − vw| > c·sdw, with S ~ N(v, sd²)
    hi = scipy_stats.norm.sf((vw + c * sdw - v) / sd)
    lo = scipy_stats.norm.cdf((vw - c * sdw - v) / sd)
    return float(hi + lo)


@pytest.mark.parametrize("sigma", SCALES)
def test_sample_size_has_the_power_to_see_a_15_percent_variance_drop(sigma: float) -> None:
    assert power_against_low_variance(sigma, N) >= REQUIRED_POWER


@pytest.mark.parametrize("sigma", SCALES)
def test_reference_discrete_gaussian_variance(sigma: float) -> None:
    draws = [sample_discrete_gaussian(sigma) for _ in range(N)]
    mean_square = math.fsum(z * z for z in draws) / N
    v, m4 = moments(sigma)
    assert_within(mean_square, v, math.sqrt((m4 - v * v) / N), f"E[Z²] at σ = {sigma}")
    for wrong in (0.7, 1.3):  # the same sample rejects the wrong laws, with stated power
        zw = z_score(mean_square, sigma * wrong, N)
        p = float(2 * scipy_stats.norm.sf(abs(zw)))
        assert_rejects(p, power_against_scale(sigma, wrong, N), f"scale x {wrong} at σ = {sigma}")
