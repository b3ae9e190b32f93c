"""Behaviours of OpenDP 0.16 that code written for it relies on.

Where the behaviour is deterministic, the same snippet runs once with ``import opendp.prelude
as dp`` and once with ``import opendp_lite.prelude as dp`` and both must record the same
results (skipped where OpenDP 0.16 is not installed); the rest checks opendp_lite alone.
"""

from __future__ import annotations

import importlib.util
import textwrap
from typing import Any

import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import NotImplementedForType, NotInDomain

HAVE_OPENDP = importlib.util.find_spec("opendp") is not None


def _run(snippet: str, lib: str) -> list[Any]:
    source = f"import {lib}.prelude as dp\nout = []\n" + textwrap.dedent(snippet)
    namespace: dict[str, Any] = {"__name__": f"behaviour_{lib}"}
    exec(compile(source, f"<behaviour {lib}>", "exec"), namespace)  # noqa: S102
    return namespace["out"]  # type: ignore[no-any-return]


def same_as_opendp(snippet: str) -> list[Any]:
    """Run ``snippet`` with opendp_lite (and OpenDP 0.16 if installed); the ``out`` lists agree."""
    ours = _run(snippet, "opendp_lite")
    if HAVE_OPENDP:
        theirs = _run(snippet, "opendp")
        assert ours == theirs, f"opendp_lite {ours!r} != OpenDP {theirs!r}"
    return ours


# ----------------------------------------------------------------------------------------------
# 1. transformation >> dp.c.then_adaptive_composition(...)

ADAPTIVE_AFTER_TRANSFORMATION = """
dp.enable_features("contrib", "honest-but-curious")
space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
clamp = space >> dp.t.then_clamp((0.0, 10.0))
compositor = clamp >> dp.c.then_adaptive_composition(
    output_measure=dp.max_divergence(), d_in=1, d_mids=[1.0, 2.0])
out.append(type(compositor).__name__)
out.append(compositor.map(1))
queryable = compositor([1.0, 2.0, 20.0])
# a query on the compositor's input space: the clamped data
total = dp.m.make_user_measurement(
    *clamp.output_space, dp.max_divergence(), lambda x: float(sum(x)), lambda d: 0.5 * d)
out.append(queryable(total))
# the same from a partial transformation, given the space afterwards
partial = dp.t.then_clamp((0.0, 10.0)) >> dp.c.then_adaptive_composition(
    output_measure=dp.max_divergence(), d_in=1, d_mids=[0.5])
built = space >> partial
out.append((type(built).__name__, built.map(1), built([4.0, -3.0])(total)))
"""


def test_transformation_then_adaptive_composition_chains() -> None:
    out = same_as_opendp(ADAPTIVE_AFTER_TRANSFORMATION)
    assert out == ["Measurement", 3.0, 13.0, ("Measurement", 0.5, 4.0)]


def test_transformation_then_partial_chain_defers_to_the_partial_chain() -> None:
    from opendp_lite.context import PartialChain

    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    clamp = space >> dp.t.then_clamp((0.0, 10.0))
    chain = clamp >> PartialChain(
        lambda scale: dp.t.make_sum(*clamp.output_space) >> dp.m.then_laplace(scale)
    )
    assert isinstance(chain, PartialChain)
    assert chain(1.0).map(1) == (clamp >> dp.t.then_sum() >> dp.m.then_laplace(1.0)).map(1)


def test_rshift_with_an_unknown_right_side_is_a_type_error() -> None:
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    clamp = space >> dp.t.then_clamp((0.0, 10.0))
    for bad in (3, "sum", None):
        with pytest.raises(TypeError, match="unsupported operand"):
            clamp >> bad  # type: ignore[operator]
        with pytest.raises(TypeError, match="unsupported operand"):
            dp.t.then_clamp((0.0, 10.0)) >> bad  # type: ignore[operator]


def test_an_odometer_after_a_transformation_is_refused_as_in_opendp() -> None:
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    clamp = space >> dp.t.then_clamp((0.0, 10.0))
    with pytest.raises(TypeError, match="Odometer"):
        clamp >> dp.c.then_fully_adaptive_composition(dp.max_divergence())  # type: ignore[operator]


# ----------------------------------------------------------------------------------------------
# 2. measurement >> transformation post-processes with the transformation's function

