"""f32 float sums: the stability map carries the f32 rounding term.

The documented map of an exact grid sum is ``d_in-part + 2·e_T(c)`` with ``c`` the saturation
bound (``size · M'`` when sized, ``size_limit · M'`` when not) and, for f32 (the binary64 total
rounded once more to binary32),

    e_f32(c) = e64 + (c + e64)·2^-24 + 2^-150,   e64 = c·2^-53 + 2^-1075,

where the subnormal terms 2^-1075 and 2^-150 may be dropped when the grid's step is at least
the smallest normal number.  Each test recomputes that formula here in exact rationals, for
bounds that lie on the grid (so ``M' = max(|L|, |U|)`` and ``W = U − L`` exactly), and checks the
map is at least the formula without the subnormal terms and at most the full formula (one ulp
of slack for the final rounding up).  Dropping the f32 term (keeping only e64), or treating an
f32 total as exact (no term at all, as an f64 total of a small sum is), makes the map fall below
the lower bound.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pytest

import opendp_lite.prelude as dp

TWO = Fraction(2)


def e_f32(c: Fraction, subnormal: bool) -> Fraction:
    e64 = c * TWO**-53 + (TWO**-1075 if subnormal else 0)
    return e64 + (c + e64) * TWO**-24 + (TWO**-150 if subnormal else 0)


def check_map(got: float, d_part: Fraction, c: Fraction) -> None:
    low = d_part + 2 * e_f32(c, subnormal=False)
    high = d_part + 2 * e_f32(c, subnormal=True)
    assert Fraction(got) >= low, f"map {got!r} below the documented f32 bound {float(low)!r}"
    assert Fraction(got) <= high * (1 + TWO**-52), f"map {got!r} far above {float(high)!r}"


BOUNDS = [(0.0, 1.0), (-2.0, 3.0), (-0.5, 0.25), (0.0, 10.0)]
SUMMATIONS = ["Pairwise<f32>", "Sequential<f32>"]


def sized_constructors() -> dict[str, Callable[[int, tuple[float, float], str], Any]]:
    return {
        "checked": lambda n, b, S: dp.t.make_sized_bounded_float_checked_sum(n, b, S=S),
        "ordered": lambda n, b, S: dp.t.make_sized_bounded_float_ordered_sum(n, b, S=S),
        "make_sum": lambda n, b, S: dp.t.make_sum(
            dp.vector_domain(dp.atom_domain(bounds=b, T="f32"), size=n), dp.symmetric_distance()
        ),
    }


@pytest.mark.parametrize("kind", sorted(sized_constructors()))
@pytest.mark.parametrize("S", SUMMATIONS)
@pytest.mark.parametrize("bounds", BOUNDS)
@pytest.mark.parametrize("size", [1, 3, 1000, 2**20])
def test_sized_f32_sum_map_has_the_rounding_term(
    kind: str, S: str, bounds: tuple[float, float], size: int
) -> None:
    t = sized_constructors()[kind](size, bounds, S)
    lo, hi = Fraction(bounds[0]), Fraction(bounds[1])
    c = size * max(abs(lo), abs(hi))
    for d in (0, 1, 2, 3, 4, 10):
        check_map(t.map(d), (d // 2) * (hi - lo), c)


@pytest.mark.parametrize("S", SUMMATIONS)
@pytest.mark.parametrize("bounds", BOUNDS)
@pytest.mark.parametrize("limit", [1, 3, 1000, 2**20])
def test_unsized_f32_sum_map_has_the_rounding_term(
    S: str, bounds: tuple[float, float], limit: int
) -> None:
    lo, hi = Fraction(bounds[0]), Fraction(bounds[1])
    m = max(abs(lo), abs(hi))
    for t in (
        dp.t.make_bounded_float_checked_sum(limit, bounds, S=S),
        dp.t.make_bounded_float_ordered_sum(limit, bounds, S=S),
    ):
        for d in (0, 1, 2, 5):
            check_map(t.map(d), d * m, limit * m)


@pytest.mark.parametrize("bounds", BOUNDS)
def test_small_f32_sum_is_not_exact_where_f64_is(bounds: tuple[float, float]) -> None:
    """A small f64 grid total is a binary64 value (no rounding term); the same f32 total is
    rounded to binary32, so its map must exceed the bare d_in-part."""
    width = Fraction(bounds[1]) - Fraction(bounds[0])
    f64 = dp.t.make_sized_bounded_float_checked_sum(3, bounds, S="Pairwise<f64>")
    f32 = dp.t.make_sized_bounded_float_checked_sum(3, bounds, S="Pairwise<f32>")
    assert Fraction(f64.map(2)) == width  # the control: exact, bounds on the grid
    assert Fraction(f32.map(2)) > width
    assert Fraction(f32.map(0)) > 0
