"""Noisy max / top-k / report-noisy-max-gumbel: maps (OpenDP 0.16 parity on a grid, exact
upper bounds), exact bounds on exp, domains and typed errors."""

from __future__ import annotations

import math
from fractions import Fraction

import gmpy2
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
from opendp_lite.measurements.noisy_max import (
    exp_bounds_exact,
    sample_exponential_mechanism,
    sample_exponential_top_k,
    sample_permute_and_flip,
)

INT_SPACE = dp.vector_domain(dp.atom_domain(T=int)), dp.linf_distance(T=int)
FLOAT_SPACE = dp.vector_domain(dp.atom_domain(T=float)), dp.linf_distance(T=float)

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
            dp.vector_domain(dp.atom_domain(T=float)),
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
    from opendp_lite.measurements.noisy_max import _exp_bounds

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
