"""Privacy measures: the units in which a measurement's privacy loss is stated.

>>> max_divergence(), zero_concentrated_divergence(), approximate(max_divergence())
(MaxDivergence(), ZeroConcentratedDivergence(), Approximate(MaxDivergence()))
>>> approximate(max_divergence())._le((0.5, 1e-7), (1.0, 1e-6))
True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .core import Measure, _check_distance
from .errors import FailedMap

__all__ = [
    "Approximate",
    "MaxDivergence",
    "PrivacyProfile",
    "RenyiDivergence",
    "SmoothedMaxDivergence",
    "UserDivergence",
    "ZeroConcentratedDivergence",
    "approximate",
    "fixed_smoothed_max_divergence",
    "max_divergence",
    "renyi_divergence",
    "smoothed_max_divergence",
    "user_divergence",
    "zero_concentrated_divergence",
]

Q = TypeVar("Q")


@dataclass(frozen=True)
class _ScalarMeasure(Measure[float]):
    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


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
    """A privacy profile δ(ε): the loss of a measurement under ``SmoothedMaxDivergence``.

    ``delta(epsilon)`` must return an upper bound on the hockey-stick divergence at ``epsilon``.
    ``epsilon(delta)`` returns the least ε found with ``delta(ε) <= delta`` (an upper bound on
    the exact ε, by bisection on floats).
    """

    __slots__ = ("_delta",)

    def __init__(self, delta: Callable[[float], float]) -> None:
        self._delta = delta

    def delta(self, epsilon: float) -> float:
        """An upper bound on δ at ``epsilon``."""
        if not (epsilon >= 0):
            raise FailedMap(f"epsilon must be >= 0, got {epsilon!r}")
        d = float(self._delta(float(epsilon)))
        if math.isnan(d) or d < 0:
            raise FailedMap(f"privacy profile returned an invalid delta {d!r}")
        return min(d, 1.0)

    def epsilon(self, delta: float) -> float:
        """The least float ε (to bisection resolution, rounded up) with ``delta(ε) <= delta``."""
        if not (0 <= delta <= 1):
            raise FailedMap(f"delta must be in [0, 1], got {delta!r}")
        if self.delta(0.0) <= delta:
            return 0.0
        hi = 1.0
        while self.delta(hi) > delta:
            hi *= 2
            if hi > 1e300:
                return math.inf
        lo = 0.0
        # bisect on the float line until lo and hi are adjacent: delta(hi) <= delta holds
        while math.nextafter(lo, math.inf) < hi:
            mid = lo + (hi - lo) / 2
            if mid <= lo or mid >= hi:
                break
            if self.delta(mid) <= delta:
                hi = mid
            else:
                lo = mid
        return hi


@dataclass(frozen=True)
class SmoothedMaxDivergence(Measure[PrivacyProfile]):
    """Approximate DP stated as a whole privacy profile δ(ε)."""

    def __repr__(self) -> str:
        return "SmoothedMaxDivergence()"

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
        return "RenyiDivergence()"

    def _check_loss(self, d: object) -> Callable[[float], float]:
        if not callable(d):
            raise FailedMap(f"a loss in {self!r} is a curve alpha -> epsilon, got {d!r}")
        return d

    def _le(self, a: Callable[[float], float], b: Callable[[float], float]) -> bool:
        raise FailedMap("RDP curves are not totally ordered; compare them at fixed alphas")


@dataclass(frozen=True)
class UserDivergence(Measure[Any]):
    """A user-defined privacy measure, equal to another when identifier and descriptor are."""

    identifier: str
    descriptor: Any = None

    def __repr__(self) -> str:
        return f"UserDivergence({self.identifier})"


def max_divergence() -> MaxDivergence:
    """Pure differential privacy (ε)."""
    return MaxDivergence()


def zero_concentrated_divergence() -> ZeroConcentratedDivergence:
    """Zero-concentrated differential privacy (ρ)."""
    return ZeroConcentratedDivergence()


def approximate(measure: Measure[Q]) -> Approximate[Q]:
    """Relax ``measure`` by δ; losses become ``(inner, δ)`` pairs.

    >>> approximate(zero_concentrated_divergence())
    Approximate(ZeroConcentratedDivergence())
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
