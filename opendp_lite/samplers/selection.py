r"""Exact private selection: a certified vectorised race with an exact fallback on the same bits.

For scores s_1..s_n, a scale b > 0 and γ_i = (max s − s_i)/b ≥ 0 (exact rationals):

* ``noise="exponential"``: the ordered indices of the k largest s_i/b + E_i, E_i ~ Exp(1) i.i.d.
  (report-noisy-max with exponential noise; for k = 1 the law of permute-and-flip).
* ``noise="gumbel"``: the ordered indices of the k largest s_i/b + G_i, G_i ~ Gumbel(1) i.i.d.
  (for k = 1 the exponential mechanism Pr[i] ∝ exp(s_i/b); for k > 1 Plackett–Luce, the law
  of k exponential-mechanism draws without replacement).

Both are races on independent uniforms U_i ∈ (0, 1): E_i = −ln U_i and G_i = −ln(−ln U_i), so
the winners are the k smallest **keys**

    exponential:  K_i = γ_i + ln U_i          gumbel:  K_i = γ_i + ln(−ln U_i).

Each U_i is revealed lazily: 32 bits first (one ``fill_bytes`` call for all candidates), more
bits only if needed.  The fast path computes float64 intervals [kl_i, kh_i] ∋ K_i valid for
*every* completion of the revealed bits (error budget: lemma S8,
``docs/proofs/sampling/selection-race.md``); with H the k-th smallest kh, any i with kl_i > H
is beaten by k candidates and cannot be in the top k.  The remaining **contenders** (usually
exactly k) are ordered by the float intervals when these are disjoint, and otherwise by
:func:`race_exact` — MPFR intervals with directed rounding, refined by appending fresh bits to
the *same* U_i — so the output is always the exact ordered top-k of the keys.  Which path
decided never changes the output.

The reference samplers of the original implementation (``*_reference``: permute-and-flip,
rejection, peeling, the rational race) are kept for audits and two-sample tests.

>>> import numpy as np
>>> noisy_top_k(np.array([0, 5000, 3]), 1.0, 1, "exponential")
[1]
>>> sorted(noisy_top_k(np.array([0.0, 1e9, 2e9]), 1.0, 2, "gumbel"))
[1, 2]
"""

from __future__ import annotations

import itertools
import math
import struct
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from fractions import Fraction
from typing import Any, Literal

import gmpy2
import numpy as np
import numpy.typing as npt

from .._arith import exp_down, exp_up, q
from .bernoulli import sample_bernoulli_exp
from .rng import fill_bytes
from .uniform import sample_uniform_below, sample_uniform_bits

__all__ = [
    "Noise",
    "certification_margin",
    "exp_bounds_exact",
    "fallback_counts",
    "noisy_top_k",
    "noisy_top_k_reference",
    "race_exact",
    "reset_fallback_counts",
    "sample_exponential_mechanism",
    "sample_exponential_top_k",
    "sample_peeled_exponential_mechanism",
    "sample_permute_and_flip",
    "select_exact",
]

Noise = Literal["exponential", "gumbel"]
F64 = npt.NDArray[np.float64]
MoreBits = Callable[[int, int], int]

PREFIX_BITS = 32  # bits of each U_i revealed up front
STEP_BITS = 32  # bits appended per refinement of an undecided candidate
EPS = 2.0**-40  # relative error budget of every float64 key bound (lemma S8)
TINY = 2.0**-900  # absolute error budget (underflow)
CHUNK = 1 << 16  # candidates per block of float64 temporaries
SMALL = 32  # up to this many candidates, the same bounds in Python floats (less overhead)
_HUGE = 2.0**1020  # a lower bound on K_i when γ_i overflows float64 (lemma S8)

_band = 0.0
_counts = {"calls": 0, "candidates": 0, "contenders": 0, "exact_races": 0, "refinements": 0}


