"""Sparse vector: map, halting, refused queries release nothing, typed errors, composition."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import FailedMap, FeatureNotEnabled, InvalidParameter, QueryableError
from opendp_lite.transformations.user import make_user_transformation

SPACE = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
TINY = 1e-9  # noise this small never moves an integer comparison with a half-integer threshold


@pytest.fixture(autouse=True)
def _trust() -> None:
    dp.enable_features("honest-but-curious")


def const(v: int, sens: int = 1, space: Any = SPACE, T: str = "i32") -> Any:
    out = dp.atom_domain(T=T, nan=False)
    return make_user_transformation(
        *space, out, dp.absolute_distance(T=T), lambda x: v, lambda d: sens * d
    )


def svt(**kw: Any) -> Any:
    args: dict[str, Any] = dict(
        d_in=1, query_sensitivity=1, threshold=0.5, threshold_scale=TINY, query_scale=TINY
    )
    args.update(kw)
    return dp.m.make_sparse_vector(*SPACE, **args)


@pytest.mark.parametrize("monotonic", [False, True])
@pytest.mark.parametrize("c", [1, 3])
@pytest.mark.parametrize(("b_t", "b_q"), [(1.0, 1.0), (0.3, 7.0), (2.5, 0.1)])
def test_map_formula_rounded_up(monotonic: bool, c: int, b_t: float, b_q: float) -> None:
    m = svt(
        d_in=2,
        query_sensitivity=3,
        threshold_scale=b_t,
        query_scale=b_q,
        max_positives=c,
        monotonic=monotonic,
    )
    factor = 1 if monotonic else 2
    exact = Fraction(3) / Fraction(b_t) + Fraction(factor * c * 3) / Fraction(b_q)
    for d in (1, 2):
        assert Fraction(m.map(d)) >= exact
        assert m.map(d) <= float(exact) * (1 + 2**-51)
    assert m.map(0) == 0.0
    with pytest.raises(FailedMap, match="d_in"):
        m.map(3)


def test_halts_after_c_positives() -> None:
    qbl = svt(max_positives=2)([1])
    assert qbl(const(3)) is True
    assert qbl(const(0)) is False
    assert qbl(const(1)) is True
    with pytest.raises(QueryableError, match="halted"):
        qbl(const(5))
    with pytest.raises(QueryableError, match="halted"):
        qbl(const(-5))


def test_refused_queries_release_nothing_and_spend_nothing() -> None:
    qbl = svt()([1, 2])
    other_space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    float_query = make_user_transformation(
        *SPACE,
        dp.atom_domain(T=float, nan=False),
        dp.absolute_distance(T=float),
        lambda x: 1.0,
        lambda d: d,
    )
    wrong_metric = make_user_transformation(
        *SPACE, dp.atom_domain(T=int), dp.l1_distance(T=int), lambda x: 1, lambda d: d
    )
    for bad in (
        lambda x: 3,
        const(3, sens=2),
        const(3, space=other_space),
        float_query,
        wrong_metric,
    ):
        with pytest.raises(QueryableError):
            qbl(bad)
    # the refused positives did not count: the budget of one positive is intact
    assert qbl(const(3)) is True
    with pytest.raises(QueryableError, match="halted"):
        qbl(const(3))


def test_queries_see_the_data() -> None:
    total = make_user_transformation(
        *SPACE,
        dp.atom_domain(T=int),
        dp.absolute_distance(T=int),
        lambda x: int(x.sum()),
        lambda d: 4 * d,
    )
    m = svt(query_sensitivity=4, threshold=10.5)
    assert m([1, 2, 3])(total) is False
    assert m([5, 6])(total) is True


def test_typed_errors() -> None:
    for kw in (
        dict(query_sensitivity=-1),
        dict(query_sensitivity=1.5),
        dict(max_positives=0),
        dict(max_positives=True),
        dict(threshold_scale=-1.0),
        dict(query_scale=float("nan")),
        dict(threshold=float("inf")),
        dict(threshold="5"),
    ):
        with pytest.raises(InvalidParameter):
            svt(**kw)
    with pytest.raises(FailedMap):
        svt(d_in=-1)
    dp.disable_features("honest-but-curious")
    with pytest.raises(FeatureNotEnabled):
        svt(monotonic=True)


def test_queryable_cannot_be_copied() -> None:
    import copy

    qbl = svt()([1])
    with pytest.raises(QueryableError):
        copy.copy(qbl)


def test_partial() -> None:
    m = SPACE >> dp.m.then_sparse_vector(1, 1, 0.5, 1.0, 1.0)
    assert m.map(1) == 3.0


def test_inside_sequential_composition() -> None:
    comp = dp.c.make_sequential_composition(*SPACE, dp.max_divergence(), d_in=1, d_mids=[3.0, 1.0])
    parent = comp([1, 2, 3])
    child = parent(svt(threshold_scale=1.0, query_scale=1.0))
    assert child(const(100)) is True
    too_expensive = svt(threshold_scale=0.1, query_scale=0.1)
    with pytest.raises(QueryableError):
        parent(too_expensive)


def test_inside_odometer_and_filter() -> None:
    odometer = dp.c.make_fully_adaptive_composition(*SPACE, dp.max_divergence())
    qbl = odometer([1, 2, 3])
    child = qbl(svt(threshold_scale=1.0, query_scale=1.0))
    assert child(const(100)) is True
    assert qbl.privacy_loss(1) == 3.0  # 1/1 + 2·1·1/1
    filt = dp.c.make_privacy_filter(odometer, d_in=1, d_out=5.0)([1, 2, 3])
    filt(svt(threshold_scale=1.0, query_scale=1.0))
    with pytest.raises(QueryableError):
        filt(svt(threshold_scale=1.0, query_scale=1.0))  # 3 + 3 > 5: refused
