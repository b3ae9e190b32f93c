"""Sensitivity sampling: the data-generating laws, the paper's (m, k), the order statistic,
the random-DP typing and its explicit opt-in."""

from __future__ import annotations

import dataclasses
import io
import math
import warnings
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendp_lite.prelude as dp
from opendp_lite import _arith
from opendp_lite.errors import (
    FailedMap,
    FeatureNotEnabled,
    InvalidParameter,
    MeasureMismatch,
    NotImplementedForType,
)
from opendp_lite.samplers.rng import scripted_randomness
from opendp_lite.sensitivity import (
    Empirical,
    GaussianMixture,
    L1Norm,
    L2Norm,
    Normal,
    ProgressBar,
    RandomDivergence,
    SampledSensitivity,
    SensitivitySampler,
    Uniform,
    UserDistribution,
    lambert_w_minus1,
    make_random_dp,
    make_random_dp_as_worst_case,
    random_max_divergence,
    sample_sensitivity,
    sampler_config,
)
from tests.stat._reference import assert_fits, assert_within, check_cells, check_continuous, z_bound

scipy_stats = pytest.importorskip("scipy.stats")


HEIGHTS = [[178.0, 7.0], [162.0, 6.5]]


def _mixture_cdf(means: list[float], stds: list[float], weights: list[float]):  # type: ignore[no-untyped-def]
    def cdf(x):  # type: ignore[no-untyped-def]
        return sum(
            w * scipy_stats.norm.cdf(x, m, s) for m, s, w in zip(means, stds, weights, strict=True)
        )

    return cdf


# -- the closed form ------------------------------------------------------------------------


def test_expected_sensitivity_of_the_height_mixture_is_11_99() -> None:
    value = GaussianMixture(HEIGHTS, [0.5, 0.5]).expected_abs_difference()
    assert round(value, 2) == 11.99
    # the seed's own formula, term by term
    s2 = 7.0**2 + 6.5**2
    m = 16 / math.sqrt(2 * s2)
    seed = 7 + 6.5 + math.sqrt(2 * s2) * (math.exp(-(m**2)) + math.sqrt(math.pi) * m * math.erf(m))
    seed /= 2 * math.sqrt(math.pi)
    assert value == pytest.approx(seed, rel=1e-14)


def test_closed_form_matches_numerical_integration_for_three_components() -> None:
    integrate = pytest.importorskip("scipy.integrate")
    mix = GaussianMixture([[0.0, 1.0], [3.0, 2.0], [-1.0, 0.5]], [0.2, 0.5, 0.3])
    cdf = _mixture_cdf(list(mix.means), list(mix.stds), list(mix.weights))
    # E|X - X'| = 2 ∫ F(x) (1 - F(x)) dx for i.i.d. X, X' with CDF F
    val, _ = integrate.quad(lambda x: 2 * cdf(x) * (1 - cdf(x)), -30, 30, limit=200)
    assert mix.expected_abs_difference() == pytest.approx(val, rel=1e-6)


# -- the paper's m and k --------------------------------------------------------------------


def test_lambert_w_minus1_inverts_w_exp_w() -> None:
    for x in [-1 / math.e + 1e-12, -0.3, -0.1, -0.015, -1e-6, -1e-100]:
        w = lambert_w_minus1(x)
        assert w <= -1
        assert w * math.exp(w) == pytest.approx(x, rel=1e-9, abs=1e-300)


def test_sampler_config_for_gamma_005() -> None:
    cfg = sampler_config(gamma=0.05)
    assert (cfg.m, cfg.k) == (1305, 1305)
    # the guarantee: rho + sqrt(ln(1/rho)/(2m)) <= gamma, and m is minimal for this rho
    bound = cfg.rho + math.sqrt(math.log(1 / cfg.rho) / (2 * cfg.m))
    assert bound <= 0.05
    assert cfg.rho + math.sqrt(math.log(1 / cfg.rho) / (2 * (cfg.m - 1))) > 0.05


