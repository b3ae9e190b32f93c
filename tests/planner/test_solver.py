"""The solver: closed forms, tightness, shared work, the budget direction, infeasibility."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from opendp_lite.accuracy import (
    discrete_gaussian_scale_to_accuracy,
    discrete_laplacian_scale_to_accuracy,
)
from opendp_lite.errors import InvalidParameter, NotImplementedForType
from opendp_lite.planner import (
    Count,
    GroupedCount,
    GroupedSum,
    Infeasible,
    Mean,
    Quantile,
    Rows,
    Sum,
    explain,
    solve,
    solve_budget,
    within,
)
from opendp_lite.planner.solver import _dg_tail_bound, threshold_for

ADULTS = Rows("age", ">=", 18)
WORKLOAD = [
    Count("n", within(30.0)),
    Count("adults", within(20.0), rows=ADULTS),
    Mean("mean_inc", within(400.0), column="inc", bounds=(0, 100_000), rows=ADULTS, min_rows=2_000),
    Sum("total_inc", within(2e6), column="inc", bounds=(0, 100_000), rows=ADULTS),
    GroupedCount("by_sex", within(40.0), by="sex", keys=("F", "M")),
    Quantile("median", within(50.0), column="inc", q=0.5, candidates=tuple(range(0, 100_001, 500))),
]


@pytest.mark.parametrize("measure", ["pure", "zcdp"])
def test_every_target_is_met_and_each_scale_is_tight(measure):
    sol = solve(WORKLOAD, measure)
    for st in sol.stats:
        assert st.achieved <= st.target, st.spec.name
    # a count alone sits at the largest scale its target allows: 0.1% more noise misses it
    alone = solve([WORKLOAD[0]], measure)
    (u,) = alone.units.values()
    acc = (
        discrete_gaussian_scale_to_accuracy
        if measure == "zcdp"
        else discrete_laplacian_scale_to_accuracy
    )
    alpha = WORKLOAD[0].target.alpha  # 1 − 0.95 in floats
    assert acc(u.scale, alpha) <= 30.0 < acc(u.scale * 1.001, alpha)
    expected = 1 / (2 * u.scale**2) if measure == "zcdp" else 1 / u.scale
    assert alone.total == pytest.approx(expected, rel=1e-12)
    assert alone.total >= expected  # rounded up


def test_the_discrete_gaussian_bound_is_conservative():
    for s in (16.0, 40.0, 300.0):
        for a in (0.05, 0.001):
            assert _dg_tail_bound(s, a) >= discrete_gaussian_scale_to_accuracy(s, a)


def test_shared_work_is_paid_once():
    shared = solve(WORKLOAD, "pure", reuse=True)
    alone = solve(WORKLOAD, "pure", reuse=False)
    # the mean's count is the 'adults' count; the mean's sum is 'total_inc''s sum
    assert len(shared.units) == len(alone.units) - 2
    assert shared.total < alone.total
    for st in shared.stats:
        assert st.achieved <= st.target


def test_released_keys_share_their_noisy_counts_and_respect_delta():
    gc = GroupedCount("gc", within(30.0), by="region", max_groups=50, release_size=200)
    gs = GroupedSum(
        "gs",
        within(5e5),
        by="region",
        column="inc",
        bounds=(0, 100_000),
        max_groups=50,
        release_size=200,
    )
    shared = solve([gc, gs], "approx", delta=1e-7)
    apart = solve([gc, gs], "approx", delta=1e-7, reuse=False)
    assert sum(u.kind == "keys" for u in shared.units.values()) == 1
    assert sum(u.kind == "keys" for u in apart.units.values()) == 2
    assert shared.total < apart.total
    (keys,) = [u for u in shared.units.values() if u.kind == "keys"]
    from opendp_lite.planner.solver import _threshold_measurement

    eps, delta = _threshold_measurement(keys.scale, keys.threshold).map((1, 1, 1))
    assert delta <= 1e-7
    assert eps == pytest.approx(1 / keys.scale)
    # the threshold is the least one: one lower costs more than δ
    assert _threshold_measurement(keys.scale, keys.threshold - 1).map((1, 1, 1))[1] > 1e-7
    assert threshold_for(keys.scale, 1e-7) == keys.threshold


def test_released_keys_need_delta():
    gc = GroupedCount("gc", within(30.0), by="region", max_groups=50, release_size=200)
    with pytest.raises(NotImplementedForType, match="approx"):
        solve([gc], "pure")


def test_budget_direction_maximises_the_worst_ratio():
    need = solve(WORKLOAD, "pure").total
    sol, worst = solve_budget(WORKLOAD, need, "pure")
    assert sol.total <= need
    assert worst == pytest.approx(1.0, abs=2e-3)
    sol, worst = solve_budget(WORKLOAD, need / 2, "pure")
    assert sol.total <= need / 2 and worst > 1.2
    assert max(st.ratio for st in sol.stats) == pytest.approx(worst)
    sol, worst = solve_budget(WORKLOAD, need * 2, "pure")
    assert worst < 0.8


def test_infeasible_names_the_binding_target_and_its_needs():
    err = explain(WORKLOAD, 0.5, "pure")
    assert isinstance(err, Infeasible)
    text = str(err)
    assert err.binding in {s.name for s in WORKLOAD}
    assert "binding target" in text and "budget of" in text and "coarser" in text
    assert err.needs["budget"] > 0.5
    assert "narrower bounds" in text and "min_rows" in text  # the binding one is the mean
    # a budget the others fit in: the binding target alone, made coarser, would fit
    err = explain(WORKLOAD, 1.5, "pure")
    factor = float(str(err).split("or a target ")[1].split("×")[0])
    coarser = [
        s if s.name != err.binding else replace(s, target=s.target.scaled(factor)) for s in WORKLOAD
    ]
    assert solve(coarser, "pure").total <= 1.5


def test_a_mean_without_room_is_infeasible_and_says_why():
    m = Mean("m", within(0.01), column="inc", bounds=(0, 100_000), min_rows=10)
    with pytest.raises(Infeasible, match="min_rows"):
        solve([m], "zcdp")
    with pytest.raises(InvalidParameter, match="min_rows"):
        solve([Mean("m", within(1.0), column="inc", bounds=(0, 10))], "pure")


def test_quantile_closed_form():
    q = WORKLOAD[-1]
    sol = solve([q], "pure")
    (u,) = sol.units.values()
    t = u.scale * math.log(len(q.candidates) / q.target.alpha)
    assert t <= 50.0 and t == pytest.approx(50.0, rel=1e-9)
    assert sol.total == pytest.approx(2 * 0.5 / u.scale, rel=1e-12)


def test_a_single_count_needs_what_a_binary_search_over_epsilon_finds():
    """The even-split route's per-query need: OpenDP's route (calibrate the chain for an ε,
    read its accuracy, binary-search ε) lands on the planner's closed form."""
    import opendp_lite.prelude as dp
    from opendp_lite.helpers import calibrate

    spec = Count("n", within(25.0))
    space = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()

    def meets(eps: float) -> bool:
        cal = calibrate(
            lambda s: space >> dp.t.then_count() >> dp.m.then_laplace(s),
            eps,
            alpha=spec.target.alpha,
        )
        return cal.accuracy <= 25.0

    searched = dp.binary_search(meets, bounds=(1e-4, 10.0), T=float)
    assert solve([spec], "pure").total == pytest.approx(searched, rel=1e-6)
