"""Privacy measures: the units in which a measurement's privacy loss is stated.

>>> max_divergence(), zero_concentrated_divergence(), approximate(max_divergence())
(MaxDivergence, ZeroConcentratedDivergence, Approximate(MaxDivergence))
>>> approximate(max_divergence())._le((0.5, 1e-7), (1.0, 1e-6))
True
"""

from __future__ import annotations

import math
import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ._validate import check_real
from .core import Measure, _check_distance
from .errors import FailedMap, InvalidParameter

__all__ = [
    "Approximate",
    "ExtrinsicDivergence",
    "MaxDivergence",
    "PrivacyProfile",
    "RandomDivergence",
    "RenyiDivergence",
    "SmoothedMaxDivergence",
    "UserDivergence",
    "ZeroConcentratedDivergence",
    "approximate",
    "check_gamma",
    "fixed_smoothed_max_divergence",
    "max_divergence",
    "new_privacy_profile",
    "random_max_divergence",
    "random_zero_concentrated_divergence",
    "renyi_divergence",
    "smoothed_max_divergence",
    "user_divergence",
    "zero_concentrated_divergence",
]

Q = TypeVar("Q")


@dataclass(frozen=True)
class _ScalarMeasure(Measure[float]):
    def __repr__(self) -> str:
        return type(self).__name__  # as OpenDP 0.16 prints a measure: no parentheses


@dataclass(frozen=True, repr=False)
class MaxDivergence(_ScalarMeasure):
    """Pure DP: the loss is ε = sup log(Pr[M(x) ∈ S] / Pr[M(x′) ∈ S])."""


@dataclass(frozen=True, repr=False)
class ZeroConcentratedDivergence(_ScalarMeasure):
    """zCDP: the loss is ρ with D_α(M(x) ‖ M(x′)) ≤ ρα for every α > 1 (Bun & Steinke 2016)."""


@dataclass(frozen=True)
class Approximate(Measure[tuple[Q, float]], Generic[Q]):
    """The inner measure relaxed by δ: the loss is a pair ``(inner_loss, δ)``, δ ∈ [0, 1]."""

    inner: Measure[Q]

    def __repr__(self) -> str:
        return f"Approximate({self.inner!r})"

    @property
    def inner_measure(self) -> Measure[Q]:
        """The measure δ relaxes (OpenDP's name): ``approximate(max_divergence())``'s is
        ``max_divergence()``."""
        return self.inner

    @property
    def distance_type(self) -> str:
        """The loss type as OpenDP names it: ``"(f64, f64)"`` for approximate pure DP."""
        return f"({self.inner.distance_type}, f64)"

    def _check_loss(self, d: object) -> tuple[Q, float]:
        if not (isinstance(d, tuple | list) and len(d) == 2):
            raise FailedMap(f"a loss in {self!r} is a pair (inner, delta), got {d!r}")
        inner = self.inner._check_loss(d[0])
        delta = float(_check_distance(self, d[1], "f64"))
        if delta > 1:
            raise FailedMap(f"delta must be in [0, 1], got {delta!r}")
        return inner, delta

    def _le(self, a: tuple[Q, float], b: tuple[Q, float]) -> bool:
        return self.inner._le(a[0], b[0]) and a[1] <= b[1]


