"""Privacy amplification by subsampling, for data that is a simple random sample."""

from __future__ import annotations

import math
from typing import Any, TypeVar

from .. import _arith
from .._registry import constructor
from .._validate import check_int
from ..core import Measurement, assert_features
from ..domains import VectorDomain
from ..errors import InvalidParameter, NotImplementedForType
from ..measures import Approximate, MaxDivergence
from ..metrics import (
    ChangeOneDistance,
    DiscreteDistance,
    HammingDistance,
    InsertDeleteDistance,
    SymmetricDistance,
)

__all__ = ["make_population_amplification"]

TI = TypeVar("TI")
TO = TypeVar("TO")
MO = TypeVar("MO")


def _hit_probability(k: int, sample_size: int, population_size: int) -> Any:
    """Pr[a uniform n-subset of N items contains one of k given items], exactly in ℚ.

    1 − C(N − k, n)/C(N, n) = 1 − Π_{i<k} (N − n − i)/(N − i) = 1 − Π_{i<n} (N − k − i)/(N − i)
    (the shorter product is used); it is n/N when k = 1, and 1 once k > N − n.
    """
    n, N = sample_size, population_size
    if k <= 0 or n <= 0:
        return _arith.q(0)
    if k > N - n:
        return _arith.q(1)
    num = den = 1
    if k <= n:
        for i in range(k):
            num *= N - n - i
            den *= N - i
    else:
        for i in range(n):
            num *= N - k - i
            den *= N - i
    return 1 - _arith.q(num) / _arith.q(den)


#: the dataset distance between two samples that differ by one substituted record
_UNIT: dict[type, int] = {
    SymmetricDistance: 2,
    InsertDeleteDistance: 2,
    ChangeOneDistance: 1,
    HammingDistance: 1,
}