def test_sampler_config_given_m_and_both() -> None:
    only_m = sampler_config(m=1000)
    assert only_m.k == 1000
    assert only_m.gamma >= only_m.rho + math.sqrt(math.log(1 / only_m.rho) / 2000)
    both = sampler_config(gamma=0.1, m=2000)
    assert both.k < 2000
    assert both.rho + (1 - both.k / 2000) + math.sqrt(math.log(1 / both.rho) / 4000) <= 0.1
    assert both.rho + (1 - (both.k - 1) / 2000) + math.sqrt(math.log(1 / both.rho) / 4000) > 0.1
    with pytest.raises(InvalidParameter, match="too small"):
        sampler_config(gamma=0.01, m=100)


@pytest.mark.parametrize("gamma", [0.0, 1.0, -0.1, 1.5, math.nan, math.inf])
def test_gamma_outside_open_unit_interval_is_refused(gamma: float) -> None:
    with pytest.raises(InvalidParameter, match="gamma"):
        sampler_config(gamma=gamma)
    with pytest.raises(InvalidParameter, match="gamma"):
        sample_sensitivity(lambda d: d[0], "l1", Normal(0.0, 1.0), 1, gamma=gamma)
    with pytest.raises(InvalidParameter, match="gamma"):
        random_max_divergence(gamma)


# -- distributions --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "weights", [[0.5, 0.6], [0.3, 0.3], [1.2, -0.2], [0.5], [math.nan, 0.5]], ids=str
)
def test_mixture_weights_must_sum_to_one(weights: list[float]) -> None:
    with pytest.raises(InvalidParameter):
        GaussianMixture(HEIGHTS, weights)


def test_bad_distribution_parameters_are_refused() -> None:
    with pytest.raises(InvalidParameter):
        Normal(0.0, -1.0)
    with pytest.raises(InvalidParameter):
        Uniform(2.0, 1.0)
    with pytest.raises(InvalidParameter):
        GaussianMixture([[0.0, -1.0]], [1.0])
    with pytest.raises(InvalidParameter):
        Empirical([])
    with pytest.raises(InvalidParameter):
        UserDistribution(lambda n: [0.0]).sample(3)
    with pytest.raises(InvalidParameter):
        sample_sensitivity(lambda d: d[0], "l3", Normal(0.0, 1.0), 1, gamma=0.1)
    with pytest.raises(InvalidParameter):
        sample_sensitivity(lambda d: d[0], "l1", Normal(0.0, 1.0), 0, gamma=0.1)


N_LAW = 20_000


def _ks_p(sample: np.ndarray, cdf) -> float:  # type: ignore[no-untyped-def]
    return float(scipy_stats.kstest(sample, cdf).pvalue)


def test_normal_law_and_rejects_wrong_scale() -> None:
    x = Normal(3.0, 2.0).sample(N_LAW)
    wrong = [scipy_stats.norm(3.0, 2.0 * f).cdf for f in (0.7, 1.3)]
    check_continuous(x, scipy_stats.norm(3.0, 2.0).cdf, wrong, symmetric_about=3.0)


def test_uniform_law_and_rejects_wrong_width() -> None:
    x = Uniform(-1.0, 3.0).sample(N_LAW)
    wrong = [scipy_stats.uniform(-1.0, 4.0 * f).cdf for f in (0.7, 1.3)]
    check_continuous(x, scipy_stats.uniform(-1.0, 4.0).cdf, wrong)


def test_mixture_law_and_rejects_wrong_scale() -> None:
    x = GaussianMixture(HEIGHTS, [0.5, 0.5]).sample(N_LAW)
    wrong = [_mixture_cdf([178, 162], [4.9, 4.55], [0.5, 0.5])]
    wrong.append(_mixture_cdf([178, 162], [9.1, 8.45], [0.5, 0.5]))
    check_continuous(x, _mixture_cdf([178, 162], [7, 6.5], [0.5, 0.5]), wrong)


def test_empirical_bootstrap_is_uniform_over_records() -> None:
    data = np.array([10.0, 20.0, 30.0, 40.0, 50.0])
    draws = Empirical(data).sample(N_LAW)
    counts = np.array([(draws == v).sum() for v in data])
    assert counts.sum() == N_LAW
    check_cells(counts, [0.2] * 5, [[0.14, 0.26, 0.2, 0.2, 0.2]])


def test_all_randomness_comes_from_the_rng_module() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with scripted_randomness(seed=b"s"):
            a = sample_sensitivity(lambda d: d[0], "l1", Normal(0.0, 1.0), 1, m=50)
        with scripted_randomness(seed=b"s"):
            b = sample_sensitivity(lambda d: d[0], "l1", Normal(0.0, 1.0), 1, m=50)
    assert np.array_equal(a.samples, b.samples)


