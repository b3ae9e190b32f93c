r"""Certified vectorised exact noise: the same laws as :mod:`.noise_ref`, at near-numpy speed.

Every function here has *exactly* the output law of its reference in :mod:`.noise_ref`
(see ``docs/proofs/vectorized_sampling.md``; lemmas S1–S7 in ``docs/proofs/sampling/``):

* ``int_noise(x, scale, dist, T)``          = clamp_T(x_i + Z_i),  Z_i ~ 𝓛_ℤ(scale) / 𝓝_ℤ(scale)
* ``float_noise(x, scale, k, dist, T)``     = sat_T(round_T(2^k·(round_k(x_i) + Z_i))),
  Z_i ~ 𝓛_ℤ(scale/2^k) / 𝓝_ℤ(scale/2^k)
* ``int_noise_scalar`` / ``float_noise_scalar``: one Python scalar, same law;
* ``discrete_laplace_batch(n, scale)`` / ``discrete_gaussian_batch(n, scale)``: n iid draws.

How (one *attempt* per lane, repeated for rejected lanes with fresh bits):

* the magnitude is M = L·N + R with L = 2^a ≈ T/16 or T/256 (T the discrete-Laplace scale of the
  proposal, in grid units), N ~ Geometric(e^{−L/T}) by inversion N = ⌊−ln(U)·T/L⌋, and R
  uniform on {0, …, L−1} accepted with probability e^{−R/T} (test W < e^{−R/T});
  a fair sign, and the pair (negative, M = 0) is rejected.  The accepted ±M is
  𝓛_ℤ(T); the Gaussian adds the CKS20 test V < exp(−(M − σ²/t)²/(2σ²)), t = ⌊σ⌋ + 1 (the
  vector path with a > 0 merges it with R's test: W < exp(−R/T − (M − σ²/t)²/(2σ²))).
* R's low-order bits are uniform bits, so at k = −1074 the noisy value's bits below the
  output precision never need a logarithm: only the *top* 64 bits of R are drawn; the rest
  stay unrevealed unless needed.  The output float is certified with an error-free TwoSum
  of the grid value and the noise: both ends of the exact value's interval must round to the
  same float (round-to-nearest is monotone).
* an attempt takes one or two 64-bit words of ``fill_uint64`` (bit layouts in the proof);
  attempts form an i.i.d. stream and each chunk keeps the first accepted ones in order.
* each comparison is first decided with float64 interval bounds (error margins proved in the
  proof file and widened by a factor ≥ 2^8 over numpy's documented ulp errors); a lane whose
  bounds cannot decide goes to an exact gmpy2 path that **continues from the same bits**
  (revealing more bits of U, W, V and R from :func:`~.rng.fill_bytes`), never a resample.

``certification_margin(band)`` widens every float decision band (test mode: most lanes then
take the exact path); ``fallback_counts()`` reports how many lanes did.

>>> import warnings
>>> from .rng import scripted_randomness
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     with scripted_randomness(seed=b"doc"):
...         a = float_noise(np.zeros(3), 1, -1074, "laplace", "f64")
...     with scripted_randomness(seed=b"doc"):
...         b = float_noise(np.zeros(3), 1, -1074, "laplace", "f64")
>>> bool((a == b).all()), a.dtype
(True, dtype('float64'))
>>> int_noise(np.array([1, 2, 3]), 0, "gaussian", "i32")
array([1, 2, 3], dtype=int32)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import repeat
from typing import Any, Literal

import gmpy2
import numpy as np
import numpy.typing as npt

from .._types import carrier_dtype, int_bounds
from .bernoulli import to_rational
from .noise_ref import float_noise_ref, int_noise_ref, round_to_grid
from .rng import EPOCH, bump_epoch, fill_bytes, fill_uint64
from .uniform import sample_uniform_bits

__all__ = [
    "CHUNK",
    "certification_margin",
    "discrete_gaussian_batch",
    "discrete_laplace_batch",
    "fallback_counts",
    "float_noise",
    "float_noise_scalar",
    "float_noise_scalar_fn",
    "float_noise_small_fn",
    "int_noise",
    "int_noise_scalar",
    "int_noise_scalar_fn",
    "int_noise_small_fn",
    "reset_fallback_counts",
]

Dist = Literal["laplace", "gaussian"]
F64 = npt.NDArray[np.float64]
U64 = npt.NDArray[np.uint64]
BoolA = npt.NDArray[np.bool_]

#: Lanes per chunk: bounds the temporaries (about 40 arrays of CHUNK × 8 bytes).
CHUNK = 1 << 14
#: Up to these lengths a vector call runs the scalar attempt per lane (from the plan's
#: reservoir, or one bulk byte read), beyond them the numpy vector path: each limit is about
#: where the two paths cost the same per call (benchmarks/bench_small_vectors.py), so the cost
#: of a call grows with n without a step.  The limits choose a path, never the law.
SMALL_LIMIT = {"f64": 80, "f32": 40, "int": 192}
#: The mechanisms' gate for the small functions (which then apply their own type's limit).
SMALL = max(SMALL_LIMIT.values())

# Relative error budget of every float64 bound: numpy's and libm's exp/log are within
# 4 ulp (2^-50 relative); with the handful of roundings around them, 2^-44 leaves a
# safety factor of 2^6 on top.  TINY absorbs absolute (subnormal) rounding.
EPS = 2.0**-44
TINY = 2.0**-1000
_N_MAX = 1 << 20  # N at or above this goes to the exact path (Pr < e^{-2^11})
_KMIN = {"f64": -1074, "f32": -149}
_MAXF = {"f64": float(np.finfo(np.float64).max), "f32": float(np.finfo(np.float32).max)}

_band = 0.0
_counts = {"attempts": 0, "exact_lanes": 0, "lazy_bits_revealed": 0}


@contextmanager
def certification_margin(band: float) -> Iterator[None]:
    """Widen every float64 decision band by ``band`` (test mode; 0 ≤ band ≤ 1).

    ``band`` is added to each interval in its natural unit (probability for Bernoulli tests,
    the geometric's own unit for N, a fraction of the half-gap for rounding).  With
    ``band = 0.5`` almost every lane takes the exact path; the law does not change.
    """
    global _band
    if not 0.0 <= band <= 1.0:
        raise ValueError(f"band must be in [0, 1], got {band!r}")
    previous, _band = _band, float(band)
    bump_epoch()  # noise drawn ahead was certified under the old band: draw afresh
    try:
        yield
    finally:
        _band = previous
        bump_epoch()


def fallback_counts() -> dict[str, int]:
    """Counters: attempts drawn, lanes resolved on the exact path, lazy 64-bit reveals."""
    return dict(_counts)


def reset_fallback_counts() -> None:
    """Zero the counters of :func:`fallback_counts`."""
    for key in _counts:
        _counts[key] = 0


# ---------------------------------------------------------------------------------------
# Plans: everything that depends only on (scale in grid units, dist).


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


# ---------------------------------------------------------------------------------------
# The exact path: lazily revealed uniforms compared with exp(−γ), γ rational.


def _exp_neg_bounds(g: Any, prec: int) -> tuple[Any, Any]:
    """Rationals lo ≤ exp(−g) ≤ hi (MPFR, directed rounding, ``prec`` bits)."""
    ctx = gmpy2.get_context()
    with gmpy2.context(ctx, precision=prec, round=gmpy2.RoundUp):
        g_hi = gmpy2.mpfr(g)
    with gmpy2.context(ctx, precision=prec, round=gmpy2.RoundDown):
        g_lo = gmpy2.mpfr(g)
        lo = gmpy2.exp(-g_hi)
    with gmpy2.context(ctx, precision=prec, round=gmpy2.RoundUp):
        hi = gmpy2.exp(-g_lo)
    return gmpy2.mpq(lo), gmpy2.mpq(hi)


class _LazyU:
    """A uniform U ∈ [0, 1) of which the first ``nb`` bits ``p`` are known."""

    __slots__ = ("nb", "p")

    def __init__(self, p: int, nb: int) -> None:
        self.p, self.nb = p, nb

    def below_exp(self, g: Any) -> bool:
        """Whether U < exp(−g), for rational g ≥ 0, revealing more bits of U as needed.

        exp(−g) is 1 for g = 0 and transcendental otherwise (Lindemann), so U never equals
        it and the loop ends with probability 1 (each round fails with prob. ≤ 2^−60).
        """
        if g == 0:
            return True
        prec = max(64, self.nb) + 64
        while True:
            if g >= gmpy2.mpq(7, 10) * (self.nb + 2):
                # e^{−g} < 2^{−(nb+2)} (as ln 2 < 7/10): if p ≥ 1 then U ≥ 2^{−nb} > e^{−g};
                # if p = 0, only more bits can tell (no huge MPFR numbers either way)
                if self.p:
                    return False
            else:
                lo, hi = _exp_neg_bounds(g, prec)
                scale = gmpy2.mpz(1) << self.nb
                if self.p + 1 <= lo * scale:
                    return True
                if self.p >= hi * scale:
                    return False
            self.p = (self.p << 64) | int.from_bytes(fill_bytes(8), "little")
            self.nb += 64
            prec += 64
            _counts["lazy_bits_revealed"] += 1


def _geometric(u: _LazyU, lam: Any, hint: int) -> int:
    """N = max{n ≥ 0 : U < exp(−n·λ)} (Geometric(e^{−λ}) by inversion), exactly."""
    n = max(0, min(hint, _N_MAX))
    while n > 0 and not u.below_exp(n * lam):
        n -= 1
    while u.below_exp((n + 1) * lam):
        n += 1
    return n


def _cert_below(w: float, width: float, p_c: float, err: float) -> bool | None:
    """Decide W < p for W ∈ [w, w + width) and p ∈ [p_c − err, p_c + err] (band-widened)."""
    if w + width <= p_c - err - _band:
        return True
    if w >= p_c + err + _band:
        return False
    return None


def _reveal(R: int, lazy: int) -> tuple[int, int]:
    """R's top bits completed by its ``lazy`` unrevealed low bits (fresh uniform bits)."""
    return (R << lazy) | sample_uniform_bits(lazy), 0


_exp, _log, _floor, _ldexp = math.exp, math.log, math.floor, math.ldexp


def _attempt(p: _Plan, w0: int, R: int, w2: int, lazy: int = 0) -> tuple[int, int, int] | None:
    """One attempt, exactly: (negative, M_top, lazy) with M = M_top·2^lazy + tail, or None.

    Bits: w0 = [U: 32 bits][W: 31 bits][sign: 1 bit] (the first revealed bits of U and W);
    R holds the first a − ``lazy`` bits of the a-bit integer R (all of it when lazy = 0);
    w2 = first 64 bits of V (gaussian).  Each decision tries a certified float bound first
    and otherwise reveals more bits (:class:`_LazyU`, and R's unrevealed ``lazy`` low bits).
    A returned ``lazy`` > 0 means every decision was certified for *every* completion of R,
    so R's ``lazy`` low bits (the ``tail``) are still uniform and independent of the rest
    (lemma S4, "lazy R"): the caller reveals them only if it needs them.
    """
    neg = w0 & 1
    if lazy and R == 0:  # R = 0 possible (Pr 2^-64 of the top bits): reveal, decide exactly
        R, lazy = _reveal(R, lazy)
    # R accepted iff W < exp(−R/T)  (the float tests below are _cert_below, written out)
    if R:
        a = p.a
        rcoef = p.rcoef
        v_c = (R >> (a - lazy - p.s64)) * rcoef
        tail = rcoef if a > 64 else 0.0
        e_c = _exp(-v_c)
        wf = ((w0 >> 1) & 0x7FFFFFFF) * 2.0**-31
        p_c = e_c - tail / 2
        err = e_c * EPS + v_c * EPS + tail + TINY
        if wf + 2.0**-31 <= p_c - err - _band:
            pass  # accepted
        elif wf >= p_c + err + _band:
            return None
        else:
            _counts["exact_lanes"] += 1
            if lazy:
                R, lazy = _reveal(R, lazy)
            if not _LazyU((w0 >> 1) & 0x7FFFFFFF, 31).below_exp(R * p.inv_T):
                return None
    # N = ⌊−ln(U)·T/L⌋
    ut = w0 >> 32
    n = -1
    if ut:
        u = ut * 2.0**-32
        beta = p.beta
        f_c = -_log(u) * beta
        f_hi = f_c * (1 + EPS) + TINY + _band
        f_lo = f_c * (1 - EPS) - beta * (2.0**-32 / u) * (1 + EPS) - TINY - _band
        lo = _floor(f_lo) if f_lo > 0.0 else 0
        if f_hi < _N_MAX and lo == _floor(f_hi):
            n = lo
    if n < 0:
        _counts["exact_lanes"] += 1
        hint = int(min(-_log(ut * 2.0**-32) * p.beta, _N_MAX)) if ut else 0
        n = _geometric(_LazyU(ut, 32), p.lam, hint)
    if neg and n == 0 and R == 0:  # M = 0 (R is fully known when R's top bits are 0)
        return None
    if p.gauss:
        dec = None
        if p.floats_ok:
            a, s64, c_L, i2s_L = p.a, p.s64, p.c_L, p.i2s_L
            m_c = n + (R >> (a - lazy - s64)) * 2.0**-s64
            d_c = m_c - c_L
            err_d = (abs(m_c) + c_L) * EPS + TINY
            tw = 2.0**-s64 if a > 64 else 0.0
            d_lo, d_hi = d_c - err_d, d_c + err_d + tw
            sq_lo = d_lo * d_lo if d_lo > 0 else d_hi * d_hi if d_hi < 0 else 0.0
            sq_hi = max(d_lo * d_lo, d_hi * d_hi)
            q_lo = _exp(-sq_hi * i2s_L * (1 + EPS)) * (1 - EPS) - TINY
            q_hi = _exp(-sq_lo * i2s_L * (1 - EPS)) * (1 + EPS) + TINY
            if p.v_in_w0:  # _v_prefix and _cert_below, written out
                vw, vf = 2.0**-31, ((w0 >> 1) & 0x7FFFFFFF) * 2.0**-31
            else:
                vw, vf = 2.0**-64, w2 * 2.0**-64
            q_c, q_err = (q_lo + q_hi) / 2, (q_hi - q_lo) / 2
            if vf + vw <= q_c - q_err - _band:
                dec = True
            elif vf >= q_c + q_err + _band:
                dec = False
        if dec is None:
            _counts["exact_lanes"] += 1
            if lazy:
                R, lazy = _reveal(R, lazy)
            d = (n << p.a) + R - p.center
            dec = _LazyU(*_v_prefix(p, w0, w2)).below_exp(d * d / p.two_sigma2)
        if not dec:
            return None
    return neg, (n << (p.a - lazy)) + R, lazy


def _v_prefix(p: _Plan, w0: int, w2: int) -> tuple[int, int]:
    """V's revealed bits: W's 31-bit slot of w0 when a = 0 (W unused), else all of w2."""
    return ((w0 >> 1) & 0x7FFFFFFF, 31) if p.v_in_w0 else (w2, 64)


def _full_R(p: _Plan, w1: int) -> int:
    """R from its first 64 revealed bits ``w1`` (plus fresh bits when a > 64)."""
    if p.a == 0:
        return 0
    if p.a <= 64:
        return w1 >> (64 - p.a)
    return (w1 << (p.a - 64)) | sample_uniform_bits(p.a - 64)


class _Pool:
    """Attempt-sized slices of one bulk :func:`fill_bytes` read (refilled when used up).

    Attempts are iid whichever read their bytes come from, so pooling changes no law.
    """

    __slots__ = ("buf", "pos")

    def __init__(self, nbytes: int) -> None:
        self.buf, self.pos = fill_bytes(nbytes), 0

    def take(self, n: int) -> bytes:
        pos = self.pos
        if pos + n > len(self.buf):
            self.buf, pos = fill_bytes(max(n, len(self.buf))), 0
        self.pos = pos + n
        return self.buf[pos : pos + n]


def _attempt_bytes(a: int, floats_ok: bool, v_word: bool) -> tuple[int, int, int, int, int, int]:
    """(lazy, nr, nbytes, r_shift, r_mask, w2_shift) of a scalar attempt: R's unrevealed low
    bits, R's bytes, all bytes, and how :func:`_scalar_draw` reads the fields from the
    attempt's bytes taken as one little-endian int: bytes 0-7 are w0, the next nr bytes hold
    R (their top a − lazy bits: mask, then shift right), the rest are w2."""
    lazy = a - 64 if floats_ok and a > 64 else 0
    nr = (a - lazy + 7) // 8
    r_mask = (1 << (8 * nr)) - 1 if a else 0
    return lazy, nr, 8 + nr + (8 if v_word else 0), 8 * nr - a + lazy, r_mask, 64 + 8 * nr


def _scalar_draw(p: _Plan, pool: _Pool | None = None) -> tuple[int, int, int]:
    """One exact draw (negative, M_top, lazy) of the plan's law: Z = ±(M_top·2^lazy + tail).

    The ``lazy`` low bits of R (a > 64 on the float path) are not drawn: every decision
    was certified for all of their values, so they are uniform and independent (lemma S4).
    """
    # one int of the attempt's bytes: the same fields as slicing them (see _attempt_bytes)
    lazy, _, nbytes, r_shift, r_mask, w2_shift = p.scalar_bytes
    counts = _counts
    while True:
        counts["attempts"] += 1
        word = int.from_bytes(fill_bytes(nbytes) if pool is None else pool.take(nbytes), "little")
        w0 = word & 0xFFFFFFFFFFFFFFFF
        R = ((word >> 64) & r_mask) >> r_shift
        w2 = word >> w2_shift
        if p.floats_ok:
            z = _attempt(p, w0, R, w2, lazy)
            if z is not None:
                return z
        else:
            neg, u, w, v = _wide_prefixes(p, w0, w2)
            zz = _attempt_exact(p, neg, u, w, R, v)
            if zz is not None:
                return int(zz < 0), abs(zz), 0


def _scalar_z(p: _Plan, pool: _Pool | None = None) -> int:
    """One exact draw of Z ~ 𝓛_ℤ(T) or 𝓝_ℤ(σ) (the plan's law), scalar path."""
    return _z_from(_scalar_draw(p, pool))


def _z_from(d: tuple[int, int, int]) -> int:
    """Z = ±(M_top·2^lazy + tail) of a draw (negative, M_top, lazy), revealing the tail."""
    neg, m, lazy = d
    if lazy:
        m = (m << lazy) | sample_uniform_bits(lazy)
    return -m if neg else m


#: Reservoir batch sizes: a plan's first refill draws _RES_FIRST attempts, each later one
#: twice the last, up to _RES_MAX (about 0.2 MB per plan; plans are cached, at most 256).
_RES_FIRST, _RES_MAX = 32, 2048


def _draw(p: _Plan) -> tuple[int, int, int]:
    """One accepted attempt (negative, M_top, lazy) of the plan's law, as :func:`_scalar_draw`
    returns it: from the plan's reservoir when it holds one drawn in the current randomness
    epoch, else via :func:`_refill` (lemma S5)."""
    r = p.reservoir
    if r.epoch == EPOCH[0]:
        try:
            return r.items.pop()
        except IndexError:
            pass
    return _refill(p, r)


def _refill(p: _Plan, r: _Reservoir) -> tuple[int, int, int]:
    """A draw when the reservoir is empty or stale: the first release of a plan in an epoch
    (and every release of a plan without the vector path) draws only its own attempt; later
    ones refill the reservoir with a batch of the vector path's accepted attempts."""
    epoch = EPOCH[0]
    if r.epoch != epoch:  # stale: drop what was drawn before (and restart the sizes)
        r.items, r.calls, r.size = [], 0, 0
        r.epoch = epoch
    r.calls += 1
    if r.calls < 2 or not p.floats_ok:
        return _scalar_draw(p)
    r.size = min(_RES_MAX, max(_RES_FIRST, 2 * r.size))
    items = _batch_draws(p, r.size)
    out = items.pop()
    if EPOCH[0] == epoch:  # else the epoch moved on while drawing: keep nothing
        r.items = items
    return out


def _batch_draws(p: _Plan, n: int) -> list[tuple[int, int, int]]:
    """The first n accepted attempts of the vector path as draws (negative, M_top, lazy),
    reversed (``pop`` returns them in draw order).  M = N·2^a + R with R's first s64 bits
    known: M_top = N·2^s64 + R_top and lazy = a − s64 unrevealed low bits, which every
    decision was certified for (as on the scalar path); exactly resolved lanes have lazy = 0.
    """
    acc = _accepted(p, n)
    lazy, s64 = p.a - p.s64, p.s64
    negs = (acc.sign < 0).view(np.uint8).tolist()
    items: list[tuple[int, int, int]]
    with np.errstate(invalid="ignore"):  # exact-path positions hold junk; replaced below
        if p.int_ok and not lazy:  # M = N·2^a + R < 2^61 (N < 2^20, T < 2^40): int64 math
            mags = ((acc.N.astype(np.int64) << s64) + acc.Rtop.astype(np.int64)).tolist()
            items = list(zip(negs, mags, repeat(0)))
        else:
            ns = acc.N.astype(np.int64).tolist()
            rs = acc.Rtop.tolist()
            items = [(g, (q << s64) + r, lazy) for g, q, r in zip(negs, ns, rs, strict=True)]
    for pos, z in zip(acc.exact_pos, acc.exact_z, strict=True):
        items[pos] = (int(z < 0), abs(z), 0)
    items.reverse()
    return items


def _scalar_float_x(p: _Plan, x: float, k: int, T: str, pool: _Pool | None = None) -> float:
    """:func:`_float_x` of one scalar attempt drawn from ``pool`` (or per attempt)."""
    return _float_x(_scalar_draw(p, pool), x, k, T)


def _float_x(d: tuple[int, int, int], x: float, k: int, T: str) -> float:
    """sat_T(round_T(2^k·(round_k(x) + Z))) for the draw d = (negative, M_top, lazy) of Z: the
    grid index of x computed only if the cheap rounding test cannot use x directly."""
    neg, m, lazy = d
    if lazy and T == "f64":
        num, den = x.as_integer_ratio()
        e = k + lazy
        sh = 1 - e - den.bit_length()
        if sh >= 0:  # x·2^−(k+lazy) = Jh, an integer: J = Jh·2^lazy (x is on the 2^k grid)
            # _round_lazy_f64(Jh ± m, neg, e), written out: Y = Jh ± m, and the end Y ± 1/2
            # (as 2Y ± 1, halved exactly) must round to the same float as Y
            if neg:
                Y = (num << sh) - m
                Y2 = 2 * Y - 1
            else:
                Y = (num << sh) + m
                Y2 = 2 * Y + 1
            b = Y.bit_length()
            if 55 <= b <= 1022 and b + e <= 1023:
                c = float(Y)
                if c == float(Y2) * 0.5:
                    return _ldexp(c, e)
    return _float_out(neg, m, lazy, _grid_index(x, k, T), k, T)


def _float_out(neg: int, m: int, lazy: int, J: int, k: int, T: str) -> float:
    """sat_T(round_T(2^k·(J ± (m·2^lazy + tail)))), revealing the tail only if it matters.

    J + Z ranges over the 2^lazy consecutive integers between J ± m·2^lazy and
    J ± (m·2^lazy + 2^lazy − 1); round_T and sat_T are monotone, so if both ends give the same
    float every value between does (lemma S4).
    """
    if lazy:
        if T == "f64":
            Jh = J >> lazy
            if Jh << lazy == J:  # J on the 2^lazy grid: J + Z = (Jh ± m)·2^lazy ± tail
                y = _round_lazy_f64(Jh - m if neg else Jh + m, neg, lazy + k)
                if y is not None:
                    return y
        base = m << lazy
        ends = (
            (J - base, J - base - (1 << lazy) + 1)
            if neg
            else (J + base, J + base + (1 << lazy) - 1)
        )
        first = _round_out(ends[0], k, T)
        if first == _round_out(ends[1], k, T) and (first != 0.0 or ends[0] == ends[1]):
            return first
        m = base | sample_uniform_bits(lazy)
    return _round_out(J - m if neg else J + m, k, T)


def _round_lazy_f64(Y: int, neg: int, e: int) -> float | None:
    """round_f64((Y + f)·2^e) (or (Y − f)·2^e if ``neg``) if it is the same float for every
    f ∈ [0, 1), else None (the caller then decides by the two ends, or reveals the tail).

    Certified without any division (lemma S4, division-free form): when |Y| ≥ 2^54, every
    float and every midpoint between neighbouring floats at magnitude ≥ 2^53 is an integer,
    so the open interval (Y, Y ± 1) holds none and rounds like its midpoint Y ± 1/2; f = 0
    rounds like Y.  Both are correctly rounded int → float conversions (CPython rounds
    int → float to nearest, ties to even), scaled by 2^e exactly as the results are normal
    (|Y|·2^e ≥ 2^(54+e) ≥ 2^-1020) and finite (|Y ± 1/2|·2^e < 2^(b+e) ≤ 2^1023).
    """
    b = Y.bit_length()
    if b < 55 or b > 1022 or b + e > 1023:
        return None
    c = math.ldexp(float(Y), e)
    if c != math.ldexp(float(2 * Y - 1 if neg else 2 * Y + 1), e - 1):
        return None
    return c


def _exact_magnitude(p: _Plan, neg: int, u: tuple[int, int], R: int) -> int | None:
    """``M = N·2^a + R`` with N drawn exactly from the lazy word ``u`` (None: the rejected -0).

    The float hint only says where the exact search for N starts; any start gives the same N.
    """
    hint = 0
    if p.floats_ok and u[0]:
        hint = int(min(-math.log(u[0] * 2.0 ** -u[1]) * p.beta, _N_MAX))
    n = _geometric(_LazyU(*u), p.lam, hint)
    M = (n << p.a) + R
    return None if neg and M == 0 else M


def _attempt_exact(
    p: _Plan, neg: int, u: tuple[int, int], w: tuple[int, int], R: int, v: tuple[int, int]
) -> int | None:
    """The attempt of lemma S1, exactly, from revealed prefixes (bits, count) of U, W, V.

    No float shortcut: every comparison is decided by :meth:`_LazyU.below_exp`.
    """
    _counts["exact_lanes"] += 1
    if R and not _LazyU(*w).below_exp(R * p.inv_T):
        return None
    M = _exact_magnitude(p, neg, u, R)
    if M is None:
        return None
    if p.gauss:
        d = M - p.center
        if not _LazyU(*v).below_exp(d * d / p.two_sigma2):
            return None
    return -M if neg else M


def _wide_prefixes(
    p: _Plan, w0: int, w2: int
) -> tuple[int, tuple[int, int], tuple[int, int], tuple[int, int]]:
    """(sign, U, W, V) of the wide layout: w0 = [U:32][W:31][S:1], V = w2 (or W's slot)."""
    return w0 & 1, (w0 >> 32, 32), ((w0 >> 1) & 0x7FFFFFFF, 31), _v_prefix(p, w0, w2)


# ---------------------------------------------------------------------------------------
# Exact rounding helpers (the law of the output is defined by noise_ref's helpers).


def _grid_index(x: float, k: int, T: str) -> int:
    """round_k(x)/2^k as an exact integer (fast when every T float is on the 2^k grid)."""
    num, den = x.as_integer_ratio()
    shift = -k - (den.bit_length() - 1)
    if shift >= 0:
        return num << shift
    return int(round_to_grid(x, k))


def _round_out(J: int, k: int, T: str) -> float:
    """sat_T(round_T(J·2^k)), exactly (int true division is correctly rounded in CPython)."""
    if T == "f64":
        try:
            return J / (1 << -k) if k < 0 else float(J << k)
        except OverflowError:
            return _MAXF["f64"] if J > 0 else -_MAXF["f64"]
    return _round_int_f32(J, k)


def _round_int_f32(J: int, k: int) -> float:
    """sat_f32(round_f32(J·2^k)) in integer arithmetic: the same float as
    ``noise_ref.round_to_float(J·2^k, "f32")`` (nearest, ties to even, subnormals at 2^−149,
    ±max finite beyond the range), without a gmpy2 context.

    The f32 result keeps the top 24 bits of |J| (fewer below 2^−126: the lowest kept bit is
    never under 2^−149); the dropped bits are rounded half to even as an integer, and the kept
    integer q (at most 2^24) times a power of two is exact in f64, so ``ldexp`` adds no rounding.
    """
    a = -J if J < 0 else J
    shift = a.bit_length() - 24
    if shift < -149 - k:
        shift = -149 - k
    if shift > 0:
        q = a >> shift
        r = a - (q << shift)
        half = 1 << (shift - 1)
        if r > half or (r == half and q & 1):
            q += 1
        e = k + shift
    else:
        q, e = a, k
    try:
        y = _ldexp(float(q), e)
    except OverflowError:
        y = math.inf
    if y > _MAXF["f32"]:
        y = _MAXF["f32"]
    return -y if J < 0 else y


# ---------------------------------------------------------------------------------------
# Scalar entry points.


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

    def draw(x: float) -> float:
        x = float(x)
        if not isfinite(x):
            raise refuse(f"x must be finite, got {x!r}")
        return _float_x(_draw(p), x, k, T)

    return draw


# ---------------------------------------------------------------------------------------
# The vectorised fast path.


@dataclass
class _Lanes:
    """Partial results of m attempts (arrays of length m)."""

    w0: U64
    w1: U64
    w2: U64  # unused by the vector layouts (zeros)
    accept: BoolA  # certified accepted
    undecided: BoolA  # certified neither way: exact path
    sign: F64  # ±1.0
    N: F64  # ⌊−ln(U)·β⌋ where certified (an exact integer < 2^20 as a float)
    Rtop: U64  # the first s64 bits of R


def _draw_attempts(p: _Plan, m: int) -> _Lanes:
    """Draw m attempts and decide each with certified float64 bounds where possible.

    Every bound below is the exact quantity widened by its error budget (lemma S6).
    """
    _counts["attempts"] += m
    merged = _merged(p)  # wide Gaussian with a > 0: one test W < e^{−R/T−γ} (lemma S1)
    # one read per word row (w0, then R's w1 if a > 0): a single read of all words would exceed
    # malloc's mmap threshold (~128 KiB) and page-fault on every chunk; the bytes are iid either
    # way.  V never has its own word here: in W's slot (a = 0), in w1 (layout 2), or merged.
    w0 = fill_uint64(m)
    w1 = fill_uint64(m) if p.a > 0 and p.layout != 1 else _zeros64(m)
    w2 = _zeros64(m)  # unused by the vector layouts
    band = _band
    sbits = w0 & np.uint64(1)  # S = 1: negative; ±1.0 built from its bits (exact)
    sbits <<= np.uint64(63)
    sbits |= np.uint64(0x3FF0000000000000)
    sign: F64 = sbits.view(np.float64)
    if p.layout == 1:  # w0 = [U:24][W:24][R:15][S:1]
        ub, ww = 24, 2.0**-24
        u = (w0 >> 40).astype(np.float64)
        wv = ((w0 >> 16) & 0xFFFFFF).astype(np.float64) * ww
    else:  # w0 = [U:32][W:31][S:1]
        ub, ww = 32, 2.0**-31
        u = _high32(w0)
        wv = (w0 & 0xFFFFFFFE).astype(np.float64) * 2.0**-32  # W's (or V's) first 31 bits

    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # N = ⌊f⌋, f = −ln(U)·β, U ∈ [u, u + 1)·2^-ub: f ∈ [f_c − m_lo, f_c + m_hi] where
        # m_hi = f_c·EPS + TINY + band ≤ k_hi (as f_c < 2^20), m_lo = m_hi + β(1+EPS)/u
        f_c = np.log(u * 2.0**-ub) * -p.beta
        N = np.floor(f_c)
        frac = f_c - N
        k_hi = 2.0**-24 + TINY + band
        # frac ≥ k_hi + β(1+EPS)/u, tested as (frac − k_hi)·u ≥ β(1+EPS)(1+2^-50) (no division)
        gap = frac - k_hi
        gap *= u
        okN = gap >= p.beta * (1 + EPS) * (1 + 2.0**-50)
        okN &= frac < 1.0 - k_hi
        if p.beta * (ub * 0.7) >= _N_MAX:  # else f_c ≤ −ln(2^-ub)·β < _N_MAX for every u ≥ 1
            okN &= f_c < _N_MAX

    accept = okN
    if p.a > 0:
        # R accepted iff W < exp(−R/T): exp(−R/T) ∈ [e_c − e_lo, e_c + e_hi]
        Rtop: U64
        if p.layout == 1:
            Rtop = ((w0 >> 1) & ((1 << p.a) - 1)).astype(np.uint64, copy=False)
        else:
            Rtop = w1 if p.s64 == 64 else w1 >> np.uint64(64 - p.s64)
        Rf = Rtop.astype(np.float64)
        tail = p.rcoef if p.a > 64 else 0.0
        vmax = p.rcoef * 2.0**p.s64 * (1 + 2.0**-40)  # ≥ L/T ≥ R/T
        if merged:  # W's test is the Gaussian one below
            accept = accept.copy()
            reject = np.zeros(m, np.bool_)
        elif vmax <= 2.0**-7:
            # no exp: 1 − v ≤ e^{−v} ≤ 1 − v + v²/2 ≤ 1 − v·(1 − vmax/2) for 0 ≤ v ≤ vmax, with
            # v = R/T ∈ [Rf·rcoef·(1 − 4EPS), Rf·rcoef·(1 + 4EPS) + tail] (lemma S6, step 2)
            thr = Rf * (p.rcoef * (1 + 4 * EPS))
            np.subtract(1.0 - ww - tail - 2.0**-48 - band, thr, out=thr)
            accept = accept & (wv <= thr)
            thr = Rf * (p.rcoef * (1 - 4 * EPS) * (1 - vmax / 2))
            np.subtract(1.0 + 2.0**-48 + band, thr, out=thr)
            reject = wv >= thr
        else:
            e_c = np.exp(Rf * -p.rcoef)
            e_hi = (1.0 + 1.0) * EPS + TINY + band  # e_c ≤ 1 and |v_c| ≤ 1
            accept = accept & (wv <= e_c - (e_hi + tail + ww))
            reject = wv >= e_c + e_hi
        if p.a <= 64:  # R = Rtop exactly: (negative, M = 0) decided here
            reject |= okN & (N == 0) & (Rf == 0) & (sign < 0)
            accept &= (Rf > 0) | (N > 0) | (sign > 0)
        else:  # R_top = 0 (Pr 2^-64): M = 0 is possible, left to the exact path
            accept &= Rf > 0
    else:
        Rtop = _zeros64(m)
        Rf = N  # unused (a = 0)
        reject = okN & (N == 0) & (sign < 0)
        accept = accept & ((N > 0) | (sign > 0))

    if p.gauss:
        # V < exp(−γ), γ = d²·I, I = L²/(2σ²), d = M/L − c/L, M/L = N + Rtop·2^-s64 (+ tail
        # < 2^-s64): |d − d_c| ≤ E_d(N) = (N + 1 + c_L)·EPS + TINY [+ 2^-s64] (this lane's N),
        # and N + 1 + c_L ≤ ad(1 + 2^-52) + 2·c_L + 1 with ad = |d_c|, so |d| ∈ [max(ad − E, 0),
        # ad + E] with E = 2·EPS·ad + K/2 (lemma S6); exp being monotone, e^{−γ} ∈ [q_lo, q_hi]
        m_c = N + Rf * 2.0**-p.s64 if p.a > 0 else N + 0.0
        m_c -= p.c_L
        ad = np.abs(m_c, out=m_c)
        # √γ ∈ [t_lo, t_hi] = [max(ad·a2 − K2, 0), ad·a1 + K1] with a1, a2, K1, K2 = (1 ± 2EPS)·√I,
        # K·√I widened by (1 ± 2^-40), which covers √I's and these operations' roundings
        K = 2.0 * ((2.0 * p.c_L + 2.0) * EPS + TINY + (2.0**-p.s64 if p.a > 64 else 0.0))
        rI = math.sqrt(p.i2s_L)
        K1 = K * rI * (1 + 2.0**-40)
        t_hi = ad * (rI * (1 + 2 * EPS) * (1 + 2.0**-40))
        t_hi += K1
        t_hi *= t_hi
        t_lo = ad
        t_lo *= rI * (1 - 2 * EPS) * (1 - 2.0**-40)
        t_lo -= K1
        np.maximum(t_lo, 0.0, out=t_lo)
        t_lo *= t_lo
        # e^{−γ} ∈ [q_lo, q_hi]: exp's error (≤ 2^-46 relative) is covered by the shift 2^-44
        # of the exponent (lemma S6)
        if merged:  # the exponent also holds v = R/T ∈ [Rf·c₂, Rf·c₁ + tail] (lemma S6)
            t_hi += Rf * (p.rcoef * (1 + 4 * EPS))
            t_lo += Rf * (p.rcoef * (1 - 4 * EPS))
            np.subtract(-(2.0**-44) - (p.rcoef if p.a > 64 else 0.0), t_hi, out=t_hi)
        else:
            np.subtract(-(2.0**-44), t_hi, out=t_hi)
        q_lo = np.exp(t_hi, out=t_hi)
        np.subtract(2.0**-44, t_lo, out=t_lo)
        q_hi = np.exp(t_lo, out=t_lo)
        if band:
            q_lo -= band
            q_hi += band
        if p.layout == 2:  # V's first 32 bits: w1's low half
            vv, vw = (w1 & 0xFFFFFFFF).astype(np.float64) * 2.0**-32, 2.0**-32
        else:  # W's slot: V itself (a = 0, W unused) or W of the merged test
            vv, vw = wv, 2.0**-31
        q_lo -= vw
        accept &= vv <= q_lo
        reject |= okN & (vv > q_hi)  # strict: q_hi may have underflowed to 0 (lemma S6)
    accept &= ~reject
    undecided = ~(accept | reject)
    return _Lanes(w0, w1, w2, accept, undecided, sign, N, Rtop)


def _zeros64(m: int) -> U64:
    return np.zeros(m, np.uint64)


def _exact_lane(p: _Plan, lanes: _Lanes, i: int) -> int | None:
    """The exact path for lane ``i``, continuing from its bits (decoded per ``p.layout``)."""
    w0, w1, w2 = int(lanes.w0[i]), int(lanes.w1[i]), int(lanes.w2[i])
    if p.layout == 1:  # w0 = [U:24][W:24][R:15][S:1]
        u, w = (w0 >> 40, 24), ((w0 >> 16) & 0xFFFFFF, 24)
        R = (w0 >> 1) & ((1 << p.a) - 1)
        return _attempt_exact(p, w0 & 1, u, w, R, (0, 0))
    if p.layout == 2:  # w0 = [U:32][W:31][S:1], w1 = [R: top a bits] … [V: low 32 bits]
        u, w = (w0 >> 32, 32), ((w0 >> 1) & 0x7FFFFFFF, 31)
        return _attempt_exact(p, w0 & 1, u, w, w1 >> (64 - p.a), (w1 & 0xFFFFFFFF, 32))
    neg, u, w, v = _wide_prefixes(p, w0, w2)
    if _merged(p):
        return _attempt_exact_merged(p, neg, u, w, _full_R(p, w1))
    return _attempt_exact(p, neg, u, w, _full_R(p, w1), v)  # V only in W's slot here (a = 0)


def _merged(p: _Plan) -> bool:
    """Whether the vector path tests W < exp(−R/T − γ) once (wide Gaussian layout, a > 0)."""
    return p.gauss and p.layout == 0 and p.a > 0


def _attempt_exact_merged(
    p: _Plan, neg: int, u: tuple[int, int], w: tuple[int, int], R: int
) -> int | None:
    """The vector Gaussian attempt with steps 2 and 4 merged, exactly (lemma S1): accept iff
    W < exp(−R/T − (M − σ²/t)²/(2σ²)), which has the probability of passing both tests."""
    _counts["exact_lanes"] += 1
    M = _exact_magnitude(p, neg, u, R)
    if M is None:
        return None
    d = M - p.center
    if not _LazyU(*w).below_exp(R * p.inv_T + d * d / p.two_sigma2):
        return None
    return -M if neg else M


def _accepted_lane(p: _Plan, acc: _Accepted, i: int) -> int:
    """Z for accepted lane ``i`` whose acceptance was certified for every completion of R."""
    R = int(acc.Rtop[i]) if p.a <= 64 else _full_R(p, int(acc.w1[i]))
    M = (int(acc.N[i]) << p.a) + R
    return M if acc.sign[i] > 0 else -M


@dataclass
class _Accepted:
    """``need`` accepted attempts, in the order they were drawn."""

    sign: F64
    N: F64
    Rtop: U64
    w1: U64
    exact_pos: list[int]  # positions resolved on the exact path (sign/N/Rtop there are junk)
    exact_z: list[int]


def _accepted(p: _Plan, need: int) -> _Accepted:
    """The first ``need`` accepted attempts of a stream of independent attempts.

    Attempts are drawn in batches sized from the estimated acceptance rate (usually one
    batch suffices; sizes depend only on the plan and this call's bits, so a scripted
    stream reproduces the output).  Acceptance is decided per attempt (fast or exact
    path) and the first ``need`` accepted ones are kept in draw order.  The k-th accepted
    attempt of an iid stream has the target law, independently of the others (rejection
    sampling), whatever the batch sizes; surplus attempts are discarded by position only.
    """
    if need <= 0:
        empty = np.zeros(0)
        return _Accepted(empty, empty, _zeros64(0), _zeros64(0), [], [])
    parts: list[tuple[F64, F64, U64, U64]] = []
    exact_pos: list[int] = []
    exact_z: list[int] = []
    got = 0
    rate = p.rate
    while got < need:
        left = need - got
        # enough attempts for `left` acceptances unless the count falls > 4 sd short (a
        # second, smaller batch then follows); sizes never change the law (lemma S2)
        m = int((left + 4.0 * math.sqrt(left * (1.0 - rate)) + 8.0) / rate) + 8
        lanes = _draw_attempts(p, m)
        good = lanes.accept
        resolved: dict[int, int] = {}
        for i in np.flatnonzero(lanes.undecided).tolist():
            z = _exact_lane(p, lanes, i)
            if z is not None:
                if good is lanes.accept:
                    good = good.copy()
                good[i] = True
                resolved[i] = z
        pos = np.flatnonzero(good)
        rate = max(0.01, min(rate, len(pos) / m))  # a function of this call's bits only
        sel = pos[:left]
        Rtop = lanes.Rtop[sel]
        w1 = Rtop if lanes.Rtop is lanes.w1 else lanes.w1[sel]  # one gather when they coincide
        parts.append((lanes.sign[sel], lanes.N[sel], Rtop, w1))
        if resolved:
            for q, i in enumerate(sel.tolist()):
                if i in resolved:
                    exact_pos.append(got + q)
                    exact_z.append(resolved[i])
        got += len(sel)
    if len(parts) == 1:
        sign, N, Rtop, w1 = parts[0]
    else:
        sign, N, Rtop, w1 = (np.concatenate([q[c] for q in parts]) for c in range(4))
    return _Accepted(sign, N, Rtop, w1, exact_pos, exact_z)


def _z_vector(p: _Plan, n: int) -> npt.NDArray[Any]:
    """n iid draws of the plan's integer law (int64 when ``p.int_ok``, else object)."""
    if not p.int_ok:
        return np.array([_scalar_z(p) for _ in range(n)], dtype=object)
    out = np.empty(n, np.int64)
    for start in range(0, n, CHUNK):
        acc = _accepted(p, min(n, start + CHUNK) - start)
        with np.errstate(invalid="ignore"):  # exact-path positions hold junk; replaced below
            mag = (acc.N.astype(np.int64) << p.a) + acc.Rtop.astype(np.int64)
        z = np.where(acc.sign < 0, -mag, mag)
        z[acc.exact_pos] = acc.exact_z
        out[start : start + len(z)] = z
    return out


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


def _take(p: _Plan, n: int) -> list[tuple[int, int, int]]:
    """n draws, each as :func:`_draw` gives it (popped one by one: each handed out once)."""
    r = p.reservoir
    items = r.items
    if r.epoch == EPOCH[0] and len(items) >= n:
        pop = items.pop
        try:
            return [pop() for _ in range(n)]
        except IndexError:  # another thread emptied it meanwhile: the draws popped here are
            pass  # dropped (by a race, never by their values) and _draw takes fresh ones
    return [_draw(p) for _ in range(n)]


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


def _small_pool(p: _Plan, n: int) -> _Pool:
    """One byte read sized for the attempts that n lanes expect (sizes only, never the law)."""
    return _Pool(p.scalar_bytes[2] * int(n / p.rate * 1.25 + 2))


def _gradual_underflow() -> bool:
    """Whether numpy float64 arithmetic keeps subnormals (no flush-to-zero), as lemma S6 assumes."""
    tiny = np.array([2.0**-1060]) * 2.0**-10
    return bool(tiny[0] == 2.0**-1070 and (tiny + tiny)[0] == 2.0**-1069)


_LITTLE = np.little_endian


def _halves(w: U64) -> tuple[F64, F64]:
    """(w >> 32, w & (2^32 − 1)) as float64 (exact: each is an integer < 2^32)."""
    if _LITTLE and w.flags.c_contiguous:  # read the two 32-bit halves in place
        h = w.view(np.uint32)
        return h[1::2].astype(np.float64), h[0::2].astype(np.float64)
    return (w >> np.uint64(32)).astype(np.float64), (w & np.uint64(0xFFFFFFFF)).astype(np.float64)


def _high32(w: U64) -> F64:
    """w >> 32 as float64."""
    if _LITTLE and w.flags.c_contiguous:
        return w.view(np.uint32)[1::2].astype(np.float64)
    return (w >> np.uint64(32)).astype(np.float64)


def _float_chunk(
    p: _Plan, x: F64, k: int, T: str, e_r: int, on_grid: bool, out: npt.NDArray[Any]
) -> None:
    """Fill ``out`` (a view) with the noisy, rounded values of the chunk ``x``."""
    if on_grid:
        r = x
    else:
        # round_k: ⌊x/2^k + 1/2⌋·2^k (noise_ref's tie rule), exactly: v − ⌊v⌋ is exact
        with np.errstate(over="ignore", invalid="ignore"):
            v = np.ldexp(x, -k)
            n = np.floor(v)
            r = np.ldexp(n + (v - n >= 0.5), k)  # exact, or non-finite → exact path
    tw = 2.0**e_r if p.a > 64 else 0.0
    cN = 2.0 ** (k + p.a)
    # C ≥ 2^-1072 + tw (δ_t's absolute part and the unrevealed tail of R; lemma S7)
    C = max(2.0**-1070, 2.0 * tw)
    acc = _accepted(p, len(x))
    sg, N, Rtop = acc.sign, acc.N, acc.Rtop
    with np.errstate(over="ignore", invalid="ignore"):
        # |noise| = 2^e_r·(N·2^s64 + Rtop) [+ tail ∈ [0, 2^e_r) if a > 64] = Dh + Dl, both exact
        if p.s64 >= 32:
            Rh, Rl = _halves(Rtop)
            Dh = N * cN
            Dh += Rh * (2.0 ** (e_r + 32))
            Dl = Rl
            Dl *= sg * (2.0**e_r)
        else:
            Dh = N * cN
            Dh += Rtop.astype(np.float64) * (2.0**e_r)
            Dl = None
        # r + sg·Dh = s1 + e1 exactly (TwoSum); t = fl(e1 + sg·Dl), |δ_t| ≤ |t|·2^-53 + 2^-1075
        b = Dh
        b *= sg
        s1 = r + b
        bb = s1 - r
        e1 = s1 - bb
        np.subtract(r, e1, out=e1)
        np.subtract(b, bb, out=bb)
        e1 += bb
        t = e1
        if Dl is not None:
            t += Dl
        # the exact y lies in [s1 + (t − m), s1 + (t + m)] (real sums), m ≥ |δ_t| + tail;
        # round-to-nearest is monotone, so if both ends round to the same float, so does y
        m = np.abs(t)
        m *= 2.0**-50
        m += C
        if _band:  # test mode: widen by band·(|s1| + |t|)·2^-49 (several ulps of s1)
            m += (np.abs(s1) + np.abs(t)) * (_band * 2.0**-49)
        lo = t - m
        t += m
        lo += s1
        t += s1
        c, hi = lo, t  # fl(s1 + lo), fl(s1 + hi): the two ends, rounded to f64
        if T == "f32":
            # RN64 may round an end inwards: step one f64 outwards, then round to f32 (monotone)
            c = np.nextafter(c, -np.inf).astype(np.float32)
            hi = np.nextafter(hi, np.inf).astype(np.float32)
        # ok iff the ends agree and are finite (∞ − ∞ is NaN; NaN never certifies)
        ok = (hi - c) == 0
        if T == "f32":  # and agree on the sign of zero (f64 ends are never both zero)
            ok &= np.signbit(c) == np.signbit(hi)
    ok[acc.exact_pos] = False
    out[...] = c  # uncertified lanes are overwritten below
    exact = dict(zip(acc.exact_pos, acc.exact_z, strict=True))
    for i in np.flatnonzero(~ok).tolist():
        _counts["exact_lanes"] += 1
        z = exact[i] if i in exact else _accepted_lane(p, acc, i)
        out[i] = _round_out(_grid_index(float(x[i]), k, T) + z, k, T)
