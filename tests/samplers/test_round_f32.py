"""The f32 output rounding of the fast samplers (integer arithmetic) against the reference
rounding of ``noise_ref.round_to_float`` (a gmpy2 IEEE-32 context): the same float, bit for
bit, on ties, subnormals, the smallest subnormal's half, the overflow threshold and beyond."""

from __future__ import annotations

import math
import struct

import gmpy2
from hypothesis import given, settings
from hypothesis import strategies as st

from opendp_lite.domains import _coerce_float_scalar
from opendp_lite.samplers.fast import _round_int_f32
from opendp_lite.samplers.noise_ref import round_to_float


def _ref(J: int, k: int) -> float:
    y = gmpy2.mpq(J) * (gmpy2.mpq(1, 1 << -k) if k < 0 else gmpy2.mpq(1 << k))
    return round_to_float(y, "f32")


def _same(a: float, b: float) -> bool:
    return struct.pack("<d", a) == struct.pack("<d", b)  # -0.0 and 0.0 differ


def _edge_cases() -> list[tuple[int, int]]:
    cases = [(0, 0), (1, -149), (1, -150), (3, -151), (1, -151), (2**24 - 1, -149)]
    for base_k in (-200, -174, -160, -150, -149, -126, -100, -30, -1, 0, 5, 100, 104, 105):
        for J in (
            1,
            2,
            3,
            2**23,
            2**24 - 1,
            2**24,
            2**24 + 1,
            2**25 - 1,
            2**25 + 1,
            2**25 + 3,
            3 * 2**23 + 1,
            2**60 + 2**36,
            2**60 + 2**36 + 1,
            2**60 - 1,
        ):
            cases += [(J, base_k), (-J, base_k)]
    # the overflow threshold (2 − 2^−24)·2^127 and its integer neighbours
    thr = (2**25 - 1) * 2**103
    cases += [(thr, 0), (thr - 1, 0), (thr + 1, 0), (-thr, 0), ((2**24 - 1), 104), (2**24, 104)]
    return cases


def test_edge_cases_round_as_the_reference() -> None:
    for J, k in _edge_cases():
        assert _same(_round_int_f32(J, k), _ref(J, k)), (J, k)


@settings(max_examples=3000, deadline=None)
@given(st.integers(min_value=-(2**80), max_value=2**80), st.integers(min_value=-220, max_value=80))
def test_random_grid_values_round_as_the_reference(J: int, k: int) -> None:
    assert _same(_round_int_f32(J, k), _ref(J, k))


@settings(max_examples=2000, deadline=None)
@given(st.integers(min_value=1, max_value=2**30), st.integers(min_value=-180, max_value=110))
def test_halfway_points_round_to_even(m: int, k: int) -> None:
    """J with a 1 right after the 24 kept bits and nothing below: an exact tie."""
    J = (2 * m + 1) << 6 if m.bit_length() >= 24 else 2 * m + 1
    assert _same(_round_int_f32(J, k), _ref(J, k))


@settings(max_examples=2000, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True))
def test_f32_coercion_is_numpys_cast(x: float) -> None:
    import numpy as np

    with np.errstate(over="ignore"):
        expected = float(np.float32(x))
    if math.isinf(expected) and not math.isinf(x):
        return  # refused as overflowing (checked below)
    got = _coerce_float_scalar("f32", x)
    assert (math.isnan(got) and math.isnan(expected)) or _same(got, expected)


def test_f32_coercion_refuses_overflow() -> None:
    import pytest

    from opendp_lite.errors import NotInDomain

    for x in (3.4028235677973366e38, 1e39, -1e300):
        with pytest.raises(NotInDomain):
            _coerce_float_scalar("f32", x)
    assert _coerce_float_scalar("f32", 3.4028235e38) == 3.4028234663852886e38
