"""Mean, sum of squared deviations and variance of bounded floats of known size.

All three use the exact grid of ``_aggregate``: each value becomes ``k = trunc(x · 2^p)``, the
statistic of the grid values ``q_i = k_i · 2^-p`` is computed in exact integers, and the exact
rational is rounded once.  The maps are OpenDP's restricted-sensitivity bounds applied to the
grid values, plus twice the bound on that one rounding.
"""

from __future__ import annotations

from typing import Any, Protocol, cast

import numpy.typing as npt

from .. import _arith as ar
from .._registry import constructor
from .._spine import into, then, typed_as
from .._types import Vec, is_float
from .._validate import check_int
from ..core import Domain, Metric, Transformation
from ..domains import atom_domain
from ..errors import InvalidParameter, NotImplementedForType
from ..metrics import InsertDeleteDistance, SymmetricDistance, absolute_distance
from ._aggregate import (
    SQ_BITS,
    absorbing_clip,
    bounded_vector,
    centered_k,
    centered_sums,
    check_metric,
    float_max,
    grid_k,
    grid_shift,
    grid_sums,
    parse_summation,
    rounding_error,
    to_carrier,
)

__all__ = [
    "make_mean",
    "make_sum_of_squared_deviations",
    "make_variance",
    "then_mean",
    "then_sum_of_squared_deviations",
    "then_variance",
]

_METRICS = (SymmetricDistance, InsertDeleteDistance)


def _sized_float(
    name: str, domain: Domain[Any], metric: Metric[Any]
) -> tuple[str, float, float, int]:
    elem, lo, hi, size = bounded_vector(name, domain)
    check_metric(name, metric, _METRICS)
    if not is_float(elem.T):
        raise NotImplementedForType(f"{name} needs a float carrier, got T={elem.T}")
    if size is None:
        raise InvalidParameter(f"{name} needs a known dataset size (vector_domain(..., size=n))")
    if size == 0:
        raise InvalidParameter(f"{name} needs size >= 1, got 0")
    return elem.T, float(lo), float(hi), size


class _MeanType(Protocol):
    """Typing only: the mean is of floats only (and a dataset metric: symmetric or
    insert-delete)."""

    def __call__(
        self, input_domain: Domain[Vec[float]], input_metric: Metric[int], /
    ) -> Transformation[Vec[float], float, int, float]: ...


