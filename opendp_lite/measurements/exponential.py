"""The exponential mechanism on a finite candidate set with a user scoring function.

An opendp_lite extension (OpenDP 0.16 has no general exponential mechanism): the release is
r ∈ ``candidates`` with Pr[r] ∝ exp(u(x, r)/scale), sampled exactly as report-noisy-max with
Gumbel noise: the certified vectorised race of :mod:`opendp_lite.samplers.selection` when the
scores are ints/floats exactly representable in a numpy int64/float64 array, else the exact
rejection sampler on rationals (the same law).

>>> import opendp_lite.prelude as dp
>>> dp.enable_features("honest-but-curious")
>>> space = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
>>> def count(data, option):
...     return sum(1 for v in data if v == option)
>>> mode = dp.m.make_exponential(*space, ["a", "b"], count, sensitivity=1, epsilon=1.0)
>>> mode(["a"] * 100 + ["b"] * 3)
'a'
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from .._arith import Rational, q, up
from .._registry import constructor
from .._spine import release
from .._validate import check_finite_nonneg
from ..core import Domain, Measurement, Metric, assert_features
from ..errors import FailedFunction, FailedMap, InvalidParameter
from ..measures import max_divergence
from ..samplers.selection import noisy_top_k, sample_exponential_mechanism

__all__ = ["make_exponential", "then_exponential"]

C = TypeVar("C")


def _score(value: object) -> Rational:
    """A score's exact value: ints, floats and Python rationals as they are, others via float."""
    exact = isinstance(value, (int, float)) or (
        isinstance(value, numbers.Rational) and not isinstance(value, np.generic)
    )
    if isinstance(value, bool) or not exact:
        try:
            value = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise FailedFunction(f"a score must be a real number, got {value!r}") from None
    try:
        return q(value)
    except (FailedMap, ValueError, OverflowError):
        raise FailedFunction(f"every score must be finite, got {value!r}") from None


def _score_array(values: list[Any]) -> npt.NDArray[Any] | None:
    """The scores as an int64/float64 array when that holds every value exactly, else None.

    numpy converts a list of Python/numpy ints, floats and bools to int64 or float64; in a
    float64 array an int is exact iff it was below 2^53 in magnitude, which the check on the
    largest magnitude guarantees.  Non-finite, object and string arrays go to the exact path.
    """
    try:
        arr = np.asarray(values)
    except (ValueError, TypeError, OverflowError):
        return None
    if arr.ndim != 1 or arr.dtype.kind not in "biuf":
        return None
    if arr.dtype.kind == "b":
        return arr.astype(np.int64)
    if arr.dtype.kind == "f":
        if arr.dtype.itemsize > 8:  # long double: not exact in float64
            return None
        arr = arr.astype(np.float64, copy=False)
        big = float(np.max(np.abs(arr)))  # nan/inf fail the test below
        if not big < 2.0**53 and not _all_floats(values):
            return None
        if not np.isfinite(big):
            return None
    return arr


def _all_floats(values: list[Any]) -> bool:
    return all(isinstance(v, (float, np.floating)) for v in values)


@constructor
def make_exponential(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    candidates: Sequence[C],
    scoring_function: Callable[[Any, C], float],
    sensitivity: float,
    scale: float | None = None,
    epsilon: float | None = None,
    monotonic: bool = False,
) -> Measurement[Any, C, Any, float]:
    r"""Release a candidate r with Pr[r] ∝ exp(u(x, r) / scale) (McSherry & Talwar 2007).

    ``scoring_function(x, r)`` = u(x, r) must satisfy |u(x, r) − u(x′, r)| <= Δu·d(x, x′) for
    every candidate, with Δu = ``sensitivity``; it is trusted as written (this needs the
    ``honest-but-curious`` feature).  ``monotonic=True`` declares that, between any two
    neighbours, all scores move in the same direction.  Give exactly one of ``scale`` and
    ``epsilon``; ``epsilon`` sets scale = c·Δu/ε rounded up (c = 2, or 1 if monotonic).

    Privacy map (MaxDivergence), in ℚ, rounded up:
        ε(d_in) = c·Δu·d_in / scale,   c = 2 (1 when monotonic).

    Raises:
        FeatureNotEnabled: unless ``honest-but-curious`` is enabled.
        InvalidParameter: if ``candidates`` is empty, ``sensitivity``/``scale``/``epsilon``
            is negative or not finite, or not exactly one of ``scale``, ``epsilon`` is given.
        FailedFunction: at invocation, if a score is not a finite real number.

    Proof: docs/proofs/make_exponential.md

    >>> import opendp_lite.prelude as dp
    >>> dp.enable_features("honest-but-curious")
    >>> space = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    >>> def closeness(data, c):
    ...     return -abs(sum(1 for v in data if v <= c) - len(data) // 2)
    >>> median = dp.m.make_exponential(*space, range(10), closeness, sensitivity=1, scale=2.0)
    >>> median.map(1)
    1.0
    >>> median(list(range(10)) * 50) in range(10)
    True
    """
    assert_features("honest-but-curious")
    cands = list(candidates)
    if not cands:
        raise InvalidParameter("candidates must not be empty")
    delta_u = check_finite_nonneg("sensitivity", sensitivity)
    if (scale is None) == (epsilon is None):
        raise InvalidParameter(f"give exactly one of scale and epsilon, got {scale=}, {epsilon=}")
    c = 1 if monotonic else 2
    if epsilon is not None:
        eps = check_finite_nonneg("epsilon", epsilon)
        if eps == 0:
            raise InvalidParameter("epsilon must be > 0 to derive a scale, got 0.0")
        scale = up(q(c) * q(delta_u) / q(eps))
    scale = check_finite_nonneg("scale", scale)
    s = s_q = q(scale)

    def function(arg: Any) -> C:
        raw = [scoring_function(arg, r) for r in cands]
        arr = _score_array(raw) if s > 0 else None
        if arr is not None:
            return cands[noisy_top_k(arr, scale, 1, "gumbel")[0]]
        scores = [_score(v) for v in raw]
        if s == 0:
            best = max(scores)
            tied = [i for i, v in enumerate(scores) if v == best]
            return cands[tied[sample_exponential_mechanism([q(0)] * len(tied))]]
        best = max(scores)
        return cands[sample_exponential_mechanism([(best - v) / s for v in scores])]

    def privacy_map(d_in: Any) -> float:
        if d_in == 0 or delta_u == 0:
            return 0.0
        if s == 0:
            return float("inf")
        return up(q(c) * q(delta_u) * q(d_in) / s_q)

    return Measurement(input_domain, input_metric, max_divergence(), function, privacy_map)


then_exponential = release(make_exponential)
