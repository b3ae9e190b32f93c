"""Exact discrete Laplace sampler (CKS20 Algorithm 2).

``sample_discrete_laplace(scale)`` has law  Pr[Z = z] = (1 − e^{−1/b}) / (1 + e^{−1/b}) · e^{−|z|/b}
for z ∈ ℤ, with b = ``scale`` a rational > 0; ``scale = 0`` returns 0.

>>> sample_discrete_laplace(0)
0
"""

from __future__ import annotations

from typing import Any

from .bernoulli import to_rational
from .geometric import sample_geometric
from .rng import fill_bytes

__all__ = ["sample_discrete_laplace"]


def sample_discrete_laplace(scale: Any) -> int:
    r"""Exact discrete Laplace variable:  Pr[Z = z] ∝ exp(−|z| / scale),  z ∈ ℤ.

    CKS20 Algorithm 2: Y ~ Geometric(rate 1/scale) (see :func:`sample_geometric`), a fair
    sign bit B; the pair (B = negative, Y = 0) is rejected so that 0 is not counted twice;
    return (−1)^B · Y.  ``scale`` is taken exactly (a float is its exact binary value).
    ``scale = 0`` returns 0 (a point mass).

    Raises:
        ValueError: if ``scale`` is negative or not finite.
    """
    b = to_rational(scale, "scale")
    if b < 0:
        raise ValueError(f"scale must be >= 0, got {b}")
    if b == 0:
        return 0
    rate = 1 / b
    while True:
        y = sample_geometric(rate)
        negative = fill_bytes(1)[0] & 1
        if negative and y == 0:
            continue
        return -y if negative else y
