"""Row-norm membership, decided exactly, and the checks of the constructors' parameters."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ... import _arith as ar
from ..._types import carrier_name, is_float, is_int
from ..._validate import check_finite_nonneg, check_int
from ...errors import InvalidParameter, NotImplementedForType, ParameterTypeError

Array = npt.NDArray[Any]

#: The unit roundoff of binary64, and half the least subnormal (the absolute error of a product
#: that underflows).
_U = ar.q(2) ** -53
_TINY = ar.q(2) ** -1075
#: Norms below this are refused: the float test then has room for underflow errors.
_MIN_NORM = 2.0**-500
#: The clamp's successive targets, as fractions of the radius: just inside the ball first,
#: further in if rounding pushed the scaled row out, then halving (see make_np_clamp).
_SHRINKS = (1.0 - 2.0**-40, 1.0 - 2.0**-30, 1.0 - 2.0**-20, 1.0 - 2.0**-10)
#: A row statistic at least this large (and finite) gives the clamp its factor directly: its
#: relative error is then a few ulps (the absolute underflow terms are below 2^-1070).
_STAT_MIN = 2.0**-900


def _check_T(T: object, who: str) -> str:
    if T is None:
        raise InvalidParameter(f"{who}: T, the type of the array's elements, must be given")
    try:
        name = carrier_name(T)
    except NotImplementedForType:
        # a ValueError (as OpenDP's) and a TypeError
        raise ParameterTypeError(
            f"{who}: T ({T!r}) must be a primitive type. Fix: pass a numeric or bool type, "
            "e.g. T=float"
        ) from None
    if not (is_float(name) or is_int(name) or name == "bool"):
        raise NotImplementedForType(f"{who}: T must be a numeric or bool type, got T={name}")
    return name


def _check_count(name: str, v: object) -> int | None:
    if v is None:
        return None
    return check_int(name, v, min=0)


def _check_norm_p(norm: object, p: object) -> tuple[float | None, Literal[1, 2] | None]:
    if (norm is None) != (p is None):
        raise InvalidParameter(f"norm and p must be given together, got norm={norm!r}, p={p!r}")
    if norm is None:
        return None, None
    value = check_finite_nonneg("norm", norm)
    if value < _MIN_NORM:
        raise InvalidParameter(f"norm must be >= 2^-500, got {norm!r}")
    if p not in (1, 2) or isinstance(p, bool):
        raise InvalidParameter(f"p must be 1 or 2, got {p!r}")
    return value, p


def _check_origin(
    origin: object, num_columns: int | None, T: str
) -> tuple[tuple[float, ...] | float, int | None]:
    """``origin`` as a scalar ``0.0`` or a tuple of finite floats; and the implied width."""
    arr = np.asarray(origin if origin is not None else 0.0)
    if arr.dtype.kind not in "fiu" or arr.ndim > 1:
        raise InvalidParameter(f"origin must be a number or a 1-d numeric array, got {origin!r}")
    vals = arr.astype(np.float64)
    if not np.all(np.isfinite(vals)):
        raise InvalidParameter(f"origin must be finite, got {origin!r}")
    if T == "f32" and not np.array_equal(vals.astype(np.float32).astype(np.float64), vals):
        raise InvalidParameter(f"origin must be exactly representable in f32, got {origin!r}")
    if arr.ndim == 0:
        if float(vals) != 0.0:
            raise InvalidParameter(
                f"a scalar origin must be 0, got {origin!r}; give one value per column"
            )
        if num_columns is None:
            return 0.0, None
        return (0.0,) * num_columns, num_columns
    if num_columns is not None and vals.size != num_columns:
        raise InvalidParameter(
            f"origin must have num_columns={num_columns} values, got {vals.size}"
        )
    return tuple(float(v) for v in vals), int(vals.size)


@lru_cache(maxsize=256)
def _threshold(norm: float, p: int, d: int) -> float:
    """The largest float ``t`` such that a computed row statistic ``s <= t`` proves
    ``‖x − o‖_p <= norm``.

    With ``u = 2^-53``, the computed statistic (``Σ|x_i − o_i|`` for p = 1, ``Σ(x_i − o_i)²`` for
    p = 2, summed in any order) is at least ``(1 − u)^(d+2)·‖x − o‖_p^p − d·2^-1075``, since every
    operation on non-negative terms loses at most a relative ``u`` (subtraction, products, sums)
    plus, for a product that underflows, an absolute ``2^-1075``.  By Bernoulli's inequality
    ``(1 − u)^(d+2) >= 1 − (d+2)·u``.
    """
    r = ar.q(norm) ** p
    t = r * (1 - (d + 2) * _U) - d * _TINY
    return ar.down(t) if t > 0 else 0.0


def _row_stats(x: Array, origin: tuple[float, ...] | float, p: int) -> Array:
    """The computed statistic of each row (NaN for a row with a NaN, ``inf`` for one with an
    infinite value or whose statistic overflowed).

    ``Σ (x_i − o_i)²`` (p = 2) or ``Σ |x_i − o_i|`` (p = 1) in binary64, summed by ``einsum`` in
    whatever order (and with or without fused multiply-add) it uses: the bounds of
    :func:`_threshold` and :func:`_threshold_hi` hold for any order.  With a zero origin the
    subtraction is skipped (``x − 0 = x`` exactly).
    """
    with np.errstate(all="ignore"):
        dev = x if x.dtype == np.float64 else x.astype(np.float64)
        if any(origin) if isinstance(origin, tuple) else origin != 0:
            dev = np.subtract(dev, np.asarray(origin, dtype=np.float64))
        if p == 2:
            out: Array = np.einsum("ij,ij->i", dev, dev)
        else:
            out = np.einsum("ij->i", np.abs(dev))
    return out


@lru_cache(maxsize=256)
def _threshold_hi(norm: float, p: int, d: int) -> float:
    """A float above which a computed row statistic proves ``‖x − o‖_p > norm``: the statistic
    is at most ``(1 + u)^(d+2)·‖x − o‖_p^p + d·2^-1075`` (with ``(1 + u)^k <= 1 + 2ku``)."""
    r = ar.q(norm) ** p
    return ar.up(r * (1 + 2 * (d + 2) * _U) + (d + 1) * _TINY)


def _exact_in_ball(row: Array, origin: tuple[float, ...] | float, norm: float, p: int) -> bool:
    """``‖row − o‖_p <= norm``, decided in exact rationals (for rows with finite values)."""
    o = origin if isinstance(origin, tuple) else (0.0,) * row.shape[0]
    total = sum((abs(ar.q(float(v)) - ar.q(c)) ** p for v, c in zip(row, o, strict=True)), ar.q(0))
    return bool(total <= ar.q(norm) ** p)


def _rows_in_ball(
    x: Array, origin: tuple[float, ...] | float, norm: float, p: int, stats: Array | None = None
) -> Array:
    """A boolean per row: ``‖x − o‖_p <= norm`` exactly.

    The float statistic (``stats``, computed by :func:`_row_stats` if not given) decides every
    row outside a thin band around the boundary (the bounds of :func:`_threshold` and
    :func:`_threshold_hi`); rows in the band, and finite rows whose statistic overflowed, are
    decided in exact rationals.  NaN and infinite rows are outside.
    """
    n, d = x.shape
    if d == 0:
        return np.ones(n, dtype=bool)
    if stats is None:
        stats = _row_stats(x, origin, p)
    ok: Array = stats <= _threshold(norm, p, d)
    if ok.all():
        return ok
    unsure = ~ok & ~np.isnan(stats) & ((stats <= _threshold_hi(norm, p, d)) | np.isinf(stats))
    idx = np.flatnonzero(unsure)
    idx = idx[np.isfinite(x[idx]).all(axis=1)]
    if idx.size:
        # each distinct row is decided once (repeated rows, e.g. on the boundary, are common)
        _, first, inverse = np.unique(x[idx], axis=0, return_index=True, return_inverse=True)
        decided = np.array([_exact_in_ball(x[idx[i]], origin, norm, p) for i in first])
        ok[idx] = decided[inverse.reshape(-1)]
    return ok
