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


def _partials() -> list[tuple[str, Any, Any]]:
    out = []
    for ns in ("t", "m", "c"):
        mod = getattr(dp, ns)
        for name in sorted(dir(mod)):
            if name.startswith("then_"):
                out.append((name, getattr(mod, name), getattr(mod, "make_" + name[5:])))
    return out


@pytest.mark.parametrize(
    ("name", "then", "make"), _partials(), ids=lambda v: getattr(v, "__name__", v)
)
def test_derived_partials_carry_the_makes_metadata(name: str, then: Any, make: Any) -> None:
    import inspect

    assert then.__name__ == name
    assert then.__module__ == make.__module__
    assert then.__doc__.startswith(f"Partial of :func:`{make.__name__}`")
    assert (inspect.getdoc(make) or "").split("\n")[0] in then.__doc__  # the make's summary
    made = list(inspect.signature(make).parameters.values())[2:]
    assert list(inspect.signature(then).parameters.values()) == made


def test_compositor_partials_build_on_the_space() -> None:
    # (the examples formerly in the then_* docstrings)
    space = dp.atom_domain(T=float), dp.absolute_distance(T=float)
    adaptive = space >> dp.c.then_adaptive_composition(dp.max_divergence(), 1.0, [0.5, 0.25])
    assert adaptive.map(1.0) == 0.75
    sequential = space >> dp.c.then_sequential_composition(dp.max_divergence(), 1.0, [0.5])
    assert sequential.map(1.0) == 0.5
    odometer = space >> dp.c.then_fully_adaptive_composition(dp.max_divergence())
    assert type(odometer).__name__ == "Odometer"
    assert odometer.input_domain == space[0] and odometer.output_measure == dp.max_divergence()
    with pytest.raises(TypeError):
        (_fvec() >> dp.t.then_clamp((0.0, 1.0))) >> dp.c.then_fully_adaptive_composition(  # type: ignore[operator]
            dp.max_divergence()
        )


def test_pattern_partials_refuse_a_bad_left_side() -> None:
    with pytest.raises(TypeError, match="domain, metric"):
        "not a space" >> dp.t.then_resize(2, 0)  # type: ignore[operator]
    with pytest.raises(TypeError, match="domain, metric"):
        "not a space" >> dp.m.then_sparse_vector(1, 1, 0.0, 1.0, 1.0)  # type: ignore[operator]


def test_a_wrong_call_of_a_partial_fails_at_once() -> None:
    # as when then_x was a def: missing, unknown or surplus arguments raise at the call
    with pytest.raises(TypeError):
        dp.t.then_clamp()  # type: ignore[call-overload]
    with pytest.raises(TypeError):
        dp.m.then_laplace(1.0, scael=2.0)  # type: ignore[call-overload]
    with pytest.raises(TypeError):
        dp.t.then_sum(1)  # type: ignore[call-overload]
    assert isinstance(dp.t.then_clamp(bounds=(0, 1)), PartialTransformation)
