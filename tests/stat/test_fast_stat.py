"""Statistical tests of the vectorised exact samplers (``samplers.fast``).

α = ``ALPHA`` and every n are fixed up front (each rejection's power is checked at its n).
Each test checks the batch output against the exact
pmf (χ²), against the continuous law at the default k (KS), or against H1's scalar reference
(two-sample χ²), and must also *reject* the same sample against the law at scale × 0.7 and
× 1.3.  The widened-band mode (``certification_margin``) sends most lanes to the exact path
and must pass the same tests.
"""

from __future__ import annotations

from collections.abc import Callable

import gmpy2
import numpy as np
import pytest
from scipy import stats

from opendp_lite.samplers import fast
from opendp_lite.samplers.noise_ref import float_noise_ref, int_noise_ref, round_to_grid
from tests.conftest import scaled
from tests.stat._reference import (
    assert_fits,
    assert_rejects,
    check_cells,
    check_continuous,
    discrete_gaussian_pmf,
    discrete_laplace_pmf,
    homogeneity_power_integers,
    ks2_power_pointwise,
)

WRONG = (0.7, 1.3)


def dg_pmf(s: float) -> Callable[[np.ndarray], np.ndarray]:
    span = np.arange(-int(40 * s) - 40, int(40 * s) + 41)
    norm = np.exp(-(span**2) / (2 * s * s)).sum()
    return lambda z: np.exp(-(np.asarray(z, float) ** 2) / (2 * s * s)) / norm


def pmf_scalar(dist: str, s: float) -> Callable[[int], float]:
    return discrete_laplace_pmf(s) if dist == "laplace" else discrete_gaussian_pmf(s)


def pmf_for(dist: str, s: float) -> Callable[[np.ndarray], np.ndarray]:
    return discrete_laplace_pmf(s) if dist == "laplace" else dg_pmf(s)  # type: ignore[return-value]


