"""The certified float decisions of ``samplers.fast`` agree with the exact path, lane by lane.

For each plan we draw a batch of attempts, take every lane the float64 bounds decided, and
re-decide it on the exact (gmpy2/MPFR) path from the *same bits* (completing R's unrevealed
bits at random, which the certificate covers).  Any disagreement is a certification bug.
"""

from __future__ import annotations

import math
import warnings

import gmpy2
import numpy as np
import pytest

from opendp_lite.samplers import fast
from opendp_lite.samplers.noise_ref import round_to_float
from opendp_lite.samplers.rng import scripted_randomness

PLANS = [
    ("laplace", gmpy2.mpq(1), 0),
    ("laplace", gmpy2.mpq(10), 0),
    ("laplace", gmpy2.mpq(1000), 0),
    ("laplace", gmpy2.mpq(3, 7), 0),
    ("gaussian", gmpy2.mpq(1), 0),
    ("gaussian", gmpy2.mpq(10), 0),
    ("gaussian", gmpy2.mpq(1000), 0),
    ("laplace", gmpy2.mpq(1), -1074),
    ("gaussian", gmpy2.mpq(5, 2), -1074),
    ("laplace", gmpy2.mpq(1), -149),
]


@pytest.fixture(autouse=True)
def _scripted():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with scripted_randomness(seed=b"certified"):
            yield


@pytest.mark.parametrize(("dist", "scale", "k"), PLANS)
def test_fast_decisions_agree_with_exact_path(dist, scale, k):
    p = fast._plan(fast._grid_scale(scale, k), dist)
    lanes = fast._draw_attempts(p, 600)
    decided = np.flatnonzero(~lanes.undecided)
    assert decided.size > 500  # the fast path decides almost every lane
    for i in decided.tolist():
        z = fast._exact_lane(p, lanes, i)
        assert (z is not None) == bool(lanes.accept[i]), (i, z)
        if z is not None and p.a <= 64:
            mag = (int(lanes.N[i]) << p.a) + int(lanes.Rtop[i])
            assert z == (mag if lanes.sign[i] > 0 else -mag)
        elif z is not None:
            assert abs(z) >> (p.a - 64) == (int(lanes.N[i]) << 64) + int(lanes.Rtop[i])


@pytest.mark.parametrize(
    ("x", "scale", "k", "T"),
    [
        (0.0, 1.0, -1074, "f64"),
        (1.0, 1e-3, -1074, "f64"),
        (-3.5e10, 1.0, -1074, "f64"),
        (0.0, 2.0, -149, "f32"),
        (1.25, 0.5, -149, "f32"),
        (0.3, 1.0, -2, "f64"),
        (2.0**53, 1.0, -1074, "f64"),  # binade boundaries: asymmetric rounding windows
        (-(2.0**52), 1.0, -1074, "f64"),
        (2.0**24, 1.0, -149, "f32"),
        (-(2.0**-1022), 2.0**-1060, -1074, "f64"),  # normal/subnormal boundary
        (0.0, 1.0, -2, "f64"),  # coarse grid: many exact zeros (never certified in f64)
        (-0.25, 0.5, -3, "f32"),  # f32 zeros on a coarse grid
        (0.0, 2.0**-152, -160, "f32"),  # f32 ±0 from tiny y: the certificate keeps the sign
        (2.0**-140, 2.0**-146, -149, "f32"),  # f32 subnormal outputs
        (3.0e38, 1e37, -149, "f32"),  # near f32 max: saturation
        (1.7976931348623157e308, 1e292, -1074, "f64"),  # f64 max: saturation
    ],
)
def test_certified_rounding_matches_exact_rounding(monkeypatch, x, scale, k, T):
    """Round-1 accepted lanes: the output equals the exactly rounded value of the same draw."""
    seen: list[fast._Accepted] = []
    accepted = fast._accepted

    def spy(p, need):
        acc = accepted(p, need)
        seen.append(acc)
        return acc

    monkeypatch.setattr(fast.vector, "_accepted", spy)  # _float_chunk looks it up there
    dtype = np.float64 if T == "f64" else np.float32
    xs = np.full(400, x, dtype=dtype)
    out = fast.float_noise(xs, scale, k, "laplace", T)
    p = fast._plan(fast._grid_scale(scale, k), "laplace")
    (acc,) = seen
    exact = dict(zip(acc.exact_pos, acc.exact_z, strict=True))
    for i in range(len(xs)):
        z = exact[i] if i in exact else fast._accepted_lane(p, acc, i)
        want = fast._round_out(fast._grid_index(float(xs[i]), k, T) + z, k, T)
        assert float(out[i]) == want
        assert math.copysign(1.0, float(out[i])) == math.copysign(1.0, want)  # sign of zero