class PrivacyProfile:
    r"""A privacy profile δ(ε): the loss of a measurement under ``SmoothedMaxDivergence``.

    ``delta(epsilon)`` returns an upper bound on the hockey-stick divergence
    :math:`\sup_S \Pr[M(x) \in S] - e^{\varepsilon} \Pr[M(x') \in S]` at ``epsilon``.
    ``epsilon(delta)`` returns a binary64 ε at which that upper bound is checked to be
    ``<= delta``, found by bisection on the float line; the float just below it fails the same
    check.  The bound need not be monotone in ε, so ε is not claimed to be the least passing
    float; since it is checked against the conservative ``delta``, it is a valid ε for ``delta``.

    >>> p = PrivacyProfile(lambda eps: 0.0 if eps >= 1.0 else 1.0)
    >>> p.delta(1.0), p.epsilon(1e-6), p.epsilon(1.0)
    (0.0, 1.0, 0.0)
    >>> PrivacyProfile(lambda eps: 0.5).epsilon(0.1)
    inf
    """

    __slots__ = ("_delta",)

    def __init__(self, delta: Callable[[float], float]) -> None:
        self._delta = delta

    def __repr__(self) -> str:
        return "PrivacyProfile()"

    def delta(self, epsilon: float) -> float:
        """An upper bound on δ at ``epsilon`` (``epsilon`` may be ``inf``, where δ is 0).

        Raises:
            FailedMap: if ``epsilon`` is negative or NaN, or the profile returns NaN or a
            negative δ.
        """
        if isinstance(epsilon, bool) or not (float(epsilon) >= 0):
            raise FailedMap(f"epsilon must be >= 0, got {epsilon!r}")
        d = float(self._delta(float(epsilon)))
        if math.isnan(d) or d < 0:
            raise FailedMap(f"privacy profile returned an invalid delta {d!r}")
        return min(d, 1.0)

    def epsilon(self, delta: float) -> float:
        """A float ε with ``delta(ε) <= delta`` whose float predecessor fails (``inf`` if the
        search finds none); the least such ε when ``delta(·)`` is non-increasing.

        Raises:
            FailedMap: if ``delta`` is not in [0, 1].
        """
        if isinstance(delta, bool) or not (0 <= float(delta) <= 1):
            raise FailedMap(f"delta must be in [0, 1], got {delta!r}")
        target = float(delta)
        if self.delta(0.0) <= target:
            return 0.0
        # exponential search for a passing upper end; every float doubling stays exact
        hi = 2.0**-20
        while self.delta(hi) > target:
            if hi >= _MAX_FLOAT:
                return math.inf
            hi = min(hi * 2.0, _MAX_FLOAT)
        lo = hi / 2.0 if hi > 2.0**-20 else 0.0
        # bisect on the bit patterns: non-negative floats are ordered like their bits, so the
        # loop ends with lo, hi adjacent floats, delta(lo) > target >= delta(hi)
        lo_bits, hi_bits = _bits(lo), _bits(hi)
        while hi_bits - lo_bits > 1:
            mid_bits = (lo_bits + hi_bits) // 2
            if self.delta(_float(mid_bits)) <= target:
                hi_bits = mid_bits
            else:
                lo_bits = mid_bits
        return _float(hi_bits)


_MAX_FLOAT = sys.float_info.max


def _bits(x: float) -> int:
    return int(struct.unpack("<q", struct.pack("<d", x))[0])


def _float(bits: int) -> float:
    return float(struct.unpack("<d", struct.pack("<q", bits))[0])


@dataclass(frozen=True)
class SmoothedMaxDivergence(Measure[PrivacyProfile]):
    """Approximate DP stated as a whole privacy profile δ(ε)."""

    def __repr__(self) -> str:
        return "SmoothedMaxDivergence"

    def _check_loss(self, d: object) -> PrivacyProfile:
        if not isinstance(d, PrivacyProfile):
            raise FailedMap(f"a loss in {self!r} is a PrivacyProfile, got {d!r}")
        return d

    def _le(self, a: PrivacyProfile, b: PrivacyProfile) -> bool:
        raise FailedMap("privacy profiles are not totally ordered; fix a delta first")


@dataclass(frozen=True)
class RenyiDivergence(Measure[Callable[[float], float]]):
    """Rényi DP: the loss is a curve α ↦ ε(α) (Mironov 2017)."""

    def __repr__(self) -> str:
        return "RenyiDivergence"

    def _check_loss(self, d: object) -> Callable[[float], float]:
        if not callable(d):
            raise FailedMap(f"a loss in {self!r} is a curve alpha -> epsilon, got {d!r}")
        return d

    def _le(self, a: Callable[[float], float], b: Callable[[float], float]) -> bool:
        raise FailedMap("RDP curves are not totally ordered; compare them at fixed alphas")


class ExtrinsicDivergence(Measure[Any]):
    """A measure defined outside the library (OpenDP's class for ``user_divergence``)."""

    __slots__ = ()


@dataclass(frozen=True)
class UserDivergence(ExtrinsicDivergence):
    """A user-defined privacy measure, equal to another when identifier and descriptor are."""

    identifier: str
    descriptor: Any = None

    def _check_loss(self, d: object) -> Any:
        """As for ``user_distance``: a numeric loss is checked like a built-in measure's (a
        number, not NaN, finite, ``>= 0``); any other value (a privacy curve, ...) is the
        user's maps' to define, as in OpenDP."""
        import numbers

        if d is None:
            raise FailedMap(f"a loss in {self!r} is required, got None")
        if isinstance(d, numbers.Number) or hasattr(d, "dtype"):  # numpy numbers too
            return super()._check_loss(d)
        return d

    def __repr__(self) -> str:
        return str(self.identifier)  # as OpenDP prints a user divergence


def max_divergence() -> MaxDivergence:
    """Pure differential privacy (ε)."""
    return MaxDivergence()


