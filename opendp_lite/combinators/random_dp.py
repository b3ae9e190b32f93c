"""Relabelling a random-DP measurement as worst-case DP: an explicit, feature-gated opt-in."""

from __future__ import annotations

from typing import Any, TypeVar

from .._registry import constructor
from ..core import Measurement, assert_features
from ..errors import NotImplementedForType
from ..measures import RandomDivergence

__all__ = ["make_random_dp_as_worst_case"]

Q = TypeVar("Q")


@constructor
def make_random_dp_as_worst_case(
    measurement: Measurement[Any, Any, Any, Q],
) -> Measurement[Any, Any, Any, Q]:
    r"""Relabel a random-DP measurement as its inner worst-case measure (an explicit opt-in).

    Map: unchanged, map(d_in); the output measure ``Random<M>(gamma)`` becomes ``M``.  The
    worst-case claim is *not* proven: it is the user's documented assumption, which is why
    the constructor requires ``enable_features("random-dp")``.  Use it only to compose a
    random-DP release with worst-case releases, knowing the composite holds with probability
    ≥ 1 − γ.

    Raises:
        FeatureNotEnabled: unless ``enable_features("random-dp")`` was called.
        NotImplementedForType: if the measurement's output measure is not random DP.

    Proof: docs/proofs/make_random_dp_as_worst_case.md

    >>> import opendp_lite.prelude as dp
    >>> from opendp_lite.sensitivity import Normal, sample_sensitivity, make_random_dp
    >>> s = sample_sensitivity(lambda d: d[0], "l1", Normal(0.0, 1.0), 1, gamma=0.2)
    >>> f64 = dp.atom_domain(T=float, nan=False)
    >>> lap = dp.m.make_laplace(f64, dp.absolute_distance(T=float), 1.0)
    >>> rdp = make_random_dp(dp.vector_domain(dp.atom_domain(T=float, nan=False), size=1),
    ...                      dp.change_one_distance(), lambda d: float(d[0]), s, lap)
    >>> dp.enable_features("random-dp")
    >>> make_random_dp_as_worst_case(rdp).output_measure
    MaxDivergence
    """
    assert_features("random-dp")
    measure = measurement.output_measure
    if not isinstance(measure, RandomDivergence):
        raise NotImplementedForType(f"expected a random-DP measurement, got {measure!r}")
    return Measurement(
        measurement.input_domain,
        measurement.input_metric,
        measure.inner,
        measurement.function,
        measurement.privacy_map,
    )