def test_round_out_matches_reference_rounding():
    rng = np.random.default_rng(0)  # test data only, not a sampler
    cases = [(0, -1074), (1, -1075 + 1), (3, -1076 + 2), (2**60 + 1, -1074), (-(2**80) - 3, -100)]
    cases += [(2**1100, 0), (-(2**1100), 0), (2**2100 - 1, -1074), (5, -151), (2**40 + 1, -149)]
    cases += [
        (int(v), int(e))
        for v, e in zip(
            rng.integers(-(2**62), 2**62, 200), rng.integers(-1200, 60, 200), strict=True
        )
    ]
    for J, k in cases:
        for T in ("f64", "f32"):
            kk = max(k, -1074)
            y = gmpy2.mpq(J) * (gmpy2.mpq(1, 2**-kk) if kk < 0 else 2**kk)
            assert fast._round_out(J, kk, T) == round_to_float(y, T), (J, kk, T)


def test_exp_bounds_bracket():
    for g in [gmpy2.mpq(1, 3), gmpy2.mpq(7), gmpy2.mpq(10**6, 3), gmpy2.mpq(1, 10**30)]:
        lo, hi = fast._exp_neg_bounds(g, 80)
        assert lo <= hi and hi - lo <= hi * (1 + g) * gmpy2.mpq(1, 2**76)  # γ's rounding
        assert float(lo) <= math.exp(-float(g)) * (1 + 1e-15)
        assert float(hi) >= math.exp(-float(g)) * (1 - 1e-15)


@pytest.mark.parametrize(("k", "T"), [(-1, "f64"), (1, "f64"), (-3, "f32"), (0, "f64")])
def test_vector_grid_rounding_matches_reference(k, T):
    """With noise of scale 2^-35 grid units Z = 0 surely, so the output is round_T(round_k(x))."""
    dtype = np.float64 if T == "f64" else np.float32
    step = 2.0**k
    xs = np.array([0.5 * step, 1.5 * step, -0.5 * step, -2.5 * step, 0.49999999999999994 * step,
                   3.0, -7.25, 1e-310, -1e-310, 1e300 if T == "f64" else 3e38, 0.1, -0.3],
                  dtype=dtype)  # fmt: skip
    out = fast.float_noise(xs, 2.0 ** (k - 35), k, "laplace", T)
    want = [fast._round_out(int(round_to_grid_ref(float(v), k)), k, T) for v in xs]
    assert out.tolist() == want


def round_to_grid_ref(x: float, k: int) -> int:
    from opendp_lite.samplers.noise_ref import round_to_grid

    return int(round_to_grid(x, k))


def _ulp_err(got: np.ndarray, exact: list) -> float:
    worst = 0.0
    for g, e in zip(got.tolist(), exact, strict=True):
        ulp = math.ulp(float(e))
        worst = max(worst, abs(float(gmpy2.mpq(g) - gmpy2.mpq(e))) / ulp)
    return worst


