"""Privacy amplification by subsampling, for data that is a simple random sample."""

from __future__ import annotations

import math
from typing import Any, TypeVar

from .. import _arith
from .._validate import check_int
from ..core import Measurement, assert_features
from ..domains import VectorDomain
from ..errors import InvalidParameter, NotImplementedForType
from ..measures import Approximate, MaxDivergence
from ..metrics import _DatasetMetric

__all__ = ["make_population_amplification"]

TI = TypeVar("TI")
TO = TypeVar("TO")
MO = TypeVar("MO")


def _hit_probability(d_in: int, sample_size: int, population_size: int) -> Any:
    """Pr[a uniform n-subset of N items contains one of d_in given items], exactly in ℚ.

    1 − C(N − k, n) / C(N, n) = 1 − Π_{i<k} (N − n − i) / (N − i); it is n/N when k = 1.
    """
    miss = _arith.q(1)
    for i in range(min(d_in, population_size)):
        if population_size - sample_size - i <= 0:
            return _arith.q(1)
        miss *= _arith.q(population_size - sample_size - i) / _arith.q(population_size - i)
    return 1 - miss


def make_population_amplification(
    measurement: Measurement[TI, TO, int, MO], population_size: int
) -> Measurement[TI, TO, int, MO]:
    r"""Amplify the privacy of a measurement whose data is a simple random sample.

    With n the (public) sample size, N = ``population_size`` and
    q = 1 − C(N − d_in, n)/C(N, n) the chance that the sample holds one of d_in changed
    records (q = n/N at d_in = 1), the map is, rounded up:
        ε'(d_in) = ln(1 + q·(exp(ε(d_in)) − 1)),   δ'(d_in) = q·δ(d_in)

    The function is unchanged: nothing is sampled here.  The guarantee holds only if the input
    really is a uniform sample without replacement of size n from N records, so this needs the
    ``honest-but-curious`` feature.  For d_in > 1 this is more conservative than OpenDP 0.16,
    which uses q = n/N for every d_in.

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
    >>> round(amplified.map(1), 12)
    0.062854723474
    """
    assert_features("honest-but-curious")
    domain = measurement.input_domain
    if not isinstance(domain, VectorDomain) or domain.size is None:
        raise NotImplementedForType(
            f"input_domain must be a vector domain of known size, got {domain!r}"
        )
    if not isinstance(measurement.input_metric, _DatasetMetric):
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

    def amplify_epsilon(hit: Any, epsilon: float) -> float:
        growth = _arith.expm1_up(epsilon)
        if math.isinf(growth):
            return epsilon
        # the exact value is at most epsilon (q <= 1), so epsilon also bounds it
        return min(epsilon, _arith.log1p_up(hit * _arith.q(growth)))

    def privacy_map(d_in: int) -> Any:
        loss: Any = inner(d_in)
        hit = _hit_probability(int(d_in), sample_size, population_size)
        if approx:
            return amplify_epsilon(hit, loss[0]), _arith.up(hit * _arith.q(loss[1]))
        return amplify_epsilon(hit, loss)

    return Measurement(
        measurement.input_domain,
        measurement.input_metric,
        measure,
        measurement.function,
        privacy_map,
    )
