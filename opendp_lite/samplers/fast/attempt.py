"""One attempt of the certified samplers (lemma S1), and its exact continuation (lemma S3).

:func:`_attempt` decides each comparison of an attempt with a certified float64 bound first
and otherwise continues exactly from the same bits (:class:`_LazyU` reveals more of U, W, V);
:func:`_attempt_exact` and :func:`_attempt_exact_merged` decide every comparison exactly (the
vector path's undecided lanes, and plans whose floats are out of range).

The certification band (:func:`certification_margin`) and the counters
(:func:`fallback_counts`) live here, single objects read by every path of the package.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import gmpy2

from ..rng import bump_epoch, fill_bytes
from ..uniform import sample_uniform_bits
from .plan import _N_MAX, EPS, TINY, _Plan

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
    # R accepted iff W < exp(−R/T): the certified float test, else exactly from the same bits
    if R:
        a = p.a
        rcoef = p.rcoef
        v_c = (R >> (a - lazy - p.s64)) * rcoef
        tail = rcoef if a > 64 else 0.0
        e_c = _exp(-v_c)
        wf = ((w0 >> 1) & 0x7FFFFFFF) * 2.0**-31
        p_c = e_c - tail / 2
        err = e_c * EPS + v_c * EPS + tail + TINY
        cert = _cert_below(wf, 2.0**-31, p_c, err)
        if cert is False:
            return None
        if cert is None:
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
            if p.v_in_w0:  # V's revealed bits (_v_prefix, written out: a call costs 3% here)
                vw, vf = 2.0**-31, ((w0 >> 1) & 0x7FFFFFFF) * 2.0**-31
            else:
                vw, vf = 2.0**-64, w2 * 2.0**-64
            dec = _cert_below(vf, vw, (q_lo + q_hi) / 2, (q_hi - q_lo) / 2)
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
