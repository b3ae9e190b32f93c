"""Conversions between privacy measures (``dp.c.make_pureDP_to_zCDP`` and friends).

Each conversion keeps the function and re-states the privacy map in another measure; every
new map is computed with :mod:`opendp_lite._arith` and rounded in the conservative direction.
"""

from __future__ import annotations

import math
from typing import Any, TypeVar

from .. import _arith
from .._registry import constructor
from .._validate import check_finite_nonneg
from ..core import Measurement
from ..errors import FailedMap, InvalidParameter, NotImplementedForType
from ..measures import (
    Approximate,
    MaxDivergence,
    PrivacyProfile,
    SmoothedMaxDivergence,
    ZeroConcentratedDivergence,
)

__all__ = [
    "make_approximate",
    "make_fix_delta",
    "make_fixed_approxDP_to_approxDP",
    "make_pureDP_to_zCDP",
    "make_zCDP_to_approxDP",
]

TI = TypeVar("TI")
TO = TypeVar("TO")
DI = TypeVar("DI")
MO = TypeVar("MO")


def _measure_error(name: str, measurement: Measurement[Any, Any, Any, Any], want: str) -> None:
    raise NotImplementedForType(
        f"{name} needs a measurement whose output measure is {want}, "
        f"got {measurement.output_measure!r}"
    )


@constructor
def make_pureDP_to_zCDP(
    measurement: Measurement[TI, TO, DI, float],
) -> Measurement[TI, TO, DI, float]:
    r"""Restate an ε-DP measurement as ρ-zCDP (Bun & Steinke 2016, Proposition 1.4).

    Privacy map (ZeroConcentratedDivergence), exact in ℚ and rounded up:
        ρ(d_in) = ε(d_in)² / 2

    Raises:
        NotImplementedForType: if the output measure is not ``max_divergence()``.

    Proof: docs/proofs/make_pureDP_to_zCDP.md

    >>> import opendp_lite.prelude as dp
    >>> dp.enable_features("honest-but-curious")
    >>> space = dp.atom_domain(T=float), dp.absolute_distance(T=float)
    >>> pure = dp.m.make_user_measurement(*space, dp.max_divergence(), lambda x: x, lambda d: d)
    >>> dp.c.make_pureDP_to_zCDP(pure).map(0.3)
    0.045
    """
    if not isinstance(measurement.output_measure, MaxDivergence):
        _measure_error("make_pureDP_to_zCDP", measurement, "MaxDivergence()")
    inner = measurement.map

    def privacy_map(d_in: DI) -> float:
        eps = _arith.q(inner(d_in))
        return _arith.up(eps * eps / 2)

    return Measurement(
        measurement.input_domain,
        measurement.input_metric,
        ZeroConcentratedDivergence(),
        measurement.function,
        privacy_map,
    )


def _cdp_alpha(rho: float, eps: float) -> float:
    """A near-optimal Rényi order α for :func:`_cdp_delta` (any α > 1 gives a valid bound).

    The log of the bound is convex in α with derivative (2α − 1)ρ − ε + ln(1 − 1/α), so the
    optimum is its root; it lies below (ε + 1)/(2ρ) + 2.  The search is plain float bisection
    because the choice of α only affects tightness, never validity.  α is kept >= 1.01, where
    the bound is numerically stable (only the uninteresting regime ε ≲ ρ wants a smaller α).
    """
    a_min, a_max = 1.01, min((eps + 1.0) / (2.0 * rho) + 2.0, 1e300)
    while True:
        a_mid = a_min + (a_max - a_min) / 2.0
        if a_mid in (a_min, a_max):
            return a_max
        if (2.0 * a_mid - 1.0) * rho - eps + math.log1p(-1.0 / a_mid) < 0:
            a_min = a_mid
        else:
            a_max = a_mid


def _cdp_delta(rho: float, eps: float) -> float:
    r"""An upper bound on δ(ε) for a ρ-zCDP mechanism (Canonne, Kamath, Steinke 2020, §2.3).

    .. math:: δ = \frac{\exp((α-1)(αρ-ε) + α\ln(1-1/α))}{α-1}, \quad α = \text{_cdp_alpha}(ρ, ε)

    The exponent is exact in ℚ except for ln(1 − 1/α), taken as an upper bound; ``exp`` and
    the division round up.
    """
    if rho == 0 or math.isinf(eps):
        return 0.0
    alpha = _cdp_alpha(rho, eps)
    a, r, e = _arith.q(alpha), _arith.q(rho), _arith.q(eps)
    log_term = _arith.q(_arith.log_up(1 - 1 / a))
    exponent = (a - 1) * (a * r - e) + a * log_term
    numerator = _arith.exp_up(exponent)
    if math.isinf(numerator):
        return 1.0
    return min(1.0, _arith.div_up(numerator, a - 1))


