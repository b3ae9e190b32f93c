r"""Local (federated) release: every record is privatised on its own, by its owner.

:func:`make_local_release` lifts a per-record measurement M (on one element) to a vector:
each element is released independently through M, so each record's owner (a phone, a node of
a federated array) holds the inner guarantee of M for their own value — the *local model* —
and the analyst only ever sees the privatised vector, which it aggregates and de-biases.

>>> import opendp_lite.prelude as dp
>>> from opendp_lite.measurements.two_coin import make_randomized_response_coins
>>> local = make_local_release(
...     dp.vector_domain(dp.atom_domain(T=bool)), dp.hamming_distance(),
...     make_randomized_response_coins())
>>> len(local([True, False, True])), round(local.map(1), 4), round(local.map(2), 4)
(3, 1.0986, 2.1972)
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar, cast

import numpy as np
import numpy.typing as npt

from .._arith import mul_up, q, up
from .._registry import constructor
from .._spine import release_vec, typed_as
from .._types import Vec
from .._validate import check_finite_nonneg
from ..core import Measurement, Metric, assert_features
from ..domains import AtomDomain, VectorDomain
from ..errors import (
    DomainMismatch,
    FailedMap,
    FeatureNotEnabled,
    InvalidParameter,
    NotImplementedForType,
)
from ..measures import Approximate, MaxDivergence, ZeroConcentratedDivergence
from ..metrics import AbsoluteDistance, ChangeOneDistance, DiscreteDistance, HammingDistance

__all__ = ["make_local_release", "then_local_release"]

T = TypeVar("T")
U = TypeVar("U")
_Q = TypeVar("_Q")


def _derived_record_distance(measurement: Measurement[Any, Any, Any, Any]) -> Any:
    """The largest distance between two values of one record that M's input space proves
    (1 under the discrete metric, U − L for a bounded scalar, rounded up), or None."""
    metric, domain = measurement.input_metric, measurement.input_domain
    if isinstance(metric, DiscreteDistance):
        return 1
    if (
        isinstance(metric, AbsoluteDistance)
        and isinstance(domain, AtomDomain)
        and domain.bounds is not None
        and not domain.nan
    ):
        lo, hi = domain.bounds
        if isinstance(lo, int) and isinstance(hi, int):
            return hi - lo
        return up(q(hi) - q(lo))
    return None


def _record_distance(measurement: Measurement[Any, Any, Any, Any], given: object) -> Any:
    """Δ_rec: derived from M's input space; a given value must not contradict it, and is taken
    on trust (``honest-but-curious``) only where nothing can be derived."""
    derived = _derived_record_distance(measurement)
    if given is None:
        if derived is None:
            raise NotImplementedForType(
                f"cannot bound how far one record can move under {measurement.input_metric!r} "
                f"on {measurement.input_domain!r}: bound the element domain (e.g. clamp to a "
                "public range first), or pass record_distance with "
                'enable_features("honest-but-curious")'
            )
        return derived
    value = check_finite_nonneg("record_distance", given)
    if derived is None:
        try:
            assert_features("honest-but-curious")
        except FeatureNotEnabled:
            raise FeatureNotEnabled(
                f"record_distance={given!r} is an unproven claim: no bound on one record's "
                f"change follows from {measurement.input_metric!r} on "
                f"{measurement.input_domain!r}.  Bound the element domain (e.g. clamp to a "
                "public range; the distance is then derived), or opt in to trusting it with "
                'enable_features("honest-but-curious")'
            ) from None
        return value
    if q(value) < q(derived):
        raise InvalidParameter(
            f"record_distance={given!r} contradicts the element domain: one record can move "
            f"by {derived!r} under {measurement.input_metric!r} on "
            f"{measurement.input_domain!r}.  Omit record_distance (the derived {derived!r} is "
            f"used) or pass a value >= {derived!r}"
        )
    return value


def _is_random_dp(measure: object) -> bool:
    from ..measures import RandomDivergence

    return isinstance(measure, RandomDivergence)


class _LocalReleaseType(Protocol):
    """Typing only: a vector of ``T`` released record by record by a measurement on ``T``; the
    loss has the inner measurement's type."""

    def __call__(
        self,
        input_domain: VectorDomain[T],
        input_metric: Metric[int],
        measurement: Measurement[T, U, Any, _Q],
        record_distance: float | None = None,
    ) -> Measurement[Vec[T], npt.NDArray[Any], int, _Q]: ...


