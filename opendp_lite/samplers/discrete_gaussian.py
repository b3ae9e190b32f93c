"""Exact discrete Gaussian sampler (CKS20 Algorithm 3).

``sample_discrete_gaussian(scale)`` has law
Pr[Z = z] = exp(−z²/(2σ²)) / Σ_{y∈ℤ} exp(−y²/(2σ²)) for z ∈ ℤ, with σ = ``scale`` a rational
> 0; ``scale = 0`` returns 0.

>>> sample_discrete_gaussian(0)
0
"""

from __future__ import annotations

from typing import Any

import gmpy2

from .bernoulli import sample_bernoulli_exp, to_rational
from .discrete_laplace import sample_discrete_laplace

__all__ = ["sample_discrete_gaussian"]


def sample_discrete_gaussian(scale: Any) -> int:
    r"""Exact discrete Gaussian variable:  Pr[Z = z] ∝ exp(−z² / (2·scale²)),  z ∈ ℤ.

    CKS20 Algorithm 3: with t = ⌊σ⌋ + 1, draw Y ~ discrete Laplace(t) and accept it with
    probability exp(−(|Y| − σ²/t)² / (2σ²)) (an exact Bernoulli(exp(−γ)), γ rational);
    otherwise repeat.  The accepted Y has the law above; the expected number of rounds is
    below 1.6 for every σ (CKS20, Theorem 7 / Corollary 8).

    Raises:
        ValueError: if ``scale`` is negative or not finite.
    """
    sigma = to_rational(scale, "scale")
    if sigma < 0:
        raise ValueError(f"scale must be >= 0, got {sigma}")
    if sigma == 0:
        return 0
    sigma2 = sigma * sigma
    t = gmpy2.mpq(gmpy2.f_div(sigma.numerator, sigma.denominator) + 1)
    center = sigma2 / t
    two_sigma2 = 2 * sigma2
    while True:
        y = sample_discrete_laplace(t)
        d = abs(y) - center
        if sample_bernoulli_exp(d * d / two_sigma2):
            return y
