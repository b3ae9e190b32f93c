"""The dispatch layer the noise mechanisms call, for scalars and vectors.

Every entry point dispatches to the certified vectorised samplers in
:mod:`opendp_lite.samplers.fast`, whose output law is identical to the exact reference in
:mod:`opendp_lite.samplers.noise_ref` (proof: ``docs/proofs/vectorized_sampling.md``; tests:
``tests/stat/test_fast_stat.py`` compare the two).  The reference loops stay available as
``*_reference`` for tests and audits.  Callers only ever see these four functions:

* ``int_noise(x, scale, dist, T)``          -> array of carrier ``T``: clamp_T(x_i + Z_i)
* ``float_noise(x, scale, k, dist, T)``     -> array of carrier ``T``: see ``float_noise_ref``
* ``int_noise_scalar`` / ``float_noise_scalar``: the same laws for one Python scalar.

The Z_i are independent.

>>> int_noise(np.array([1, 2, 3]), 0, "laplace", "i32")
array([1, 2, 3], dtype=int32)
>>> float_noise(np.array([0.25, 1.0]), 0, -1, "gaussian", "f32")
array([0.5, 1. ], dtype=float32)
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from .._types import carrier_dtype
from . import fast
from .bernoulli import to_rational
from .noise_ref import Dist, float_noise_ref, int_noise_ref

__all__ = [
    "CHUNK",
    "SMALL",
    "float_noise",
    "float_noise_reference",
    "float_noise_scalar",
    "float_noise_scalar_fn",
    "float_noise_scalar_reference",
    "float_noise_small_fn",
    "int_noise",
    "int_noise_reference",
    "int_noise_scalar",
    "int_noise_scalar_fn",
    "int_noise_scalar_reference",
    "int_noise_small_fn",
]

#: Elements processed per chunk (bounds the size of intermediate lists).
CHUNK = 4096


def int_noise_scalar_reference(x: int, scale: Any, dist: Dist, T: str) -> int:
    """clamp_T(x + Z), Z ~ 𝓛_ℤ(scale) or 𝓝_ℤ(scale)."""
    return int_noise_ref(x, to_rational(scale, "scale"), dist, T)


def float_noise_scalar_reference(
    x: float, scale: Any, k: int, dist: Dist, T: Literal["f32", "f64"]
) -> float:
    """sat_T(round_T(2^k·(round_k(x) + Z))), Z ~ 𝓛_ℤ(scale/2^k) or 𝓝_ℤ(scale/2^k)."""
    return float_noise_ref(float(x), to_rational(scale, "scale"), k, dist, T)


def int_noise_reference(x: npt.NDArray[Any], scale: Any, dist: Dist, T: str) -> npt.NDArray[Any]:
    """Element-wise :func:`int_noise_scalar` with independent noise; carrier dtype out."""
    s = to_rational(scale, "scale")
    out = np.empty(len(x), dtype=carrier_dtype(T))
    for start in range(0, len(x), CHUNK):
        chunk = x[start : start + CHUNK].tolist()
        out[start : start + len(chunk)] = [int_noise_ref(v, s, dist, T) for v in chunk]
    return out


def float_noise_reference(
    x: npt.NDArray[Any], scale: Any, k: int, dist: Dist, T: Literal["f32", "f64"]
) -> npt.NDArray[Any]:
    """Element-wise :func:`float_noise_scalar` with independent noise; carrier dtype out."""
    s = to_rational(scale, "scale")
    out = np.empty(len(x), dtype=carrier_dtype(T))
    for start in range(0, len(x), CHUNK):
        chunk = x[start : start + CHUNK].tolist()
        out[start : start + len(chunk)] = [float_noise_ref(v, s, k, dist, T) for v in chunk]
    return out


# The paths the mechanisms call: the certified fast samplers (identical law to the references).
int_noise = fast.int_noise
float_noise = fast.float_noise
int_noise_scalar = fast.int_noise_scalar
float_noise_scalar = fast.float_noise_scalar
# the scalar paths with their plan looked up once, at construction (the same law per call)
int_noise_scalar_fn = fast.int_noise_scalar_fn
float_noise_scalar_fn = fast.float_noise_scalar_fn
# the small-vector paths (n <= SMALL) with their plan looked up once (the same law per call)
SMALL = fast.SMALL
int_noise_small_fn = fast.int_noise_small_fn
float_noise_small_fn = fast.float_noise_small_fn
