"""Canonical noise for (ε, δ)-DP: the Tulap distribution (Awan & Slavković 2018; Awan & Vadhan
2023), sampled exactly and rounded once to the nearest float.

N ~ Tulap(0, b, q) with b = e^{−ε}, q = 2δb/(1 − b + 2δb) is the canonical noise distribution of
the (ε, δ) trade-off function; the release is x + d_in·N.  N = K − 1/2 + V with K ~ 𝓛_ℤ(1/ε)
(exact discrete Laplace) and V ~ U[0, 1), conditioned on N lying between the q/2 and 1 − q/2
quantiles of the untruncated law.  V is revealed bit by bit only as far as needed to decide
that condition (against exact rational brackets on the irrational quantile) and to fix the
nearest float of x + d_in·N; so the float released has exactly the law of the rounded real.

>>> import opendp_lite.prelude as dp
>>> space = dp.atom_domain(T=float), dp.absolute_distance(T=float)
>>> m = dp.m.make_canonical_noise(*space, d_in=1.0, d_out=(1.0, 1e-6))
>>> m.map(1.0)
(1.0, 1e-06)
>>> isinstance(m(0.0), float)
True
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction

from .._arith import check_finite_nonneg
from .._spine import then
from ..core import Domain, Measurement, Metric
from ..domains import AtomDomain
from ..errors import FailedMap, InvalidParameter, MetricMismatch, NotImplementedForType
from ..measures import Approximate, MaxDivergence
from ..metrics import AbsoluteDistance, absolute_distance
from ..samplers.discrete_laplace import sample_discrete_laplace
from ..samplers.uniform import sample_uniform_bits
from .noisy_max import exp_bounds_exact

__all__ = ["make_canonical_noise", "then_canonical_noise"]

Interval = tuple[Fraction, Fraction]


def _cut_bounds(epsilon: Fraction, delta: Fraction, j: int, bits: int) -> tuple[Interval, Interval]:
    """Rational brackets on X_j and on frac_j = (X_j − b)/(1 − b), at precision ``bits``.

    X_j = q(1 + b)/(2·b^j) = δ(1 + b)·e^{ε(j−1)}/(1 − b + 2δb).  The lower q/2-quantile of the
    untruncated Tulap lies in the cell of K = −j exactly when b <= X_j < 1, at −j − 1/2 + frac_j.
    """
    e_lo, e_hi = exp_bounds_exact(epsilon, bits)
    b_lo, b_hi = 1 / e_hi, 1 / e_lo
    g_lo, g_hi = exp_bounds_exact(epsilon * (j - 1), bits)
    den_ends = (1 - b_lo + 2 * delta * b_lo, 1 - b_hi + 2 * delta * b_hi)
    x = (
        delta * (1 + b_lo) * g_lo / max(den_ends),
        delta * (1 + b_hi) * g_hi / min(den_ends),
    )
    ratios = [n / c for n in (x[0] - b_hi, x[1] - b_lo) for c in (1 - b_hi, 1 - b_lo)]
    return x, (min(ratios), max(ratios))


class _Tulap:
    """Exact constants of Tulap(0, e^{−ε}, q): the cell j of the quantile, brackets on frac."""

    def __init__(self, epsilon: Fraction, delta: Fraction) -> None:
        self.epsilon, self.delta = epsilon, delta
        self.truncated = delta > 0
        self.j = 0
        if not self.truncated or delta >= 1:
            return
        # X_{j+1} = X_j / b and X_1 < 1 (δ < 1): the cell is the least j >= 1 with X_j >= b.
        # A float estimate picks the start; the exact brackets decide.
        # (in log space: δ may be far below the float range, and only the start depends on it)
        b = math.exp(-float(epsilon))
        log_delta = math.log(delta.numerator) - math.log(delta.denominator)
        log_q = math.log(2) + log_delta - float(epsilon) - math.log1p(-b + 2 * float(delta) * b)
        guess = (log_q + math.log((1 + b) / 2)) / -float(epsilon) if 0 < b < 1 else 1.0
        j = max(1, math.floor(guess) if math.isfinite(guess) else 1)
        bits = 64
        while True:
            x, _ = _cut_bounds(epsilon, delta, j, bits)
            e_lo, e_hi = exp_bounds_exact(epsilon, bits)
            b_lo, b_hi = 1 / e_hi, 1 / e_lo
            if x[1] < b_lo:
                j += 1
            elif x[0] >= 1 and j > 1:
                j -= 1
            elif x[0] >= b_hi and x[1] < 1:
                self.j = j
                return
            else:
                bits *= 2  # undecided at this precision (b is transcendental: terminates)

    def frac_bounds(self, bits: int) -> Interval:
        return _cut_bounds(self.epsilon, self.delta, self.j, bits)[1]


def _nearest_float(y: Fraction) -> float:
    try:
        return y.numerator / y.denominator  # int / int is correctly rounded to nearest
    except OverflowError:
        return math.copysign(sys.float_info.max, y)


def _sample(x: float, scale: Fraction, law: _Tulap, step: int = 32) -> float:
    if not math.isfinite(x) or scale == 0:
        return x
    while True:
        k = sample_discrete_laplace(1 / law.epsilon)
        m, nbits = sample_uniform_bits(step), step  # V in [m/2^n, (m+1)/2^n)
        accepted = not law.truncated
        if law.truncated:
            if law.delta >= 1:
                accepted = k == 0
            elif abs(k) > law.j:
                accepted = False
            elif abs(k) < law.j:
                accepted = True
            else:
                # K = −j: accept iff V >= frac;  K = +j: accept iff V <= 1 − frac
                prec = 64
                while True:
                    f_lo, f_hi = law.frac_bounds(prec)
                    if k > 0:
                        f_lo, f_hi = 1 - f_hi, 1 - f_lo
                    v_lo, v_hi = Fraction(m, 1 << nbits), Fraction(m + 1, 1 << nbits)
                    above = v_lo >= f_hi
                    below = v_hi <= f_lo
                    if above or below:
                        accepted = above if k < 0 else below
                        break
                    m, nbits = (m << step) | sample_uniform_bits(step), nbits + step
                    prec += step
        if not accepted:
            continue
        base = Fraction(x) + scale * (k - Fraction(1, 2))
        while True:
            lo = _nearest_float(base + scale * Fraction(m, 1 << nbits))
            hi = _nearest_float(base + scale * Fraction(m + 1, 1 << nbits))
            if lo == hi:
                return lo
            m, nbits = (m << step) | sample_uniform_bits(step), nbits + step


def make_canonical_noise(
    input_domain: Domain[float],
    input_metric: Metric[float],
    d_in: float,
    d_out: tuple[float, float],
) -> Measurement[float, float, float, tuple[float, float]]:
    r"""Add canonical (ε, δ) noise: x + d_in·N, N ~ Tulap(0, e^{−ε}, 2δb/(1 − b + 2δb)).

    ε and δ are the exact values of the floats in ``d_out``; the output is the nearest float to
    the exact real x + d_in·N (saturating at ±max float).

    Privacy map (approximate MaxDivergence):
        map(d) = d_out  for 0 <= d <= d_in;  d > d_in fails.

    Raises:
        NotImplementedForType: if the domain is not a non-NaN f64 atom domain.
        MetricMismatch: if the metric is not ``absolute_distance(T=float)``.
        InvalidParameter: if ``d_in`` is negative or not finite, ε is not finite and > 0, or
            δ is not in [0, 1].

    Proof: docs/proofs/make_canonical_noise.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.atom_domain(T=float), dp.absolute_distance(T=float)
    >>> m = space >> dp.m.then_canonical_noise(d_in=2.0, d_out=(0.5, 0.0))
    >>> m.map(1.0), m.check(2.0, (0.5, 0.0))
    ((0.5, 0.0), True)
    """
    if not (
        isinstance(input_domain, AtomDomain) and input_domain.T == "f64" and not input_domain.nan
    ):
        raise NotImplementedForType(
            f"make_canonical_noise: input_domain must be atom_domain(T=float) without NaN, "
            f"got {input_domain!r}"
        )
    if input_metric != absolute_distance(T=float) or not isinstance(input_metric, AbsoluteDistance):
        raise MetricMismatch(absolute_distance(T=float), input_metric, "make_canonical_noise")
    d = check_finite_nonneg("d_in", d_in)
    if not (isinstance(d_out, tuple | list) and len(d_out) == 2):
        raise InvalidParameter(f"d_out must be a pair (epsilon, delta), got {d_out!r}")
    eps = check_finite_nonneg("epsilon", d_out[0])
    delta = check_finite_nonneg("delta", d_out[1])
    if eps == 0:
        raise InvalidParameter("epsilon must be > 0, got 0.0")
    if delta > 1:
        raise InvalidParameter(f"delta must be in [0, 1], got {delta!r}")
    law = _Tulap(Fraction(eps), Fraction(delta))
    scale = Fraction(d)
    loss = (eps, delta)

    def privacy_map(d_in_: float) -> tuple[float, float]:
        if d_in_ > d:
            raise FailedMap(f"d_in ({d_in_!r}) must be no greater than the constructor's {d!r}")
        return loss

    return Measurement(
        input_domain,
        input_metric,
        Approximate(MaxDivergence()),
        lambda x: _sample(x, scale, law),
        privacy_map,
    )


then_canonical_noise = then(make_canonical_noise)
