r"""Certified vectorised exact noise: the same laws as :mod:`.noise_ref`, at near-numpy speed.

Every function here has *exactly* the output law of its reference in :mod:`.noise_ref`
(see ``docs/proofs/vectorized_sampling.md``; lemmas S1–S7 in ``docs/proofs/sampling/``):

* ``int_noise(x, scale, dist, T)``          = clamp_T(x_i + Z_i),  Z_i ~ 𝓛_ℤ(scale) / 𝓝_ℤ(scale)
* ``float_noise(x, scale, k, dist, T)``     = sat_T(round_T(2^k·(round_k(x_i) + Z_i))),
  Z_i ~ 𝓛_ℤ(scale/2^k) / 𝓝_ℤ(scale/2^k)
* ``int_noise_scalar`` / ``float_noise_scalar``: one Python scalar, same law;
* ``discrete_laplace_batch(n, scale)`` / ``discrete_gaussian_batch(n, scale)``: n iid draws.

How (one *attempt* per lane, repeated for rejected lanes with fresh bits):

* the magnitude is M = L·N + R with L = 2^a ≈ T/16 or T/256 (T the discrete-Laplace scale of the
  proposal, in grid units), N ~ Geometric(e^{−L/T}) by inversion N = ⌊−ln(U)·T/L⌋, and R
  uniform on {0, …, L−1} accepted with probability e^{−R/T} (test W < e^{−R/T});
  a fair sign, and the pair (negative, M = 0) is rejected.  The accepted ±M is
  𝓛_ℤ(T); the Gaussian adds the CKS20 test V < exp(−(M − σ²/t)²/(2σ²)), t = ⌊σ⌋ + 1 (the
  vector path with a > 0 merges it with R's test: W < exp(−R/T − (M − σ²/t)²/(2σ²))).
* R's low-order bits are uniform bits, so at k = −1074 the noisy value's bits below the
  output precision never need a logarithm: only the *top* 64 bits of R are drawn; the rest
  stay unrevealed unless needed.  The output float is certified with an error-free TwoSum
  of the grid value and the noise: both ends of the exact value's interval must round to the
  same float (round-to-nearest is monotone).
* an attempt takes one or two 64-bit words of ``fill_uint64`` (bit layouts in the proof);
  attempts form an i.i.d. stream and each chunk keeps the first accepted ones in order.
* each comparison is first decided with float64 interval bounds (error margins proved in the
  proof file and widened by a factor ≥ 2^8 over numpy's documented ulp errors); a lane whose
  bounds cannot decide goes to an exact gmpy2 path that **continues from the same bits**
  (revealing more bits of U, W, V and R from :func:`~.rng.fill_bytes`), never a resample.

``certification_margin(band)`` widens every float decision band (test mode: most lanes then
take the exact path); ``fallback_counts()`` reports how many lanes did.

>>> import warnings
>>> from ..rng import scripted_randomness
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     with scripted_randomness(seed=b"doc"):
...         a = float_noise(np.zeros(3), 1, -1074, "laplace", "f64")
...     with scripted_randomness(seed=b"doc"):
...         b = float_noise(np.zeros(3), 1, -1074, "laplace", "f64")
>>> bool((a == b).all()), a.dtype
(True, dtype('float64'))
>>> int_noise(np.array([1, 2, 3]), 0, "gaussian", "i32")
array([1, 2, 3], dtype=int32)
"""

from __future__ import annotations

import numpy as np  # noqa: F401  (the doctests above use np)

