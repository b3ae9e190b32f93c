"""A noise scale of 0 has an infinite privacy loss: ``map`` raises ``InfiniteLoss`` (a
``FailedMap``), ``check`` answers ``False``, and a parameter search whose bounds include 0
moves past it, as OpenDP's infinite loss lets it (OpenDP's preprocess-resize guide page)."""

from __future__ import annotations

import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import FailedMap, InfiniteLoss

SPACE = dp.vector_domain(dp.atom_domain(bounds=(0.0, 100.0)), size=100), dp.symmetric_distance()


@pytest.mark.parametrize("then_noise", [dp.m.then_laplace, dp.m.then_gaussian])
def test_scale_zero_map_raises_and_check_is_false(then_noise: object) -> None:
    meas = SPACE >> dp.t.then_mean() >> then_noise(scale=0.0)  # type: ignore[operator]
    with pytest.raises(InfiniteLoss, match="infinite"):
        meas.map(1)
    assert issubclass(InfiniteLoss, FailedMap)
    assert meas.check(1, 1.0) is False


def test_search_from_a_zero_scale_bound_finds_the_smallest_scale() -> None:
    mean = SPACE >> dp.t.then_mean()
    meas = dp.binary_search_chain(
        lambda s: mean >> dp.m.then_laplace(scale=s), d_in=1, d_out=1.0, bounds=(0.0, 10.0)
    )
    scale = meas.map(1)
    assert scale <= 1.0
    param = dp.binary_search_param(
        lambda s: mean >> dp.m.then_laplace(scale=s), d_in=1, d_out=1.0, bounds=(0.0, 10.0)
    )
    assert param > 0 and (mean >> dp.m.then_laplace(scale=param)).check(1, 1.0)
