"""Sums of bounded data, integer and float, sized and unsized, that never overflow silently.

Integers are summed exactly (never in wrapping numpy arithmetic); a *checked* sum refuses to
build when ``size · max(|L|, |U|)`` can leave the carrier, a *saturating* sum clamps to the
carrier's range and its map covers the clamp (as OpenDP's monotonic and split sums do).

Floats are summed exactly on a fixed grid (see ``_aggregate``): every value is truncated to a
multiple of ``2^-p`` (``p`` fixed by the bounds so that the grid keeps 46 bits of the largest
bound), the integers are summed without error, the total is saturated at ``±size_limit · M'``
and rounded once.  The maps add that one rounding, so they hold for every input, in every
order, unlike a float summation bounded only for its own order (Casacuberta et al. 2022).
"""

from __future__ import annotations

import os
import sys
import warnings
from types import FrameType
from typing import Any, Protocol, cast

import numpy.typing as npt

from .. import _arith as ar
from .._registry import constructor
from .._spine import Numeric, fold, typed_as
from .._types import Vec, is_float
from .._validate import check_int
from ..core import (
    Domain,
    Metric,
    Transformation,
)
from ..domains import atom_domain, vector_domain
from ..errors import InvalidParameter, NotImplementedForType, OpenDPLiteWarning
from ..metrics import (
    InsertDeleteDistance,
    SymmetricDistance,
    absolute_distance,
    insert_delete_distance,
    symmetric_distance,
)
from ._aggregate import (
    absorbing_clip,
    bounded_vector,
    check_metric,
    exact_int_sum,
    float_max,
    grid_k,
    grid_shift,
    grid_sums,
    int_range,
    parse_summation,
    rounding_error,
    split_sums,
    to_carrier,
)

__all__ = [
    "make_bounded_float_checked_sum",
    "make_bounded_float_ordered_sum",
    "make_bounded_int_monotonic_sum",
    "make_bounded_int_ordered_sum",
    "make_bounded_int_split_sum",
    "make_sized_bounded_float_checked_sum",
    "make_sized_bounded_float_ordered_sum",
    "make_sized_bounded_int_checked_sum",
    "make_sized_bounded_int_monotonic_sum",
    "make_sized_bounded_int_ordered_sum",
    "make_sized_bounded_int_split_sum",
    "make_sum",
    "then_sum",
]

_METRICS = (SymmetricDistance, InsertDeleteDistance)
#: Size limits used by ``make_sum`` on unsized float domains: the sum saturates at
#: ``±limit · M'`` and the map's rounding relaxation is ``2 e_T(limit · M')``, about
#: ``2^-52 · limit · M'`` for f64 (``2^-12 · M'`` at 2^40 rows) and ``2^-23 · limit · M'`` for
#: f32 (``M'/8`` at 2^20 rows; f32 cannot afford more, so building one warns).
_DEFAULT_LIMIT = {"f64": 1 << 40, "f32": 1 << 20}
#: Below this many rows a size limit is not "realistic": building such an unsized sum warns.
_REALISTIC_ROWS = 1 << 40


class SizeLimitWarning(OpenDPLiteWarning):
    """An unsized float sum saturates at a size limit that real data may exceed.

    Raised when the sum is *built* (from the type and bounds only, never from the data), so
    that a saturated release is never a silent surprise.
    """


def default_size_limit(name: str, T: str, lo: float, hi: float) -> int:
    """The size limit of an unsized float sum: ``_DEFAULT_LIMIT[T]``, halved while
    ``limit · max(|L|, |U|)`` exceeds a quarter of the largest ``T``; warns (at build time,
    from public parameters only) if it is below :data:`_REALISTIC_ROWS`."""
    limit = _DEFAULT_LIMIT[T]
    mag = max(abs(lo), abs(hi))
    while limit > 1 and limit * mag > float_max(T) / 4:
        limit //= 2
    if limit < _REALISTIC_ROWS:
        warnings.warn(
            f"{name}: this unsized {T} sum saturates at ±{limit}·max(|L|, |U|) "
            f"(= ±{limit} records at the largest bound), so a larger dataset releases a value "
            "far from its true sum; declare the size (vector_domain(..., size=n), or "
            "make_resize), sum in f64, or tighten the bounds",
            SizeLimitWarning,
            stacklevel=_outside_package(),
        )
    return limit


