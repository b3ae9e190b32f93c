"""Stated intervals of sums released through the float grid: every rounding term included.

A float sum (``make_sum`` on an f64 column, and every ``make_grouped_sum``) releases
``R = fl(x_c + 2^k·Z)`` where ``x_c = to_carrier(2^-p·Σ k_i)`` with ``k_i = trunc(clamp(x_i)·2^p)``
(the exact grid sum, rounded once to f64), ``Z`` is the sampler's discrete noise at scale
``s/2^k`` on the grid ``2^k`` (``k = k_min = −1074``), and ``fl`` is the final round to f64.
Against the true ``S = Σ clamp(x_i)`` over ``N`` rows (``N`` at most the sum's size limit, so
nothing saturates), with ``e(m) = α_T·m + β_T`` the bound :func:`rounding_error` gives
(``α = 2^-53``, ``β = 2^-1075`` for f64), ``M′ = K·2^-p`` and ``|Z·2^k| < A``:

    |R − S| <= A·(1 + α) + β·(2 + α) + N·(t + M′·α·(2 + α))

with ``t = 2^-p`` the truncation of one value (0 when the column and bounds are integers and
``p >= 0``: the grid then holds every value exactly).  ``A`` is the noise's tail bound on the
fine grid (:func:`grid_noise_accuracy`).  Everything is an exact rational, rounded up.
The derivation is docs/proofs/planner.md §3.

>>> g = FloatGrid.of((0.0, 100.0), integer=False)
>>> g.per_row > 0 and g.half_width(10.0, 1000) > 10.0
True
>>> g.half_width(10.0, 1000) - 10.0 < 1e-6
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .. import _arith as ar
from ..accuracy import gaussian_scale_to_accuracy
from ..transformations._aggregate import grid_k, grid_shift, rounding_error

__all__ = ["K_MIN", "FloatGrid", "grid_noise_accuracy", "grid_noise_max_scale"]

#: the float noise's grid exponent (``make_laplace`` / ``make_gaussian`` default for f64)
K_MIN = -1074
_TWO = ar.q(2)


def grid_noise_accuracy(scale: float, alpha: float, measure: str) -> float:
    """A with Pr[|2^k·Z| >= A] <= alpha for the float noise at ``scale`` (Z on the grid 2^k).

    Laplace (Z ~ 𝓛_ℤ(s/2^k)): Pr[|2^k Z| >= A] <= 2e^{−A/s}/(1 + e^{−2^k/s}) <= e^{−(A − 2^k)/s},
    so A = s·ln(1/α) + 2^k, rounded up (we add 2^{k+1}).  Gaussian (Z ~ 𝓝_ℤ(s/2^k)):
    Pr[|Z| >= m] <= erfc((m − 1)/(t√2)) at t = s/2^k for every t (docs/proofs/planner.md), so
    A = s·√2·erfc⁻¹(α) + 2^k, with a 10⁻⁹ relative margin on the float erfc⁻¹.
    """
    if scale == math.inf:
        return math.inf
    if scale <= 0:
        return 0.0
    grid = _TWO ** (K_MIN + 1)
    if measure == "zcdp":
        g = gaussian_scale_to_accuracy(scale, alpha)
        return ar.up(ar.q(ar.mul_up(g, 1 + 1e-9)) + grid)
    return ar.up(ar.q(ar.mul_up(scale, ar.log_up(1 / ar.q(alpha)))) + grid)


def grid_noise_max_scale(accuracy: float, alpha: float, measure: str) -> float:
    """The largest scale (checked) with :func:`grid_noise_accuracy` <= ``accuracy``."""
    if accuracy <= 0:
        return 0.0
    if measure == "zcdp":
        s = accuracy / (gaussian_scale_to_accuracy(1.0, alpha) * (1 + 2e-9))
    else:
        s = ar.down(ar.q(accuracy) / ar.q(ar.log_up(1 / ar.q(alpha))))
    while s > 0 and grid_noise_accuracy(s, alpha, measure) > accuracy:
        s = s * (1 - 2**-30)
        if s < 1e-300:
            return 0.0
    return s


@dataclass(frozen=True)
class FloatGrid:
    """The rounding constants of one f64 grid sum with ``bounds`` (see the module docstring)."""

    p: int
    m_prime: Any  # M′ = K·2^-p, exact
    trunc: Any  # t: 2^-p, or 0 when integer data sit on the grid exactly
    a_t: Any  # α_T of e(m) = α_T·m + β_T
    b_t: Any  # β_T

    @classmethod
    def of(cls, bounds: tuple[Any, Any], integer: bool, T: str = "f64") -> FloatGrid:
        lo, hi = float(bounds[0]), float(bounds[1])
        p = grid_shift(max(abs(lo), abs(hi)))
        K = max(abs(grid_k(lo, p)), abs(grid_k(hi, p)))
        unit = _TWO**-p
        trunc = ar.q(0) if integer and p >= 0 else unit
        b_t = rounding_error(ar.q(0), T)
        a_t = rounding_error(ar.q(1), T) - b_t
        return cls(p, ar.q(K) * unit, trunc, a_t, b_t)

    @property
    def per_row(self) -> float:
        """c = t + M′·α·(2 + α): the part of the error that grows with each row, rounded up."""
        return ar.up(self._c())

    def _c(self) -> Any:
        return self.trunc + self.m_prime * self.a_t * (2 + self.a_t)

    def half_width(self, noise: float, rows: float) -> float:
        """A·(1 + α) + β·(2 + α) + rows·c, rounded up: the interval around the release."""
        if noise == math.inf or rows == math.inf:
            return math.inf
        a = ar.q(noise) * (1 + self.a_t) + self.b_t * (2 + self.a_t)
        return ar.up(a + ar.q(rows) * self._c())

    def noise_allowance(self, half_width: float, rows: float) -> float:
        """The largest A (rounded down) with :meth:`half_width` (A, rows) <= ``half_width``."""
        rest = ar.q(half_width) - self.b_t * (2 + self.a_t) - ar.q(rows) * self._c()
        if rest <= 0:
            return -1.0
        a = ar.down(rest / (1 + self.a_t))
        while a > 0 and self.half_width(a, rows) > half_width:
            a = math.nextafter(a, 0.0)
        return a
