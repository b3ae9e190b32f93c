"""``make_noise`` / ``then_noise``, written from OpenDP 0.16's documentation: the output measure
picks the distribution (MaxDivergence → Laplace, ZeroConcentratedDivergence → Gaussian) over
``atom_domain`` with ``absolute_distance`` or ``vector_domain`` with an L1/L2 distance; other
measures are refused, and ``k`` applies to floats only."""

from __future__ import annotations

from typing import Any

import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import InvalidParameter, NotImplementedForType, NotInDomain

INT = dp.atom_domain(T=int), dp.absolute_distance(T=int)
FLOAT = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
VEC_L1 = dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int)
VEC_L2 = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float)


@pytest.mark.parametrize("space", [INT, FLOAT, VEC_L1])
def test_max_divergence_is_laplace(space: Any) -> None:
    noise = dp.m.make_noise(*space, dp.max_divergence(), scale=2.0)
    laplace = dp.m.make_laplace(*space, scale=2.0)
    assert noise.output_measure == dp.max_divergence()
    for d in (0, 1, 3):
        assert noise.map(d) == laplace.map(d) == d / 2.0


@pytest.mark.parametrize("space", [INT, FLOAT, VEC_L2])
def test_zero_concentrated_divergence_is_gaussian(space: Any) -> None:
    noise = dp.m.make_noise(*space, dp.zero_concentrated_divergence(), scale=2.0)
    gauss = dp.m.make_gaussian(*space, scale=2.0)
    assert noise.output_measure == dp.zero_concentrated_divergence()
    for d in (0, 1, 3):
        assert noise.map(d) == gauss.map(d) == d * d / 8.0


def test_then_noise_chains_like_opendp() -> None:
    sum_ = (
        dp.vector_domain(dp.atom_domain(bounds=(0, 10))),
        dp.symmetric_distance(),
    ) >> dp.t.then_sum()
    meas = sum_ >> dp.m.then_noise(dp.max_divergence(), scale=10.0)
    assert meas.map(1) == 1.0
    assert isinstance(meas([1, 2, 3]), int)
    zc = sum_ >> dp.m.then_noise(dp.zero_concentrated_divergence(), scale=10.0)
    assert zc.map(1) == 0.5


def test_k_is_the_grid_for_floats_and_refused_for_integers() -> None:
    coarse = dp.m.make_noise(*FLOAT, dp.max_divergence(), scale=1.0, k=0)
    assert coarse.map(0.0) == dp.m.make_laplace(*FLOAT, scale=1.0, k=0).map(0.0) == 1.0
    assert float(coarse(0.5)).is_integer()  # released on the grid 2^0
    with pytest.raises(InvalidParameter):
        dp.m.make_noise(*INT, dp.max_divergence(), scale=1.0, k=2)


@pytest.mark.parametrize(
    "measure",
    [
        dp.approximate(dp.max_divergence()),
        dp.renyi_divergence(),
        dp.smoothed_max_divergence(),
        dp.approximate(dp.zero_concentrated_divergence()),
    ],
)
def test_other_measures_are_refused(measure: Any) -> None:
    with pytest.raises(NotImplementedForType, match="output_measure"):
        dp.m.make_noise(*INT, measure, scale=1.0)


def test_laplace_needs_l1_and_gaussian_l2() -> None:
    with pytest.raises(NotImplementedForType):
        dp.m.make_noise(*VEC_L2, dp.max_divergence(), scale=1.0)
    with pytest.raises(InvalidParameter, match="scale"):
        dp.m.make_noise(*INT, dp.max_divergence(), scale=-1.0)


def test_data_outside_the_domain_is_refused() -> None:
    with pytest.raises(NotInDomain):
        dp.m.make_noise(*FLOAT, dp.max_divergence(), scale=1.0)(float("nan"))


def test_same_maps_as_opendp() -> None:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    for ours_measure, their_measure, metric in (
        (dp.max_divergence(), odp.max_divergence(), "abs"),
        (dp.zero_concentrated_divergence(), odp.zero_concentrated_divergence(), "abs"),
    ):
        ours = dp.m.make_noise(*INT, ours_measure, scale=3.0)
        theirs = odp.m.make_noise(
            odp.atom_domain(T=int), odp.absolute_distance(T=int), their_measure, scale=3.0
        )
        for d in (0, 1, 2, 7):
            assert ours.map(d) == pytest.approx(theirs.map(d), rel=1e-15), metric