# -- the sampler -----------------------------------------------------------------------------


def test_sampled_mean_matches_closed_form_and_rejects_wrong_scale() -> None:
    m = 40_000
    s = sample_sensitivity(lambda d: d[0], L1Norm(), GaussianMixture(HEIGHTS, [0.5, 0.5]), 1, m=m)
    se = float(np.std(s.samples)) / math.sqrt(m)
    z = z_bound()
    assert_within(s.mean, 11.99392058837085, se)
    for factor in (0.7, 1.3):
        wrong = GaussianMixture([[178.0, 7.0 * factor], [162.0, 6.5 * factor]], [0.5, 0.5])
        assert abs(s.mean - wrong.expected_abs_difference()) > z * se


def test_sensitivity_is_the_kth_order_statistic() -> None:
    s = sample_sensitivity(lambda d: d.sum(), "l1", Uniform(0.0, 1.0), 3, gamma=0.1, m=2000)
    assert s.k < s.m
    assert s.sensitivity == s.samples[s.k - 1]
    assert np.all(np.diff(s.samples) >= 0)
    assert s.mean == pytest.approx(float(np.mean(s.samples)))
    # a sum over n records moves by |x - x'| when one record is replaced: E|U - U'| = 1/3
    assert s.mean == pytest.approx(1 / 3, abs=5 * float(np.std(s.samples)) / math.sqrt(s.m))


def test_neighbours_share_all_but_one_record() -> None:
    calls: list[np.ndarray] = []

    def query(d: np.ndarray) -> float:
        calls.append(d.copy())
        return 0.0

    sample_sensitivity(query, "l1", Normal(0.0, 1.0), 4, m=400)
    assert len(calls) == 800
    where = []
    for a, b in zip(calls[::2], calls[1::2], strict=True):
        assert len(a) == len(b) == 4
        differ = np.flatnonzero(a != b)
        assert len(differ) == 1  # one record replaced, all others shared
        where.append(int(differ[0]))
    # the replaced position is uniform over the 4 positions (always the last would sample a
    # query reading position 0 as insensitive)
    counts = np.bincount(where, minlength=4)
    assert_fits(scipy_stats.chisquare(counts).pvalue)
    assert counts[:3].sum() > 0  # not always the last position


def test_a_query_reading_by_position_is_sampled_at_every_position() -> None:
    # with x / x′ always last, the query d[0] would be sampled as Δ̂ = 0
    s = sample_sensitivity(lambda d: float(d[0]), "l1", Normal(0.0, 1.0), 2, m=400)
    # G = |x - x'| when the replaced position is 0 (Pr 1/2), else 0: E[G] = (2/√π)/2 ≈ 0.564
    assert s.sensitivity > 0
    assert abs(s.mean - 1 / math.sqrt(math.pi)) < 0.2


def test_l2_norm_on_vector_queries() -> None:
    assert L2Norm().compute([3.0, 0.0], [0.0, 4.0]) == 5.0
    assert L1Norm().compute([3.0, 0.0], [0.0, 4.0]) == 7.0
    s = sample_sensitivity(lambda d: np.array([d[0], -d[0]]), "l2", Uniform(0, 1), 1, m=100)
    assert s.norm == "l2"
    assert np.all(s.samples <= math.sqrt(2))


def test_seed_style_interface_unpacks() -> None:
    sensitivity, mean = SensitivitySampler().sample_sensitivity(
        lambda d: d[0], L1Norm(), GaussianMixture(HEIGHTS, np.ones(2) / 2.0), 1, gamma=0.05
    )
    assert sensitivity >= mean > 0


def test_user_callable_distribution() -> None:
    s = sample_sensitivity(lambda d: d[0], "l1", lambda n: np.full(n, 2.0), 1, m=10)
    assert s.sensitivity == 0.0 and s.mean == 0.0


def test_progress_bar_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    sample_sensitivity(lambda d: d[0], "l1", Normal(0.0, 1.0), 1, m=200, progress=True)
    err = capsys.readouterr().err
    assert "sensitivity sampling" in err and "100% 200/200" in err
    sample_sensitivity(lambda d: d[0], "l1", Normal(0.0, 1.0), 1, m=200, progress=False)
    assert capsys.readouterr().err == ""
    buf = io.StringIO()
    bar = ProgressBar(10, file=buf, width=10)
    bar.update(5)
    assert "[#####-----]  50% 5/10" in buf.getvalue()


