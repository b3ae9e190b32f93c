"""``make_np_sscp``: the sums of squares and cross products, exact on a 40-bit grid."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ... import _arith as ar
from ..._registry import constructor
from ..._types import carrier_dtype, is_float
from ..._validate import check_finite_nonneg, check_int
from ...core import (
    Domain,
    Metric,
    PartialTransformation,
    Transformation,
)
from ...errors import InvalidParameter, NotImplementedForType
from ...transformations._aggregate import _scales, grid_shift, to_carrier
from ._checks import _check_T
from ._inputs import _array2, _bounded, _norm_up, _symmetric
from .domain import NPSSCPDomain

Array = npt.NDArray[Any]

# ----------------------------------------------------------------------------------------------
# Sums of squares and cross products

#: Bits of grid per value in the SSCP.  A grid value ``K`` (``|K| <= 2^40``) is split as
#: ``K = 2^20·H + L`` with ``|H| <= 2^20`` and ``0 <= L < 2^20``; products of halves are below
#: 2^40 and 2^13 of them sum below 2^53, so float matrix products over 2^13 rows are exact.
_SSCP_BITS = 40
_HALF = 2.0**20
_SSCP_ROWS = 1 << 13
#: Blocks summed in int64 before moving the totals to Python ints: 2^8 · 2^53 < 2^63.
_FLUSH = 1 << 8


def sscp_grid(m_up: float) -> int:
    """The grid exponent ``g`` of the SSCP for values of magnitude at most ``m_up``."""
    return grid_shift(m_up, _SSCP_BITS)


def exact_sscp(x: Array, g: int) -> Array:
    """``KᵀK`` exactly, as an object array of Python ints, with ``K = trunc(x · 2^g)``.

    Requires ``|K| <= 2^40``.  Each block of rows is written as ``B = [H | L]ᵀ``
    (``K = 2^20·H + L``) into one buffer, and one float matrix product ``B·Bᵀ`` gives ``HᵀH``,
    ``HᵀL`` and ``LᵀL``.  Every float operation below acts on integers whose exact result is
    below 2^53 in magnitude, so none rounds, in whatever order BLAS sums.
    """
    n, d = x.shape
    total = np.zeros((d, d), dtype=object)
    acc = np.zeros((2 * d, 2 * d), dtype=np.int64)
    s1, s2 = _scales(g)
    # [H | L] transposed: each of the 2d rows of the buffer is contiguous, so every
    # elementwise step below runs over long contiguous rows
    buf = np.empty((2 * d, min(n, _SSCP_ROWS)), dtype=np.float64)

    def flush() -> None:
        hh, hl, ll = acc[:d, :d], acc[:d, d:], acc[d:, d:]
        total[...] += (
            hh.astype(object) * 2**40 + (hl + hl.T).astype(object) * 2**20 + ll.astype(object)
        )
        acc[...] = 0

    for j, i in enumerate(range(0, n, _SSCP_ROWS)):
        block = x[i : i + _SSCP_ROWS]
        both = buf[:, : block.shape[0]]
        hi, lo = both[:d], both[d:]
        np.multiply(block.T, s1, out=lo, dtype=np.float64)  # exact: a power of two
        if s2 != 1.0:
            np.multiply(lo, s2, out=lo)
        np.trunc(lo, out=lo)  # K
        np.multiply(lo, 1.0 / _HALF, out=hi)  # exact: a power of two
        np.floor(hi, out=hi)  # H = floor(K / 2^20)
        np.subtract(lo, hi * _HALF, out=lo)  # L = K − 2^20·H, in [0, 2^20): exact
        # each entry is below 2^53; an int64 holds 2^8 blocks of three such sums
        acc += (both @ both.T).astype(np.int64)
        if j % _FLUSH == _FLUSH - 1:
            flush()
    flush()
    return total


@constructor
def make_np_sscp(
    input_domain: Domain[Any], input_metric: Metric[Any]
) -> Transformation[Array, Array, int, int]:
    r"""The sum of squares and cross products :math:`X^\top X` (a ``d × d`` matrix).

    Each value is truncated to the grid :math:`2^{-g}` (``g`` keeps 40 bits of
    :math:`M = R + \max_j|o_j|`), the integer matrix :math:`K^\top K` is computed exactly and each
    entry is rounded once to ``T``.  The output domain records the bound
    :math:`R' = R + \lVert o\rVert_p` (rounded up; ``R`` if the origin is 0) on the rows'
    norms and the size; as in OpenDP the metric stays the symmetric distance:
    :math:`d_{out} = d_{in}` (a mechanism on the matrix bounds its own sensitivity from ``R'``).

    Raises:
        NotImplementedForType: if the input is not an ``array2_domain`` of float ``T`` or the
            metric is not ``symmetric_distance()``.
        InvalidParameter: if the domain has no norm or no ``num_columns``.

    Proof: docs/proofs/make_np_sscp.md

    >>> import numpy as np
    >>> import opendp_lite.prelude as dp
    >>> dom = dp.numpy.array2_domain(norm=2.0, p=2, num_columns=2, T=float)
    >>> space = dom, dp.symmetric_distance()
    >>> sscp = space >> dp.numpy.then_np_sscp()
    >>> sscp(np.array([[1.0, 0.5], [0.0, -1.0]])).tolist(), sscp.map(1)
    ([[1.0, 0.5], [0.5, 1.25]], 1)
    """
    who = "make_np_sscp"
    dom = _array2(who, input_domain)
    _symmetric(who, input_metric)
    if not is_float(dom.T):
        raise NotImplementedForType(f"{who} needs a float T, got T={dom.T}")
    R, p, origin, d = _bounded(who, dom)
    m_up = ar.up(ar.q(R) + max((abs(ar.q(v)) for v in origin), default=ar.q(0)))
    g = sscp_grid(m_up)
    T = dom.T
    row_norm = R if not any(origin) else ar.up(ar.q(R) + _norm_up(origin, p))
    out = NPSSCPDomain(num_features=d, T=T, norm=row_norm, p=p, size=dom.size)

    def function(arg: Array) -> Array:
        total = exact_sscp(arg, g)
        vals = [[to_carrier(int(v), 1, 2 * g, T) for v in row] for row in total.tolist()]
        return np.asarray(vals, dtype=carrier_dtype(T)).reshape(d, d)

    return Transformation(
        input_domain, input_metric, out, input_metric, function, lambda d_in: d_in
    )


@constructor
def then_np_sscp() -> PartialTransformation[Array, Array, int, int]:
    """Partial of :func:`make_np_sscp`."""
    return PartialTransformation(make_np_sscp)


def _sscp_domain(
    num_features: Any, T: Any, norm: Any = None, p: Any = None, size: Any = None
) -> NPSSCPDomain:
    """``make_np_sscp``'s output domain from a serialized document, checked field by field."""
    num_features = check_int("num_features", num_features, min=1)
    if p not in (None, 1, 2) or (norm is None) != (p is None):
        raise InvalidParameter(f"norm and p (1 or 2) come together, got {norm!r}, {p!r}")
    if size is not None:
        size = check_int("size", size, min=0, what="a non-negative int or None")
    return NPSSCPDomain(
        num_features=num_features,
        T=_check_T(T, "NPSSCPDomain"),
        norm=None if norm is None else check_finite_nonneg("norm", norm),
        p=p,
        size=size,
    )
