"""The core algebra: construction, invocation, maps, chaining errors, queryables, features."""

from __future__ import annotations

import copy
import math
import pickle
import threading
import warnings

import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import (
    DomainMismatch,
    FailedMap,
    FeatureNotEnabled,
    MetricMismatch,
    NotInDomain,
    OpenDPLiteError,
    QueryableError,
)
from opendp_lite.samplers import rng

ISPACE = dp.atom_domain(T=int), dp.absolute_distance(T=int)
FSPACE = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)


@pytest.fixture(autouse=True)
def _trusted() -> None:
    dp.enable_features("honest-but-curious")


def ident(space: tuple[object, object] = ISPACE) -> dp.Transformation:  # type: ignore[type-arg]
    return dp.t.make_user_transformation(*space, *space, lambda x: x, lambda d: d)  # type: ignore[arg-type]


def test_user_constructors_need_the_feature() -> None:
    dp.disable_features("honest-but-curious")
    with pytest.raises(FeatureNotEnabled, match="honest-but-curious"):
        ident()


def test_mismatched_domains_fail_with_both_sides_named() -> None:
    with pytest.raises(DomainMismatch) as info:
        ident(ISPACE) >> ident(FSPACE)
    msg = str(info.value)
    assert "AtomDomain(T=i32)" in msg and "AtomDomain(T=f64)" in msg
    assert info.value.left == dp.atom_domain(T=int)
    assert info.value.right == dp.atom_domain(T=float, nan=False)
    assert isinstance(info.value, ValueError) and isinstance(info.value, OpenDPLiteError)


def test_mismatched_metrics_fail_with_both_sides_named() -> None:
    other = dp.atom_domain(T=int), dp.l1_distance(T=int)
    with pytest.raises(MetricMismatch) as info:
        ident(ISPACE) >> ident(other)
    assert "AbsoluteDistance(i32)" in str(info.value) and "L1Distance(i32)" in str(info.value)


def test_bounds_are_part_of_domain_equality() -> None:
    bounded = dp.atom_domain(bounds=(0, 10)), dp.absolute_distance(T=int)
    with pytest.raises(DomainMismatch):
        ident(ISPACE) >> ident(bounded)


def test_partial_constructors_chain_from_a_space() -> None:
    partial = dp.PartialTransformation(
        lambda d, m: dp.t.make_user_transformation(d, m, d, m, lambda x: x * 3, lambda d_: 3 * d_)
    )
    t = ISPACE >> partial
    assert t(2) == 6 and t.map(1) == 3
    assert (ident() >> partial).map(2) == 6
    with pytest.raises(TypeError, match="domain, metric"):
        (1, 2) >> partial  # type: ignore[operator]


def test_measurement_postprocessing() -> None:
    m = dp.m.make_user_measurement(*ISPACE, dp.max_divergence(), lambda x: x + 1, lambda d: 0.5 * d)
    post = m >> (lambda y: -y)
    assert post(1) == -2 and post.map(2) == 1.0
    # as in OpenDP, a transformation after a measurement post-processes with its function
    assert (m >> ident())(1) == 2 and (m >> ident()).map(2) == 1.0
    with pytest.raises(TypeError, match="post-processing"):
        m >> m  # type: ignore[deprecated]


def test_invoke_rejects_non_members_before_any_randomness() -> None:
    calls: list[int] = []

    def source(n: int) -> bytes:
        calls.append(n)
        return bytes(n)

    def noisy(x: float) -> float:
        return x + rng.fill_bytes(1)[0]

    m = dp.m.make_user_measurement(*FSPACE, dp.max_divergence(), noisy, lambda d: d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with rng.scripted_randomness(source):
            for bad in [float("nan"), "1.0", [1.0], None]:
                with pytest.raises(NotInDomain):
                    m(bad)  # type: ignore[arg-type]
            assert calls == []
            assert m(1.0) == 1.0
            assert calls == [1]


def test_scalar_passed_to_vector_measurement_is_a_type_error() -> None:
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float)
    m = dp.m.make_user_measurement(*space, dp.max_divergence(), lambda x: x, lambda d: d)
    with pytest.raises(TypeError, match="expected Vec<f64>"):
        m(1.0)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [-1, -0.5, math.nan, math.inf, "1", None, True])
def test_maps_reject_bad_distances(bad: object) -> None:
    m = dp.m.make_user_measurement(*FSPACE, dp.max_divergence(), lambda x: x, lambda d: d)
    with pytest.raises(FailedMap):
        m.map(bad)  # type: ignore[arg-type]


def test_integer_metrics_reject_fractional_distances() -> None:
    with pytest.raises(FailedMap, match="integer"):
        ident().map(0.5)  # type: ignore[arg-type]
    assert ident().map(2.0) == 2  # type: ignore[arg-type]


@pytest.mark.parametrize("result", [math.nan, -1.0, math.inf, "x"])
def test_a_map_returning_garbage_fails(result: object) -> None:
    m = dp.m.make_user_measurement(*FSPACE, dp.max_divergence(), lambda x: x, lambda d: result)
    with pytest.raises(FailedMap, match="privacy map returned an invalid value"):
        m.map(1.0)


def test_check_compares_with_the_measure_order() -> None:
    approx = dp.m.make_user_measurement(
        *FSPACE, dp.approximate(dp.max_divergence()), lambda x: x, lambda d: (d, 1e-7)
    )
    assert approx.check(1.0, (1.0, 1e-6))
    assert not approx.check(1.0, (0.99, 1e-6))
    assert not approx.check(1.0, (1.0, 1e-8))
    with pytest.raises(FailedMap):
        approx.check(1.0, (1.0, 2.0))


def test_queryable_serialises_and_refuses_reentrancy_and_copies() -> None:
    state = {"n": 0}

    def transition(q: int) -> int:
        state["n"] += q
        return state["n"]

    qbl = dp.new_queryable(transition)
    threads = [threading.Thread(target=lambda: [qbl(1) for _ in range(200)]) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert state["n"] == 1600

    holder: dict[str, dp.Queryable[int, int]] = {}
    holder["q"] = dp.new_queryable(lambda q: holder["q"](q))
    with pytest.raises(QueryableError, match="re-entrant"):
        holder["q"](1)

    for clone in (copy.copy, copy.deepcopy, pickle.dumps):
        with pytest.raises(QueryableError):
            clone(qbl)


def test_features_are_validated() -> None:
    with pytest.raises(FeatureNotEnabled, match="unknown feature"):
        dp.enable_features("no-such-feature")
    dp.enable_features("contrib")
    dp.assert_features("contrib")
    dp.disable_features("contrib")
    with pytest.raises(FeatureNotEnabled):
        dp.assert_features("contrib")


def test_reprs_follow_opendp() -> None:
    m = dp.m.make_user_measurement(*FSPACE, dp.max_divergence(), lambda x: x, lambda d: d)
    assert "input_domain   = AtomDomain(T=f64)" in repr(m)
    assert "output_measure = MaxDivergence)" in repr(m)
    assert (
        repr(dp.vector_domain(dp.atom_domain(T=float, nan=False)))
        == "VectorDomain(AtomDomain(T=f64))"
    )
