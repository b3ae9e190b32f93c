"""Seed 002 (shfl randomized response): two coins, ε = log 3, the biased first coin with
ε = log(f/(1−f)), de-biasing p̂ = (r + f − 1)/(2f − 1) and Δp over ε and N."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite._arith import log_up
from opendp_lite.measurements.two_coin import (
    coins_from_epsilon,
    debias_two_coin,
    epsilon_two_coin,
    make_randomized_response_coins,
    two_coin_uncertainty,
)
from tests.stat._reference import assert_within, z_bound

scipy_stats = pytest.importorskip("scipy.stats")


Z = z_bound()
BOOLS = dp.vector_domain(dp.atom_domain(T=bool))


def _federated(array: np.ndarray, a: float = 0.5, b: float = 0.5) -> np.ndarray:
    """The seed's flow: each node privatises its own value; the analyst gets the vector."""
    rr = make_randomized_response_coins(a, b)
    return dp.c.make_local_release(BOOLS, dp.hamming_distance(), rr)(array)


def test_fair_coins_are_exactly_log_3_dp() -> None:
    rr = make_randomized_response_coins()
    assert rr.map(1) == log_up(3)
    assert math.log(3) <= rr.map(1) <= math.nextafter(math.log(3), math.inf)


def test_seed_section_1_numbers() -> None:
    data_size = 10_000
    array = np.zeros(data_size, dtype=bool)
    array[:2061] = True  # the seed's vector had mean 0.2061
    result = _federated(array)
    expected = 0.2061 * 0.5 + 0.5 * 0.5
    assert expected == pytest.approx(0.35305)
    sd = math.sqrt(expected * (1 - expected) / data_size)
    assert_within(result.mean(), expected, sd)
    assert abs(0.3492 - expected) < Z * sd  # the seed's own observed mean (fixed data)
    # "(np.mean(result) - 0.5*0.5)/0.5": the seed got 0.1984 from 0.3492
    assert debias_two_coin(0.3492) == (0.3492 - 0.5 * 0.5) / 0.5
    assert_within(debias_two_coin(float(result.mean())), 0.2061, 2 * sd)
    # a wrong law: the coins 0.7x / 1.3x would shift the mean out of the interval
    for factor in (0.7, 1.3):
        a = 0.5 * factor
        wrong = 0.2061 * (1 - a) + a * 0.5
        assert abs(result.mean() - wrong) > Z * sd


@pytest.mark.parametrize("f", [0.6, 0.75, 0.9])
def test_biased_first_coin(f: float) -> None:
    a = 2 * (1 - f)
    assert epsilon_two_coin(a, 0.5) == pytest.approx(math.log(f / (1 - f)), abs=1e-12)
    # the seed's get_prob_from_epsilon(ε) = 2(1 − f), f = e^ε/(1 + e^ε)
    got_a, got_b = coins_from_epsilon(math.log(f / (1 - f)))
    assert got_b == 0.5 and got_a == pytest.approx(a, rel=1e-12)


def test_uncertainty_formula_and_trends_over_epsilon_and_n() -> None:
    p = 0.2
    epsilons = [0.5, 1.0, 2.0, 4.0, 8.0]
    table = {}
    for n in (100, 500, 2000):
        for eps in epsilons:
            a, b = coins_from_epsilon(eps)
            f = math.exp(eps) / (1 + math.exp(eps))
            r_expected = p * f + (1 - p) * (1 - f)
            dp_seed = 2 / (2 * f - 1) * math.sqrt(r_expected * (1 - r_expected) / n)
            table[n, eps] = two_coin_uncertainty(r_expected, n, a, b)
            assert table[n, eps] == pytest.approx(dp_seed, rel=1e-9)
    for n in (100, 500, 2000):  # Δp falls with ε ...
        assert all(table[n, e1] > table[n, e2] for e1, e2 in itertools.pairwise(epsilons))
    for eps in epsilons:  # ... and with N
        assert table[100, eps] > table[500, eps] > table[2000, eps]


@pytest.mark.parametrize(("n", "epsilon"), [(100, 1.0), (500, 3.0), (2000, 0.5), (2000, 8.0)])
def test_experiment_estimates_p_within_its_uncertainty(n: int, epsilon: float) -> None:
    p, runs = 0.2, 10  # the seed averages 10 runs per (ε, N)
    a, b = coins_from_epsilon(epsilon)
    array = np.zeros(n, dtype=bool)
    array[: int(p * n)] = True
    estimates = [debias_two_coin(float(_federated(array, a, b).mean()), a, b) for _ in range(runs)]
    f = math.exp(epsilon) / (1 + math.exp(epsilon))
    r = p * f + (1 - p) * (1 - f)
    sigma = two_coin_uncertainty(r, n, a, b) / 2  # Δp is 2σ
    assert_within(float(np.mean(estimates)), p, sigma / math.sqrt(runs))
