"""Exact Bernoulli samplers: rational ``p``, and ``exp(−γ)`` for rational ``γ`` (CKS20 Alg. 1).

Every decision is a comparison of integers: the uniform bits come from
:func:`opendp_lite.samplers.rng.fill_bytes` and the probabilities are gmpy2 rationals.

>>> sample_bernoulli(0), sample_bernoulli(1)
(False, True)
>>> sample_bernoulli_exp(0)
True
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import gmpy2
import numpy as np
import numpy.typing as npt

from .rng import fill_bytes

__all__ = [
    "sample_bernoulli",
    "sample_bernoulli_exp",
    "sample_flips",
    "sample_round",
    "to_rational",
]

_MPQ = type(gmpy2.mpq(0))
_MPZ = type(gmpy2.mpz(0))
_ONE = gmpy2.mpq(1)


def to_rational(x: Any, name: str = "value") -> Any:
    """The exact rational value of ``x`` (int, finite float, Fraction, gmpy2 mpz/mpq).

    Raises:
        ValueError: if ``x`` is NaN, infinite or not a real number.
    """
    if isinstance(x, _MPQ):
        return x
    if isinstance(x, (bool, np.bool_)):
        raise ValueError(f"{name} must be a real number, got bool {x!r}")
    if isinstance(x, (int, _MPZ, np.integer)):
        return gmpy2.mpq(int(x))  # numpy integers exactly, not through float
    if isinstance(x, Fraction):
        return gmpy2.mpq(x.numerator, x.denominator)
    if isinstance(x, float) or hasattr(x, "__float__"):
        f = float(x)
        if not math.isfinite(f):
            raise ValueError(f"{name} must be finite, got {x!r}")
        return gmpy2.mpq(f)
    raise ValueError(f"{name} must be a real number, got {type(x).__name__} {x!r}")


def sample_bernoulli(p: Any) -> bool:
    r"""Exact Bernoulli(p) for rational ``p`` in [0, 1]:  Pr[True] = p.

    A uniform U ∈ [0, 1) is generated lazily, one byte (8 binary digits) at a time, and
    compared with the binary expansion of p = a/b computed by long division; the first
    differing digit decides ``U < p``.  If p's expansion ends while every digit so far agreed,
    then U ≥ p (U = p has probability 0).  Expected cost: about 1 byte.

    Raises:
        ValueError: if ``p`` is not a rational in [0, 1].
    """
    p = to_rational(p, "p")
    if p < 0 or p > 1:
        raise ValueError(f"p must be in [0, 1], got {p}")
    if p == 0:
        return False
    if p == 1:
        return True
    r, b = p.numerator, p.denominator
    while True:
        r <<= 8
        digit, r = divmod(r, b)  # next 8 binary digits of p, 0 <= digit < 256
        u = fill_bytes(1)[0]  # next 8 binary digits of U
        if u != digit:
            return bool(u < digit)
        if r == 0:
            return False


def _bernoulli_exp_le1(gamma: Any) -> bool:
    # CKS20 Algorithm 1, case γ ∈ [0, 1]: K counts successes of Bernoulli(γ/K), K = 1, 2, ...;
    # Pr[K odd] = exp(−γ).
    k = 1
    while sample_bernoulli(gamma / k):
        k += 1
    return k % 2 == 1


def sample_bernoulli_exp(gamma: Any) -> bool:
    r"""Exact Bernoulli(exp(−γ)) for rational γ ≥ 0:  Pr[True] = exp(−γ).

    Canonne, Kamath & Steinke 2020 (CKS20), Algorithm 1: for γ ≤ 1 the parity of the length
    of a run of Bernoulli(γ/k) successes; for γ > 1, ⌊γ⌋ independent Bernoulli(exp(−1))
    draws (stopping at the first failure) then one Bernoulli(exp(−(γ − ⌊γ⌋))).

    Raises:
        ValueError: if ``gamma`` is negative or not finite.
    """
    g = to_rational(gamma, "gamma")
    if g < 0:
        raise ValueError(f"gamma must be >= 0, got {g}")
    while g > 1:
        if not _bernoulli_exp_le1(_ONE):
            return False
        g -= 1
    return _bernoulli_exp_le1(g)


def sample_round(y: Any) -> int:
    """Randomized rounding: ⌊y⌋ + Bernoulli(y − ⌊y⌋), so the mean is exactly ``y``."""
    floor = int(math.floor(y))  # noqa: RUF046 - of an mpq, math.floor gives an mpz
    return floor + int(sample_bernoulli(y - floor))


def sample_flips(n: int, denominator: int) -> npt.NDArray[np.bool_]:
    """``n`` independent exact Bernoulli(1/denominator) coins.

    Each coin is a uniform 32-bit word accepted below the largest multiple of ``denominator``
    (so the accepted word is uniform on that range) and is True iff the word is ≡ 0 modulo
    ``denominator``: probability exactly 1/denominator.
    """
    out = np.empty(n, dtype=np.bool_)
    limit = (2**32 // denominator) * denominator
    filled = 0
    while filled < n:
        need = min(n - filled, 2**20)  # bounded memory per round
        batch = need + need // 8 + 16  # acceptance > 1/2; usually far above
        words = np.frombuffer(fill_bytes(4 * batch), dtype="<u4")
        words = words[words < limit][:need]
        out[filled : filled + len(words)] = words % denominator == 0
        filled += len(words)
    return out
