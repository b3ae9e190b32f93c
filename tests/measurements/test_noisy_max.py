"""Noisy max / top-k / report-noisy-max-gumbel: maps (OpenDP 0.16 parity on a grid, exact
upper bounds), exact bounds on exp, domains and typed errors."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from fractions import Fraction

import gmpy2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendp_lite.prelude as dp
from opendp_lite.errors import (
    FailedFunction,
    FailedMap,
    InvalidParameter,
    MetricMismatch,
    NotImplementedForType,
    NotInDomain,
)
from opendp_lite.samplers.rng import scripted_randomness
from opendp_lite.samplers.selection import (
    Noise,
    certification_margin,
    exp_bounds_exact,
    fallback_counts,
    noisy_top_k,
    noisy_top_k_reference,
    reset_fallback_counts,
    sample_exponential_mechanism,
    sample_exponential_top_k,
    sample_permute_and_flip,
)

INT_SPACE = dp.vector_domain(dp.atom_domain(T=int)), dp.linf_distance(T=int)
FLOAT_SPACE = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float)

SCALES = [0.1, 0.7, 1.0, 2.0, 3.3, 1e6]
D_INS = [0, 1, 3, 7]


def _opendp() -> object:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    return odp


@pytest.mark.parametrize("monotonic", [False, True])
@pytest.mark.parametrize("measure", ["max", "zcdp"])
@pytest.mark.parametrize("k", [1, 2, 5])
def test_top_k_map_matches_opendp(monotonic: bool, measure: str, k: int) -> None:
    odp = _opendp()
    their_space = (
        odp.vector_domain(odp.atom_domain(T=int)),  # type: ignore[attr-defined]
        odp.linf_distance(T=int, monotonic=monotonic),  # type: ignore[attr-defined]
    )
    their_measure = (
        odp.max_divergence() if measure == "max" else odp.zero_concentrated_divergence()  # type: ignore[attr-defined]
    )
    our_space = (
        dp.vector_domain(dp.atom_domain(T=int)),
        dp.linf_distance(T=int, monotonic=monotonic),
    )
    our_measure = dp.max_divergence() if measure == "max" else dp.zero_concentrated_divergence()
    for scale in SCALES:
        theirs = odp.m.make_noisy_top_k(*their_space, their_measure, k=k, scale=scale)  # type: ignore[attr-defined]
        ours = dp.m.make_noisy_top_k(*our_space, our_measure, k=k, scale=scale)
        for d in D_INS:
            assert ours.map(d) == pytest.approx(theirs.map(d), rel=1e-12, abs=0)
            # never below the exact value
            c = 1 if monotonic else 2
            eps = Fraction(c * d) / Fraction(scale)
            exact = k * eps if measure == "max" else k * eps * eps / 8
            assert Fraction(ours.map(d)) >= exact
        if k == 1:
            max_theirs = odp.m.make_noisy_max(*their_space, their_measure, scale=scale)  # type: ignore[attr-defined]
            max_ours = dp.m.make_noisy_max(*our_space, our_measure, scale=scale)
            for d in D_INS:
                assert max_ours.map(d) == pytest.approx(max_theirs.map(d), rel=1e-12, abs=0)


@pytest.mark.parametrize("monotonic", [False, True])
def test_report_noisy_max_gumbel_map_matches_opendp(monotonic: bool) -> None:
    odp = _opendp()
    import warnings

    for scale in SCALES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            theirs = odp.m.make_report_noisy_max_gumbel(  # type: ignore[attr-defined]
                odp.vector_domain(odp.atom_domain(T=float, nan=False)),  # type: ignore[attr-defined]
                odp.linf_distance(T=float, monotonic=monotonic),  # type: ignore[attr-defined]
                scale=scale,
            )
        ours = dp.m.make_report_noisy_max_gumbel(
            dp.vector_domain(dp.atom_domain(T=float, nan=False)),
            dp.linf_distance(T=float, monotonic=monotonic),
            scale=scale,
        )
        assert ours.output_measure == dp.max_divergence()
        for d in (0.0, 0.5, 1.0, 2.5):
            assert ours.map(d) == pytest.approx(theirs.map(d), rel=1e-12, abs=0)


def test_map_rounds_up() -> None:
    m = dp.m.make_noisy_max(*FLOAT_SPACE, dp.max_divergence(), scale=3.0)
    assert Fraction(m.map(1.0)) >= Fraction(2, 3)
    z = dp.m.make_noisy_max(*FLOAT_SPACE, dp.zero_concentrated_divergence(), scale=3.0)
    assert Fraction(z.map(1.0)) >= Fraction(4, 9) / 8


def test_scale_zero_is_argmax_and_infinite_loss() -> None:
    m = dp.m.make_noisy_top_k(*INT_SPACE, dp.max_divergence(), k=2, scale=0.0)
    assert m([3, 9, 1, 7]) == [1, 3]
    assert m.map(0) == 0.0
    with pytest.raises(FailedMap):
        m.map(1)
    tied = {tuple(m([5, 5, 5])) for _ in range(200)}
    assert len(tied) > 1  # ties are broken at random


def test_k_larger_than_n_returns_everything_in_order() -> None:
    m = dp.m.make_noisy_top_k(*INT_SPACE, dp.max_divergence(), k=5, scale=1e-3)
    assert m([1, 200, 300]) == [2, 1, 0]
    g = dp.m.make_noisy_top_k(*INT_SPACE, dp.zero_concentrated_divergence(), k=5, scale=1e-3)
    assert g([1, 200, 300]) == [2, 1, 0]
    assert dp.m.make_noisy_top_k(*INT_SPACE, dp.max_divergence(), k=0, scale=1.0)([1, 2]) == []


def test_negate_and_optimize_min() -> None:
    m = dp.m.make_noisy_max(*INT_SPACE, dp.max_divergence(), scale=1.0, negate=True)
    assert m([1, 100, 200]) == 0
    g = dp.m.make_report_noisy_max_gumbel(*INT_SPACE, scale=1.0, optimize="min")
    assert g([1, 100, 200]) == 0
    t = dp.m.make_noisy_top_k(*INT_SPACE, dp.max_divergence(), k=2, scale=1.0, negate=True)
    assert t([500, 100, 200, 900]) == [1, 2]


def test_partials() -> None:
    a = INT_SPACE >> dp.m.then_noisy_max(dp.max_divergence(), scale=2.0)
    b = INT_SPACE >> dp.m.then_noisy_top_k(dp.max_divergence(), k=3, scale=2.0)
    c = INT_SPACE >> dp.m.then_report_noisy_max_gumbel(scale=2.0)
    assert (a.map(1), b.map(1), c.map(1)) == (1.0, 3.0, 1.0)


def test_typed_errors() -> None:
    with pytest.raises(NotImplementedForType):
        dp.m.make_noisy_max(
            dp.atom_domain(T=int), dp.absolute_distance(T=int), dp.max_divergence(), scale=1.0
        )
    with pytest.raises(NotImplementedForType):
        dp.m.make_noisy_max(
            dp.vector_domain(dp.atom_domain(T=float, nan=True)),
            dp.linf_distance(T=float),
            dp.max_divergence(),
            scale=1.0,
        )
    with pytest.raises(MetricMismatch):
        dp.m.make_noisy_max(
            dp.vector_domain(dp.atom_domain(T=int)),
            dp.l1_distance(T=int),
            dp.max_divergence(),
            scale=1.0,
        )
    with pytest.raises(MetricMismatch):
        dp.m.make_noisy_max(
            dp.vector_domain(dp.atom_domain(T=int)),
            dp.linf_distance(T=float),
            dp.max_divergence(),
            scale=1.0,
        )
    with pytest.raises(NotImplementedForType):
        dp.m.make_noisy_max(*INT_SPACE, dp.approximate(dp.max_divergence()), scale=1.0)  # type: ignore[arg-type]
    for scale in (-1.0, float("nan"), float("inf")):
        with pytest.raises(InvalidParameter, match="scale"):
            dp.m.make_noisy_max(*INT_SPACE, dp.max_divergence(), scale=scale)
    for k in (-1, 1.5, True):
        with pytest.raises(InvalidParameter, match="k must"):
            dp.m.make_noisy_top_k(*INT_SPACE, dp.max_divergence(), k=k, scale=1.0)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameter, match="optimize"):
        dp.m.make_report_noisy_max_gumbel(*INT_SPACE, scale=1.0, optimize="median")


def test_runtime_errors() -> None:
    m = dp.m.make_noisy_max(*FLOAT_SPACE, dp.max_divergence(), scale=1.0)
    with pytest.raises(FailedFunction, match="empty"):
        m([])
    with pytest.raises(FailedFunction, match="finite"):
        m([1.0, float("inf")])
    with pytest.raises(NotInDomain):
        m([1.0, float("nan")])
    with pytest.raises(NotInDomain):
        m(3.0)


def test_float_scores_are_taken_exactly() -> None:
    # 2^-60 apart: a float64 difference scaled by 1e-30 must still decide the winner
    m = dp.m.make_noisy_max(*FLOAT_SPACE, dp.max_divergence(), scale=1e-30)
    assert m([1.0, 1.0 + 2**-52]) == 1


@pytest.mark.parametrize(
    "delta",
    [
        Fraction(0),
        Fraction(1, 3),
        Fraction(1),
        Fraction(7, 2),
        Fraction(50),
        Fraction(1000),
        Fraction(123456, 7),
        Fraction(10**6 + 1, 10**6),
    ],
)
@pytest.mark.parametrize("bits", [8, 53, 120])
def test_exp_bounds_exact_brackets_exp(delta: Fraction, bits: int) -> None:
    lo, hi = exp_bounds_exact(delta, bits)
    with gmpy2.context(precision=bits + 400):
        e = gmpy2.exp(gmpy2.mpq(delta.numerator, delta.denominator))
        assert (
            gmpy2.mpq(lo.numerator, lo.denominator) <= e <= gmpy2.mpq(hi.numerator, hi.denominator)
        )
    assert (hi - lo) / lo <= Fraction(1, 2 ** (bits - 8))


def test_samplers_respect_support() -> None:
    g = [Fraction(0), Fraction(10**6), Fraction(3)]
    assert all(sample_exponential_mechanism(g) in (0, 2) for _ in range(50))
    assert all(sample_permute_and_flip(g) in (0, 2) for _ in range(50))
    assert sample_exponential_top_k([Fraction(0)], 3) == [0]
    out = sample_exponential_top_k([Fraction(0), Fraction(1), Fraction(2)], 3, 1, 1, 1)
    assert sorted(out) == [0, 1, 2]
    assert math.isfinite(float(exp_bounds_exact(Fraction(0), 4)[1]))


@pytest.mark.parametrize("delta", [Fraction(700), Fraction(1234), Fraction(10**6 + 1, 3)])
def test_first_look_bounds_beyond_float_range_bracket_exp(delta: Fraction) -> None:
    from opendp_lite.samplers.selection import _exp_bounds

    lo, hi = _exp_bounds(delta, 50)
    with gmpy2.context(precision=64):
        log2e = gmpy2.mpq(delta.numerator, delta.denominator) / gmpy2.log(2)
    # lo and hi are powers of two around 2^(δ/ln 2)
    assert lo.numerator.bit_length() - 1 <= log2e <= hi.numerator.bit_length() - 1


def test_top_k_of_many_candidates_with_hopeless_ones() -> None:
    space = dp.vector_domain(dp.atom_domain(T=int)), dp.linf_distance(T=int)
    m = dp.m.make_noisy_top_k(*space, dp.max_divergence(), k=3, scale=1.0)
    out = m(list(range(2000)))
    assert len(set(out)) == 3 and all(i >= 1900 for i in out)


# -- laws: maps are monotone in d_in and never below the exact value ---------------------------


@settings(max_examples=60, deadline=None)
@given(
    scale=st.floats(min_value=1e-6, max_value=1e6),
    d1=st.integers(min_value=0, max_value=10**6),
    d2=st.integers(min_value=0, max_value=10**6),
    k=st.integers(min_value=1, max_value=20),
    zcdp=st.booleans(),
    monotonic=st.booleans(),
)
def test_top_k_map_is_monotone_and_conservative(
    scale: float, d1: int, d2: int, k: int, zcdp: bool, monotonic: bool
) -> None:
    space = dp.vector_domain(dp.atom_domain(T=int)), dp.linf_distance(T=int, monotonic=monotonic)
    measure = dp.zero_concentrated_divergence() if zcdp else dp.max_divergence()
    m = dp.m.make_noisy_top_k(*space, measure, k=k, scale=scale)
    lo, hi = sorted((d1, d2))
    assert m.map(lo) <= m.map(hi)
    eps = Fraction((1 if monotonic else 2) * hi) / Fraction(scale)
    exact = k * eps * eps / 8 if zcdp else k * eps
    assert Fraction(m.map(hi)) >= exact
    assert m.check(hi, m.map(hi))


# -- the certified vectorised race (samplers/selection.py) ---------------------------------------


def _oracle(seed: int) -> Callable[[int, int], int]:
    """Deterministic bits appended to U_j at refinement ``level``: the same for both paths."""

    def more(j: int, level: int) -> int:
        digest = hashlib.sha256(f"{seed}/{j}/{level}".encode()).digest()
        return int.from_bytes(digest[:4], "little")

    return more


def _score_sets(rng: np.random.Generator) -> list[tuple[np.ndarray, float]]:
    """Candidate sets that exercise ties, float scores, wide ranges and the vector path."""
    return [
        (rng.integers(0, 4, int(rng.integers(2, 12))).astype(np.int32), 0.5),
        (rng.normal(size=int(rng.integers(2, 33))), 0.3),
        (rng.integers(-(2**62), 2**62, 20, dtype=np.int64), 2.0**61),
        (rng.integers(0, 3, 300).astype(np.int64), 1.0),  # vector path, many near-ties
        (rng.normal(size=2000).astype(np.float32), 0.05),
        (rng.integers(0, 2**64 - 1, 50, dtype=np.uint64), 2.0**62),
    ]


@pytest.mark.parametrize("noise", ["exponential", "gumbel"])
@pytest.mark.parametrize("band", [0.0, 2.0])
def test_fast_race_decides_as_the_exact_race_on_the_same_bits(noise: Noise, band: float) -> None:
    # The fast path (float64 intervals, contenders, exact race on the few left) and the exact
    # race over every candidate read the same 32 bits per candidate and the same appended
    # bits, so they must return the same ordered indices; band = 2 widens every float
    # interval so that the exact race decides almost every call.
    rng = np.random.default_rng(7)
    calls = exact = 0
    for trial in range(25):
        for case, (scores, scale) in enumerate(_score_sets(rng)):
            k = 1 + trial % 4
            negate = trial % 3 == 0
            seed = f"{trial}/{case}".encode()
            reset_fallback_counts()
            with certification_margin(band), scripted_randomness(seed=seed):
                fast = noisy_top_k(scores, scale, k, noise, _oracle(trial), negate=negate)
            exact += fallback_counts()["exact_races"]
            with scripted_randomness(seed=seed):
                ref = noisy_top_k_reference(scores, scale, k, noise, _oracle(trial), negate)
            assert fast == ref, (trial, case, scores, k, negate)
            assert len(set(fast)) == len(fast) == min(k, len(scores))
            calls += 1
    if band > 0:
        assert exact >= 0.9 * calls  # the exact path decided (almost) all
    else:
        assert exact < 0.5 * calls  # the float intervals decided most


@pytest.mark.parametrize("noise", ["exponential", "gumbel"])
def test_equal_prefixes_are_refined_on_the_same_uniforms(noise: Noise) -> None:
    # Every candidate gets the same first 32 bits and the same score: no float interval can
    # separate them, and the winner is decided by the appended bits alone.  Exponential
    # keys γ + ln U favour the smallest U, Gumbel keys γ + ln(−ln U) the largest.
    scores = np.zeros(40, dtype=np.int64)
    more = _oracle(3)
    first = [more(j, 0) for j in range(40)]
    reset_fallback_counts()
    with scripted_randomness(lambda n: b"\x9d" * n):
        out = noisy_top_k(scores, 1.0, 3, noise, more)
    with scripted_randomness(lambda n: b"\x9d" * n):
        ref = noisy_top_k_reference(scores, 1.0, 3, noise, more)
    assert out == ref
    by_u = sorted(range(40), key=lambda j: first[j], reverse=noise == "gumbel")
    assert out == by_u[:3]
    assert fallback_counts()["refinements"] > 0


def test_small_and_vector_paths_agree_on_the_same_bits() -> None:
    # The scalar (<= SMALL candidates) and numpy paths use the same bits and formulas.
    from opendp_lite.samplers import selection

    rng = np.random.default_rng(11)
    for trial in range(40):
        scores = rng.normal(size=int(rng.integers(2, selection.SMALL + 1)))
        noise: Noise = "gumbel" if trial % 2 else "exponential"
        with scripted_randomness(seed=bytes([trial])):
            small = noisy_top_k(scores, 0.2, 3, noise, _oracle(trial))
        saved = selection.SMALL
        selection.SMALL = 1
        try:
            with scripted_randomness(seed=bytes([trial])):
                vec = noisy_top_k(scores, 0.2, 3, noise, _oracle(trial))
        finally:
            selection.SMALL = saved
        assert small == vec


def test_race_reads_32_bits_per_candidate() -> None:
    # The vectorised race reads 4 bytes per candidate in one call (plus rare refinements),
    # not candidate by candidate.
    reads: list[int] = []

    def source(n: int) -> bytes:
        reads.append(n)
        return hashlib.shake_256(str(len(reads)).encode()).digest(n)

    space = dp.vector_domain(dp.atom_domain(T=int)), dp.linf_distance(T=int)
    m = dp.m.make_noisy_top_k(*space, dp.max_divergence(), k=10, scale=10.0)
    scores = np.arange(50_000, dtype=np.int32) % 1000
    with scripted_randomness(source):
        out = m(scores)
    assert reads[0] == 4 * len(scores) and sum(reads) <= 4 * len(scores) + 4 * 200
    assert len(set(out)) == 10 and all(scores[i] >= 900 for i in out)


@pytest.mark.parametrize("noise", ["exponential", "gumbel"])
def test_overflowing_gaps_and_integer_extremes(noise: Noise) -> None:
    # γ beyond float64 (scale 1e-300): hopeless candidates are certified out, and when they
    # must be released (k = n) the exact race orders them
    far = np.array([0.0, 1e10, -1e308, 1e308])
    assert noisy_top_k(far, 1e-300, 1, noise) == [3]
    assert noisy_top_k(far, 1e-300, 4, noise) == [3, 1, 0, 2]
    assert noisy_top_k(far, 1e-300, 4, noise, negate=True) == [2, 0, 1, 3]
    ints = np.array([-(2**63), 2**63 - 1, 0], dtype=np.int64)
    assert noisy_top_k(ints, 1.0, 3, noise) == [1, 2, 0]
    assert noisy_top_k(ints, 1.0, 3, noise, negate=True) == [0, 2, 1]
    big = np.array([2**64 - 1, 0, 2**63], dtype=np.uint64)
    assert noisy_top_k(big, 1.0, 2, noise) == [0, 2]
    big_many = np.concatenate([big, np.zeros(100, dtype=np.uint64)])
    assert noisy_top_k(big_many, 1.0, 2, noise) == [0, 2]


def test_infinite_scores_fail_before_sampling() -> None:
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float)
    m = dp.m.make_noisy_top_k(*space, dp.max_divergence(), k=2, scale=1.0)
    reads: list[int] = []
    with scripted_randomness(lambda n: reads.append(n) or b"\0" * n):
        with pytest.raises(FailedFunction):
            m(np.array([1.0, np.inf] + [0.0] * 100))
    assert reads == []
