"""Reference (exact, scalar) additive noise on integers and on the 2^k grid of floats.

These define the output law of the noise mechanisms; vectorised paths must match it exactly.

* ``int_noise_ref(x, scale, dist, T)`` = clamp_T(x + Z),
  Z ~ 𝓛_ℤ(scale) (``"laplace"``) or 𝓝_ℤ(scale) (``"gaussian"``);
* ``float_noise_ref(x, scale, k, dist, T)`` = sat_T(round_T(2^k · (round_k(x) + Z))),
  Z ~ 𝓛_ℤ(scale/2^k) or 𝓝_ℤ(scale/2^k).

The saturation (clamp to the carrier's range, or to ±max finite float) is post-processing of
the exact noisy value, so it costs no privacy; it replaces integer wrap-around and ±inf.

>>> int_noise_ref(126, 0, "laplace", "i8")
126
>>> float_noise_ref(0.3, 0, -1, "laplace", "f64")
0.5
>>> float_noise_ref(1.7e308, 0, 1023, "gaussian", "f64") == 1.7976931348623157e308
True
"""

from __future__ import annotations

import math
from typing import Any, Literal

import gmpy2
import numpy as np  # noqa: F401  (used by the doctest)

from .._types import int_bounds
from .bernoulli import to_rational
from .discrete_gaussian import sample_discrete_gaussian
from .discrete_laplace import sample_discrete_laplace

__all__ = [
    "Dist",
    "float_noise_ref",
    "int_noise_ref",
    "k_min",
    "round_to_float",
    "round_to_grid",
    "sample_integer_noise",
]

Dist = Literal["laplace", "gaussian"]

_CONTEXTS = {"f64": gmpy2.ieee(64), "f32": gmpy2.ieee(32)}
_MAX = {"f64": 1.7976931348623157e308, "f32": 3.4028234663852886e38}
_KMIN = {"f64": -1074, "f32": -149}


def k_min(T: str) -> int:
    """The exponent of the smallest positive subnormal of float carrier ``T`` (2^k_min).

    >>> k_min("f64"), k_min("f32")
    (-1074, -149)
    """
    return _KMIN[T]


def sample_integer_noise(scale: Any, dist: str) -> int:
    """One exact draw of Z ~ 𝓛_ℤ(scale) or 𝓝_ℤ(scale) (``scale`` rational ≥ 0)."""
    if dist == "laplace":
        return int(sample_discrete_laplace(scale))
    if dist == "gaussian":
        return int(sample_discrete_gaussian(scale))
    raise ValueError(f"dist must be 'laplace' or 'gaussian', got {dist!r}")


def _pow2(k: int) -> Any:
    return gmpy2.mpq(1 << k) if k >= 0 else gmpy2.mpq(1, 1 << -k)


def round_to_grid(x: Any, k: int) -> int:
    """The integer n with n·2^k nearest to the rational ``x``, ties toward +∞: ⌊x/2^k + 1/2⌋.

    The tie rule is monotone on purpose: for finite floats x ≤ x′ (multiples of 2^k_min) it
    gives 0 ≤ (n′ − n)·2^k ≤ (x′ − x) + 2^k − 2^k_min, the rounding penalty the privacy maps
    charge.  Ties to even (or away from zero) can send two ties apart by (x′ − x) + 2^k.

    >>> round_to_grid(1.5, 0), round_to_grid(2.5, 0), round_to_grid(-0.75, -1)
    (2, 3, -1)
    """
    v = to_rational(x, "x") / _pow2(k) + gmpy2.mpq(1, 2)
    return int(gmpy2.f_div(v.numerator, v.denominator))


def round_to_float(y: Any, T: str) -> float:
    """The rational ``y`` rounded to the nearest ``T`` float (ties to even, correct subnormals).

    Values beyond the largest finite ``T`` saturate to ±max finite instead of ±inf.

    >>> round_to_float(gmpy2.mpq(1, 3), "f32") == float(np.float32(1 / 3))
    True
    """
    with gmpy2.context(_CONTEXTS[T]):
        f = float(gmpy2.mpfr(y))
    if math.isinf(f):
        return math.copysign(_MAX[T], f)
    return f


def int_noise_ref(x: int, scale: Any, dist: Dist, T: str) -> int:
    r"""x + Z saturated to the range of integer carrier ``T``.

    Law: clamp(x + Z, T.min, T.max) with Z ~ 𝓛_ℤ(scale) (Pr[Z=z] ∝ exp(−|z|/scale)) for
    ``dist="laplace"``, or Z ~ 𝓝_ℤ(scale) (Pr[Z=z] ∝ exp(−z²/(2 scale²))) for
    ``dist="gaussian"``.  The clamp is post-processing of x + Z: no wrap-around.
    """
    lo, hi = int_bounds(T)
    y = int(x) + sample_integer_noise(scale, dist)
    return lo if y < lo else hi if y > hi else y


def float_noise_ref(x: float, scale: Any, k: int, dist: Dist, T: Literal["f32", "f64"]) -> float:
    r"""Noise on the grid 2^k·ℤ, rounded to the nearest ``T`` float, saturating at ±max.

    Exactly: r = x rounded to the nearest multiple of 2^k (ties toward +∞, see
    :func:`round_to_grid`);
    y = r + 2^k·Z with Z ~ 𝓛_ℤ(scale/2^k) or 𝓝_ℤ(scale/2^k) drawn exactly; the output is y
    rounded to the nearest ``T`` float (ties to even, subnormals correct), with values
    beyond the largest finite ``T`` saturated to ±max finite (post-processing, documented;
    never ±inf).

    Raises:
        ValueError: if ``x`` is NaN or infinite.
    """
    if not math.isfinite(x):
        raise ValueError(f"x must be finite, got {x!r}")
    n = round_to_grid(x, k)
    s = to_rational(scale, "scale") / _pow2(k)
    y = gmpy2.mpq(n + sample_integer_noise(s, dist)) * _pow2(k)
    return round_to_float(y, T)