def zero_concentrated_divergence() -> ZeroConcentratedDivergence:
    """Zero-concentrated differential privacy (ρ)."""
    return ZeroConcentratedDivergence()


def approximate(measure: Measure[Q]) -> Approximate[Q]:
    """Relax ``measure`` by δ; losses become ``(inner, δ)`` pairs.

    >>> approximate(zero_concentrated_divergence())
    Approximate(ZeroConcentratedDivergence)
    """
    return Approximate(measure)


def fixed_smoothed_max_divergence() -> Approximate[float]:
    """(ε, δ)-DP with δ fixed: the same as ``approximate(max_divergence())``, as in OpenDP 0.16."""
    return Approximate(MaxDivergence())


def smoothed_max_divergence() -> SmoothedMaxDivergence:
    """Approximate DP as a privacy profile δ(ε)."""
    return SmoothedMaxDivergence()


def renyi_divergence() -> RenyiDivergence:
    """Rényi differential privacy (an ε(α) curve)."""
    return RenyiDivergence()


def user_divergence(identifier: str, descriptor: Any = None) -> UserDivergence:
    """A user-defined privacy measure, identified by name."""
    return UserDivergence(identifier, descriptor)


# ----------------------------------------------------------------------------------------------
# Random DP (Hall, Rinaldo & Wasserman 2012): a guarantee over random pairs of neighbours


def check_gamma(gamma: object) -> float:
    """γ of random DP, a real number in (0, 1)."""
    g = check_real("gamma", gamma, what="a real number in (0, 1)")
    if not (0 < g < 1):
        raise InvalidParameter(f"gamma must be in (0, 1), got {gamma!r}")
    return g


@dataclass(frozen=True)
class RandomDivergence(Measure[Q], Generic[Q]):
    """Random DP: the ``inner`` guarantee holds with probability ≥ 1 − ``gamma`` over a random
    pair of neighbouring datasets drawn from the data-generating distribution (and the sampling
    of the sensitivity).  It is *not* worst-case DP; it is never equal to the inner measure.

    >>> random_max_divergence(0.05)
    RandomMaxDivergence(gamma=0.05)
    >>> random_max_divergence(0.05) == MaxDivergence()
    False
    """

    inner: Measure[Q]
    gamma: float

    def __repr__(self) -> str:
        return f"Random{type(self.inner).__name__}(gamma={self.gamma!r})"

    def _check_loss(self, d: object) -> Q:
        return self.inner._check_loss(d)

    def _le(self, a: Q, b: Q) -> bool:
        return self.inner._le(a, b)


def random_max_divergence(gamma: float) -> RandomDivergence[float]:
    """(ε, γ)-random DP: ε-DP with confidence 1 − γ.

    Raises:
        InvalidParameter: if γ is outside (0, 1).
    """
    return RandomDivergence(MaxDivergence(), check_gamma(gamma))


def random_zero_concentrated_divergence(gamma: float) -> RandomDivergence[float]:
    """(ρ, γ)-random zCDP: ρ-zCDP with confidence 1 − γ.

    Raises:
        InvalidParameter: if γ is outside (0, 1).
    """
    return RandomDivergence(ZeroConcentratedDivergence(), check_gamma(gamma))


def new_privacy_profile(curve: Callable[[float], float]) -> PrivacyProfile:
    r"""A :class:`PrivacyProfile` from a user's curve ε ↦ δ(ε), trusted as written.

    As OpenDP 0.16's ``dp.new_privacy_profile``: the curve must be non-increasing with values
    in [0, 1]; the library cannot verify that, so it needs ``honest-but-curious``.  ``delta``
    refuses a negative or NaN ε and a curve value that is NaN or negative; ``epsilon(delta)``
    inverts the curve by bisection on the floats (``inf`` if no ε suffices).

    >>> from opendp_lite.core import enable_features
    >>> enable_features("honest-but-curious")
    >>> profile = new_privacy_profile(lambda eps: 1.0 if eps < 0.5 else 1e-8)
    >>> profile.delta(0.499), profile.epsilon(1e-8), profile.epsilon(1e-9)
    (1.0, 0.5, inf)

    Raises:
        FeatureNotEnabled: unless ``enable_features("honest-but-curious")`` was called.
        InvalidParameter: if ``curve`` is not callable.
    """
    from .core import assert_features

    assert_features("honest-but-curious")
    if not callable(curve):
        raise InvalidParameter(f"curve must be a callable epsilon -> delta, got {curve!r}")
    return PrivacyProfile(curve)
