"""Uniform integers and permutations from the OS CSPRNG, by rejection (no modulo bias).

``sample_uniform_below(n)`` is uniform on ``{0, …, n−1}``:  Pr[out = i] = 1/n.

>>> 0 <= sample_uniform_below(10) < 10
True
>>> sorted(sample_permutation(5).tolist())
[0, 1, 2, 3, 4]
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .rng import fill_bytes

__all__ = ["sample_permutation", "sample_uniform_below", "sample_uniform_bits"]


def sample_uniform_bits(bits: int) -> int:
    """A uniform integer in ``[0, 2**bits)``: Pr[out = i] = 2^−bits."""
    if bits < 0:
        raise ValueError(f"bits must be >= 0, got {bits}")
    if bits == 0:
        return 0
    nbytes = (bits + 7) // 8
    return int.from_bytes(fill_bytes(nbytes), "little") >> (8 * nbytes - bits)


def sample_uniform_below(n: int) -> int:
    """A uniform integer in ``[0, n)``: Pr[out = i] = 1/n, by rejection from ⌈log2 n⌉ bits.

    Each round accepts with probability > 1/2, so the expected number of rounds is < 2.

    Raises:
        ValueError: if ``n <= 0``.
    """
    n = int(n)
    if n <= 0:
        raise ValueError(f"n must be > 0, got {n}")
    bits = (n - 1).bit_length()
    while True:
        v = sample_uniform_bits(bits)
        if v < n:
            return v


def sample_permutation(n: int) -> npt.NDArray[np.int64]:
    """A uniformly random permutation of ``0..n−1`` (Fisher–Yates with exact uniform draws)."""
    perm = np.arange(n, dtype=np.int64)
    for i in range(n - 1, 0, -1):
        j = sample_uniform_below(i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    return perm
