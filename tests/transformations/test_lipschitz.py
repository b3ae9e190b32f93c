"""make_lipschitz_float_mul: values, rounding covered by the map, OpenDP comparison, errors."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendp_lite.prelude as dp
from opendp_lite.errors import InvalidParameter, NotImplementedForType, NotInDomain

SPACE = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)


def test_values_and_clamping() -> None:
    t = SPACE >> dp.t.then_lipschitz_float_mul(3.0, (-1.0, 2.0))
    assert (t(5.0), t(1.5), t(-7.0)) == (6.0, 4.5, -3.0)
    neg = SPACE >> dp.t.then_lipschitz_float_mul(-0.5, (0.0, 4.0))
    assert neg(3.0) == -1.5 and neg.map(2.0) >= 1.0


@pytest.mark.parametrize("c", [3.0, 0.1, -2.5, 1e-8, 1e10])
@pytest.mark.parametrize("bounds", [(-1.0, 2.0), (0.0, 1e6)])
def test_map_vs_opendp(c: float, bounds: tuple[float, float]) -> None:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    ours = dp.t.make_lipschitz_float_mul(*SPACE, c, bounds)
    theirs = odp.t.make_lipschitz_float_mul(
        odp.atom_domain(T=float, nan=False), odp.absolute_distance(T=float), c, bounds
    )
    for d in (0.0, 0.5, 1.0, 3.0):
        mine = Fraction(ours.map(d))
        assert mine >= abs(Fraction(c)) * Fraction(d)
        # our relaxation is two half-ulps of |c|·M: at most a few ulps from OpenDP's
        assert (
            mine
            <= Fraction(theirs.map(d)) * (1 + Fraction(1, 2**48))
            + Fraction(abs(c) * max(-bounds[0], bounds[1])) / 2**50
        )


@settings(max_examples=300, deadline=None)
@given(
    c=st.floats(-1e6, 1e6),
    x=st.floats(-10.0, 10.0),
    dx=st.floats(0.0, 5.0),
)
def test_stability_law(c: float, x: float, dx: float) -> None:
    t = dp.t.make_lipschitz_float_mul(*SPACE, c, (-3.0, 7.0))
    x2 = x + dx
    d = abs(Fraction(x2) - Fraction(x))  # the exact input distance of the two floats
    d_in = float(d) if Fraction(float(d)) >= d else float(d) * (1 + 2**-52)
    assert abs(Fraction(t(x)) - Fraction(t(x2))) <= Fraction(t.map(d_in))
    assert t.map(d_in) <= t.map(d_in * 2 + 1)


def test_rounding_relaxation_is_needed() -> None:
    # two inputs 1 ulp apart whose products round 2 ulps apart: |c|·d_in alone is too small
    c = 3.0
    t = dp.t.make_lipschitz_float_mul(*SPACE, c, (0.0, 2.0))
    found = False
    x = 1.0
    for _ in range(200):
        x2 = x + 2**-52
        observed = abs(Fraction(t(x)) - Fraction(t(x2)))
        if observed > Fraction(c) * (Fraction(x2) - Fraction(x)):
            found = True
        assert observed <= Fraction(t.map(x2 - x))
        x = x2
    assert found


def test_errors() -> None:
    with pytest.raises(NotImplementedForType):
        dp.t.make_lipschitz_float_mul(dp.atom_domain(T=float, nan=True), SPACE[1], 2.0, (0.0, 1.0))
    with pytest.raises(NotImplementedForType):
        dp.t.make_lipschitz_float_mul(dp.atom_domain(T=int), SPACE[1], 2.0, (0, 1))
    with pytest.raises(NotImplementedForType):
        dp.t.make_lipschitz_float_mul(SPACE[0], dp.l1_distance(T=float), 2.0, (0.0, 1.0))
    with pytest.raises(InvalidParameter):
        dp.t.make_lipschitz_float_mul(*SPACE, float("inf"), (0.0, 1.0))
    with pytest.raises(InvalidParameter):
        dp.t.make_lipschitz_float_mul(*SPACE, 2.0, (1.0, 0.0))
    with pytest.raises(InvalidParameter, match="overflow"):
        dp.t.make_lipschitz_float_mul(*SPACE, 1e300, (0.0, 1e10))
    t = dp.t.make_lipschitz_float_mul(*SPACE, 2.0, (0.0, 1.0))
    with pytest.raises(NotInDomain):
        t([1.0])
    with pytest.raises(NotInDomain):
        t(float("nan"))
