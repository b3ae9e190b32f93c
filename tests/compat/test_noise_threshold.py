"""``make_noise_threshold``, negative thresholds and ``count_by >> laplace_threshold``, written
from OpenDP 0.16's documentation.

- ``make_noise_threshold`` dispatches on the output measure: approximate max divergence is the
  Laplace threshold mechanism (L0,1,∞ input), approximate zCDP the Gaussian one (L0,2,∞).
- OpenDP's user guide: a negative threshold keeps the keys whose noisy value is *below* it.
- ``make_count_by`` outputs ``L01InfDistance<AbsoluteDistance<TV>>`` with map (d, d, d), so a
  stability histogram is ``then_count_by() >> then_laplace_threshold(...)``.
- ``l01inf_distance`` is generic in its inner metric (absolute or symmetric distance).

The statistical test fixes n and α up front, passes on OS randomness, and rejects the law at
scale × 0.7 and × 1.3.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from scipy import stats

import opendp_lite.prelude as dp
from opendp_lite.errors import MetricMismatch, NotImplementedForType
from tests.stat._reference import assert_rejects, binom_power_one_sided, check_binomial

DOM = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int))
L01 = dp.l01inf_distance(dp.absolute_distance(T=int))
L02 = dp.l02inf_distance(dp.absolute_distance(T=int))
FDOM = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=float, nan=False))
FL01 = dp.l01inf_distance(dp.absolute_distance(T=float))


def laplace_tail(m: int, scale: float) -> float:
    """Pr[Z >= m] for Z ~ 𝓛_ℤ(scale), m >= 1: a^m / (1 + a), a = e^(−1/scale)."""
    a = math.exp(-1 / scale)
    return a**m / (1 + a)


# ----------------------------------------------------------------------------------------------
# make_noise_threshold


def test_approximate_max_divergence_is_the_laplace_threshold() -> None:
    m = dp.m.make_noise_threshold(
        DOM, L01, dp.approximate(dp.max_divergence()), scale=2.0, threshold=10
    )
    lap = dp.m.make_laplace_threshold(DOM, L01, scale=2.0, threshold=10)
    assert m.output_measure == dp.approximate(dp.max_divergence())
    for d in ((1, 1, 1), (2, 3, 2), (0, 0, 0)):
        assert m.map(d) == lap.map(d)
    assert sorted(m({"big": 1000, "small": -1000})) == ["big"]


def test_approximate_zcdp_is_the_gaussian_threshold() -> None:
    m = dp.m.make_noise_threshold(
        DOM, L02, dp.approximate(dp.zero_concentrated_divergence()), scale=2.0, threshold=10
    )
    gauss = dp.m.make_gaussian_threshold(DOM, L02, scale=2.0, threshold=10)
    assert m.output_measure == dp.approximate(dp.zero_concentrated_divergence())
    for d in ((1, 1, 1), (2, 3, 2)):
        assert m.map(d) == gauss.map(d)


def test_then_noise_threshold() -> None:
    space = DOM, L01
    m = space >> dp.m.then_noise_threshold(
        dp.approximate(dp.max_divergence()), scale=1.0, threshold=5
    )
    assert m.map((1, 1, 1))[0] == 1.0


@pytest.mark.parametrize(
    "measure",
    [dp.max_divergence(), dp.zero_concentrated_divergence(), dp.renyi_divergence()],
)
def test_pure_and_other_measures_are_refused(measure: Any) -> None:
    with pytest.raises(NotImplementedForType, match="output_measure"):
        dp.m.make_noise_threshold(DOM, L01, measure, scale=1.0, threshold=5)


def test_metric_must_match_the_measure() -> None:
    with pytest.raises(MetricMismatch):
        dp.m.make_noise_threshold(
            DOM, L01, dp.approximate(dp.zero_concentrated_divergence()), scale=1.0, threshold=5
        )
    with pytest.raises(MetricMismatch):
        dp.m.make_noise_threshold(
            DOM, L02, dp.approximate(dp.max_divergence()), scale=1.0, threshold=5
        )


# ----------------------------------------------------------------------------------------------
# negative thresholds


def test_negative_threshold_keeps_the_keys_below_it() -> None:
    m = dp.m.make_laplace_threshold(DOM, L01, scale=1.0, threshold=-20)
    out = m({"low": -1000, "high": 1000, "mid": 0})
    assert list(out) == ["low"] and out["low"] <= -20
    g = dp.m.make_gaussian_threshold(DOM, L02, scale=1.0, threshold=-20)
    assert list(g({"low": -1000, "high": 1000})) == ["low"]
    f = dp.m.make_laplace_threshold(FDOM, FL01, scale=1.0, threshold=-20.0)
    assert list(f({"low": -1000.0, "high": 1000.0})) == ["low"]


def test_zero_threshold_keeps_the_keys_at_or_above_it() -> None:
    """0 is not negative: the rule is >= 0, as OpenDP's sign test."""
    m = dp.m.make_laplace_threshold(DOM, L01, scale=1.0, threshold=0)
    assert list(m({"low": -1000, "high": 1000})) == ["high"]


