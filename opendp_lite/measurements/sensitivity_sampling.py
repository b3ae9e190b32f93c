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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from .. import _arith
from .._math import lambert_w_minus1
from .._progress import ProgressBar
from .._registry import constructor
from .._validate import check_int
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
from .sensitivity.distributions import (
    Distribution,
    Empirical,
    GaussianMixture,
    Normal,
    Uniform,
    UserDistribution,
    _finite,
    _uniform_index,
)
from .sensitivity.norms import L1Norm, L1SensitivityNorm, L2Norm, L2SensitivityNorm, _norm

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
# The paper's choice of m and k


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


@constructor
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
