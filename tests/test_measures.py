"""Measures: reprs, loss validation and ordering, and privacy profiles."""

from __future__ import annotations

import math

import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import FailedMap


def test_reprs_and_equality() -> None:
    # as OpenDP 0.16 prints them (no parentheses, unlike metrics)
    assert repr(dp.max_divergence()) == "MaxDivergence"
    assert repr(dp.approximate(dp.zero_concentrated_divergence())) == (
        "Approximate(ZeroConcentratedDivergence)"
    )
    assert repr(dp.renyi_divergence()) == "RenyiDivergence"
    assert repr(dp.smoothed_max_divergence()) == "SmoothedMaxDivergence"
    assert dp.fixed_smoothed_max_divergence() == dp.approximate(dp.max_divergence())
    assert dp.user_divergence("a") == dp.user_divergence("a") != dp.user_divergence("b")
    assert repr(dp.PrivacyProfile(lambda e: 0.0)) == "PrivacyProfile()"


def test_approximate_loss_validation() -> None:
    measure = dp.approximate(dp.max_divergence())
    assert measure._check_loss((0.5, 1e-6)) == (0.5, 1e-6)
    for bad in [(0.5, 1.5), (0.5, -1e-9), (math.nan, 0.0), 0.5, (0.5,)]:
        with pytest.raises(FailedMap):
            measure._check_loss(bad)
    assert measure._le((0.5, 1e-7), (0.5, 1e-6))
    assert not measure._le((0.6, 1e-7), (0.5, 1e-6))
    assert not measure._le((0.5, 1e-5), (0.5, 1e-6))


def test_profile_is_not_totally_ordered() -> None:
    p = dp.PrivacyProfile(lambda e: 0.0)
    with pytest.raises(FailedMap):
        dp.smoothed_max_divergence()._le(p, p)


def test_profile_delta_validates() -> None:
    with pytest.raises(FailedMap):
        dp.PrivacyProfile(lambda e: math.nan).delta(1.0)
    with pytest.raises(FailedMap):
        dp.PrivacyProfile(lambda e: -0.1).delta(1.0)
    with pytest.raises(FailedMap):
        dp.PrivacyProfile(lambda e: 0.1).delta(math.nan)
    assert dp.PrivacyProfile(lambda e: 7.0).delta(1.0) == 1.0  # δ is capped at 1


@pytest.mark.parametrize("boundary", [1e-300, 0.1, 1 / 3, 1.0, 12.5, 1e10, 1e300])
def test_profile_epsilon_is_least_passing_float(boundary: float) -> None:
    # a step profile: δ = 1e-6 at and above the boundary, 1 below it
    p = dp.PrivacyProfile(lambda e: 1e-6 if e >= boundary else 1.0)
    assert p.epsilon(1e-6) == boundary
    assert p.epsilon(1e-7) == math.inf
    assert p.epsilon(1.0) == 0.0


def test_profile_epsilon_continuous() -> None:
    # δ(ε) = exp(-ε): ε(δ) = ln(1/δ), never below it
    p = dp.PrivacyProfile(lambda e: math.exp(-e))
    for delta in [0.5, 1e-3, 1e-9]:
        eps = p.epsilon(delta)
        assert p.delta(eps) <= delta < p.delta(math.nextafter(eps, 0.0))
        assert abs(eps - math.log(1 / delta)) < 1e-12 * max(1.0, eps)
    with pytest.raises(FailedMap):
        p.epsilon(-0.1)
    with pytest.raises(FailedMap):
        p.epsilon(1.1)
