r"""Sensitivity sampling: random differential privacy for queries without a usable worst case.

Rubinstein & Aldà (ICML 2017, "Pain-free random differential privacy with sensitivity
sampling") estimate a *typical* sensitivity by drawing neighbouring datasets from a
data-generating distribution P:  for i = 1..m, draw D ~ P^(n−1) and x, x′ ~ P, and record

    G_i = ‖f(D ∪ {x}) − f(D ∪ {x′})‖      (L1 or L2 norm)

The sampled sensitivity is the order statistic Δ̂ = G_(k).  By the one-sided DKW inequality
(Massart 1990), with probability ≥ 1 − ρ over the sampling, F(Δ̂) ≥ k/m − √(ln(1/ρ)/(2m)),
where F is the law of G.  A mechanism calibrated to Δ̂ is therefore ε-DP on a random pair of
neighbours except with probability at most

    γ = ρ + (1 − k/m) + √(ln(1/ρ) / (2m)),

which is *random* differential privacy ((ε, γ)-RDP, Hall, Rinaldo & Wasserman 2012).  This is
weaker than worst-case DP, so a measurement built on Δ̂ (:func:`make_random_dp`) has the output
measure :class:`RandomDivergence`, printed e.g. ``RandomMaxDivergence(gamma=0.05)``.  Composition
constructors that expect ``MaxDivergence`` refuse it; relabelling it as worst-case DP needs the
explicit opt-in ``enable_features("random-dp")`` and :func:`make_random_dp_as_worst_case`.

Every random draw (normal, uniform, mixture, bootstrap) is made from
:func:`opendp_lite.samplers.rng.fill_uint64`; numpy generators are never used.

>>> mixture = GaussianMixture([[178.0, 7.0], [162.0, 6.5]], [0.5, 0.5])
>>> round(mixture.expected_abs_difference(), 2)
11.99
>>> config = sampler_config(gamma=0.05)
>>> config.m, config.k
(1305, 1305)
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, TypeVar

import numpy as np
import numpy.typing as npt

from .. import _arith
from .._validate import check_int, check_real
from ..core import Domain, Measurement, Metric
from ..domains import VectorDomain
from ..errors import FailedMap, InvalidParameter, NotImplementedForType
from ..measures import (
    MaxDivergence,
    RandomDivergence,
    ZeroConcentratedDivergence,
    check_gamma,
)
from ..metrics import (
    AbsoluteDistance,
    ChangeOneDistance,
    DiscreteDistance,
    HammingDistance,
    L1Distance,
    L2Distance,
)
from ..samplers.rng import fill_uint64

__all__ = [
    "Distribution",
    "Empirical",
    "GaussianMixture",
    "L1Norm",
    "L1SensitivityNorm",
    "L2Norm",
    "L2SensitivityNorm",
    "Normal",
    "ProgressBar",
    "SampledSensitivity",
    "SamplerConfig",
    "SensitivitySampler",
    "Uniform",
    "UserDistribution",
    "lambert_w_minus1",
    "make_random_dp",
    "sample_sensitivity",
    "sampler_config",
]

Q = TypeVar("Q")
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


# ----------------------------------------------------------------------------------------------
# Norms


#: Nonzero magnitudes for which the error-free transformations below are exact in binary64:
#: Veltkamp's split of x does not overflow, and every product of two such values is at least
#: 2^-960 (exponents sum to >= -970, so no partial product of Dekker's method underflows).
_SAFE_LO, _SAFE_HI = 2.0**-480, 2.0**480


def _as_array(x: npt.ArrayLike) -> npt.NDArray[Any]:
    """``x`` as an array without a lossy conversion: a Python int or list stays exact (numpy
    would turn ``[0, 2**63]`` into floats)."""
    if isinstance(x, (np.ndarray, np.generic, float)):
        return np.asarray(x)
    return np.asarray(x, dtype=object)


def _exact_float(x: npt.NDArray[Any]) -> FloatArray | None:
    """``x`` flattened to float64 when that conversion is exact, else None: floats up to
    binary64, integers of magnitude <= 2^53, and object arrays holding only such values."""
    flat = np.ravel(x)
    if flat.dtype.kind == "f" and flat.dtype.itemsize <= 8:
        return flat.astype(np.float64)
    if flat.dtype.kind in "biu":
        if flat.size == 0 or max(abs(int(flat.min())), abs(int(flat.max()))) <= 2**53:
            return flat.astype(np.float64)
        return None
    if flat.dtype.kind == "O" and all(
        (isinstance(v, (float, np.floating)) and np.dtype(type(v)).itemsize <= 8)
        or (isinstance(v, (int, np.integer)) and abs(int(v)) <= 2**53)
        for v in flat
    ):
        return flat.astype(np.float64)
    return None


def _operands(a: npt.ArrayLike, b: npt.ArrayLike) -> tuple[FloatArray, FloatArray] | None:
    """``a`` and ``b``, broadcast and flattened to float64 when that is exact, else None
    (larger integers and other objects then take the exact rational path)."""
    xa, xb = np.broadcast_arrays(_as_array(a), _as_array(b))
    fa, fb = _exact_float(xa), _exact_float(xb)
    if fa is None or fb is None:
        return None
    return fa, fb


def _two_diff(a: FloatArray, b: FloatArray) -> tuple[FloatArray, FloatArray]:
    """d = fl(a − b) and the error e with a − b = d + e exactly (Knuth's TwoSum)."""
    with np.errstate(over="ignore", invalid="ignore"):
        d = a - b
        bv = d - a
        e = (a - (d - bv)) + (-b - bv)
    return d, e


def _two_prod(x: FloatArray, y: FloatArray) -> tuple[FloatArray, FloatArray]:
    """p = fl(x·y) and the error r with x·y = p + r exactly (Dekker, Veltkamp's split); exact
    for magnitudes in [_SAFE_LO, _SAFE_HI] or zero."""
    split = 134217729.0  # 2^27 + 1
    cx, cy = split * x, split * y
    xh = cx - (cx - x)
    yh = cy - (cy - y)
    xl, yl = x - xh, y - yh
    p = x * y
    r = ((xh * yh - p) + xh * yl + xl * yh) + xl * yl
    return p, r


def _safe(*xs: FloatArray) -> bool:
    for x in xs:
        m = np.abs(x[x != 0])
        if m.size and not (np.all(m >= _SAFE_LO) and np.all(m <= _SAFE_HI)):
            return False
    return True


def _fsum_up(terms: FloatArray) -> float:
    """The exact sum of finite floats, rounded up once (the least float >= it).

    ``math.fsum`` keeps exact partial sums (Shewchuk) and returns their sum rounded to
    nearest; the sign of ``fsum(terms − s)``, the residual summed exactly, says on which side
    of the exact sum ``s`` lies, and ``s`` moves up until it is not below.
    """
    values = terms.tolist()
    try:
        s = math.fsum(values)
    except OverflowError:
        return math.inf
    if math.isinf(s):
        return s
    values.append(-s)
    while math.fsum(values) > 0:  # the exact sum is above s: one step up (twice at most)
        s = math.nextafter(s, math.inf)
        values[-1] = -s
    return s


def _plain(x: Any) -> Any:
    """A numpy scalar as the Python number of the same value (exact for int and float)."""
    return x.item() if isinstance(x, np.generic) else x


def _exact_diffs(a: npt.ArrayLike, b: npt.ArrayLike) -> list[_arith.Rational]:
    xa, xb = np.broadcast_arrays(np.asarray(a, dtype=object), np.asarray(b, dtype=object))
    return [
        _arith.q(_plain(x)) - _arith.q(_plain(y))
        for x, y in zip(np.ravel(xa), np.ravel(xb), strict=True)
    ]


def _scalar_up(a: object, b: object) -> float | None:
    """up(|a − b|) for two finite floats, from the TwoSum split (None: take the general path).

    With d = fl(a − b) and a − b = d + e exactly, |e| is at most half the gap next to d, so the
    exact |a − b| lies strictly between |d| and the float beside it on the side of sign(d·e).
    """
    if not (isinstance(a, float) and isinstance(b, float)):
        return None
    d = a - b
    if not math.isfinite(d):
        return None
    bv = d - a
    e = (a - (d - bv)) + (-b - bv)
    if not math.isfinite(e):
        return None
    if e == 0 or (e > 0) != (d > 0):
        return abs(d)
    return math.nextafter(abs(d), math.inf)


def _finite_inputs(a: FloatArray, b: FloatArray) -> bool:
    return bool(np.all(np.isfinite(a)) and np.all(np.isfinite(b)))


class L1Norm:
    """‖a − b‖₁ = Σ |a_i − b_i| (scalars or arrays), exactly, rounded up once.

    Two float scalars: up(|a − b|) from the same split.  Float inputs: each difference is
    split without error into d_i + e_i (TwoSum), so
    |a_i − b_i| = |d_i| + sign(d_i)·e_i, and the 2n floats are summed exactly and rounded up
    (:func:`math.fsum` with a residual check).  Other inputs (integers beyond 2^53, objects)
    are summed in exact rationals through :mod:`opendp_lite._arith`.  NaN or infinite input
    gives NaN (a sampled G must be finite).

    >>> L1Norm().compute(1.0 + 2.0**-52, -(2.0**-54)) == 1.0 + 2.0**-51  # not fl(A − B)
    True
    """

    def compute(self, a: npt.ArrayLike, b: npt.ArrayLike) -> float:
        scalar = _scalar_up(a, b)
        if scalar is not None:
            return scalar
        ops = _operands(a, b)
        if ops is not None:
            fa, fb = ops
            if not _finite_inputs(fa, fb):
                return math.nan
            d, e = _two_diff(fa, fb)
            if np.all(np.isfinite(e)):
                terms = np.concatenate([np.abs(d), np.where(d < 0, -e, e)])
                return _fsum_up(terms)
        try:
            diffs = _exact_diffs(a, b)
        except FailedMap:  # a non-finite value has no exact difference
            return math.nan
        return _arith.up(sum((abs(x) for x in diffs), _arith.q(0)))

    def __repr__(self) -> str:
        return "L1Norm()"


class L2Norm:
    """‖a − b‖₂ = √(Σ (a_i − b_i)²) (scalars or arrays): the exact sum of squares, rounded up,
    then the square root rounded up (:func:`opendp_lite._arith.sqrt_up`); for two float scalars,
    up(|a − b|) as :class:`L1Norm` computes it.

    Float inputs: a_i − b_i = d_i + e_i exactly (TwoSum), and (d + e)² = d² + 2de + e² is
    split into six floats without error (Dekker's product) when every nonzero d_i, e_i lies in
    [2^-480, 2^480]; otherwise, and for integers beyond 2^53 or objects, the sum of squares is
    exact in rationals.  NaN or infinite input gives NaN.

    >>> L2Norm().compute([3.0, 0.0], [0.0, 4.0])
    5.0
    """

    def compute(self, a: npt.ArrayLike, b: npt.ArrayLike) -> float:
        scalar = _scalar_up(a, b)  # ‖a − b‖₂ = |a − b| for two scalars
        if scalar is not None:
            return scalar
        ops = _operands(a, b)
        if ops is not None:
            fa, fb = ops
            if not _finite_inputs(fa, fb):
                return math.nan
            d, e = _two_diff(fa, fb)
            if np.all(np.isfinite(e)) and _safe(d, e):
                dd, dd_err = _two_prod(d, d)
                de, de_err = _two_prod(d, e)
                ee, ee_err = _two_prod(e, e)
                terms = np.concatenate([dd, dd_err, 2.0 * de, 2.0 * de_err, ee, ee_err])
                return _arith.sqrt_up(_fsum_up(terms))
        try:
            diffs = _exact_diffs(a, b)
        except FailedMap:
            return math.nan
        return _arith.sqrt_up(_arith.up(sum((x * x for x in diffs), _arith.q(0))))

    def __repr__(self) -> str:
        return "L2Norm()"


L1SensitivityNorm = L1Norm
L2SensitivityNorm = L2Norm

Norm = L1Norm | L2Norm


def _norm(norm: object) -> Norm:
    if isinstance(norm, (L1Norm, L2Norm)):
        return norm
    if norm in ("l1", "L1"):
        return L1Norm()
    if norm in ("l2", "L2"):
        return L2Norm()
    raise InvalidParameter(f"norm must be 'l1', 'l2', L1Norm() or L2Norm(), got {norm!r}")


# ----------------------------------------------------------------------------------------------
# The paper's choice of m and k


def lambert_w_minus1(x: float) -> float:
    """The lower real branch W₋₁(x) for x in [−1/e, 0), by Halley's iteration (float).

    >>> w = lambert_w_minus1(-0.1)
    >>> abs(w * math.exp(w) + 0.1) < 1e-15
    True
    """
    if not (-1 / math.e <= x < 0):
        raise InvalidParameter(f"W_-1 is real on [-1/e, 0), got {x!r}")
    if x == -1 / math.e:
        return -1.0
    # start below the branch point: ln(−x) − ln(−ln(−x)) for small |x|, a series near −1/e
    if x < -0.25:
        p = -math.sqrt(2 * (1 + math.e * x))
        w = -1 + p - p * p / 3
    else:
        lx = math.log(-x)
        w = lx - math.log(-lx)
    for _ in range(100):
        ew = math.exp(w)
        f = w * ew - x
        denom = ew * (w + 1) - (w + 2) * f / (2 * w + 2)
        if denom == 0:
            break
        step = f / denom
        w -= step
        if abs(step) <= 1e-15 * abs(w):
            break
    return w


@dataclass(frozen=True)
class SamplerConfig:
    """The sample size ``m``, order statistic ``k`` (1-based), DKW confidence ``rho``, and the
    ``gamma`` they achieve: γ ≥ ρ + (1 − k/m) + √(ln(1/ρ)/(2m)), rounded up."""

    m: int
    k: int
    rho: float
    gamma: float


def _gamma_bound(m: int, k: int, rho: float) -> float:
    """ρ + (1 − k/m) + √(ln(1/ρ)/(2m)), rounded up (ln(1/ρ) = −ln ρ bounded via log_down)."""
    log_inv = -_arith.log_down(rho)
    dkw = _arith.sqrt_up(_arith.div_up(log_inv, 2 * m))
    return _arith.add_up(rho, _arith.q(m - k) / m, dkw)


def _massart(config: SamplerConfig) -> SamplerConfig:
    """``config``, if Massart's one-sided DKW bound applies to it: exp(−2mτ²) = ρ <= 1/2.

    Every configuration :func:`sampler_config` computes has ρ < 0.341 (the m = 1 case; see
    ``docs/proofs/make_random_dp.md``); this refuses any that would not.
    """
    if not 0 < config.rho <= 0.5:
        raise InvalidParameter(
            f"the DKW confidence rho={config.rho!r} must be in (0, 1/2] for Massart's bound; "
            "choose another gamma or m"
        )
    return config


def sampler_config(gamma: float | None = None, m: int | None = None) -> SamplerConfig:
    r"""The paper's (m, k, ρ) for a target γ, or for a given m (then k = m), or for both.

    * γ only (sample-optimal, k = m): ρ = exp(W₋₁(−γ/(2√e)) + 1/2),
      m = ⌈ln(1/ρ)/(2(γ − ρ)²)⌉, increased until the rounded-up γ bound is ≤ γ.
    * m only: ρ = exp(W₋₁(−1/(4m))/2) minimises ρ + √(ln(1/ρ)/(2m)); k = m; γ is that bound.
    * both: ρ as for m, and the smallest k with ρ + (1 − k/m) + √(ln(1/ρ)/(2m)) ≤ γ.

    Raises:
        InvalidParameter: if γ is outside (0, 1), m < 1, neither is given, or m is too small
        for γ.
    """
    if gamma is None and m is None:
        raise InvalidParameter("give gamma, m, or both")
    if m is not None:
        m = check_int("m", m, min=1)
    if m is None:
        g = check_gamma(gamma)
        rho = math.exp(lambert_w_minus1(-g / (2 * math.sqrt(math.e))) + 0.5)
        mm = max(1, math.ceil(math.log(1 / rho) / (2 * (g - rho) ** 2)))
        while _gamma_bound(mm, mm, rho) > g:  # float slack in ρ: grow m until the bound holds
            mm += 1
        return _massart(SamplerConfig(mm, mm, rho, g))
    m = int(m)
    rho = math.exp(lambert_w_minus1(max(-1 / (4 * m), -1 / math.e)) / 2)
    floor = _gamma_bound(m, m, rho)
    if gamma is None:
        return _massart(SamplerConfig(m, m, rho, floor))
    g = check_gamma(gamma)
    if floor > g:
        raise InvalidParameter(
            f"m={m} is too small for gamma={g}: the smallest gamma it can certify is {floor}"
        )
    k = m
    while k > 1 and _gamma_bound(m, k - 1, rho) <= g:
        k -= 1
    return _massart(SamplerConfig(m, k, rho, g))


# ----------------------------------------------------------------------------------------------
# Progress bar


class ProgressBar:
    """A plain-text progress bar on stderr: ``sensitivity sampling [#####-----]  50% 500/1000``.

    >>> import io
    >>> buf = io.StringIO()
    >>> bar = ProgressBar(4, file=buf, width=4)
    >>> bar.update(2); bar.close()
    >>> buf.getvalue().splitlines()[-1].strip()
    'sensitivity sampling [####] 100% 4/4'
    """

    def __init__(
        self, total: int, *, file: IO[str] | None = None, width: int = 30, label: str = ""
    ) -> None:
        self.total = max(1, total)
        self.done = 0
        self.width = width
        self.label = label or "sensitivity sampling"
        self.file = file if file is not None else sys.stderr
        self._shown = -1

    def update(self, n: int) -> None:
        """Advance by ``n`` steps; redraws at most once per percent."""
        self.done = min(self.total, self.done + n)
        pct = 100 * self.done // self.total
        if pct != self._shown:
            self._shown = pct
            fill = self.width * self.done // self.total
            bar = "#" * fill + "-" * (self.width - fill)
            self.file.write(f"\r{self.label} [{bar}] {pct:3d}% {self.done}/{self.total}")
            self.file.flush()

    def close(self) -> None:
        """Complete the bar and end its line."""
        self.update(self.total - self.done)
        self.file.write("\n")
        self.file.flush()


# ----------------------------------------------------------------------------------------------
# The sampler


@dataclass(frozen=True)
class SampledSensitivity:
    """The result of :func:`sample_sensitivity`: Δ̂ = G_(k) and the mean of the G_i.

    Unpacks like the seed's ``sensitivity, mean = sampler.sample_sensitivity(...)``.
    ``gamma`` is the random-DP failure probability a mechanism calibrated to Δ̂ carries.
    """

    sensitivity: float
    mean: float
    gamma: float
    rho: float
    m: int
    k: int
    n: int
    norm: str
    samples: FloatArray = field(repr=False, compare=False)

    def __post_init__(self) -> None:
        """Refuse a set of fields that :func:`sample_sensitivity` could not have returned.

        What is recomputed: γ is at least the bound (m, k, ρ) certify, ρ meets Massart's
        condition (ρ <= 1/2), Δ̂ is the k-th of the m sorted, finite, non-negative draws.  What
        cannot be recomputed is whether the draws came from the distribution: that is why a
        serialized document may not carry a SampledSensitivity (``docs/serialization.md``).
        """
        m = check_int("m", self.m, min=1)
        k = check_int("k", self.k, min=1, max=m)
        check_int("n", self.n, min=1)
        if self.norm not in ("l1", "l2"):
            raise InvalidParameter(f"norm must be 'l1' or 'l2', got {self.norm!r}")
        rho = _finite("rho", self.rho)
        if not 0 < rho <= 0.5:
            raise InvalidParameter(
                f"rho must be in (0, 1/2] (Massart's one-sided DKW bound needs it), got {rho!r}"
            )
        gamma = _finite("gamma", self.gamma)
        floor = _gamma_bound(m, k, rho)
        if not gamma >= floor:  # floor > 0, so this also refuses gamma <= 0
            raise InvalidParameter(
                f"gamma={gamma!r} is below what m={m}, k={k}, rho={rho!r} certify ({floor!r})"
            )
        samples = self.samples
        if (
            not isinstance(samples, np.ndarray)
            or samples.dtype != np.float64
            or samples.shape != (m,)
        ):
            raise InvalidParameter(f"samples must be a float64 array of the m={m} draws")
        if not (np.all(np.isfinite(samples)) and np.all(samples >= 0)):
            raise InvalidParameter("samples must be finite and >= 0")
        if np.any(np.diff(samples) < 0):
            raise InvalidParameter("samples must be sorted in increasing order")
        if not isinstance(self.sensitivity, float) or self.sensitivity != samples[k - 1]:
            raise InvalidParameter(
                f"sensitivity must be the k-th smallest sample ({float(samples[k - 1])!r}), "
                f"got {self.sensitivity!r}"
            )
        _finite("mean", self.mean)
        frozen = samples.copy()
        frozen.flags.writeable = False
        object.__setattr__(self, "samples", frozen)

    def __iter__(self) -> Iterator[float]:
        return iter((self.sensitivity, self.mean))


def _as_distribution(distribution: object) -> Distribution:
    if isinstance(distribution, Distribution):
        return distribution
    if callable(distribution):
        return UserDistribution(distribution)
    raise InvalidParameter(
        f"distribution must be a Distribution or a callable, got {distribution!r}"
    )


def sample_sensitivity(
    query: Callable[[npt.NDArray[Any]], Any],
    norm: object,
    distribution: Distribution | Callable[[int], npt.ArrayLike],
    n_data_size: int,
    gamma: float | None = None,
    m: int | None = None,
    *,
    progress: bool | None = None,
) -> SampledSensitivity:
    r"""Sensitivity sampling (Rubinstein & Aldà 2017, Algorithm 1).

    For i = 1..m: D ~ P^(n−1), x, x′ ~ P, G_i = ‖query(D ∪ {x}) − query(D ∪ {x′})‖, where
    x and x′ sit at the same uniformly random position j of the n-record vector (so a query
    that reads records by position is sampled at every position, not only at the last).
    Returns Δ̂ = G_(k) (the k-th smallest) and mean(G), with m and k from
    :func:`sampler_config` for the target ``gamma``.

    ``progress``: draw a text progress bar on stderr (default: when stderr is a terminal and
    the run draws more than 10⁵ records).

    Raises:
        InvalidParameter: if γ is outside (0, 1), ``n_data_size`` < 1, the norm or the
        distribution is not recognised.

    >>> mixture = GaussianMixture([[178.0, 7.0], [162.0, 6.5]], [0.5, 0.5])
    >>> s = sample_sensitivity(lambda d: d[0], "l1", mixture, n_data_size=1, gamma=0.05)
    >>> s.m, s.k, s.sensitivity >= s.mean > 0
    (1305, 1305, True)
    """
    nrm = _norm(norm)
    dist = _as_distribution(distribution)
    n = check_int("n_data_size", n_data_size, min=1)
    config = sampler_config(gamma=gamma, m=m)
    per = n + 1  # records drawn per pair of neighbours: D (n−1), x and x′
    if progress is None:
        progress = config.m * per > 100_000 and sys.stderr.isatty()
    bar = ProgressBar(config.m) if progress else None
    batch = max(1, min(config.m, 1_000_000 // per))
    gs = np.empty(config.m, dtype=np.float64)
    done = 0
    while done < config.m:
        b = min(batch, config.m - done)
        records = dist.sample(b * per)
        block = records.reshape((b, per, *records.shape[1:]))
        positions = _uniform_index(n, b)  # where x / x′ sit: uniform over the n positions
        for i in range(b):
            rows = block[i]
            db1 = rows[:n].copy()  # D ∪ {x}, with x at position j
            db2 = rows[:n].copy()
            j = int(positions[i])
            db1[n - 1] = rows[j]  # the record at j moves to the end (a no-op when j = n − 1)
            db1[j] = rows[n - 1]
            db2[n - 1] = rows[j]
            db2[j] = rows[n]  # D ∪ {x′}, with x′ at position j
            gs[done + i] = nrm.compute(query(db1), query(db2))
        done += b
        if bar is not None:
            bar.update(b)
    if bar is not None:
        bar.close()
    if not np.all(np.isfinite(gs)):
        raise FailedMap("the query returned a non-finite value on a sampled dataset")
    ordered = np.sort(gs)
    ordered.flags.writeable = False
    return SampledSensitivity(
        sensitivity=float(ordered[config.k - 1]),
        mean=float(np.mean(gs)),
        gamma=config.gamma,
        rho=config.rho,
        m=config.m,
        k=config.k,
        n=n,
        norm="l1" if isinstance(nrm, L1Norm) else "l2",
        samples=ordered,
    )


class SensitivitySampler:
    """The seed's object interface: ``SensitivitySampler().sample_sensitivity(...)``."""

    def sample_sensitivity(
        self,
        query: Callable[[npt.NDArray[Any]], Any],
        sensitivity_norm: object,
        oracle: Distribution | Callable[[int], npt.ArrayLike],
        n_data_size: int,
        m: int | None = None,
        gamma: float | None = None,
    ) -> SampledSensitivity:
        """As :func:`sample_sensitivity` (argument order of the seed)."""
        return sample_sensitivity(query, sensitivity_norm, oracle, n_data_size, gamma=gamma, m=m)


# ----------------------------------------------------------------------------------------------
# Random DP: the measure and the constructors


def make_random_dp(
    input_domain: Domain[Any],
    input_metric: Metric[int],
    query: Callable[[Any], Any],
    sensitivity: SampledSensitivity,
    measurement: Measurement[Any, Any, Any, float],
) -> Measurement[Any, Any, int, float]:
    r"""Release ``measurement(query(x))`` calibrated to a sampled sensitivity: random DP.

    Privacy map, in the measure ``Random<inner>(gamma=γ)`` with γ = ``sensitivity.gamma``:
        map(0) = 0,   map(1) = measurement.map(Δ̂),   map(d) fails for d > 1,
    where d counts replaced records (``change_one_distance()`` or ``hamming_distance()`` on a
    vector of size n; ``discrete_distance()`` on a single record when n = 1, the local model)
    and Δ̂ = ``sensitivity.sensitivity``.  Under ``change_one_distance()`` (unordered data,
    where a reordering is at distance 0) the records are first put in a uniformly random
    order, so the release depends on the multiset only and map(0) = 0 holds for any query,
    also one that reads records by position.  With probability ≥ 1 − γ over neighbours D ∪ {x},
    D ∪ {x′} drawn from the sampler's distribution, ‖query(D∪{x}) − query(D∪{x′})‖ ≤ Δ̂,
    so the inner guarantee holds.  Δ̂ is an order statistic of distances computed exactly and
    rounded up (:class:`L1Norm`, :class:`L2Norm`), so it is never below the exact one.

    Raises:
        NotImplementedForType: if the input metric is not change-one/Hamming (discrete on a
        single record), the measurement's metric is not absolute/L1/L2, or its measure is not
        max-divergence or zCDP.
        InvalidParameter: if ``sensitivity`` is not a :class:`SampledSensitivity` (whose
        fields are checked when it is built), a vector input domain's size is not the sampled
        dataset size n,
        a single-record domain is used with n > 1, or the sampled norm is not the one the
        measurement's metric reads (L1 for ``l1_distance``, L2 for ``l2_distance``).

    Proof: docs/proofs/make_random_dp.md  [Rubinstein & Aldà 2017, Theorem 8]

    >>> import opendp_lite.prelude as dp
    >>> from opendp_lite.sensitivity import Normal, sample_sensitivity, make_random_dp
    >>> s = sample_sensitivity(lambda d: d.mean(), "l1", Normal(170.0, 10.0), 10, gamma=0.1)
    >>> f64 = dp.atom_domain(T=float, nan=False)
    >>> lap = dp.m.make_laplace(f64, dp.absolute_distance(T=float), 1.0)
    >>> meas = make_random_dp(
    ...     dp.vector_domain(dp.atom_domain(T=float, nan=False), size=10), dp.change_one_distance(),
    ...     lambda d: float(d.mean()), s, lap)
    >>> meas.output_measure
    RandomMaxDivergence(gamma=0.1)
    >>> meas.map(1) == lap.map(s.sensitivity)
    True
    """
    if not isinstance(sensitivity, SampledSensitivity):
        raise InvalidParameter(
            "sensitivity must be the SampledSensitivity that sample_sensitivity returned, "
            f"got {type(sensitivity).__name__}"
        )
    if isinstance(input_domain, VectorDomain):
        if not isinstance(input_metric, (ChangeOneDistance, HammingDistance)):
            raise NotImplementedForType(
                "sensitivity sampling models one replaced record: input_metric must be "
                f"change_one_distance() or hamming_distance(), got {input_metric!r}"
            )
        if input_domain.size != sensitivity.n:
            raise InvalidParameter(
                f"input_domain must have size n={sensitivity.n} (the sampled dataset size), "
                f"got {input_domain!r}"
            )
    else:  # a single record (the local model): the dataset is that record, n = 1
        if not isinstance(input_metric, DiscreteDistance):
            raise NotImplementedForType(
                "on a single record, input_metric must be discrete_distance(), "
                f"got {input_metric!r}"
            )
        if sensitivity.n != 1:
            raise InvalidParameter(
                f"a single-record input_domain needs a sensitivity sampled at n=1, "
                f"got n={sensitivity.n}"
            )
    metric = measurement.input_metric
    wanted = (
        "l1" if isinstance(metric, L1Distance) else "l2" if isinstance(metric, L2Distance) else None
    )
    if wanted is not None and sensitivity.norm != wanted:
        raise InvalidParameter(
            f"the sensitivity was sampled in the {sensitivity.norm} norm, but the measurement "
            f"reads distances in {metric!r}: sample it with norm={wanted!r}"
        )
    if wanted is None and not isinstance(metric, AbsoluteDistance):
        raise NotImplementedForType(
            "the measurement's input metric must be absolute_distance, l1_distance or "
            f"l2_distance, got {metric!r}"
        )
    inner = measurement.output_measure
    if not isinstance(inner, (MaxDivergence, ZeroConcentratedDivergence)):
        raise NotImplementedForType(
            f"random DP is offered over max_divergence() or zCDP, got {inner!r}"
        )
    loss = measurement.map(sensitivity.sensitivity)
    mechanism = measurement.invoke
    if isinstance(input_domain, VectorDomain) and isinstance(input_metric, ChangeOneDistance):
        from ..transformations._rowwise import uniform_permutation

        def function(x: Any) -> Any:
            # unordered data: the query may read positions, so give the multiset a uniformly
            # random order first (a permutation of x then has the same output law)
            return mechanism(query(x[uniform_permutation(len(x))]))

    else:

        def function(x: Any) -> Any:
            return mechanism(query(x))

    def privacy_map(d_in: int) -> float:
        if d_in == 0:
            return 0.0
        if d_in == 1:
            return loss
        raise FailedMap(
            f"random DP from a sampled sensitivity covers one replaced record, got d_in={d_in}"
        )

    return Measurement(
        input_domain,
        input_metric,
        RandomDivergence(inner, sensitivity.gamma),
        function,
        privacy_map,
    )
