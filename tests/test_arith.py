"""Conservative arithmetic: every `up` result is >= the exact value and within one ulp."""

from __future__ import annotations

import math
from fractions import Fraction

import gmpy2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from opendp_lite import _arith
from opendp_lite.errors import FailedMap

finite = st.floats(allow_nan=False, allow_infinity=False)
positive = st.floats(min_value=5e-324, max_value=1e300, allow_nan=False)
small = st.floats(min_value=-700, max_value=700, allow_nan=False)


def exact(x: object) -> Fraction:
    return Fraction(int(gmpy2.mpq(x).numerator), int(gmpy2.mpq(x).denominator))


@given(
    st.integers(min_value=-(10**400), max_value=10**400),
    st.integers(min_value=1, max_value=10**400),
)
def test_up_and_down_bracket_rationals_within_one_ulp(n: int, d: int) -> None:
    q = gmpy2.mpq(n, d)
    u, lo = _arith.up(q), _arith.down(q)
    assert lo <= u
    if math.isfinite(u):
        assert Fraction(u) >= Fraction(n, d)
        assert lo == u or math.nextafter(lo, math.inf) == u
    if math.isfinite(lo) and abs(lo) <= 1.7976931348623157e308:
        assert Fraction(lo) <= Fraction(n, d)


@given(st.lists(finite, min_size=1, max_size=8))
def test_add_up_is_the_exact_sum_rounded_up(xs: list[float]) -> None:
    s = _arith.add_up(*xs)
    exact_sum = sum((Fraction(x) for x in xs), Fraction(0))
    if math.isfinite(s):
        assert Fraction(s) >= exact_sum
        below = math.nextafter(s, -math.inf)
        if math.isfinite(below):
            assert Fraction(below) < exact_sum


def test_five_tenths_compose_above_half() -> None:
    assert _arith.add_up(*[0.1] * 5) == 0.5000000000000001


@given(small)
def test_exp_bounds_bracket_the_true_value(x: float) -> None:
    with gmpy2.context(gmpy2.get_context(), precision=300):
        true = gmpy2.exp(gmpy2.mpfr(x))
        assert gmpy2.mpfr(_arith.exp_down(x)) <= true <= gmpy2.mpfr(_arith.exp_up(x))


@given(positive)
def test_log_and_sqrt_bounds_bracket_the_true_value(x: float) -> None:
    with gmpy2.context(gmpy2.get_context(), precision=300):
        lx, sx = gmpy2.log(gmpy2.mpfr(x)), gmpy2.sqrt(gmpy2.mpfr(x))
        assert gmpy2.mpfr(_arith.log_down(x)) <= lx <= gmpy2.mpfr(_arith.log_up(x))
        assert gmpy2.mpfr(_arith.sqrt_down(x)) <= sx <= gmpy2.mpfr(_arith.sqrt_up(x))


def test_rational_inputs_are_rounded_in_the_safe_direction() -> None:
    third = gmpy2.mpq(1, 3)
    with gmpy2.context(gmpy2.get_context(), precision=300):
        assert gmpy2.mpfr(_arith.exp_up(third)) >= gmpy2.exp(gmpy2.mpfr(third))
        assert gmpy2.mpfr(_arith.exp_down(third)) <= gmpy2.exp(gmpy2.mpfr(third))


def test_errors_are_typed() -> None:
    with pytest.raises(FailedMap):
        _arith.q(math.nan)
    with pytest.raises(FailedMap):
        _arith.div_up(1, 0)
    with pytest.raises(FailedMap):
        _arith.log_up(0.0)
