"""The one-call helpers spend at most the ε asked (and nearly all of it), charge a session's
budget, drop missing values, and debias randomized response without bias."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

import opendp_lite.prelude as dp
from opendp_lite import helpers as h
from opendp_lite.combinators.composition import BudgetExceeded
from opendp_lite.errors import InvalidParameter, NotImplementedForType
from tests.stat._reference import (
    assert_fits,
    assert_rejects,
    assert_within,
    binom_power_one_sided,
    z_bound,
)

AGES = np.array([23.0, 35.0, 41.0, 52.0, 29.0, 64.0, 38.0, 47.0, 31.0, 58.0] * 30)


@pytest.mark.parametrize(
    "call",
    [
        lambda d, e: h.dp_count(d, epsilon=e),
        lambda d, e: h.dp_sum(d, bounds=(18.0, 90.0), epsilon=e),
        lambda d, e: h.dp_mean(d, bounds=(18.0, 90.0), epsilon=e),
        lambda d, e: h.dp_quantiles(d, [0.25, 0.5, 0.75], bounds=(18.0, 90.0), epsilon=e),
        lambda d, e: h.dp_histogram(d, [23.0, 35.0], epsilon=e),
    ],
    ids=["count", "sum", "mean", "quantiles", "histogram"],
)
def test_each_helper_spends_at_most_its_epsilon_and_nearly_all_of_it(call: object) -> None:
    session = h.budget(AGES, epsilon=1.0)
    call(session, 0.3)  # type: ignore[operator]
    spent = session.current_privacy_loss()
    assert 0.3 * 0.99 <= spent <= 0.3
    assert session.remaining_privacy_loss() >= 0.7


def test_a_session_refuses_a_release_over_its_budget() -> None:
    session = h.budget(AGES, epsilon=1.0)
    h.dp_mean(session, bounds=(18.0, 90.0), epsilon=0.8)
    with pytest.raises(BudgetExceeded):
        h.dp_count(session, epsilon=0.5)
    assert isinstance(h.dp_count(session, epsilon=0.1), int)  # a query that fits still runs


def test_split_and_zcdp_contexts_are_refused_with_the_fix() -> None:
    split = dp.Context.compositor(
        data=AGES,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=2,
    )
    with pytest.raises(InvalidParameter, match="budget"):
        h.dp_count(split, epsilon=0.5)
    zcdp = dp.Context.compositor(
        data=AGES, privacy_unit=dp.unit_of(contributions=1), privacy_loss=dp.loss_of(rho=0.5)
    )
    with pytest.raises(NotImplementedForType, match="pure DP"):
        h.dp_count(zcdp, epsilon=0.5)


def test_a_context_keeps_its_privacy_unit() -> None:
    """Asking a one-row session for protection of 3 rows is refused, not silently weakened."""
    session = h.budget(AGES, epsilon=1.0)
    with pytest.raises(InvalidParameter, match="contributions=3"):
        h.dp_count(session, epsilon=0.1, contributions=3)
    assert session.current_privacy_loss() == 0.0
    three = h.budget(AGES, epsilon=1.0, contributions=3)
    h.dp_count(three, epsilon=0.3, contributions=3)
    assert 0.29 <= three.current_privacy_loss() <= 0.3


@pytest.mark.parametrize("eps", [0.0, -1.0, math.inf, math.nan])
def test_bad_epsilon_is_refused(eps: float) -> None:
    with pytest.raises(InvalidParameter, match="epsilon"):
        h.dp_count(AGES, epsilon=eps)


def test_bad_arguments_raise_their_own_typed_error() -> None:
    """Not a failed search: the constructor's message, naming the parameter."""
    with pytest.raises(InvalidParameter, match="alpha"):
        h.dp_quantiles(AGES, [1.5], bounds=(18.0, 90.0), epsilon=1.0)
    with pytest.raises(InvalidParameter, match="alphas"):
        h.dp_quantiles(AGES, [], bounds=(18.0, 90.0), epsilon=1.0)
    with pytest.raises(InvalidParameter, match="categories"):
        h.dp_mode(["a"], [], epsilon=1.0)
    with pytest.raises(InvalidParameter, match="bound"):
        h.dp_mean(AGES, bounds=(90.0, 18.0), epsilon=1.0)


def test_missing_values_are_dropped_and_the_mean_is_accurate() -> None:
    data = np.concatenate([np.full(20_000, 40.0), np.full(500, np.nan)])
    assert abs(h.dp_mean(data, bounds=(0.0, 100.0), epsilon=1.0) - 40.0) < 1.0
    with pytest.raises(dp.OpenDPLiteError):  # a column of strings is not a number
        h.dp_mean(["a", "b"], bounds=(0.0, 1.0), epsilon=1.0)


