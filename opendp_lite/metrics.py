"""Metrics: what "neighbouring" means, and the type of a distance.

Dataset metrics (symmetric, insert-delete, change-one, Hamming) count record edits; their
distances are non-negative integers.  Sensitivity metrics (absolute, L1, L2, L∞) measure
aggregates; their distance type ``T`` follows OpenDP.

>>> symmetric_distance(), absolute_distance(T=float), l2_distance(T="f32")
(SymmetricDistance(), AbsoluteDistance(f64), L2Distance(f32))
>>> l1_distance(T=int) == l1_distance(T="i32")
True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Concatenate, Generic, Literal, ParamSpec, Protocol, TypeVar, cast, overload

from ._types import NUMERIC_TYPES, carrier_name
from .core import Metric, _check_distance
from .errors import FailedMap, InvalidParameter, NotImplementedForType

__all__ = [
    "AbsoluteDistance",
    "ChangeOneDistance",
    "ChangeOneIdDistance",
    "DiscreteDistance",
    "ExtrinsicDistance",
    "HammingDistance",
    "InsertDeleteDistance",
    "L0PInfDistance",
    "L1Distance",
    "L2Distance",
    "LInfDistance",
    "PartitionDistance",
    "SymmetricDistance",
    "SymmetricIdDistance",
    "UserDistance",
    "absolute_distance",
    "change_one_distance",
    "change_one_id_distance",
    "discrete_distance",
    "hamming_distance",
    "insert_delete_distance",
    "l01inf_distance",
    "l02inf_distance",
    "l1_distance",
    "l2_distance",
    "linf_distance",
    "partition_distance",
    "symmetric_distance",
    "symmetric_id_distance",
    "user_distance",
]

T = TypeVar("T")

FloatName = Literal["f64", "f32", "float"]
IntName = Literal["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "usize", "int"]


@dataclass(frozen=True)
class _DatasetMetric(Metric[int]):
    distance_type = "u32"

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


@dataclass(frozen=True, repr=False)
class SymmetricDistance(_DatasetMetric):
    """Size of the symmetric difference of two multisets (add/remove a record counts 1)."""


@dataclass(frozen=True, repr=False)
class InsertDeleteDistance(_DatasetMetric):
    """Insertions and deletions needed to turn one ordered dataset into the other."""


@dataclass(frozen=True, repr=False)
class ChangeOneDistance(_DatasetMetric):
    """Records changed between two datasets of the same (unordered) size."""


@dataclass(frozen=True, repr=False)
class HammingDistance(_DatasetMetric):
    """Positions at which two ordered datasets of the same size differ."""


@dataclass(frozen=True, repr=False)
class DiscreteDistance(_DatasetMetric):
    """0 if equal, 1 otherwise."""


def symmetric_distance() -> SymmetricDistance:
    """The symmetric distance between datasets (the unbounded-DP neighbour relation)."""
    return SymmetricDistance()


def insert_delete_distance() -> InsertDeleteDistance:
    """The insert-delete distance between ordered datasets."""
    return InsertDeleteDistance()


def change_one_distance() -> ChangeOneDistance:
    """The change-one distance between same-size datasets (bounded DP)."""
    return ChangeOneDistance()


def hamming_distance() -> HammingDistance:
    """The Hamming distance between same-size ordered datasets."""
    return HammingDistance()


def discrete_distance() -> DiscreteDistance:
    """The discrete metric: 0 if equal, 1 otherwise."""
    return DiscreteDistance()


@dataclass(frozen=True)
class _SensitivityMetric(Metric[T], Generic[T]):
    T: str

    def __post_init__(self) -> None:
        if self.T not in NUMERIC_TYPES:
            raise NotImplementedForType(
                f"{type(self).__name__} needs a numeric distance type T, got {self.T!r}"
            )

    @property
    def distance_type(self) -> str:
        return self.T

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.T})"

    def __class_getitem__(cls, item: Any) -> Any:
        """At run time, ``L1Distance[int]`` is OpenDP's type descriptor ``L1Distance<i32>``.

        So OpenDP code that passes ``MO=dp.L1Distance[int]`` works unchanged; type variables
        and non-carrier arguments keep the ordinary generic alias (for annotations).
        """
        if cls is not _SensitivityMetric and not isinstance(item, TypeVar):
            from .typing import RuntimeType, SensitivityMetric

            try:
                name = RuntimeType.parse(item)
            except NotImplementedForType:
                name = ""
            if name in NUMERIC_TYPES:
                return SensitivityMetric(cls.__name__, [name])
        return super().__class_getitem__(item)  # type: ignore[misc]


@dataclass(frozen=True, repr=False)
class AbsoluteDistance(_SensitivityMetric[T]):
    """|x − x′| between scalars."""


@dataclass(frozen=True, repr=False)
class L1Distance(_SensitivityMetric[T]):
    """Σ|x_i − x′_i| between vectors of equal length."""


@dataclass(frozen=True, repr=False)
class L2Distance(_SensitivityMetric[T]):
    """sqrt(Σ(x_i − x′_i)²) between vectors of equal length."""


@dataclass(frozen=True)
class LInfDistance(_SensitivityMetric[T]):
    """max|x_i − x′_i|; with ``monotonic=True`` all differences share one sign."""

    monotonic: bool = False

    def __repr__(self) -> str:
        mono = "monotonic, " if self.monotonic else ""
        return f"LInfDistance({mono}T={self.T})"


_P = ParamSpec("_P")
_R = TypeVar("_R")
_I = TypeVar("_I")
_F = TypeVar("_F")
_RI = TypeVar("_RI", covariant=True)
_RF = TypeVar("_RF", covariant=True)
_RA = TypeVar("_RA", covariant=True)


class ByDistanceType(Protocol[_P, _RI, _RF, _RA]):
    """Typing only: the distance-type table of the sensitivity metrics, written once.

    ``T`` an integer type or name gives ``_RI``, a float one ``_RF``, anything else (a numpy
    type, a ``RuntimeType``) ``_RA``, the function's own return type; its other parameters
    (``monotonic``) are carried by ``_P``.
    """

    @overload
    def __call__(self, T: type[int] | IntName, *a: _P.args, **k: _P.kwargs) -> _RI: ...
    @overload
    def __call__(self, T: type[float] | FloatName, *a: _P.args, **k: _P.kwargs) -> _RF: ...
    @overload
    def __call__(self, T: object, *a: _P.args, **k: _P.kwargs) -> _RA: ...


class _Rows(Generic[_I, _F]):
    """Typing only: the integer and float rows of a :class:`ByDistanceType`."""


class _ByDistanceType(Protocol[_RI, _RF]):
    def __call__(
        self, fn: Callable[Concatenate[Any, _P], _R], /
    ) -> ByDistanceType[_P, _RI, _RF, _R]: ...


def _by_distance_type(rows: _Rows[_I, _F] | None) -> _ByDistanceType[_I, _F]:
    """Typing only: ``@_by_distance_type(cast("_Rows[X[int], X[float]]", None))`` types a
    metric by :class:`ByDistanceType`; at run time it returns the function itself."""
    return cast(_ByDistanceType[_I, _F], lambda fn: fn)


@_by_distance_type(cast("_Rows[AbsoluteDistance[int], AbsoluteDistance[float]]", None))
def absolute_distance(T: object) -> AbsoluteDistance[Any]:
    """The absolute distance |x − x′| with distance type ``T``.

    >>> absolute_distance(T=int)
    AbsoluteDistance(i32)
    """
    return AbsoluteDistance(carrier_name(T))


@_by_distance_type(cast("_Rows[L1Distance[int], L1Distance[float]]", None))
def l1_distance(T: object) -> L1Distance[Any]:
    """The L1 distance between vectors, with distance type ``T``."""
    return L1Distance(carrier_name(T))


@_by_distance_type(cast("_Rows[L2Distance[int], L2Distance[float]]", None))
def l2_distance(T: object) -> L2Distance[Any]:
    """The L2 distance between vectors, with distance type ``T``."""
    return L2Distance(carrier_name(T))


@_by_distance_type(cast("_Rows[LInfDistance[int], LInfDistance[float]]", None))
def linf_distance(T: object, monotonic: bool = False) -> LInfDistance[Any]:
    """The L∞ distance between vectors, with distance type ``T``.

    >>> linf_distance(T=float, monotonic=True)
    LInfDistance(monotonic, T=f64)
    """
    return LInfDistance(carrier_name(T), bool(monotonic))


class ExtrinsicDistance(Metric[Any]):
    """A metric defined outside the library (OpenDP's class for what ``user_distance`` returns)."""

    __slots__ = ()


@dataclass(frozen=True)
class UserDistance(ExtrinsicDistance):
    """A user-defined metric, equal to another when identifier and descriptor are.

    As in OpenDP, its distances may be of any type the user's maps agree on (a
    ``datetime.timedelta``, a tuple, ...); ``check`` compares them with ``<=``.  A numeric
    distance is still checked like a built-in metric's (a number, not NaN, finite, ``>= 0``).
    """

    identifier: str
    descriptor: Any = None
    distance_type = "f64"

    def _check_distance(self, d: object) -> Any:
        import numbers

        if d is None:
            raise FailedMap(f"a distance for {self!r} is required, got None")
        if isinstance(d, numbers.Number) or _is_numpy_number(d):
            return super()._check_distance(d)
        return d  # a user-defined distance: its meaning is the user's maps'

    def __repr__(self) -> str:
        return str(self.identifier)  # as OpenDP prints a user distance


def _is_numpy_number(d: object) -> bool:
    import numpy as np

    return isinstance(d, np.number)


def user_distance(identifier: str, descriptor: Any = None) -> UserDistance:
    """A user-defined metric, identified by name.

    >>> user_distance("MyMetric") == user_distance("MyMetric")
    True
    """
    return UserDistance(identifier, descriptor)


# ----------------------------------------------------------------------------------------------
# Distances between partitioned data: (l0, lp, l∞)


@dataclass(frozen=True)
class L0PInfDistance(Metric[tuple[int, Any, Any]]):
    """(l0, lp, l∞) between maps or partitions, generic in the ``inner`` metric, as in OpenDP.

    ``l0`` bounds how many keys (partitions) differ, ``lp`` the ℓp norm (p = 1 or 2) of the
    per-key distances in ``inner`` and ``l∞`` the largest of them.  For a map, a key present
    in only one map counts with its whole value.  ``inner`` is an ``absolute_distance`` (maps
    of numbers) or a dataset metric such as ``symmetric_distance`` (partitioned datasets).
    """

    inner: AbsoluteDistance[Any] | SymmetricDistance
    p: int = 1

    def __repr__(self) -> str:
        return f"L0{self.p}InfDistance({self.inner!r})"

    @property
    def distance_type(self) -> str:
        D = self.inner.distance_type
        return f"(u32, {D}, {D})"

    def _check_distance(self, d: object) -> tuple[int, Any, Any]:
        if not (isinstance(d, tuple | list) and len(d) == 3):
            raise FailedMap(f"a distance in {self!r} is a triple (l0, lp, linf), got {d!r}")
        from .core import _check_distance

        l0 = _check_distance(self, d[0], "u32")
        lp = self.inner._check_distance(d[1])
        linf = self.inner._check_distance(d[2])
        return int(l0), lp, linf

    def _le(self, a: tuple[int, Any, Any], b: tuple[int, Any, Any]) -> bool:
        """Componentwise: a triple bounds another only if each part does."""
        return all(u <= v for u, v in zip(a, b, strict=True))


def _l0pinf(metric: Metric[Any], p: int, name: str) -> L0PInfDistance:
    if not isinstance(metric, (AbsoluteDistance, SymmetricDistance)):  # as OpenDP 0.16
        raise NotImplementedForType(
            f"{name} needs absolute_distance(T) or symmetric_distance() as the inner metric, "
            f"got {metric!r}"
        )
    return L0PInfDistance(metric, p)


def l01inf_distance(metric: Metric[Any]) -> L0PInfDistance:
    """The L0,1,∞ distance: (keys that differ, Σ and max of the per-key distances in ``metric``).

    >>> l01inf_distance(absolute_distance(T=int)), l01inf_distance(symmetric_distance())
    (L01InfDistance(AbsoluteDistance(i32)), L01InfDistance(SymmetricDistance()))

    Raises:
        NotImplementedForType: unless ``metric`` is an absolute or symmetric distance.
    """
    return _l0pinf(metric, 1, "l01inf_distance")


def l02inf_distance(metric: Metric[Any]) -> L0PInfDistance:
    """The L0,2,∞ distance: (keys that differ, ℓ2 norm and max of the per-key distances).

    Raises:
        NotImplementedForType: unless ``metric`` is an absolute or symmetric distance.
    """
    return _l0pinf(metric, 2, "l02inf_distance")


# -- individuals and partitions (make_partition_by, make_grouped) ---------------------------

Triple = tuple[int, int, int]


@dataclass(frozen=True)
class SymmetricIdDistance(Metric[int]):
    """Individuals (all rows sharing one ``identifier`` value) added or removed.

    ``d(x, x')`` is the size of the symmetric difference of the multisets of *blocks*
    ``(id, rows of id)``: adding or removing one individual with all its rows counts 1, and
    changing one individual's rows counts 2, as changing one row does under the symmetric
    distance.
    """

    identifier: Any
    distance_type = "u32"

    def __repr__(self) -> str:
        return f"SymmetricIdDistance({self.identifier!r})"


def symmetric_id_distance(identifier: Any) -> SymmetricIdDistance:
    """Distance between dataframes counting individuals, identified by column ``identifier``.

    >>> symmetric_id_distance("user")
    SymmetricIdDistance('user')
    """
    return SymmetricIdDistance(identifier)


@dataclass(frozen=True)
class ChangeOneIdDistance(Metric[int]):
    """Individuals (all rows sharing one ``identifier`` value) whose rows are changed.

    ``d(x, x')`` is the least number of individuals whose blocks of rows must be replaced
    (each by another block, of any size, under the same identifier) to turn ``x`` into
    ``x'``; the individuals present are the same on both sides.  One change is at most two
    edits under :func:`symmetric_id_distance` (remove the block, add the new one).
    """

    identifier: Any
    distance_type = "u32"

    def __repr__(self) -> str:
        return f"ChangeOneIdDistance({self.identifier!r})"


def change_one_id_distance(identifier: Any) -> ChangeOneIdDistance:
    """Distance between dataframes counting individuals changed, identified by column
    ``identifier`` (OpenDP's ``change_one_id_distance``).

    >>> change_one_id_distance("user")
    ChangeOneIdDistance('user')
    """
    return ChangeOneIdDistance(identifier)


@dataclass(frozen=True)
class PartitionDistance(Metric[Triple]):
    """``(l0, l1, l∞)`` between partitioned datasets: groups that differ, records that differ
    in all groups, and the most records that differ in one group (each group's difference
    measured by ``inner``, the symmetric distance)."""

    inner: SymmetricDistance
    distance_type = "(u32, u32, u32)"

    def __repr__(self) -> str:
        return f"PartitionDistance({self.inner!r})"

    def _check_distance(self, d: object) -> Triple:
        if not (isinstance(d, tuple | list) and len(d) == 3):
            raise FailedMap(f"a distance in {self!r} is a triple (l0, l1, linf), got {d!r}")
        l0, l1, li = (int(_check_distance(self, v, "u32")) for v in d)
        return l0, l1, li


def partition_distance(metric: SymmetricDistance | None = None) -> PartitionDistance:
    """The partition distance over groups whose records are compared by ``metric``.

    >>> partition_distance()
    PartitionDistance(SymmetricDistance())
    """
    metric = symmetric_distance() if metric is None else metric
    if not isinstance(metric, SymmetricDistance):
        raise InvalidParameter(f"partition_distance needs symmetric_distance(), got {metric!r}")
    return PartitionDistance(metric)
