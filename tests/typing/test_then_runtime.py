"""The typed then_* partials are plain partials at run time: ``_after(left)`` is ``left >> p``."""

from __future__ import annotations

from typing import Any, cast

import pytest

import opendp_lite.core as core
import opendp_lite.prelude as dp
from opendp_lite.core import PartialMeasurement, PartialTransformation
from opendp_lite.errors import OpenDPLiteError, OpenDPLiteWarning
from opendp_lite.samplers import rng


def _fvec() -> tuple[Any, Any]:
    return dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()


def test_partials_keep_their_runtime_classes() -> None:
    assert isinstance(dp.t.then_sum(), PartialTransformation)
    assert isinstance(dp.t.then_count(), PartialTransformation)
    for p in (dp.m.then_laplace(1.0), dp.m.then_gaussian(1.0), dp.m.then_geometric(1.0)):
        assert isinstance(p, PartialMeasurement)


def test_after_is_the_ordinary_chain() -> None:
    clamp = _fvec() >> dp.t.then_clamp((0.0, 10.0))
    via_after = cast(Any, dp.t.then_sum())._after(clamp)
    via_rshift = clamp >> dp.t.then_sum()
    data = [1.0, 2.5, 12.0]
    assert via_after(data) == via_rshift(data) == 13.5
    assert via_after.map(1) == via_rshift.map(1)
    assert via_after.output_domain == via_rshift.output_domain
    lap = dp.m.then_laplace(2.0)
    m_after, m_rshift = cast(Any, lap)._after(via_rshift), via_rshift >> lap
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
    fspace = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
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
    space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
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
        dp.m.then_laplace(1.0, scael=2.0)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        dp.t.then_sum(1)  # type: ignore[call-arg]
    assert isinstance(dp.t.then_clamp(bounds=(0, 1)), PartialTransformation)


def _converted_cases() -> list[tuple[str, Any, Any, Any, list[Any]]]:
    """(name, space, then_x partial, make_x(*space) thunk, distances) for the partials derived
    after the frames/grouped/missing-api merges."""
    from opendp_lite.measurements.threshold import l01inf_distance

    # built at collection: the user measurement needs the feature, which must not outlive this
    saved = set(core._FEATURES)
    dp.enable_features("honest-but-curious")
    try:
        return _build_converted_cases(l01inf_distance)
    finally:
        core._FEATURES.clear()
        core._FEATURES.update(saved)


def _build_converted_cases(l01inf_distance: Any) -> list[tuple[str, Any, Any, Any, list[Any]]]:
    frame = dp.dataframe_domain(), dp.symmetric_distance()
    part = dp.t.make_partition_by(*frame, by="g", keys=["a", "b"])
    ppart = dp.t.make_partition_by(*frame, by="g")
    inner = dp.t.make_select_column("x", TOA=float) >> dp.t.then_count() >> dp.m.then_laplace(2.0)
    fmap = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=float, nan=False))
    fthr = fmap, l01inf_distance(dp.absolute_distance(T=float))
    iscalar = dp.atom_domain(T=int), dp.absolute_distance(T=int)
    apx = dp.approximate(dp.max_divergence())
    trip = [(0, 0, 0), (1, 1, 1), (2, 3, 2)]
    return [
        (
            "filter_rows",
            frame,
            dp.t.then_filter_rows("x", "<", 2.0),
            dp.t.make_filter_rows(*frame, "x", "<", 2.0),
            [0, 2],
        ),
        (
            "partition_by",
            frame,
            dp.t.then_partition_by("g", ["a", "b"]),
            dp.t.make_partition_by(*frame, "g", ["a", "b"]),
            [0, 2],
        ),
        (
            "grouped_count",
            part.output_space,
            dp.t.then_grouped_count(2),
            dp.t.make_grouped_count(*part.output_space, 2),
            trip,
        ),
        (
            "grouped_sum",
            part.output_space,
            dp.t.then_grouped_sum("x", (0.0, 5.0)),
            dp.t.make_grouped_sum(*part.output_space, "x", (0.0, 5.0)),
            trip,
        ),
        (
            "grouped",
            ppart.output_space,
            dp.c.then_grouped(inner, threshold=2, threshold_scale=1.0),
            dp.c.make_grouped(*ppart.output_space, inner, 2, 1.0),
            trip,
        ),
        (
            "noise",
            iscalar,
            dp.m.then_noise(dp.zero_concentrated_divergence(), 1.5),
            dp.m.make_noise(*iscalar, dp.zero_concentrated_divergence(), 1.5),
            [0, 3],
        ),
        (
            "noise_threshold",
            fthr,
            dp.m.then_noise_threshold(apx, 2.0, 10.0),
            dp.m.make_noise_threshold(*fthr, apx, 2.0, 10.0),
            trip,
        ),
        (
            "user_measurement",
            iscalar,
            dp.m.then_user_measurement(dp.max_divergence(), lambda x: x + 1, lambda d: 0.5 * d),
            dp.m.make_user_measurement(
                *iscalar, dp.max_divergence(), lambda x: x + 1, lambda d: 0.5 * d
            ),
            [0, 3],
        ),
    ]


@pytest.mark.parametrize("case", _converted_cases(), ids=lambda c: c[0])
def test_converted_partials_build_what_their_make_builds(case: Any) -> None:
    name, space, partial, made, distances = case
    dp.enable_features("honest-but-curious")  # the user measurement's partial builds here
    built = space >> partial
    assert type(built) is type(made)
    assert repr(built.output_domain if hasattr(built, "output_domain") else None) == repr(
        made.output_domain if hasattr(made, "output_domain") else None
    )
    assert [built.map(d) for d in distances] == [made.map(d) for d in distances]
    data: dict[str, Any] = {
        "filter_rows": {"x": [1.0, 3.0], "g": ["a", "b"]},
        "partition_by": {"g": ["a", "c", "b"], "x": [1.0, 2.0, 3.0]},
        "noise": 4,
        "user_measurement": 4,
        "noise_threshold": {"a": 50.5, "b": 1.0},
    }
    frame = {"g": ["a", "a", "b", "c"], "x": [1.0, 2.0, 6.0, 0.5]}
    x = data.get(name) or space[0]._normalize(
        dp.t.make_partition_by(dp.dataframe_domain(), dp.symmetric_distance(), "g", space[0].keys)(
            frame
        )
    )
    with rng.scripted_randomness(seed=name.encode()):
        a = built(x)
    with rng.scripted_randomness(seed=name.encode()):
        b = made(x)
    assert _plain(a) == _plain(b)


def _plain(v: Any) -> Any:
    """A comparable picture of a release: arrays as lists, partitions group by group."""
    if hasattr(v, "keys_"):
        return {k: {c: list(col) for c, col in v[k].items()} for k in v}
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v.tolist() if hasattr(v, "tolist") else v


def test_then_and_measured_refuse_a_constructor_of_the_other_kind() -> None:
    from opendp_lite._spine import measured, then

    with pytest.raises(TypeError, match="must be annotated to return a Transformation"):
        then(cast(Any, dp.m.make_laplace))
    with pytest.raises(TypeError, match="must be annotated to return a Measurement"):
        measured(cast(Any, dp.t.make_clamp))
    assert isinstance(then(dp.t.make_clamp)((0, 1)), PartialTransformation)
    assert isinstance(measured(dp.m.make_canonical_noise)(1.0, (0.5, 1e-6)), PartialMeasurement)
