"""The norms of sensitivity sampling, rounded up: ``‖f(D ∪ {x}) − f(D ∪ {x′})‖`` (L1 or L2)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from ... import _arith
from ...errors import FailedMap, InvalidParameter

FloatArray = npt.NDArray[np.float64]


# ----------------------------------------------------------------------------------------------
# Norms


#: Nonzero magnitudes for which the error-free transformations below are exact in binary64:
#: Veltkamp's split of x does not overflow, and every product of two such values is at least
#: 2^-960 (exponents sum to >= -970, so no partial product of Dekker's method underflows).
_SAFE_LO, _SAFE_HI = 2.0**-480, 2.0**480


def _as_array(x: npt.ArrayLike) -> npt.NDArray[Any]:
    """``x`` as an array without a lossy conversion: a Python int or list stays exact (numpy
    would turn ``[0, 2**63]`` into floats)."""
    if isinstance(x, (np.ndarray, np.generic, float)):
        return np.asarray(x)
    return np.asarray(x, dtype=object)


def _exact_float(x: npt.NDArray[Any]) -> FloatArray | None:
    """``x`` flattened to float64 when that conversion is exact, else None: floats up to
    binary64, integers of magnitude <= 2^53, and object arrays holding only such values."""
    flat = np.ravel(x)
    if flat.dtype.kind == "f" and flat.dtype.itemsize <= 8:
        return flat.astype(np.float64)
    if flat.dtype.kind in "biu":
        if flat.size == 0 or max(abs(int(flat.min())), abs(int(flat.max()))) <= 2**53:
            return flat.astype(np.float64)
        return None
    if flat.dtype.kind == "O" and all(
        (isinstance(v, (float, np.floating)) and np.dtype(type(v)).itemsize <= 8)
        or (isinstance(v, (int, np.integer)) and abs(int(v)) <= 2**53)
        for v in flat
    ):
        return flat.astype(np.float64)
    return None


def _operands(a: npt.ArrayLike, b: npt.ArrayLike) -> tuple[FloatArray, FloatArray] | None:
    """``a`` and ``b``, broadcast and flattened to float64 when that is exact, else None
    (larger integers and other objects then take the exact rational path)."""
    xa, xb = np.broadcast_arrays(_as_array(a), _as_array(b))
    fa, fb = _exact_float(xa), _exact_float(xb)
    if fa is None or fb is None:
        return None
    return fa, fb


def _two_diff(a: FloatArray, b: FloatArray) -> tuple[FloatArray, FloatArray]:
    """d = fl(a − b) and the error e with a − b = d + e exactly (Knuth's TwoSum)."""
    with np.errstate(over="ignore", invalid="ignore"):
        d = a - b
        bv = d - a
        e = (a - (d - bv)) + (-b - bv)
    return d, e


def _two_prod(x: FloatArray, y: FloatArray) -> tuple[FloatArray, FloatArray]:
    """p = fl(x·y) and the error r with x·y = p + r exactly (Dekker, Veltkamp's split); exact
    for magnitudes in [_SAFE_LO, _SAFE_HI] or zero."""
    split = 134217729.0  # 2^27 + 1
    cx, cy = split * x, split * y
    xh = cx - (cx - x)
    yh = cy - (cy - y)
    xl, yl = x - xh, y - yh
    p = x * y
    r = ((xh * yh - p) + xh * yl + xl * yh) + xl * yl
    return p, r


def _safe(*xs: FloatArray) -> bool:
    for x in xs:
        m = np.abs(x[x != 0])
        if m.size and not (np.all(m >= _SAFE_LO) and np.all(m <= _SAFE_HI)):
            return False
    return True


def _fsum_up(terms: FloatArray) -> float:
    """The exact sum of finite floats, rounded up once (the least float >= it).

    ``math.fsum`` keeps exact partial sums (Shewchuk) and returns their sum rounded to
    nearest; the sign of ``fsum(terms − s)``, the residual summed exactly, says on which side
    of the exact sum ``s`` lies, and ``s`` moves up until it is not below.
    """
    values = terms.tolist()
    try:
        s = math.fsum(values)
    except OverflowError:
        return math.inf
    if math.isinf(s):
        return s
    values.append(-s)
    while math.fsum(values) > 0:  # the exact sum is above s: one step up (twice at most)
        s = math.nextafter(s, math.inf)
        values[-1] = -s
    return s


def _plain(x: Any) -> Any:
    """A numpy scalar as the Python number of the same value (exact for int and float)."""
    return x.item() if isinstance(x, np.generic) else x


def _exact_diffs(a: npt.ArrayLike, b: npt.ArrayLike) -> list[_arith.Rational]:
    xa, xb = np.broadcast_arrays(np.asarray(a, dtype=object), np.asarray(b, dtype=object))
    return [
        _arith.q(_plain(x)) - _arith.q(_plain(y))
        for x, y in zip(np.ravel(xa), np.ravel(xb), strict=True)
    ]


def _scalar_up(a: object, b: object) -> float | None:
    """up(|a − b|) for two finite floats, from the TwoSum split (None: take the general path).

    With d = fl(a − b) and a − b = d + e exactly, |e| is at most half the gap next to d, so the
    exact |a − b| lies strictly between |d| and the float beside it on the side of sign(d·e).
    """
    if not (isinstance(a, float) and isinstance(b, float)):
        return None
    d = a - b
    if not math.isfinite(d):
        return None
    bv = d - a
    e = (a - (d - bv)) + (-b - bv)
    if not math.isfinite(e):
        return None
    if e == 0 or (e > 0) != (d > 0):
        return abs(d)
    return math.nextafter(abs(d), math.inf)


def _finite_inputs(a: FloatArray, b: FloatArray) -> bool:
    return bool(np.all(np.isfinite(a)) and np.all(np.isfinite(b)))


def _float_split(
    a: npt.ArrayLike, b: npt.ArrayLike
) -> tuple[FloatArray, FloatArray] | float | None:
    """a − b = d + e exactly (TwoSum) for float inputs; NaN if an input is NaN or infinite;
    None for other inputs, or when an error term e is not finite (the exact path then runs)."""
    ops = _operands(a, b)
    if ops is None:
        return None
    fa, fb = ops
    if not _finite_inputs(fa, fb):
        return math.nan
    d, e = _two_diff(fa, fb)
    return (d, e) if np.all(np.isfinite(e)) else None


def _exact_diffs_or_none(a: npt.ArrayLike, b: npt.ArrayLike) -> list[_arith.Rational] | None:
    """:func:`_exact_diffs`, or None when a value is not finite (it has no exact difference)."""
    try:
        return _exact_diffs(a, b)
    except FailedMap:
        return None


class L1Norm:
    """‖a − b‖₁ = Σ |a_i − b_i| (scalars or arrays), exactly, rounded up once.

    Two float scalars: up(|a − b|) from the same split.  Float inputs: each difference is
    split without error into d_i + e_i (TwoSum), so
    |a_i − b_i| = |d_i| + sign(d_i)·e_i, and the 2n floats are summed exactly and rounded up
    (:func:`math.fsum` with a residual check).  Other inputs (integers beyond 2^53, objects)
    are summed in exact rationals through :mod:`opendp_lite._arith`.  NaN or infinite input
    gives NaN (a sampled G must be finite).

    >>> L1Norm().compute(1.0 + 2.0**-52, -(2.0**-54)) == 1.0 + 2.0**-51  # not fl(A − B)
    True
    """

    def compute(self, a: npt.ArrayLike, b: npt.ArrayLike) -> float:
        scalar = _scalar_up(a, b)
        if scalar is not None:
            return scalar
        split = _float_split(a, b)
        if isinstance(split, float):
            return split
        if split is not None:
            d, e = split
            return _fsum_up(np.concatenate([np.abs(d), np.where(d < 0, -e, e)]))
        diffs = _exact_diffs_or_none(a, b)
        if diffs is None:
            return math.nan
        return _arith.up(sum((abs(x) for x in diffs), _arith.q(0)))

    def __repr__(self) -> str:
        return "L1Norm()"


class L2Norm:
    """‖a − b‖₂ = √(Σ (a_i − b_i)²) (scalars or arrays): the exact sum of squares, rounded up,
    then the square root rounded up (:func:`opendp_lite._arith.sqrt_up`); for two float scalars,
    up(|a − b|) as :class:`L1Norm` computes it.

    Float inputs: a_i − b_i = d_i + e_i exactly (TwoSum), and (d + e)² = d² + 2de + e² is
    split into six floats without error (Dekker's product) when every nonzero d_i, e_i lies in
    [2^-480, 2^480]; otherwise, and for integers beyond 2^53 or objects, the sum of squares is
    exact in rationals.  NaN or infinite input gives NaN.

    >>> L2Norm().compute([3.0, 0.0], [0.0, 4.0])
    5.0
    """

    def compute(self, a: npt.ArrayLike, b: npt.ArrayLike) -> float:
        scalar = _scalar_up(a, b)  # ‖a − b‖₂ = |a − b| for two scalars
        if scalar is not None:
            return scalar
        split = _float_split(a, b)
        if isinstance(split, float):
            return split
        if split is not None and _safe(*split):
            d, e = split
            dd, dd_err = _two_prod(d, d)
            de, de_err = _two_prod(d, e)
            ee, ee_err = _two_prod(e, e)
            terms = np.concatenate([dd, dd_err, 2.0 * de, 2.0 * de_err, ee, ee_err])
            return _arith.sqrt_up(_fsum_up(terms))
        diffs = _exact_diffs_or_none(a, b)
        if diffs is None:
            return math.nan
        return _arith.sqrt_up(_arith.up(sum((x * x for x in diffs), _arith.q(0))))

    def __repr__(self) -> str:
        return "L2Norm()"


L1SensitivityNorm = L1Norm
L2SensitivityNorm = L2Norm

Norm = L1Norm | L2Norm


def _norm(norm: object) -> Norm:
    if isinstance(norm, (L1Norm, L2Norm)):
        return norm
    if norm in ("l1", "L1"):
        return L1Norm()
    if norm in ("l2", "L2"):
        return L2Norm()
    raise InvalidParameter(f"norm must be 'l1', 'l2', L1Norm() or L2Norm(), got {norm!r}")
