"""The entry points: scalar releases, small vectors (the scalar attempt per lane) and the numpy
vector path, each with the law of its reference in :mod:`..noise_ref`."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ..._types import carrier_dtype, int_bounds
from ..noise_ref import float_noise_ref, int_noise_ref
from ..uniform import sample_uniform_bits
from .plan import CHUNK, Dist, _grid_scale, _Plan, _plan, _plan_for
from .reservoir import _draw, _take
from .rounding import _float_out, _float_x, _float_x_f32, _grid_index, _round_out
from .scalar import _scalar_draw, _scalar_float_x, _scalar_z, _small_pool, _z_from
from .vector import _float_chunk, _gradual_underflow, _z_vector

#: Up to these lengths a vector call runs the scalar attempt per lane (from the plan's
#: reservoir, or one bulk byte read), beyond them the numpy vector path: each limit is about
#: where the two paths cost the same per call (benchmarks/bench_small_vectors.py), so the cost
#: of a call grows with n without a step.  The limits choose a path, never the law.
SMALL_LIMIT = {"f64": 80, "f32": 40, "int": 192}
#: The mechanisms' gate for the small functions (which then apply their own type's limit).
SMALL = max(SMALL_LIMIT.values())


def int_noise_scalar(x: int, scale: Any, dist: Dist, T: str) -> int:
    """clamp_T(x + Z), Z ~ 𝓛_ℤ(scale) or 𝓝_ℤ(scale): the law of ``int_noise_ref``.

    Raises:
        ValueError: if ``scale`` is negative or not finite.
    """
    p = _plan_for(scale, 0, dist)
    if p is None:
        return int_noise_ref(x, 0, dist, T)
    lo, hi = int_bounds(T)
    y = int(x) + _z_from(_draw(p))
    return lo if y < lo else hi if y > hi else y


def float_noise_scalar(x: float, scale: Any, k: int, dist: Dist, T: Literal["f32", "f64"]) -> float:
    """sat_T(round_T(2^k·(round_k(x) + Z))), Z ~ 𝓛_ℤ/𝓝_ℤ(scale/2^k): ``float_noise_ref``'s law.

    Raises:
        ValueError: if ``x`` is NaN or infinite, or ``scale`` is negative or not finite.
    """
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"x must be finite, got {x!r}")
    p = _plan_for(scale, k, dist)
    if p is None:
        return float_noise_ref(x, 0, k, dist, T)
    return _float_out(*_draw(p), _grid_index(x, k, T), k, T)


def int_noise_scalar_fn(scale: Any, dist: Dist, T: str) -> Callable[[int], int]:
    """``lambda x: int_noise_scalar(x, scale, dist, T)`` with the plan and bounds looked up
    once (at construction), so a call only draws: the same code path, hence the same law.

    Raises:
        ValueError: if ``scale`` is negative or not finite (now, not at the call).
    """
    p = _plan_for(scale, 0, dist)
    if p is None:
        return lambda x: int_noise_ref(x, 0, dist, T)
    lo, hi = int_bounds(T)

    def draw(x: int) -> int:
        y = int(x) + _z_from(_draw(p))
        return lo if y < lo else hi if y > hi else y

    return draw


def float_noise_scalar_fn(
    scale: Any,
    k: int,
    dist: Dist,
    T: Literal["f32", "f64"],
    refuse: type[Exception] = ValueError,
) -> Callable[[float], float]:
    """``lambda x: float_noise_scalar(x, scale, k, dist, T)`` with the plan looked up once (at
    construction): the same code path per call, hence the same law.

    Raises:
        ValueError: if ``scale`` is negative or not finite (now); at the call, ``refuse``
            (``ValueError`` unless given) if ``x`` is NaN or infinite, before any randomness.
    """
    p = _plan_for(scale, k, dist)
    isfinite = math.isfinite
    if p is None:

        def exact(x: float) -> float:
            if not isfinite(x):
                raise refuse(f"x must be finite, got {x!r}")
            return float_noise_scalar(x, scale, k, dist, T)

        return exact

    if T == "f32":

        def draw32(x: float) -> float:
            x = float(x)
            if not isfinite(x):
                raise refuse(f"x must be finite, got {x!r}")
            return _float_x_f32(_draw(p), x, k)

        return draw32

    def draw(x: float) -> float:
        x = float(x)
        if not isfinite(x):
            raise refuse(f"x must be finite, got {x!r}")
        return _float_x(_draw(p), x, k, T)

    return draw


def discrete_laplace_batch(n: int, scale: Any) -> npt.NDArray[Any]:
    r"""n iid exact draws of 𝓛_ℤ(scale): Pr[Z = z] ∝ exp(−|z|/scale), z ∈ ℤ.

    int64 array (an object array of Python ints when scale ≥ 2^40).  ``scale = 0`` gives 0s.

    Raises:
        ValueError: if ``scale`` is negative or not finite, or ``n < 0``.
    """
    return _discrete_batch(n, scale, "laplace")


def discrete_gaussian_batch(n: int, scale: Any) -> npt.NDArray[Any]:
    r"""n iid exact draws of 𝓝_ℤ(scale): Pr[Z = z] ∝ exp(−z²/(2·scale²)), z ∈ ℤ.

    int64 array (object array when scale ≥ 2^40).  ``scale = 0`` gives 0s.

    Raises:
        ValueError: if ``scale`` is negative or not finite, or ``n < 0``.
    """
    return _discrete_batch(n, scale, "gaussian")


def _discrete_batch(n: int, scale: Any, dist: str) -> npt.NDArray[Any]:
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    s = _grid_scale(scale, 0)
    if s == 0:
        return np.zeros(n, np.int64)
    return _z_vector(_plan(s, dist), n)


def int_noise(x: npt.NDArray[Any], scale: Any, dist: Dist, T: str) -> npt.NDArray[Any]:
    """Element-wise clamp_T(x_i + Z_i), independent Z_i: the law of ``int_noise_ref``.

    Raises:
        ValueError: if ``scale`` is negative or not finite.
    """
    x = np.asarray(x)
    p = _plan_for(scale, 0, dist)  # cached per (scale, k, dist): no per-call rational work
    dtype = carrier_dtype(T)
    if p is None:
        return np.array([int_noise_ref(int(v), 0, dist, T) for v in x.tolist()], dtype=dtype)
    lo, hi = int_bounds(T)
    out = np.empty(len(x), dtype=dtype)
    if len(x) <= SMALL_LIMIT["int"]:
        out[:] = _small_int(p, x.tolist(), lo, hi)
        return out
    for start in range(0, len(x), CHUNK):
        xs = x[start : start + CHUNK]
        z = _z_vector(p, len(xs))
        if z.dtype == np.int64 and T not in ("i64", "u64", "usize"):
            y = xs.astype(np.int64) + z  # |x| < 2^32 and |z| < 2^60: no overflow
            out[start : start + len(xs)] = np.clip(y, lo, hi)
        elif z.dtype == np.int64 and T == "i64":
            xi = xs.astype(np.int64)
            y = xi + z  # wraps on overflow; detected below and saturated
            y = np.where((z > 0) & (y < xi), hi, np.where((z < 0) & (y > xi), lo, y))
            out[start : start + len(xs)] = y
        else:
            ys = [int(a) + int(b) for a, b in zip(xs.tolist(), z.tolist(), strict=True)]
            out[start : start + len(xs)] = [lo if v < lo else hi if v > hi else v for v in ys]
    return out


def float_noise(
    x: npt.NDArray[Any], scale: Any, k: int, dist: Dist, T: Literal["f32", "f64"]
) -> npt.NDArray[Any]:
    """Element-wise sat_T(round_T(2^k·(round_k(x_i) + Z_i))): the law of ``float_noise_ref``.

    Raises:
        ValueError: if some ``x_i`` is NaN or infinite, or ``scale`` is negative.
    """
    xa = np.asarray(x)
    if xa.dtype not in (np.float32, np.float64):
        xa = xa.astype(np.float64)
    if not np.isfinite(xa).all():
        raise ValueError("x must be finite (found NaN or infinity)")
    p = _plan_for(scale, k, dist)  # cached per (scale, k, dist): no per-call rational work
    out = np.empty(len(xa), dtype=carrier_dtype(T))
    if p is None:
        out[:] = [float_noise_ref(v, 0, k, dist, T) for v in xa.tolist()]
        return out
    if len(xa) <= SMALL_LIMIT[T]:  # the scalar attempt per lane: exact integer rounding, no TwoSum
        out[:] = _small_float(p, xa.tolist(), k, T)
        return out
    e_r = k + p.a - p.s64
    if not (p.floats_ok and -1074 <= e_r <= 900 and _gradual_underflow()):
        out[:] = [_round_out(_grid_index(v, k, T) + _scalar_z(p), k, T) for v in xa.tolist()]
        return out
    # every input is already on the 2^k grid when k is at or below its dtype's k_min
    on_grid = k <= -1074 or (k <= -149 and xa.dtype == np.float32)
    for start in range(0, len(xa), CHUNK):
        view = out[start : start + CHUNK]
        chunk = xa[start : start + CHUNK].astype(np.float64, copy=False)  # per chunk: no 2nd copy
        _float_chunk(p, chunk, k, T, e_r, on_grid, view)
    return out


def _small_float(p: _Plan, xs: list[float], k: int, T: str) -> list[float]:
    """The small-vector path (n ≤ SMALL_LIMIT[T]): element j gets the j-th draw of the plan's
    reservoir (lemma S5), or, without the vector path, the j-th accepted scalar attempt read
    from one bulk byte read (lemma S2)."""
    if p.floats_ok:
        return [_float_x(d, v, k, T) for v, d in zip(xs, _take(p, len(xs)), strict=True)]
    pool = _small_pool(p, len(xs)) if len(xs) > 1 else None  # one lane: read per attempt
    return [_scalar_float_x(p, v, k, T, pool) for v in xs]


def _small_int(p: _Plan, xs: list[int], lo: int, hi: int) -> list[int]:
    """The integer small-vector path: clamp(x_j + Z_j) with Z_j the j-th draw, as above."""
    out = []
    if p.floats_ok:
        for v, (neg, m, lazy) in zip(xs, _take(p, len(xs)), strict=True):  # _z_from, inlined
            if lazy:
                m = (m << lazy) | sample_uniform_bits(lazy)
            y = int(v) - m if neg else int(v) + m
            out.append(lo if y < lo else hi if y > hi else y)
        return out
    pool = _small_pool(p, len(xs)) if len(xs) > 1 else None
    for v in xs:
        y = int(v) + _z_from(_scalar_draw(p, pool))
        out.append(lo if y < lo else hi if y > hi else y)
    return out


def float_noise_small_fn(
    scale: Any, k: int, dist: Dist, T: Literal["f32", "f64"], refuse: type[Exception] = ValueError
) -> Callable[[npt.NDArray[Any]], npt.NDArray[Any]]:
    """``float_noise(x, scale, k, dist, T)`` for a carrier-typed 1-d array (of length ≤ ``SMALL``),
    with the plan looked up once: the same small path (hence the same law and, on the same
    bits, the same output), without numpy's per-call checks.  Every x_i is checked finite
    (``refuse`` otherwise) before any randomness is drawn.
    """
    p = _plan_for(scale, k, dist)
    dtype = carrier_dtype(T)
    isfinite = math.isfinite
    limit = SMALL_LIMIT[T]

    def small(x: npt.NDArray[Any]) -> npt.NDArray[Any]:
        xs = x.tolist()
        for v in xs:
            if not isfinite(v):
                raise refuse("x must be finite (found NaN or infinity)")
        if p is None or len(xs) > limit:
            return float_noise(x, scale, k, dist, T)
        return np.array(_small_float(p, xs, k, T), dtype=dtype)

    return small


def int_noise_small_fn(
    scale: Any, dist: Dist, T: str
) -> Callable[[npt.NDArray[Any]], npt.NDArray[Any]]:
    """``int_noise(x, scale, dist, T)`` for a carrier-typed 1-d array of length ≤ ``SMALL``,
    with the plan and bounds looked up once: the same small path and law."""
    p = _plan_for(scale, 0, dist)
    dtype = carrier_dtype(T)
    lo, hi = int_bounds(T)

    def small(x: npt.NDArray[Any]) -> npt.NDArray[Any]:
        if p is None or len(x) > SMALL_LIMIT["int"]:
            return int_noise(x, scale, dist, T)
        return np.array(_small_int(p, x.tolist(), lo, hi), dtype=dtype)

    return small
