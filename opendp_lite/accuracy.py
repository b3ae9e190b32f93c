"""Convert between noise scales and accuracies (OpenDP's names and conventions).

An *accuracy* a at level α is a tolerance such that the noise Z satisfies
Pr[|Z| ≥ a] ≤ α (Pr[|Z| > a] = α for the continuous laws).  These are utility estimates,
not privacy maps: they are computed in ordinary floating point.

>>> laplacian_scale_to_accuracy(1.0, 0.05)
2.995732273553991
>>> round(gaussian_scale_to_accuracy(1.0, 0.05), 12)
1.95996398454
>>> discrete_gaussian_scale_to_accuracy(1.0, 0.05)
3.0
"""

from __future__ import annotations

import math

import numpy as np

from ._validate import check_finite_nonneg, check_real
from .errors import InvalidParameter

__all__ = [
    "accuracy_to_discrete_gaussian_scale",
    "accuracy_to_discrete_laplacian_scale",
    "accuracy_to_gaussian_scale",
    "accuracy_to_laplacian_scale",
    "discrete_gaussian_scale_to_accuracy",
    "discrete_laplacian_scale_to_accuracy",
    "gaussian_scale_to_accuracy",
    "laplacian_scale_to_accuracy",
]


def _alpha(alpha: object, closed: bool) -> float:
    a = check_real("alpha", alpha)
    ok = 0 < a <= 1 if closed else 0 < a < 1
    if not ok:
        raise InvalidParameter(f"alpha must be in (0, 1{']' if closed else ')'}, got {alpha!r}")
    return a


def _out(x: float, T: object) -> float:
    if T in (None, float, "float", "f64"):
        return float(x)
    if T == "f32":
        return float(np.float32(x))
    raise InvalidParameter(f"T must be 'f64' or 'f32', got {T!r}")


def _erfcinv(p: float) -> float:
    """x ≥ 0 with erfc(x) = p, for p in (0, 1], by bisection on the float line."""
    lo, hi = 0.0, 30.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if math.erfc(mid) > p:
            lo = mid
        else:
            hi = mid
    return lo if abs(math.erfc(lo) - p) <= abs(math.erfc(hi) - p) else hi


def _dg_norm(scale: float) -> float:
    """Σ_{i∈ℤ} exp(−i²/(2 scale²)): directly for scale < 1, by Poisson summation above."""
    if scale < 1:
        i = np.arange(1, 64, dtype=np.float64)
        return 1.0 + 2.0 * math.fsum(np.exp(-(i * i) / (2 * scale * scale)))
    theta = sum(2 * math.exp(-2 * math.pi**2 * scale**2 * k * k) for k in (1, 2, 3))
    return scale * math.sqrt(2 * math.pi) * (1 + theta)


def _dg_mass_below(scale: float, a: int) -> float:
    """Σ_{|i|<a} exp(−i²/(2 scale²)) for an integer a ≥ 1."""
    i = np.arange(1, a, dtype=np.float64)
    return 1.0 + 2.0 * math.fsum(np.exp(-(i * i) / (2 * scale * scale)))


def laplacian_scale_to_accuracy(scale: float, alpha: float, T: object = None) -> float:
    """The accuracy of Laplace(scale) noise at level alpha: ``scale·ln(1/α)``.

    Raises:
        InvalidParameter: scale negative or not finite; alpha outside (0, 1].

    >>> laplacian_scale_to_accuracy(2.0, 0.5)
    1.3862943611198906
    """
    return _out(-check_finite_nonneg("scale", scale) * math.log(_alpha(alpha, True)), T)


def accuracy_to_laplacian_scale(accuracy: float, alpha: float, T: object = None) -> float:
    """The Laplace scale with the given accuracy at level alpha: ``accuracy / ln(1/α)``.

    Raises:
        InvalidParameter: accuracy negative or not finite; alpha outside (0, 1).

    >>> accuracy_to_laplacian_scale(1.0, 0.05)
    0.33380820069533407
    """
    return _out(-check_finite_nonneg("accuracy", accuracy) / math.log(_alpha(alpha, False)), T)


def gaussian_scale_to_accuracy(scale: float, alpha: float, T: object = None) -> float:
    """The accuracy of Gaussian(scale) noise at level alpha: ``scale·√2·erfc⁻¹(α)``.

    Raises:
        InvalidParameter: scale negative or not finite; alpha outside (0, 1].

    >>> gaussian_scale_to_accuracy(0.0, 0.05)
    0.0
    """
    s = check_finite_nonneg("scale", scale)
    return _out(s * math.sqrt(2) * _erfcinv(_alpha(alpha, True)), T)


