"""Algebraic laws of chaining, as Hypothesis properties.

* chaining is associative: (a >> b) >> c and a >> (b >> c) agree on functions and maps;
* a chain's map is the composition of the maps;
* ``check(d, map(d))`` holds, and ``check(d, d_out)`` fails just below ``map(d)``;
* maps are monotone in ``d_in``.

The pieces are user transformations with exact integer Lipschitz maps ``d ↦ c·d`` and float
ones with maps rounded up through ``_arith``, so the laws are checked on real map arithmetic.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

import opendp_lite.prelude as dp
from opendp_lite import _arith

ISPACE = dp.atom_domain(T=int), dp.absolute_distance(T=int)
FSPACE = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)


@pytest.fixture(autouse=True)
def _trusted() -> None:
    dp.enable_features("honest-but-curious")


def int_scale(c: int) -> dp.Transformation[int, int, int, int]:
    return dp.t.make_user_transformation(*ISPACE, *ISPACE, lambda x: c * x, lambda d: c * d)


def float_scale(c: float) -> dp.Transformation[float, float, float, float]:
    return dp.t.make_user_transformation(
        *FSPACE, *FSPACE, lambda x: c * x, lambda d: _arith.mul_up(c, d)
    )


def int_noise(eps_per_unit: float) -> dp.Measurement[int, int, int, float]:
    return dp.m.make_user_measurement(
        *ISPACE, dp.max_divergence(), lambda x: x, lambda d: _arith.mul_up(d, eps_per_unit)
    )


coef = st.integers(min_value=0, max_value=1000)
fcoef = st.floats(min_value=0, max_value=1e6, allow_nan=False)
dist = st.integers(min_value=0, max_value=10**6)
fdist = st.floats(min_value=0, max_value=1e6, allow_nan=False)
xs = st.integers(min_value=-(10**3), max_value=10**3)


@given(coef, coef, coef, dist, xs)
def test_chaining_is_associative(a: int, b: int, c: int, d: int, x: int) -> None:
    ta, tb, tc = int_scale(a), int_scale(b), int_scale(c)
    left, right = (ta >> tb) >> tc, ta >> (tb >> tc)
    assert left.map(d) == right.map(d) == a * b * c * d
    assert left(x) == right(x) == a * b * c * x


@given(fcoef, fcoef, fdist)
def test_chain_map_is_the_composition_of_maps(a: float, b: float, d: float) -> None:
    ta, tb = float_scale(a), float_scale(b)
    chained = (ta >> tb).map(d)
    assert chained == tb.map(ta.map(d))
    # never below the exact value of b·(a·d)
    assert Fraction(chained) >= Fraction(b) * Fraction(a) * Fraction(d)


@given(fcoef, fdist, st.floats(min_value=1e-6, max_value=10, allow_nan=False))
def test_measurement_chain_map_is_the_composition(a: float, d: float, e: float) -> None:
    meas = dp.m.make_user_measurement(
        *FSPACE, dp.max_divergence(), lambda x: x, lambda d_: _arith.mul_up(d_, e)
    )
    assert (float_scale(a) >> meas).map(d) == meas.map(float_scale(a).map(d))


@given(fcoef, fdist)
def test_check_of_map_holds_and_is_tight(a: float, d: float) -> None:
    t = float_scale(a)
    d_out = t.map(d)
    assert t.check(d, d_out)
    below = math.nextafter(d_out, -math.inf)
    if below >= 0:
        assert not t.check(d, below)


@given(coef, dist, dist)
def test_maps_are_monotone(a: int, d1: int, d2: int) -> None:
    lo, hi = sorted((d1, d2))
    m = int_scale(a) >> int_noise(0.5)
    assert m.map(lo) <= m.map(hi)


@given(st.lists(st.floats(min_value=0, max_value=1e3, allow_nan=False), min_size=1, max_size=5))
def test_long_chains_compose_exactly_then_round(cs: list[float]) -> None:
    chain = float_scale(cs[0])
    for c in cs[1:]:
        chain = chain >> float_scale(c)
    exact = Fraction(1)
    for c in cs:
        exact *= Fraction(c)
    # each step rounds up, so the chain is >= the exact product
    assert Fraction(chain.map(1.0)) >= exact
