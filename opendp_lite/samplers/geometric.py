"""Exact geometric sampler with rational rate (the building block of CKS20 Algorithm 2).

``sample_geometric(gamma)`` has law  Pr[G = g] = (1 − e^{−γ}) · e^{−γ g},  g ∈ {0, 1, 2, …}.

>>> sample_geometric(1000) >= 0
True
"""

from __future__ import annotations

from typing import Any

import gmpy2

from .bernoulli import sample_bernoulli_exp, to_rational
from .uniform import sample_uniform_below

__all__ = ["sample_geometric"]

_ONE = gmpy2.mpq(1)


def sample_geometric(gamma: Any) -> int:
    r"""Exact geometric variable with rate γ = s/t > 0 (rational):

        Pr[G = g] = (1 − e^{−γ}) e^{−γ g}  for g = 0, 1, 2, …

    As in CKS20 Algorithm 2: X = U + t·V, where U is uniform on {0, …, t−1} conditioned on a
    Bernoulli(exp(−U/t)) success, and V counts Bernoulli(exp(−1)) successes before the first
    failure; then Pr[X = x] ∝ e^{−x/t}, and G = ⌊X / s⌋ has the law above.

    Raises:
        ValueError: if ``gamma`` is not a finite rational > 0.
    """
    g = to_rational(gamma, "gamma")
    if g <= 0:
        raise ValueError(f"gamma must be > 0, got {g}")
    s, t = int(g.numerator), int(g.denominator)
    while True:
        u = sample_uniform_below(t)
        if sample_bernoulli_exp(gmpy2.mpq(u, t)):
            break
    v = 0
    while sample_bernoulli_exp(_ONE):
        v += 1
    return (u + t * v) // s