def _zcdp_profile(rho: float) -> PrivacyProfile:
    rho = float(rho)
    return PrivacyProfile(lambda eps: _cdp_delta(rho, eps))


@constructor
def make_zCDP_to_approxDP(
    measurement: Measurement[TI, TO, DI, Any],
) -> Measurement[TI, TO, DI, Any]:
    r"""Restate a ρ-zCDP measurement by its privacy profile δ(ε) (``SmoothedMaxDivergence``).

    Privacy map: the profile of ρ = map(d_in), the tight conversion of Canonne, Kamath and
    Steinke (2020), minimised over the Rényi order α and rounded up:
        δ(ε) = min_α exp((α−1)(αρ−ε) + α·ln(1−1/α)) / (α−1)
    An ``approximate(zero_concentrated_divergence())`` loss (ρ, δ₀) becomes (profile, δ₀)
    in ``approximate(smoothed_max_divergence())``.

    Raises:
        NotImplementedForType: if the output measure is not zCDP or approximate zCDP.

    Proof: docs/proofs/make_zCDP_to_approxDP.md

    >>> import opendp_lite.prelude as dp
    >>> dp.enable_features("honest-but-curious")
    >>> space = dp.atom_domain(T=float), dp.absolute_distance(T=float)
    >>> zcdp = dp.m.make_user_measurement(
    ...     *space, dp.zero_concentrated_divergence(), lambda x: x, lambda d: d * d / 2)
    >>> profile = dp.c.make_zCDP_to_approxDP(zcdp).map(1.0)
    >>> round(profile.epsilon(1e-7), 6), round(profile.delta(1.0), 6)
    (5.670859, 0.246846)
    """
    measure = measurement.output_measure
    inner = measurement.map
    if isinstance(measure, ZeroConcentratedDivergence):

        def pure_map(d_in: DI) -> Any:
            return _zcdp_profile(inner(d_in))

        return Measurement(
            measurement.input_domain,
            measurement.input_metric,
            SmoothedMaxDivergence(),
            measurement.function,
            pure_map,
        )
    if isinstance(measure, Approximate) and isinstance(measure.inner, ZeroConcentratedDivergence):

        def approx_map(d_in: DI) -> Any:
            rho, delta = inner(d_in)
            return _zcdp_profile(rho), delta

        return Measurement(
            measurement.input_domain,
            measurement.input_metric,
            Approximate(SmoothedMaxDivergence()),
            measurement.function,
            approx_map,
        )
    _measure_error(
        "make_zCDP_to_approxDP", measurement, "ZeroConcentratedDivergence() or its approximate"
    )
    raise AssertionError  # pragma: no cover - _measure_error raises


@constructor
def make_approximate(
    measurement: Measurement[TI, TO, DI, MO],
) -> Measurement[TI, TO, DI, tuple[MO, float]]:
    r"""Restate a measurement under ``approximate(M)``: the loss d becomes (d, δ = 0).

    Privacy map: :math:`d_{out}(d_{in}) = (\mathrm{map}(d_{in}), 0)`.

    Raises:
        NotImplementedForType: if the output measure is already approximate.

    Proof: docs/proofs/make_approximate.md

    >>> import opendp_lite.prelude as dp
    >>> dp.enable_features("honest-but-curious")
    >>> space = dp.atom_domain(T=float), dp.absolute_distance(T=float)
    >>> pure = dp.m.make_user_measurement(*space, dp.max_divergence(), lambda x: x, lambda d: d)
    >>> approx = dp.c.make_approximate(pure)
    >>> approx.output_measure, approx.map(0.5)
    (Approximate(MaxDivergence), (0.5, 0.0))
    """
    if isinstance(measurement.output_measure, Approximate):
        _measure_error("make_approximate", measurement, "a measure that is not yet approximate")
    inner = measurement.map

    def privacy_map(d_in: DI) -> tuple[MO, float]:
        return inner(d_in), 0.0

    return Measurement(
        measurement.input_domain,
        measurement.input_metric,
        Approximate(measurement.output_measure),
        measurement.function,
        privacy_map,
    )


