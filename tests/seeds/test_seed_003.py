"""Seed 003 (Programming DP, the exponential mechanism): scores on the adult marital-status
column, the finite exponential mechanism, report noisy max, refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite.data import ADULT_MARITAL_COUNTS, load_adult_marital
from opendp_lite.errors import InvalidParameter
from tests.stat._reference import assert_fits, assert_within, check_binomial, z_bound

scipy_stats = pytest.importorskip("scipy.stats")
integrate = pytest.importorskip("scipy.integrate")


OPTIONS = list(ADULT_MARITAL_COUNTS)
COUNTS = np.array([ADULT_MARITAL_COUNTS[o] for o in OPTIONS], dtype=float)
SPACE = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()


def score(data: np.ndarray, option: str) -> float:
    return float((data == option).sum()) / 1000


def test_dataset_counts_and_score() -> None:
    data = load_adult_marital()
    assert len(data) == 32561
    values, counts = np.unique(data.astype(str), return_counts=True)
    assert dict(zip(values.tolist(), counts.tolist(), strict=True)) == ADULT_MARITAL_COUNTS
    assert score(data, "Never-married") == 10.683


def _exp_probabilities(epsilon: float) -> np.ndarray:
    w = np.exp(epsilon * COUNTS / 1000 / 2)
    return w / w.sum()


def test_exponential_mechanism_reproduces_the_seed_and_rejects_wrong_epsilon() -> None:
    dp.enable_features("honest-but-curious")
    data = load_adult_marital()
    em = dp.m.make_exponential(*SPACE, OPTIONS, score, sensitivity=1, epsilon=1.0)
    assert em.map(1) == 1.0
    probs = _exp_probabilities(1.0)
    # the seed: 179 x Married-civ-spouse, 21 x Never-married out of 200
    assert_fits(scipy_stats.binomtest(179, 200, probs[0]).pvalue)
    draws = [em(data) for _ in range(50)]  # the full pipeline, on the whole column
    assert set(draws) <= set(OPTIONS)
    # the law, at a larger n: the same mechanism on the precomputed count vector
    counts_space = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    em_counts = dp.m.make_exponential(
        *counts_space, range(len(OPTIONS)), lambda c, i: c[i] / 1000, sensitivity=1, epsilon=1.0
    )
    n = 3000
    exact = COUNTS.astype(int).tolist()
    hits = sum(em_counts(exact) == 0 for _ in range(n))
    check_binomial(hits, n, probs[0], [_exp_probabilities(f)[0] for f in (0.7, 1.3)])


def _rnm_probability_of_top(scale: float) -> float:
    """Pr[argmax(score_i + Lap(scale)) = Married-civ-spouse], by numerical integration."""
    s = COUNTS / 1000
    lap = scipy_stats.laplace

    def integrand(x: float) -> float:
        return float(lap.pdf(x, s[0], scale) * np.prod(lap.cdf(x, s[1:], scale)))

    val, _ = integrate.quad(integrand, s[0] - 40 * scale, s[0] + 40 * scale, limit=400)
    return float(val)


def test_report_noisy_max_reproduces_the_seed_and_rejects_wrong_scale() -> None:
    data = load_adult_marital()
    counts = SPACE >> dp.t.then_count_by_categories(OPTIONS, null_category=False)
    assert counts(data).tolist() == COUNTS.astype(int).tolist()
    # score = count/1000 plus Lap(1) (the seed's Δu = 1, ε = 1) is count plus Lap(1000)
    noisy = dp.m.make_laplace(counts.output_domain, counts.output_metric, scale=1000.0)
    rnm = counts >> noisy >> (lambda v: OPTIONS[int(np.argmax(v))])
    assert rnm(data) in OPTIONS
    assert rnm.map(1) == 0.001  # the true sensitivity of the scores is 1/1000
    p_top = _rnm_probability_of_top(1.0)
    assert 0.97 < p_top < 0.985
    assert_fits(scipy_stats.binomtest(192, 200, p_top).pvalue)  # the seed: 192 / 8
    exact = counts(data)
    # the x1.3 law is rejected with power 0.99955 at 3000 draws, 0.99997 at 3500
    n = 3500
    hits = sum(int(np.argmax(noisy(exact))) == 0 for _ in range(n))
    check_binomial(hits, n, p_top, [_rnm_probability_of_top(f) for f in (0.7, 1.3)])


def test_library_noisy_max_is_epsilon_dp_whatever_the_candidate_count() -> None:
    counts = SPACE >> dp.t.then_count_by_categories(OPTIONS, null_category=False)
    cast = dp.vector_domain(dp.atom_domain(T=int)), dp.linf_distance(T=int, monotonic=True)
    assert counts.output_domain.element_domain.T == "i32"
    rnm = dp.m.make_noisy_max(cast[0], cast[1], dp.max_divergence(), scale=1.0)
    assert rnm.map(1) == 1.0
    assert rnm(counts(load_adult_marital()).tolist()) in range(len(OPTIONS))


def test_empty_candidate_set_is_refused() -> None:
    dp.enable_features("honest-but-curious")
    with pytest.raises(InvalidParameter):
        dp.m.make_exponential(*SPACE, [], score, sensitivity=1, epsilon=1.0)


def test_laplace_from_the_exponential_mechanism() -> None:
    # u(x, r) = −2|q(x) − r| has Δu = 2Δq; the exponential mechanism then samples
    # ∝ exp(ε u/(2Δu)) = exp(−ε|r − q(x)|/(2Δq)): Laplace(2Δq/ε), the seed's "constant factor"
    dp.enable_features("honest-but-curious")
    grid = np.arange(-50, 51) / 2  # a finite grid of candidate answers
    space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    em = dp.m.make_exponential(
        *space, grid.tolist(), lambda x, r: -2 * abs(x - r), sensitivity=2.0, epsilon=1.0
    )
    assert em.map(1.0) == 1.0
    draws = np.array([em(0.0) for _ in range(2000)])
    z = z_bound()

    def moments(b: float) -> tuple[float, float]:  # E|R| and sd|R| of Laplace(b) on the grid
        w = np.exp(-np.abs(grid) / b)
        m1 = float(np.sum(np.abs(grid) * w) / w.sum())
        return m1, math.sqrt(float(np.sum(grid**2 * w) / w.sum()) - m1 * m1)

    m1, sd = moments(2.0)
    assert_within(np.abs(draws).mean(), m1, sd / math.sqrt(len(draws)))
    for b in (2.0 * 0.7, 2.0 * 1.3, 1.0):  # wrong scales, and the seed's loose Laplace(Δq/ε)
        assert abs(np.abs(draws).mean() - moments(b)[0]) > z * sd / math.sqrt(len(draws))
