"""Exact output rounding of the certified samplers (lemma S4 and its lazy tail).

The law of the output is defined by :mod:`..noise_ref`'s helpers: sat_T(round_T(2^k·(J + Z)));
these compute it exactly in integer arithmetic, revealing R's unrevealed low bits only when
they can change the float.
"""

from __future__ import annotations

import math
import struct

from ..noise_ref import round_to_grid
from ..uniform import sample_uniform_bits
from .plan import _MAXF

_ldexp = math.ldexp
# the two ends of a span cast together: one pack and one unpack (the same C casts as "f" twice)
_F32X2_PACK = struct.Struct("ff").pack
_F32X2_UNPACK = struct.Struct("ff").unpack
_INF = math.inf
_NINF = -math.inf


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
    elif T == "f32":
        return _float_x_f32(d, x, k)
    return _float_out(neg, m, lazy, _grid_index(x, k, T), k, T)


def _float_x_f32(d: tuple[int, int, int], x: float, k: int) -> float:
    """:func:`_float_x` for ``T = "f32"``, which a scalar release binds once (no carrier test
    per call)."""
    neg, m, lazy = d
    if lazy:
        num, den = x.as_integer_ratio()
        sh = -k - (den.bit_length() - 1)
        if sh >= 0:  # x on the 2^k grid: J = x·2^-k
            J = num << sh
            # _round_span_f32(lo, hi, k) on the span lo ≤ hi of J ± (m·2^lazy + tail), written
            # out (one call less per release); a span it does not certify goes to _float_out,
            # which runs the same test, then the two-ends rule, then reveals the tail
            if neg:
                hi = J - (m << lazy)
                lo = hi - (1 << lazy) + 1
            else:
                lo = J + (m << lazy)
                hi = lo + (1 << lazy) - 1
            if lo > 0 or hi < 0:
                s = (hi if hi > 0 else -lo).bit_length() - 40
                if s < 0:
                    s = 0
                e = s + k
                if -1000 <= e <= 900:
                    try:
                        c_lo: float
                        c_hi: float
                        c_lo, c_hi = _F32X2_UNPACK(
                            _F32X2_PACK(_ldexp(float(lo >> s), e), _ldexp(float((hi >> s) + 1), e))
                        )
                    except OverflowError:
                        c_lo, c_hi = 0.0, 1.0  # not certified
                    if c_lo == c_hi and c_lo != 0.0 and c_lo != _INF and c_lo != _NINF:
                        return c_lo
            return _float_out(neg, m, lazy, J, k, "f32")
    return _float_out(neg, m, lazy, _grid_index(x, k, "f32"), k, "f32")


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
        if T == "f32":
            y = _round_span_f32(ends[0], ends[1], k)
            if y is not None:
                return y
        first = _round_out(ends[0], k, T)
        if first == _round_out(ends[1], k, T) and (first != 0.0 or ends[0] == ends[1]):
            return first
        m = base | sample_uniform_bits(lazy)
    return _round_out(J - m if neg else J + m, k, T)


def _round_span_f32(a: int, b: int, k: int) -> float | None:
    """sat_f32(round_f32(v·2^k)) if it is the same nonzero float for every integer v between
    ``a`` and ``b`` (in either order), else None (the caller then rounds the two ends exactly).

    Certified on a wider span with cheap exact arithmetic (lemma S4, f32 form): with
    lo ≤ v ≤ hi the span and s = max(0, bits(|hi| or |lo|) − 40), the span lies inside
    [L·2^s, H·2^s] with L = ⌊lo/2^s⌋ and H = ⌊hi/2^s⌋ + 1, integers below 2^41 in magnitude.
    L·2^(s+k) and H·2^(s+k) are exact binary64 values (41 bits, a normal exponent), and the C
    cast to binary32 rounds each to nearest, ties to even (as round_f32).  round_f32 is
    monotone, so if both casts give the same finite nonzero float, every value of the span
    rounds to it, and sat_f32 leaves a finite float unchanged.  A span that reaches zero or
    the f32 overflow threshold, or whose scaled ends are not normal binary64 numbers, is left
    to the exact rounding.
    """
    lo, hi = (a, b) if a <= b else (b, a)
    if lo <= 0 <= hi:
        return None
    s = (hi if hi > 0 else -lo).bit_length() - 40
    if s < 0:
        s = 0
    e = s + k
    if not -1000 <= e <= 900:
        return None
    try:
        c_lo: float
        c_hi: float
        c_lo, c_hi = _F32X2_UNPACK(
            _F32X2_PACK(_ldexp(float(lo >> s), e), _ldexp(float((hi >> s) + 1), e))
        )
    except OverflowError:
        return None
    if c_lo != c_hi or c_lo == 0.0 or c_lo == _INF or c_lo == _NINF:
        return None
    return c_lo


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
