"""Composition: basic, adaptive (fixed budget), fully adaptive (odometer) and filters."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendp_lite.prelude as dp
from opendp_lite.errors import (
    DomainMismatch,
    FailedFunction,
    FailedMap,
    InvalidParameter,
    MeasureMismatch,
    MetricMismatch,
    NotImplementedForType,
    QueryableError,
)

SPACE = (dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float))


def up(exact: Fraction) -> float:
    """The least float >= exact, computed independently of opendp_lite._arith."""
    f = float(exact)
    return f if Fraction(f) >= exact else math.nextafter(f, math.inf)


def fsum_up(*xs: float) -> float:
    return up(sum((Fraction(x) for x in xs), Fraction(0)))


@pytest.fixture(autouse=True)
def _hbc() -> None:
    dp.enable_features("honest-but-curious")


def child(
    loss: Callable[[float], Any],
    measure: Any = None,
    function: Callable[[float], Any] = lambda x: x,
) -> Any:
    return dp.m.make_user_measurement(
        *SPACE, measure if measure is not None else dp.max_divergence(), function, loss
    )


# -- basic composition -----------------------------------------------------------------------


def test_five_tenths_round_up() -> None:
    comp = dp.c.make_composition([child(lambda d: 0.1 * d)] * 5)
    # the exact sum of five float 0.1s is above 0.5, so the map must round up past 0.5
    assert comp.map(1.0) == 0.5000000000000001
    assert comp.check(1.0, 0.5000000000000001)
    assert not comp.check(1.0, 0.5)


@pytest.mark.parametrize(
    ("measure", "loss", "expected"),
    [
        (dp.max_divergence(), 0.25, 0.75),
        (dp.zero_concentrated_divergence(), 0.1, fsum_up(0.1, 0.1, 0.1)),
        (dp.approximate(dp.max_divergence()), (0.25, 1e-7), (0.75, fsum_up(1e-7, 1e-7, 1e-7))),
        (
            dp.approximate(dp.zero_concentrated_divergence()),
            (0.5, 0.5),
            (1.5, 1.0),  # δ sums are capped at 1
        ),
    ],
)
def test_composition_sums_losses(measure: Any, loss: Any, expected: Any) -> None:
    comp = dp.c.make_composition([child(lambda d: loss, measure)] * 3)
    assert comp.output_measure == measure
    assert comp.map(1.0) == expected


def test_renyi_curves_add_pointwise() -> None:
    curve = child(lambda d: lambda alpha: 0.1 * alpha, dp.renyi_divergence())
    total = dp.c.make_composition([curve, curve, curve]).map(1.0)
    assert total(2.0) == 0.6000000000000001  # 3 × 0.2, exact sum rounded up
    assert total(2.0) >= 3 * 0.2


def test_composition_releases_every_child() -> None:
    comp = dp.c.make_composition(
        [child(lambda d: d, function=lambda x, k=k: x + k) for k in range(3)]
    )
    assert comp(1.0) == [1.0, 2.0, 3.0]


def test_composition_rejects_nan_child_map() -> None:
    comp = dp.c.make_composition([child(lambda d: 0.1), child(lambda d: math.nan)])
    with pytest.raises(FailedMap):
        comp.map(1.0)


def test_composition_rejects_mismatches_and_empty() -> None:
    pure = child(lambda d: d)
    with pytest.raises(InvalidParameter):
        dp.c.make_composition([])
    with pytest.raises(MeasureMismatch):
        dp.c.make_composition([pure, child(lambda d: d, dp.zero_concentrated_divergence())])
    other_domain = dp.m.make_user_measurement(
        dp.atom_domain(T=int), dp.absolute_distance(T=float), dp.max_divergence(), int, float
    )
    with pytest.raises(DomainMismatch):
        dp.c.make_composition([pure, other_domain])
    other_metric = dp.m.make_user_measurement(
        dp.atom_domain(T=float, nan=False),
        dp.absolute_distance(T=int),
        dp.max_divergence(),
        float,
        float,
    )
    with pytest.raises(MetricMismatch):
        dp.c.make_composition([pure, other_metric])
    with pytest.raises(NotImplementedForType):
        dp.c.make_composition([child(lambda d: d, dp.user_divergence("mine"))])


def test_basic_composition_matches_opendp(odp: Any) -> None:
    space = odp.atom_domain(T=float, nan=False), odp.absolute_distance(T=float)
    for eps in LOSS_GRID:
        ours = dp.c.make_basic_composition([child(lambda d, e=eps: e * d)] * 3)
        theirs = odp.c.make_basic_composition(
            [
                odp.m.make_user_measurement(
                    *space, odp.max_divergence(), lambda x: x, lambda d, e=eps: e * d
                )
            ]
            * 3
        )
        assert ours.map(1.0) <= theirs.map(1.0)
        assert abs(ours.map(1.0) - theirs.map(1.0)) <= 1e-12 * max(1.0, theirs.map(1.0))


def test_basic_composition_is_composition() -> None:
    kids = [child(lambda d: 0.2 * d), child(lambda d: 0.3 * d)]
    assert dp.c.make_basic_composition(kids).map(2.0) == dp.c.make_composition(kids).map(2.0)


# -- adaptive composition ---------------------------------------------------------------------


def test_adaptive_composition_map_and_d_in() -> None:
    comp = dp.c.make_adaptive_composition(
        *SPACE, dp.max_divergence(), d_in=1.0, d_mids=[0.1, 0.2, 0.3]
    )
    assert comp.map(1.0) == 0.6000000000000001
    assert comp.map(0.5) == 0.6000000000000001  # any d_in' <= d_in
    with pytest.raises(FailedMap):
        comp.map(1.5)


def test_adaptive_composition_budget_in_order() -> None:
    comp = dp.c.make_adaptive_composition(*SPACE, dp.max_divergence(), d_in=1.0, d_mids=[0.1, 0.2])
    qbl = comp(3.0)
    assert qbl(child(lambda d: 0.1 * d, function=lambda x: x + 1)) == 4.0
    calls: list[float] = []

    def spy(x: float) -> float:
        calls.append(x)
        return x

    with pytest.raises(dp.c.BudgetExceeded):
        qbl(child(lambda d: 0.3 * d, function=spy))  # over the next d_mid 0.2
    assert calls == []  # refused before it ran
    assert qbl(child(lambda d: 0.2 * d, function=spy)) == 3.0  # the d_mid was not consumed
    with pytest.raises(dp.c.BudgetExceeded):
        qbl(child(lambda d: 0.0, function=spy))  # out of queries
    assert calls == [3.0]


def test_adaptive_composition_rejects_bad_queries() -> None:
    comp = dp.c.make_adaptive_composition(
        *SPACE, dp.zero_concentrated_divergence(), d_in=1.0, d_mids=[1.0]
    )
    qbl = comp(1.0)
    with pytest.raises(MeasureMismatch):
        qbl(child(lambda d: 0.1))
    with pytest.raises(FailedMap):
        qbl(child(lambda d: math.nan, dp.zero_concentrated_divergence()))
    with pytest.raises(QueryableError):
        qbl("not a measurement")
    # none of the refusals spent the only d_mid
    assert qbl(child(lambda d: 1.0, dp.zero_concentrated_divergence())) == 1.0


def test_adaptive_composition_constructor_errors() -> None:
    with pytest.raises(InvalidParameter):
        dp.c.make_adaptive_composition(*SPACE, dp.max_divergence(), d_in=1.0, d_mids=[])
    with pytest.raises(FailedMap):
        dp.c.make_adaptive_composition(*SPACE, dp.max_divergence(), d_in=1.0, d_mids=[-1.0])
    with pytest.raises(FailedMap):
        dp.c.make_adaptive_composition(*SPACE, dp.max_divergence(), d_in=-1.0, d_mids=[1.0])
    with pytest.raises(NotImplementedForType):
        dp.c.make_adaptive_composition(*SPACE, dp.renyi_divergence(), d_in=1.0, d_mids=[1.0])


def test_nested_compositor_spends_from_its_own_budget() -> None:
    outer = dp.c.make_sequential_composition(
        *SPACE, dp.max_divergence(), d_in=1.0, d_mids=[0.5, 0.5]
    )(2.0)
    inner_meas = dp.c.make_adaptive_composition(
        *SPACE, dp.max_divergence(), d_in=1.0, d_mids=[0.25, 0.25]
    )
    inner = outer(inner_meas)
    assert inner(child(lambda d: 0.25 * d)) == 2.0
    assert inner(child(lambda d: 0.25 * d)) == 2.0
    with pytest.raises(dp.c.BudgetExceeded):
        inner(child(lambda d: 0.0))


def test_partial_compositor() -> None:
    comp = SPACE >> dp.c.then_adaptive_composition(dp.max_divergence(), 1.0, [0.5])
    assert comp.map(1.0) == 0.5
    odometer = SPACE >> dp.c.then_fully_adaptive_composition(dp.max_divergence())
    assert isinstance(odometer, dp.c.Odometer)


def test_non_concurrent_measure_disables_old_children() -> None:
    measure = dp.approximate(dp.zero_concentrated_divergence())
    outer = dp.c.make_adaptive_composition(
        *SPACE, measure, d_in=1.0, d_mids=[(0.5, 0.0), (0.5, 0.0)]
    )(1.0)
    inner = outer(
        dp.c.make_adaptive_composition(*SPACE, measure, d_in=1.0, d_mids=[(0.25, 0.0)] * 2)
    )
    assert inner(child(lambda d: (0.25, 0.0), measure)) == 1.0
    outer(child(lambda d: (0.5, 0.0), measure))
    with pytest.raises(QueryableError):
        inner(child(lambda d: (0.25, 0.0), measure))


# -- odometers and filters --------------------------------------------------------------------


def test_odometer_reports_spend() -> None:
    odometer = dp.c.make_fully_adaptive_composition(*SPACE, dp.zero_concentrated_divergence())
    assert "Odometer(" in repr(odometer)
    qbl = odometer(1.0)
    zcdp = dp.zero_concentrated_divergence()
    assert qbl.privacy_loss(1.0) == 0.0
    qbl(child(lambda d: 0.1 * d, zcdp))
    qbl(child(lambda d: 0.2 * d, zcdp))
    assert qbl.privacy_loss(1.0) == 0.30000000000000004
    assert qbl.privacy_loss(2.0) == 0.6000000000000001


def test_odometer_charges_a_query_that_raises() -> None:
    qbl = dp.c.make_fully_adaptive_composition(*SPACE, dp.max_divergence())(1.0)

    def boom(x: float) -> float:
        raise RuntimeError("child failed")

    # a failure on the private data reaches the analyst without its message (invoke_private)
    with pytest.raises(FailedFunction, match="withheld") as info:
        qbl(child(lambda d: 0.5 * d, function=boom))
    assert "child failed" not in str(info.value) and info.value.__context__ is None
    assert qbl.privacy_loss(1.0) == 0.5


def test_privacy_filter() -> None:
    odometer = dp.c.make_fully_adaptive_composition(*SPACE, dp.max_divergence())
    flt = dp.c.make_privacy_filter(odometer, d_in=1.0, d_out=1.0)
    assert flt.map(1.0) == 1.0 and flt.map(0.5) == 1.0
    with pytest.raises(FailedMap):
        flt.map(2.0)
    qbl = flt(5.0)
    assert qbl(child(lambda d: 0.6 * d)) == 5.0
    released: list[float] = []
    with pytest.raises(dp.c.BudgetExceeded):
        qbl(child(lambda d: 0.6 * d, function=lambda x: released.append(x) or x))
    assert released == []
    # OpenDP semantics: once a query is refused, the filter is exhausted
    with pytest.raises(dp.c.BudgetExceeded):
        qbl(child(lambda d: 0.1 * d))
    assert qbl.privacy_loss(1.0) == 0.6


def test_privacy_filter_rejects_non_odometer() -> None:
    with pytest.raises(NotImplementedForType):
        dp.c.make_privacy_filter(child(lambda d: d), 1.0, 1.0)  # type: ignore[arg-type]


# -- agreement with OpenDP 0.16 ----------------------------------------------------------------


@pytest.fixture(scope="module")
def odp() -> Any:
    opendp = pytest.importorskip("opendp.prelude")
    opendp.enable_features("contrib", "honest-but-curious")
    return opendp


LOSS_GRID = [0.0, 0.1, 1 / 3, 0.7, 2.5]


def e_first(loss: Any) -> float:
    return float(loss[0] if isinstance(loss, tuple) else loss)


def test_composition_matches_opendp_on_grid(odp: Any) -> None:
    space = odp.atom_domain(T=float, nan=False), odp.absolute_distance(T=float)
    pairs = [
        (dp.max_divergence(), odp.max_divergence(), lambda e: e),
        (dp.zero_concentrated_divergence(), odp.zero_concentrated_divergence(), lambda e: e),
        (
            dp.approximate(dp.max_divergence()),
            odp.approximate(odp.max_divergence()),
            lambda e: (e, e * 1e-6),
        ),
    ]
    for ours_m, theirs_m, shape in pairs:
        for k in [1, 2, 5]:
            for eps in LOSS_GRID:
                ours = dp.c.make_composition(
                    [child(lambda d, e=eps, f=shape: f(e * d), ours_m)] * k
                )
                theirs = odp.c.make_composition(
                    [
                        odp.m.make_user_measurement(
                            *space, theirs_m, lambda x: x, lambda d, e=eps, f=shape: f(e * d)
                        )
                    ]
                    * k
                )
                for d_in in [0.5, 1.0, 2.0]:
                    a, b = ours.map(d_in), theirs.map(d_in)
                    pairs_ab = zip(a, b, strict=True) if isinstance(a, tuple) else [(a, b)]
                    for x, y in pairs_ab:
                        # ours rounds the exact sum up once; OpenDP rounds up at every addition
                        assert x <= y
                        assert abs(x - y) <= 1e-12 * max(1.0, y)
                    exact = Fraction(e_first(shape(eps * d_in))) * k
                    assert Fraction(e_first(a)) >= exact


def test_adaptive_composition_and_filter_match_opendp(odp: Any) -> None:
    space = odp.atom_domain(T=float, nan=False), odp.absolute_distance(T=float)
    for d_mids in [[0.1] * 5, [0.25, 1 / 3, 0.5], [2.0]]:
        for name in ["make_adaptive_composition", "make_sequential_composition"]:
            ours = getattr(dp.c, name)(*SPACE, dp.max_divergence(), 1.0, d_mids)
            theirs = getattr(odp.c, name)(*space, odp.max_divergence(), 1.0, d_mids)
            assert ours.map(1.0) == theirs.map(1.0)
            assert ours.map(0.5) == theirs.map(0.5)
    ours_f = dp.c.make_privacy_filter(
        dp.c.make_fully_adaptive_composition(*SPACE, dp.zero_concentrated_divergence()), 1.0, 0.35
    )
    theirs_f = odp.c.make_privacy_filter(
        odp.c.make_fully_adaptive_composition(*space, odp.zero_concentrated_divergence()),
        1.0,
        0.35,
    )
    assert ours_f.map(1.0) == theirs_f.map(1.0)
    q_ours, q_theirs = ours_f(1.0), theirs_f(1.0)
    for rho in [0.1, 0.2]:
        q_ours(child(lambda d, r=rho: r * d, dp.zero_concentrated_divergence()))
        q_theirs(
            odp.m.make_user_measurement(
                *space, odp.zero_concentrated_divergence(), lambda x: x, lambda d, r=rho: r * d
            )
        )
        assert q_ours.privacy_loss(1.0) == q_theirs.privacy_loss(1.0)


# -- laws ----------------------------------------------------------------------------------------

finite_losses = st.lists(
    st.floats(min_value=0.0, max_value=1e6, allow_nan=False, allow_infinity=False),
    min_size=1,
    max_size=8,
)


@given(finite_losses, st.floats(min_value=0.0, max_value=10.0))
@settings(max_examples=200, deadline=None)
def test_composed_map_is_exact_sum_rounded_up(losses: list[float], d_in: float) -> None:
    kids = [child(lambda d, e=e: e) for e in losses]
    total = dp.c.make_composition(kids).map(d_in)
    exact = sum((Fraction(e) for e in losses), Fraction(0))
    assert Fraction(total) >= exact  # never below the exact value
    assert total == up(exact)  # and the least float that is not


@given(finite_losses)
@settings(max_examples=100, deadline=None)
def test_adaptive_map_is_exact_sum_rounded_up_and_check_holds(d_mids: list[float]) -> None:
    comp = dp.c.make_adaptive_composition(*SPACE, dp.max_divergence(), 1.0, d_mids)
    exact = sum((Fraction(e) for e in d_mids), Fraction(0))
    assert comp.map(1.0) == up(exact)
    assert comp.check(1.0, comp.map(1.0))


# --- odometers and filters keep an exact running total -----------------------------------------
# The odometer does not re-map every past query on each privacy_loss call (nor the filter, on
# each query): it keeps, per d_in, the exact sums of the past losses; these tests check
# that the running total is the re-mapped one on random query sequences, and that each past
# query is mapped O(1) times.

_LOSS_FLOATS = st.one_of(
    st.sampled_from([0.0, 0.1, 0.2, 0.3, 1 / 3, 0.7, 1.0, 2.5, 5e-324, 1e-300, 1e-17]),
    st.floats(min_value=0.0, max_value=10.0, allow_nan=False, allow_infinity=False),
)
_DELTAS = st.one_of(
    st.sampled_from([0.0, 1e-9, 1e-6, 0.1, 0.3, 0.7]),
    st.floats(min_value=0.0, max_value=1.0, allow_nan=False, allow_infinity=False),
)
_D_INS = st.sampled_from([0.0, 0.5, 1.0, 1.5, 3.0])
_MEASURES: dict[str, Any] = {
    "pure": dp.max_divergence(),
    "zcdp": dp.zero_concentrated_divergence(),
    "approx-pure": dp.approximate(dp.max_divergence()),
}  # approximate zCDP: refused by the odometer and the filter (test_fully_adaptive_refuses_...)


_APPROXIMATE = type(dp.approximate(dp.max_divergence()))


def _query(measure: Any, rate: float, delta: float) -> Any:
    """A query whose loss at d_in is rate * d_in (rounded up), with δ = delta if approximate."""

    def privacy_map(d: float) -> Any:
        eps = up(Fraction(rate) * Fraction(d))
        return (eps, delta) if isinstance(measure, _APPROXIMATE) else eps

    return dp.m.make_user_measurement(*SPACE, measure, lambda x: 0, privacy_map)


def _remapped(measure: Any, history: list[Any], d_in: float) -> Any:
    """The reference: every past query mapped again, the exact sum rounded up once."""
    losses = [m.map(d_in) for m in history]
    if isinstance(measure, _APPROXIMATE):
        eps = up(sum((Fraction(loss[0]) for loss in losses), Fraction(0)))
        return eps, min(1.0, up(sum((Fraction(loss[1]) for loss in losses), Fraction(0))))
    return up(sum((Fraction(loss) for loss in losses), Fraction(0)))


@pytest.mark.parametrize("kind", sorted(_MEASURES))
@settings(max_examples=60, deadline=None)
@given(
    steps=st.lists(
        st.one_of(
            st.tuples(st.just("query"), _LOSS_FLOATS, _DELTAS),
            st.tuples(st.just("loss"), _D_INS, st.just(0.0)),
        ),
        max_size=40,
    )
)
def test_odometer_running_total_equals_remapped_total(kind: str, steps: list[Any]) -> None:
    measure = _MEASURES[kind]
    qbl = dp.c.make_fully_adaptive_composition(*SPACE, measure)(0.0)
    history: list[Any] = []
    for step, value, delta in steps:
        if step == "query":
            query = _query(measure, value, delta)
            qbl(query)
            history.append(query)
        else:
            assert qbl.privacy_loss(value) == _remapped(measure, history, value)
    for d_in in (0.5, 1.0, 3.0):
        assert qbl.privacy_loss(d_in) == _remapped(measure, history, d_in)


@pytest.mark.parametrize("kind", sorted(_MEASURES))
@settings(max_examples=60, deadline=None)
@given(rates=st.lists(st.tuples(_LOSS_FLOATS, _DELTAS), max_size=40), budget=_LOSS_FLOATS)
def test_filter_decisions_follow_the_remapped_total(
    kind: str, rates: list[tuple[float, float]], budget: float
) -> None:
    measure = _MEASURES[kind]
    approx = kind.startswith("approx")
    d_out: Any = (budget * 4, 0.5) if approx else budget * 4
    odometer = dp.c.make_fully_adaptive_composition(*SPACE, measure)
    qbl = dp.c.make_privacy_filter(odometer, d_in=1.5, d_out=d_out)(0.0)
    history: list[Any] = []
    for rate, delta in rates:
        query = _query(measure, rate, delta)
        pending = _remapped(measure, [*history, query], 1.5)
        fits = (pending[0] <= d_out[0] and pending[1] <= d_out[1]) if approx else pending <= d_out
        if not fits:
            with pytest.raises(dp.c.BudgetExceeded):
                qbl(query)
            break
        qbl(query)
        history.append(query)
        assert qbl.privacy_loss(1.5) == _remapped(measure, history, 1.5)
        assert qbl.privacy_loss(1.0) == _remapped(measure, history, 1.0)


@pytest.mark.parametrize("kind", ["filter", "odometer"])
def test_each_past_query_is_mapped_a_bounded_number_of_times(kind: str) -> None:
    calls = [0]

    def privacy_map(d: float) -> float:
        calls[0] += 1
        return 1e-3 * d

    query = dp.m.make_user_measurement(*SPACE, dp.max_divergence(), lambda x: 0, privacy_map)
    odometer = dp.c.make_fully_adaptive_composition(*SPACE, dp.max_divergence())
    if kind == "filter":
        qbl = dp.c.make_privacy_filter(odometer, d_in=1.0, d_out=100.0)(0.0)
    else:
        qbl = odometer(0.0)
    n = 300
    for _ in range(n):
        qbl(query)
        qbl.privacy_loss(1.0)
    # re-mapping the history on each call made ~n^2/2 = 45,000 map calls; a running total maps
    # each query once per d_in (the filter's pending check reuses its loss)
    assert calls[0] <= 2 * n
    assert qbl.privacy_loss(1.0) == fsum_up(*([1e-3] * n))


@pytest.mark.parametrize("who", ["odometer", "filter"])
def test_fully_adaptive_refuses_approximate_zcdp(who: str) -> None:
    """δ-approximate zCDP has no fully adaptive filter proved here: both constructors refuse it
    with a message naming the fixes (zCDP without δ, or a non-adaptive compositor)."""
    measure = dp.approximate(dp.zero_concentrated_divergence())
    if who == "odometer":
        with pytest.raises(NotImplementedForType, match="non-adaptive compositor"):
            dp.c.make_fully_adaptive_composition(*SPACE, measure)
        return
    # an Odometer built around the check must still be refused by the filter
    odometer = dp.c.Odometer(*SPACE, measure, lambda x: x)
    with pytest.raises(NotImplementedForType, match="zero_concentrated_divergence"):
        dp.c.make_privacy_filter(odometer, d_in=1.0, d_out=(1.0, 1e-6))
    # the measures whose filters are proved are still accepted
    for ok in (dp.zero_concentrated_divergence(), dp.approximate(dp.max_divergence())):
        dp.c.make_fully_adaptive_composition(*SPACE, ok)


def test_context_without_split_refuses_approximate_zcdp() -> None:
    """A Context's budget without a split is a privacy filter: rho with delta is refused when
    the context is built (naming the split as the fix); with a split it still works."""
    unit, loss = dp.unit_of(contributions=1), dp.loss_of(rho=0.5, delta=1e-7)
    with pytest.raises(NotImplementedForType, match="split_evenly_over"):
        dp.Context.compositor(data=[1.0, 2.0], privacy_unit=unit, privacy_loss=loss)
    ctx = dp.Context.compositor(
        data=[1.0, 2.0], privacy_unit=unit, privacy_loss=loss, split_evenly_over=2
    )
    assert isinstance(ctx, dp.Context)
