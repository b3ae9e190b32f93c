"""The f32 span certificate of the lazy tail (``fast.rounding._round_span_f32``): when it
answers, every integer of the span rounds (exactly, ``_round_out``) to its answer; it answers
for almost every span a release meets; and the f32 scalar path that uses it gives, on the same
draw, the value of the exact two-ends rule."""

from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from opendp_lite.samplers.fast import rounding
from opendp_lite.samplers.fast.rounding import _float_out, _float_x, _round_out, _round_span_f32

spans = st.tuples(
    st.integers(min_value=-(2**200), max_value=2**200),
    st.integers(min_value=0, max_value=2**120),
    st.integers(min_value=-300, max_value=60),
)


@settings(max_examples=3000, deadline=None)
@given(spans, st.integers(min_value=0, max_value=6))
def test_a_certified_span_rounds_to_its_answer_everywhere(
    span: tuple[int, int, int], i: int
) -> None:
    a, width, k = span
    b = a + width
    y = _round_span_f32(a, b, k)
    if y is None:
        return
    assert y != 0.0
    for v in {a, b, a + width * i // 6, a + (width + 1) // 2}:
        assert _round_out(v, k, "f32") == y


def test_a_span_across_a_rounding_boundary_or_zero_is_not_certified() -> None:
    # 1 + 2^-24 is the midpoint between 1 and the next f32: a span across it is left to the
    # exact rule, and so is a span that reaches zero
    k = -60
    mid = (1 << 60) + (1 << 36)
    assert _round_span_f32(mid - 5, mid + 5, k) is None
    assert _round_span_f32(-3, 7, k) is None
    assert _round_span_f32((1 << 60) + 3, (1 << 60) + 9, k) == 1.0


@settings(max_examples=2000, deadline=None)
@given(
    st.floats(min_value=-1e30, max_value=1e30, allow_nan=False).map(lambda v: float(np.float32(v))),
    st.integers(min_value=0, max_value=1),
    st.integers(min_value=1, max_value=2**64),
    st.integers(min_value=1, max_value=140),
)
def test_the_f32_lazy_shortcut_is_the_two_ends_rule(x: float, neg: int, m: int, lazy: int) -> None:
    """_float_x's f32 shortcut returns only what _float_out's exact two-ends rule returns
    without revealing the tail (the tail is revealed only when neither certifies)."""
    k = -149
    J = int(x * 2**149) if x == x else 0  # x is an f32 value: on the 2^-149 grid, exact
    got = _float_x((neg, m, lazy), x, k, "f32")
    base = m << lazy
    ends = (J - base, J - base - (1 << lazy) + 1) if neg else (J + base, J + base + (1 << lazy) - 1)
    first, last = _round_out(ends[0], k, "f32"), _round_out(ends[1], k, "f32")
    if first == last and (first != 0.0 or ends[0] == ends[1]):
        assert got == first
        return
    # otherwise the tail was revealed: the value lies between the two ends' roundings
    lo, hi = sorted((first, last))
    assert lo <= got <= hi
    assert got == _float_out(neg, m, lazy, J, k, "f32") or lo <= got <= hi


class _Revealed(Exception):
    pass


@settings(max_examples=2000, deadline=None)
@given(
    st.floats(min_value=-1e30, max_value=1e30, allow_nan=False).map(lambda v: float(np.float32(v))),
    st.integers(min_value=0, max_value=1),
    st.integers(min_value=0, max_value=2**64),
    st.integers(min_value=1, max_value=140),
)
def test_the_f32_shortcut_is_float_out_on_the_same_draw(
    x: float, neg: int, m: int, lazy: int
) -> None:
    """_float_x's written-out span test answers only where _float_out (the same test, the
    two-ends rule, then the tail) answers without the tail, and with its value."""

    def reveal(bits: int) -> int:
        raise _Revealed

    k = -149
    J = int(x * 2**149)
    expected: float | None
    got: float | None
    with mock.patch.object(rounding, "sample_uniform_bits", reveal):
        try:
            expected = _float_out(neg, m, lazy, J, k, "f32")
        except _Revealed:
            expected = None
        try:
            got = _float_x((neg, m, lazy), x, k, "f32")
        except _Revealed:
            got = None
    assert got == expected


def test_the_f32_shortcut_rounds_the_top_of_a_span_up() -> None:
    """The span [M, M + 2^100 − 1] at k = −149, with M the tie between 1 and 1 + 2^−23 (which
    rounds to even, 1): every value but M rounds up, so the shortcut must not certify 1 from
    the span's truncated top; the tail is revealed and the release is 1 + 2^−23 unless all 100
    tail bits are 0."""
    assert _float_x((0, 2**25, 100), 1.0, -149, "f32") == 1.0 + 2.0**-23


def test_the_f32_shortcut_sees_a_span_just_above_a_tie() -> None:
    """The span {M + 2^90, M + 2^90 + 1} at k = −149 lies just above the tie M between 1 and
    1 + 2^−23, so both ends round up; the shortcut's scaled ends must be exact binary64
    values (a 41-bit truncation) for it to tell them from M."""
    assert _float_x((0, 2**124 + 2**89, 1), 1.0, -149, "f32") == 1.0 + 2.0**-23


def test_the_f32_shortcut_keeps_the_bottom_of_a_negative_span() -> None:
    """For a negative draw the span {−M − 1, −M} (M the tie between 1 and 1 + 2^−23) holds a
    value beyond the tie and the tie itself (which rounds to −1): the two ends differ, so the
    tail must be read; a span missing its lowest value would certify −1."""

    def reveal(bits: int) -> int:
        raise _Revealed

    with mock.patch.object(rounding, "sample_uniform_bits", reveal):
        try:
            got: float | None = _float_x((1, 2**124, 1), -1.0, -149, "f32")
        except _Revealed:
            got = None
    assert got is None
