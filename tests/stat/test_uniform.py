"""χ² tests of the exact uniform sampler, with a biased control the test must reject.

α = 1e-4 and n fixed up front; the control (3 random bits folded onto 0..5, i.e. modulo bias)
has 0 and 1 twice as likely as the rest, and must be rejected.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from opendp_lite.samplers.uniform import (
    sample_permutation,
    sample_uniform_below,
    sample_uniform_bits,
)
from tests.stat._reference import assert_fits, assert_rejects, chi2_power, chi2_pvalue

N = 6000


def uniform_pvalue(draw: Callable[[], int], k: int, n: int = N) -> float:
    counts = np.bincount([draw() for _ in range(n)], minlength=k)
    return chi2_pvalue(counts, [1.0] * k)


def test_uniform_below_is_uniform() -> None:
    assert_fits(uniform_pvalue(lambda: sample_uniform_below(6), 6))


def test_modulo_biased_control_is_rejected() -> None:
    # 3 bits mod 6: 0 and 1 have probability 2/8, the others 1/8
    power = chi2_power(N, [2, 2, 1, 1, 1, 1], [1] * 6)
    assert_rejects(uniform_pvalue(lambda: sample_uniform_bits(3) % 6, 6), power, "(bits mod 6)")


def test_uniform_below_large_n_range() -> None:
    n = 2**70 + 12345
    draws = [sample_uniform_below(n) for _ in range(2000)]
    assert all(0 <= d < n for d in draws)
    # the top bit position is reached: mean close to n/2 (CLT, 6 sigma)
    mean = sum(draws) / len(draws)
    assert abs(mean - n / 2) < 6 * (n / (12**0.5)) / len(draws) ** 0.5


def test_permutations_are_uniform_over_s3() -> None:
    index = {
        p: i
        for i, p in enumerate([(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)])
    }
    assert_fits(uniform_pvalue(lambda: index[tuple(sample_permutation(3).tolist())], 6))
