"""Shared machinery of the aggregates of part B (private): domain checks and exact sums.

The float aggregates never sum floats.  Each value ``x`` is mapped to the integer
``k(x) = trunc(x · 2^p)`` (``p`` fixed at construction from the bounds, so ``|k| <= 2^bits``),
the integers are summed *exactly* (int64 in chunks with proven headroom, chunk totals in Python
ints), and the exact rational result is rounded once to the carrier.  The only float error
left is that single final rounding, which the maps add as a relaxation
(:func:`rounding_error`).  This is what makes the maps immune to the attacks of Casacuberta et
al. 2022, whatever order numpy would have summed in.

All loops here run over chunks of 65 536 values (to keep temporaries in cache), never over
individual values.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import _arith as ar
from .. import backends
from .._types import int_bounds, is_float, is_int
from .._validate import check_metric  # re-exported for the families
from ..core import (
    Absorbing,
    Domain,
)
from ..domains import AtomDomain, VectorDomain
from ..errors import InvalidParameter, NotImplementedForType

__all__ = [
    "BLOCK",
    "CHUNK",
    "absorbing_clip",
    "blocks",
    "bounded_vector",
    "centered_k",
    "centered_sums",
    "check_metric",
    "exact_int_sum",
    "grid_k",
    "grid_shift",
    "grid_sums",
    "parse_summation",
    "rounding_error",
    "split_sums",
    "to_carrier",
]

#: Values per chunk: 2^16 values of magnitude <= 2^46 sum to at most 2^62 < 2^63 in int64.
CHUNK = 1 << 16
_SUM_BITS = 46
#: For sums of squares: |j| <= 2^26 so j² <= 2^52 is exact in float64, and rows of 1024
#: squares sum to at most 2^62 in int64.
SQ_BITS = 26
_ROW = 1024


#: Values pulled from a lazy (chunked) duck array at a time: 2^20 (8 MB of binary64).
BLOCK = backends.BLOCK


def blocks(x: Any) -> Iterator[npt.NDArray[Any]]:
    """``x`` as numpy arrays: itself, or consecutive blocks of a lazy array (e.g. Dask).

    A lazy array is never materialised whole: each block (:data:`BLOCK` values of a duck
    array, each chunk of a Dask array, whose lengths may be unknown) is converted with
    ``np.asarray`` (computing just that slice), consumed, and dropped.  The backend that owns
    ``x`` (``opendp_lite.backends``) says what its blocks are.

    >>> [b.tolist() for b in blocks(np.arange(3))]
    [[0, 1, 2]]
    """
    return backends.of(x).blocks(x)


def bounded_vector(
    name: str, domain: Domain[Any], *, need_bounds: bool = True
) -> tuple[AtomDomain[Any], Any, Any, int | None]:
    """``(element, lower, upper, size)`` of ``vector_domain(atom_domain(bounds=...))``."""
    if not isinstance(domain, VectorDomain) or not isinstance(domain.element_domain, AtomDomain):
        raise NotImplementedForType(
            f"{name} needs input_domain vector_domain(atom_domain(...)), got {domain!r}"
        )
    elem = domain.element_domain
    if not (is_float(elem.T) or is_int(elem.T)):
        raise NotImplementedForType(f"{name} needs a numeric carrier, got T={elem.T}")
    if elem.bounds is None:
        if need_bounds:
            raise InvalidParameter(
                f"{name} needs bounded elements: input_domain {domain!r} has no bounds "
                "(chain make_clamp first)"
            )
        return elem, None, None, domain.size
    return elem, elem.bounds[0], elem.bounds[1], domain.size


def parse_summation(name: str, S: object) -> str:
    """The carrier of a summation type ``"Pairwise<f64>"``/``"Sequential<f32>"`` (or a bare T)."""
    text = S if isinstance(S, str) else getattr(S, "__name__", repr(S))
    for prefix in ("Pairwise<", "Sequential<"):
        if text.startswith(prefix) and text.endswith(">"):
            inner = text[len(prefix) : -1]
            break
    else:
        inner = text
    if inner in ("T", "float", "f64"):
        return "f64"
    if inner == "f32":
        return "f32"
    raise NotImplementedForType(
        f"{name}: S must be Pairwise<f64|f32> or Sequential<f64|f32>, got {S!r}"
    )


# ----------------------------------------------------------------------------------------------
# Integers


def _sum_narrow(x: npt.NDArray[Any]) -> int:
    # |x_i| < 2^32, so 2^30 values sum to less than 2^62 in int64.
    total = 0
    step = 1 << 30
    for i in range(0, x.shape[0], step):
        total += int(np.sum(x[i : i + step], dtype=np.int64))
    return total


def exact_int_sum(x: Any) -> int:
    """The exact sum of an integer array, whatever its width (never wraps).

    >>> exact_int_sum(np.array([2**62, 2**62, 2**62], dtype=np.int64)) == 3 * 2**62
    True
    """
    # exact partials: the total is the same for any blocking and any reduction tree
    return int(backends.of(x).reduce_blocks(x, _exact_int_sum_np))


def _exact_int_sum_np(x: npt.NDArray[Any]) -> int:
    if x.shape[0] == 0:
        return 0
    if x.dtype.itemsize <= 4:
        return _sum_narrow(x)
    # 64-bit carriers: x = hi·2^32 + lo with hi, lo below 2^32 in magnitude, each summed exactly.
    hi = np.right_shift(x, 32)
    lo = np.bitwise_and(x, x.dtype.type(0xFFFFFFFF))
    if x.dtype.kind == "u":
        hi = hi.astype(np.int64)
        lo = lo.astype(np.int64)
    return (_sum_narrow(hi) << 32) + _sum_narrow(lo)


def _split_sums_np(x: npt.NDArray[Any]) -> tuple[int, int]:
    return _exact_int_sum_np(x[x > 0]), _exact_int_sum_np(x[x < 0])


def split_sums(x: Any) -> tuple[int, int]:
    """The exact sums of the positive and of the negative elements of an integer array.

    >>> split_sums(np.array([3, -1, 4, -5]))
    (7, -6)
    """
    pos, neg = backends.of(x).reduce_blocks(x, _split_sums_np)
    return int(pos), int(neg)


def int_range(T: str) -> tuple[int, int]:
    """The range of integer carrier ``T``."""
    return int_bounds(T)


# ----------------------------------------------------------------------------------------------
# Floats: the exact grid sum


def grid_shift(magnitude: float, bits: int = _SUM_BITS) -> int:
    """The exponent ``p`` with ``|x| · 2^p <= 2^bits`` for every ``|x| <= magnitude``.

    For subnormal-sized bounds ``p`` may exceed 1023; :func:`grid_sums` then scales in two
    exact steps.
    """
    if magnitude == 0:
        return 0
    e = math.frexp(magnitude)[1]  # magnitude < 2^e
    return bits - e


def grid_k(x: float, p: int) -> int:
    """``trunc(x · 2^p)``: exact, as scaling by a power of two is exact above the subnormals,
    and a product in the subnormal range has magnitude below 1, which truncates to 0."""
    return math.trunc(math.ldexp(x, p))


def _scales(p: int) -> tuple[float, float]:
    """``2^p`` as one or two finite factors; each product by them is exact (scaling by a
    power of two, up from a subnormal or within the normal range)."""
    if p <= 1000:
        return math.ldexp(1.0, p), 1.0
    return math.ldexp(1.0, 1000), math.ldexp(1.0, p - 1000)


def grid_sums(x: Any, p: int, clip: tuple[Any, Any] | None = None) -> int:
    """The exact ``Σ k_i`` with ``k_i = trunc(x_i · 2^p)``; of ``clip(x, *clip)`` if given.

    Requires ``|x_i| · 2^p <= 2^46`` (of the clamped values), which the constructors guarantee
    through :func:`grid_shift`.  ``clip`` (a clamp fused into the sum by the chain, see
    ``core.compose``) is applied to each cache-sized piece: no clamped copy is written.
    """
    # exact partials, any reduction tree; a clamp just before is applied per sub-chunk
    b = backends.of(x)
    base, bounds = (x, clip) if clip is not None else b.clip_source(x)
    return int(b.reduce_blocks(base, _grid_sums_np, p, bounds))


def _grid_sums_np(x: npt.NDArray[Any], p: int, clip: tuple[Any, Any] | None = None) -> int:
    """The exact grid sum of a numpy block; of ``clip(x, *clip)`` if ``clip`` is given (the
    clamp is then applied to each cache-sized sub-chunk, never to a copy of the block)."""
    if x.shape[0] <= _SMALL_SUM:
        s1, s2 = _scales(p)
        return _grid_sums_small(x.tolist(), s1, s2, clip)
    return _grid_sums_vec(x, p, clip)


def _grid_sums_vec(x: npt.NDArray[Any], p: int, clip: tuple[Any, Any] | None = None) -> int:
    """:func:`_grid_sums_np` in numpy, cache-sized chunk by chunk."""
    s1, s2 = _scales(p)
    total = 0
    n = x.shape[0]
    buf = np.empty(min(n, CHUNK), dtype=np.float64)
    for i in range(0, n, CHUNK):
        chunk = x[i : i + CHUNK]
        b = buf[: chunk.shape[0]]
        if clip is not None:
            # the bounds are values of the carrier, exact in binary64: clipping after the
            # widening equals widening after clipping
            np.clip(chunk, clip[0], clip[1], out=b, dtype=np.float64)
            chunk = b
        # dtype=float64 forces the product into binary64 even for f32 data (exact there).
        np.multiply(chunk, s1, out=b, dtype=np.float64)
        if s2 != 1.0:
            np.multiply(b, s2, out=b)
        # the float -> int64 cast inside the reduction truncates toward zero
        total += int(np.add.reduce(b, dtype=np.int64))
    return total


#: Up to this many values a grid sum is taken in Python (numpy's fixed cost per call, about
#: 10 µs for the clip, products and reduction, exceeds the per-value Python cost there).
_SMALL_SUM = 64


def _grid_sums_small(xs: list[Any], s1: float, s2: float, clip: tuple[Any, Any] | None) -> int:
    """:func:`_grid_sums_np` of a short block, value by value, with the same operations: the
    clamp in binary64, the products by 2^p as binary64 multiplications (exact), and the
    truncation toward zero of the int64 cast (``math.trunc``).

    >>> xs, clip = [0.3, -1.7, 12.5, 5.0], (0.0, 10.0)
    >>> _grid_sums_small(xs, 2.0**10, 1.0, clip) == _grid_sums_vec(np.array(xs), 10, clip)
    True
    """
    total = 0
    trunc = math.trunc
    if clip is not None:
        lo, hi = float(clip[0]), float(clip[1])
        for v in xs:
            v = lo if v < lo else hi if v > hi else float(v)
            total += trunc(v * s1 * s2) if s2 != 1.0 else trunc(v * s1)
        return total
    for v in xs:
        total += trunc(float(v) * s1 * s2) if s2 != 1.0 else trunc(float(v) * s1)
    return total


def absorbing_clip(function: Callable[..., float]) -> Absorbing[Any, float]:
    """An aggregate's ``function(x)`` that can also take over a clamp chained just before it.

    ``function(y, clip)`` must equal ``function(np.clip(y, *clip))`` (the grid sums below clamp
    each cache-sized piece); ``core.compose`` then calls it on the unclamped vector, and the
    clamped copy is never written.
    """

    def absorb(step: tuple[Any, ...]) -> Callable[[Any], float] | None:
        if step[0] != "clip":
            return None
        bounds = (step[1], step[2])
        return lambda y: function(y, bounds)

    return Absorbing(function, absorb)


def centered_k(v: float, p: int, k_c: int, shift: int) -> int:
    """``(trunc(v · 2^p) − k_c) >> shift`` (floor), the centred grid index of a bound."""
    return (grid_k(v, p) - k_c) >> shift


def centered_sums(
    x: Any, p: int, k_c: int, shift: int, clip: tuple[Any, Any] | None = None
) -> tuple[int, int]:
    """Exact ``(Σ j_i, Σ j_i²)`` with ``j_i = (trunc(x_i · 2^p) − k_c) >> shift``, of
    ``clip(x, *clip)`` if given (applied per piece, as in :func:`grid_sums`).

    Requires ``|x_i| · 2^p <= 2^46`` and ``|j_i| <= 2^26`` (so ``j²`` is exact in binary64 and
    rows of 1024 squares stay below 2^62), which the constructors guarantee.
    """
    b = backends.of(x)
    base, bounds = (x, clip) if clip is not None else b.clip_source(x)
    s1, s2 = b.reduce_blocks(base, _centered_sums_np, p, k_c, shift, bounds)
    return int(s1), int(s2)


def _centered_sums_np(
    x: npt.NDArray[Any], p: int, k_c: int, shift: int, clip: tuple[Any, Any] | None = None
) -> tuple[int, int]:
    s1, s2 = _scales(p)
    total = 0
    total_sq = 0
    n = x.shape[0]
    buf = np.empty(min(n, CHUNK), dtype=np.float64)
    ibuf = np.empty(min(n, CHUNK), dtype=np.int64)
    for i in range(0, n, CHUNK):
        chunk = x[i : i + CHUNK]
        m = chunk.shape[0]
        b, ib = buf[:m], ibuf[:m]
        if clip is not None:  # as in _grid_sums_np
            np.clip(chunk, clip[0], clip[1], out=b, dtype=np.float64)
            chunk = b
        np.multiply(chunk, s1, out=b, dtype=np.float64)
        if s2 != 1.0:
            np.multiply(b, s2, out=b)
        np.copyto(ib, b, casting="unsafe")  # truncation toward zero, |b| <= 2^46
        np.subtract(ib, k_c, out=ib)
        if shift:
            np.right_shift(ib, shift, out=ib)  # floor division by 2^shift
        total += int(np.add.reduce(ib))
        np.copyto(b, ib, casting="unsafe")  # |j| <= 2^26: exact
        np.multiply(b, b, out=b)  # j² <= 2^52: exact in binary64
        full = m - m % _ROW
        if full:
            rows = np.add.reduce(b[:full].reshape(-1, _ROW), axis=1, dtype=np.int64)
            total_sq += sum(rows.tolist())
        if full < m:
            total_sq += int(np.add.reduce(b[full:], dtype=np.int64))
    return total, total_sq


def rounding_error(magnitude: ar.Rational, T: str, tiny: ar.Rational | None = None) -> ar.Rational:
    """A bound on ``|to_carrier(v) − v|`` for an exact rational ``|v| <= magnitude``.

    binary64: one round-to-nearest of a normal number (relative error < 2^-53) and possibly
    a subnormal result (absolute error <= 2^-1075).  f32 adds a second rounding of the binary64
    value (relative 2^-24, absolute 2^-150).  If every non-zero ``|v|`` is known to be at least
    ``tiny``, the subnormal terms are dropped when ``tiny`` is at least the smallest normal
    number of the format (zero is exact).
    """
    two = ar.q(2)
    sub64 = 0 if tiny is not None and ar.q(tiny) >= two**-1022 else two**-1075
    e64 = ar.q(magnitude) * two**-53 + sub64
    if T == "f64":
        return e64
    sub32 = 0 if tiny is not None and ar.q(tiny) >= two**-126 else two**-150
    return e64 + (ar.q(magnitude) + e64) * two**-24 + sub32


def to_carrier(numerator: int, denominator: int, p: int, T: str) -> float:
    """``numerator / (denominator · 2^p)`` rounded to the carrier (see :func:`rounding_error`).

    Python's int/int true division rounds correctly once; scaling by ``2^-p`` is exact unless
    the result is subnormal.
    """
    v = math.ldexp(numerator / denominator, -p)
    if T == "f32":
        return float(np.float32(v))
    return v


def float_max(T: str) -> float:
    """The largest finite value of float carrier ``T``."""
    return float(np.finfo(np.float32 if T == "f32" else np.float64).max)
