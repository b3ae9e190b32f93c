"""Private selection: report noisy max and top-k, sampled exactly.

No float comparison of continuous noise ever decides a winner.  Each mechanism is sampled
through a known equivalence, on exact rationals γ_i = (s_max − s_i)/scale ≥ 0:

* **Gumbel noise** (``zero_concentrated_divergence``, and ``make_report_noisy_max_gumbel``):
  argmax_i (s_i + Gumbel(scale)) has law Pr[i] ∝ exp(s_i / scale), the exponential mechanism
  (the Gumbel-max trick; McSherry & Talwar 2007, Durfee & Rogers 2019).  It is sampled by
  rejection: propose i uniformly, accept with an exact Bernoulli(exp(−γ_i)) (CKS20 Alg. 1).
  Top-k with Gumbel noise is k such draws without replacement ("peeling"; Durfee & Rogers
  2019, Lemma 4.2).
* **Exponential noise** (``max_divergence``): argmax_i (s_i + Exp(scale)) has the law of
  permute-and-flip (McKenna & Sheldon 2020; Ding, Kifer et al. 2021): visit the candidates
  in a uniformly random order and stop at the first i whose Bernoulli(exp(−γ_i)) succeeds.
* **Top-k with exponential noise** is *not* peeling of permute-and-flip (the runner-up law
  depends on the winner's noisy value).  It is sampled exactly by a lazy race: with
  U_i = exp(−E_i) ~ Uniform(0, 1), the top-k noisy scores are the k smallest
  Y_i = exp(γ_i)·U_i.  Each U_i is revealed bit by bit and exp(γ_i) bounded by exact
  rational intervals (directed-rounding MPFR, or a Taylor series in ℚ beyond float range);
  a candidate is declared next only when its whole interval lies below every rival's, so the
  output is exactly the order of the (infinitely precise) noisy scores.

>>> import opendp_lite.prelude as dp
>>> space = dp.vector_domain(dp.atom_domain(T=int)), dp.linf_distance(T=int)
>>> dp.m.make_noisy_max(*space, dp.max_divergence(), scale=1.0)([1, 2, 3]) in (0, 1, 2)
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from .._arith import check_finite_nonneg, exp_down, exp_up, q, up
from .._types import is_float, is_int
from ..core import Domain, Measure, Measurement, Metric, PartialMeasurement
from ..domains import AtomDomain, VectorDomain
from ..errors import FailedFunction, InvalidParameter, MetricMismatch, NotImplementedForType
from ..measures import MaxDivergence, ZeroConcentratedDivergence, max_divergence
from ..metrics import LInfDistance, linf_distance
from ..samplers.bernoulli import sample_bernoulli_exp
from ..samplers.uniform import sample_uniform_below, sample_uniform_bits

__all__ = [
    "make_noisy_max",
    "make_noisy_top_k",
    "make_report_noisy_max_gumbel",
    "then_noisy_max",
    "then_noisy_top_k",
    "then_report_noisy_max_gumbel",
]


# ----------------------------------------------------------------------------------------------
# Exact selection samplers on rationals γ_i >= 0 (min γ = 0)


def _gammas(scores: Sequence[Fraction], scale: Fraction) -> list[Fraction]:
    """γ_i = (max s − s_i) / scale, exactly (scale > 0)."""
    best = max(scores)
    return [(best - s) / scale for s in scores]


def sample_exponential_mechanism(gammas: Sequence[Fraction]) -> int:
    """An index i with Pr[i] = exp(−γ_i) / Σ_j exp(−γ_j), exactly.

    Rejection from the uniform proposal: accept i with Bernoulli(exp(−γ_i)).  Precondition:
    some γ_i = 0, so each round accepts with probability >= 1/n.
    """
    n = len(gammas)
    while True:
        i = sample_uniform_below(n)
        if sample_bernoulli_exp(gammas[i]):
            return i


def sample_permute_and_flip(gammas: Sequence[Fraction]) -> int:
    """Permute-and-flip (McKenna & Sheldon 2020): the law of argmax_i (−γ_i + Exp(1)).

    Visits a uniformly random permutation (drawn lazily by Fisher–Yates) and returns the first
    i whose Bernoulli(exp(−γ_i)) succeeds.  Precondition: some γ_i = 0 (always accepted), so
    one pass suffices.
    """
    order = list(range(len(gammas)))
    n = len(order)
    for t in range(n):
        j = t + sample_uniform_below(n - t)
        order[t], order[j] = order[j], order[t]
        if sample_bernoulli_exp(gammas[order[t]]):
            return order[t]
    raise AssertionError("permute-and-flip needs a candidate with gamma = 0")  # pragma: no cover


def _peel(gammas: Sequence[Fraction], k: int) -> list[int]:
    """k exponential-mechanism draws without replacement (top-k with Gumbel noise)."""
    remaining = list(range(len(gammas)))
    out: list[int] = []
    for _ in range(min(k, len(remaining))):
        best = min(gammas[i] for i in remaining)
        pick = sample_exponential_mechanism([gammas[i] - best for i in remaining])
        out.append(remaining.pop(pick))
    return out


# -- exact interval bounds on exp(δ) for rational δ >= 0 -------------------------------------


def _round_dyadic(x: Fraction, bits: int, upward: bool) -> Fraction:
    """``x > 0`` rounded to ``bits`` significant bits, down or up (a dyadic rational)."""
    e = x.numerator.bit_length() - x.denominator.bit_length() - bits
    scaled = x / Fraction(2) ** e
    m = math.ceil(scaled) if upward else math.floor(scaled)
    return m * Fraction(2) ** e


def _exp_series(r: Fraction, bits: int) -> tuple[Fraction, Fraction]:
    """Bounds on exp(r) for 0 <= r <= 1 with error <= 2^(2 − bits), in fixed point.

    Lower: the Taylor terms from r rounded down, each term rounded down.  Upper: from r rounded
    up, each term rounded up, plus the remainder bound r^(N+1)/(N+1)!·e^r <= 3/(N+1)!.
    """
    p = bits + 8
    one = 1 << p
    r_lo = (r.numerator << p) // r.denominator
    r_hi = -((-r.numerator << p) // r.denominator)
    lo = term_lo = hi = term_hi = one
    k = 0
    tail = 3 * one  # 3/(k+1)! in fixed point, rounded up
    while tail > 1:
        k += 1
        term_lo = term_lo * r_lo // (one * k)
        term_hi = -(-term_hi * r_hi // (one * k))
        lo += term_lo
        hi += term_hi
        tail = -(-tail // (k + 1))
    return Fraction(lo, one), Fraction(hi + tail, one)


def exp_bounds_exact(delta: Fraction, bits: int) -> tuple[Fraction, Fraction]:
    """Rationals lo <= exp(δ) <= hi, for rational δ >= 0, with (hi − lo)/lo ≲ 2^(8 − bits).

    exp(δ) = e^⌊δ⌋ · exp(δ − ⌊δ⌋); both factors come from Taylor sums with a proved remainder,
    and every rounding of an intermediate is outward (lower bounds down, upper bounds up).
    """
    n = math.floor(delta)
    guard = bits + 2 * max(1, n.bit_length()) + 8
    r_lo, r_hi = _exp_series(delta - n, guard)
    e_lo, e_hi = _exp_series(Fraction(1), guard)
    p_lo, p_hi = Fraction(1), Fraction(1)
    b_lo, b_hi = _round_dyadic(e_lo, guard, False), _round_dyadic(e_hi, guard, True)
    while n:
        if n & 1:
            p_lo = _round_dyadic(p_lo * b_lo, guard, False)
            p_hi = _round_dyadic(p_hi * b_hi, guard, True)
        n >>= 1
        if n:
            b_lo = _round_dyadic(b_lo * b_lo, guard, False)
            b_hi = _round_dyadic(b_hi * b_hi, guard, True)
    return (
        _round_dyadic(p_lo * r_lo, guard, False),
        _round_dyadic(p_hi * r_hi, guard, True),
    )


def _exp_bounds(delta: Fraction, bits: int) -> tuple[Fraction, Fraction]:
    """Certified bounds on exp(δ): MPFR with directed rounding while 50 bits suffice (and
    exp(δ) is within float range), powers of two bracketing e^δ = 2^(δ/ln 2) for a first
    look at δ >= 700 (1.4426 < 1/ln 2 < 1.4428), else :func:`exp_bounds_exact`."""
    if bits <= 50:
        if delta < 700:
            qd = q(delta)
            return Fraction(exp_down(qd)), Fraction(exp_up(qd))
        return Fraction(2) ** math.floor(delta * Fraction(14426, 10000)), Fraction(2) ** math.ceil(
            delta * Fraction(14428, 10000)
        )
    return exp_bounds_exact(delta, bits)


def sample_exponential_top_k(
    gammas: Sequence[Fraction],
    k: int,
    start_bits: int = 64,
    step_bits: int = 32,
    start_prec: int = 50,
) -> list[int]:
    """The k largest of −γ_i + Exp_i(1) (i.i.d. standard exponentials), in order, exactly.

    With U_i = exp(−Exp_i) ~ Uniform(0, 1), this is the order of the k smallest
    Y_i = exp(γ_i)·U_i.  Each U_i is known as a dyadic interval [m/2^b, (m+1)/2^b) and
    exp(γ_i) as a rational interval [c⁻, c⁺]; Y_i lies in [c⁻·m/2^b, c⁺·(m+1)/2^b).  The
    candidate with the least upper end is selected once that end is <= every rival's lower
    end; otherwise it and the overlapping rivals are refined (more bits of U, tighter bounds
    on exp).  Ties among the Y_i have probability 0, so the race ends almost surely.
    ``start_bits``/``step_bits``/``start_prec`` only change the cost, never the law.
    """
    n = len(gammas)
    m = [sample_uniform_bits(start_bits) for _ in range(n)]
    b = [start_bits] * n
    prec = [start_prec] * n
    bounds = [_exp_bounds(g, p) for g, p in zip(gammas, prec, strict=True)]

    def interval(j: int) -> tuple[Fraction, Fraction]:
        lo_c, hi_c = bounds[j]
        return lo_c * Fraction(m[j], 1 << b[j]), hi_c * Fraction(m[j] + 1, 1 << b[j])

    ivals = [interval(j) for j in range(n)]
    remaining = set(range(n))
    out: list[int] = []
    while len(out) < min(k, n):
        i = min(remaining, key=lambda j: ivals[j][1])
        top = ivals[i][1]
        rivals = [j for j in remaining if j != i and ivals[j][0] < top]
        if not rivals:
            out.append(i)
            remaining.remove(i)
            continue
        for j in (i, *rivals):
            m[j] = (m[j] << step_bits) | sample_uniform_bits(step_bits)
            b[j] += step_bits
            prec[j] += step_bits
            bounds[j] = _exp_bounds(gammas[j], prec[j])
            ivals[j] = interval(j)
    return out


# ----------------------------------------------------------------------------------------------
# Constructors


def _exact_scores(arg: Any, negate: bool) -> list[Fraction]:
    """The exact rational value of each score (negated if asked)."""
    if len(arg) == 0:
        raise FailedFunction("the vector of scores is empty: there is nothing to select")
    try:
        scores = [Fraction(v.item() if isinstance(v, np.generic) else v) for v in arg]
    except (ValueError, OverflowError):
        raise FailedFunction("every score must be finite") from None
    return [-s for s in scores] if negate else scores


def _check_space(input_domain: Domain[Any], input_metric: Metric[Any], who: str) -> str:
    """Validate (vector of non-NaN numbers, L∞ distance); return the atom carrier."""
    elem = input_domain.element_domain if isinstance(input_domain, VectorDomain) else None
    if not isinstance(elem, AtomDomain) or not (is_int(elem.T) or is_float(elem.T)):
        raise NotImplementedForType(
            f"{who}: input_domain must be a vector_domain of numeric atoms, got {input_domain!r}"
        )
    if elem.nan:
        raise NotImplementedForType(f"{who}: input_domain elements must exclude NaN")
    if not isinstance(input_metric, LInfDistance) or input_metric.T != elem.T:
        raise MetricMismatch(linf_distance(T=elem.T), input_metric, who)
    return elem.T


def _check_measure(output_measure: Measure[Any], who: str) -> bool:
    """Whether the measure asks for Gumbel noise (zCDP) rather than exponential (pure DP)."""
    if isinstance(output_measure, MaxDivergence):
        return False
    if isinstance(output_measure, ZeroConcentratedDivergence):
        return True
    raise NotImplementedForType(
        f"{who}: output_measure must be max_divergence() or zero_concentrated_divergence(), "
        f"got {output_measure!r}"
    )


def _selection_map(scale: float, k: int, monotonic: bool, zcdp: bool) -> Any:
    s = q(scale)
    factor = 1 if monotonic else 2

    def privacy_map(d_in: float) -> float:
        if d_in == 0 or k == 0:
            return 0.0
        if s == 0:
            return math.inf
        eps = q(d_in) * factor / s
        return up(k * eps * eps / 8) if zcdp else up(k * eps)

    return privacy_map


def _select(scores: list[Fraction], scale: Fraction, k: int, gumbel: bool) -> list[int]:
    if scale == 0:  # the noiseless limit: sort descending, ties in uniformly random order
        n = len(scores)
        order = list(range(n))
        for t in range(n - 1, 0, -1):
            j = sample_uniform_below(t + 1)
            order[t], order[j] = order[j], order[t]
        order.sort(key=lambda i: -scores[i])
        return order[:k]
    gammas = _gammas(scores, scale)
    if gumbel:
        return _peel(gammas, k)
    if k == 1:
        return [sample_permute_and_flip(gammas)]
    return sample_exponential_top_k(gammas, k)


def make_noisy_top_k(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    output_measure: Measure[float],
    k: int,
    scale: float,
    negate: bool = False,
) -> Measurement[Any, list[int], Any, float]:
    r"""Release the indices of the k largest noisy scores (smallest if ``negate``), in order.

    Noise is Exp(scale) under ``max_divergence()`` and Gumbel(scale) under
    ``zero_concentrated_divergence()``; sampled exactly (see the module docstring).  With
    ε₁ = d_in/scale on a monotonic L∞ metric and 2·d_in/scale otherwise:

    Privacy map, in ℚ, rounded up:
        MaxDivergence: ε = k·ε₁;   ZeroConcentratedDivergence: ρ = k·ε₁²/8.
        scale = 0 gives ∞ for d_in > 0 (which the core refuses as a loss).

    Raises:
        NotImplementedForType: if the domain is not a vector of non-NaN numbers, or the measure
            is neither max nor zero-concentrated divergence.
        MetricMismatch: if the metric is not ``linf_distance`` of the atom type.
        InvalidParameter: if ``scale`` is negative or not finite, or ``k`` is not an int >= 0.
        FailedFunction: at invocation, if the score vector is empty.

    Proof: docs/proofs/make_noisy_top_k.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=int)), dp.linf_distance(T=int)
    >>> top2 = dp.m.make_noisy_top_k(*space, dp.max_divergence(), k=2, scale=1.0)
    >>> top2.map(1)
    4.0
    >>> sorted(top2([0, 1000, 900, 5]))
    [1, 2]
    """
    who = "make_noisy_top_k"
    _check_space(input_domain, input_metric, who)
    zcdp = _check_measure(output_measure, who)
    scale = check_finite_nonneg("scale", scale)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise InvalidParameter(f"k must be an int >= 0, got {k!r}")
    k = int(k)
    s = Fraction(scale)
    monotonic = bool(getattr(input_metric, "monotonic", False))

    def function(arg: Any) -> list[int]:
        return _select(_exact_scores(arg, negate), s, k, zcdp)

    return Measurement(
        input_domain,
        input_metric,
        output_measure,
        function,
        _selection_map(scale, k, monotonic, zcdp),
    )


def make_noisy_max(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    output_measure: Measure[float],
    scale: float,
    negate: bool = False,
) -> Measurement[Any, int, Any, float]:
    r"""Release the index of the largest noisy score (smallest if ``negate``).

    Under ``max_divergence()`` the noise is Exp(scale), sampled exactly as permute-and-flip;
    under ``zero_concentrated_divergence()`` it is Gumbel(scale), i.e. the exponential
    mechanism Pr[i] ∝ exp(s_i/scale), sampled exactly by rejection.  With ε₁ = d_in/scale on a
    monotonic L∞ metric and 2·d_in/scale otherwise:

    Privacy map, in ℚ, rounded up:
        MaxDivergence: ε = ε₁;   ZeroConcentratedDivergence: ρ = ε₁²/8.

    Raises:
        NotImplementedForType, MetricMismatch, InvalidParameter: as for
            :func:`make_noisy_top_k`.
        FailedFunction: at invocation, if the score vector is empty.

    Proof: docs/proofs/make_noisy_max.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=int)), dp.linf_distance(T=int)
    >>> select = space >> dp.m.then_noisy_max(dp.max_divergence(), scale=1.0)
    >>> select([1, 2, 3, 2, 1]) in range(5)
    True
    >>> select.map(1)
    2.0
    """
    top = make_noisy_top_k(input_domain, input_metric, output_measure, 1, scale, negate)
    f = top.function
    return Measurement(
        input_domain, input_metric, output_measure, lambda x: f(x)[0], top.privacy_map
    )


def make_report_noisy_max_gumbel(
    input_domain: Domain[Any], input_metric: Metric[Any], scale: float, optimize: str = "max"
) -> Measurement[Any, int, Any, float]:
    r"""The exponential mechanism as report-noisy-max with Gumbel noise, under pure DP.

    Releases i with Pr[i] ∝ exp(s_i/scale) (or exp(−s_i/scale) for ``optimize="min"``),
    exactly.  With ε₁ = d_in/scale on a monotonic L∞ metric and 2·d_in/scale otherwise:

    Privacy map (MaxDivergence), in ℚ, rounded up:  ε = ε₁.

    Raises:
        InvalidParameter: if ``optimize`` is not "max" or "min", or ``scale`` is invalid.
        NotImplementedForType, MetricMismatch: as for :func:`make_noisy_top_k`.

    Proof: docs/proofs/make_report_noisy_max_gumbel.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=float)), dp.linf_distance(T=float)
    >>> m = dp.m.make_report_noisy_max_gumbel(*space, scale=2.0, optimize="min")
    >>> m([0.0, 50.0, 60.0]), m.map(1.0)
    (0, 1.0)
    """
    if optimize not in ("max", "min"):
        raise InvalidParameter(f"optimize must be 'max' or 'min', got {optimize!r}")
    who = "make_report_noisy_max_gumbel"
    _check_space(input_domain, input_metric, who)
    scale = check_finite_nonneg("scale", scale)
    s = Fraction(scale)
    negate = optimize == "min"
    monotonic = bool(getattr(input_metric, "monotonic", False))

    def function(arg: Any) -> int:
        return _select(_exact_scores(arg, negate), s, 1, True)[0]

    return Measurement(
        input_domain,
        input_metric,
        max_divergence(),
        function,
        _selection_map(scale, 1, monotonic, False),
    )


def then_noisy_top_k(
    output_measure: Measure[float], k: int, scale: float, negate: bool = False
) -> PartialMeasurement[Any, list[int], Any, float]:
    """Partial of :func:`make_noisy_top_k`."""
    return PartialMeasurement(
        lambda d, m: make_noisy_top_k(d, m, output_measure, k=k, scale=scale, negate=negate)
    )


def then_noisy_max(
    output_measure: Measure[float], scale: float, negate: bool = False
) -> PartialMeasurement[Any, int, Any, float]:
    """Partial of :func:`make_noisy_max`."""
    return PartialMeasurement(
        lambda d, m: make_noisy_max(d, m, output_measure, scale=scale, negate=negate)
    )


def then_report_noisy_max_gumbel(
    scale: float, optimize: str = "max"
) -> PartialMeasurement[Any, int, Any, float]:
    """Partial of :func:`make_report_noisy_max_gumbel`."""
    return PartialMeasurement(
        lambda d, m: make_report_noisy_max_gumbel(d, m, scale=scale, optimize=optimize)
    )
