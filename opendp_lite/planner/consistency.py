"""Least-squares consistency: group counts that must sum to a released total.

Given a noisy total T̃ = T + Z₀ (variance v₀) and noisy group values m̃_g = m_g + Z_g
(variance v₁ each, G groups, independent) with Σ m_g = T publicly known to hold, the
least-squares (BLUE) estimate under that constraint is

    T̂ = (T̃/v₀ + S̃/(G·v₁)) / (1/v₀ + 1/(G·v₁)),  S̃ = Σ m̃_g,
    m̂_g = m̃_g + (T̂ − S̃)/G,

so Σ m̂_g = T̂.  It reads released values only: post-processing
(docs/proofs/planner-consistency.md).  Its variances are
Var T̂ = 1/(1/v₀ + 1/(G·v₁)) and Var m̂_g = v₁·(1 − 1/G) + Var T̂/G.

>>> t, m = least_squares(100.0, 1.0, [30.0, 60.0], 1.0)
>>> round(t, 6), [round(x, 6) for x in m], round(sum(m), 6) == round(t, 6)
(96.666667, [33.333333, 63.333333], True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["discrete_laplace_variance", "gain", "least_squares"]


def discrete_laplace_variance(scale: float) -> float:
    """Var Z for Z ~ 𝓛_ℤ(scale): 2e^{−1/s}/(1 − e^{−1/s})²."""
    if scale <= 0:
        return 0.0
    r = math.exp(-1.0 / scale)
    return 2 * r / (1 - r) ** 2


def least_squares(
    total: float, v_total: float, marginals: Sequence[float], v_marginal: float
) -> tuple[float, list[float]]:
    """The consistent ``(total, marginals)`` (see the module docstring)."""
    g = len(marginals)
    s = float(sum(marginals))
    w0, w1 = 1.0 / v_total, 1.0 / (g * v_marginal)
    t_hat = (total * w0 + s * w1) / (w0 + w1)
    shift = (t_hat - s) / g
    return t_hat, [float(m) + shift for m in marginals]


def gain(v_total: float, v_marginal: float, groups: int) -> dict[str, float]:
    """RMSE of the raw release over RMSE of the consistent one, for the total and a group."""
    v_t = 1.0 / (1.0 / v_total + 1.0 / (groups * v_marginal))
    v_m = v_marginal * (1 - 1 / groups) + v_t / groups
    return {"total": math.sqrt(v_total / v_t), "group": math.sqrt(v_marginal / v_m)}
