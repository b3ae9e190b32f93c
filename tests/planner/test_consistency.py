"""Least-squares consistency of group counts with their total."""

from __future__ import annotations

import math

import pytest

from opendp_lite.planner.consistency import discrete_laplace_variance, gain, least_squares


def test_consistent_values_sum_to_the_total_and_weigh_by_variance():
    t, m = least_squares(1000.0, 4.0, [300.0, 500.0, 180.0], 4.0)
    assert sum(m) == pytest.approx(t)
    # equal variances: T̂ = (T̃ + S̃/3) / (1 + 1/3)
    assert t == pytest.approx((1000.0 + 980.0 / 3) / (4 / 3))
    # an exact total (tiny variance) is kept, the groups absorb the gap
    t, m = least_squares(1000.0, 1e-12, [300.0, 500.0, 180.0], 4.0)
    assert t == pytest.approx(1000.0)
    assert m == pytest.approx([306.6666667, 506.6666667, 186.6666667])


def test_gain_is_above_one_and_matches_the_variance_formula():
    g = gain(2.0, 2.0, 4)
    assert g["total"] == pytest.approx(math.sqrt(2.0 / (1 / (1 / 2 + 1 / 8))))
    assert g["total"] > 1 and g["group"] > 1


def test_discrete_laplace_variance():
    s = 3.0
    r = math.exp(-1 / s)
    direct = sum(2 * k * k * (1 - r) / (1 + r) * r**k for k in range(1, 2000))
    assert discrete_laplace_variance(s) == pytest.approx(direct)
