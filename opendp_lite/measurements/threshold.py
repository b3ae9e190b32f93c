"""Stability histograms over keys not known in advance: noise, then keep what clears a threshold.

``make_laplace_threshold`` / ``make_gaussian_threshold`` take a map key → integer count, add
exact discrete Laplace / Gaussian noise to each value (CKS20) and release the keys whose noisy
value is at least ``threshold`` (at most ``threshold``, if it is negative).  Neighbouring maps
are measured by the L0,1,∞ (or L0,2,∞) distance: a triple (l0, lp, l∞) bounding how many keys
differ, the ℓp norm of the differences and the largest single difference.  A key present in
only one neighbour is what costs δ.

Integer values get integer noise.  Float values follow OpenDP's design: each value is rounded
to the grid 2^k·ℤ (ties toward +∞, :func:`~opendp_lite.samplers.noise_ref.round_to_grid`),
shifted by 2^k times exact integer noise of scale ``scale/2^k``, compared with the threshold
exactly on the grid, and rounded once to the nearest float; the rounding to the grid is
charged as extra sensitivity 2^k − 2^k_min per key (zero at the default ``k = k_min``).

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
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeVar

from .._arith import Rational, exp_down, exp_up, q, sqrt_up, up
from .._registry import constructor
from .._spine import keyed
from .._types import int_bounds, is_float, is_int
from .._validate import check_exact_real, check_finite_nonneg, check_int
from ..core import Domain, Measurement, Metric
from ..domains import AtomDomain, MapDomain
from ..errors import (
    FailedFunction,
    InvalidParameter,
    MetricMismatch,
    NotImplementedForType,
)
from ..measures import (
    Approximate,
    MaxDivergence,
    ZeroConcentratedDivergence,
    approximate,
    max_divergence,
    zero_concentrated_divergence,
)
from ..metrics import AbsoluteDistance, L0PInfDistance, l01inf_distance, l02inf_distance
from ..samplers.discrete_gaussian import sample_discrete_gaussian
from ..samplers.discrete_laplace import sample_discrete_laplace
from ..samplers.noise_ref import k_min as _k_min
from ..samplers.noise_ref import round_to_float, round_to_grid

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
_K = TypeVar("_K")
_V = TypeVar("_V")


def is_l0pinf(metric: object, T: str, p: int) -> bool:
    """Whether ``metric`` is L0{p}InfDistance(AbsoluteDistance(T)), compared field by field (not
    by class identity), so a re-imported module still matches."""
    return (
        type(metric).__name__ == "L0PInfDistance"
        and getattr(metric, "p", None) == p
        and getattr(metric, "inner", None) == AbsoluteDistance(T)
    )


def _is_numeric_l0pinf(metric: object, p: int) -> bool:
    """Whether ``metric`` is L0{p}InfDistance(AbsoluteDistance(D)) for any numeric distance type
    D.  As in OpenDP 0.16, D need not be the value type: the map reads the distances as exact
    rationals, so an integer bound on float values or a float bound on integer values is used
    as it is (the integer differences of integer values are at most any real bound on them)."""
    inner = getattr(metric, "inner", None)
    return (
        type(metric).__name__ == "L0PInfDistance"
        and getattr(metric, "p", None) == p
        and type(inner).__name__ == "AbsoluteDistance"
        and (is_int(getattr(inner, "T", "")) or is_float(getattr(inner, "T", "")))
    )


# ----------------------------------------------------------------------------------------------
# Certified upper bounds on the noise tails Pr[Z >= m]


def laplace_tail_up(m: int, scale: Rational) -> float:
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


def gaussian_tail_up(m: int, scale: Rational) -> float:
    """An upper bound on Pr[Z >= m] for Z ~ 𝓝_ℤ(0, scale²).

    For m >= 1: (Σ_{z=m}^{L} w⁺(z) + (σ²/L)·e^{−L²/2σ²}) / (1 + 2Σ_{z=1}^{L′} w⁻(z)), where w±
    bound w(z) = e^{−z²/2σ²} from above/below, the middle term bounds the sum beyond L by the
    Gaussian integral, and the denominator is truncated (a lower bound).  When too many terms
    would be needed (σ > 16000), the least of the sub-Gaussian bound e^{−m²/2σ²} (CKS20) and
    the Mills-ratio bound w(m)(1 + σ²/m)/(σ√(2π) − 1) is used.
    For m <= 0: 1 − (a lower bound on Pr[Z >= 1 − m]).
    """
    s2 = q(scale) * q(scale)
    width = int(math.ceil(12 * scale)) + 2  # noqa: RUF046 - exact (scale may be far beyond the float range); an int, not an mpz
    if m <= 0:
        k = 1 - m
        if width > _MAX_TERMS:
            return 1.0
        head = _gauss_weights(k, k + width, s2, upward=False)
        norm = 1 + 2 * _gauss_weights(1, width + 2 * k, s2, upward=True)
        tail = q(q(exp_up(-q((width + 2 * k) ** 2) / (2 * s2)))) * s2 / (width + 2 * k)
        return up(1 - head / (norm + 2 * tail))
    if width > _MAX_TERMS:
        return _gaussian_tail_large_scale(m, scale)
    last = m + width
    head = _gauss_weights(m, last, s2, upward=True)
    tail = q(exp_up(-q(last * last) / (2 * s2))) * s2 / last
    norm = 1 + 2 * _gauss_weights(1, width, s2, upward=False)
    return up((head + tail) / norm)


_SQRT_2PI_LO = q(250662) / 100000  # < √(2π) = 2.5066282…


def _gaussian_tail_large_scale(m: int, scale: Rational) -> float:
    """Pr[Z >= m] <= min(e^{−m²/2σ²}, w(m)(1 + σ²/m)/(σ√(2π) − 1)) for m >= 1, Z ~ 𝓝_ℤ(0, σ²).

    Numerator: Σ_{z>=m} w(z) <= w(m) + ∫_m^∞ w <= w(m)(1 + σ²/m) (w decreasing; Mills ratio).
    Denominator: Σ_z w(z) >= ∫ w − w(0) = σ√(2π) − 1 (w symmetric and unimodal).
    """
    s2 = q(scale) * q(scale)
    w = q(exp_up(-q(m * m) / (2 * s2)))
    best = w
    den = q(scale) * q(_SQRT_2PI_LO) - 1
    if den > 0:
        best = min(best, w * (1 + s2 / m) / den)
    return up(best)


# ----------------------------------------------------------------------------------------------
# Constructors


_K_MAX = {"f64": 1023, "f32": 127}


@dataclass(frozen=True)
class _Grid:
    """The value carrier, the grid exponent k (0 for integers) and the per-key penalty."""

    T: str
    k: int
    penalty: Rational


def _check_space(
    input_domain: Domain[Any], input_metric: Metric[Any], p: int, k: object, who: str
) -> _Grid:
    value = input_domain.value_domain if isinstance(input_domain, MapDomain) else None
    if not isinstance(value, AtomDomain) or not (is_int(value.T) or is_float(value.T)):
        raise NotImplementedForType(
            f"{who}: input_domain must be a map_domain with numeric values, got {input_domain!r}"
        )
    if value.nan:
        raise NotImplementedForType(f"{who}: the value domain must exclude NaN")
    if not _is_numeric_l0pinf(input_metric, p):
        raise MetricMismatch(L0PInfDistance(AbsoluteDistance(value.T), p), input_metric, who)
    if is_int(value.T):
        if k is not None:
            raise NotImplementedForType(f"{who}: k applies to float values only; got k={k!r}")
        return _Grid(value.T, 0, q(0))
    kmin = _k_min(value.T)
    if k is None:
        k = kmin
    k = check_int("k", k, who=who)
    if not kmin <= int(k) <= _K_MAX[value.T]:
        raise InvalidParameter(f"{who}: k must be in [{kmin}, {_K_MAX[value.T]}], got {k}")
    return _Grid(value.T, int(k), q(2) ** int(k) - q(2) ** kmin)


def _keep(threshold: Rational) -> Any:
    """The release rule, as in OpenDP 0.16: a threshold >= 0 keeps the noisy values >= it; a
    negative threshold keeps the noisy values <= it (the keys *below* the threshold)."""
    if threshold < 0:
        return lambda noisy: noisy <= threshold
    return lambda noisy: noisy >= threshold


def _function(grid: _Grid, threshold: Rational, scale: Rational, gaussian: bool) -> Any:
    sampler = sample_discrete_gaussian if gaussian else sample_discrete_laplace
    keep = _keep(threshold)
    if is_int(grid.T):
        lo, hi = int_bounds(grid.T)

        def int_function(arg: dict[Any, int]) -> dict[Any, int]:
            out: dict[Any, int] = {}
            for key, value in arg.items():
                noisy = int(value) + int(sampler(scale))
                if keep(noisy):
                    out[key] = min(max(noisy, lo), hi)  # saturate: post-processing
            return out

        return int_function

    unit = q(2) ** grid.k
    grid_scale = scale / unit

    def float_function(arg: dict[Any, float]) -> dict[Any, float]:
        if not all(math.isfinite(v) for v in arg.values()):
            raise FailedFunction("every value must be finite")  # before any randomness
        out: dict[Any, float] = {}
        for key, value in arg.items():
            noisy = (round_to_grid(value, grid.k) + int(sampler(grid_scale))) * unit
            if keep(noisy):  # decided exactly on the grid, before rounding to a float
                out[key] = round_to_float(q(noisy), grid.T)
        return out

    return float_function


def _delta(l0: int, linf: Any, grid: _Grid, threshold: Rational, tail: Any) -> float:
    """l0 · Pr[Z >= ⌈|T|/2^k − top⌉] (capped at 1).  A key present on one side only has
    |value| <= l∞′.  T >= 0: its grid index is at most top = n(l∞′) (rounding is monotone) and
    it is released iff its index plus Z reaches T/2^k.  T < 0: its index is at least n(−l∞′)
    and it is released iff its index plus Z is <= T/2^k, i.e. (Z symmetric) with probability
    at most Pr[Z >= ⌈|T|/2^k + n(−l∞′)⌉]: top = −n(−l∞′)."""
    cap = q(linf)
    if is_int(grid.T):
        top = cap
    elif threshold < 0:
        top = -q(round_to_grid(-cap, grid.k))
    else:
        top = q(round_to_grid(cap, grid.k))
    m = int(math.ceil(abs(threshold) / q(2) ** grid.k - top))  # noqa: RUF046 - an int, not an mpz
    return min(1.0, up(q(l0) * q(tail(m))))


@constructor
def make_laplace_threshold(
    input_domain: Domain[Mapping[_K, _V]],
    input_metric: Metric[Any],
    scale: float,
    threshold: Any,
    k: Any = None,
    MO: Any = "Approximate<MaxDivergence>",
) -> Measurement[Mapping[_K, _V], dict[_K, _V], Triple, tuple[float, float]]:
    r"""Add exact Laplace noise to each value; release the keys whose noisy value clears threshold.

    Integer values get Z ~ 𝓛_ℤ(scale); float values are rounded to the grid 2^k·ℤ (default
    k = k_min) and get 2^k·Z, Z ~ 𝓛_ℤ(scale/2^k).  The distances d_in may be of any numeric
    type D (integer bounds on float values, float bounds on integer values) and are read as
    exact rationals.  As in OpenDP 0.16, a threshold >= 0 keeps
    the noisy values >= threshold and a negative one keeps the noisy values <= threshold.  With
    (l0, l1, l∞) = d_in, l∞′ = min(l∞, l1), π = 2^k − 2^k_min per key (0 for integers and
    k = k_min), n(·) the grid index, top = n(l∞′) if threshold >= 0 else −n(−l∞′):

    Privacy map (approximate MaxDivergence), rounded up:
        ε = min(l1 + l0·π, l0·(l∞′ + π))/scale,
        δ = min(1, l0·Pr[Z >= ⌈|threshold|/2^k − top⌉])   (δ > 0 even when l∞′ = 0).

    Raises:
        NotImplementedForType: if the domain is not a map to non-NaN numbers, ``k`` is given
            for integer values, or ``MO`` is not approximate max divergence.
        MetricMismatch: if the metric is not ``l01inf_distance(absolute_distance(D))`` for a
            numeric D (as in OpenDP 0.16, D need not be the value type).
        InvalidParameter: if ``scale`` is negative or not finite, ``threshold`` is not a
            finite number, or ``k`` is outside [k_min, k_max].
        FailedFunction: at invocation, if a float value is infinite.

    Proof: docs/proofs/make_laplace_threshold.md

    >>> import opendp_lite.prelude as dp
    >>> from opendp_lite.measurements.threshold import l01inf_distance
    >>> space = (dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int)),
    ...          l01inf_distance(dp.absolute_distance(T=int)))
    >>> m = space >> dp.m.then_laplace_threshold(scale=2.0, threshold=10)
    >>> eps, delta = m.map((1, 1, 1))
    >>> eps, round(delta, 6)  # delta = Pr[Z >= 9] = e^-4.5 / (1 + e^-0.5)
    (0.5, 0.006915)
    >>> below = space >> dp.m.then_laplace_threshold(scale=2.0, threshold=-10)
    >>> below.map((1, 1, 1)) == m.map((1, 1, 1)), sorted(below({"low": -1000, "high": 1000}))
    (True, ['low'])
    """
    who = "make_laplace_threshold"
    grid = _check_space(input_domain, input_metric, 1, k, who)
    if MO not in ("Approximate<MaxDivergence>", approximate(max_divergence())):
        raise NotImplementedForType(f"{who}: MO must be Approximate<MaxDivergence>, got {MO!r}")
    scale = check_finite_nonneg("scale", scale)
    s = q(scale)
    t = check_exact_real("threshold", threshold)
    grid_scale = s / q(2) ** grid.k

    @lru_cache(maxsize=256)
    def tail(m: int) -> float:
        return laplace_tail_up(m, grid_scale) if s else float(m <= 0)

    def privacy_map(d_in: Triple) -> tuple[float, float]:
        l0, l1, linf = d_in
        if l0 == 0:
            return 0.0, 0.0
        linf_eff = min(q(linf), q(l1))
        pen = q(grid.penalty)
        if s == 0:
            return (0.0 if linf_eff + pen == 0 else math.inf), _delta(l0, linf_eff, grid, t, tail)
        eps = up(min(q(l1) + q(l0) * pen, q(l0) * (linf_eff + pen)) / q(s))
        return eps, _delta(l0, linf_eff, grid, t, tail)

    function = _function(grid, t, s, gaussian=False)
    return Measurement(
        input_domain, input_metric, Approximate(MaxDivergence()), function, privacy_map
    )


@constructor
def make_gaussian_threshold(
    input_domain: Domain[Mapping[_K, _V]],
    input_metric: Metric[Any],
    scale: float,
    threshold: Any,
    k: Any = None,
    MO: Any = "Approximate<ZeroConcentratedDivergence>",
) -> Measurement[Mapping[_K, _V], dict[_K, _V], Triple, tuple[float, float]]:
    r"""Add exact Gaussian noise to each value; release the keys whose noisy value clears threshold.

    Integer values get Z ~ 𝓝_ℤ(0, scale²); float values are rounded to the grid 2^k·ℤ
    (default k = k_min) and get 2^k·Z, Z ~ 𝓝_ℤ(0, (scale/2^k)²); d_in may be of any numeric
    type D, read as exact rationals.  A threshold >= 0 keeps the
    noisy values >= threshold, a negative one the noisy values <= threshold (as OpenDP 0.16).
    With (l0, l2, l∞) = d_in, l∞′ = min(l∞, l2), π = 2^k − 2^k_min per key (0 for integers and
    k = k_min), top = n(l∞′) if threshold >= 0 else −n(−l∞′), n(·) the grid index:

    Privacy map (approximate zCDP), rounded up:
        ρ = min((l2 + √l0·π)², l0·(l∞′ + π)²)/(2·scale²),
        δ = min(1, l0·Pr[Z >= ⌈|threshold|/2^k − top⌉])   (certified discrete tail).

    Raises:
        NotImplementedForType: if the domain is not a map to non-NaN numbers, ``k`` is given
            for integer values, or ``MO`` is not approximate zero-concentrated divergence.
        MetricMismatch: if the metric is not ``l02inf_distance(absolute_distance(D))`` for a
            numeric D (as in OpenDP 0.16, D need not be the value type).
        InvalidParameter: if ``scale`` is negative or not finite, ``threshold`` is not a
            finite number, or ``k`` is outside [k_min, k_max].
        FailedFunction: at invocation, if a float value is infinite.

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
    grid = _check_space(input_domain, input_metric, 2, k, who)
    if MO not in (
        "Approximate<ZeroConcentratedDivergence>",
        approximate(zero_concentrated_divergence()),
    ):
        raise NotImplementedForType(
            f"{who}: MO must be Approximate<ZeroConcentratedDivergence>, got {MO!r}"
        )
    scale = check_finite_nonneg("scale", scale)
    s = q(scale)
    t = check_exact_real("threshold", threshold)
    grid_scale = s / q(2) ** grid.k

    @lru_cache(maxsize=256)
    def tail(m: int) -> float:
        return gaussian_tail_up(m, grid_scale) if s else float(m <= 0)

    def privacy_map(d_in: Triple) -> tuple[float, float]:
        l0, l2, linf = d_in
        if l0 == 0:
            return 0.0, 0.0
        linf_eff = min(q(linf), q(l2))
        pen = q(grid.penalty)
        # ℓ2 of the per-key rounding moves: at most √l0·pen, with √l0 bounded above
        l2_grid = q(l2) + (q(sqrt_up(l0)) * pen if pen else 0)
        sq = min(l2_grid * l2_grid, q(l0) * (linf_eff + pen) * (linf_eff + pen))
        if s == 0:
            return (0.0 if sq == 0 else math.inf), _delta(l0, linf_eff, grid, t, tail)
        rho = up(sq / (2 * q(s) * q(s)))
        return rho, _delta(l0, linf_eff, grid, t, tail)

    function = _function(grid, t, s, gaussian=True)
    return Measurement(
        input_domain,
        input_metric,
        Approximate(ZeroConcentratedDivergence()),
        function,
        privacy_map,
    )


then_laplace_threshold = keyed(make_laplace_threshold)


then_gaussian_threshold = keyed(make_gaussian_threshold)
