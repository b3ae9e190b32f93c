"""Quantiles: candidate scores for the exponential mechanism, and post-processing of counts."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import backends
from .._registry import constructor
from .._spine import into
from .._types import Vec, carrier_name, is_float, is_int
from .._validate import check_no_nan
from ..core import Domain, Function, Metric, Transformation
from ..domains import atom_domain, vector_domain
from ..errors import FailedFunction, InvalidParameter, NotImplementedForType, NotInDomain
from ..metrics import InsertDeleteDistance, SymmetricDistance, linf_distance
from ._aggregate import bounded_vector, check_metric

__all__ = [
    "make_cdf",
    "make_quantile_score_candidates",
    "make_quantiles_from_counts",
    "then_quantile_score_candidates",
]

_METRICS = (SymmetricDistance, InsertDeleteDistance)
#: alpha is represented by the closest fraction with at most this denominator
_ALPHA_DEN = 10_000


def _alpha_fraction(name: str, alpha: float) -> tuple[int, int]:
    a = float(alpha)
    if not (math.isfinite(a) and 0.0 <= a <= 1.0):
        raise InvalidParameter(f"{name}: alpha must be in [0, 1], got {alpha!r}")
    f = Fraction(a).limit_denominator(_ALPHA_DEN)
    return f.numerator, f.denominator


@constructor
def make_quantile_score_candidates(
    input_domain: Domain[Any], input_metric: Metric[Any], candidates: Sequence[Any], alpha: float
) -> Transformation[Any, Vec[int], int, int]:
    r"""Score each candidate by how far it is from the ``alpha``-quantile of the data.

    With ``alpha ≈ num/den`` (the closest fraction with ``den <= 10^4``), the score of candidate
    ``c`` is ``|(den − num)·#{x < c} − num·#{x > c}|`` (lower is better), an unsigned integer.
    Stability map (output L∞ distance): unknown size
    :math:`d_{out} = d_{in} \cdot \max(num, den - num)`; known size
    :math:`d_{out} = \lfloor d_{in}/2 \rfloor \cdot den`.

    Raises:
        InvalidParameter: if the candidates are not strictly increasing members of ``T``, or
            alpha is not in [0, 1].
        NotImplementedForType: if the domain is not a vector of numbers without NaN, or the
            metric is not symmetric or insert-delete distance.

    Proof: docs/proofs/make_quantile_score_candidates.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    >>> t = space >> dp.t.then_quantile_score_candidates([0.0, 1.0, 2.0, 3.0], alpha=0.5)
    >>> t([0.5, 1.5, 1.5, 2.5, 2.7, 0.1]), t.map(1)
    ([6, 2, 2, 6], 1)
    """
    name = "make_quantile_score_candidates"
    elem, _, _, size = bounded_vector(name, input_domain, need_bounds=False)
    check_metric(name, input_metric, _METRICS)
    check_no_nan(name, input_domain, elem)
    T = elem.T
    unbounded = atom_domain(T=T, nan=False)
    try:
        cands = [unbounded._normalize(c) for c in candidates]
    except NotInDomain as e:
        raise InvalidParameter(f"{name}: candidates must be values of {T}: {e}") from None
    if any(not a < b for a, b in itertools.pairwise(cands)):
        raise InvalidParameter(f"{name}: candidates must be strictly increasing")
    num, den = _alpha_fraction(name, alpha)
    c_arr = np.asarray(cands, dtype=np.float64 if is_float(T) else object)

    def below_above(b: npt.NDArray[Any]) -> npt.NDArray[np.int64]:
        xs = np.sort(b)
        cs = c_arr.astype(xs.dtype) if is_float(T) else np.asarray(cands, dtype=xs.dtype)
        lt = np.searchsorted(xs, cs, side="left")
        gt = len(xs) - np.searchsorted(xs, cs, side="right")
        return np.stack([lt, gt]).astype(np.int64)

    def function(x: npt.NDArray[Any]) -> npt.NDArray[Any]:
        # per-block counts below/above each candidate (on the workers, for Dask), added exactly
        lt, gt = backends.of(x).reduce_blocks(x, below_above)
        scores = np.abs((den - num) * lt - num * gt)  # <= 10^4 · n: no int64 overflow
        out: npt.NDArray[Any] = scores.astype(np.uint64)
        return out

    if size is None:
        per = max(num, den - num)

        def stability_map(d_in: int) -> int:
            return d_in * per
    else:

        def stability_map(d_in: int) -> int:
            return (d_in // 2) * den

    return Transformation(
        input_domain,
        input_metric,
        vector_domain(atom_domain(T="u64"), size=len(cands)),
        linf_distance(T="u64"),
        function,
        stability_map,
    )


then_quantile_score_candidates = into(make_quantile_score_candidates)


@constructor
def make_cdf(TA: object = "float") -> Function[Any, npt.NDArray[Any]]:
    r"""Post-process noisy counts into a cumulative distribution: ``cumsum(c) / sum(c)``.

    A :class:`~opendp_lite.core.Function` (post-processing: no map, no privacy cost).
    Negative noisy counts are treated as 0 so that the result is non-decreasing.

    Raises:
        NotImplementedForType: if ``TA`` is not a float type.
        FailedFunction: (when called) if the counts do not sum to a positive value.

    Proof: docs/proofs/make_cdf.md

    >>> import opendp_lite.prelude as dp
    >>> dp.t.make_cdf()([1.0, 2.0, 3.0, 4.0]).tolist()
    [0.1, 0.3, 0.6, 1.0]
    """
    T = carrier_name(TA)
    if not is_float(T):
        raise NotImplementedForType(f"make_cdf: TA must be a float type, got {TA!r}")

    def function(counts: Any) -> npt.NDArray[Any]:
        c = np.maximum(np.asarray(counts, dtype=np.float64), 0.0)
        cum = np.cumsum(c)
        if c.ndim != 1 or c.size == 0 or not cum[-1] > 0:
            raise FailedFunction("make_cdf needs a non-empty vector of counts with positive sum")
        out: npt.NDArray[Any] = (cum / cum[-1]).astype(np.float32 if T == "f32" else np.float64)
        return out

    return Function(function)


@constructor
def make_quantiles_from_counts(
    bin_edges: Sequence[Any],
    alphas: Sequence[float],
    interpolation: str = "linear",
    TA: object = None,
    F: object = "float",
) -> Function[Any, list[Any]]:
    r"""Post-process noisy bin counts into estimates of the ``alphas``-quantiles.

    With ``k`` bins between ``bin_edges[0] < ... < bin_edges[k]`` and the empirical CDF at the
    edges ``F_j = Σ_{i<j} c_i / Σ c_i`` (negative counts as 0), the ``alpha``-quantile lies in
    the first bin ``j`` with ``F_{j+1} >= alpha``; ``"linear"`` interpolates inside it,
    ``"nearest"`` takes its nearer edge.  A :class:`~opendp_lite.core.Function`
    (post-processing: no map).

    Raises:
        InvalidParameter: if the edges are not strictly increasing (at least two), an alpha
            is outside [0, 1] or the alphas decrease, or the interpolation is unknown.
        FailedFunction: (when called) if there are not ``len(bin_edges) − 1`` counts or they
            do not sum to a positive value.

    Proof: docs/proofs/make_quantiles_from_counts.md

    >>> import opendp_lite.prelude as dp
    >>> f = dp.t.make_quantiles_from_counts([0.0, 1.0, 2.0, 3.0, 4.0], [0.1, 0.5, 0.9])
    >>> f([0.0, 2.0, 0.0, 4.0])
    [1.3, 3.25, 3.8499999999999996]
    """
    name = "make_quantiles_from_counts"
    edges = list(bin_edges)
    if len(edges) < 2 or any(not a < b for a, b in itertools.pairwise(edges)):
        raise InvalidParameter(f"{name}: bin_edges must be strictly increasing (>= 2 edges)")
    T = carrier_name(TA) if TA is not None else ("i32" if isinstance(edges[0], int) else "f64")
    if not (is_int(T) or is_float(T)):
        raise NotImplementedForType(f"{name}: TA must be numeric, got {TA!r}")
    a_list = [float(a) for a in alphas]
    if any(not 0.0 <= a <= 1.0 for a in a_list) or a_list != sorted(a_list):
        raise InvalidParameter(f"{name}: alphas must be non-decreasing values in [0, 1]")
    if interpolation not in ("linear", "nearest"):
        raise InvalidParameter(f"{name}: interpolation must be 'linear' or 'nearest'")
    e = np.asarray(edges, dtype=np.float64)
    a = np.asarray(a_list, dtype=np.float64)

    def function(counts: Any) -> list[Any]:
        c = np.maximum(np.asarray(counts, dtype=np.float64), 0.0)
        if c.ndim != 1 or c.shape[0] != len(edges) - 1:
            raise FailedFunction(f"{name} needs {len(edges) - 1} counts, got {np.shape(c)}")
        cum = np.concatenate(([0.0], np.cumsum(c)))
        if not cum[-1] > 0:
            raise FailedFunction(f"{name} needs counts with a positive sum")
        cdf = cum / cum[-1]
        j = np.clip(np.searchsorted(cdf, a, side="left"), 1, len(edges) - 1)
        lo_c, hi_c = cdf[j - 1], cdf[j]
        frac = np.where(hi_c > lo_c, (a - lo_c) / np.where(hi_c > lo_c, hi_c - lo_c, 1.0), 0.0)
        frac = np.clip(frac, 0.0, 1.0)
        if interpolation == "nearest":
            frac = np.where(frac < 0.5, 0.0, 1.0)
        q = e[j - 1] + frac * (e[j] - e[j - 1])
        if is_int(T):
            return [round(v) for v in q.tolist()]
        out: list[Any] = q.tolist()
        return out

    return Function(function)
