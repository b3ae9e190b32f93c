"""Overflow: integer sums never wrap; float bounds that can overflow are refused at construction.

Attack family: an adversary adds records near the carrier's maximum so that a wrapping sum
turns a huge total into a small or negative one: the sensitivity the map assumed no longer
bounds the change (one record flips the sign of the release).  Controls: numpy's own integer
sums wrap on exactly these inputs.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import InvalidParameter, NotInDomain
from opendp_lite.samplers import rng

SD = dp.symmetric_distance()
I32_MAX = 2**31 - 1
I64_MAX = 2**63 - 1


def _ivec(lo: int, hi: int, T: str, size: int | None = None) -> dp.VectorDomain[int]:
    return dp.vector_domain(dp.atom_domain(bounds=(lo, hi), T=T), size=size)


def test_naive_numpy_sums_wrap() -> None:
    # the control: the attack inputs do wrap in numpy's fixed-width arithmetic
    x32 = np.array([I32_MAX] * 4, dtype=np.int32)
    assert x32.sum(dtype=np.int32) == -4
    x64 = np.array([I64_MAX] * 3, dtype=np.int64)
    assert int(x64.sum()) != 3 * I64_MAX and int(x64.sum()) < I64_MAX


@pytest.mark.parametrize(
    ("T", "hi", "n"),
    [("i32", I32_MAX, 4), ("i64", I64_MAX, 3), ("i8", 127, 5), ("i16", 2**15 - 1, 9)],
)
def test_unsized_int_sum_saturates_instead_of_wrapping(T: str, hi: int, n: int) -> None:
    t = dp.t.make_sum(_ivec(0, hi, T), SD)
    out = int(t(np.array([hi] * n)))
    assert out == hi  # saturated at the carrier's maximum, never wrapped
    # and with negative bounds, at the minimum
    lo = -hi - 1
    t2 = dp.t.make_sum(_ivec(lo, hi, T), SD)
    assert int(t2(np.array([lo] * n))) == lo
    assert lo <= int(t2(np.array([lo] * n + [hi] * n))) <= hi


def test_saturating_sum_output_distance_within_map() -> None:
    # near the limit one added record moves the (saturated) sum by at most map(1)
    t = dp.t.make_sum(_ivec(0, I32_MAX, "i32"), SD)
    x = np.array([I32_MAX - 10, 5], dtype=np.int64)
    x_prime = np.array([I32_MAX - 10, 5, I32_MAX], dtype=np.int64)
    assert abs(int(t(x_prime)) - int(t(x))) <= t.map(1)


@pytest.mark.parametrize(
    "build",
    [
        lambda: dp.t.make_sized_bounded_int_checked_sum(4, (0, I32_MAX), T="i32"),
        lambda: dp.t.make_sized_bounded_int_checked_sum(2, (-(2**62), 2**62), T="i64"),
    ],
)
def test_checked_int_sum_that_can_overflow_is_refused(build: object) -> None:
    with pytest.raises(InvalidParameter, match="overflow"):
        build()  # type: ignore[operator]


def test_sized_int_sum_is_exact_or_saturating() -> None:
    t = dp.t.make_sum(_ivec(0, I32_MAX, "i32", size=4), SD)
    assert int(t(np.array([I32_MAX] * 4))) == I32_MAX


@pytest.mark.parametrize(
    "build",
    [
        lambda: dp.t.make_sum(dp.vector_domain(dp.atom_domain(bounds=(0.0, 1e308)), size=10), SD),
        lambda: dp.t.make_sum(dp.vector_domain(dp.atom_domain(bounds=(-1e308, 0.0))), SD),
        lambda: dp.t.make_sized_bounded_float_checked_sum(10, (0.0, 1e308)),
        lambda: dp.t.make_bounded_float_checked_sum(10, (0.0, 1e308)),
        lambda: dp.t.make_sized_bounded_float_ordered_sum(10, (0.0, 1e308)),
        lambda: dp.t.make_bounded_float_ordered_sum(10, (-1e308, 1e308)),
        lambda: dp.t.make_sized_bounded_float_checked_sum(2**40, (0.0, 1e300)),
    ],
)
def test_float_bounds_that_can_overflow_are_refused(build: object) -> None:
    with pytest.raises(InvalidParameter, match="overflow"):
        build()  # type: ignore[operator]


def test_naive_float_sum_overflows_to_inf() -> None:
    # the control: a plain float sum of in-bounds values reaches inf
    with np.errstate(over="ignore"):
        assert np.sum(np.full(10, 1e308)) == np.inf


def test_accepted_float_sum_stays_finite_at_the_bounds() -> None:
    space = dp.vector_domain(dp.atom_domain(bounds=(-1e300, 1e300)), size=100), SD
    t = dp.t.make_sum(*space)
    assert np.isfinite(t(np.full(100, 1e300))) and np.isfinite(t(np.full(100, -1e300)))
    meas = t >> dp.m.make_laplace(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), 1e300
    )
    assert np.isfinite(meas(np.full(100, 1e300)))


@pytest.mark.parametrize("T", ["i8", "i16", "i32", "i64"])
def test_integer_noise_saturates_instead_of_wrapping(T: str) -> None:
    bits = {"i8": 8, "i16": 16, "i32": 32, "i64": 64}[T]
    hi = 2 ** (bits - 1) - 1
    lo = -hi - 1
    meas = dp.m.make_laplace(dp.atom_domain(T=T, nan=False), dp.absolute_distance(T=T), scale=4.0)
    ups = [meas(hi) for _ in range(200)]
    downs = [meas(lo) for _ in range(200)]
    # noise of scale 4 moves by more than 200 with probability e^-50: a wrap would land far away
    assert all(hi - 200 <= y <= hi for y in ups)
    assert all(lo <= y <= lo + 200 for y in downs)
    assert any(y == hi for y in ups) and any(y == lo for y in downs)  # saturation is reached


def test_float_noise_saturates_at_max_finite() -> None:
    meas = dp.m.make_laplace(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), 1e307
    )
    big = np.finfo(np.float64).max
    outs = [meas(big) for _ in range(200)]
    assert all(np.isfinite(y) for y in outs)
    assert any(y == big for y in outs)


INT_SUMS = [
    "make_bounded_int_monotonic_sum",
    "make_bounded_int_ordered_sum",
    "make_bounded_int_split_sum",
    "make_sized_bounded_int_monotonic_sum",
    "make_sized_bounded_int_ordered_sum",
    "make_sized_bounded_int_split_sum",
    "make_sized_bounded_int_checked_sum",
]


@pytest.mark.parametrize("name", INT_SUMS)
@pytest.mark.parametrize("bounds", [(0, I32_MAX), (-I32_MAX - 1, I32_MAX)], ids=["pos", "mixed"])
def test_every_int_sum_refuses_or_saturates(name: str, bounds: tuple[int, int]) -> None:
    make = getattr(dp.t, name)
    lo, hi = bounds
    try:
        t = make(4, bounds, T="i32") if "sized" in name else make(bounds, T="i32")
    except InvalidParameter:
        return  # refusing to build is one of the two allowed outcomes
    assert int(t(np.array([hi] * 4))) == I32_MAX  # one-signed data: the clamp of the exact sum
    assert int(t(np.array([lo] * 4))) == max(4 * lo, -I32_MAX - 1)
    mixed = int(t(np.array([lo, hi] * 2)))
    assert -I32_MAX - 1 <= mixed <= I32_MAX


# -- a Python int too large for a float is outside the domain, not an OverflowError


HUGE = 2**1100  # beyond the f64 range: float(HUGE) raises OverflowError


def _obj(*cells: object) -> np.ndarray:
    out = np.empty(len(cells), dtype=object)
    out[:] = list(cells)
    return out


@pytest.mark.parametrize("T", ["f64", "f32"])
@pytest.mark.parametrize(
    ("make_dom", "x"),
    [
        (lambda T: dp.atom_domain(T=T, nan=False), HUGE),
        (lambda T: dp.atom_domain(T=T, nan=True), -HUGE),
        (lambda T: dp.vector_domain(dp.atom_domain(T=T, nan=False)), [1.0, HUGE]),
        (lambda T: dp.vector_domain(dp.atom_domain(T=T, nan=False)), _obj(1.0, HUGE)),
        (lambda T: dp.option_domain(dp.atom_domain(T=T, nan=False)), HUGE),
        (
            lambda T: dp.vector_domain(dp.option_domain(dp.atom_domain(T=T, nan=False))),
            [None, HUGE],
        ),
        (
            lambda T: dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=T, nan=False)),
            {"a": HUGE},
        ),
    ],
    ids=["atom", "atom-nan", "vector-list", "vector-object", "option", "option-vector", "map"],
)
def test_huge_int_is_not_in_a_float_domain(make_dom: Any, x: Any, T: str) -> None:
    dom = make_dom(T)
    assert dom.member(x) is False
    with pytest.raises(NotInDomain):
        dom._normalize(x)


def test_huge_int_in_a_dataframe_column_is_refused_before_any_randomness() -> None:
    meas = dp.t.make_select_column("w", TOA=float) >> dp.t.then_count() >> dp.m.then_laplace(1.0)
    frame = {"w": [0.5, HUGE]}
    assert not meas.input_domain.member(frame)
    drawn: list[int] = []

    def source(n: int) -> bytes:
        drawn.append(n)
        return bytes(n)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with rng.scripted_randomness(source), pytest.raises(NotInDomain, match="too large"):
            meas(frame)
    assert drawn == []


def test_float_vector_admits_exactly_its_element_domain() -> None:
    # a vector is a member iff each element is: 2**64 fits f64 (as an atom and in a vector)
    f64 = dp.atom_domain(T=float, nan=False)
    for v in (2**64, 2**1023, -(2**70)):
        assert f64.member(v)
        assert dp.vector_domain(f64)._normalize([0.5, v]).tolist() == [0.5, float(v)]
    assert not dp.atom_domain(T="f32", nan=False).member(2**200)
    assert not dp.vector_domain(dp.atom_domain(T="f32", nan=False)).member([2**200])
