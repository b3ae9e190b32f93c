"""Plans of the certified samplers: everything that depends only on (scale in grid units, law).

A :class:`_Plan` fixes the proposal (L = 2^a, T), the float constants of the certified bounds,
the vector bit layout and the scalar attempt's byte layout (lemmas S1, S6; the layouts are in
``docs/proofs/vectorized_sampling.md``).  Plans are cached; each carries its reservoir (S5).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

import gmpy2
import numpy as np
import numpy.typing as npt

from ..bernoulli import to_rational

Dist = Literal["laplace", "gaussian"]
F64 = npt.NDArray[np.float64]
U64 = npt.NDArray[np.uint64]
BoolA = npt.NDArray[np.bool_]
#: Lanes per chunk: bounds the temporaries (about 40 arrays of CHUNK × 8 bytes).
CHUNK = 1 << 14
# Relative error budget of every float64 bound: numpy's and libm's exp/log are within
# 4 ulp (2^-50 relative); with the handful of roundings around them, 2^-44 leaves a
# safety factor of 2^6 on top.  TINY absorbs absolute (subnormal) rounding.
EPS = 2.0**-44
TINY = 2.0**-1000
_N_MAX = 1 << 20  # N at or above this goes to the exact path (Pr < e^{-2^11})
_KMIN = {"f64": -1074, "f32": -149}
_MAXF = {"f64": float(np.finfo(np.float64).max), "f32": float(np.finfo(np.float32).max)}


class _Reservoir:
    """Accepted attempts drawn ahead by the vector path, for repeated scalar releases.

    ``items`` holds triples (negative, M_top, lazy) in draw order (reversed: ``pop`` takes the
    earliest); they were drawn in randomness epoch ``epoch`` (:data:`.rng.EPOCH`) and are
    discarded once it moves on (source switched, forked child, certification band changed).
    ``calls`` counts refill requests in this epoch (the first release of a plan draws only its
    own attempt), ``size`` the last batch size.  No lock: ``list.pop`` hands each triple out
    at most once, and a racing refill only wastes a batch (lemma S5).
    """

    __slots__ = ("calls", "epoch", "items", "size")

    def __init__(self) -> None:
        self.items: list[tuple[int, int, int]] = []
        self.epoch, self.calls, self.size = -1, 0, 0

    def __reduce__(self) -> tuple[type[_Reservoir], tuple[()]]:
        """A copy (pickle, deepcopy: e.g. a release function shipped to a Dask worker) starts
        empty: two processes must never release the same pre-drawn noise."""
        return (_Reservoir, ())


@dataclass(frozen=True)
class _Plan:
    gauss: bool
    T: Any  # proposal discrete-Laplace scale (grid units), mpq > 0
    a: int  # L = 2^a
    s64: int  # min(a, 64): bits of R revealed up front
    lam: Any  # L/T, mpq
    inv_T: Any  # 1/T, mpq
    beta: float  # T/L
    rcoef: float  # 2^(a-s64)/T: R_top → R/T
    center: Any  # σ²/t (gaussian)
    two_sigma2: Any  # 2σ² (gaussian)
    c_L: float  # center / L
    i2s_L: float  # L² / (2σ²)
    floats_ok: bool  # every float above is finite and normal
    int_ok: bool  # the int64 vector path applies (T < 2^40)
    v_in_w0: bool  # gaussian with a = 0: W is unused, so V's first bits share its slot
    rate: float  # estimated acceptance rate of one attempt (sizes draws; never the law)
    layout: int  # vector bit layout: 0 wide, 1 one packed word, 2 R and V share w1
    scalar_bytes: tuple[int, int, int, int, int, int]  # scalar attempt (see _attempt_bytes)
    reservoir: _Reservoir = field(default_factory=_Reservoir, compare=False, repr=False)


def _floor_log2(x: Any) -> int:
    num, den = int(x.numerator), int(x.denominator)
    e = num.bit_length() - den.bit_length()
    if (num << max(0, -e)) < (den << max(0, e)):
        e -= 1
    return e


def _as_float(x: Any) -> float:
    try:
        return float(x)
    except OverflowError:
        return math.inf


@lru_cache(maxsize=256)
def _plan(s: Any, dist: str) -> _Plan:
    """The plan for noise of scale ``s`` (grid units, mpq > 0) and law ``dist``."""
    if dist not in ("laplace", "gaussian"):
        raise ValueError(f"dist must be 'laplace' or 'gaussian', got {dist!r}")
    gauss = dist == "gaussian"
    if gauss:
        t = gmpy2.mpq(gmpy2.f_div(s.numerator, s.denominator) + 1)
        T, center, two_sigma2 = t, s * s / t, 2 * s * s
    else:
        T, center, two_sigma2 = s, gmpy2.mpq(0), gmpy2.mpq(1)
    # L = 2^a ≈ T/16, or T/256 once T ≥ 2^24 (fewer rejected R, a thinner tail of R)
    lg = _floor_log2(T)
    a = lg - 8 if lg >= 24 else max(0, lg - 4) if T >= 32 else 0
    s64 = min(a, 64)
    L = gmpy2.mpq(1 << a)
    beta = _as_float(T / L)
    rcoef = _as_float(gmpy2.mpq(1 << (a - s64)) / T)
    c_L, i2s_L = _as_float(center / L), _as_float(L * L / two_sigma2)
    vals = [beta, rcoef] + ([c_L, i2s_L] if gauss else [])
    floats_ok = all(math.isfinite(v) and (v == 0 or abs(v) > 2.0**-900) for v in vals)
    floats_ok = floats_ok and beta < 2.0**40 and beta > 2.0**-40
    return _Plan(
        gauss, T, a, s64, L / T, 1 / T, beta, rcoef, center, two_sigma2, c_L, i2s_L,
        floats_ok, floats_ok and T < 2**40, gauss and a == 0, _rate(T, a, s, gauss),
        1 if not gauss and a <= 15 else 2 if gauss and 0 < a <= 32 else 0,
        _attempt_bytes(a, floats_ok, gauss and a != 0),
    )  # fmt: skip


def _rate(T: Any, a: int, sigma: Any, gauss: bool) -> float:
    """Pr[an attempt is accepted], in floats (a deterministic estimate; only sizes draws)."""
    x, y = float(gmpy2.mpq(1 << a) / T), float(1 / T)  # L/T and 1/T
    s_over_l = -math.expm1(-x) / x if y < 1e-12 else math.expm1(-x) / math.ldexp(math.expm1(-y), a)
    s_sum = math.ldexp(s_over_l, min(a, 1000))  # Σ_{r<L} e^{−r/T}
    p = s_over_l * (1.0 - 0.5 * -math.expm1(-x) / s_sum)
    if gauss:
        if T > 10**4:  # the sum below, as an integral (relative error < 1e-3)
            r = float(sigma / T)  # σ/t; the centre is c = σ²/t, so c/σ = r too
            p *= math.exp(-r * r / 2) * r * math.sqrt(math.pi / 2)
        else:
            t, sg = float(T), float(sigma)
            c = sg * sg / t
            ys = np.arange(0, int(40 * t) + 40, dtype=np.float64)
            w = np.exp(-ys / t - (ys - c) ** 2 / (2 * sg * sg))
            w[1:] *= 2.0
            norm = (1 + math.exp(-1 / t)) / (1 - math.exp(-1 / t))
            p *= float(w.sum()) / norm
    return min(1.0, max(0.01, p))


def _attempt_bytes(a: int, floats_ok: bool, v_word: bool) -> tuple[int, int, int, int, int, int]:
    """(lazy, nr, nbytes, r_shift, r_mask, w2_shift) of a scalar attempt: R's unrevealed low
    bits, R's bytes, all bytes, and how :func:`_scalar_draw` reads the fields from the
    attempt's bytes taken as one little-endian int: bytes 0-7 are w0, the next nr bytes hold
    R (their top a − lazy bits: mask, then shift right), the rest are w2."""
    lazy = a - 64 if floats_ok and a > 64 else 0
    nr = (a - lazy + 7) // 8
    r_mask = (1 << (8 * nr)) - 1 if a else 0
    return lazy, nr, 8 + nr + (8 if v_word else 0), 8 * nr - a + lazy, r_mask, 64 + 8 * nr


def _grid_scale(scale: Any, k: int) -> Any:
    s = to_rational(scale, "scale")
    if s < 0:
        raise ValueError(f"scale must be >= 0, got {s}")
    return s * (gmpy2.mpq(1 << -k) if k < 0 else gmpy2.mpq(1, 1 << k))


@lru_cache(maxsize=256, typed=True)
def _scalar_plan(scale: Any, k: int, dist: str) -> _Plan | None:
    """The plan for one scalar call (None for scale 0); cached by (scale, k, dist)."""
    s = _grid_scale(scale, k)
    return None if s == 0 else _plan(s, dist)


def _plan_for(scale: Any, k: int, dist: str) -> _Plan | None:
    try:
        return _scalar_plan(scale, k, dist)
    except TypeError:  # an unhashable scale: no caching
        s = _grid_scale(scale, k)
        return None if s == 0 else _plan(s, dist)
