"""The exponential mechanism: map formula, epsilon/scale parameterisation, typed errors."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import FailedFunction, FeatureNotEnabled, InvalidParameter

SPACE = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()


def count_at_most(x: np.ndarray, c: int) -> int:
    return int(np.sum(x <= c))


@pytest.fixture(autouse=True)
def _trust() -> None:
    dp.enable_features("honest-but-curious")


def test_needs_honest_but_curious() -> None:
    dp.disable_features("honest-but-curious")
    with pytest.raises(FeatureNotEnabled):
        dp.m.make_exponential(*SPACE, [1, 2], count_at_most, sensitivity=1, scale=1.0)


@pytest.mark.parametrize("monotonic", [False, True])
@pytest.mark.parametrize("sens", [1, 2.5])
@pytest.mark.parametrize("scale", [0.3, 1.0, 7.0])
def test_map_is_c_sens_d_over_scale_rounded_up(monotonic: bool, sens: float, scale: float) -> None:
    m = dp.m.make_exponential(
        *SPACE, [1, 2], count_at_most, sensitivity=sens, scale=scale, monotonic=monotonic
    )
    c = 1 if monotonic else 2
    for d in (0, 1, 4):
        exact = Fraction(c) * Fraction(sens) * d / Fraction(scale)
        assert Fraction(m.map(d)) >= exact
        assert m.map(d) <= float(exact) * (1 + 2**-51)


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 3.7])
@pytest.mark.parametrize("monotonic", [False, True])
def test_epsilon_parameterisation_meets_epsilon(epsilon: float, monotonic: bool) -> None:
    m = dp.m.make_exponential(
        *SPACE, [1, 2], count_at_most, sensitivity=3, epsilon=epsilon, monotonic=monotonic
    )
    assert m.check(1, epsilon)
    assert m.map(1) == pytest.approx(epsilon, rel=1e-15)


def test_returns_a_candidate_and_prefers_the_best() -> None:
    m = dp.m.make_exponential(
        *SPACE,
        ["low", "high"],
        lambda x, c: int(x.sum()) if c == "high" else 0,
        sensitivity=1,
        scale=1.0,
    )
    assert m([100, 100]) == "high"


def test_partial() -> None:
    m = SPACE >> dp.m.then_exponential([1, 2, 3], count_at_most, sensitivity=1, scale=2.0)
    assert m.map(1) == 1.0 and m([1, 2, 3]) in (1, 2, 3)


def test_scale_zero_picks_a_maximiser() -> None:
    m = dp.m.make_exponential(*SPACE, [0, 5, 9], count_at_most, sensitivity=1, scale=0.0)
    assert {m([1, 2, 3]) for _ in range(100)} == {5, 9}  # both count all 3 rows


def test_typed_errors() -> None:
    with pytest.raises(InvalidParameter, match="candidates"):
        dp.m.make_exponential(*SPACE, [], count_at_most, sensitivity=1, scale=1.0)
    with pytest.raises(InvalidParameter, match="exactly one"):
        dp.m.make_exponential(*SPACE, [1], count_at_most, sensitivity=1)
    with pytest.raises(InvalidParameter, match="exactly one"):
        dp.m.make_exponential(*SPACE, [1], count_at_most, sensitivity=1, scale=1.0, epsilon=1.0)
    with pytest.raises(InvalidParameter, match="sensitivity"):
        dp.m.make_exponential(*SPACE, [1], count_at_most, sensitivity=-1, scale=1.0)
    with pytest.raises(InvalidParameter, match="epsilon"):
        dp.m.make_exponential(*SPACE, [1], count_at_most, sensitivity=1, epsilon=0.0)
    with pytest.raises(InvalidParameter, match="scale"):
        dp.m.make_exponential(*SPACE, [1], count_at_most, sensitivity=1, scale=float("nan"))


def test_bad_scores_fail_before_sampling() -> None:
    m = dp.m.make_exponential(*SPACE, [1, 2], lambda x, c: float("nan"), sensitivity=1, scale=1.0)
    with pytest.raises(FailedFunction):
        m([1])
    m2 = dp.m.make_exponential(*SPACE, [1, 2], lambda x, c: "high", sensitivity=1, scale=1.0)  # type: ignore[arg-type,return-value]
    with pytest.raises(FailedFunction):
        m2([1])