from .attempt import (
    _attempt as _attempt,
)
from .attempt import (
    _attempt_exact as _attempt_exact,
)
from .attempt import (
    _attempt_exact_merged as _attempt_exact_merged,
)
from .attempt import (
    _cert_below as _cert_below,
)
from .attempt import (
    _counts as _counts,
)
from .attempt import (
    _exact_magnitude as _exact_magnitude,
)
from .attempt import (
    _exp_neg_bounds as _exp_neg_bounds,
)
from .attempt import (
    _full_R as _full_R,
)
from .attempt import (
    _geometric as _geometric,
)
from .attempt import (
    _LazyU as _LazyU,
)
from .attempt import (
    _merged as _merged,
)
from .attempt import (
    _reveal as _reveal,
)
from .attempt import (
    _v_prefix as _v_prefix,
)
from .attempt import (
    _wide_prefixes as _wide_prefixes,
)
from .attempt import (
    certification_margin as certification_margin,
)
from .attempt import (
    fallback_counts as fallback_counts,
)
from .attempt import (
    reset_fallback_counts as reset_fallback_counts,
)
from .plan import (
    _KMIN as _KMIN,
)
from .plan import (
    _MAXF as _MAXF,
)
from .plan import (
    _N_MAX as _N_MAX,
)
from .plan import (
    CHUNK as CHUNK,
)
from .plan import (
    EPS as EPS,
)
from .plan import (
    F64 as F64,
)
from .plan import (
    TINY as TINY,
)
from .plan import (
    U64 as U64,
)
from .plan import (
    BoolA as BoolA,
)
from .plan import (
    Dist as Dist,
)
from .plan import (
    _as_float as _as_float,
)
from .plan import (
    _attempt_bytes as _attempt_bytes,
)
from .plan import (
    _floor_log2 as _floor_log2,
)
from .plan import (
    _grid_scale as _grid_scale,
)
from .plan import (
    _Plan as _Plan,
)
from .plan import (
    _plan as _plan,
)
from .plan import (
    _plan_for as _plan_for,
)
from .plan import (
    _rate as _rate,
)
from .plan import (
    _Reservoir as _Reservoir,
)
from .plan import (
    _scalar_plan as _scalar_plan,
)
from .release import (
    SMALL as SMALL,
)
from .release import (
    SMALL_LIMIT as SMALL_LIMIT,
)
from .release import (
    _discrete_batch as _discrete_batch,
)
from .release import (
    _small_float as _small_float,
)
from .release import (
    _small_int as _small_int,
)
from .release import (
    discrete_gaussian_batch as discrete_gaussian_batch,
)
from .release import (
    discrete_laplace_batch as discrete_laplace_batch,
)
from .release import (
    float_noise as float_noise,
)
from .release import (
    float_noise_scalar as float_noise_scalar,
)
from .release import (
    float_noise_scalar_fn as float_noise_scalar_fn,
)
from .release import (
    float_noise_small_fn as float_noise_small_fn,
)
from .release import (
    int_noise as int_noise,
)
from .release import (
    int_noise_scalar as int_noise_scalar,
)
from .release import (
    int_noise_scalar_fn as int_noise_scalar_fn,
)
from .release import (
    int_noise_small_fn as int_noise_small_fn,
)
from .reservoir import (
    _RES_FIRST as _RES_FIRST,
)
from .reservoir import (
    _RES_MAX as _RES_MAX,
)
from .reservoir import (
    _batch_draws as _batch_draws,
)
from .reservoir import (
    _draw as _draw,
)
from .reservoir import (
    _refill as _refill,
)
from .reservoir import (
    _take as _take,
)
from .rounding import (
    _float_out as _float_out,
)
from .rounding import (
    _float_x as _float_x,
)
from .rounding import (
    _grid_index as _grid_index,
)
from .rounding import (
    _round_int_f32 as _round_int_f32,
)
from .rounding import (
    _round_lazy_f64 as _round_lazy_f64,
)
from .rounding import (
    _round_out as _round_out,
)
from .scalar import (
    _Pool as _Pool,
)
from .scalar import (
    _scalar_draw as _scalar_draw,
)
from .scalar import (
    _scalar_float_x as _scalar_float_x,
)
from .scalar import (
    _scalar_z as _scalar_z,
)
from .scalar import (
    _small_pool as _small_pool,
)
from .scalar import (
    _z_from as _z_from,
)
from .vector import (
    _Accepted as _Accepted,
)
from .vector import (
    _accepted as _accepted,
)
from .vector import (
    _accepted_lane as _accepted_lane,
)
from .vector import (
    _draw_attempts as _draw_attempts,
)
from .vector import (
    _exact_lane as _exact_lane,
)
from .vector import (
    _float_chunk as _float_chunk,
)
from .vector import (
    _gradual_underflow as _gradual_underflow,
)
from .vector import (
    _halves as _halves,
)
from .vector import (
    _high32 as _high32,
)
from .vector import (
    _Lanes as _Lanes,
)
from .vector import (
    _z_vector as _z_vector,
)
from .vector import (
    _zeros64 as _zeros64,
)

__all__ = [
    "CHUNK",
    "certification_margin",
    "discrete_gaussian_batch",
    "discrete_laplace_batch",
    "fallback_counts",
    "float_noise",
    "float_noise_scalar",
    "float_noise_scalar_fn",
    "float_noise_small_fn",
    "int_noise",
    "int_noise_scalar",
    "int_noise_scalar_fn",
    "int_noise_small_fn",
    "reset_fallback_counts",
]