def test_numpy_exp_log_within_budget():
    """Evidence for §3's assumption (≤ 2^6 ulp, budgeted): numpy's exp/log vs MPFR."""
    u = np.concatenate(
        [np.arange(1, 2000, dtype=np.float64), 2.0**32 - np.arange(1, 2000, dtype=np.float64)]
    )
    u = np.concatenate([u, np.linspace(1.0, 2.0**32 - 1, 4000).round()]) * 2.0**-32
    with gmpy2.context(gmpy2.get_context(), precision=200):
        exact_log = [gmpy2.log(gmpy2.mpfr(float(v))) for v in u]
    assert _ulp_err(np.log(u), exact_log) <= 4
    v = np.concatenate([np.linspace(-40.0, 0.0, 6000), -np.geomspace(1e-300, 1.0, 2000)])
    with gmpy2.context(gmpy2.get_context(), precision=200):
        exact_exp = [gmpy2.exp(gmpy2.mpfr(float(t))) for t in v]
    assert _ulp_err(np.exp(v), exact_exp) <= 4


def test_flush_to_zero_guard_is_true_here():
    assert fast._gradual_underflow()


@pytest.mark.parametrize(
    ("dist", "scale", "k"),
    [
        (d, s, k)
        for d in ("laplace", "gaussian")
        for s, k in [
            (gmpy2.mpq(1, 1000), 0),
            (gmpy2.mpq(31), 0),
            (gmpy2.mpq(33), 0),
            (gmpy2.mpq(2**39 + 7, 3), 0),
            (gmpy2.mpq(1, 10**5), -1074),
            (gmpy2.mpq(10**5), -1074),
            (gmpy2.mpq(3), -149),
            (gmpy2.mpq(5, 3), -7),
            (gmpy2.mpq(2**70 + 1, 2**10), -20),
        ]
    ],
)
def test_agreement_across_scales(dist, scale, k):
    p = fast._plan(fast._grid_scale(scale, k), dist)
    assert p.floats_ok
    lanes = fast._draw_attempts(p, 150)
    for i in np.flatnonzero(~lanes.undecided).tolist():
        assert (fast._exact_lane(p, lanes, i) is not None) == bool(lanes.accept[i])


def test_lazy_uniform_decisions_are_certified():
    """After ``_geometric`` the revealed prefix of U proves e^{−(n+1)λ} ≤ U < e^{−nλ}."""
    lam = gmpy2.mpq(3, 7)
    for start in [0, 1, 2**31, 2**32 - 1, 12345678]:
        u = fast._LazyU(start, 32)
        n = fast._geometric(u, lam, hint=5)
        lo_u = gmpy2.mpq(u.p, 2**u.nb)
        hi_u = gmpy2.mpq(u.p + 1, 2**u.nb)
        with gmpy2.context(gmpy2.get_context(), precision=u.nb + 200):
            assert hi_u <= gmpy2.mpq(gmpy2.exp(-gmpy2.mpfr(n * lam))) * (1 + gmpy2.mpq(1, 2**150))
            assert lo_u >= gmpy2.mpq(gmpy2.exp(-gmpy2.mpfr((n + 1) * lam))) * (
                1 - gmpy2.mpq(1, 2**150)
            )


def test_lazy_uniform_extremes():
    assert fast._LazyU(0, 32).below_exp(gmpy2.mpq(0))
    assert not fast._LazyU(0, 32).below_exp(gmpy2.mpq(10**9))  # reveals bits, no huge MPFR
    assert not fast._LazyU(1, 32).below_exp(gmpy2.mpq(10**12))
    assert fast._LazyU(0, 32).below_exp(gmpy2.mpq(1, 10**6))  # U < 2^-32 < e^{-1e-6}


@pytest.mark.parametrize(("x", "T"), [(2.0**53, "f64"), (-(2.0**52), "f64"), (2.0**24, "f32")])
def test_binade_boundary_lanes_stay_certified(x, T):
    """At c = ±2^e the gap away from zero is twice the gap towards it; certifying against the
    smaller gap on both sides sent ~9-12% of lanes to the exact path (data-dependent time)."""
    dtype = np.float64 if T == "f64" else np.float32
    fast.reset_fallback_counts()
    fast.float_noise(
        np.full(20_000, x, dtype=dtype), 1.0, -1074 if T == "f64" else -149, "laplace", T
    )
    assert fast.fallback_counts()["exact_lanes"] <= 0.01 * 20_000
