"""Parameter search: the result passes, its neighbour towards the boundary fails."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendp_lite.prelude as dp


@given(st.floats(min_value=-1e300, max_value=1e300, allow_nan=False))
@settings(max_examples=200, deadline=None)
def test_float_boundary_found_exactly(boundary: float) -> None:
    found, sign = dp.binary_search(lambda x: x >= boundary, return_sign=True)
    assert found == boundary + 0.0 and sign == 1
    found = dp.binary_search(lambda x: x <= boundary)
    assert found == boundary + 0.0


@given(st.floats(min_value=1e-300, max_value=1e300), st.floats(min_value=1e-3, max_value=1e3))
@settings(max_examples=100, deadline=None)
def test_result_passes_and_neighbour_fails(scale_bound: float, d_out: float) -> None:
    # a monotone predicate whose boundary is not a representable "nice" number
    def predicate(scale: float) -> bool:
        return scale > 0 and 1.0 / scale <= d_out

    found = dp.binary_search(predicate)
    assert predicate(found)
    assert not predicate(math.nextafter(found, 0.0))


@given(st.integers(min_value=-(2**62), max_value=2**62))
@settings(max_examples=100, deadline=None)
def test_int_boundary(boundary: int) -> None:
    assert dp.binary_search(lambda x: x >= boundary, T=int) == boundary
    assert dp.binary_search(lambda x: x < boundary, T=int) == boundary - 1


def test_opendp_documented_examples() -> None:
    assert dp.binary_search(lambda x: x >= 5.0) == 5.0
    assert dp.binary_search(lambda x: x <= 5.0) == 5.0
    assert dp.binary_search(lambda x: x > 5, T=int) == 6
    assert dp.binary_search(lambda x: x < 5, T=int) == 4
    assert dp.binary_search(lambda x: x <= 5, bounds=(0, None)) == 5
    assert dp.binary_search(lambda x: x >= 5.0, return_sign=True) == (5.0, 1)
    assert dp.binary_search(lambda x: x <= 5.0, return_sign=True) == (5.0, -1)


def test_bounds_semantics_and_errors() -> None:
    assert dp.binary_search(lambda x: x >= 5.0, bounds=(10.0, 0.0)) == 5.0  # sorted
    assert dp.binary_search(lambda x: x > 5.0, bounds=(5.0, 10.0)) == math.nextafter(5.0, 6.0)
    with pytest.raises(ValueError, match="outside the bounds"):
        dp.binary_search(lambda x: x >= 5.0, bounds=(0.0, 1.0))
    with pytest.raises(ValueError, match="outside the bounds"):
        dp.binary_search(lambda x: x >= 5.0, bounds=(5.0, 10.0))
    with pytest.raises(ValueError, match="unable to infer bounds"):
        dp.binary_search(lambda x: True)
    with pytest.raises(ValueError, match="exactly two"):
        dp.binary_search(lambda x: x >= 5, bounds=(0, 1, 2))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="same type"):
        dp.binary_search(lambda x: x > 1, bounds=(0, 2.0))
    with pytest.raises(TypeError):
        dp.binary_search(lambda x: x >= 5, T=str)


def test_type_inference() -> None:
    assert dp.binary_search(lambda x: [1, 2, 3][x] > 1) == 1  # floats raise TypeError -> int
    assert isinstance(dp.binary_search(lambda x: x >= 3), float)


def test_recovers_from_a_raising_region() -> None:
    def predicate(x: float) -> bool:
        if x < 1:
            raise ValueError("undefined below 1")
        return x >= 7.0

    assert dp.binary_search(predicate) == 7.0
    found = dp.binary_search(lambda x: 1 / x < 0.3)  # raises ZeroDivisionError at 0
    assert 1 / found < 0.3
    assert not 1 / math.nextafter(found, 0.0) < 0.3


def test_binary_search_param_and_chain() -> None:
    dp.enable_features("honest-but-curious")
    space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)

    def make(scale: float) -> Any:
        return dp.m.make_user_measurement(
            *space, dp.max_divergence(), lambda x: x, lambda d: d / scale
        )

    scale = dp.binary_search_param(make, d_in=0.1, d_out=1.0)
    assert scale == 0.1
    assert make(scale).check(0.1, 1.0)
    assert not make(math.nextafter(scale, 0.0)).check(0.1, 1.0)
    chain = dp.binary_search_chain(make, d_in=1.0, d_out=0.3, bounds=(0.01, 100.0))
    assert chain.check(1.0, 0.3)
    n = dp.binary_search_param(lambda k: make(float(k)), d_in=7.0, d_out=1.0, T=int)
    assert n == 7


def test_agrees_with_opendp() -> None:
    odp = pytest.importorskip("opendp.prelude")
    cases: list[tuple[Any, dict[str, Any]]] = [
        (lambda x: x >= 5.0, {}),
        (lambda x: x <= 5.0, {}),
        (lambda x: x >= -5.5, {}),
        (lambda x: x >= 1e-30, {}),
        (lambda x: x * x >= 2.0, {"bounds": (0.0, 10.0)}),
        (lambda x: x > 5, {"T": int}),
        (lambda x: x <= 123456, {"bounds": (0, None)}),
        (lambda x: 1 / x < 0.3, {}),
    ]
    for predicate, kwargs in cases:
        assert dp.binary_search(predicate, **kwargs) == odp.binary_search(predicate, **kwargs)