@pytest.mark.parametrize("threshold", [3, 10, 25])
def test_negative_threshold_charges_the_mirrored_delta(threshold: int) -> None:
    """A key with value −l∞ on one side only is released iff Z <= −T + l∞, probability
    Pr[Z >= T − l∞] by symmetry: the same δ as the threshold T, and never 0."""
    pos = dp.m.make_laplace_threshold(DOM, L01, scale=2.0, threshold=threshold)
    neg = dp.m.make_laplace_threshold(DOM, L01, scale=2.0, threshold=-threshold)
    for d in ((1, 1, 1), (2, 2, 1), (1, 3, 3)):
        assert neg.map(d) == pos.map(d)
        assert neg.map(d)[1] >= d[0] * laplace_tail(threshold - min(d[1], d[2]), 2.0)
        assert neg.map(d)[1] > 0


def test_negative_float_threshold_uses_the_grid_below_zero() -> None:
    """Rounding ties go toward +∞, so n(−x) may differ from −n(x): at k = −1, l∞ = 0.75,
    n(−0.75) = −1 (so −0.75 is released iff Z <= −1 at T = −1) while n(0.75) = 2."""
    neg = dp.m.make_laplace_threshold(FDOM, FL01, scale=1.0, threshold=-1.0, k=-1)
    grid_scale = 2.0  # scale / 2^k
    assert neg.map((1, 0.75, 0.75))[1] == pytest.approx(laplace_tail(1, grid_scale), rel=1e-12)
    pos = dp.m.make_laplace_threshold(FDOM, FL01, scale=1.0, threshold=1.0, k=-1)
    # at T = +1 a key of value 0.75 sits on grid index 2 = T/2^k: released iff Z >= 0
    assert pos.map((1, 0.75, 0.75))[1] == pytest.approx(1 - laplace_tail(1, grid_scale))


KEYS = 40_000  # the closest wrong law (× 1.3 on the coarse grid) is 11 sd away
SCALE, THRESHOLD, VALUE = 2.0, -3, -1


def test_negative_threshold_release_rate_and_delta() -> None:
    """A key of value −1 (= −l∞) at T = −3 is kept iff Z <= −2: Pr[Z >= 2] = a²/(1 + a).

    n = 40 000 independent keys, α = ALPHA (two-sided binomial test).  The δ the map charges
    for (1, 1, 1) must cover the observed rate; OpenDP 0.16's δ, Pr[Z >= |T| − l∞ + 1], is
    below it (the difference listed in docs/differences.md).  Scale × 0.7 and × 1.3 give rates
    about 32 and 22 standard deviations away and must be rejected.
    """
    m = dp.m.make_laplace_threshold(DOM, L01, scale=SCALE, threshold=THRESHOLD)
    out = m({f"k{i}": VALUE for i in range(KEYS)})
    hits = len(out)
    assert all(v <= THRESHOLD for v in out.values())
    p = laplace_tail(2, SCALE)
    check_binomial(hits, KEYS, p, [laplace_tail(2, SCALE * f) for f in (0.7, 1.3)])
    delta = m.map((1, 1, 1))[1]
    assert delta >= p and delta == pytest.approx(p, rel=1e-12)
    opendp_delta = laplace_tail(3, SCALE)  # Pr[Z >= |T| − l∞ + 1]
    p_opendp = stats.binomtest(hits, KEYS, opendp_delta, alternative="greater").pvalue
    power = binom_power_one_sided(KEYS, p, opendp_delta, "greater")
    assert_rejects(p_opendp, power, "(OpenDP's delta below the release rate)")


