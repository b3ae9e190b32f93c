"""The vectorised path: numpy chunks of attempts decided by certified float64 bounds (lemma S6),
undecided lanes continued exactly (lemma S3), and the certified output rounding (lemma S7)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..rng import fill_uint64
from . import attempt as _state
from .attempt import (
    _attempt_exact,
    _attempt_exact_merged,
    _counts,
    _full_R,
    _merged,
    _wide_prefixes,
)
from .plan import _N_MAX, CHUNK, EPS, F64, TINY, U64, BoolA, _Plan
from .rounding import _grid_index, _round_out
from .scalar import _scalar_z


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
    band = _state._band
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
        if _state._band:  # test mode: widen by band·(|s1| + |t|)·2^-49 (several ulps of s1)
            m += (np.abs(s1) + np.abs(t)) * (_state._band * 2.0**-49)
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