def test_contributions_scale_the_noise() -> None:
    """Bounding each person to 3 records costs three times the noise, not the same."""
    space = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    one = h.calibrate(lambda s: space >> dp.t.then_count() >> dp.m.then_laplace(s), 1.0)
    three = h.calibrate(lambda s: space >> dp.t.then_count() >> dp.m.then_laplace(s), 1.0, 3)
    assert three.scale == pytest.approx(3 * one.scale, rel=1e-9)
    assert three.measurement.map(3) <= 1.0 < three.measurement.map(4)


def test_calibration_interval_covers_with_the_stated_probability() -> None:
    """n = 400 releases, intervals at α = 0.1: the coverage is not significantly below 0.9
    (one-sided binomial test at the suite's ALPHA), and the same interval at half width (a
    wrong accuracy, about 0.68 coverage: 14 sd below 0.9) is rejected."""
    space = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    cal = h.calibrate(lambda s: space >> dp.t.then_count() >> dp.m.then_laplace(s), 0.5, alpha=0.1)
    data, n = list(range(1000)), 400
    errors = [abs(cal.release(data)[0] - 1000) for _ in range(n)]

    def below_90(hits: int) -> float:
        return float(scipy_stats.binomtest(hits, n, 0.9, alternative="less").pvalue)

    assert_fits(below_90(sum(e <= cal.accuracy for e in errors)))
    # half width: coverage 1 − √0.1 = 0.68 for Laplace noise (P[|Z| > a] = 0.1 = e^(−a/b))
    power = binom_power_one_sided(n, 1 - math.sqrt(0.1), 0.9, "less")
    assert_rejects(below_90(sum(e <= cal.accuracy / 2 for e in errors)), power, "(half width)")


def test_randomized_response_is_epsilon_ldp_and_debiasing_is_unbiased() -> None:
    """n = 80 000 answers, truth 0.3: the estimate is within z sd, z the two-sided normal
    quantile at the suite's ALPHA (4.9 at 1e-6, 6.1 at 1e-9); debiasing with the p of a wrong
    ε (× 0.7 or × 1.3) lands more than z sd away (about 20 and 10 sd expected)."""
    p = h._response_prob(1.0)
    assert dp.m.make_randomized_response_bool(p).map(1) <= 1.0
    assert p == pytest.approx(math.e / (1 + math.e), rel=1e-9)
    n, truth = 80_000, 0.3
    answers = np.arange(n) < truth * n
    reports = h.randomized_response(answers, epsilon=1.0)
    sd = math.sqrt(0.25 / n) / (2 * p - 1)
    z = z_bound()
    assert abs(reports.mean() - truth) > z * sd  # the raw share is biased (about 28 sd)
    assert_within(h.debias_randomized_response(reports, epsilon=1.0), truth, sd)
    for wrong in (0.7, 1.3):
        assert abs(h.debias_randomized_response(reports, epsilon=wrong) - truth) > z * sd


def test_mode_and_histogram_are_keyed_by_category() -> None:
    data = ["a"] * 300 + ["b"] * 20 + ["c"] * 5
    hist = h.dp_histogram(data, ["a", "b"], epsilon=1.0)
    assert list(hist) == ["a", "b"] and all(isinstance(v, int) for v in hist.values())
    assert h.dp_mode(data, ["a", "b", "c"], epsilon=1.0) == "a"


def test_a_series_is_a_column_and_a_frame_is_refused_with_the_fix() -> None:
    """A pandas/Polars Series goes where a numpy column goes (same chain, same ε spent); its
    missing values are dropped like NaN; a whole DataFrame is refused naming the fix."""
    pd = pytest.importorskip("pandas")
    ages = pd.Series(AGES, name="age")
    session = h.budget(ages, epsilon=1.0)
    assert 18.0 <= h.dp_mean(session, bounds=(18.0, 90.0), epsilon=0.3) <= 90.0
    assert 0.3 * 0.99 <= session.current_privacy_loss() <= 0.3
    with_na = pd.Series([40.0] * 20_000 + [None] * 500, dtype="Float64")
    assert abs(h.dp_mean(with_na, bounds=(0.0, 100.0), epsilon=1.0) - 40.0) < 1.0
    hist = h.dp_histogram(pd.Series(["a"] * 300 + ["b"] * 20, dtype="category"), ["a", "b"], 1.0)
    assert list(hist) == ["a", "b"]
    with pytest.raises(NotImplementedForType, match=r"data\['column'\].*grouped_sum"):
        h.dp_sum(pd.DataFrame({"age": AGES}), bounds=(18.0, 90.0), epsilon=1.0)
    pl = pytest.importorskip("polars")
    assert isinstance(h.dp_count(pl.Series("age", AGES), epsilon=1.0), int)