def _substitutions(metric: Any, d_in: int, population_size: int) -> int:
    """k: how many records two populations of size N at distance <= d_in can differ in."""
    if d_in <= 0:
        return 0
    if isinstance(metric, DiscreteDistance):
        return population_size  # any two populations
    unit = _UNIT[type(metric)]
    return -(-d_in // unit)  # ⌈d_in/2⌉ (sound even for odd d_in) or d_in


def _amplify(hit: Any, epsilon: float) -> float:
    """ln(1 + hit·(e^ε − 1)) rounded up; at most ε (hit <= 1), so ε also bounds it."""
    growth = _arith.expm1_up(epsilon)
    if math.isinf(growth):
        return epsilon
    return min(epsilon, _arith.log1p_up(hit * _arith.q(growth)))


def _group_delta(delta: float, epsilon: float, k: int) -> float:
    """δ·Σ_{i<k} e^{iε}, rounded up (group privacy for k steps of an (ε, δ) guarantee)."""
    if delta == 0:
        return 0.0
    num = _arith.expm1_up(_arith.mul_up(k, epsilon))  # e^{kε} − 1, up
    den = _arith.q(_arith.exp_down(epsilon)) - 1  # e^ε − 1, down
    if math.isinf(num):
        return math.inf
    if den > 0:
        return _arith.up(_arith.q(delta) * _arith.q(num) / den)
    return _arith.mul_up(delta, k, _arith.exp_up(_arith.mul_up(k - 1, epsilon)))


@constructor
def make_population_amplification(
    measurement: Measurement[TI, TO, int, MO], population_size: int
) -> Measurement[TI, TO, int, MO]:
    r"""Amplify the privacy of a measurement whose data is a simple random sample.

    The input is a uniform sample without replacement of n (the public size) of N =
    ``population_size`` records, in random order.  Two populations of size N at distance
    d_in differ in k substituted records: k = ⌈d_in/2⌉ under ``symmetric_distance()`` and
    ``insert_delete_distance()``, k = d_in under ``change_one_distance()`` and
    ``hamming_distance()``, k = N under ``discrete_distance()``.  With u the distance of one
    substitution (2, 1, or 1 under the discrete distance), q_k = 1 − C(N − k, n)/C(N, n) the
    chance that the sample holds a substituted record (q_1 = n/N), (ε, δ) the inner loss at
    the samples' distance u·min(k, n) and (ε₁, δ₁) the inner loss at u, two bounds hold:
        coupling: ε_c = ln(1 + q_k·(e^ε − 1)),          δ_c = q_k·δ
        group:    ε_g = k·ε₁',  δ_g = δ₁'·Σ_{i<k} e^{i·ε₁'},  ε₁' = ln(1 + (n/N)(e^{ε₁} − 1)),
                  δ₁' = (n/N)·δ₁   (not under the discrete distance)
    The map is min(ε_c, ε_g) for pure DP; (ε_g, δ_g) if it is no larger in both parts, else
    (ε_c, δ_c); everything rounded up.  For one substitution (d_in = 2 under the symmetric
    distance) it is ln(1 + (n/N)(e^{ε(2)} − 1)), OpenDP 0.16's value.

    The function is unchanged: nothing is sampled here.  The guarantee holds only if the input
    really is such a sample, so this needs the ``honest-but-curious`` feature.

    Raises:
        FeatureNotEnabled: unless ``honest-but-curious`` is enabled.
        NotImplementedForType: unless the input domain is a sized vector domain under a
            dataset metric and the measure is ``max_divergence()`` or its approximate.
        InvalidParameter: if ``population_size`` is not an int at least the sample size.

    Proof: docs/proofs/make_population_amplification.md

    >>> import opendp_lite.prelude as dp
    >>> dp.enable_features("honest-but-curious")
    >>> space = dp.vector_domain(dp.atom_domain(T=float), size=10), dp.symmetric_distance()
    >>> mean = dp.m.make_user_measurement(
    ...     *space, dp.max_divergence(), lambda x: float(sum(x)), lambda d: 0.5 * d)
    >>> amplified = dp.c.make_population_amplification(mean, population_size=100)
    >>> round(amplified.map(2), 12)  # one substituted record: ln(1 + 0.1·(e − 1))
    0.15856507874
    """
    assert_features("honest-but-curious")
    domain = measurement.input_domain
    if not isinstance(domain, VectorDomain) or domain.size is None:
        raise NotImplementedForType(
            f"input_domain must be a vector domain of known size, got {domain!r}"
        )
    metric = measurement.input_metric
    if not isinstance(metric, (DiscreteDistance, *_UNIT)):
        raise NotImplementedForType(
            f"input_metric must be a dataset metric, got {measurement.input_metric!r}"
        )
    measure = measurement.output_measure
    approx = isinstance(measure, Approximate) and isinstance(measure.inner, MaxDivergence)
    if not (isinstance(measure, MaxDivergence) or approx):
        raise NotImplementedForType(
            f"output_measure must be MaxDivergence() or its approximate, got {measure!r}"
        )
    population_size = check_int("population_size", population_size)
    sample_size = domain.size
    if population_size < sample_size or population_size < 1:
        raise InvalidParameter(
            f"population_size must be at least the sample size {sample_size}, "
            f"got {population_size!r}"
        )
    inner = measurement.map
    n, N = sample_size, population_size
    unit = 1 if isinstance(metric, DiscreteDistance) else _UNIT[type(metric)]
    rate = _hit_probability(1, n, N)  # n/N

    def privacy_map(d_in: int) -> Any:
        k = _substitutions(metric, int(d_in), N)
        hit = _hit_probability(k, n, N)
        if isinstance(metric, DiscreteDistance):
            sample_distance = min(k, n, 1)
        else:
            sample_distance = unit * min(k, n)
        loss: Any = inner(sample_distance)
        eps, delta = loss if approx else (loss, 0.0)
        coupled = _amplify(hit, eps), _arith.up(hit * _arith.q(delta))
        if k >= 2 and not isinstance(metric, DiscreteDistance):
            one: Any = inner(unit)
            eps1, delta1 = one if approx else (one, 0.0)
            step = _amplify(rate, eps1)
            group = (
                _arith.mul_up(k, step),
                _group_delta(_arith.up(rate * _arith.q(delta1)), step, k),
            )
            if group[0] <= coupled[0] and group[1] <= coupled[1]:
                coupled = group
        return coupled if approx else coupled[0]

    return Measurement(
        measurement.input_domain,
        measurement.input_metric,
        measure,
        measurement.function,
        privacy_map,
    )