# -- random DP typing -----------------------------------------------------------------------


def _random_dp_measurement(gamma: float = 0.1):  # type: ignore[no-untyped-def]
    s = sample_sensitivity(lambda d: float(d.mean()), "l1", Normal(170.0, 10.0), 10, gamma=gamma)
    lap = dp.m.make_laplace(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=1.0
    )
    meas = make_random_dp(
        dp.vector_domain(dp.atom_domain(T=float, nan=False), size=10),
        dp.change_one_distance(),
        lambda d: float(d.mean()),
        s,
        lap,
    )
    return s, lap, meas


def test_random_dp_measure_is_not_worst_case_dp() -> None:
    s, lap, meas = _random_dp_measurement()
    assert isinstance(meas.output_measure, RandomDivergence)
    assert meas.output_measure != dp.max_divergence()
    assert meas.output_measure == random_max_divergence(s.gamma)
    assert repr(meas.output_measure) == f"RandomMaxDivergence(gamma={s.gamma!r})"
    assert meas.map(1) == lap.map(s.sensitivity)
    assert meas.map(0) == 0.0
    with pytest.raises(FailedMap):
        meas.map(2)
    assert isinstance(meas([170.0] * 10), float)


def test_random_dp_refuses_to_compose_with_pure_dp_without_the_flag() -> None:
    _, _lap, meas = _random_dp_measurement()
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=10), dp.change_one_distance()
    dp.enable_features("honest-but-curious")  # for the stand-in pure-DP user measurement
    pure = dp.m.make_user_measurement(*space, dp.max_divergence(), lambda x: 0.0, lambda d: 0.5)
    with pytest.raises(MeasureMismatch):
        dp.c.make_basic_composition([pure, meas])
    with pytest.raises(FeatureNotEnabled):
        make_random_dp_as_worst_case(meas)
    dp.enable_features("random-dp")
    relabelled = make_random_dp_as_worst_case(meas)
    assert relabelled.output_measure == dp.max_divergence()
    both = dp.c.make_basic_composition([pure, relabelled])
    assert both.map(1) == pytest.approx(0.5 + meas.map(1))


def test_relabel_refuses_a_worst_case_measurement() -> None:
    dp.enable_features("random-dp")
    lap = dp.m.make_laplace(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=1.0
    )
    with pytest.raises(NotImplementedForType):
        make_random_dp_as_worst_case(lap)


def test_random_dp_checks_its_spaces() -> None:
    s = sample_sensitivity(lambda d: d[0], "l1", Normal(0.0, 1.0), 3, m=20)
    lap = dp.m.make_laplace(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=1.0
    )
    with pytest.raises(InvalidParameter, match="size"):
        make_random_dp(
            dp.vector_domain(dp.atom_domain(T=float, nan=False), size=4),
            dp.change_one_distance(),
            lambda d: d[0],
            s,
            lap,
        )
    with pytest.raises(NotImplementedForType):
        make_random_dp(
            dp.vector_domain(dp.atom_domain(T=float, nan=False), size=3),
            dp.symmetric_distance(),
            lambda d: d[0],
            s,
            lap,
        )
    with pytest.raises(InvalidParameter, match="n=1"):
        make_random_dp(
            dp.atom_domain(T=float, nan=False), dp.discrete_distance(), lambda x: x, s, lap
        )
    gauss = dp.m.make_gaussian(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=1.0
    )
    rz = make_random_dp(
        dp.vector_domain(dp.atom_domain(T=float, nan=False), size=3),
        dp.hamming_distance(),
        lambda d: float(d[0]),
        s,
        gauss,
    )
    assert repr(rz.output_measure).startswith("RandomZeroConcentratedDivergence(")


