"""Frequency test of the threshold mechanisms: a key with count T − 1 is released with
probability Pr[Z >= 1] exactly.  α = ALPHA (tests/conftest.py), n fixed; scale × 0.7 and × 1.3
must be rejected."""

from __future__ import annotations

import math

import opendp_lite.prelude as dp
from opendp_lite.measurements.threshold import l01inf_distance, l02inf_distance
from tests.stat._reference import check_binomial

CALLS, KEYS = 2000, 20  # n = 40,000: x1.3 sits 11 sigma from the truth (critical 4.9)
THRESHOLD = 10
DOM = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int))
DATA = {f"k{i}": THRESHOLD - 1 for i in range(KEYS)}


def laplace_p(b: float) -> float:
    a = math.exp(-1 / b)
    return a / (1 + a)


def gauss_p(s: float) -> float:
    w = [math.exp(-(z * z) / (2 * s * s)) for z in range(-200, 201)]
    return sum(w[201:]) / sum(w)


def run(m: dp.Measurement) -> tuple[int, int]:  # type: ignore[type-arg]
    hits = sum(len(m(DATA)) for _ in range(CALLS))
    return hits, CALLS * KEYS


def test_laplace_release_rate() -> None:
    m = dp.m.make_laplace_threshold(
        DOM, l01inf_distance(dp.absolute_distance(T=int)), scale=2.0, threshold=THRESHOLD
    )
    hits, n = run(m)
    check_binomial(hits, n, laplace_p(2.0), [laplace_p(2.0 * f) for f in (0.7, 1.3)])


def test_gaussian_release_rate() -> None:
    m = dp.m.make_gaussian_threshold(
        DOM, l02inf_distance(dp.absolute_distance(T=int)), scale=2.0, threshold=THRESHOLD
    )
    hits, n = run(m)
    check_binomial(hits, n, gauss_p(2.0), [gauss_p(2.0 * f) for f in (0.7, 1.3)])


FDOM = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=float, nan=False))
FDATA = {f"k{i}": THRESHOLD - 1.0 for i in range(KEYS)}


def test_float_release_rates_on_the_finest_grid() -> None:
    """On the 2^-1074 grid the laws are the continuous ones to ~1e-300: Pr = ½e^{−1/b} and
    Φc(1/σ)."""
    lap = dp.m.make_laplace_threshold(
        FDOM, l01inf_distance(dp.absolute_distance(T=float)), scale=2.0, threshold=float(THRESHOLD)
    )
    gau = dp.m.make_gaussian_threshold(
        FDOM, l02inf_distance(dp.absolute_distance(T=float)), scale=2.0, threshold=float(THRESHOLD)
    )
    n = CALLS * KEYS
    hits = sum(len(lap(FDATA)) for _ in range(CALLS))
    check_binomial(
        hits, n, 0.5 * math.exp(-1 / 2.0), [0.5 * math.exp(-1 / (2.0 * f)) for f in (0.7, 1.3)]
    )
    hits = sum(len(gau(FDATA)) for _ in range(CALLS))
    phic = 0.5 * math.erfc(1 / (2.0 * math.sqrt(2)))
    check_binomial(
        hits, n, phic, [0.5 * math.erfc(1 / (2.0 * f * math.sqrt(2))) for f in (0.7, 1.3)]
    )
