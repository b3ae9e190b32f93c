"""Adversarial neighbours for float sums (Casacuberta, Shoemate, Vadhan, Wagaman 2022).

Float summation loses sub-ulp values in an order-dependent way, so a sum whose map claims
``d_in · max(|L|, |U|)`` (or ``⌊d_in/2⌋ · (U − L)`` with a known size) can move by more than
that between neighbours.  Each attack below is first run against a deliberately naive control
(a sequential float sum with exactly that claimed map) to show that it *does* break it, then
against every float sum and mean opendp_lite ships, in several orderings: the observed output
distance, computed exactly with fractions, must never exceed ``T.map(d_in)``.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import opendp_lite.prelude as dp

SYM = dp.symmetric_distance()


def orderings(x: list[float]) -> list[list[float]]:
    """The same multiset in several orders an adversary might choose or induce."""
    rng = np.random.default_rng(12345)
    shuffled = list(x)
    rng.shuffle(shuffled)
    s = sorted(x)
    interleaved = [s[i // 2] if i % 2 == 0 else s[-1 - i // 2] for i in range(len(s))]
    return [
        list(x),
        list(reversed(x)),
        sorted(x),
        sorted(x, reverse=True),
        sorted(x, key=abs),
        shuffled,
        interleaved,
    ]


def naive_sequential_sum(x: list[float], dtype: Any) -> Fraction:
    """The naive control: a left-to-right float sum in ``dtype``."""
    arr = np.asarray(x, dtype=dtype)
    return Fraction(float(np.cumsum(arr, dtype=dtype)[-1])) if len(x) else Fraction(0)


def max_observed(f: Callable[[list[float]], float], x: list[float], x2: list[float]) -> Fraction:
    """The largest exact |f(a) − f(b)| over the orderings of both neighbours."""
    outs_x = [Fraction(f(o)) for o in orderings(x)]
    outs_x2 = [Fraction(f(o)) for o in orderings(x2)]
    return max(abs(a - b) for a in outs_x for b in outs_x2)


# ----------------------------------------------------------------------------------------------
# Attack 1 (unknown size, f32): sub-ulp values vanish behind a large running sum, then the
# large values cancel.  n_big = n_small = 2^13 is enough in binary32.

N = 2**13
SMALL = 2.0**-12  # below half an ulp of 2^13 in binary32 (ulp = 2^-10)
ATTACK1_X = [1.0] * N + [SMALL] * N + [-1.0] * N
ATTACK1_X2 = [SMALL] * N + [1.0] * N + [-1.0] * N + [0.0]  # one record added: d_in = 1


def test_attack1_breaks_the_naive_control() -> None:
    a = naive_sequential_sum(ATTACK1_X, np.float32)
    b = naive_sequential_sum(ATTACK1_X2, np.float32)
    naive_map = Fraction(1) * 1  # d_in · max(|L|, |U|) with bounds (−1, 1)
    assert a == 0 and b == 2
    assert abs(a - b) > naive_map  # the naive sensitivity claim is wrong


@pytest.mark.parametrize("T", ["f32", "f64"])
def test_attack1_is_covered_by_make_sum(T: str) -> None:
    t = dp.t.make_sum(dp.vector_domain(dp.atom_domain(bounds=(-1.0, 1.0), T=T)), SYM)
    assert max_observed(t, ATTACK1_X, ATTACK1_X2) <= Fraction(t.map(1))
    # our sum is exact on the grid, so the vanishing values are all counted
    assert t(ATTACK1_X) == t(ATTACK1_X2) == 2.0


@pytest.mark.parametrize(
    "name", ["make_bounded_float_checked_sum", "make_bounded_float_ordered_sum"]
)
@pytest.mark.parametrize("S", ["Pairwise<f32>", "Sequential<f32>", "Pairwise<f64>"])
def test_attack1_is_covered_by_the_explicit_sums(name: str, S: str) -> None:
    t = getattr(dp.t, name)(3 * N + 1, (-1.0, 1.0), S=S)
    assert max_observed(t, ATTACK1_X, ATTACK1_X2) <= Fraction(t.map(1))


# ----------------------------------------------------------------------------------------------
# Attack 2 (known size, f64): bounds (L, U) with U − L far below an ulp of the running sum.
# One substitution pushes an addition across a rounding midpoint, moving the float sum by a
# whole ulp 2^-21 ≈ 2·(U − L).

L = 2.0**20
HALF = 2.0**-22  # half an ulp of sums in [2^31, 2^32)
EPS = 2.0**-30
U = L + HALF + EPS
ATTACK2_X = [L] * 2048 + [L + HALF + EPS]
ATTACK2_X2 = [L] * 2048 + [L + HALF - EPS]  # one substitution: d_in = 2


def test_attack2_breaks_the_naive_control() -> None:
    a = naive_sequential_sum(ATTACK2_X, np.float64)
    b = naive_sequential_sum(ATTACK2_X2, np.float64)
    naive_map = Fraction(U) - Fraction(L)  # ⌊2/2⌋ · (U − L)
    assert abs(a - b) == Fraction(2) ** -21
    assert abs(a - b) > naive_map


@pytest.mark.parametrize(
    "make",
    [
        lambda n: dp.t.make_sum(dp.vector_domain(dp.atom_domain(bounds=(L, U)), size=n), SYM),
        lambda n: dp.t.make_sized_bounded_float_checked_sum(n, (L, U)),
        lambda n: dp.t.make_sized_bounded_float_ordered_sum(n, (L, U)),
        lambda n: dp.t.make_sized_bounded_float_checked_sum(n, (L, U), S="Sequential<f64>"),
    ],
    ids=["make_sum", "checked", "ordered", "checked-sequential"],
)
def test_attack2_is_covered_by_the_sized_sums(make: Callable[[int], Any]) -> None:
    t = make(len(ATTACK2_X))
    assert max_observed(t, ATTACK2_X, ATTACK2_X2) <= Fraction(t.map(2))


def test_attack2_on_the_mean() -> None:
    n = len(ATTACK2_X)
    naive = (
        abs(
            naive_sequential_sum(ATTACK2_X, np.float64)
            - naive_sequential_sum(ATTACK2_X2, np.float64)
        )
        / n
    )
    assert naive > (Fraction(U) - Fraction(L)) / n  # naive mean map (U − L)/n is broken too
    domain = dp.vector_domain(dp.atom_domain(bounds=(L, U)), size=n)
    for make in (dp.t.make_mean, dp.t.make_variance, dp.t.make_sum_of_squared_deviations):
        t = make(domain, SYM)
        assert max_observed(t, ATTACK2_X, ATTACK2_X2) <= Fraction(t.map(2)), make.__name__


# ----------------------------------------------------------------------------------------------
# A randomised search around both constructions: mixtures of bounds and sub-ulp values.


@pytest.mark.parametrize("seed", range(6))
def test_random_sub_ulp_mixtures_stay_within_the_maps(seed: int) -> None:
    rng = np.random.default_rng(seed)
    lo, hi = -1.0, 1.0
    n = 400
    kinds = rng.integers(0, 3, n)
    x = np.where(kinds == 0, hi, np.where(kinds == 1, lo, rng.uniform(-1e-15, 1e-15, n)))
    x_list = x.tolist()
    extra = [float(rng.choice([hi, lo, 1e-17]))]
    x2 = x_list[1:] + extra  # one removed, one added: d_in = 2
    sized_x2 = x_list[:-1] + extra  # one substitution in a sized domain: d_in = 2
    for T in ("f64", "f32"):
        t = dp.t.make_sum(dp.vector_domain(dp.atom_domain(bounds=(lo, hi), T=T)), SYM)
        assert max_observed(t, x_list, x2) <= Fraction(t.map(2))
    domain = dp.vector_domain(dp.atom_domain(bounds=(lo, hi)), size=n)
    for make in (dp.t.make_sum, dp.t.make_mean, dp.t.make_variance):
        t = make(domain, SYM)
        assert max_observed(t, x_list, sized_x2) <= Fraction(t.map(2)), make.__name__
