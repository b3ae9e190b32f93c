"""Population amplification: exact hit probability, conservative rounding, OpenDP agreement."""

from __future__ import annotations

import math
from fractions import Fraction
from math import comb
from typing import Any

import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import FeatureNotEnabled, InvalidParameter, NotImplementedForType


def sized(n: int) -> Any:
    return dp.vector_domain(dp.atom_domain(T=float, nan=False), size=n), dp.symmetric_distance()


def mean(n: int, measure: Any, loss: Any) -> Any:
    return dp.m.make_user_measurement(*sized(n), measure, lambda x: float(sum(x)), loss)


@pytest.fixture(autouse=True)
def _hbc() -> None:
    dp.enable_features("honest-but-curious")


def reference_epsilon(eps: float, k: int, n: int, N: int) -> float:
    q = 1 - Fraction(comb(N - k, n), comb(N, n)) if N - k >= n else Fraction(1)
    return math.log1p(float(q) * math.expm1(eps))


@pytest.mark.parametrize(("n", "N"), [(10, 100), (10, 10), (3, 1000), (50, 51)])
@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 5.0])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_amplified_epsilon(n: int, N: int, eps: float, k: int) -> None:
    amplified = dp.c.make_population_amplification(
        mean(n, dp.max_divergence(), lambda d, e=eps: e * d), N
    )
    got = amplified.map(k)
    want = reference_epsilon(eps * k, k, n, N)
    assert got >= want * (1 - 1e-14)  # conservative (up to the float reference's own error)
    assert got <= want * (1 + 1e-12)  # and tight
    assert got <= eps * k  # amplification never hurts


def test_amplified_delta_is_rounded_up() -> None:
    amplified = dp.c.make_population_amplification(
        mean(10, dp.approximate(dp.max_divergence()), lambda d: (0.5 * d, 1e-6)), 30
    )
    eps, delta = amplified.map(1)
    assert Fraction(delta) >= Fraction(1, 3) * Fraction(1e-6)
    assert eps < 0.5


def test_amplification_errors() -> None:
    m = mean(10, dp.max_divergence(), lambda d: 0.5 * d)
    with pytest.raises(InvalidParameter):
        dp.c.make_population_amplification(m, 9)
    with pytest.raises(InvalidParameter):
        dp.c.make_population_amplification(m, 100.0)  # type: ignore[arg-type]
    with pytest.raises(NotImplementedForType):
        dp.c.make_population_amplification(
            mean(10, dp.zero_concentrated_divergence(), lambda d: d), 100
        )
    unsized = dp.m.make_user_measurement(
        dp.vector_domain(dp.atom_domain(T=float, nan=False)),
        dp.symmetric_distance(),
        dp.max_divergence(),
        lambda x: 0.0,
        lambda d: d,
    )
    with pytest.raises(NotImplementedForType):
        dp.c.make_population_amplification(unsized, 100)
    dp.disable_features("honest-but-curious")
    with pytest.raises(FeatureNotEnabled):
        dp.c.make_population_amplification(m, 100)


def test_amplification_matches_opendp_at_unit_distance() -> None:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib", "honest-but-curious")
    space = (
        odp.vector_domain(odp.atom_domain(T=float, nan=False), size=10),
        odp.symmetric_distance(),
    )
    for N in [10, 11, 100, 10_000]:
        for eps in [0.01, 0.5, 1.0, 3.0]:
            theirs = odp.c.make_population_amplification(
                odp.m.make_user_measurement(
                    *space, odp.max_divergence(), lambda x: 0.0, lambda d, e=eps: e * d
                ),
                N,
            ).map(1)
            ours = dp.c.make_population_amplification(
                mean(10, dp.max_divergence(), lambda d, e=eps: e * d), N
            ).map(1)
            assert abs(ours - theirs) <= 1e-9 * max(1.0, theirs)
