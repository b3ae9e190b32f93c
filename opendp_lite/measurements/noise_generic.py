"""OpenDP 0.16's generic noise constructors: the distribution is chosen by the output measure.

``make_noise`` is :func:`~opendp_lite.measurements.noise.make_laplace` under
``max_divergence()`` and :func:`~opendp_lite.measurements.noise.make_gaussian` under
``zero_concentrated_divergence()``; ``make_noise_threshold`` is
:func:`~opendp_lite.measurements.threshold.make_laplace_threshold` under
``approximate(max_divergence())`` and
:func:`~opendp_lite.measurements.threshold.make_gaussian_threshold` under
``approximate(zero_concentrated_divergence())``.  Each returns the very measurement of the
mechanism it names, so its function, map and proof are that mechanism's.

>>> import opendp_lite.prelude as dp
>>> space = dp.atom_domain(T=int), dp.absolute_distance(T=int)
>>> [m.map(1) for m in (make_noise(*space, dp.max_divergence(), scale=2.0),
...                     make_noise(*space, dp.zero_concentrated_divergence(), scale=2.0))]
[0.5, 0.125]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from .._registry import constructor
from .._spine import keyed, noise
from ..core import Domain, Measure, Measurement, Metric
from ..errors import NotImplementedForType
from ..measures import Approximate, MaxDivergence, ZeroConcentratedDivergence
from .noise import make_gaussian, make_laplace
from .threshold import make_gaussian_threshold, make_laplace_threshold

__all__ = ["make_noise", "make_noise_threshold", "then_noise", "then_noise_threshold"]

_K = TypeVar("_K")
_V = TypeVar("_V")


@constructor
def make_noise(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    output_measure: Measure[Any],
    scale: float,
    k: int | None = None,
) -> Measurement[Any, Any, Any, float]:
    r"""Add the noise that ``output_measure`` calls for: Laplace for ε, Gaussian for ρ.

    ``max_divergence()`` gives ``make_laplace(input_domain, input_metric, scale, k)`` and
    ``zero_concentrated_divergence()`` gives ``make_gaussian(input_domain, input_metric, scale,
    k)``: exact discrete noise on integers, on the grid 2^k·ℤ for floats; ``atom_domain`` with
    ``absolute_distance``, or ``vector_domain`` with ``l1_distance`` (Laplace) or
    ``l2_distance`` (Gaussian).

    Privacy map, with n the vector size (1 for a scalar) and π = 2^k − 2^k_min (0 for
    integers and the default k), computed in ℚ and rounded up:
        max_divergence:               ε(d_in) = (d_in + n·π) / scale
        zero_concentrated_divergence: ρ(d_in) = (d_in + √n·π)² / (2·scale²)

    Raises:
        NotImplementedForType: if ``output_measure`` is neither ``max_divergence()`` nor
            ``zero_concentrated_divergence()``, or the mechanism refuses the space.
        InvalidParameter: as ``make_laplace`` / ``make_gaussian`` (scale, k).
        NotInDomain: (on invoke) data outside the input domain, before any noise is drawn.

    Proof: docs/proofs/make_noise.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float)
    >>> meas = make_noise(*space, dp.zero_concentrated_divergence(), scale=1.0)
    >>> meas.map(1.0), len(meas([1.0, 2.0, 3.0]))
    (0.5, 3)
    """
    if isinstance(output_measure, MaxDivergence):
        return make_laplace(input_domain, input_metric, scale, k)
    if isinstance(output_measure, ZeroConcentratedDivergence):
        return make_gaussian(input_domain, input_metric, scale, k)
    raise NotImplementedForType(
        "make_noise: output_measure must be max_divergence() or "
        f"zero_concentrated_divergence(), got {output_measure!r}"
    )


then_noise = noise(make_noise)


@constructor
def make_noise_threshold(
    input_domain: Domain[Mapping[_K, _V]],
    input_metric: Metric[Any],
    output_measure: Measure[Any],
    scale: float,
    threshold: Any,
    k: Any = None,
) -> Measurement[Mapping[_K, _V], dict[_K, _V], tuple[int, Any, Any], tuple[float, float]]:
    r"""Noise each value of a map, then release the keys that clear ``threshold``.

    ``approximate(max_divergence())`` gives ``make_laplace_threshold`` (input metric
    ``l01inf_distance(absolute_distance(T))``) and ``approximate(zero_concentrated_divergence())``
    gives ``make_gaussian_threshold`` (``l02inf_distance(absolute_distance(T))``), as in OpenDP
    0.16.  A threshold >= 0 keeps the noisy values >= threshold; a negative threshold keeps the
    noisy values <= threshold.

    Privacy map, with (l0, lp, l∞) = d_in, l∞′ = min(l∞, lp), π = 2^k − 2^k_min per key (0 for
    integers and the default k), top = n(l∞′) if threshold >= 0 else −n(−l∞′) (n the grid
    index), Z the noise on the grid, rounded up:
        Laplace:  ε = min(l1 + l0·π, l0·(l∞′ + π))/scale
        Gaussian: ρ = min((l2 + √l0·π)², l0·(l∞′ + π)²)/(2·scale²)
        both:     δ = min(1, l0·Pr[Z >= ⌈|threshold|/2^k − top⌉])

    Raises:
        NotImplementedForType: if ``output_measure`` is neither approximate max divergence nor
            approximate zero-concentrated divergence, or the mechanism refuses the domain.
        MetricMismatch: if the metric does not match the measure (L0,1,∞ for Laplace, L0,2,∞
            for Gaussian, over ``absolute_distance(D)`` for any numeric D).
        InvalidParameter: as the threshold mechanisms (scale, threshold, k).

    Proof: docs/proofs/make_noise_threshold.md

    >>> import opendp_lite.prelude as dp
    >>> space = (dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int)),
    ...          dp.l01inf_distance(dp.absolute_distance(T=int)))
    >>> meas = make_noise_threshold(
    ...     *space, dp.approximate(dp.max_divergence()), scale=1.0, threshold=20)
    >>> sorted(meas({"common": 1000, "rare": 1})), meas.map((1, 1, 1))[0]
    (['common'], 1.0)
    """
    if isinstance(output_measure, Approximate):
        if isinstance(output_measure.inner, MaxDivergence):
            return make_laplace_threshold(
                input_domain, input_metric, scale, threshold, k, MO=output_measure
            )
        if isinstance(output_measure.inner, ZeroConcentratedDivergence):
            return make_gaussian_threshold(
                input_domain, input_metric, scale, threshold, k, MO=output_measure
            )
    raise NotImplementedForType(
        "make_noise_threshold: output_measure must be approximate(max_divergence()) or "
        f"approximate(zero_concentrated_divergence()), got {output_measure!r}"
    )


then_noise_threshold = keyed(make_noise_threshold)
