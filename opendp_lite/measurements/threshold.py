"""Stability histograms over keys not known in advance: noise, then keep what clears a threshold.

``make_laplace_threshold`` / ``make_gaussian_threshold`` take a map key → integer count, add
exact discrete Laplace / Gaussian noise to each value (CKS20) and release the keys whose noisy
value is at least ``threshold``.  Neighbouring maps are measured by the L0,1,∞ (or L0,2,∞)
distance: a triple (l0, lp, l∞) bounding how many keys differ, the ℓp norm of the differences
and the largest single difference.  A key present in only one neighbour is what costs δ.

Integer values only: float-valued maps are refused (``NotImplementedForType``).

>>> import opendp_lite.prelude as dp
>>> from opendp_lite.measurements.threshold import l01inf_distance
>>> space = (dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int)),
...          l01inf_distance(dp.absolute_distance(T=int)))
>>> m = dp.m.make_laplace_threshold(*space, scale=1.0, threshold=20)
>>> sorted(m({"common": 1000, "rare": 1}))
['common']
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np

from .._arith import check_finite_nonneg, exp_down, exp_up, q, up
from .._types import int_bounds, is_int
from ..core import Domain, Measurement, Metric, PartialMeasurement
from ..domains import AtomDomain, MapDomain
from ..errors import FailedMap, InvalidParameter, MetricMismatch, NotImplementedForType
from ..measures import (
    Approximate,
    MaxDivergence,
    ZeroConcentratedDivergence,
    approximate,
    max_divergence,
    zero_concentrated_divergence,
)
from ..metrics import AbsoluteDistance
from ..samplers.discrete_gaussian import sample_discrete_gaussian
from ..samplers.discrete_laplace import sample_discrete_laplace

__all__ = [
    "L0PInfDistance",
    "l01inf_distance",
    "l02inf_distance",
    "make_gaussian_threshold",
    "make_laplace_threshold",
    "then_gaussian_threshold",
    "then_laplace_threshold",
]

Triple = tuple[int, Any, Any]


@dataclass(frozen=True)
class L0PInfDistance(Metric[Triple]):
    """(l0, lp, l∞) between maps: keys that differ, ℓp norm and max of the value differences.

    A key present in only one map counts with its whole value.  ``p`` is 1 or 2.
    """

    inner: AbsoluteDistance[Any]
    p: int = 1

    def __repr__(self) -> str:
        return f"L0{self.p}InfDistance({self.inner!r})"

    def _check_distance(self, d: object) -> Triple:
        if not (isinstance(d, tuple | list) and len(d) == 3):
            raise FailedMap(f"a distance in {self!r} is a triple (l0, lp, linf), got {d!r}")
        from ..core import _check_distance

        l0 = _check_distance(self, d[0], "u32")
        lp = self.inner._check_distance(d[1])
        linf = self.inner._check_distance(d[2])
        return int(l0), lp, linf


def l01inf_distance(metric: AbsoluteDistance[Any]) -> L0PInfDistance:
    """The L0,1,∞ distance between maps, with value differences measured by ``metric``.

    >>> import opendp_lite.prelude as dp
    >>> l01inf_distance(dp.absolute_distance(T=int))
    L01InfDistance(AbsoluteDistance(i32))

    Raises:
        NotImplementedForType: if ``metric`` is not an absolute distance.
    """
    if not isinstance(metric, AbsoluteDistance):
        raise NotImplementedForType(f"l01inf_distance needs an absolute_distance, got {metric!r}")
    return L0PInfDistance(metric, 1)


def l02inf_distance(metric: AbsoluteDistance[Any]) -> L0PInfDistance:
    """The L0,2,∞ distance between maps, with value differences measured by ``metric``.

    Raises:
        NotImplementedForType: if ``metric`` is not an absolute distance.
    """
    if not isinstance(metric, AbsoluteDistance):
        raise NotImplementedForType(f"l02inf_distance needs an absolute_distance, got {metric!r}")
    return L0PInfDistance(metric, 2)


# ----------------------------------------------------------------------------------------------
# Certified upper bounds on the noise tails Pr[Z >= m]


def laplace_tail_up(m: int, scale: Fraction) -> float:
    """An upper bound on Pr[Z >= m] for Z ~ 𝓛_ℤ(scale): a^m/(1 + a) for m >= 1, a = e^(−1/scale)."""
    if m <= 0:
        # 1 − Pr[Z >= 1 − m], with the subtracted tail bounded below
        lo = q(exp_down(q(m - 1) / q(scale))) / (1 + q(exp_up(q(-1) / q(scale))))
        return up(1 - lo)
    num = exp_up(q(-m) / q(scale))
    den = 1 + q(exp_down(q(-1) / q(scale)))
    return up(q(num) / den)


_MAX_TERMS = 200_000


def _gauss_weights(z0: int, z1: int, s2: Any, upward: bool) -> Any:
    """Σ_{z=z0}^{z1} exp(−z²/(2σ²)), each term bounded up (or down), summed exactly."""
    f = exp_up if upward else exp_down
    total = q(0)
    for z in range(z0, z1 + 1):
        total += q(f(-q(z * z) / (2 * s2)))
    return total


def gaussian_tail_up(m: int, scale: Fraction) -> float:
    """An upper bound on Pr[Z >= m] for Z ~ 𝓝_ℤ(0, scale²).

    For m >= 1: (Σ_{z=m}^{L} w⁺(z) + (σ²/L)·e^{−L²/2σ²}) / (1 + 2Σ_{z=1}^{L′} w⁻(z)), where w±
    bound w(z) = e^{−z²/2σ²} from above/below, the middle term bounds the sum beyond L by the
    Gaussian integral, and the denominator is truncated (a lower bound).  When too many terms
    would be needed, the sub-Gaussian bound Pr[Z >= m] <= e^{−m²/2σ²} (CKS20) is used.
    For m <= 0: 1 − (a lower bound on Pr[Z >= 1 − m]).
    """
    s2 = q(scale) * q(scale)
    width = math.ceil(12 * float(scale)) + 2
    if m <= 0:
        k = 1 - m
        if width > _MAX_TERMS:
            return 1.0
        head = _gauss_weights(k, k + width, s2, upward=False)
        norm = 1 + 2 * _gauss_weights(1, width + 2 * k, s2, upward=True)
        tail = q(q(exp_up(-q((width + 2 * k) ** 2) / (2 * s2)))) * s2 / (width + 2 * k)
        return up(1 - head / (norm + 2 * tail))
    if width > _MAX_TERMS:
        return exp_up(-q(m * m) / (2 * s2))
    last = m + width
    head = _gauss_weights(m, last, s2, upward=True)
    tail = q(exp_up(-q(last * last) / (2 * s2))) * s2 / last
    norm = 1 + 2 * _gauss_weights(1, width, s2, upward=False)
    return up((head + tail) / norm)


# ----------------------------------------------------------------------------------------------
# Constructors


def _check_space(input_domain: Domain[Any], input_metric: Metric[Any], p: int, who: str) -> str:
    value = input_domain.value_domain if isinstance(input_domain, MapDomain) else None
    if not isinstance(value, AtomDomain):
        raise NotImplementedForType(
            f"{who}: input_domain must be a map_domain, got {input_domain!r}"
        )
    if not is_int(value.T):
        raise NotImplementedForType(
            f"{who}: only integer values are supported (exact discrete noise), got {value.T}"
        )
    want = L0PInfDistance(AbsoluteDistance(value.T), p)
    # compared field by field (not by class identity), so a re-imported module still matches
    same = (
        type(input_metric).__name__ == "L0PInfDistance"
        and getattr(input_metric, "p", None) == p
        and getattr(input_metric, "inner", None) == want.inner
    )
    if not same:
        raise MetricMismatch(want, input_metric, who)
    return value.T


def _threshold(threshold: object, T: str) -> Fraction:
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.number)):
        raise InvalidParameter(f"threshold must be a finite real number, got {threshold!r}")
    try:
        return Fraction(threshold.item() if isinstance(threshold, np.generic) else threshold)
    except (ValueError, OverflowError):
        raise InvalidParameter(
            f"threshold must be a finite real number, got {threshold!r}"
        ) from None


def _function(T: str, threshold: Fraction, sample: Any) -> Any:
    lo, hi = int_bounds(T)

    def function(arg: dict[Any, int]) -> dict[Any, int]:
        out: dict[Any, int] = {}
        for key, value in arg.items():
            noisy = int(value) + sample()
            if noisy >= threshold:
                out[key] = min(max(noisy, lo), hi)  # saturate: post-processing
        return out

    return function


def _delta_bound(l0: int, tail: float) -> float:
    return min(1.0, up(q(l0) * q(tail)))


def make_laplace_threshold(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    scale: float,
    threshold: Any,
    k: Any = None,
    MO: Any = "Approximate<MaxDivergence>",
) -> Measurement[Any, dict[Any, int], Triple, tuple[float, float]]:
    r"""Add exact discrete Laplace noise to each count; release keys with noisy count >= threshold.

    With (l0, l1, l∞) = d_in, l∞′ = min(l∞, l1), Z ~ 𝓛_ℤ(scale):

    Privacy map (approximate MaxDivergence), rounded up:
        ε = min(l1, l0·l∞′)/scale,   δ = min(1, l0·Pr[Z >= ⌈threshold − l∞′⌉]).

    Raises:
        NotImplementedForType: if the domain is not a map to integers, ``k`` is given, or
            ``MO`` is not approximate max divergence.
        MetricMismatch: if the metric is not ``l01inf_distance(absolute_distance(T))``.
        InvalidParameter: if ``scale`` is negative or not finite, or ``threshold`` is not a
            finite number.

    Proof: docs/proofs/make_laplace_threshold.md

    >>> import opendp_lite.prelude as dp
    >>> from opendp_lite.measurements.threshold import l01inf_distance
    >>> space = (dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int)),
    ...          l01inf_distance(dp.absolute_distance(T=int)))
    >>> m = space >> dp.m.then_laplace_threshold(scale=2.0, threshold=10)
    >>> eps, delta = m.map((1, 1, 1))
    >>> eps, round(delta, 6)  # delta = Pr[Z >= 9] = e^-4.5 / (1 + e^-0.5)
    (0.5, 0.006915)
    """
    who = "make_laplace_threshold"
    T = _check_space(input_domain, input_metric, 1, who)
    if k is not None:
        raise NotImplementedForType(f"{who}: k applies to float values only; got k={k!r}")
    if MO not in ("Approximate<MaxDivergence>", approximate(max_divergence())):
        raise NotImplementedForType(f"{who}: MO must be Approximate<MaxDivergence>, got {MO!r}")
    scale = check_finite_nonneg("scale", scale)
    s = Fraction(scale)
    t = _threshold(threshold, T)

    @lru_cache(maxsize=256)
    def tail(m: int) -> float:
        return laplace_tail_up(m, s) if s else float(m <= 0)

    def privacy_map(d_in: Triple) -> tuple[float, float]:
        l0, l1, linf = d_in
        linf_eff = min(q(linf), q(l1))
        if l0 == 0 or linf_eff == 0:
            return 0.0, 0.0
        if s == 0:
            return math.inf, 1.0
        eps = up(min(q(l1), q(l0) * linf_eff) / q(s))
        m = math.ceil(t - Fraction(int(linf_eff.numerator), int(linf_eff.denominator)))
        return eps, _delta_bound(l0, tail(m))

    function = _function(T, t, lambda: sample_discrete_laplace(s))
    return Measurement(
        input_domain, input_metric, Approximate(MaxDivergence()), function, privacy_map
    )


def make_gaussian_threshold(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    scale: float,
    threshold: Any,
    k: Any = None,
    MO: Any = "Approximate<ZeroConcentratedDivergence>",
) -> Measurement[Any, dict[Any, int], Triple, tuple[float, float]]:
    r"""Add exact discrete Gaussian noise to each count; release keys with noisy count >= threshold.

    With (l0, l2, l∞) = d_in, l∞′ = min(l∞, l2), Z ~ 𝓝_ℤ(0, scale²):

    Privacy map (approximate zCDP), in ℚ / certified bounds, rounded up:
        ρ = min(l2², l0·l∞′²)/(2·scale²),   δ = min(1, l0·Pr[Z >= ⌈threshold − l∞′⌉]).

    Raises:
        NotImplementedForType: if the domain is not a map to integers, ``k`` is given, or
            ``MO`` is not approximate zero-concentrated divergence.
        MetricMismatch: if the metric is not ``l02inf_distance(absolute_distance(T))``.
        InvalidParameter: if ``scale`` is negative or not finite, or ``threshold`` is not a
            finite number.

    Proof: docs/proofs/make_gaussian_threshold.md

    >>> import opendp_lite.prelude as dp
    >>> from opendp_lite.measurements.threshold import l02inf_distance
    >>> space = (dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int)),
    ...          l02inf_distance(dp.absolute_distance(T=int)))
    >>> m = dp.m.make_gaussian_threshold(*space, scale=3.0, threshold=12)
    >>> rho, delta = m.map((2, 2, 2))
    >>> round(rho, 6), delta < 2e-3
    (0.222222, True)
    """
    who = "make_gaussian_threshold"
    T = _check_space(input_domain, input_metric, 2, who)
    if k is not None:
        raise NotImplementedForType(f"{who}: k applies to float values only; got k={k!r}")
    if MO not in (
        "Approximate<ZeroConcentratedDivergence>",
        approximate(zero_concentrated_divergence()),
    ):
        raise NotImplementedForType(
            f"{who}: MO must be Approximate<ZeroConcentratedDivergence>, got {MO!r}"
        )
    scale = check_finite_nonneg("scale", scale)
    s = Fraction(scale)
    t = _threshold(threshold, T)

    @lru_cache(maxsize=256)
    def tail(m: int) -> float:
        return gaussian_tail_up(m, s) if s else float(m <= 0)

    def privacy_map(d_in: Triple) -> tuple[float, float]:
        l0, l2, linf = d_in
        linf_eff = min(q(linf), q(l2))
        if l0 == 0 or linf_eff == 0:
            return 0.0, 0.0
        if s == 0:
            return math.inf, 1.0
        rho = up(min(q(l2) * q(l2), q(l0) * linf_eff * linf_eff) / (2 * q(s) * q(s)))
        m = math.ceil(t - Fraction(int(linf_eff.numerator), int(linf_eff.denominator)))
        return rho, _delta_bound(l0, tail(m))

    function = _function(T, t, lambda: sample_discrete_gaussian(s))
    return Measurement(
        input_domain,
        input_metric,
        Approximate(ZeroConcentratedDivergence()),
        function,
        privacy_map,
    )


def then_laplace_threshold(
    scale: float, threshold: Any, k: Any = None, MO: Any = "Approximate<MaxDivergence>"
) -> PartialMeasurement[Any, dict[Any, int], Triple, tuple[float, float]]:
    """Partial of :func:`make_laplace_threshold`."""
    return PartialMeasurement(lambda d, m: make_laplace_threshold(d, m, scale, threshold, k, MO))


def then_gaussian_threshold(
    scale: float,
    threshold: Any,
    k: Any = None,
    MO: Any = "Approximate<ZeroConcentratedDivergence>",
) -> PartialMeasurement[Any, dict[Any, int], Triple, tuple[float, float]]:
    """Partial of :func:`make_gaussian_threshold`."""
    return PartialMeasurement(lambda d, m: make_gaussian_threshold(d, m, scale, threshold, k, MO))
