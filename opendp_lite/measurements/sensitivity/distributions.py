"""The data-generating distributions of sensitivity sampling, drawn from the OS CSPRNG.

Every random draw (normal, uniform, mixture, bootstrap) is made from
:func:`opendp_lite.samplers.rng.fill_uint64`; numpy generators are never used.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..._validate import check_real
from ...errors import InvalidParameter
from ...samplers.rng import fill_uint64

FloatArray = npt.NDArray[np.float64]


# ----------------------------------------------------------------------------------------------
# Uniform and normal variates from the OS CSPRNG


def _uniform01(n: int) -> FloatArray:
    """``n`` uniform floats in the open interval (0, 1): (⌊w / 2^11⌋ + 1/2) · 2^−53."""
    words = fill_uint64(n) >> np.uint64(11)
    return (words.astype(np.float64) + 0.5) * 2.0**-53


def _standard_normal(n: int) -> FloatArray:
    """``n`` standard normal floats by the Box–Muller transform of OS uniforms."""
    pairs = (n + 1) // 2
    u = _uniform01(2 * pairs)
    r = np.sqrt(-2.0 * np.log(u[:pairs]))
    theta = 2.0 * math.pi * u[pairs:]
    return np.concatenate([r * np.cos(theta), r * np.sin(theta)])[:n]


def _uniform_index(size: int, n: int) -> npt.NDArray[np.int64]:
    """``n`` exact uniform draws from {0, …, size−1}: 64-bit words below a multiple of size."""
    limit = np.uint64((2**64 // size) * size - 1)  # accept w <= limit: no modulo bias
    out = np.empty(0, dtype=np.uint64)
    while len(out) < n:
        words = fill_uint64(n - len(out) + 8)
        out = np.concatenate([out, words[words <= limit]])
    return (out[:n] % np.uint64(size)).astype(np.int64)


def _finite(name: str, value: object) -> float:
    v = check_real(name, value)
    if not math.isfinite(v):
        raise InvalidParameter(f"{name} must be finite, got {value!r}")
    return v


# ----------------------------------------------------------------------------------------------
# Data-generating distributions


class Distribution:
    """A data-generating distribution P: ``sample(n)`` returns ``n`` records (first axis)."""

    def sample(self, n: int) -> npt.NDArray[Any]:  # pragma: no cover - abstract
        raise NotImplementedError


@dataclass(frozen=True)
class Normal(Distribution):
    """N(mean, std²) records.

    >>> Normal(0.0, 1.0).sample(3).shape
    (3,)

    Raises:
        InvalidParameter: if ``std`` is negative or a parameter is not finite.
    """

    mean: float
    std: float

    def __post_init__(self) -> None:
        _finite("mean", self.mean)
        if _finite("std", self.std) < 0:
            raise InvalidParameter(f"std must be >= 0, got {self.std!r}")

    def sample(self, n: int) -> FloatArray:
        return float(self.mean) + float(self.std) * _standard_normal(n)


@dataclass(frozen=True)
class Uniform(Distribution):
    """Uniform records on [low, high).

    Raises:
        InvalidParameter: if ``low > high`` or a bound is not finite.
    """

    low: float
    high: float

    def __post_init__(self) -> None:
        if _finite("low", self.low) > _finite("high", self.high):
            raise InvalidParameter(f"low must be <= high, got ({self.low!r}, {self.high!r})")

    def sample(self, n: int) -> FloatArray:
        lo, hi = float(self.low), float(self.high)
        return lo + (hi - lo) * _uniform01(n)


class GaussianMixture(Distribution):
    """A mixture Σ_j w_j N(μ_j, σ_j²): ``params`` rows are ``[μ_j, σ_j]``, ``weights`` the w_j.

    >>> GaussianMixture([[0.0, 1.0]], [1.0]).sample(2).shape
    (2,)

    Raises:
        InvalidParameter: if the weights are negative or do not sum to 1 (to 1e-9), a σ_j is
        negative, or the shapes disagree.
    """

    __slots__ = ("means", "stds", "weights")

    def __init__(self, params: Sequence[Sequence[float]] | npt.ArrayLike, weights: Any) -> None:
        p = np.asarray(params, dtype=np.float64)
        w = np.asarray(weights, dtype=np.float64)
        if p.ndim != 2 or p.shape[1] != 2 or p.shape[0] == 0:
            raise InvalidParameter(
                f"params must be a non-empty k×2 array of [mean, std], got {p!r}"
            )
        if w.shape != (p.shape[0],):
            raise InvalidParameter(
                f"weights must have one entry per component ({p.shape[0]}), got {w.tolist()!r}"
            )
        if not (np.all(np.isfinite(p)) and np.all(np.isfinite(w))):
            raise InvalidParameter("params and weights must be finite")
        if np.any(p[:, 1] < 0):
            raise InvalidParameter(f"component stds must be >= 0, got {p[:, 1].tolist()!r}")
        if np.any(w < 0) or abs(math.fsum(w.tolist()) - 1.0) > 1e-9:
            raise InvalidParameter(f"weights must be >= 0 and sum to 1, got {w.tolist()!r}")
        self.means: FloatArray = p[:, 0].copy()
        self.stds: FloatArray = p[:, 1].copy()
        self.weights: FloatArray = w.copy()

    def __repr__(self) -> str:
        rows = [[float(a), float(b)] for a, b in zip(self.means, self.stds, strict=True)]
        return f"GaussianMixture({rows!r}, {self.weights.tolist()!r})"

    def sample(self, n: int) -> FloatArray:
        cdf = np.cumsum(self.weights)
        cdf[-1] = np.inf  # every uniform falls in some component
        component = np.searchsorted(cdf, _uniform01(n), side="right")
        return self.means[component] + self.stds[component] * _standard_normal(n)

    def expected_abs_difference(self) -> float:
        r"""E|X − X′| for X, X′ i.i.d. from the mixture, in closed form.

        E|X − X′| = Σ_i Σ_j w_i w_j E|N(μ_i − μ_j, σ_i² + σ_j²)|, with
        E|N(μ, s²)| = s √(2/π) e^(−μ²/(2s²)) + μ erf(μ / (s√2)).  For two equal-weight
        components this is the seed's (σ_M + σ_F + √(2(σ_M²+σ_F²)) (e^(−m²) + √π m erf(m)))/(2√π).
        It is the expected sensitivity of the identity query on one record (n = 1, L1 norm).
        """
        total = []
        for i in range(len(self.means)):
            for j in range(len(self.means)):
                mu = float(self.means[i] - self.means[j])
                s = math.sqrt(float(self.stds[i]) ** 2 + float(self.stds[j]) ** 2)
                if s == 0:
                    e = abs(mu)
                else:
                    e = s * math.sqrt(2 / math.pi) * math.exp(-(mu**2) / (2 * s * s))
                    e += mu * math.erf(mu / (s * math.sqrt(2)))
                total.append(float(self.weights[i] * self.weights[j]) * e)
        return math.fsum(total)


class Empirical(Distribution):
    """The bootstrap distribution of a user's data: records drawn uniformly with replacement.

    Raises:
        InvalidParameter: if ``data`` is empty.
    """

    __slots__ = ("data",)

    def __init__(self, data: npt.ArrayLike) -> None:
        arr = np.asarray(data)
        if arr.ndim == 0 or len(arr) == 0:
            raise InvalidParameter("data for an Empirical distribution must be a non-empty array")
        self.data: npt.NDArray[Any] = arr

    def __repr__(self) -> str:
        return f"Empirical(<{len(self.data)} records>)"

    def sample(self, n: int) -> npt.NDArray[Any]:
        return self.data[_uniform_index(len(self.data), n)]


class UserDistribution(Distribution):
    """Any user callable ``n -> n records``.  It must draw its randomness from
    :mod:`opendp_lite.samplers.rng` for the sampled sensitivity to be trustworthy.

    Raises:
        InvalidParameter: at sampling time, if the callable returns the wrong number of records.
    """

    __slots__ = ("function",)

    def __init__(self, function: Callable[[int], npt.ArrayLike]) -> None:
        if not callable(function):
            raise InvalidParameter(f"a UserDistribution needs a callable, got {function!r}")
        self.function = function

    def __repr__(self) -> str:
        return f"UserDistribution({getattr(self.function, '__name__', 'function')})"

    def sample(self, n: int) -> npt.NDArray[Any]:
        out = np.asarray(self.function(n))
        if out.ndim == 0 or len(out) != n:
            raise InvalidParameter(
                f"the user distribution returned {out.shape}, wanted {n} records"
            )
        return out
