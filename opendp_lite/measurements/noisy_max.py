"""Private selection: report noisy max and top-k, sampled exactly.

No float comparison of continuous noise ever decides a winner unless it is certified.  With
γ_i = (s_max − s_i)/scale ≥ 0 (exact rationals) and independent uniforms U_i, the released
indices are the k smallest **keys** (:mod:`opendp_lite.samplers.selection`):

* **Exponential noise** (``max_divergence``): argmax_i (s_i + Exp(scale)) is the smallest
  K_i = γ_i + ln U_i (E_i = −ln U_i ~ Exp(1)); for k = 1 this is the law of permute-and-flip
  (McKenna & Sheldon 2020; Ding, Kifer et al. 2021), and top-k is the ordered k smallest keys
  (one shot, *not* peeled permute-and-flip).
* **Gumbel noise** (``zero_concentrated_divergence``, and ``make_report_noisy_max_gumbel``):
  K_i = γ_i + ln(−ln U_i) (G_i = −ln(−ln U_i) ~ Gumbel(1)); argmin has Pr[i] ∝ exp(s_i/scale)
  (the Gumbel-max trick, McSherry & Talwar 2007), top-k the Plackett–Luce law of peeling
  (Durfee & Rogers 2019, Lemma 4.2).

Numeric score vectors use the certified vectorised race: float64 intervals on the keys from
32 revealed bits of each U_i; candidates that cannot be in the top k are discarded, and the few
contenders are ordered by the intervals when they are disjoint, else by an exact MPFR race that
reveals more bits of the *same* U_i (proof: ``docs/proofs/sampling/selection-race.md``).  The
reference samplers on rationals (permute-and-flip, rejection, peeling, the rational race) serve
scale 0 and non-array inputs.

>>> import opendp_lite.prelude as dp
>>> space = dp.vector_domain(dp.atom_domain(T=int)), dp.linf_distance(T=int)
>>> dp.m.make_noisy_max(*space, dp.max_divergence(), scale=1.0)([1, 2, 3]) in (0, 1, 2)
True
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._arith import Rational, q, up
from .._registry import constructor
from .._spine import release_vec
from .._types import is_float, is_int
from .._validate import check_finite_nonneg, check_int, check_no_nan
from ..core import Domain, Measure, Measurement, Metric
from ..domains import AtomDomain, VectorDomain
from ..errors import (
    FailedFunction,
    FailedMap,
    InvalidParameter,
    MetricMismatch,
    NotImplementedForType,
)
from ..measures import MaxDivergence, ZeroConcentratedDivergence, max_divergence
from ..metrics import LInfDistance, linf_distance
from ..samplers.selection import noisy_top_k, select_exact

__all__ = [
    "make_noisy_max",
    "make_noisy_top_k",
    "make_report_noisy_max_gumbel",
    "then_noisy_max",
    "then_noisy_top_k",
    "then_report_noisy_max_gumbel",
]


# ----------------------------------------------------------------------------------------------
# Constructors


def _exact_scores(arg: Any, negate: bool) -> list[Rational]:
    """The exact rational value of each score (negated if asked)."""
    if len(arg) == 0:
        raise FailedFunction("the vector of scores is empty: there is nothing to select")
    try:
        scores = [q(v.item() if isinstance(v, np.generic) else v) for v in arg]
    except (FailedMap, ValueError, OverflowError):
        raise FailedFunction("every score must be finite") from None
    return [-s for s in scores] if negate else scores


def _check_space(input_domain: Domain[Any], input_metric: Metric[Any], who: str) -> str:
    """Validate (vector of non-NaN numbers, L∞ distance); return the atom carrier."""
    elem = input_domain.element_domain if isinstance(input_domain, VectorDomain) else None
    if not isinstance(elem, AtomDomain) or not (is_int(elem.T) or is_float(elem.T)):
        raise NotImplementedForType(
            f"{who}: input_domain must be a vector_domain of numeric atoms, got {input_domain!r}"
        )
    check_no_nan(who, input_domain, elem)
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


def _select_vector(arg: Any, scale: float, k: int, gumbel: bool, negate: bool) -> list[int]:
    """The certified vectorised race (:mod:`opendp_lite.samplers.selection`) on numeric arrays;
    the exact rational path otherwise (same law either way)."""
    if (
        scale > 0
        and isinstance(arg, np.ndarray)
        and arg.ndim == 1
        and arg.dtype.kind in "iuf"
        and len(arg) > 0
    ):
        if arg.dtype.kind == "f" and not bool(np.isfinite(arg).all()):
            raise FailedFunction("every score must be finite")
        return noisy_top_k(arg, scale, k, "gumbel" if gumbel else "exponential", negate=negate)
    return select_exact(_exact_scores(arg, negate), q(scale), k, gumbel)


@constructor
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
    k = check_int("k", k, min=0)
    monotonic = bool(getattr(input_metric, "monotonic", False))

    def function(arg: Any) -> list[int]:
        return _select_vector(arg, scale, k, zcdp, negate)

    return Measurement(
        input_domain,
        input_metric,
        output_measure,
        function,
        _selection_map(scale, k, monotonic, zcdp),
    )


@constructor
def make_noisy_max(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    output_measure: Measure[float],
    scale: float,
    negate: bool = False,
) -> Measurement[Any, int, Any, float]:
    r"""Release the index of the largest noisy score (smallest if ``negate``).

    Under ``max_divergence()`` the noise is Exp(scale) (the law of permute-and-flip); under
    ``zero_concentrated_divergence()`` it is Gumbel(scale), i.e. the exponential mechanism
    Pr[i] ∝ exp(s_i/scale).  Both are sampled exactly, by the certified race of
    :mod:`opendp_lite.samplers.selection` (module docstring).  With ε₁ = d_in/scale on a
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


@constructor
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
    >>> space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float)
    >>> m = dp.m.make_report_noisy_max_gumbel(*space, scale=2.0, optimize="min")
    >>> m([0.0, 50.0, 60.0]), m.map(1.0)
    (0, 1.0)
    """
    if optimize not in ("max", "min"):
        raise InvalidParameter(f"optimize must be 'max' or 'min', got {optimize!r}")
    who = "make_report_noisy_max_gumbel"
    _check_space(input_domain, input_metric, who)
    scale = check_finite_nonneg("scale", scale)
    negate = optimize == "min"
    monotonic = bool(getattr(input_metric, "monotonic", False))

    def function(arg: Any) -> int:
        return _select_vector(arg, scale, 1, True, negate)[0]

    return Measurement(
        input_domain,
        input_metric,
        max_divergence(),
        function,
        _selection_map(scale, 1, monotonic, False),
    )


then_noisy_top_k = release_vec(make_noisy_top_k)


then_noisy_max = release_vec(make_noisy_max)


then_report_noisy_max_gumbel = release_vec(make_report_noisy_max_gumbel)