def binned(
    z: np.ndarray, pmf: Callable[[np.ndarray], np.ndarray], width: int = 1
) -> tuple[np.ndarray, Callable[[Callable[[np.ndarray], np.ndarray]], np.ndarray]]:
    """Counts of integer sample ``z`` in bins of ``width`` that each expect >= 5 draws under
    ``pmf``, plus the two tails beyond them; and the map from a pmf to its bin probabilities
    (so that wrong laws are tested on the true law's bins)."""
    z = np.asarray(z, dtype=np.int64)
    n = len(z)
    lim = int(np.max(np.abs(z))) + 10 * width
    edges = np.arange(-lim, lim + width + 1, width)

    def central(g: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        cum = np.concatenate([[0.0], np.cumsum(g(np.arange(-lim, lim + 1)))])
        return np.diff(cum[np.clip(edges + lim, 0, 2 * lim + 1)])

    keep = central(pmf) * n >= 5
    lo_edge, hi_edge = edges[:-1][keep][0], edges[1:][keep][-1]
    inner = (edges[:-1] >= lo_edge) & (edges[1:] <= hi_edge)
    centre = np.histogram(z, bins=edges[(edges >= lo_edge) & (edges <= hi_edge)])[0]
    obs = np.concatenate([centre, [int((z < lo_edge).sum()), int((z >= hi_edge).sum())]])

    def probs(g: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        c = central(g)[inner]
        below = float(g(np.arange(lo_edge - 200 * width, lo_edge)).sum())
        above = 1.0 - float(c.sum()) - below
        return np.concatenate([c, [max(below, 1e-12), max(above, 1e-12)]])

    return obs, probs


def assert_law(z: np.ndarray, dist: str, s: float, width: int = 1) -> None:
    obs, probs = binned(z, pmf_for(dist, s), width)
    wrong = [probs(pmf_for(dist, s * f)) for f in WRONG]
    check_cells(obs, probs(pmf_for(dist, s)), wrong, what=f"{dist}({s})")


# --- integer noise, χ² against the exact pmf --------------------------------------------


@pytest.mark.parametrize("dist", ["laplace", "gaussian"])
@pytest.mark.parametrize("scale", [1, 10, gmpy2.mpq(7, 3)])
def test_discrete_batch_chi2(dist, scale):
    batch = fast.discrete_laplace_batch if dist == "laplace" else fast.discrete_gaussian_batch
    z = batch(20_000, scale)
    assert z.dtype == np.int64
    assert_law(z, dist, float(scale))


@pytest.mark.parametrize("dist", ["laplace", "gaussian"])
def test_int_noise_chi2_shifted(dist):
    x = np.full(20_000, -7, dtype=np.int32)
    y = fast.int_noise(x, 4, dist, "i32")
    assert y.dtype == np.int32
    assert_law(y.astype(np.int64) + 7, dist, 4.0)


@pytest.mark.slow
@pytest.mark.parametrize("dist", ["laplace", "gaussian"])
def test_int_noise_chi2_scale_1000(dist):
    z = fast.int_noise(np.zeros(scaled(400_000), np.int64), 1000, dist, "i64")
    assert_law(z, dist, 1000.0, width=50)


def test_int_noise_saturates():
    y = fast.int_noise(np.array([126, -127] * 500, dtype=np.int8), 50, "laplace", "i8")
    assert y.dtype == np.int8 and (y == 127).any() and (y == -128).any()
    big = np.array([2**63 - 2, -(2**63) + 1] * 200, dtype=np.int64)
    y64 = fast.int_noise(big, 100, "laplace", "i64")
    assert (y64[::2] >= 2**63 - 5000).all() and (y64[1::2] <= -(2**63) + 5000).all()
    assert (y64[::2] == 2**63 - 1).any() and (y64[1::2] == -(2**63)).any()


# --- float noise at coarse k: on the grid, with the exact discrete law ------------------


@pytest.mark.parametrize(
    ("dist", "T", "k", "x", "scale"),
    [
        ("laplace", "f64", -2, 0.3, 1.0),
        ("gaussian", "f32", -3, -1.0, 0.5),
        ("laplace", "f64", 1, 5.0, 8.0),
    ],
)
def test_float_noise_coarse_k_chi2(dist, T, k, x, scale):
    dtype = np.float64 if T == "f64" else np.float32
    y = fast.float_noise(np.full(20_000, x, dtype=dtype), scale, k, dist, T)
    assert y.dtype == dtype
    g = y.astype(np.float64) / 2.0**k
    assert (g == np.round(g)).all()  # every output on the 2^k grid
    centre = round_to_grid(x, k)  # noise_ref's rounding to the grid (5.0 at k = 1 is a tie)
    assert_law(g.astype(np.int64) - centre, dist, scale / 2.0**k)


# --- default k: KS against the continuous law -------------------------------------------


@pytest.mark.parametrize(
    ("dist", "T", "x", "scale"),
    [("laplace", "f64", 1.0, 2.0), ("gaussian", "f64", -3.0, 0.25),
     ("laplace", "f32", 0.0, 1.0), ("gaussian", "f32", 100.0, 3.0)],
)  # fmt: skip
def test_float_noise_default_k_ks(dist, T, x, scale):
    dtype = np.float64 if T == "f64" else np.float32
    k = -1074 if T == "f64" else -149
    y = fast.float_noise(np.full(20_000, x, dtype=dtype), scale, k, dist, T).astype(np.float64)
    law = stats.laplace if dist == "laplace" else stats.norm
    check_continuous(
        y,
        law(loc=x, scale=scale).cdf,
        [law(loc=x, scale=scale * f).cdf for f in WRONG],
        symmetric_about=x,
    )


def test_float_noise_saturates_at_max():
    big = np.full(200, 1.7e308)
    y = fast.float_noise(big, 1e307, -1074, "laplace", "f64")
    assert np.isfinite(y).all() and (y == np.finfo(np.float64).max).any()


# --- widened certification band: the exact path on most lanes, same tests ---------------


@pytest.mark.parametrize("dist", ["laplace", "gaussian"])
def test_widened_band_int_chi2_and_fallback_taken(dist):
    fast.reset_fallback_counts()
    with fast.certification_margin(0.9):
        z = fast.int_noise(np.zeros(3000, np.int32), 3, dist, "i32")
    c = fast.fallback_counts()
    assert c["exact_lanes"] >= 0.9 * c["attempts"]  # the exact path really ran
    assert_law(z, dist, 3.0)


def test_widened_band_float_coarse_and_scalar():
    fast.reset_fallback_counts()
    with fast.certification_margin(0.9):
        y = fast.float_noise(np.full(2500, 0.3), 1.0, -2, "laplace", "f64")
        ys = np.array(
            [fast.float_noise_scalar(0.3, 1.0, -2, "gaussian", "f64") for _ in range(1500)]
        )
    c = fast.fallback_counts()
    assert c["exact_lanes"] >= 0.9 * c["attempts"]
    assert_law((y * 4).astype(np.int64) - 1, "laplace", 4.0)
    assert_law((ys * 4).astype(np.int64) - 1, "gaussian", 4.0)


@pytest.mark.parametrize("dist", ["laplace", "gaussian"])
def test_widened_band_default_k_ks(dist):
    # the Gaussian's vector path merges the W and V tests into one (proof §1): its exact
    # continuation (_attempt_exact_merged) must give the same law
    law = stats.laplace if dist == "laplace" else stats.norm
    fast.reset_fallback_counts()
    with fast.certification_margin(0.9):
        y = fast.float_noise(np.zeros(5000), 1.0, -1074, dist, "f64")
    assert fast.fallback_counts()["exact_lanes"] >= 4500
    check_continuous(y, law(scale=1.0).cdf, [law(scale=f).cdf for f in WRONG], symmetric_about=0.0)


@pytest.mark.parametrize("dist", ["laplace", "gaussian"])
@pytest.mark.parametrize("band", [0.0, 0.9])
def test_small_vectors_and_lazy_scalar_default_k_ks(dist, band):
    # vectors of n <= SMALL run the scalar attempt per lane (lazy R, pooled bytes); the
    # widened band sends them to the exact path (revealing R's tail) with the same law
    law = stats.laplace if dist == "laplace" else stats.norm
    fast.reset_fallback_counts()
    with fast.certification_margin(band):
        y = np.concatenate(
            [fast.float_noise(np.full(8, 0.5), 1.5, -1074, dist, "f64") for _ in range(500)]
            + [
                np.array([fast.float_noise_scalar(0.5, 1.5, -1074, dist, "f64")])
                for _ in range(1000)
            ]
        )
    if band:
        c = fast.fallback_counts()
        assert c["exact_lanes"] >= 0.9 * c["attempts"]
    check_continuous(
        y,
        law(loc=0.5, scale=1.5).cdf,
        [law(loc=0.5, scale=1.5 * f).cdf for f in WRONG],
        symmetric_about=0.5,
    )


@pytest.mark.parametrize("sigma", [1e-3, 1e-6])
def test_small_sigma_gaussian_stays_on_the_fast_path(sigma):
    # the per-lane error bound of the Gaussian test (proof §3): before, ~11% of lanes fell
    # to the exact path at sigma = 1e-3 (the bound used N's maximum, 2^20, for every lane)
    fast.reset_fallback_counts()
    z = fast.discrete_gaussian_batch(20_000, sigma)
    c = fast.fallback_counts()
    assert c["exact_lanes"] <= 1e-3 * c["attempts"]
    assert (z == 0).all()  # Pr[|Z| >= 1] <= 2·e^{-1/(2 sigma^2)}: zero at these sigma


# --- the scalar path ---------------------------------------------------------------------


@pytest.mark.parametrize("dist", ["laplace", "gaussian"])
def test_scalar_paths_chi2(dist):
    z = np.array([fast.int_noise_scalar(0, 3, dist, "i32") for _ in range(6000)])
    assert_law(z, dist, 3.0)
    y = np.array([fast.float_noise_scalar(0.0, 0.75, -2, dist, "f32") for _ in range(6000)])
    assert_law((y * 4).astype(np.int64), dist, 3.0)


# --- two-sample: batch against the scalar reference (noise_ref) -------------------------


def two_sample_p(a: np.ndarray, b: np.ndarray) -> float:
    """χ² homogeneity p-value of two integer samples (bins with ≥ 10 pooled counts)."""
    lo, hi = int(min(a.min(), b.min())), int(max(a.max(), b.max()))
    ca = np.bincount(a - lo, minlength=hi - lo + 1)
    cb = np.bincount(b - lo, minlength=hi - lo + 1)
    rows, acc_a, acc_b = [], 0, 0
    for u, v in zip(ca, cb, strict=True):
        acc_a, acc_b = acc_a + u, acc_b + v
        if acc_a + acc_b >= 10:
            rows.append((acc_a, acc_b))
            acc_a = acc_b = 0
    if acc_a + acc_b and rows:
        rows[-1] = (rows[-1][0] + acc_a, rows[-1][1] + acc_b)
    return float(stats.chi2_contingency(np.array(rows)).pvalue)


@pytest.mark.parametrize("dist", ["laplace", "gaussian"])
def test_two_sample_against_reference(dist):
    scale = gmpy2.mpq(5, 2)
    fast_int = fast.int_noise(np.full(20_000, 3, np.int32), scale, dist, "i32").astype(np.int64)
    ref = {f: np.array([int_noise_ref(3, scale * gmpy2.mpq(f), dist, "i32")
                        for _ in range(3000)]) for f in (1, "7/10", "13/10")}  # fmt: skip
    assert_fits(two_sample_p(fast_int, ref[1]))
    for f in ("7/10", "13/10"):
        a, b = pmf_scalar(dist, 2.5), pmf_scalar(dist, 2.5 * float(gmpy2.mpq(f)))
        power = homogeneity_power_integers(20_000, 3000, a, b, -200, 206)
        assert_rejects(two_sample_p(fast_int, ref[f]), power, f"reference at scale x {f}")
    fl = fast.float_noise(np.full(20_000, 0.6), 1.0, -1, dist, "f64")
    rf = np.array([float_noise_ref(0.6, gmpy2.mpq(1), -1, dist, "f64") for _ in range(3000)])
    assert_fits(two_sample_p((fl * 2).astype(np.int64), (rf * 2).astype(np.int64)))
    for f in (gmpy2.mpq(7, 10), gmpy2.mpq(13, 10)):
        wrong = np.array([float_noise_ref(0.6, f, -1, dist, "f64") for _ in range(3000)])
        # on the 2^-1 grid, in grid units: the discrete law of scale 2 against 2·f
        a, b = pmf_scalar(dist, 2.0), pmf_scalar(dist, 2.0 * float(f))
        power = homogeneity_power_integers(20_000, 3000, a, b, -200, 200)
        p = two_sample_p((fl * 2).astype(np.int64), (wrong * 2).astype(np.int64))
        assert_rejects(p, power, f"reference at scale x {f}")


@pytest.mark.parametrize(("dist", "T"), [("laplace", "f64"), ("gaussian", "f32")])
def test_two_sample_default_k_against_reference(dist, T):
    """Default k: batch vs noise_ref, two-sample KS; the reference at scale × 0.7 / 1.3 differs."""
    dtype = np.float64 if T == "f64" else np.float32
    k = -1074 if T == "f64" else -149
    y = fast.float_noise(np.full(20_000, 2.0, dtype=dtype), 1.0, k, dist, T).astype(np.float64)

    def ref(scale):
        return np.array([float_noise_ref(2.0, scale, k, dist, T) for _ in range(6000)])

    assert_fits(stats.ks_2samp(y, ref(gmpy2.mpq(1))).pvalue)
    # the wrong references are rejected on the folded samples |y − 2| (KS on the raw samples
    # rejects the Laplace reference at scale x 1.3 with power about 0.9 only: the two laws
    # differ by 0.048 in sup distance; folded, by 0.096)
    law = stats.expon if dist == "laplace" else stats.halfnorm
    grid = np.linspace(0.0, 20.0, 20_001)
    for f in (gmpy2.mpq(7, 10), gmpy2.mpq(13, 10)):
        power = ks2_power_pointwise(len(y), 6000, grid, law(scale=1.0).cdf, law(scale=float(f)).cdf)
        p = stats.ks_2samp(np.abs(y - 2.0), np.abs(ref(f) - 2.0)).pvalue
        assert_rejects(p, power, f"reference at scale x {f}")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("dist", "T"), [("laplace", "f64"), ("gaussian", "f64"), ("laplace", "f32")]
)
def test_default_k_ks_large(dist, T):
    dtype = np.float64 if T == "f64" else np.float32
    k = -1074 if T == "f64" else -149
    n = scaled(1_000_000, minimum=50_000)
    y = fast.float_noise(np.full(n, -0.5, dtype=dtype), 3.0, k, dist, T).astype(np.float64)
    law = stats.laplace if dist == "laplace" else stats.norm
    check_continuous(
        y,
        law(loc=-0.5, scale=3.0).cdf,
        [law(loc=-0.5, scale=3.0 * f).cdf for f in WRONG],
        symmetric_about=-0.5,
    )


@pytest.mark.slow
def test_widened_band_large_int_chi2():
    fast.reset_fallback_counts()
    with fast.certification_margin(0.9):
        z = fast.discrete_gaussian_batch(scaled(40_000, minimum=5_000), gmpy2.mpq(7, 2))
    c = fast.fallback_counts()
    assert c["exact_lanes"] >= 0.9 * c["attempts"]
    assert_law(z, "gaussian", 3.5)
