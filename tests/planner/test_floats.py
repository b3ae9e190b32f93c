"""Float columns: the stated interval of a sum on the float grid covers every rounding term."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import gmpy2
import numpy as np
import pandas as pd
import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import InvalidParameter
from opendp_lite.planner import GroupedSum, Mean, Plan, Sum, within
from opendp_lite.planner.floats import K_MIN, FloatGrid, grid_noise_accuracy, grid_noise_max_scale
from opendp_lite.planner.solver import _float_sum_stability

BOUNDS = (0.0, 80.0)


def _exact_clamped_sum(x: np.ndarray, lo: float, hi: float) -> Fraction:
    return sum((Fraction(float(min(max(v, lo), hi))) for v in x), Fraction(0))


def test_rounding_terms_bound_the_noiseless_float_sum_on_adversarial_data():
    """Values just below a grid point each lose almost one grid step 2^-p when truncated; the
    release's interval without noise (A = 0) must still cover the exact clamped sum."""
    grid = FloatGrid.of(BOUNDS, integer=False)
    n = 20_000
    x = np.full(n, math.nextafter(40.0, 0.0))  # truncates to 40 − 2^-p
    x[::7] = 1e9  # clamped to 80: exact
    t = dp.t.make_select_column("w", TOA="f64") >> dp.t.then_impute_constant(0.0)
    t = t >> dp.t.then_clamp(BOUNDS) >> dp.t.then_sum()
    got = Fraction(t(pd.DataFrame({"w": x})))
    err = abs(got - _exact_clamped_sum(x, *BOUNDS))
    bound = Fraction(grid.half_width(0.0, n))
    assert err <= bound
    # the per-row term is needed: the truncation alone takes most of it here
    assert err > Fraction(1, 2) * n * Fraction(2) ** -grid.p
    assert grid.per_row * n > 0.5 * float(err)


def test_a_float_sums_loss_is_its_chains_map():
    chain = dp.t.make_select_column("w", TOA="f64") >> dp.t.then_impute_constant(0.0)
    chain = chain >> dp.t.then_clamp(BOUNDS) >> dp.t.then_sum()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _float_sum_stability(BOUNDS) == chain.map(1)
    assert chain.map(1) > 80.0  # the sum's rounding relaxation is paid


@pytest.mark.parametrize("s", [1e-3, 0.7, 3.0, 250.0, 1e6])
@pytest.mark.parametrize("alpha", [0.1, 0.05, 1e-4])
def test_grid_noise_accuracy_is_conservative_and_tight(s, alpha):
    for measure in ("pure", "zcdp"):
        a = grid_noise_accuracy(s, alpha, measure)
        with gmpy2.context(gmpy2.get_context(), precision=2200):  # 2^-1074 must not vanish
            grid = gmpy2.mpfr(2) ** K_MIN
            S = gmpy2.mpfr(s)
            if measure == "pure":  # Pr[|2^k Z| >= a], Z ~ discrete Laplace(s / 2^k), a on the grid

                def tail(v, S=S, grid=grid):
                    return 2 * gmpy2.exp(-v / S) / (1 + gmpy2.exp(-grid / S))
            else:  # the bound every discrete Gaussian on the grid obeys (Poisson summation)

                def tail(v, S=S, grid=grid):
                    return gmpy2.erfc((v - grid) / (S * gmpy2.sqrt(2)))

            assert tail(gmpy2.mpfr(a)) <= alpha
            assert tail(gmpy2.mpfr(a) * (1 - gmpy2.mpfr(1e-6))) > alpha
        s_max = grid_noise_max_scale(a, alpha, measure)
        assert grid_noise_accuracy(s_max, alpha, measure) <= a
        assert s_max >= s * (1 - 1e-6)


def test_float_columns_plan_and_release():
    """Float bounds were refused before; now a float sum, mean and grouped sum are planned, and
    released on an f64 column (a missing value adds clamp(0), as make_grouped_sum does)."""
    specs = [
        Sum("fs", within(500.0), column="w", bounds=BOUNDS, max_rows=10_000),
        Mean("fm", within(2.0), column="w", bounds=BOUNDS, min_rows=300),
        GroupedSum("fg", within(400.0), by="g", keys=("a", "b"), column="w", bounds=BOUNDS),
    ]
    n = 400
    i = np.arange(n)
    w = (i * 0.37) % 100
    w[5] = np.nan
    df = pd.DataFrame({"w": w, "g": np.array(["a", "b"])[i % 2], "k": i})
    for measure in ("pure", "zcdp"):
        plan = Plan.minimize(specs, measure)
        assert all(st.achieved <= st.target for st in plan.solution.stats)
        assert Plan.from_json(plan.to_json()).total == plan.total
        out = plan.release(df)
        assert out.spent == pytest.approx(plan.total, rel=1e-12)
        assert isinstance(out["fs"].value, float)
        assert out["fs"].half_width > plan.solution.stats[0].achieved - 1e-6
    bad = [Sum("x", within(500.0), column="k", bounds=BOUNDS)]
    with pytest.raises(InvalidParameter, match="float bounds"):
        Plan.minimize(bad).release(df)
    bad = [Sum("x", within(500.0), column="w", bounds=(0, 80))]
    with pytest.raises(InvalidParameter, match="give float bounds"):
        Plan.minimize(bad).release(df)


def test_a_float_sum_interval_grows_with_max_rows_and_refuses_past_the_size_limit():
    small = Plan.minimize([Sum("s", within(1.0), column="w", bounds=(0.0, 1e5), max_rows=100)])
    default = Plan.minimize([Sum("s", within(3000.0), column="w", bounds=(0.0, 1e5))])
    # with the 2^40-row default the rounding terms alone are thousands: a ±1 target is refused
    grid = FloatGrid.of((0.0, 1e5), integer=False)
    assert grid.half_width(0.0, 2**40) > 1000
    assert small.solution.stats[0].achieved <= 1.0
    assert default.solution.stats[0].achieved <= 3000.0
    with pytest.raises(InvalidParameter, match="size limit"):
        Plan.minimize([Sum("s", within(1.0), column="w", bounds=(0.0, 1.0), max_rows=2**41)])
