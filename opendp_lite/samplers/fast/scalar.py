"""The scalar attempt stream: exact draws from fresh bytes (per attempt or one bulk read)."""

from __future__ import annotations

from ..rng import fill_bytes
from ..uniform import sample_uniform_bits
from .attempt import _attempt, _attempt_exact, _counts, _wide_prefixes
from .plan import _Plan
from .rounding import _float_x


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


def _scalar_float_x(p: _Plan, x: float, k: int, T: str, pool: _Pool | None = None) -> float:
    """:func:`_float_x` of one scalar attempt drawn from ``pool`` (or per attempt)."""
    return _float_x(_scalar_draw(p, pool), x, k, T)


def _small_pool(p: _Plan, n: int) -> _Pool:
    """One byte read sized for the attempts that n lanes expect (sizes only, never the law)."""
    return _Pool(p.scalar_bytes[2] * int(n / p.rate * 1.25 + 2))
