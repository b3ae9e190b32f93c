"""The ``QO`` loss type: maps are rounded *up* to f32/f64.

Each map is recomputed here in exact rationals from its documented formula, and the expected
value is the least float of type ``QO`` at or above it, found by stepping with numpy's
``nextafter`` and comparing as fractions (independent of the library's rounding helpers).  A map
rounded to nearest or downward to f32 (``make_base_laplace(..., QO="f32")`` stating 0.69999993
for d_in = 0.7 at scale 1) is below the exact loss and fails.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import opendp_lite.prelude as dp

D_INS = [0.7, 0.1, 1 / 3, 1.0, 2.5, 1e-3, 3.0]
SCALES = [1.0, 3.0, 0.7, 10.0, 1.1]
DTYPE = {"f32": np.float32, "f64": np.float64}


def least_at_or_above(x: Fraction, QO: str) -> float:
    """The least finite float of type QO that is >= x (x within range)."""
    dtype = DTYPE[QO]
    v = dtype(float(x))
    inf = dtype(np.inf)
    while Fraction(float(v)) < x:
        v = np.nextafter(v, inf)
    while Fraction(float(np.nextafter(v, -inf))) >= x:
        v = np.nextafter(v, -inf)
    return float(v)


def penalty(k: int | None, n: int, k_min: int = -1074) -> Fraction:
    """n·(2^k − 2^k_min), the documented rounding term of a float input (0 without k)."""
    return Fraction(0) if k is None else n * (Fraction(2) ** k - Fraction(2) ** k_min)


@pytest.mark.parametrize("QO", ["f32", "f64"])
@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("k", [None, -2])
def test_base_laplace_map_is_rounded_up_to_qo(QO: str, scale: float, k: int | None) -> None:
    sp = dp.atom_domain(T=float), dp.absolute_distance(T=float)
    meas = dp.m.make_base_laplace(*sp, scale, k=k, QO=QO)
    for d in D_INS:
        exact = (Fraction(d) + penalty(k, 1)) / Fraction(scale)
        got = meas.map(d)
        assert Fraction(got) >= exact, f"ε({d}) = {got!r} is below the exact {float(exact)!r}"
        assert got == least_at_or_above(exact, QO)


def test_base_laplace_f32_map_at_0_7_is_the_f32_just_above() -> None:
    meas = dp.m.make_base_laplace(
        dp.atom_domain(T=float), dp.absolute_distance(T=float), 1.0, QO="f32"
    )
    got = meas.map(0.7)
    assert Fraction(got) >= Fraction(0.7)
    assert got == float(np.float32(0.70000005))  # the f32 just above 0.7 (0.69999999 is below)


@pytest.mark.parametrize("QO", ["f32", "f64"])
@pytest.mark.parametrize("scale", SCALES)
def test_vector_laplace_with_k_is_rounded_up_to_qo(QO: str, scale: float) -> None:
    sp = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=3), dp.l1_distance(T=float)
    meas = dp.m.make_base_laplace(*sp, scale, k=-3, QO=QO)
    for d in D_INS:
        exact = (Fraction(d) + penalty(-3, 3)) / Fraction(scale)
        assert meas.map(d) == least_at_or_above(exact, QO)


@pytest.mark.parametrize("QO", ["f32", "f64"])
@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("k", [None, -2])
def test_base_gaussian_map_is_rounded_up_to_qo(QO: str, scale: float, k: int | None) -> None:
    sp = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    meas = dp.m.make_base_gaussian(*sp, scale, k=k, QO=QO)
    for d in D_INS:
        exact = (Fraction(d) + penalty(k, 1)) ** 2 / (2 * Fraction(scale) ** 2)
        got = meas.map(d)
        assert Fraction(got) >= exact
        assert got == least_at_or_above(exact, QO)


@pytest.mark.parametrize("QO", ["f32", "f64"])
@pytest.mark.parametrize("scale", SCALES)
def test_discrete_maps_are_rounded_up_to_qo(QO: str, scale: float) -> None:
    sp: Any = dp.atom_domain(T=int), dp.absolute_distance(T=int)
    laplace = dp.m.make_base_discrete_laplace(*sp, scale, QO=QO)
    gaussian = dp.m.make_base_discrete_gaussian(*sp, scale, QO=QO)
    for d in (1, 2, 3, 7):
        assert laplace.map(d) == least_at_or_above(Fraction(d) / Fraction(scale), QO)
        rho = Fraction(d) ** 2 / (2 * Fraction(scale) ** 2)
        assert gaussian.map(d) == least_at_or_above(rho, QO)
