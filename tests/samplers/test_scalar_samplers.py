"""Deterministic properties of the exact scalar samplers and the reference noise functions."""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction

import gmpy2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opendp_lite.samplers import batch, rng
from opendp_lite.samplers.bernoulli import sample_bernoulli, sample_bernoulli_exp, to_rational
from opendp_lite.samplers.discrete_gaussian import sample_discrete_gaussian
from opendp_lite.samplers.discrete_laplace import sample_discrete_laplace
from opendp_lite.samplers.geometric import sample_geometric
from opendp_lite.samplers.noise_ref import (
    float_noise_ref,
    int_noise_ref,
    round_to_float,
    round_to_grid,
)


@contextmanager
def scripted(data: bytes) -> Iterator[None]:
    """A scripted source that serves ``data`` and then fails loudly."""
    buf = bytearray(data)

    def source(n: int) -> bytes:
        if n > len(buf):
            raise AssertionError("the sampler read more bytes than scripted")
        out = bytes(buf[:n])
        del buf[:n]
        return out

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with rng.scripted_randomness(source):
            yield


def test_bernoulli_compares_the_binary_expansion() -> None:
    # p = 1/3 = 0.01010101... in binary: its first byte is 0b01010101 = 85
    with scripted(bytes([84])):
        assert sample_bernoulli(Fraction(1, 3)) is True
    with scripted(bytes([86])):
        assert sample_bernoulli(Fraction(1, 3)) is False
    with scripted(bytes([85, 85, 84])):  # equal digits are read further
        assert sample_bernoulli(Fraction(1, 3)) is True
    # p = 1/2 = 0.1000...: U = 0.1000_0000 then p's expansion ends, so U >= p
    with scripted(bytes([128])):
        assert sample_bernoulli(0.5) is False
    with scripted(bytes([127])):
        assert sample_bernoulli(0.5) is True


def test_bernoulli_edges_draw_nothing() -> None:
    with scripted(b""):
        assert sample_bernoulli(0) is False
        assert sample_bernoulli(1) is True
        assert sample_discrete_laplace(0) == 0
        assert sample_discrete_gaussian(0) == 0


@pytest.mark.parametrize("bad", [-0.1, 1.5, math.nan, math.inf, "0.5", True])
def test_bernoulli_refuses_bad_p(bad) -> None:
    with pytest.raises(ValueError):
        sample_bernoulli(bad)


@pytest.mark.parametrize(
    "fn", [sample_bernoulli_exp, sample_discrete_laplace, sample_discrete_gaussian]
)
def test_negative_parameters_refused(fn) -> None:
    with pytest.raises(ValueError):
        fn(-1)
    with pytest.raises(ValueError):
        fn(math.inf)


def test_geometric_refuses_non_positive_rate() -> None:
    for bad in (0, -1, math.nan):
        with pytest.raises(ValueError):
            sample_geometric(bad)


def test_to_rational_is_exact() -> None:
    assert to_rational(0.1) == gmpy2.mpq(3602879701896397, 36028797018963968)
    assert to_rational(Fraction(2, 6)) == gmpy2.mpq(1, 3)
    assert to_rational(np.float32(0.5)) == gmpy2.mpq(1, 2)


def test_huge_gamma_terminates() -> None:
    assert sample_bernoulli_exp(10**6) in (True, False)


def test_round_to_grid_is_monotone_with_ties_up() -> None:
    assert [round_to_grid(x, 0) for x in (-1.5, -0.5, 0.5, 1.5, 2.5)] == [-1, 0, 1, 2, 3]
    assert round_to_grid(5e-324, -1073) == 1  # a subnormal tie goes up
    assert round_to_grid(1.0, 3) == 0 and round_to_grid(4.0, 3) == 1


@settings(max_examples=300, deadline=None)
@given(
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(-1074, 60),
)
def test_grid_rounding_penalty_bound(x: float, y: float, k: int) -> None:
    # the bound the privacy maps charge: |r − r′| ≤ |x − y| + 2^k − 2^-1074
    r = Fraction(round_to_grid(x, k)) * Fraction(2) ** k
    s = Fraction(round_to_grid(y, k)) * Fraction(2) ** k
    assert abs(r - s) <= abs(Fraction(x) - Fraction(y)) + Fraction(2) ** k - Fraction(2) ** -1074


