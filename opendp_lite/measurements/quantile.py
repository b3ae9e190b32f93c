"""Private quantile by exact noisy selection among candidates (Smith 2011; OpenDP 0.16).

Each candidate c is scored s(c) = |(1 − α)·#{x < c} − α·#{x > c}| in exact rationals (0 at an
exact α-quantile), and the candidate with the least noisy score is released, with exponential
noise (pure DP, permute-and-flip) or Gumbel noise (zCDP, the exponential mechanism), sampled
exactly as in :mod:`opendp_lite.measurements.noisy_max`.

>>> import opendp_lite.prelude as dp
>>> space = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
>>> median = dp.m.make_private_quantile(*space, dp.max_divergence(), [0, 25, 50, 75, 100],
...                                     alpha=0.5, scale=1.0)
>>> median(list(range(101)) * 10)
50
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import pairwise
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from .._arith import Rational, q, up
from .._registry import constructor
from .._spine import pick
from .._types import carrier_dtype, is_float, is_int
from .._validate import check_finite_nonneg, check_no_nan, check_real
from ..core import Domain, Measure, Measurement, Metric
from ..domains import AtomDomain, VectorDomain
from ..errors import InvalidParameter, MetricMismatch, NotImplementedForType, NotInDomain
from ..measures import MaxDivergence, ZeroConcentratedDivergence
from ..metrics import InsertDeleteDistance, SymmetricDistance, symmetric_distance
from ..samplers.selection import Noise, noisy_top_k, select_exact

__all__ = ["make_private_quantile", "then_private_quantile"]


def _score_vector(data: Any, keys: Any, num: int, den: int) -> npt.NDArray[np.int64] | list[int]:
    """``den · s(c) = |(den − num)·#{x < c} − num·#{x > c}|`` per candidate, in exact integers.

    With ``α = num/den`` this is the score s(c) of the module docstring scaled by ``den > 0``;
    the selection is run on it with the scale multiplied by ``den``, which leaves every ratio
    score/scale, and so the law, unchanged (no rational is built per candidate).  An int64
    array when every score fits (|a·lo − b·hi| <= max(a, b)·n < 2^62), else Python integers.
    """
    ordered = np.sort(np.asarray(data, dtype=keys.dtype))
    n = len(ordered)
    below = np.searchsorted(ordered, keys, side="left")
    above = n - np.searchsorted(ordered, keys, side="right")
    a, b = den - num, num
    if max(a, b) * max(n, 1) < 2**62:  # exact in int64 (a and b themselves too, when n = 0)
        v: npt.NDArray[np.int64] = np.abs(
            a * below.astype(np.int64, copy=False) - b * above.astype(np.int64, copy=False)
        )
        return v
    return [abs(a * lo - b * hi) for lo, hi in zip(below.tolist(), above.tolist(), strict=True)]


def _scores(data: Any, keys: Any, num: int, den: int) -> list[int]:
    """:func:`_score_vector` as a list of Python integers."""
    v = _score_vector(data, keys, num, den)
    return v if isinstance(v, list) else cast(list[int], v.tolist())


def _race_scale(scaled: Rational) -> float | None:
    """``scaled`` as a float if it is one exactly and > 0 (the race takes a float scale)."""
    try:
        f = float(scaled)
    except OverflowError:
        return None
    return f if f > 0 and math.isfinite(f) and q(f) == scaled else None


@constructor
def make_private_quantile(
    input_domain: Domain[Any],
    input_metric: Metric[int],
    output_measure: Measure[float],
    candidates: Sequence[Any],
    alpha: float,
    scale: float,
) -> Measurement[Any, Any, int, float]:
    r"""Release the candidate closest to the α-quantile by exact noisy selection.

    Score: s(c) = |(1 − α)·#{x < c} − α·#{x > c}|, exact in ℚ (α taken exactly).  Sensitivity
    in L∞: Δ = d_in·max(α, 1 − α) when the size is unknown (one insertion or deletion moves one
    count by 1), Δ = ⌊d_in/2⌋ when the input domain fixes the size (a change moves one record
    across c, changing the score by at most (1 − α) + α = 1).

    Privacy map, in ℚ, rounded up (selection is never monotone here):
        MaxDivergence (exponential noise): ε = 2Δ/scale;
        ZeroConcentratedDivergence (Gumbel noise): ρ = (2Δ/scale)²/8.

    Raises:
        NotImplementedForType: if the domain is not a vector of non-NaN numbers, or the measure
            is neither max nor zero-concentrated divergence.
        MetricMismatch: if the metric is not symmetric or insert-delete distance.
        InvalidParameter: if ``candidates`` is empty, not strictly increasing or not of the
            atom type, ``alpha`` is not in [0, 1], or ``scale`` is negative or not finite.

    Proof: docs/proofs/make_private_quantile.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    >>> q90 = space >> dp.m.then_private_quantile(dp.zero_concentrated_divergence(),
    ...     candidates=[0.0, 0.5, 0.9, 1.0], alpha=0.9, scale=2.0)
    >>> round(q90.map(1), 6)  # (2·0.9/2)²/8
    0.10125
    """
    elem = input_domain.element_domain if isinstance(input_domain, VectorDomain) else None
    if not isinstance(elem, AtomDomain) or not (is_int(elem.T) or is_float(elem.T)):
        raise NotImplementedForType(
            f"make_private_quantile: input_domain must be a vector_domain of non-NaN numbers, "
            f"got {input_domain!r}"
        )
    check_no_nan("make_private_quantile", input_domain, elem)
    if not isinstance(input_metric, (SymmetricDistance, InsertDeleteDistance)):
        raise MetricMismatch(symmetric_distance(), input_metric, "make_private_quantile")
    if isinstance(output_measure, MaxDivergence):
        gumbel = False
    elif isinstance(output_measure, ZeroConcentratedDivergence):
        gumbel = True
    else:
        raise NotImplementedForType(
            "make_private_quantile: output_measure must be max_divergence() or "
            f"zero_concentrated_divergence(), got {output_measure!r}"
        )
    atom: AtomDomain[Any] = AtomDomain(T=elem.T)
    try:
        cands = [atom._normalize(c) for c in candidates]
    except NotInDomain as e:
        raise InvalidParameter(f"candidates must be values of type {elem.T}: {e}") from None
    if not cands:
        raise InvalidParameter("candidates must not be empty")
    if any(not a < b for a, b in pairwise(cands)):
        raise InvalidParameter(f"candidates must be strictly increasing, got {list(candidates)!r}")
    alpha_f = check_real("alpha", alpha, what="a number in [0, 1]")
    if not 0 <= alpha_f <= 1:
        raise InvalidParameter(f"alpha must be a number in [0, 1], got {alpha!r}")
    a = q(alpha_f)
    scale = check_finite_nonneg("scale", scale)
    s = q(scale)
    assert isinstance(input_domain, VectorDomain)  # noqa: S101 (narrowing; checked above)
    sized = input_domain.size is not None
    per_unit = q(1) if sized else max(a, 1 - a)
    keys = np.asarray(cands, dtype=carrier_dtype(elem.T))
    num, den = int(a.numerator), int(a.denominator)
    scaled = s * den  # the scale of the den-scaled scores
    # the certified race needs a float scale > 0; den is a power of two (α is a float or 0/1),
    # so scale·den is exact unless it overflows
    race_scale = _race_scale(scaled)
    noise: Noise = "gumbel" if gumbel else "exponential"

    def function(arg: Any) -> Any:
        scores = _score_vector(arg, keys, num, den)
        if race_scale is not None and not isinstance(scores, list):
            # the least noisy score: the certified race on the exact integer scores
            return cands[noisy_top_k(scores, race_scale, 1, noise, negate=True)[0]]
        # scale 0 or scores beyond int64: the reference samplers on exact rationals
        return cands[select_exact([-int(v) for v in scores], scaled, 1, gumbel)[0]]

    def privacy_map(d_in: int) -> float:
        delta = per_unit * (d_in // 2 if sized else d_in)
        if delta == 0:
            return 0.0
        if s == 0:
            return math.inf
        eps = 2 * q(delta) / q(s)
        return up(eps * eps / 8) if gumbel else up(eps)

    return Measurement(input_domain, input_metric, output_measure, function, privacy_map)


then_private_quantile = pick(make_private_quantile)
