"""Lattice / porosity (Mironov 2012): the outputs of M(x) and M(x′) live on the same support.

Attack family: textbook float Laplace ``x + b·ln(u)`` can only produce certain floats, and
which ones depends on ``x``: an output that ``M(x′)`` can never produce identifies ``x``
with certainty (an infinite privacy loss).  opendp_lite noises on the grid 2^k·ℤ with exact
integer noise, so for a coarse ``k`` every output is a multiple of 2^k whatever the input,
and at the default ``k`` the output is a rounding of the exact noisy value (post-processing).

The naive control is numpy's float Laplace: for ``x = 0`` it produces, in (0, 0.05), floats
whose lowest set bit is below 2^−58, which ``x′ = 0.1`` never produces (``0.1 + n`` is then
computed exactly by Sterbenz's lemma and is a multiple of 2^−56).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite.audit import _granularity

F64 = (dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float))
N_SUPPORT = 4000  # per input; the rarest window point has probability > 1%: miss < e^-40
N_POROUS = 20_000


def _draws(meas: Any, x: Any, n: int) -> np.ndarray:
    return np.array([meas(x) for _ in range(n)], dtype=np.float64)


def _on_grid(y: np.ndarray, k: int) -> bool:
    return all(
        Fraction(float(v)) / Fraction(2) ** k == int(Fraction(float(v)) / Fraction(2) ** k)
        for v in y
    )


@pytest.mark.parametrize("k", [-3, 0, 2])
@pytest.mark.parametrize("mech", ["laplace", "gaussian"])
def test_coarse_k_outputs_are_multiples_of_2k(k: int, mech: str) -> None:
    make = dp.m.make_laplace if mech == "laplace" else dp.m.make_gaussian
    meas = make(*F64, scale=1.0, k=k)
    for x in (0.3, 1.3, -7.123, 1e6 + 0.1):
        assert _on_grid(_draws(meas, x, 300), k)


def test_coarse_k_vector_outputs_are_multiples_of_2k() -> None:
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=50), dp.l1_distance(T=float)
    meas = dp.m.make_laplace(*space, scale=1.0, k=-4)
    assert _on_grid(meas(np.linspace(-3.3, 3.3, 50)), -4)


def test_naive_numpy_outputs_are_off_the_grid() -> None:
    gen = np.random.default_rng()  # the control only
    y = 0.3 + gen.laplace(0.0, 1.0, 300)
    assert not _on_grid(y, -3)


def test_same_support_for_neighbours_at_coarse_k() -> None:
    # every output of both lies on 2^-2·ℤ, and both hit every grid point in [-1, 2.5]:
    # the two supports coincide there (no output identifies the input)
    k = -2
    meas = dp.m.make_laplace(*F64, scale=1.0, k=k)
    a, b = _draws(meas, 0.3, N_SUPPORT), _draws(meas, 1.3, N_SUPPORT)
    assert _on_grid(a, k) and _on_grid(b, k)
    window = {v * 0.25 for v in range(-4, 11)}
    assert window <= set(a.tolist()) and window <= set(b.tolist())


def _porous_event(y: np.ndarray) -> int:
    """Outputs in (0, 0.05) whose lowest set bit is below 2^-58."""
    w = y[(y > 0) & (y < 0.05)]
    return int(np.count_nonzero(_granularity(w) <= -58))


def test_naive_numpy_laplace_is_porous() -> None:
    gen = np.random.default_rng()  # the control only
    from_0 = _porous_event(0.0 + gen.laplace(0.0, 1.0, N_POROUS))
    from_01 = _porous_event(0.1 + gen.laplace(0.0, 1.0, N_POROUS))
    assert from_01 == 0  # impossible from x′ = 0.1 ...
    assert from_0 > 50  # ... yet about 1% of releases from x = 0: they identify x


def test_opendp_lite_laplace_is_not_porous() -> None:
    # The same event at the default k: both inputs produce it, at rates within e^±ε (ε = 1;
    # 0.5 of slack covers sampling error at ~200 hits each, > 6 standard deviations).
    meas = dp.m.make_laplace(*F64, scale=1.0)
    from_0 = _porous_event(_draws(meas, 0.0, N_POROUS))
    from_01 = _porous_event(_draws(meas, 0.1, N_POROUS))
    assert from_0 > 50 and from_01 > 50
    assert np.exp(-1.5) < from_0 / from_01 < np.exp(1.5)
