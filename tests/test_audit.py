"""The empirical privacy auditor (opendp_lite.audit).

* its Clopper–Pearson bounds agree with scipy's beta quantiles and are never on the wrong side;
* its coverage holds: on a mechanism whose ε is known exactly, the bound exceeds the truth in
  at most a (1 − confidence) share of audits, and a too-low confidence visibly breaks that;
* acceptance: on built-in mechanisms the bound stays <= map(d_in); on broken ones (noise scale
  halved or ×0.7, naive numpy float Laplace, a sum with understated sensitivity) it exceeds
  the claim at >= 95% confidence, while a loose-but-sound one (scale ×1.3) is not flagged;
* typed errors.

The default run is reduced and seeded (``scripted_randomness``), hence deterministic; the full
sweep with the OS source is behind ``slow``.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

import opendp_lite.audit as audit
import opendp_lite.prelude as dp
from opendp_lite import _arith
from opendp_lite.errors import FailedMap, InvalidParameter, NotImplementedForType, NotInDomain
from opendp_lite.measurements.threshold import l01inf_distance
from opendp_lite.samplers import rng
from tests.conftest import scaled

# ----------------------------------------------------------------------------------------------
# helpers


@contextmanager
def seeded(seed: bytes) -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with rng.scripted_randomness(seed=seed):
            yield


def rr_draw(truth_quarters: int) -> Callable[[Any, int], np.ndarray]:
    """Vectorised randomized response on a bit, truthful w.p. truth_quarters/4 (exact, via rng)."""

    def draw(x: Any, n: int) -> np.ndarray:
        u = rng.fill_uint64(n) & np.uint64(3)
        truthful = u < np.uint64(truth_quarters)
        return np.where(truthful, bool(x), not bool(x))

    return draw


def rr_measurement(claimed: float) -> Any:
    dp.enable_features("honest-but-curious")
    return dp.m.make_user_measurement(
        dp.atom_domain(T=bool),
        dp.discrete_distance(),
        dp.max_divergence(),
        lambda b: b,  # the releases come from rr_draw
        lambda d: claimed * d,
    )


F64 = (dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float))
I64 = (dp.atom_domain(T=int), dp.absolute_distance(T=int))
VI = dp.vector_domain(dp.atom_domain(T=int))
VF = dp.vector_domain(dp.atom_domain(T=float, nan=False))
SD = dp.symmetric_distance()


def builtin_cases() -> list[tuple[str, Any, Any, Any, Any, dict[str, Any]]]:
    """(name, measurement, x, x′, d_in, audit kwargs) for each built-in scalar mechanism."""
    dp.enable_features("honest-but-curious")  # the exponential mechanism's scorer is user code
    m = dp.m
    cases: list[tuple[str, Any, Any, Any, Any, dict[str, Any]]] = [
        ("laplace_f64", m.make_laplace(*F64, scale=1.0), 0.0, 1.0, 1.0, {}),
        ("laplace_f64_k-2", m.make_laplace(*F64, scale=1.0, k=-2), 0.1, 1.1, 1.0, {}),
        ("laplace_i64", m.make_laplace(*I64, scale=2.0), 0, 1, 1, {}),
        ("geometric_bounded", m.make_geometric(*I64, scale=1.0, bounds=(0, 3)), 0, 1, 1, {}),
        ("gaussian_f64", m.make_gaussian(*F64, scale=1.0), 0.0, 1.0, 1.0, {"delta": 1e-6}),
        ("gaussian_i64", m.make_gaussian(*I64, scale=1.0), 0, 1, 1, {"delta": 1e-6}),
        (
            "laplace_vec_first",
            m.make_laplace(
                dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float), 1.0
            )
            >> (lambda v: float(v[0])),
            [0.0, 5.0],
            [1.0, 5.0],
            1.0,
            {},
        ),
        ("randomized_response_bool", m.make_randomized_response_bool(0.75), True, False, 1, {}),
        ("randomized_response", m.make_randomized_response(["a", "b", "c"], 0.6), "a", "b", 1, {}),
        ("randomized_response_coins", m.make_randomized_response_coins(), True, False, 1, {}),
        (
            "noisy_max",
            m.make_noisy_max(VI, dp.linf_distance(T=int), dp.max_divergence(), 2.0),
            [1, 0, 0],
            [0, 0, 0],
            1,
            {},
        ),
        (
            "report_noisy_max_gumbel",
            m.make_report_noisy_max_gumbel(VI, dp.linf_distance(T=int), 2.0),
            [1, 0, 0],
            [0, 0, 0],
            1,
            {},
        ),
        (
            "canonical_noise",
            m.make_canonical_noise(*F64, d_in=1.0, d_out=(1.0, 0.0)),
            0.0,
            1.0,
            1.0,
            {},
        ),
        (
            "private_quantile",
            m.make_private_quantile(
                VF, SD, dp.max_divergence(), [0.0, 0.25, 0.5, 0.75, 1.0], alpha=0.5, scale=2.0
            ),
            [0.1, 0.2, 0.4, 0.6, 0.9],
            [0.1, 0.2, 0.4, 0.6, 0.9, 0.95],
            1,
            {},
        ),
        (
            "exponential",
            m.make_exponential(VI, SD, range(5), _closeness, sensitivity=1, scale=2.0),
            [0, 1, 2, 3, 4],
            [0, 1, 2, 3, 4, 4],
            1,
            {},
        ),
        (
            "sparse_vector>>one_query",
            m.make_sparse_vector(
                VI,
                SD,
                d_in=1,
                query_sensitivity=1,
                threshold=3,
                threshold_scale=2.0,
                query_scale=4.0,
            )
            >> (lambda qbl: qbl(_total())),
            [1, 1, 1],
            [1, 1, 1, 1],
            1,
            {},
        ),
        (
            "laplace_threshold>>count_a",
            m.make_laplace_threshold(
                dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int)),
                l01inf_distance(dp.absolute_distance(T=int)),
                scale=1.0,
                threshold=5,
            )
            >> (lambda counts: counts.get("a", -1)),
            {"a": 6, "b": 20},
            {"b": 20},
            (1, 6, 6),
            {},
        ),
    ]
    return cases


def _closeness(data: Any, c: int) -> float:
    return -abs(sum(1 for v in data if v <= c) - len(data) // 2)


def _total() -> Any:
    dp.enable_features("honest-but-curious")
    return dp.t.make_user_transformation(
        VI,
        SD,
        dp.atom_domain(T=int),
        dp.absolute_distance(T=int),
        lambda v: int(v.sum()),
        lambda d: d,
    )


N_BUILTIN = 17


def broken_cases() -> list[tuple[str, Any, Any, Any, Any]]:
    """(name, measurement, x, x′, d_in): each claims less ε than it spends."""
    dp.enable_features("honest-but-curious")
    lap1 = dp.m.make_laplace(*F64, scale=1.0)
    halved = dp.m.make_laplace(*F64, scale=0.5)
    shrunk = dp.m.make_laplace(*F64, scale=0.7)
    gen = np.random.default_rng()  # allowed here only as the naive control

    def naive_laplace(x: float) -> float:
        return float(x + gen.laplace(0.0, 1.0))

    bounded = dp.vector_domain(dp.atom_domain(bounds=(0.0, 10.0)))
    understated_sum = dp.t.make_user_transformation(
        bounded,
        dp.symmetric_distance(),
        dp.atom_domain(T=float, nan=False),
        dp.absolute_distance(T=float),
        lambda v: float(np.sum(v)),
        lambda d: float(d),  # the truth is 10·d: values lie in [0, 10]
    ) >> dp.m.make_laplace(*F64, scale=2.0)
    mk = dp.m.make_user_measurement
    return [
        ("scale_halved", mk(*F64, dp.max_divergence(), halved.function, lap1.map), 0.0, 1.0, 1.0),
        ("scale_x0.7", mk(*F64, dp.max_divergence(), shrunk.function, lap1.map), 0.0, 1.0, 1.0),
        (
            "naive_numpy_laplace",
            mk(*F64, dp.max_divergence(), naive_laplace, lambda d: d / 1.0),
            0.0,
            1.0,
            1.0,
        ),
        ("understated_sum", understated_sum, [0.0] * 4, [0.0] * 4 + [10.0], 1),
    ]


# ----------------------------------------------------------------------------------------------
# Clopper–Pearson


CP_CASES = [
    (0, 100, 0.05),
    (1, 100, 0.05),
    (5, 100, 0.025),
    (100, 100, 0.05),
    (500, 500_000, 0.0005),
    (250_000, 500_000, 0.001),
    (499_999, 500_000, 0.01),
    (3, 1_000_000, 0.025),
]


@pytest.mark.parametrize(("k", "n", "alpha"), CP_CASES)
def test_clopper_pearson_matches_scipy_and_is_conservative(k: int, n: int, alpha: float) -> None:
    stats = pytest.importorskip("scipy.stats")
    lo, hi = audit.clopper_pearson(k, n, alpha)
    ref_lo = 0.0 if k == 0 else float(stats.beta.ppf(alpha, k, n - k + 1))
    ref_hi = 1.0 if k == n else float(stats.beta.ppf(1 - alpha, k + 1, n - k))
    assert lo <= ref_lo and hi >= ref_hi  # outward
    assert lo == pytest.approx(ref_lo, rel=1e-8, abs=1e-300)
    assert hi == pytest.approx(ref_hi, rel=1e-8)


def test_clopper_pearson_rejects_bad_arguments() -> None:
    for k, n, a in [(-1, 10, 0.05), (11, 10, 0.05), (0, 0, 0.05), (1, 10, 0.0), (1, 10, 1.0)]:
        with pytest.raises(InvalidParameter):
            audit.clopper_pearson(k, n, a)


def test_granularity_feature() -> None:
    y = np.array([1.0, 0.5, 3.0, 0.1, 0.0, 2.0**-1074, -0.75, np.inf, np.nan])
    g = audit._granularity(y)
    assert g.tolist() == [0.0, -1.0, 0.0, -55.0, 2000.0, -1074.0, -2.0, 3000.0, 3000.0]


# ----------------------------------------------------------------------------------------------
# Coverage: the bound exceeds a known ε in at most a (1 − confidence) share of audits


def _violations(audits: int, confidence: float, seed: bytes) -> int:
    eps_true = math.log(3.0)  # truthful w.p. 3/4: the likelihood ratio is exactly 3
    meas = rr_measurement(_arith.log_up(3))
    draw = rr_draw(3)
    count = 0
    with seeded(seed):
        for _ in range(audits):
            r = audit.audit(meas, True, False, 1, samples=2000, confidence=confidence, draw=draw)
            count += r.epsilon_lower > eps_true
    return count


def test_coverage_on_a_tight_mechanism() -> None:
    # α = 0.2 per audit; 100 audits: Pr[Bin(100, 0.2) > 34] < 1e-3, so 34 is the test bound.
    assert _violations(100, 0.8, b"coverage") <= 34


def test_coverage_test_has_teeth() -> None:
    # At confidence 0.02 the CP bounds are near the point estimates: about half the audits
    # overshoot, far above what the test above allows.
    assert _violations(100, 0.02, b"coverage") > 34


# ----------------------------------------------------------------------------------------------
# Acceptance: built-in mechanisms are never flagged, broken ones always


@pytest.mark.parametrize("case", range(N_BUILTIN))
def test_builtin_mechanism_not_flagged(case: int) -> None:
    name, meas, x, xp, d_in, kw = builtin_cases()[case]
    with seeded(b"builtin-" + name.encode()):
        r = audit.assert_not_violated(meas, x, xp, d_in, samples=4000, **kw)
    assert 0.0 <= r.epsilon_lower <= r.claimed_epsilon


def test_builtin_case_count() -> None:
    assert len(builtin_cases()) == N_BUILTIN


@pytest.mark.parametrize("case", range(4))
def test_broken_control_flagged(case: int) -> None:
    name, meas, x, xp, d_in = broken_cases()[case]
    with seeded(b"broken-" + name.encode()), pytest.raises(audit.PrivacyViolation) as err:
        audit.assert_not_violated(meas, x, xp, d_in, samples=20_000, confidence=0.95)
    r = err.value.result
    assert r.violated and r.epsilon_lower > r.claimed_epsilon, (name, r)


def test_loose_but_sound_not_flagged() -> None:
    # scale ×1.3 with the claim of scale 1: more noise than claimed is still private
    dp.enable_features("honest-but-curious")
    loose = dp.m.make_laplace(*F64, scale=1.3)
    claim = dp.m.make_laplace(*F64, scale=1.0)
    meas = dp.m.make_user_measurement(*F64, dp.max_divergence(), loose.function, claim.map)
    with seeded(b"loose"):
        r = audit.assert_not_violated(meas, 0.0, 1.0, 1.0, samples=8000)
    assert r.epsilon_lower < 1 / 1.3 + 0.05


@pytest.mark.slow
@pytest.mark.parametrize("case", range(N_BUILTIN))
def test_builtin_sweep_slow(case: int) -> None:
    _name, meas, x, xp, d_in, kw = builtin_cases()[case]
    r = audit.assert_not_violated(meas, x, xp, d_in, samples=scaled(50_000), **kw)
    assert r.epsilon_lower <= r.claimed_epsilon


@pytest.mark.slow
@pytest.mark.parametrize("case", range(4))
def test_broken_sweep_slow(case: int) -> None:
    name, meas, x, xp, d_in = broken_cases()[case]
    r = audit.audit(meas, x, xp, d_in, samples=scaled(50_000), confidence=0.999)
    assert r.violated, (name, r)


@pytest.mark.slow
def test_auditor_overhead_at_a_million_samples() -> None:
    # The auditor's own work (event search + held-out test) on 10^6 releases per input, with
    # the releases precomputed: measured ~0.2 s; 10 s is the acceptance bound.
    n = 1_000_000
    ints = rng.fill_uint64(2 * n)
    pre = {0.0: (ints[:n] >> np.uint64(11)) * 2.0**-53, 1.0: (ints[n:] >> np.uint64(11)) * 2.0**-53}
    meas = dp.m.make_laplace(*F64, scale=1.0)
    t = time.perf_counter()
    r = audit.audit(meas, 0.0, 1.0, 1.0, samples=n, draw=lambda x, k: pre[x][:k])
    assert time.perf_counter() - t < 10.0
    assert r.samples == n


# ----------------------------------------------------------------------------------------------
# Typed errors


def test_typed_errors() -> None:
    meas = dp.m.make_laplace(*F64, scale=1.0)
    calls = []

    def draw(x: Any, n: int) -> list[float]:
        calls.append(x)
        return [0.0] * n

    bad_kwargs: list[dict[str, Any]] = [
        {"samples": 3},
        {"samples": True},
        {"samples": 10.0},
        {"confidence": 1.0},
        {"confidence": 0.0},
        {"confidence": float("nan")},
        {"delta": 0.0},
        {"delta": 1.5},
        {"selection_fraction": 1.0},
    ]
    for kw in bad_kwargs:
        with pytest.raises(InvalidParameter):
            audit.audit(meas, 0.0, 1.0, 1.0, draw=draw, **kw)
    with pytest.raises(FailedMap):
        audit.audit(meas, 0.0, 1.0, -1.0, draw=draw)
    with pytest.raises(FailedMap):
        audit.audit(meas, 0.0, 1.0, float("nan"), draw=draw)
    with pytest.raises(NotInDomain):
        audit.audit(meas, 0.0, float("nan"), 1.0, draw=draw)
    assert calls == []  # nothing was drawn before the checks
    with pytest.raises(InvalidParameter):
        audit.audit(meas, 0.0, 1.0, 1.0, samples=10, draw=lambda x, n: [0.0] * (n - 1))


def test_unsupported_measure_and_release() -> None:
    dp.enable_features("honest-but-curious")
    renyi = dp.m.make_user_measurement(
        *F64, dp.renyi_divergence(), lambda x: x, lambda d: lambda a: a * d
    )
    with pytest.raises(NotImplementedForType):
        audit.audit(renyi, 0.0, 1.0, 1.0, samples=10)
    vec = dp.m.make_laplace(
        dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float), 1.0
    )
    with pytest.raises(NotImplementedForType, match="scalar"):
        audit.audit(vec, [0.0, 0.0], [1.0, 0.0], 1.0, samples=10)


def test_string_releases_are_audited_as_categories() -> None:
    dp.enable_features("honest-but-curious")
    meas = dp.m.make_user_measurement(
        dp.atom_domain(T=str),
        dp.discrete_distance(),
        dp.max_divergence(),
        lambda s: s,
        lambda d: 0.1,
    )  # deterministic: the claim ε = 0.1 is a lie, found as an event y == "a"
    r = audit.audit(meas, "a", "b", 1, samples=1000)
    assert r.violated and "category" in r.event


def _leaky_laplace(delta_claim: float) -> Any:
    """Release x itself w.p. 1/8, else x + Laplace(1): (1, 1/8)-DP, claiming (1, delta_claim)."""
    from opendp_lite.samplers.uniform import sample_uniform_below

    dp.enable_features("honest-but-curious")
    lap = dp.m.make_laplace(*F64, scale=1.0)
    return dp.m.make_user_measurement(
        *F64,
        dp.approximate(dp.max_divergence()),
        lambda x: x if sample_uniform_below(8) == 0 else lap.function(x),
        lambda d: (1.0 * d, delta_claim),
    )


def test_approximate_dp_claims_are_audited_with_their_delta() -> None:
    with seeded(b"leaky-low"), pytest.raises(audit.PrivacyViolation) as err:
        audit.assert_not_violated(_leaky_laplace(0.01), 0.0, 1.0, 1.0, samples=8000)
    assert err.value.result.delta == 0.01 and "==" in err.value.result.event
    with seeded(b"leaky-high"):
        r = audit.assert_not_violated(_leaky_laplace(0.2), 0.0, 1.0, 1.0, samples=8000)
    assert r.delta == 0.2 and r.epsilon_lower <= 1.0
