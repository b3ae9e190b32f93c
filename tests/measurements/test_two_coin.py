"""Two-coin randomized response: exact ε, the output law, the de-biasing estimator."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from opendp_lite._arith import log_up
from opendp_lite.errors import InvalidParameter
from opendp_lite.measurements.two_coin import (
    coins_from_epsilon,
    debias_two_coin,
    epsilon_two_coin,
    make_randomized_response_coins,
    share_of_yes,
    two_coin_uncertainty,
)
from tests.stat._reference import assert_within, check_binomial, z_bound

scipy_stats = pytest.importorskip("scipy.stats")

# 36 binomial tests per run: at 1e-3 one fails on fresh OS randomness about 1 run in 30 (seen:
# p = 2e-4 at the true coins); wrong coins (x0.7, x1.3) are still rejected at z > 20.

N = 40_000


def test_fair_coins_give_exactly_log_3() -> None:
    eps = make_randomized_response_coins().map(1)
    assert eps == log_up(3)
    assert math.log(3) <= eps <= math.nextafter(math.log(3), math.inf)
    assert make_randomized_response_coins().map(0) == 0.0


@pytest.mark.parametrize("f", [0.5, 0.6, 0.75, 0.9, 0.99])
def test_biased_first_coin_gives_log_f_over_1_minus_f(f: float) -> None:
    a = 2 * (1 - f)  # exact in binary for these f? use the exact rational of the float a
    fa = Fraction(a)
    exact_f = 1 - fa / 2  # Pr[yes | yes] for the coins actually built
    expected = 0.0 if exact_f == Fraction(1, 2) else log_up(exact_f / (1 - exact_f))
    assert make_randomized_response_coins(a, 0.5).map(1) == expected
    assert expected == pytest.approx(math.log(f / (1 - f)), abs=1e-12)


def test_epsilon_is_the_max_of_both_log_ratios_for_a_biased_second_coin() -> None:
    a, b = Fraction(1, 2), Fraction(1, 4)
    yes = (1 - a + a * b) / (a * b)  # 5/8 over 1/8
    no = (1 - a * b) / (a * (1 - b))  # 7/8 over 3/8
    assert epsilon_two_coin(0.5, 0.25) == log_up(max(yes, no)) == log_up(5)


@pytest.mark.parametrize(
    ("a", "b"), [(-0.1, 0.5), (1.1, 0.5), (0.5, -0.01), (0.5, 1.5), (math.nan, 0.5), (0.5, 2)]
)
def test_coin_probabilities_outside_unit_interval_are_refused(a: float, b: float) -> None:
    with pytest.raises(InvalidParameter, match="prob_head"):
        make_randomized_response_coins(a, b)


def test_coins_without_finite_epsilon_are_refused() -> None:
    with pytest.raises(InvalidParameter, match="no finite epsilon"):
        make_randomized_response_coins(0.0, 0.5)  # always truthful
    with pytest.raises(InvalidParameter, match="no finite epsilon"):
        make_randomized_response_coins(0.5, 1.0)  # "no" only ever comes from the truth
    assert make_randomized_response_coins(1.0, 0.5).map(1) == 0.0  # pure noise


def _counts(truth: bool, a: float, b: float) -> int:
    rr = make_randomized_response_coins(a, b)
    return sum(rr(truth) for _ in range(N))


@pytest.mark.parametrize(("a", "b"), [(0.5, 0.5), (0.3, 0.5), (0.6, 0.2)])
def test_output_law_matches_the_table_and_rejects_wrong_coins(a: float, b: float) -> None:
    for truth in (True, False):
        yes = _counts(truth, a, b)
        p = (1 - a + a * b) if truth else a * b
        wrong = [(1 - w + w * b) if truth else w * b for w in (a * 0.7, a * 1.3)]
        check_binomial(yes, N, p, wrong)


def test_debiasing_matches_the_seed() -> None:
    # the seed's fair-coin correction (r - 0.5*0.5)/0.5 on its observed 0.3492
    assert debias_two_coin(0.3492) == (0.3492 - 0.5 * 0.5) / 0.5
    # the biased form (r + f - 1)/(2f - 1) with a = 2(1 - f), b = 1/2
    f = 0.75
    assert debias_two_coin(0.4, 2 * (1 - f), 0.5) == pytest.approx((0.4 + f - 1) / (2 * f - 1))
    # uncertainty 2/(2f-1) sqrt(r(1-r)/N)
    assert two_coin_uncertainty(0.4, 500, 2 * (1 - f), 0.5) == pytest.approx(
        2 / (2 * f - 1) * math.sqrt(0.4 * 0.6 / 500)
    )
    with pytest.raises(InvalidParameter):
        debias_two_coin(0.5, 1.0, 0.5)
    with pytest.raises(InvalidParameter):
        two_coin_uncertainty(0.5, 0)
    with pytest.raises(InvalidParameter):
        two_coin_uncertainty(1.5, 10)


def test_debiased_estimate_is_unbiased_within_its_uncertainty() -> None:
    rr = make_randomized_response_coins()
    truth = np.zeros(N, dtype=bool)
    truth[: N // 5] = True  # p = 0.2, as in the seed
    released = np.array([rr(bool(t)) for t in truth])
    r = share_of_yes(released)
    # Δp is a 2σ interval; at level ALPHA widen it to z·σ
    sigma = two_coin_uncertainty(r, N) / 2
    z = z_bound()
    assert_within(debias_two_coin(r), 0.2, sigma)
    # an analyst who assumed the wrong first coin would be far off
    assert abs(debias_two_coin(r, 0.35, 0.5) - 0.2) > z * sigma


@pytest.mark.parametrize("eps", [0.0, 0.1, math.log(3), 2.0, 7.5])
def test_coins_from_epsilon_never_exceed_the_target(eps: float) -> None:
    a, b = coins_from_epsilon(eps)
    assert b == 0.5
    got = epsilon_two_coin(a, b)
    assert got <= math.nextafter(eps, math.inf)
    assert got == pytest.approx(eps, abs=1e-9)
    with pytest.raises(InvalidParameter):
        coins_from_epsilon(-1.0)


@pytest.mark.parametrize("f", [0.75, 0.9, 0.6])
def test_epsilon_matches_opendp_randomized_response_bool(f: float) -> None:
    # two coins with a = 2(1 − f), b = 1/2 are the same channel as OpenDP's truthful-with-prob-f
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    theirs = odp.m.make_randomized_response_bool(f).map(1)
    ours = make_randomized_response_coins(2 * (1 - f), 0.5).map(1)
    assert ours == pytest.approx(theirs, rel=1e-15, abs=1e-15)
    assert ours >= math.log(f / (1 - f)) - 1e-15