def _outside_package() -> int:
    """The ``stacklevel`` of the first frame outside opendp_lite (the user's line)."""
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    level = 2
    caller: FrameType | None = sys._getframe(2)
    while caller is not None and os.path.abspath(caller.f_code.co_filename).startswith(pkg):
        level, caller = level + 1, caller.f_back
    return level


# ----------------------------------------------------------------------------------------------
# Integers


def _int_bounds_ok(name: str, T: str, bounds: tuple[Any, Any]) -> tuple[int, int]:
    dom = atom_domain(bounds=bounds, T=T)  # validates order, type and range
    assert dom.bounds is not None  # noqa: S101 - atom_domain stored the checked bounds
    return int(dom.bounds[0]), int(dom.bounds[1])


def _int_sum(
    name: str,
    T: str,
    lo: int,
    hi: int,
    size: int | None,
    metric: Metric[Any],
    mode: str,
) -> Transformation[Any, int, int, int]:
    """The integer sum transformation; ``mode`` is ``checked``, ``monotonic`` or ``split``."""
    tmin, tmax = int_range(T)
    mag = max(abs(lo), abs(hi))
    if mode == "checked":
        if size is None:
            raise InvalidParameter(f"{name}: a checked sum needs a known size")
        if size * lo < tmin or size * hi > tmax:
            raise InvalidParameter(
                f"{name}: size·bounds = {size}·({lo}, {hi}) can overflow {T}; "
                "tighten the bounds or use a wider type"
            )
    if mode == "monotonic" and lo < 0 < hi:
        raise InvalidParameter(
            f"{name}: monotonic sums need bounds of one sign, got ({lo}, {hi}); "
            "use make_bounded_int_split_sum"
        )

    def clamp(v: int) -> int:
        return min(max(v, tmin), tmax)

    def function(x: npt.NDArray[Any]) -> int:
        if mode == "checked":
            return exact_int_sum(x)  # cannot leave [tmin, tmax] by the construction check
        if mode == "monotonic":
            # partial sums of one sign are monotone, so clamping the exact total equals
            # saturating at every step
            return clamp(exact_int_sum(x))
        pos, neg = split_sums(x)
        return clamp(pos) + clamp(neg)

    if size is None:
        sens = mag

        def stability_map(d_in: int) -> int:
            return d_in * sens
    else:
        width = hi - lo

        def stability_map(d_in: int) -> int:
            return (d_in // 2) * width

    return Transformation(
        vector_domain(atom_domain(bounds=(lo, hi), T=T), size=size),
        metric,
        atom_domain(T=T, nan=False),
        absolute_distance(T=T),
        function,
        stability_map,
    )


def _int_T(bounds: tuple[Any, Any], T: object) -> str:
    from .._types import carrier_name, is_int

    name = carrier_name(T) if T is not None else atom_domain(bounds=bounds).T
    if not is_int(name):
        raise NotImplementedForType(f"integer sums need an integer type, got T={name}")
    return name


@constructor
def make_sized_bounded_int_checked_sum(
    size: int, bounds: tuple[Any, Any], T: object = None
) -> Transformation[Any, int, int, int]:
    r"""Sum ``size`` integers in ``bounds``; refuses to build if the sum could overflow ``T``.

    Stability map (symmetric distance, known size):
    :math:`d_{out} = \lfloor d_{in}/2 \rfloor \cdot (U - L)`.  The sum is exact.

    Raises:
        InvalidParameter: if ``size · max(|L|, |U|)`` exceeds the range of ``T``, or the bounds
            are invalid.

    Proof: docs/proofs/make_sized_bounded_int_checked_sum.md

    >>> import opendp_lite.prelude as dp
    >>> t = dp.t.make_sized_bounded_int_checked_sum(3, (0, 10))
    >>> t([1, 2, 10]), t.map(2)
    (13, 10)
    """
    Tn = _int_T(bounds, T)
    lo, hi = _int_bounds_ok("make_sized_bounded_int_checked_sum", Tn, bounds)
    size = check_int("size", size, min=0)
    return _int_sum(
        "make_sized_bounded_int_checked_sum", Tn, lo, hi, size, symmetric_distance(), "checked"
    )


@constructor
def make_bounded_int_monotonic_sum(
    bounds: tuple[Any, Any], T: object = None
) -> Transformation[Any, int, int, int]:
    r"""Saturating sum of integers whose bounds share a sign.

    Stability map (symmetric distance): :math:`d_{out} = d_{in} \cdot \max(|L|, |U|)`.

    Raises:
        InvalidParameter: if the bounds have different signs or are invalid.

    Proof: docs/proofs/make_bounded_int_monotonic_sum.md

    >>> import opendp_lite.prelude as dp
    >>> t = dp.t.make_bounded_int_monotonic_sum((0, 2**30))
    >>> t([2**30] * 4), t.map(1)
    (2147483647, 1073741824)
    """
    Tn = _int_T(bounds, T)
    lo, hi = _int_bounds_ok("make_bounded_int_monotonic_sum", Tn, bounds)
    return _int_sum(
        "make_bounded_int_monotonic_sum", Tn, lo, hi, None, symmetric_distance(), "monotonic"
    )


@constructor
def make_sized_bounded_int_monotonic_sum(
    size: int, bounds: tuple[Any, Any], T: object = None
) -> Transformation[Any, int, int, int]:
    r"""Saturating sum of ``size`` integers whose bounds share a sign.

    Stability map (symmetric distance, known size):
    :math:`d_{out} = \lfloor d_{in}/2 \rfloor \cdot (U - L)`.

    Raises:
        InvalidParameter: if the bounds have different signs, or size or bounds are invalid.

    Proof: docs/proofs/make_sized_bounded_int_monotonic_sum.md

    >>> import opendp_lite.prelude as dp
    >>> dp.t.make_sized_bounded_int_monotonic_sum(2, (0, 10)).map(2)
    10
    """
    Tn = _int_T(bounds, T)
    lo, hi = _int_bounds_ok("make_sized_bounded_int_monotonic_sum", Tn, bounds)
    size = check_int("size", size, min=0)
    return _int_sum(
        "make_sized_bounded_int_monotonic_sum", Tn, lo, hi, size, symmetric_distance(), "monotonic"
    )


@constructor
def make_bounded_int_split_sum(
    bounds: tuple[Any, Any], T: object = None
) -> Transformation[Any, int, int, int]:
    r"""Saturating sum of the positives plus saturating sum of the negatives.

    Stability map (symmetric distance): :math:`d_{out} = d_{in} \cdot \max(|L|, |U|)`.

    Raises:
        InvalidParameter: if the bounds are invalid.

    Proof: docs/proofs/make_bounded_int_split_sum.md

    >>> import opendp_lite.prelude as dp
    >>> t = dp.t.make_bounded_int_split_sum((-(2**30), 2**30))
    >>> t([2**30] * 4 + [-(2**30)] * 3), t.map(1)
    (-1, 1073741824)
    """
    Tn = _int_T(bounds, T)
    lo, hi = _int_bounds_ok("make_bounded_int_split_sum", Tn, bounds)
    return _int_sum("make_bounded_int_split_sum", Tn, lo, hi, None, symmetric_distance(), "split")


@constructor
def make_sized_bounded_int_split_sum(
    size: int, bounds: tuple[Any, Any], T: object = None
) -> Transformation[Any, int, int, int]:
    r"""Split saturating sum of ``size`` integers.

    Stability map (symmetric distance, known size):
    :math:`d_{out} = \lfloor d_{in}/2 \rfloor \cdot (U - L)`.

    Raises:
        InvalidParameter: if size or bounds are invalid.

    Proof: docs/proofs/make_sized_bounded_int_split_sum.md

    >>> import opendp_lite.prelude as dp
    >>> dp.t.make_sized_bounded_int_split_sum(3, (-5, 10)).map(2)
    15
    """
    Tn = _int_T(bounds, T)
    lo, hi = _int_bounds_ok("make_sized_bounded_int_split_sum", Tn, bounds)
    size = check_int("size", size, min=0)
    return _int_sum(
        "make_sized_bounded_int_split_sum", Tn, lo, hi, size, symmetric_distance(), "split"
    )


@constructor
def make_bounded_int_ordered_sum(
    bounds: tuple[Any, Any], T: object = None
) -> Transformation[Any, int, int, int]:
    r"""Saturating sum of ordered integers (insert-delete distance).

    opendp_lite computes the split saturating sum, which does not depend on the order, so its
    insert-delete map is the symmetric one: :math:`d_{out} = d_{in} \cdot \max(|L|, |U|)`.

    Raises:
        InvalidParameter: if the bounds are invalid.

    Proof: docs/proofs/make_bounded_int_ordered_sum.md

    >>> import opendp_lite.prelude as dp
    >>> t = dp.t.make_bounded_int_ordered_sum((-3, 5))
    >>> t([5, -3, 1]), t.map(2), t.input_metric
    (3, 10, InsertDeleteDistance())
    """
    Tn = _int_T(bounds, T)
    lo, hi = _int_bounds_ok("make_bounded_int_ordered_sum", Tn, bounds)
    return _int_sum(
        "make_bounded_int_ordered_sum", Tn, lo, hi, None, insert_delete_distance(), "split"
    )


@constructor
def make_sized_bounded_int_ordered_sum(
    size: int, bounds: tuple[Any, Any], T: object = None
) -> Transformation[Any, int, int, int]:
    r"""Saturating sum of ``size`` ordered integers (insert-delete distance).

    Stability map: :math:`d_{out} = \lfloor d_{in}/2 \rfloor \cdot (U - L)`.

    Raises:
        InvalidParameter: if size or bounds are invalid.

    Proof: docs/proofs/make_sized_bounded_int_ordered_sum.md

    >>> import opendp_lite.prelude as dp
    >>> dp.t.make_sized_bounded_int_ordered_sum(4, (-3, 5)).map(2)
    8
    """
    Tn = _int_T(bounds, T)
    lo, hi = _int_bounds_ok("make_sized_bounded_int_ordered_sum", Tn, bounds)
    size = check_int("size", size, min=0)
    return _int_sum(
        "make_sized_bounded_int_ordered_sum", Tn, lo, hi, size, insert_delete_distance(), "split"
    )


# ----------------------------------------------------------------------------------------------
# Floats


class FloatSumPlan:
    """The constants of an exact grid sum: shift ``p``, grid bounds, saturation, relaxation."""

    __slots__ = ("T", "c_int", "k_hi", "k_lo", "limit", "p", "relax")

    def __init__(self, name: str, T: str, lo: float, hi: float, limit: int) -> None:
        self.T = T
        self.limit = limit
        self.p = grid_shift(max(abs(lo), abs(hi)))
        self.k_lo = grid_k(lo, self.p)
        self.k_hi = grid_k(hi, self.p)
        # |Σ k| is saturated at limit·K, which also bounds the exact sum of `limit` values
        self.c_int = limit * max(abs(self.k_lo), abs(self.k_hi))
        c = self.scaled(self.c_int)
        if ar.up(c + rounding_error(c, T)) > float_max(T) / 2:
            raise InvalidParameter(
                f"{name}: size_limit·max(|L|, |U|) = {limit}·{max(abs(lo), abs(hi))!r} "
                f"can overflow {T}; tighten the bounds or lower the size limit"
            )
        # |A_c| <= 2^53 with p <= 1074 makes A_c·2^-p a binary64 value: no rounding at all
        exact = T == "f64" and self.c_int <= 2**53 and self.p <= 1074
        tiny = ar.q(2) ** -self.p  # the smallest non-zero |A_c·2^-p|
        self.relax = ar.q(0) if exact else 2 * rounding_error(c, T, tiny)

    def scaled(self, k: int) -> ar.Rational:
        """``k · 2^-p`` exactly."""
        return ar.q(k) * ar.q(2) ** -self.p

    def total(self, x: npt.NDArray[Any], clip: tuple[Any, Any] | None = None) -> int:
        """The saturated exact grid total ``clamp(Σ k(x_i), ±c_int)`` (of ``clip(x, *clip)``)."""
        s = grid_sums(x, self.p, clip)
        return min(max(s, -self.c_int), self.c_int)


def _float_sum(
    name: str,
    T: str,
    lo: float,
    hi: float,
    size: int | None,
    limit: int,
    metric: Metric[Any],
) -> Transformation[Any, float, int, float]:
    plan = FloatSumPlan(name, T, lo, hi, limit)
    if size is None:
        sens = plan.scaled(max(abs(plan.k_lo), abs(plan.k_hi)))

        def stability_map(d_in: int) -> float:
            return ar.up(d_in * sens + plan.relax)
    else:
        width = plan.scaled(plan.k_hi - plan.k_lo)

        def stability_map(d_in: int) -> float:
            return ar.up((d_in // 2) * width + plan.relax)

    def function(x: npt.NDArray[Any], clip: tuple[Any, Any] | None = None) -> float:
        return to_carrier(plan.total(x, clip), 1, plan.p, T)  # of clip(x, *clip) if fused

    return Transformation(
        vector_domain(atom_domain(bounds=(lo, hi), T=T), size=size),
        metric,
        atom_domain(T=T, nan=False),
        absolute_distance(T=T),
        absorbing_clip(function),
        stability_map,
    )


def _float_bounds(name: str, T: str, bounds: tuple[Any, Any]) -> tuple[float, float]:
    dom = atom_domain(bounds=bounds, T=T)
    assert dom.bounds is not None  # noqa: S101 - atom_domain stored the checked bounds
    return float(dom.bounds[0]), float(dom.bounds[1])


@constructor
def make_bounded_float_checked_sum(
    size_limit: int, bounds: tuple[Any, Any], S: object = "Pairwise<T>"
) -> Transformation[Any, float, int, float]:
    r"""Sum floats in ``bounds`` exactly on a grid, saturating at ``±size_limit · M'``.

    Each value is truncated to the grid ``2^-p`` (``p`` keeps 46 bits of ``max(|L|, |U|)``),
    the grid integers are summed exactly, saturated, and rounded once.  ``S`` picks the carrier
    (``Pairwise<f64>``, ``Sequential<f32>``, ...); the summation is exact whatever ``S``.
    Unlike OpenDP, no subsample is drawn when the input exceeds ``size_limit``: the result
    saturates.  Stability map (symmetric distance), with ``M' = max|k(L)|, |k(U)|·2^-p``:

    .. math:: d_{out} = d_{in} \cdot M' + 2\,e_T(\mathrm{size\_limit} \cdot M')

    where :math:`e_{f64}(c) = 2^{-53} c + 2^{-1075}` bounds the final rounding; the term is 0
    when no rounding can happen (f64 with ``size_limit · K <= 2^53``, ``K = max|k(L)|, |k(U)|``:
    every grid total is then a binary64 value).

    Raises:
        InvalidParameter: if ``size_limit · max(|L|, |U|)`` could overflow, or bad parameters.
        NotImplementedForType: if ``S`` names no float summation.

    Proof: docs/proofs/make_bounded_float_checked_sum.md

    >>> import opendp_lite.prelude as dp
    >>> t = dp.t.make_bounded_float_checked_sum(2**20, (0.0, 1.0))
    >>> t([0.5, 0.25, 1.0]), t.map(1)
    (1.75, 1.0000000002328306)
    """
    name = "make_bounded_float_checked_sum"
    T = parse_summation(name, S)
    lo, hi = _float_bounds(name, T, bounds)
    limit = check_int("size_limit", size_limit, min=1, who=name)
    return _float_sum(name, T, lo, hi, None, limit, symmetric_distance())


@constructor
def make_bounded_float_ordered_sum(
    size_limit: int, bounds: tuple[Any, Any], S: object = "Pairwise<T>"
) -> Transformation[Any, float, int, float]:
    r"""The exact grid sum of :func:`make_bounded_float_checked_sum`, on ordered data.

    The exact sum does not depend on the order, so under the insert-delete distance the map
    is the same: :math:`d_{out} = d_{in} \cdot M' + 2\,e_T(\mathrm{size\_limit} \cdot M')`.

    Raises:
        InvalidParameter: if ``size_limit · max(|L|, |U|)`` could overflow, or bad parameters.
        NotImplementedForType: if ``S`` names no float summation.

    Proof: docs/proofs/make_bounded_float_ordered_sum.md

    >>> import opendp_lite.prelude as dp
    >>> t = dp.t.make_bounded_float_ordered_sum(1000, (-1.0, 1.0))
    >>> t([0.5, -0.25]), t.input_metric
    (0.25, InsertDeleteDistance())
    """
    name = "make_bounded_float_ordered_sum"
    T = parse_summation(name, S)
    lo, hi = _float_bounds(name, T, bounds)
    limit = check_int("size_limit", size_limit, min=1, who=name)
    return _float_sum(name, T, lo, hi, None, limit, insert_delete_distance())


@constructor
def make_sized_bounded_float_checked_sum(
    size: int, bounds: tuple[Any, Any], S: object = "Pairwise<T>"
) -> Transformation[Any, float, int, float]:
    r"""Exact grid sum of ``size`` floats in ``bounds`` (known size, symmetric distance).

    Stability map, with ``W = (k(U) − k(L))·2^-p <= U − L + 2^-p``:

    .. math:: d_{out} = \lfloor d_{in}/2 \rfloor \cdot W + 2\,e_T(\mathrm{size} \cdot M')

    (the rounding term is 0 for f64 when ``size · K <= 2^53``: the total is then exact).

    Raises:
        InvalidParameter: if ``size · max(|L|, |U|)`` could overflow, or bad parameters.
        NotImplementedForType: if ``S`` names no float summation.

    Proof: docs/proofs/make_sized_bounded_float_checked_sum.md

    >>> import opendp_lite.prelude as dp
    >>> t = dp.t.make_sized_bounded_float_checked_sum(3, (0.0, 1.0))
    >>> t([0.5, 0.25, 1.0]), t.map(2)
    (1.75, 1.0)
    """
    name = "make_sized_bounded_float_checked_sum"
    T = parse_summation(name, S)
    lo, hi = _float_bounds(name, T, bounds)
    n = check_int("size", size, min=0)
    return _float_sum(name, T, lo, hi, n, max(n, 1), symmetric_distance())


@constructor
def make_sized_bounded_float_ordered_sum(
    size: int, bounds: tuple[Any, Any], S: object = "Pairwise<T>"
) -> Transformation[Any, float, int, float]:
    r"""Exact grid sum of ``size`` ordered floats (insert-delete distance).

    Stability map: :math:`d_{out} = \lfloor d_{in}/2 \rfloor \cdot W + 2\,e_T(\mathrm{size}
    \cdot M')`, as for :func:`make_sized_bounded_float_checked_sum`.

    Raises:
        InvalidParameter: if ``size · max(|L|, |U|)`` could overflow, or bad parameters.
        NotImplementedForType: if ``S`` names no float summation.

    Proof: docs/proofs/make_sized_bounded_float_ordered_sum.md

    >>> import opendp_lite.prelude as dp
    >>> dp.t.make_sized_bounded_float_ordered_sum(2, (0.0, 4.0)).map(2)
    4.0
    """
    name = "make_sized_bounded_float_ordered_sum"
    T = parse_summation(name, S)
    lo, hi = _float_bounds(name, T, bounds)
    n = check_int("size", size, min=0)
    return _float_sum(name, T, lo, hi, n, max(n, 1), insert_delete_distance())


# ----------------------------------------------------------------------------------------------
# The generic entry point


class _SumType(Protocol):
    """Typing only: an integer vector sums to an int, a float one to a float (``Numeric``)."""

    def __call__(
        self, input_domain: Domain[Vec[Numeric]], input_metric: Metric[int], /
    ) -> Transformation[Vec[Numeric], Numeric, int, Numeric]: ...


@typed_as(cast("_SumType", None))
@constructor
def make_sum(
    input_domain: Domain[Any], input_metric: Metric[Any]
) -> Transformation[Any, Any, int, Any]:
    r"""Sum a vector of bounded numbers (chain ``make_clamp`` first).

    Integers: exact, checked when the size is known and ``size · max(|L|, |U|)`` fits ``T``,
    otherwise saturating (monotonic for one-signed bounds, split otherwise).  Floats: the exact
    grid sum (:func:`make_bounded_float_checked_sum`), with size limit ``size`` if known, else
    ``2^40`` rows for f64 and ``2^20`` for f32 (halved until ``limit · M'`` cannot overflow).
    An unsized sum whose limit is below ``2^40`` rows (every f32 one, and f64 with huge bounds)
    warns with ``SizeLimitWarning`` when it is built: beyond the limit it saturates.

    Stability map: unknown size :math:`d_{out} = d_{in} \cdot M' + r`; known size
    :math:`d_{out} = \lfloor d_{in}/2 \rfloor \cdot W + r`, with ``r = 0`` for integers (and
    ``M' = M``, ``W = U - L``) and ``r = 2 e_T(limit · M')`` (the one final rounding) for
    floats: unsized f64 pays :math:`r = 2^{-12} M'` for its ``2^40``-row limit.

    Raises:
        NotImplementedForType: if the domain is not a vector of bounded numbers, or the metric
            is not symmetric or insert-delete distance.
        InvalidParameter: if the elements are unbounded, or a float sum could overflow.

    Proof: docs/proofs/make_sum.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(bounds=(0.0, 1.0))), dp.symmetric_distance()
    >>> t = space >> dp.t.then_sum()
    >>> t([0.5, 0.25]), t.map(1)
    (0.75, 1.000244140625)
    """
    name = "make_sum"
    elem, lo, hi, size = bounded_vector(name, input_domain)
    check_metric(name, input_metric, _METRICS)
    T = elem.T
    if is_float(T):
        if size is not None:
            return _float_sum(name, T, lo, hi, size, max(size, 1), input_metric)
        limit = default_size_limit(name, T, lo, hi)
        return _float_sum(name, T, lo, hi, None, limit, input_metric)
    tmin, tmax = int_range(T)
    if size is not None and size * lo >= tmin and size * hi <= tmax:
        mode = "checked"
    elif lo >= 0 or hi <= 0:
        mode = "monotonic"
    else:
        mode = "split"
    return _int_sum(name, T, int(lo), int(hi), size, input_metric, mode)


then_sum = fold(make_sum)