MEASUREMENT_THEN_TRANSFORMATION = """
dp.enable_features("contrib", "honest-but-curious")
space = dp.atom_domain(T=int), dp.absolute_distance(T=int)
release = dp.m.make_user_measurement(
    *space, dp.max_divergence(), lambda x: x + 1, lambda d: 0.5 * d)
triple = dp.t.make_user_transformation(*space, *space, lambda x: 3 * x, lambda d: 3 * d)
post = release >> triple
out.append((type(post).__name__, post(4), post.map(2)))
# the privacy map is the measurement's (the stability map of the transformation plays no part)
out.append(post.map(2) == release.map(2))
out.append((release >> triple >> triple)(1))
"""


def test_measurement_then_transformation_post_processes() -> None:
    out = same_as_opendp(MEASUREMENT_THEN_TRANSFORMATION)
    assert out == [("Measurement", 15, 1.0), True, 18]


def test_measurement_then_transformation_checks_the_transformations_domain() -> None:
    # stricter than OpenDP: the release is checked against the transformation's input domain
    # (here, a noisy vector leaves the sum's bounds), as every call of a Transformation is
    dp.enable_features("honest-but-curious")
    vec = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    doubled = dp.m.make_user_measurement(
        *vec, dp.max_divergence(), lambda x: [2.0 * v for v in x], lambda d: 1.0 * d
    )
    bounded = dp.vector_domain(dp.atom_domain(bounds=(0.0, 10.0))), dp.symmetric_distance()
    total = doubled >> dp.t.make_sum(*bounded)
    assert total([1.0, 3.0]) == 8.0
    with pytest.raises(NotInDomain):
        total([1.0, 7.0])


def test_measurement_then_measurement_is_still_refused() -> None:
    dp.enable_features("honest-but-curious")
    space = dp.atom_domain(T=int), dp.absolute_distance(T=int)
    m = dp.m.make_user_measurement(*space, dp.max_divergence(), lambda x: x, lambda d: 1.0 * d)
    with pytest.raises(TypeError, match="post-processing"):
        m >> m  # type: ignore[deprecated]
    with pytest.raises(TypeError, match="unsupported operand"):
        m >> 3  # type: ignore[operator]


# ----------------------------------------------------------------------------------------------
# 3. dp.new_queryable(transition) calls transition(query, is_internal)

NEW_QUERYABLE = """
dp.enable_features("contrib")
seen = []

def transition(query, is_internal):
    seen.append((query, is_internal))
    return query * 2

queryable = dp.new_queryable(transition)
out.append((queryable(3), queryable("ab")))
out.append(seen)
out.append(dp.new_queryable(lambda query: query + 1)(1))  # one parameter: the query only
out.append(dp.new_queryable(lambda query, _=None: (query, _))(5))  # a default: both passed
"""


def test_new_queryable_passes_is_internal() -> None:
    out = same_as_opendp(NEW_QUERYABLE)
    assert out == [(6, "abab"), [(3, False), ("ab", False)], 2, (5, False)]


# ----------------------------------------------------------------------------------------------
# 4. make_count_by_categories(..., MO=dp.L1Distance[int]) and OpenDP's other MO spellings

COUNT_BY_CATEGORIES_MO = """
dp.enable_features("contrib")
space = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
spellings = [
    dp.L1Distance[int], dp.L2Distance[int], dp.L1Distance[float], dp.L2Distance[float],
    dp.L1Distance[dp.u32], "L1Distance<i32>", "L2Distance<f64>", "L1Distance<int>",
]
for MO in spellings:
    for TOA in ("int", "float"):
        t = dp.t.make_count_by_categories(*space, ["a", "b"], MO=MO, TOA=TOA)
        counts = [float(c) for c in t(["a", "a", "z"])]
        out.append((str(MO), TOA, str(t.output_metric), t.map(3), type(t.map(3)).__name__, counts))
counts = space >> dp.t.then_count_by_categories(["a", "b"], MO=dp.L1Distance[int])
out.append((counts >> dp.m.then_laplace(1.0)).map(1))
"""


def test_count_by_categories_accepts_opendps_mo_spellings() -> None:
    out = same_as_opendp(COUNT_BY_CATEGORIES_MO)
    # the distance type is the one MO names, whatever the counts' type
    assert out[0] == ("L1Distance<i32>", "int", "L1Distance(i32)", 3, "int", [2.0, 0.0, 1.0])
    assert out[5][:5] == ("L1Distance<f64>", "float", "L1Distance(f64)", 3.0, "float")
    assert out[4][2] == "L1Distance(f64)" and out[4][4] == "float"  # int counts, f64 distance
    assert out[-1] == 1.0