@contextmanager
def certification_margin(band: float) -> Iterator[None]:
    """Widen every float64 key interval by ``band`` on both sides (test mode, band ≥ 0).

    More candidates become contenders and fewer orders are certified, so the exact race
    decides more; the output (a function of the bits) and hence the law are unchanged.
    """
    global _band
    if not (0.0 <= band and math.isfinite(band)):
        raise ValueError(f"band must be finite and >= 0, got {band!r}")
    previous, _band = _band, float(band)
    try:
        yield
    finally:
        _band = previous


def fallback_counts() -> dict[str, int]:
    """Counters: calls, candidates, contenders, exact races run, refinements (appended bits)."""
    return dict(_counts)


def reset_fallback_counts() -> None:
    """Zero the counters of :func:`fallback_counts`."""
    for key in _counts:
        _counts[key] = 0


def _os_more(j: int, level: int) -> int:
    """``STEP_BITS`` fresh uniform bits for candidate ``j`` (from the OS CSPRNG)."""
    return int.from_bytes(fill_bytes(STEP_BITS // 8), "little")


# ----------------------------------------------------------------------------------------------
# Gaps d_i = max s − s_i: float64 (relative error <= 2^-52, or +inf) and exact


def _best(scores: npt.NDArray[Any], negate: bool) -> tuple[Any, Callable[[int], Any]]:
    """(best, exact): best = max s (min s if ``negate``), exact(i) = |best − s_i| in ℚ."""
    best = np.min(scores) if negate else np.max(scores)
    sign = -1 if negate else 1
    if scores.dtype.kind in "iu":
        hi = int(best)

        def exact_int(i: int) -> Any:
            return gmpy2.mpq(sign * (hi - int(scores[i])))

        return best, exact_int
    qbest = gmpy2.mpq(float(best))

    def exact_float(i: int) -> Any:
        return sign * (qbest - gmpy2.mpq(float(scores[i])))

    return best, exact_float


def _block_gaps(x: npt.NDArray[Any], best: Any, negate: bool) -> F64:
    """|best − s_i| for a block, in float64 with relative error <= 2^-52 (+inf on overflow).

    Integers of at most 32 bits convert exactly and the float subtraction is rounded once;
    64-bit integers are subtracted exactly in uint64 arithmetic (the difference lies in
    [0, 2^64)) and rounded once.  Floats: one rounded subtraction (inf when it overflows).
    """
    kind = x.dtype.kind
    if kind in "iu":
        if x.dtype.itemsize <= 4:
            xf = x.astype(np.float64)
            return xf - float(best) if negate else float(best) - xf
        if kind == "i":
            a = x.astype(np.int64, copy=False).view(np.uint64)
            b = np.array(best, dtype=np.int64).view(np.uint64)
        else:
            a, b = x, np.array(best, dtype=np.uint64)
        return (a - b if negate else b - a).astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        xf = x.astype(np.float64, copy=False)
        out: F64 = xf - float(best) if negate else float(best) - xf
    return out


# ----------------------------------------------------------------------------------------------
# The fast path: certified float64 key intervals


def _key_bounds(gam: F64, m: npt.NDArray[np.uint32], noise: Noise, dfin: Any) -> tuple[F64, F64]:
    """Float64 [kl, kh] ∋ K_i for every completion of U_i's first 32 bits m_i (lemma S8)."""
    band = _band
    w = 2.0**-PREFIX_BITS
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        u = m.astype(np.float64) * w  # exact
        wu = (w / u) * (1.0 + EPS)  # >= ln(u + w) − ln(u); inf for u = 0
        lnu = np.log(u)
        if noise == "exponential":
            base = gam + lnu
            r = (gam - lnu) * EPS + (TINY + band)
            kl = base - r
            kh = base + (r + wu)
        else:
            # E = −ln U ∈ [e_c(1 − δ), e_c(1 + 2^-46)], δ = 2^-46 + (w/u)/e_c; for δ <= 1/4,
            # ln E ∈ [ln e_c − 2δ', ln e_c + 2^-46] with δ' = dl (the 2^-46 terms are in r)
            e_c = -lnu
            lc = np.log(e_c)
            dl = wu / e_c
            r = (gam + np.abs(lc) + 1.0) * EPS + (TINY + band)
            base = gam + lc
            kl = base - (dl + dl + r)
            kh = base + r
        lo_ok = m != 0 if noise == "exponential" else dl <= 0.25  # a finite bound on ln E
        # γ overflowed though d is finite: γ >= 2^1023, so K_i > 2^1020 (lemma S8)
        over = np.isinf(gam) & dfin
        bad = ~(np.isfinite(kl) & np.isfinite(kh) & lo_ok)
        kl[bad] = -np.inf
        kh[bad] = np.inf
        kl[over & lo_ok] = _HUGE
    return kl, kh


def noisy_top_k(
    scores: npt.NDArray[Any],
    scale: float,
    k: int,
    noise: Noise,
    more: MoreBits | None = None,
    negate: bool = False,
) -> list[int]:
    """The ordered indices of the k largest s_i/scale + noise_i, exactly (see module doc).

    ``scores``: a non-empty 1-d int/uint/float numpy array of finite values; ``scale`` a
    finite float > 0; ``negate`` uses −s (the k smallest noisy scores).
    ``more(j, level)`` supplies the ``STEP_BITS`` bits appended to U_j at
    its ``level``-th refinement (default: the OS CSPRNG; tests pass a deterministic one).
    """
    n = len(scores)
    kk = min(k, n)
    if kk <= 0:
        return []
    _counts["calls"] += 1
    _counts["candidates"] += n
    if n == 1:
        return [0]  # one candidate: the output is certain, no bits needed
    if n <= SMALL:
        return _small_top_k(scores, scale, kk, noise, more, negate)
    words = np.frombuffer(fill_bytes(4 * n), dtype=np.uint32)
    best, exact_gap = _best(scores, negate)
    # One pass in blocks: ``top`` is the kk-th smallest kh seen so far (it only decreases), and
    # a block keeps its i with kl_i <= top; the final filter against the last ``top`` gives
    # exactly the contenders {i : kl_i <= H} (lemma S8).
    keep_i: list[npt.NDArray[np.intp]] = []
    keep_l: list[F64] = []
    keep_h: list[F64] = []
    smallest = np.empty(0)
    top = math.inf
    for start in range(0, n, CHUNK):
        d = _block_gaps(scores[start : start + CHUNK], best, negate)
        with np.errstate(over="ignore"):
            gam = d / scale
        kl, kh = _key_bounds(gam, words[start : start + CHUNK], noise, np.isfinite(d))
        pool = np.concatenate((smallest, kh))
        smallest = pool if len(pool) <= kk else np.partition(pool, kk - 1)[:kk]
        if len(smallest) == kk:
            top = float(np.max(smallest))
        sel = np.flatnonzero(kl <= top)
        keep_i.append(sel + start)
        keep_l.append(kl[sel])
        keep_h.append(kh[sel])
    ci, cl, ch = np.concatenate(keep_i), np.concatenate(keep_l), np.concatenate(keep_h)
    mask = cl <= top
    cont, cl, ch = ci[mask], cl[mask], ch[mask]
    _counts["contenders"] += len(cont)
    if len(cont) == kk:
        o = np.argsort(ch, kind="stable")
        if kk == 1 or bool(np.all(ch[o[:-1]] < cl[o[1:]])):
            return [int(i) for i in cont[o]]
    scale_q = gmpy2.mpq(scale)
    idx = cont.tolist()
    return race_exact(
        [exact_gap(i) / scale_q for i in idx],
        [int(words[i]) for i in idx],
        kk,
        noise,
        more,
        idx,
    )


def _key_bounds_scalar(gam: float, dfin: bool, m: int, noise: Noise) -> tuple[float, float]:
    """:func:`_key_bounds` for one candidate, the same float64 formulas in Python floats."""
    if m == 0:
        return -math.inf, math.inf
    w = 2.0**-PREFIX_BITS
    u = m * w
    wu = (w / u) * (1.0 + EPS)
    lnu = math.log(u)
    if noise == "exponential":
        base = gam + lnu
        r = (gam - lnu) * EPS + (TINY + _band)
        kl, kh = base - r, base + (r + wu)
    else:
        e_c = -lnu
        dl = wu / e_c
        if not dl <= 0.25:
            return -math.inf, math.inf
        lc = math.log(e_c)
        r = (gam + abs(lc) + 1.0) * EPS + (TINY + _band)
        base = gam + lc
        kl, kh = base - (dl + dl + r), base + r
    if math.isinf(gam) and dfin:
        return _HUGE, math.inf
    if not (math.isfinite(kl) and math.isfinite(kh)):
        return -math.inf, math.inf
    return kl, kh


def _small_top_k(
    scores: npt.NDArray[Any],
    scale: float,
    kk: int,
    noise: Noise,
    more: MoreBits | None,
    negate: bool,
) -> list[int]:
    """:func:`noisy_top_k` for a few candidates in Python floats (no numpy overhead).

    The same bits (``4·n`` bytes read as native uint32), the same gaps — exact integer or
    float64 differences rounded once — and the same key bounds, so the same output.
    """
    n = len(scores)
    words = struct.unpack(f"={n}I", fill_bytes(4 * n))
    vals = scores.tolist()
    best = min(vals) if negate else max(vals)
    kl: list[float] = []
    kh: list[float] = []
    for v, m in zip(vals, words, strict=True):
        d = (v - best if negate else best - v) if scores.dtype.kind == "f" else None
        if d is None:  # integers: exact, then rounded once (correctly rounded in CPython)
            d = float(v - best if negate else best - v)
        lo, hi = _key_bounds_scalar(d / scale, math.isfinite(d), m, noise)
        kl.append(lo)
        kh.append(hi)
    top = sorted(kh)[kk - 1]
    cont = [i for i in range(n) if kl[i] <= top]
    _counts["contenders"] += len(cont)
    if len(cont) == kk:
        order = sorted(cont, key=lambda i: kh[i])
        if all(kh[a] < kl[b] for a, b in itertools.pairwise(order)):
            return order
    _, exact_gap = _best(scores, negate)
    scale_q = gmpy2.mpq(scale)
    return race_exact(
        [exact_gap(i) / scale_q for i in cont], [words[i] for i in cont], kk, noise, more, cont
    )


# ----------------------------------------------------------------------------------------------
# The exact race: MPFR intervals with directed rounding, refined on the same bits


def _exact_bounds(g: Any, m: int, b: int, prec: int, noise: Noise) -> tuple[Any, Any]:
    """MPFR lo <= K <= hi for γ = g (rational) and U ∈ [m/2^b, (m+1)/2^b]; prec >= b + 1."""
    x_lo, x_hi = gmpy2.mpq(m, 1 << b), gmpy2.mpq(m + 1, 1 << b)
    ctx = gmpy2.get_context()
    down = ctx.copy()
    down.precision, down.round = prec, gmpy2.RoundDown
    up = ctx.copy()
    up.precision, up.round = prec, gmpy2.RoundUp
    with gmpy2.context(down):
        g_lo = gmpy2.mpfr(g)
        ln_lo = gmpy2.log(gmpy2.mpfr(x_lo))  # −inf for m = 0
    with gmpy2.context(up):
        g_hi = gmpy2.mpfr(g)
        ln_hi = gmpy2.log(gmpy2.mpfr(x_hi))  # <= 0
    if noise == "exponential":
        with gmpy2.context(down):
            lo = g_lo + ln_lo
        with gmpy2.context(up):
            hi = g_hi + ln_hi
        return lo, hi
    # E = −ln U ∈ [−ln_hi, −ln_lo] (negation is exact); K = γ + ln E
    with gmpy2.context(down):
        lo = g_lo + gmpy2.log(-ln_hi)  # log(0) = −inf
    with gmpy2.context(up):
        hi = g_hi + gmpy2.log(-ln_lo)  # log(inf) = inf
    return lo, hi


def race_exact(
    gammas: Sequence[Any],
    prefixes: Sequence[int],
    k: int,
    noise: Noise,
    more: MoreBits | None = None,
    labels: Sequence[int] | None = None,
) -> list[int]:
    """The ordered k smallest keys K_j (exponential or gumbel), exactly, from U_j's prefixes.

    U_j ∈ [p_j, p_j + 1)/2^32 from its first 32 bits ``prefixes[j]``; γ_j rational >= 0.
    Each K_j is bracketed by MPFR with directed rounding; the candidate with the least upper
    end is next once that end is below every rival's lower end, else it and its rivals get
    ``STEP_BITS`` more bits of U (from ``more(label, level)``) and more precision.  Keys tie
    with probability 0, so this ends almost surely.  Returns ``labels`` (default: positions).
    """
    more = more or _os_more
    n = len(gammas)
    lab = list(labels) if labels is not None else list(range(n))
    gq = [
        gmpy2.mpq(g) if not isinstance(g, Fraction) else gmpy2.mpq(g.numerator, g.denominator)
        for g in gammas
    ]
    m = [int(p) for p in prefixes]
    b = [PREFIX_BITS] * n
    prec = [PREFIX_BITS + 32] * n
    level = [0] * n
    lo: list[Any] = [None] * n
    hi: list[Any] = [None] * n
    for j in range(n):
        lo[j], hi[j] = _exact_bounds(gq[j], m[j], b[j], prec[j], noise)
    _counts["exact_races"] += 1
    remaining = list(range(n))
    out: list[int] = []
    while len(out) < min(k, n):
        i = min(remaining, key=lambda j: hi[j])
        top = hi[i]
        rivals = [j for j in remaining if j != i and lo[j] <= top]
        if not rivals:
            out.append(lab[i])
            remaining.remove(i)
            continue
        for j in (i, *rivals):
            m[j] = (m[j] << STEP_BITS) | more(lab[j], level[j])
            level[j] += 1
            b[j] += STEP_BITS
            prec[j] += STEP_BITS
            lo[j], hi[j] = _exact_bounds(gq[j], m[j], b[j], prec[j], noise)
            _counts["refinements"] += 1
    return out


def noisy_top_k_reference(
    scores: npt.NDArray[Any],
    scale: float,
    k: int,
    noise: Noise,
    more: MoreBits | None = None,
    negate: bool = False,
) -> list[int]:
    """:func:`noisy_top_k` with no float shortcut: the exact race over every candidate.

    Reads the same bits in the same order (32 per candidate, then ``more``), so on the same
    stream it returns the same output as :func:`noisy_top_k`.
    """
    n = len(scores)
    kk = min(k, n)
    if kk <= 0:
        return []
    if n == 1:
        return [0]
    words = np.frombuffer(fill_bytes(4 * n), dtype=np.uint32)
    _, exact_gap = _best(scores, negate)
    s = gmpy2.mpq(scale)
    return race_exact([exact_gap(i) / s for i in range(n)], words.tolist(), kk, noise, more)


# ----------------------------------------------------------------------------------------------
# The original exact samplers on rationals γ_i >= 0 (min γ = 0), kept as references


def sample_exponential_mechanism(gammas: Sequence[Fraction]) -> int:
    """An index i with Pr[i] = exp(−γ_i) / Σ_j exp(−γ_j), exactly.

    Rejection from the uniform proposal: accept i with Bernoulli(exp(−γ_i)).  Precondition:
    some γ_i = 0, so each round accepts with probability >= 1/n.
    """
    n = len(gammas)
    while True:
        i = sample_uniform_below(n)
        if sample_bernoulli_exp(gammas[i]):
            return i


def sample_permute_and_flip(gammas: Sequence[Fraction]) -> int:
    """Permute-and-flip (McKenna & Sheldon 2020): the law of argmax_i (−γ_i + Exp(1)).

    Visits a uniformly random permutation (drawn lazily by Fisher–Yates) and returns the first
    i whose Bernoulli(exp(−γ_i)) succeeds.  Precondition: some γ_i = 0 (always accepted), so
    one pass suffices.
    """
    order = list(range(len(gammas)))
    n = len(order)
    for t in range(n):
        j = t + sample_uniform_below(n - t)
        order[t], order[j] = order[j], order[t]
        if sample_bernoulli_exp(gammas[order[t]]):
            return order[t]
    raise AssertionError("permute-and-flip needs a candidate with gamma = 0")  # pragma: no cover


def sample_peeled_exponential_mechanism(gammas: Sequence[Fraction], k: int) -> list[int]:
    """k exponential-mechanism draws without replacement (top-k with Gumbel noise)."""
    remaining = list(range(len(gammas)))
    out: list[int] = []
    for _ in range(min(k, len(remaining))):
        best = min(gammas[i] for i in remaining)
        pick = sample_exponential_mechanism([gammas[i] - best for i in remaining])
        out.append(remaining.pop(pick))
    return out


def select_exact(scores: Sequence[Any], scale: Any, k: int, gumbel: bool) -> list[int]:
    """The indices of the k largest of s_i + noise, on exact rational scores and scale >= 0.

    The reference path (scale 0, scores that are not a numeric array, quantile scores beyond
    int64): with γ_i = (max s − s_i)/scale, Gumbel noise is k exponential-mechanism draws
    without replacement, exponential noise permute-and-flip (k = 1) or the rational race.
    At scale 0, the noiseless limit: sorted descending, ties in uniformly random order.
    """
    if scale == 0:
        n = len(scores)
        order = list(range(n))
        for t in range(n - 1, 0, -1):
            j = sample_uniform_below(t + 1)
            order[t], order[j] = order[j], order[t]
        order.sort(key=lambda i: -scores[i])
        return order[:k]
    best = max(scores)
    gammas = [(best - s) / scale for s in scores]
    if gumbel:
        return sample_peeled_exponential_mechanism(gammas, k)
    if k == 1:
        return [sample_permute_and_flip(gammas)]
    return sample_exponential_top_k(gammas, k)


# -- exact interval bounds on exp(δ) for rational δ >= 0 -------------------------------------


def _round_dyadic(x: Fraction, bits: int, upward: bool) -> Fraction:
    """``x > 0`` rounded to ``bits`` significant bits, down or up (a dyadic rational)."""
    e = x.numerator.bit_length() - x.denominator.bit_length() - bits
    scaled = x / Fraction(2) ** e
    m = math.ceil(scaled) if upward else math.floor(scaled)
    return m * Fraction(2) ** e


def _exp_series(r: Fraction, bits: int) -> tuple[Fraction, Fraction]:
    """Bounds on exp(r) for 0 <= r <= 1 with error <= 2^(2 − bits), in fixed point.

    Lower: the Taylor terms from r rounded down, each term rounded down.  Upper: from r rounded
    up, each term rounded up, plus the remainder bound r^(N+1)/(N+1)!·e^r <= 3/(N+1)!.
    """
    p = bits + 8
    one = 1 << p
    r_lo = (r.numerator << p) // r.denominator
    r_hi = -((-r.numerator << p) // r.denominator)
    lo = term_lo = hi = term_hi = one
    k = 0
    tail = 3 * one  # 3/(k+1)! in fixed point, rounded up
    while tail > 1:
        k += 1
        term_lo = term_lo * r_lo // (one * k)
        term_hi = -(-term_hi * r_hi // (one * k))
        lo += term_lo
        hi += term_hi
        tail = -(-tail // (k + 1))
    return Fraction(lo, one), Fraction(hi + tail, one)


def exp_bounds_exact(delta: Fraction, bits: int) -> tuple[Fraction, Fraction]:
    """Rationals lo <= exp(δ) <= hi, for rational δ >= 0, with (hi − lo)/lo ≲ 2^(8 − bits).

    exp(δ) = e^⌊δ⌋ · exp(δ − ⌊δ⌋); both factors come from Taylor sums with a proved remainder,
    and every rounding of an intermediate is outward (lower bounds down, upper bounds up).
    """
    n = math.floor(delta)
    guard = bits + 2 * max(1, n.bit_length()) + 8
    r_lo, r_hi = _exp_series(delta - n, guard)
    e_lo, e_hi = _exp_series(Fraction(1), guard)
    p_lo, p_hi = Fraction(1), Fraction(1)
    b_lo, b_hi = _round_dyadic(e_lo, guard, False), _round_dyadic(e_hi, guard, True)
    while n:
        if n & 1:
            p_lo = _round_dyadic(p_lo * b_lo, guard, False)
            p_hi = _round_dyadic(p_hi * b_hi, guard, True)
        n >>= 1
        if n:
            b_lo = _round_dyadic(b_lo * b_lo, guard, False)
            b_hi = _round_dyadic(b_hi * b_hi, guard, True)
    return (
        _round_dyadic(p_lo * r_lo, guard, False),
        _round_dyadic(p_hi * r_hi, guard, True),
    )


def _exp_bounds(delta: Fraction, bits: int) -> tuple[Fraction, Fraction]:
    """Certified bounds on exp(δ): MPFR with directed rounding while 50 bits suffice (and
    exp(δ) is within float range), powers of two bracketing e^δ = 2^(δ/ln 2) for a first
    look at δ >= 700 (1.4426 < 1/ln 2 < 1.4428), else :func:`exp_bounds_exact`."""
    if bits <= 50:
        if delta < 700:
            qd = q(delta)
            return Fraction(exp_down(qd)), Fraction(exp_up(qd))
        return Fraction(2) ** math.floor(delta * Fraction(14426, 10000)), Fraction(2) ** math.ceil(
            delta * Fraction(14428, 10000)
        )
    return exp_bounds_exact(delta, bits)


def sample_exponential_top_k(
    gammas: Sequence[Fraction],
    k: int,
    start_bits: int = 64,
    step_bits: int = 32,
    start_prec: int = 50,
) -> list[int]:
    """The k largest of −γ_i + Exp_i(1) (i.i.d. standard exponentials), in order, exactly.

    The original rational race (a reference for :func:`noisy_top_k`'s exponential case).
    With U_i = exp(−Exp_i) ~ Uniform(0, 1), this is the order of the k smallest
    Y_i = exp(γ_i)·U_i.  Each U_i is known as a dyadic interval [m/2^b, (m+1)/2^b) and
    exp(γ_i) as a rational interval [c⁻, c⁺]; Y_i lies in [c⁻·m/2^b, c⁺·(m+1)/2^b).  The
    candidate with the least upper end is selected once that end is <= every rival's lower
    end; otherwise it and the overlapping rivals are refined (more bits of U, tighter bounds
    on exp).  Ties among the Y_i have probability 0, so the race ends almost surely.
    ``start_bits``/``step_bits``/``start_prec`` only change the cost, never the law.
    """
    n = len(gammas)
    m = [sample_uniform_bits(start_bits) for _ in range(n)]
    b = [start_bits] * n
    prec = [start_prec] * n
    bounds = [_exp_bounds(g, p) for g, p in zip(gammas, prec, strict=True)]

    def interval(j: int) -> tuple[Fraction, Fraction]:
        lo_c, hi_c = bounds[j]
        return lo_c * Fraction(m[j], 1 << b[j]), hi_c * Fraction(m[j] + 1, 1 << b[j])

    ivals = [interval(j) for j in range(n)]
    remaining = set(range(n))
    out: list[int] = []
    while len(out) < min(k, n):
        i = min(remaining, key=lambda j: ivals[j][1])
        top = ivals[i][1]
        rivals = [j for j in remaining if j != i and ivals[j][0] < top]
        if not rivals:
            out.append(i)
            remaining.remove(i)
            continue
        for j in (i, *rivals):
            m[j] = (m[j] << step_bits) | sample_uniform_bits(step_bits)
            b[j] += step_bits
            prec[j] += step_bits
            bounds[j] = _exp_bounds(gammas[j], prec[j])
            ivals[j] = interval(j)
    return out
