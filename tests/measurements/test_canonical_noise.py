"""Canonical noise: map (OpenDP 0.16 parity), exact Tulap constants, rounding, typed errors."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import gmpy2
import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import FailedMap, InvalidParameter, MetricMismatch, NotImplementedForType
from opendp_lite.samplers.tulap import _Tulap

SPACE = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)


def _opendp() -> Any:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    return odp


@pytest.mark.parametrize("d_out", [(1.0, 1e-6), (0.5, 0.0), (2.0, 0.3), (1.0, 1.0)])
@pytest.mark.parametrize("d_in", [0.5, 1.0, 3.0])
def test_map_matches_opendp(d_out: tuple[float, float], d_in: float) -> None:
    odp = _opendp()
    theirs = odp.m.make_canonical_noise(
        odp.atom_domain(T=float, nan=False),
        odp.absolute_distance(T=float),
        d_in=d_in,
        d_out=d_out,
    )
    ours = dp.m.make_canonical_noise(*SPACE, d_in=d_in, d_out=d_out)
    for d in (0.0, d_in / 2, d_in):
        assert ours.map(d) == tuple(theirs.map(d))
    with pytest.raises(FailedMap):
        ours.map(d_in * 2 + 1)


@pytest.mark.parametrize(
    ("eps", "delta"),
    [(1.0, 1e-6), (1.0, 0.01), (0.1, 1e-6), (5.0, 0.3), (0.001, 1e-9), (3.0, 0.999)],
)
def test_quantile_cell_and_fraction_are_exact(eps: float, delta: float) -> None:
    law = _Tulap(Fraction(eps), Fraction(delta))
    f_lo, f_hi = law.frac_bounds(200)
    with gmpy2.context(precision=600):
        b = gmpy2.exp(-gmpy2.mpfr(gmpy2.mpq(eps)))
        d = gmpy2.mpfr(gmpy2.mpq(delta))
        q = 2 * d * b / (1 - b + 2 * d * b)
        # the lower quantile t solves F(t) = q/2 in the cell of K = −j
        target = q * (1 + b) / 2
        assert b ** (law.j + 1) <= target < b**law.j
        frac = (target / b**law.j - b) / (1 - b)
        assert gmpy2.mpq(f_lo.numerator, f_lo.denominator) <= frac
        assert frac <= gmpy2.mpq(f_hi.numerator, f_hi.denominator)
    assert f_hi - f_lo < Fraction(1, 2**150)


def test_output_is_the_input_when_no_noise() -> None:
    m = dp.m.make_canonical_noise(*SPACE, d_in=0.0, d_out=(1.0, 0.1))
    assert m(3.25) == 3.25
    big = dp.m.make_canonical_noise(*SPACE, d_in=1.0, d_out=(1.0, 0.1))
    assert big(math.inf) == math.inf
    assert math.isfinite(big(1.7976931348623157e308))


def test_delta_one_is_uniform_on_the_central_cell() -> None:
    m = dp.m.make_canonical_noise(*SPACE, d_in=1.0, d_out=(1.0, 1.0))
    assert all(-0.5 <= m(0.0) <= 0.5 for _ in range(200))


def test_truncation_support() -> None:
    eps, delta = 2.0, 0.2
    law = _Tulap(Fraction(eps), Fraction(delta))
    bound = law.j + 0.5
    m = dp.m.make_canonical_noise(*SPACE, d_in=1.0, d_out=(eps, delta))
    assert all(abs(m(0.0)) <= bound for _ in range(500))


def test_typed_errors() -> None:
    mk = dp.m.make_canonical_noise
    with pytest.raises(NotImplementedForType):
        mk(dp.atom_domain(T=int), dp.absolute_distance(T=int), d_in=1.0, d_out=(1.0, 0.0))  # type: ignore[arg-type]
    with pytest.raises(NotImplementedForType):
        mk(dp.atom_domain(T="f32"), dp.absolute_distance(T="f32"), d_in=1.0, d_out=(1.0, 0.0))  # type: ignore[arg-type]
    with pytest.raises(MetricMismatch):
        mk(SPACE[0], dp.l1_distance(T=float), d_in=1.0, d_out=(1.0, 0.0))
    for d_out in [(0.0, 0.1), (-1.0, 0.1), (float("inf"), 0.1), (1.0, 1.5), (1.0, -0.1), (1.0,)]:
        with pytest.raises(InvalidParameter):
            mk(*SPACE, d_in=1.0, d_out=d_out)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameter, match="d_in"):
        mk(*SPACE, d_in=-1.0, d_out=(1.0, 0.0))