@constructor
def make_fix_delta(
    measurement: Measurement[TI, TO, DI, Any], delta: float
) -> Measurement[TI, TO, DI, tuple[float, float]]:
    r"""Fix δ in a privacy profile, giving (ε, δ)-DP (``approximate(max_divergence())``).

    Privacy map: for a profile loss, :math:`(ε, δ) = (\mathrm{profile.epsilon}(δ), δ)`; for an
    ``approximate(smoothed_max_divergence())`` loss (profile, δ₀) with δ₀ <= δ,
    :math:`(\mathrm{profile.epsilon}(δ - δ_0), δ)`, δ − δ₀ rounded down.  ε is a float at
    which the conservative profile is checked to be <= δ (and the float just below it fails
    that check); it is not claimed to be the least such float, since the profile computed per
    ε need not be monotone.

    Raises:
        InvalidParameter: if ``delta`` is not in [0, 1].
        NotImplementedForType: if the output measure is not a privacy profile.
        FailedMap (at map time): if δ₀ > ``delta``.

    Proof: docs/proofs/make_fix_delta.md

    >>> import opendp_lite.prelude as dp
    >>> dp.enable_features("honest-but-curious")
    >>> space = dp.atom_domain(T=float), dp.absolute_distance(T=float)
    >>> zcdp = dp.m.make_user_measurement(
    ...     *space, dp.zero_concentrated_divergence(), lambda x: x, lambda d: d * d / 2)
    >>> fixed = dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(zcdp), delta=1e-7)
    >>> fixed.output_measure, fixed.check(1.0, (5.68, 1e-7))
    (Approximate(MaxDivergence), True)
    """
    delta = check_finite_nonneg("delta", delta)
    if delta > 1:
        raise InvalidParameter(f"delta must be in [0, 1], got {delta!r}")
    measure = measurement.output_measure
    inner = measurement.map
    if isinstance(measure, SmoothedMaxDivergence):

        def pure_map(d_in: DI) -> tuple[float, float]:
            profile: PrivacyProfile = inner(d_in)
            return profile.epsilon(delta), delta

        privacy_map = pure_map
    elif isinstance(measure, Approximate) and isinstance(measure.inner, SmoothedMaxDivergence):

        def approx_map(d_in: DI) -> tuple[float, float]:
            profile, delta_0 = inner(d_in)
            if delta_0 > delta:
                raise FailedMap(
                    f"delta ({delta!r}) must be at least the measurement's own delta {delta_0!r}"
                )
            return profile.epsilon(_arith.down(_arith.q(delta) - _arith.q(delta_0))), delta

        privacy_map = approx_map
    else:
        _measure_error("make_fix_delta", measurement, "SmoothedMaxDivergence() or its approximate")
    return Measurement(
        measurement.input_domain,
        measurement.input_metric,
        Approximate(MaxDivergence()),
        measurement.function,
        privacy_map,
    )


@constructor
def make_fixed_approxDP_to_approxDP(
    measurement: Measurement[TI, TO, DI, tuple[float, float]],
) -> Measurement[TI, TO, DI, PrivacyProfile]:
    r"""Restate an (ε, δ)-DP measurement by the privacy profile it implies.

    Privacy map: with (ε₀, δ₀) = map(d_in), the profile is
        δ(ε) = δ₀ if ε >= ε₀, else 1
    (an (ε₀, δ₀)-DP mechanism is (ε, δ₀)-DP for every ε >= ε₀; below ε₀ nothing is known).

    Raises:
        NotImplementedForType: if the output measure is not ``approximate(max_divergence())``.

    Proof: docs/proofs/make_fixed_approxDP_to_approxDP.md

    >>> import opendp_lite.prelude as dp
    >>> dp.enable_features("honest-but-curious")
    >>> space = dp.atom_domain(T=float), dp.absolute_distance(T=float)
    >>> approx = dp.m.make_user_measurement(
    ...     *space, dp.approximate(dp.max_divergence()), lambda x: x, lambda d: (d, 1e-6))
    >>> profile = dp.c.make_fixed_approxDP_to_approxDP(approx).map(0.5)
    >>> profile.delta(0.5), profile.delta(0.4), profile.epsilon(1e-6)
    (1e-06, 1.0, 0.5)
    """
    measure = measurement.output_measure
    if not (isinstance(measure, Approximate) and isinstance(measure.inner, MaxDivergence)):
        _measure_error(
            "make_fixed_approxDP_to_approxDP", measurement, "Approximate(MaxDivergence())"
        )
    inner = measurement.map

    def privacy_map(d_in: DI) -> PrivacyProfile:
        eps_0, delta_0 = inner(d_in)
        return PrivacyProfile(lambda eps: delta_0 if eps >= eps_0 else 1.0)

    return Measurement(
        measurement.input_domain,
        measurement.input_metric,
        SmoothedMaxDivergence(),
        measurement.function,
        privacy_map,
    )