@typed_as(cast("_MeanType", None))
@constructor
def make_mean(
    input_domain: Domain[Any], input_metric: Metric[Any]
) -> Transformation[Any, float, int, float]:
    r"""The mean of ``n`` bounded floats (known size), from their exact grid sum.

    Output: ``round_T(Σ k_i / (n · 2^p))`` with ``k_i = trunc(x_i · 2^p)`` (46 bits of the
    bound).  Stability map, with ``W = (k(U) − k(L)) · 2^-p <= U − L + 2^-p`` and
    ``M' = max|k(L)|, |k(U)| · 2^-p``:

    .. math:: d_{out} = \lfloor d_{in}/2 \rfloor \cdot W / n + 2\,e_T(M')

    (the rounding term is 0 for f64 when ``n`` is a power of two and ``n · K <= 2^53``,
    ``K = max|k(L)|, |k(U)|``: the mean is then computed exactly).

    Raises:
        InvalidParameter: if the size is unknown or 0, or the elements are unbounded.
        NotImplementedForType: if the carrier is not a float or the metric is not symmetric or
            insert-delete distance.

    Proof: docs/proofs/make_mean.md

    >>> import opendp_lite.prelude as dp
    >>> domain = dp.vector_domain(dp.atom_domain(bounds=(0.0, 10.0)), size=4)
    >>> space = domain, dp.symmetric_distance()
    >>> t = space >> dp.t.then_mean()
    >>> t([1.0, 2.0, 3.0, 4.0]), t.map(2)
    (2.5, 2.5)
    """
    name = "make_mean"
    T, lo, hi, n = _sized_float(name, input_domain, input_metric)
    p = grid_shift(max(abs(lo), abs(hi)))
    k_lo, k_hi = grid_k(lo, p), grid_k(hi, p)
    inv = ar.q(2) ** -p
    mag = max(abs(k_lo), abs(k_hi)) * inv
    j = n.bit_length() - 1
    # n = 2^j with |Σk| <= n·K <= 2^53: Σk·2^-(p+j) is a binary64 number, no rounding at all
    exact = T == "f64" and n == 1 << j and n * max(abs(k_lo), abs(k_hi)) <= 2**53
    exact = exact and p + j <= 1074
    # otherwise one rounding; a non-zero mean is at least 2^-p / n
    relax = ar.q(0) if exact else 2 * rounding_error(mag, T, inv / n)
    width = (k_hi - k_lo) * inv

    def function(x: npt.NDArray[Any], clip: tuple[Any, Any] | None = None) -> float:
        total = grid_sums(x, p, clip)  # of clip(x, *clip) if a clamp is fused in
        return to_carrier(total, n, p, T)

    def stability_map(d_in: int) -> float:
        return ar.up((d_in // 2) * width / n + relax)

    return Transformation(
        input_domain,
        input_metric,
        atom_domain(T=T, nan=False),
        absolute_distance(T=T),
        absorbing_clip(function),
        stability_map,
    )


then_mean = then(make_mean)


def _ssd(
    name: str, domain: Domain[Any], metric: Metric[Any], S: object, ddof: int | None
) -> Transformation[Any, float, int, float]:
    T, lo, hi, n = _sized_float(name, domain, metric)
    S_T = parse_summation(name, S)
    if "<T>" not in str(S) and S_T != T:
        raise NotImplementedForType(f"{name}: S={S!r} does not match the carrier {T}")
    if ddof is not None:
        ddof = check_int("ddof", ddof, min=0, max=n - 1, who=name, what="an int in [0, size)")
    # grid: 46 bits of M, centred at the lower bound's index and shifted right until the
    # indices fit 26 bits; SSD is shift-invariant, so the centring changes nothing
    p = grid_shift(max(abs(lo), abs(hi)))
    k_c = grid_k(lo, p)
    shift = 0
    while max(abs(centered_k(lo, p, k_c, shift)), abs(centered_k(hi, p, k_c, shift))) > 2**SQ_BITS:
        shift += 1
    j_lo, j_hi = centered_k(lo, p, k_c, shift), centered_k(hi, p, k_c, shift)
    inv = ar.q(2) ** (shift - p)  # the grid step
    width = (j_hi - j_lo) * inv
    denom = 1 if ddof is None else n - ddof  # SSD, or variance = SSD / (n − ddof)
    # the statistic of n values in an interval of width W is at most n·W²/4 (SSD), / (n−ddof)
    mag = n * width * width / 4 / denom
    if ar.up(mag) > float_max(T) / 4:
        raise InvalidParameter(f"{name}: size·(U − L)² = {n}·{hi - lo}² can overflow {T}")
    # a non-zero statistic is at least 2^-2p / (n · denom)
    relax = 2 * rounding_error(mag, T, inv * inv / (n * denom))
    sens = width * width * (n - 1) / n / denom

    def function(x: npt.NDArray[Any], clip: tuple[Any, Any] | None = None) -> float:
        s1, s2 = centered_sums(x, p, k_c, shift, clip)  # of clip(x, *clip) if fused
        # Σ(q − q̄)² = (n·Σj² − (Σj)²) · step² / n, exactly, in integers
        return to_carrier(n * s2 - s1 * s1, n * denom, 2 * (p - shift), T)

    def stability_map(d_in: int) -> float:
        return ar.up((d_in // 2) * sens + relax)

    return Transformation(
        domain,
        metric,
        atom_domain(T=T, nan=False),
        absolute_distance(T=T),
        absorbing_clip(function),
        stability_map,
    )


@constructor
def make_sum_of_squared_deviations(
    input_domain: Domain[Any], input_metric: Metric[Any], S: object = "Pairwise<T>"
) -> Transformation[Any, float, int, float]:
    r"""The sum of squared deviations from the mean, ``Σ (x_i − x̄)²``, of ``n`` bounded floats.

    Computed exactly on the grid ``k_i = trunc(x_i · 2^p)`` (26 bits of the bound, so that
    ``k²`` is exact) as ``(n Σk² − (Σk)²) / (n · 2^(2p))`` and rounded once; ``S`` only names
    the carrier.  Stability map, with ``W = (k(U) − k(L)) · 2^-p``:

    .. math:: d_{out} = \lfloor d_{in}/2 \rfloor \cdot W^2 (n - 1)/n + 2\,e_T(n W^2 / 4)

    Raises:
        InvalidParameter: if the size is unknown or 0, or the elements are unbounded, or
            ``n (U − L)²`` could overflow.
        NotImplementedForType: if the carrier is not a float, ``S`` does not match it, or the
            metric is not symmetric or insert-delete distance.

    Proof: docs/proofs/make_sum_of_squared_deviations.md

    >>> import opendp_lite.prelude as dp
    >>> domain = dp.vector_domain(dp.atom_domain(bounds=(0.0, 1.0)), size=10)
    >>> space = domain, dp.symmetric_distance()
    >>> t = space >> dp.t.then_sum_of_squared_deviations()
    >>> t([0.0] * 5 + [1.0] * 5), t.map(2)
    (2.5, 0.9000000000000006)
    """
    return _ssd("make_sum_of_squared_deviations", input_domain, input_metric, S, None)


then_sum_of_squared_deviations = into(make_sum_of_squared_deviations)


@constructor
def make_variance(
    input_domain: Domain[Any], input_metric: Metric[Any], ddof: int = 1, S: object = "Pairwise<T>"
) -> Transformation[Any, float, int, float]:
    r"""The variance ``Σ (x_i − x̄)² / (n − ddof)`` of ``n`` bounded floats (known size).

    Computed exactly on the grid as for :func:`make_sum_of_squared_deviations`, divided by
    ``n − ddof`` exactly, rounded once.  Stability map:

    .. math:: d_{out} = \lfloor d_{in}/2 \rfloor \cdot \frac{W^2 (n - 1)}{n (n - ddof)}
              + 2\,e_T\!\left(\frac{n W^2}{4 (n - ddof)}\right)

    Raises:
        InvalidParameter: if the size is unknown, ``ddof`` is not in ``[0, n)``, the elements
            are unbounded, or the statistic could overflow.
        NotImplementedForType: if the carrier is not a float, ``S`` does not match it, or the
            metric is not symmetric or insert-delete distance.

    Proof: docs/proofs/make_variance.md

    >>> import opendp_lite.prelude as dp
    >>> domain = dp.vector_domain(dp.atom_domain(bounds=(0.0, 1.0)), size=10)
    >>> space = domain, dp.symmetric_distance()
    >>> t = space >> dp.t.then_variance()
    >>> round(t([0.0] * 5 + [1.0] * 5), 12), t.map(2)
    (0.277777777778, 0.10000000000000007)
    """
    return _ssd("make_variance", input_domain, input_metric, S, ddof)


then_variance = into(make_variance)