@settings(max_examples=500, deadline=None)
@given(st.integers(1, 2**70), st.integers(-1200, 1100))
def test_round_to_f64_matches_python_int_division(num: int, e: int) -> None:
    y = gmpy2.mpq(num) * gmpy2.mpq(2) ** e
    want = num * 2**e if e >= 0 else num / 2**-e  # int / int is correctly rounded
    try:
        want_f = float(want)
    except OverflowError:
        want_f = math.inf
    got = round_to_float(y, "f64")
    assert got == (1.7976931348623157e308 if math.isinf(want_f) else want_f)


def _f32_reference(y: Fraction) -> float:
    """Round to nearest binary32, ties to even, by integer arithmetic only."""
    if y == 0:
        return 0.0
    sign = -1 if y < 0 else 1
    a = abs(y)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    q = max(e, -126) - 23  # quantum exponent
    v = a / Fraction(2) ** q
    n, r = divmod(v.numerator, v.denominator)
    if 2 * r > v.denominator or (2 * r == v.denominator and n % 2):
        n += 1
    out = n * Fraction(2) ** q
    big = Fraction(float(np.finfo(np.float32).max))
    return sign * float(min(out, big)) if out < 2 * big else sign * float(big)


@settings(max_examples=500, deadline=None)
@given(st.integers(1, 2**40), st.integers(-200, 110), st.booleans())
def test_round_to_f32_matches_integer_reference(num: int, e: int, neg: bool) -> None:
    y = Fraction(num) * Fraction(2) ** e * (-1 if neg else 1)
    got = round_to_float(gmpy2.mpq(y.numerator, y.denominator), "f32")
    assert got == _f32_reference(y)
    assert got == float(np.float32(got))


def test_noise_refs_with_zero_scale() -> None:
    assert int_noise_ref(-128, 0, "gaussian", "i8") == -128
    assert float_noise_ref(0.1, 0, -1074, "laplace", "f64") == 0.1
    assert float_noise_ref(0.1, 0, -3, "laplace", "f64") == 0.125
    assert float_noise_ref(1e-45, 0, -149, "gaussian", "f32") == float(np.float32(1e-45))
    with pytest.raises(ValueError):
        float_noise_ref(math.nan, 1, -1074, "laplace", "f64")
    with pytest.raises(ValueError):
        int_noise_ref(0, 1, "cauchy", "i32")  # type: ignore[arg-type]


def test_batch_matches_scalar_shapes_and_dtypes() -> None:
    x = np.arange(batch.CHUNK + 7, dtype=np.int64)
    out = batch.int_noise(x, 0, "laplace", "i64")
    assert out.dtype == np.int64 and np.array_equal(out, x)
    xf = np.linspace(-3, 3, batch.CHUNK + 3)
    outf = batch.float_noise(xf, 0, -1074, "gaussian", "f64")
    assert np.array_equal(outf, xf)
    assert batch.int_noise_scalar(5, 0, "laplace", "u8") == 5
    assert batch.float_noise_scalar(2.5, 0, 0, "laplace", "f32") == 3.0


def test_ties_to_even_would_break_the_charged_penalty() -> None:
    # Why the grid rounding sends ties toward +inf: with k = -1073, the neighbours
    # x = 1·2^-1074 and y = 3·2^-1074 are both ties.  Ties-to-even gives 0 and 4·2^-1074,
    # 4 units apart, but the map charges |x − y| + 2^k − 2^-1074 = 3 units.
    unit = Fraction(2) ** -1074
    x, y, k = float(unit), float(3 * unit), -1073
    charged = 2 * unit + Fraction(2) ** k - unit
    to_even = [round(Fraction(v) / Fraction(2) ** k) * Fraction(2) ** k for v in (x, y)]
    assert abs(to_even[1] - to_even[0]) > charged
    ours = [round_to_grid(v, k) * Fraction(2) ** k for v in (x, y)]
    assert abs(ours[1] - ours[0]) <= charged