def test_sampled_sensitivity_covers_all_but_gamma_of_neighbour_pairs() -> None:
    # Pr[|X - X'| > Δ̂] must be <= (1 - k/m) + sqrt(ln(1/ρ)/(2m)) <= γ, except with prob. ρ
    mix = GaussianMixture(HEIGHTS, [0.5, 0.5])

    def tail(t: float) -> float:  # Pr[|X - X'| > t], exactly, for the height mixture
        total = 0.0
        for mi, si in ((178, 7.0), (162, 6.5)):
            for mj, sj in ((178, 7.0), (162, 6.5)):
                s = math.hypot(si, sj)
                total += 0.25 * (
                    scipy_stats.norm.sf((t - (mi - mj)) / s)
                    + scipy_stats.norm.cdf((-t - (mi - mj)) / s)
                )
        return total

    for gamma, m in ((0.05, None), (0.1, 2000)):
        tails = []
        for _ in range(20):
            s = sample_sensitivity(lambda d: d[0], "l1", mix, 1, gamma=gamma, m=m)
            tails.append(tail(s.sensitivity))
            assert tail(s.sensitivity) <= (1 - s.k / s.m) + math.sqrt(
                math.log(1 / s.rho) / (2 * s.m)
            )
        assert max(tails) <= gamma
    # the median instead of the chosen order statistic would not cover: the test can fail
    s = sample_sensitivity(lambda d: d[0], "l1", mix, 1, m=1000)
    assert tail(float(np.median(s.samples))) > 0.05


def test_random_dp_requires_the_norm_the_measurement_reads() -> None:
    s2 = sample_sensitivity(lambda d: np.array([d[0], d[1]]), "l2", Normal(0.0, 1.0), 2, m=50)
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=2), dp.change_one_distance()
    vec = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    lap_l1 = dp.m.make_laplace(vec, dp.l1_distance(T=float), scale=1.0)
    with pytest.raises(InvalidParameter, match="norm='l1'"):
        make_random_dp(*space, lambda d: d, s2, lap_l1)
    gauss_l2 = dp.m.make_gaussian(vec, dp.l2_distance(T=float), scale=1.0)
    assert make_random_dp(*space, lambda d: d, s2, gauss_l2).map(1) == gauss_l2.map(s2.sensitivity)


# -- norms: never below the exact distance ----------------------------------------------------

_A, _B = 1.0 + 2.0**-52, -(2.0**-54)  # fl(A − B) = A < |A − B| = 1 + 2^-52 + 2^-54


def _exact_sq(a: list[float], b: list[float]) -> Fraction:
    return sum(((Fraction(x) - Fraction(y)) ** 2 for x, y in zip(a, b, strict=True)), Fraction(0))


def test_norms_of_a_rounded_down_pair_are_not_below_the_exact_distance() -> None:
    exact = Fraction(_A) - Fraction(_B)
    assert Fraction(_A - _B) < exact  # the round-to-nearest difference is below it
    for norm in (L1Norm(), L2Norm()):
        assert Fraction(norm.compute(_A, _B)) >= exact
        assert Fraction(norm.compute([_A, 0.0], [_B, 0.0])) >= exact
        assert norm.compute(_A, _B) == _arith.up(_arith.q(exact))  # and rounded up once


def test_sampled_sensitivity_of_a_rounded_down_pair_is_not_below_the_exact_distance() -> None:
    # records A and B, each with probability 1/2: G = |A − B| on half of the pairs, so the
    # k = m order statistic of 1305 draws is that pair's distance (all but 2^-1305 of runs)
    s = sample_sensitivity(lambda d: float(d[0]), "l1", Empirical([_A, _B]), 1, gamma=0.05)
    assert s.k == s.m
    assert Fraction(s.sensitivity) >= Fraction(_A) - Fraction(_B)


_floats = st.floats(allow_nan=False, allow_infinity=False, width=64)
_pairs = st.integers(1, 6).flatmap(
    lambda n: st.tuples(
        st.lists(_floats, min_size=n, max_size=n), st.lists(_floats, min_size=n, max_size=n)
    )
)


@settings(max_examples=300, deadline=None)
@given(_pairs)
def test_l1_norm_is_the_exact_norm_rounded_up(pair: tuple[list[float], list[float]]) -> None:
    a, b = pair
    exact = sum((abs(Fraction(x) - Fraction(y)) for x, y in zip(a, b, strict=True)), Fraction(0))
    got = L1Norm().compute(np.array(a), np.array(b))
    assert got == _arith.up(_arith.q(exact))
    assert got == math.inf or Fraction(got) >= exact