@typed_as(cast("_LocalReleaseType", None))
@constructor
def make_local_release(
    input_domain: VectorDomain[T],
    input_metric: Metric[int],
    measurement: Measurement[T, U, Any, Any],
    record_distance: float | None = None,
) -> Measurement[Any, npt.NDArray[Any], int, Any]:
    r"""Apply a per-record measurement independently to each element of a vector (local model).

    Function: x ↦ (M(x_1), …, M(x_n)), with fresh, independent randomness per element.

    Local model: each record's owner gets M's own guarantee,
    ε_rec = M.map(Δ_rec), where Δ_rec is the largest distance between two values of one record:
    1 under the discrete metric, U − L (rounded up) for a scalar bounded to [L, U].  A
    ``record_distance`` may only raise a derived Δ_rec; where none can be derived it is taken
    on trust and requires ``enable_features("honest-but-curious")``.
    Central privacy map, for d_in positions replaced (Hamming distance on ordered data; the
    output is positional, so the unordered change-one distance is refused), by sequential
    composition over the changed positions (rounded up):

        map(d_in) = d_in · ε_rec      (ε, ρ; and (d_in·ε_rec, d_in·δ_rec) for approximate DP)

    For a random-DP M (:mod:`opendp_lite.sensitivity`), only map(0) = 0 and map(1) = ε_rec.

    Raises:
        DomainMismatch: if the vector's element domain is not M's input domain.
        NotImplementedForType: if the input metric is not Hamming (change-one: shuffle first
        with make_ordered_random), M's measure is not max-divergence, zCDP, approximate or
        random DP, or Δ_rec cannot be determined.
        InvalidParameter: if ``record_distance`` is below the distance the element domain
        proves (or negative / not finite).
        FeatureNotEnabled: if ``record_distance`` is given where nothing bounds a record and
        ``honest-but-curious`` is not enabled.

    Proof: docs/proofs/make_local_release.md

    >>> import opendp_lite.prelude as dp
    >>> from opendp_lite.measurements.two_coin import make_randomized_response_coins
    >>> rr = make_randomized_response_coins()
    >>> space = dp.vector_domain(dp.atom_domain(T=bool)), dp.hamming_distance()
    >>> released = (space >> then_local_release(rr))([True] * 5)
    >>> all(type(v) is bool for v in released), len(released)
    (True, 5)
    """
    if not isinstance(input_domain, VectorDomain):
        raise NotImplementedForType(f"input_domain must be a vector_domain, got {input_domain!r}")
    if input_domain.element_domain != measurement.input_domain:
        raise DomainMismatch(input_domain.element_domain, measurement.input_domain, "local release")
    if isinstance(input_metric, ChangeOneDistance):
        # change-one distance is between *unordered* datasets: a permutation is at distance 0,
        # but the release is positional, so [a, b] and [b, a] are told apart
        raise NotImplementedForType(
            "a local release reveals each record's position, but change_one_distance() "
            "measures unordered datasets (a reordering is at distance 0): use "
            "hamming_distance() on ordered data, or shuffle first with "
            "make_ordered_random (change_one_distance -> hamming_distance)"
        )
    if not isinstance(input_metric, HammingDistance):
        raise NotImplementedForType(
            "a local release counts replaced positions: input_metric must be "
            f"hamming_distance(), got {input_metric!r}"
        )
    measure = measurement.output_measure
    random_dp = _is_random_dp(measure)
    if not (
        random_dp or isinstance(measure, (MaxDivergence, ZeroConcentratedDivergence, Approximate))
    ):
        raise NotImplementedForType(
            f"local release composes pure, zCDP, approximate or random DP, got {measure!r}"
        )
    per_record = measurement.map(_record_distance(measurement, record_distance))
    inner = measurement.function
    element = measurement.input_domain

    def function(x: npt.NDArray[Any]) -> npt.NDArray[Any]:
        # each element is already a member (the vector was normalised through this domain)
        out = [inner(element._normalize(v.item() if isinstance(v, np.generic) else v)) for v in x]
        return np.asarray(out) if out else np.empty(0)

    def privacy_map(d_in: int) -> Any:
        if d_in == 0:
            return (0.0, 0.0) if isinstance(measure, Approximate) else 0.0
        if random_dp:
            if d_in > 1:  # random DP holds per random pair of neighbours: no group version
                raise FailedMap(f"a random-DP local release covers one record, got d_in={d_in}")
            return per_record
        if isinstance(measure, Approximate):
            eps, delta = per_record
            return mul_up(d_in, eps), min(1.0, mul_up(d_in, delta))
        if not isinstance(per_record, (int, float)):
            raise FailedMap(f"the inner map returned {per_record!r}")
        return mul_up(d_in, per_record)

    return Measurement(input_domain, input_metric, measure, function, privacy_map)


then_local_release = release_vec(make_local_release)