def test_negative_float_threshold_release_rate_on_a_coarse_grid() -> None:
    """Floats at k = −1: −0.75 rounds to grid index −1 and is kept at T = −1 iff −1 + Z <= −2,
    Z ~ 𝓛_ℤ(scale/2^k = 2): probability Pr[Z >= 1] = a/(1 + a), which is exactly the δ charged
    at l∞ = 0.75.  n = 40 000 keys, α = ALPHA; scale × 0.7 and × 1.3 are 20 and 11 standard
    deviations away and must be rejected (at 20 000 keys the × 1.3 control, 8 sd away, failed
    to be rejected at α = 1e-9 in an estimated 3% of runs)."""
    m = dp.m.make_laplace_threshold(FDOM, FL01, scale=1.0, threshold=-1.0, k=-1)
    out = m({f"k{i}": -0.75 for i in range(KEYS)})
    assert all(v <= -1.0 and (2 * v).is_integer() for v in out.values())
    p = laplace_tail(1, 2.0)
    check_binomial(len(out), KEYS, p, [laplace_tail(1, 2.0 * f) for f in (0.7, 1.3)])
    assert m.map((1, 0.75, 0.75))[1] >= p


# ----------------------------------------------------------------------------------------------
# count_by >> laplace_threshold; l01inf over symmetric distance


def test_count_by_outputs_l01inf_and_chains_into_a_threshold() -> None:
    space = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
    count_by = space >> dp.t.then_count_by()
    assert count_by.output_metric == dp.l01inf_distance(dp.absolute_distance(T=int))
    assert count_by.map(3) == (3, 3, 3)
    hist = count_by >> dp.m.then_laplace_threshold(scale=1.0, threshold=10)
    eps, delta = hist.map(1)
    assert eps == 1.0 and 0 < delta < 1e-3
    assert sorted(hist(["a"] * 100 + ["b"])) == ["a"]
    noise = count_by >> dp.m.then_noise_threshold(
        dp.approximate(dp.max_divergence()), scale=1.0, threshold=10
    )
    assert noise.map(1) == (eps, delta)


def test_count_by_check_compares_triples_componentwise() -> None:
    t = dp.t.make_count_by(dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance())
    assert t.check(2, (2, 2, 2))
    assert not t.check(2, (3, 0, 0))  # lexicographically larger, but l1 and l∞ are not covered
    assert not t.check(2, (2, 2, 1))


def test_l01inf_over_symmetric_distance() -> None:
    metric = dp.l01inf_distance(dp.symmetric_distance())
    assert repr(metric) == "L01InfDistance(SymmetricDistance())"
    assert metric.distance_type == "(u32, u32, u32)"
    assert metric == dp.l01inf_distance(dp.symmetric_distance())
    assert metric != dp.l01inf_distance(dp.absolute_distance(T="u32"))
    with pytest.raises(NotImplementedForType):
        dp.l01inf_distance(dp.l1_distance(T=int))  # type: ignore[arg-type]
    # a symmetric-distance inner metric is not what the threshold mechanisms measure
    with pytest.raises(MetricMismatch):
        dp.m.make_laplace_threshold(DOM, metric, scale=1.0, threshold=5)


def test_same_maps_as_opendp_up_to_the_documented_unit() -> None:
    """OpenDP's δ is Pr[Z >= |T| − l∞ + 1]; ours Pr[Z >= |T| − l∞] (docs/differences.md): our
    δ at threshold T equals OpenDP's at T − 1 (positive) or T + 1 (negative); ε is the same."""
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    o_space = (
        odp.map_domain(odp.atom_domain(T=str), odp.atom_domain(T=int)),
        odp.l01inf_distance(odp.absolute_distance(T=int)),
    )
    for t in (-10, -4, 5, 12):
        ours = dp.m.make_laplace_threshold(DOM, L01, scale=2.0, threshold=t).map((1, 1, 1))
        shifted = t - 1 if t > 0 else t + 1
        theirs = odp.m.make_laplace_threshold(*o_space, scale=2.0, threshold=shifted).map((1, 1, 1))
        assert ours[0] == theirs[0]
        assert ours[1] == pytest.approx(theirs[1], rel=1e-9)