@settings(max_examples=300, deadline=None)
@given(_pairs)
def test_l2_norm_is_the_exact_norm_rounded_up(pair: tuple[list[float], list[float]]) -> None:
    a, b = pair
    sq = _exact_sq(a, b)
    got = L2Norm().compute(np.array(a), np.array(b))
    assert got == math.inf or Fraction(got) ** 2 >= sq  # never below the exact norm
    assert got == _arith.sqrt_up(_arith.up(_arith.q(sq)))  # the exact square sum, rounded up


@settings(max_examples=300, deadline=None)
@given(_floats, _floats)
def test_scalar_norms_are_the_exact_distance_rounded_up(a: float, b: float) -> None:
    want = _arith.up(abs(_arith.q(a) - _arith.q(b)))
    assert L1Norm().compute(a, b) == L2Norm().compute(a, b) == want
    assert want == math.inf or Fraction(want) >= abs(Fraction(a) - Fraction(b))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-(2**70), 2**70), min_size=1, max_size=4))
def test_integer_outputs_are_not_rounded_through_floats(xs: list[int]) -> None:
    ys = [x + 1 for x in xs]  # |x − y| = 1 each, exactly, however large x is
    assert L1Norm().compute(np.array(xs, dtype=object), np.array(ys, dtype=object)) == len(xs)
    assert L1Norm().compute(xs[0], ys[0]) == 1.0
    assert Fraction(L2Norm().compute(xs, ys)) ** 2 >= len(xs)


# -- a SampledSensitivity is consistent or refused --------------------------------------------


def _fields(s: Any, **edits: Any) -> dict[str, Any]:
    out = {f.name: getattr(s, f.name) for f in dataclasses.fields(s)}
    out.update(edits)
    return out


def test_a_sampled_sensitivity_must_be_consistent_with_its_draws() -> None:
    s = sample_sensitivity(lambda d: d.sum(), "l1", Uniform(0.0, 1.0), 2, gamma=0.1, m=2000)
    assert SampledSensitivity(**_fields(s)).sensitivity == s.sensitivity
    bad = {
        "gamma below what (m, k, rho) certify": {"gamma": s.gamma / 2},
        "gamma of 0": {"gamma": 0.0},
        "sensitivity not the k-th sample": {"sensitivity": s.sensitivity / 2},
        "k outside 1..m": {"k": s.m + 1},
        "unsorted samples": {"samples": s.samples[::-1].copy()},
        "samples of the wrong length": {"samples": s.samples[:-1].copy()},
        "negative samples": {"samples": s.samples - 10.0, "sensitivity": s.sensitivity - 10.0},
        "rho above 1/2 (Massart's condition)": {"rho": 0.6},
        "an unknown norm": {"norm": "linf"},
    }
    for why, edits in bad.items():
        with pytest.raises(InvalidParameter):
            SampledSensitivity(**_fields(s, **edits))
            pytest.fail(why)


def test_random_dp_refuses_a_sensitivity_that_is_not_a_sampled_one() -> None:
    s = sample_sensitivity(lambda d: d.sum(), "l1", Uniform(0.0, 1.0), 2, gamma=0.1)
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=2), dp.change_one_distance()
    lap = dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), 1.0)

    class Forged:
        sensitivity, gamma, n, norm = 1e-12, 0.0, 2, "l1"

    with pytest.raises(InvalidParameter, match="SampledSensitivity"):
        make_random_dp(*space, lambda d: float(d.sum()), Forged(), lap)  # type: ignore[arg-type]
    assert make_random_dp(*space, lambda d: float(d.sum()), s, lap).map(1) == lap.map(s.sensitivity)


@settings(max_examples=60, deadline=None)
@given(
    st.one_of(st.none(), st.floats(0.01, 0.999)),
    st.one_of(st.none(), st.integers(1, 3000)),
)
def test_every_sampler_configuration_meets_massarts_condition(
    gamma: float | None, m: int | None
) -> None:
    # the one-sided DKW bound with Massart's constant needs exp(−2mτ²) = ρ <= 1/2
    if gamma is None and m is None:
        return
    try:
        config = sampler_config(gamma=gamma, m=m)
    except InvalidParameter:
        return  # m too small for gamma
    assert 0 < config.rho <= 0.5
    assert math.exp(-2 * config.m * math.log(1 / config.rho) / (2 * config.m)) <= 0.5