def accuracy_to_gaussian_scale(accuracy: float, alpha: float, T: object = None) -> float:
    """The Gaussian scale with the given accuracy at level alpha: ``accuracy/(√2·erfc⁻¹(α))``.

    Raises:
        InvalidParameter: accuracy negative or not finite; alpha outside (0, 1).

    >>> round(accuracy_to_gaussian_scale(1.0, 0.05), 12)
    0.510213456925
    """
    acc = check_finite_nonneg("accuracy", accuracy)
    return _out(acc / math.sqrt(2) / _erfcinv(_alpha(alpha, False)), T)


def discrete_laplacian_scale_to_accuracy(scale: float, alpha: float, T: object = None) -> float:
    r"""The accuracy of discrete Laplace(scale) noise at level alpha.

    For Z ~ 𝓛_ℤ(s), Pr[|Z| ≥ a] = 2e^{−a/s}/(1 + e^{−1/s}) at integers a ≥ 1; solving for α
    gives ``a = s·ln(2 / (α·(1 + e^{−1/s})))`` (its floor keeps the coverage).

    Raises:
        InvalidParameter: scale negative or not finite; alpha outside (0, 1].

    >>> round(discrete_laplacian_scale_to_accuracy(1.0, 0.05), 12)
    3.375617766596
    """
    s = check_finite_nonneg("scale", scale)
    a = _alpha(alpha, True)
    if s == 0:
        return _out(0.0, T)
    return _out(s * (math.log(2) - math.log(a) - math.log1p(math.exp(-1 / s))), T)


def discrete_gaussian_scale_to_accuracy(scale: float, alpha: float, T: object = None) -> float:
    r"""The least integer a ≥ 1 with Pr[|Z| ≥ a] ≤ α for Z ~ 𝓝_ℤ(scale), as a float.

    Raises:
        InvalidParameter: scale negative or not finite; alpha outside (0, 1].

    >>> discrete_gaussian_scale_to_accuracy(10.0, 0.05)
    21.0
    """
    s = check_finite_nonneg("scale", scale)
    a = _alpha(alpha, True)
    if s == 0:
        return _out(1.0, T)
    target = (1 - a) * _dg_norm(s)
    total, i, chunk = 1.0, 0, max(1024, int(4 * s))
    while total < target:
        j = np.arange(i + 1, i + 1 + chunk, dtype=np.float64)
        dens = 2.0 * np.exp(-(j * j) / (2 * s * s))
        cum = total + np.cumsum(dens)
        hit = np.nonzero(cum >= target)[0]
        if len(hit):
            i += int(hit[0]) + 1
            break
        if dens[-1] == 0:
            raise InvalidParameter(f"could not determine the accuracy for scale={scale!r}")
        total, i = float(cum[-1]), i + chunk
    return _out(float(i + 1), T)


def _bisect_scale(hi: float, too_large: object) -> float:
    """The float boundary of {s : too_large(s)}, searched in [0, hi]; returns its upper end."""
    lo = 0.0
    while True:
        mid = lo + (hi - lo) / 2
        if mid in (lo, hi):
            return hi
        if too_large(mid):  # type: ignore[operator]
            hi = mid
        else:
            lo = mid


def accuracy_to_discrete_laplacian_scale(accuracy: float, alpha: float, T: object = None) -> float:
    """The discrete Laplace scale whose accuracy at level alpha is ``accuracy`` (bisection).

    Raises:
        InvalidParameter: accuracy negative or not finite; alpha outside (0, 1).

    >>> round(accuracy_to_discrete_laplacian_scale(5.0, 0.05), 9)
    1.52895448
    """
    acc = check_finite_nonneg("accuracy", accuracy)
    hi = accuracy_to_laplacian_scale(acc, alpha)
    return _out(
        _bisect_scale(hi, lambda s: discrete_laplacian_scale_to_accuracy(s, alpha) >= acc), T
    )


def accuracy_to_discrete_gaussian_scale(accuracy: float, alpha: float, T: object = None) -> float:
    """The largest discrete Gaussian scale with Pr[|Z| < ⌊accuracy⌋] ≥ 1 − α (bisection).

    Raises:
        InvalidParameter: accuracy negative or not finite; alpha outside (0, 1).

    >>> round(accuracy_to_discrete_gaussian_scale(5.0, 0.05), 9)
    2.314012491
    """
    acc = check_finite_nonneg("accuracy", accuracy)
    a = _alpha(alpha, False)
    hi = accuracy_to_gaussian_scale(acc, a)
    n = max(int(acc), 1)  # as OpenDP: a tolerance below 1 asks for Pr[Z = 0] >= 1 - alpha
    return _out(_bisect_scale(hi, lambda s: 1 - a > _dg_mass_below(s, n) / _dg_norm(s)), T)