def test_count_by_categories_refuses_other_mo() -> None:
    space = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
    for bad in ("SymmetricDistance", "L1Distance<String>", dp.symmetric_distance()):
        with pytest.raises(NotImplementedForType):
            dp.t.make_count_by_categories(*space, ["a"], MO=bad)


# ----------------------------------------------------------------------------------------------
# 5. dp.binary_search_param over an integer parameter (a dataset size) infers T=int

SEARCH_OVER_A_SIZE = """
dp.enable_features("contrib")

def make_sized_mean(size):
    domain = dp.vector_domain(dp.atom_domain(bounds=(0.0, 10.0)), size=size)
    return (domain, dp.symmetric_distance()) >> dp.t.then_mean() >> dp.m.then_laplace(1.0)

size = dp.binary_search_param(make_sized_mean, d_in=2, d_out=0.5)
out.append((size, type(size).__name__))
out.append(make_sized_mean(size).check(2, 0.5))
out.append(make_sized_mean(size - 1).check(2, 0.5))
"""


def test_binary_search_param_infers_an_integer_size() -> None:
    out = same_as_opendp(SEARCH_OVER_A_SIZE)
    assert out[0][1] == "int" and out[1:] == [True, False]


def test_a_float_size_is_a_type_error_and_an_invalid_parameter() -> None:
    from opendp_lite.errors import InvalidParameter

    space = dp.vector_domain(dp.atom_domain(bounds=(0.0, 10.0))), dp.symmetric_distance()
    for make in (
        lambda: dp.vector_domain(dp.atom_domain(T=float, nan=False), size=3.0),  # type: ignore[arg-type]
        lambda: dp.t.make_resize(*space, size=3.0, constant=0.0),  # type: ignore[arg-type]
    ):
        with pytest.raises(TypeError, match="int"):
            make()
        with pytest.raises(InvalidParameter):
            make()
    # a resize inside the chain: its size is searched over the integers too
    size = dp.binary_search_param(
        lambda n: space >> dp.t.then_resize(size=n, constant=5.0) >> dp.t.then_mean(),
        d_in=2,
        d_out=0.5,
    )
    assert isinstance(size, int)


# ----------------------------------------------------------------------------------------------
# 6. user_distance accepts non-numeric distances (e.g. a timedelta)

USER_DISTANCE_TIMEDELTA = """
from datetime import timedelta
dp.enable_features("contrib", "honest-but-curious")
apart = dp.user_distance("time apart")
domain = dp.atom_domain(T=float, nan=False)
stretch = dp.t.make_user_transformation(
    domain, apart, domain, apart, lambda x: x, lambda d: 2 * d)
out.append(stretch.map(timedelta(hours=1)))
out.append((stretch.check(timedelta(hours=1), timedelta(hours=3)),
            stretch.check(timedelta(hours=1), timedelta(hours=1))))
hourly = dp.m.make_user_measurement(
    domain, apart, dp.max_divergence(), lambda x: x, lambda d: d.total_seconds() / 3600)
out.append(((stretch >> hourly).map(timedelta(minutes=30)), hourly.check(timedelta(hours=2), 2.0)))
"""


def test_user_distance_accepts_a_timedelta() -> None:
    from datetime import timedelta

    out = same_as_opendp(USER_DISTANCE_TIMEDELTA)
    assert out == [timedelta(hours=2), (True, False), (1.0, True)]


def test_numeric_distances_are_still_checked() -> None:
    from opendp_lite.errors import FailedMap

    dp.enable_features("honest-but-curious")
    apart = dp.user_distance("apart")
    domain = dp.atom_domain(T=float, nan=False)
    t = dp.t.make_user_transformation(domain, apart, domain, apart, lambda x: x, lambda d: d)
    for bad in (-1, float("nan"), float("inf"), None, True):
        with pytest.raises(FailedMap):
            t.map(bad)
    with pytest.raises(FailedMap):  # a built-in metric keeps its numeric check
        dp.t.make_user_transformation(
            domain, dp.absolute_distance(T=float), domain, apart, lambda x: x, lambda d: d
        ).map("1.0")
