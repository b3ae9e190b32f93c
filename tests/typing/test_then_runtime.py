"""The typed then_* partials are plain partials at run time: ``_after(left)`` is ``left >> p``."""

from __future__ import annotations

from typing import Any

import pytest

import opendp_lite.prelude as dp
from opendp_lite.core import PartialMeasurement, PartialTransformation
from opendp_lite.errors import OpenDPLiteError, OpenDPLiteWarning
from opendp_lite.samplers import rng


def _fvec() -> tuple[Any, Any]:
    return dp.vector_domain(dp.atom_domain(T=float)), dp.symmetric_distance()


def test_partials_keep_their_runtime_classes() -> None:
    assert isinstance(dp.t.then_sum(), PartialTransformation)
    assert isinstance(dp.t.then_count(), PartialTransformation)
    for p in (dp.m.then_laplace(1.0), dp.m.then_gaussian(1.0), dp.m.then_geometric(1.0)):
        assert isinstance(p, PartialMeasurement)


def test_after_is_the_ordinary_chain() -> None:
    clamp = _fvec() >> dp.t.then_clamp((0.0, 10.0))
    via_after = dp.t.then_sum()._after(clamp)
    via_rshift = clamp >> dp.t.then_sum()
    data = [1.0, 2.5, 12.0]
    assert via_after(data) == via_rshift(data) == 13.5
    assert via_after.map(1) == via_rshift.map(1)
    assert via_after.output_domain == via_rshift.output_domain
    lap = dp.m.then_laplace(2.0)
    m_after, m_rshift = lap._after(via_rshift), via_rshift >> lap
    assert m_after.map(1) == m_rshift.map(1) == via_rshift.map(1) / 2.0
    with pytest.warns(OpenDPLiteWarning), rng.scripted_randomness(seed=b"then"):
        a = m_after(data)
    with pytest.warns(OpenDPLiteWarning), rng.scripted_randomness(seed=b"then"):
        b = m_rshift(data)
    assert a == b


def test_space_form_and_runtime_errors_unchanged() -> None:
    ivec = dp.vector_domain(dp.atom_domain(bounds=(0, 10))), dp.symmetric_distance()
    count = ivec >> dp.t.then_count()
    assert count([1, 2, 3]) == 3 and count.map(2) == 2
    isum = ivec >> dp.t.then_sum()
    assert isum([1, 2, 3]) == 6
    strs = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
    with pytest.raises(OpenDPLiteError):
        strs >> dp.t.then_sum()  # type: ignore[operator]  # also rejected at run time
    fspace = dp.atom_domain(T=float), dp.absolute_distance(T=float)
    with pytest.raises(OpenDPLiteError):
        fspace >> dp.m.then_geometric(1.0)  # type: ignore[operator]


def test_partial_then_next_is_associative() -> None:
    clamp = _fvec() >> dp.t.then_clamp((0.0, 10.0))
    lap = dp.m.make_laplace(*dp.t.make_sum(*clamp.output_space).output_space, scale=1.0)
    left, right = (clamp >> dp.t.then_sum()) >> lap, clamp >> (dp.t.then_sum() >> lap)
    assert left.map(1) == right.map(1)
    direct = dp.t.then_count()(*clamp.output_space)
    assert direct([1.0, 2.0]) == 2
