"""Canonical noise for (ε, δ)-DP: the Tulap distribution (Awan & Slavković 2018; Awan & Vadhan
2023), sampled exactly and rounded once to the nearest float.

N ~ Tulap(0, b, q) with b = e^{−ε}, q = 2δb/(1 − b + 2δb) is the canonical noise distribution of
the (ε, δ) trade-off function; the release is x + d_in·N.  N = K − 1/2 + V with K ~ 𝓛_ℤ(1/ε)
(exact discrete Laplace) and V ~ U[0, 1), conditioned on N lying between the q/2 and 1 − q/2
quantiles of the untruncated law.  V is revealed bit by bit only as far as needed to decide
that condition (against exact rational brackets on the irrational quantile) and to fix the
nearest float of x + d_in·N; so the float released has exactly the law of the rounded real.
On a domain that admits NaN (``atom_domain(T=float)``), NaN is released as NaN: it is at
infinite distance from every value (docs/proofs/lemmas/nan-inputs.md).

>>> import opendp_lite.prelude as dp
>>> space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
>>> m = dp.m.make_canonical_noise(*space, d_in=1.0, d_out=(1.0, 1e-6))
>>> m.map(1.0)
(1.0, 1e-06)
>>> isinstance(m(0.0), float)
True
"""

from __future__ import annotations

from .._registry import constructor
from .._spine import measured
from .._validate import check_finite_nonneg
from ..core import Domain, Measurement, Metric
from ..domains import AtomDomain
from ..errors import FailedMap, InvalidParameter, MetricMismatch, NotImplementedForType
from ..measures import Approximate, MaxDivergence
from ..metrics import AbsoluteDistance, absolute_distance
from ..samplers.tulap import TulapSampler

__all__ = ["make_canonical_noise", "then_canonical_noise"]


@constructor
def make_canonical_noise(
    input_domain: Domain[float],
    input_metric: Metric[float],
    d_in: float,
    d_out: tuple[float, float],
) -> Measurement[float, float, float, tuple[float, float]]:
    r"""Add canonical (ε, δ) noise: x + d_in·N, N ~ Tulap(0, e^{−ε}, 2δb/(1 − b + 2δb)).

    ε and δ are the exact values of the floats in ``d_out``; the output is the nearest float to
    the exact real x + d_in·N (saturating at ±max float).  The f64 domain may admit NaN: a NaN
    input is released as NaN (no pair within a finite ``d_in`` holds one).

    Privacy map (approximate MaxDivergence):
        map(d) = d_out  for 0 <= d <= d_in;  d > d_in fails.

    Raises:
        NotImplementedForType: if the domain is not an f64 atom domain.
        MetricMismatch: if the metric is not ``absolute_distance(T=float)``.
        InvalidParameter: if ``d_in`` is negative or not finite, ε is not finite and > 0, or
            δ is not in [0, 1].

    Proof: docs/proofs/make_canonical_noise.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    >>> m = space >> dp.m.then_canonical_noise(d_in=2.0, d_out=(0.5, 0.0))
    >>> m.map(1.0), m.check(2.0, (0.5, 0.0))
    ((0.5, 0.0), True)
    """
    if not (isinstance(input_domain, AtomDomain) and input_domain.T == "f64"):
        raise NotImplementedForType(
            f"make_canonical_noise: input_domain must be atom_domain(T=float), got {input_domain!r}"
        )
    # a NaN-admitting domain is accepted: the sampler releases a NaN as NaN, and NaN is at
    # infinite distance from every value (docs/proofs/lemmas/nan-inputs.md)
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
    sampler = TulapSampler(eps, delta, d)
    loss = (eps, delta)

    def privacy_map(d_in_: float) -> tuple[float, float]:
        if d_in_ > d:
            raise FailedMap(f"d_in ({d_in_!r}) must be no greater than the constructor's {d!r}")
        return loss

    return Measurement(
        input_domain,
        input_metric,
        Approximate(MaxDivergence()),
        lambda x: sampler(x),
        privacy_map,
    )


then_canonical_noise = measured(make_canonical_noise)
