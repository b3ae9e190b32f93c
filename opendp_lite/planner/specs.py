"""What the analyst asks for: statistics (small frozen value types) and their accuracy targets.

A statistic says *what* to release (a count, a sum, a mean, grouped counts or sums, a
quantile) over *which rows* (:class:`Rows`, all rows or one public predicate), and a
:class:`Target`: the half-width of the interval it must come with, absolute or relative,
at a confidence level, simultaneous over the groups of a grouped statistic.  Nothing here
reads data; every spec is a plain value that serialises to a ``dict`` and back.

>>> t = within(50, level=0.95)
>>> c = Count(name="adults", rows=Rows("age", ">=", 18), target=t)
>>> spec_from_dict(c.to_dict()) == c
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from ..errors import InvalidParameter

__all__ = [
    "Count",
    "GroupedCount",
    "GroupedSum",
    "Mean",
    "Quantile",
    "Rows",
    "Spec",
    "Sum",
    "Target",
    "spec_from_dict",
    "within",
]

_OPS = ("==", "!=", "<", "<=", ">", ">=", "in", "not in")


@dataclass(frozen=True)
class Rows:
    """The rows a statistic runs over: all of them, or those where ``column op value`` holds.

    The predicate is public (it reads one row), so it costs nothing (``make_filter_rows``).
    Two statistics over equal ``Rows`` share their noisy count.
    """

    column: Any = None
    op: str | None = None
    value: Any = None

    def __post_init__(self) -> None:
        if (self.column is None) != (self.op is None):
            raise InvalidParameter("Rows: give both column and op (or neither, for all rows)")
        if self.op is not None and self.op not in _OPS:
            raise InvalidParameter(f"Rows: op must be one of {_OPS}, got {self.op!r}")
        if isinstance(self.value, list):
            object.__setattr__(self, "value", tuple(self.value))

    def __str__(self) -> str:
        return "all rows" if self.column is None else f"{self.column} {self.op} {self.value!r}"

    @property
    def everything(self) -> bool:
        return self.column is None


@dataclass(frozen=True)
class Target:
    """An accuracy target: the half-width of the stated interval, at ``level`` confidence.

    ``relative=True`` reads ``half_width`` as a fraction of the true value, which needs
    ``lower_bound``, a public lower bound on the true value's magnitude (for a quantile: on
    the number of rows); the absolute half-width aimed at is ``half_width · lower_bound``.
    """

    half_width: float
    level: float = 0.95
    relative: bool = False
    lower_bound: float | None = None

    def __post_init__(self) -> None:
        hw = self.half_width
        if not isinstance(hw, (int, float)) or not math.isfinite(hw) or hw <= 0:
            raise InvalidParameter(f"Target: half_width must be finite and > 0, got {hw!r}")
        lv = self.level
        if not isinstance(lv, (int, float)) or not 0 < lv < 1:
            raise InvalidParameter(f"Target: level must be in (0, 1), got {lv!r}")
        lb = self.lower_bound
        if lb is not None and (not isinstance(lb, (int, float)) or not lb > 0):
            raise InvalidParameter(f"Target: lower_bound must be > 0, got {lb!r}")

    @property
    def alpha(self) -> float:
        """The probability the interval may miss: 1 − level."""
        return 1.0 - self.level

    def absolute(self, what: str) -> float:
        """The absolute half-width aimed at; a relative target without a bound is refused."""
        if not self.relative:
            return float(self.half_width)
        if self.lower_bound is None:
            raise InvalidParameter(
                f"{what}: a relative target (±{self.half_width:.3g} of the true value) needs a "
                "public lower bound on the true value: within(..., relative=True, "
                "lower_bound=b), b a bound you know without looking at the data (a public size "
                "or an earlier release); or state an absolute half-width"
            )
        return float(self.half_width) * float(self.lower_bound)

    def scaled(self, factor: float) -> Target:
        """The same target with its half-width times ``factor`` (a coarser target if > 1)."""
        return Target(self.half_width * factor, self.level, self.relative, self.lower_bound)

    def __str__(self) -> str:
        rel = f"{self.half_width:.3g}×true" if self.relative else f"{self.half_width:.6g}"
        return f"±{rel} at {self.level:.3g}"


def within(
    half_width: float, level: float = 0.95, relative: bool = False, lower_bound: float | None = None
) -> Target:
    """A :class:`Target`: ``within(50)`` is ±50 at 95%; ``within(0.02, relative=True,
    lower_bound=1000)`` is ±2% of a value known to be at least 1000.

    >>> within(50).alpha  # doctest: +ELLIPSIS
    0.05...
    """
    return Target(half_width, level, relative, lower_bound)


def _check_bounds(what: str, bounds: Any) -> tuple[Any, Any]:
    """Two integers (an integer column, exact integer noise) or two finite floats, one at
    least a float (an f64 column, released on the float grid with every rounding term in its
    stated interval, docs/proofs/planner.md §3)."""
    if isinstance(bounds, list):
        bounds = tuple(bounds)
    ok = (
        isinstance(bounds, tuple)
        and len(bounds) == 2
        and all(isinstance(b, (int, float)) and not isinstance(b, bool) for b in bounds)
        and all(math.isfinite(b) for b in bounds)
        and bounds[0] <= bounds[1]
    )
    if not ok:
        raise InvalidParameter(
            f"{what}: bounds must be two finite numbers lo <= hi (integers for an integer "
            f"column, floats for an f64 column), got {bounds!r}"
        )
    if all(isinstance(b, int) for b in bounds):
        return int(bounds[0]), int(bounds[1])
    return float(bounds[0]), float(bounds[1])


def _check_max_rows(what: str, max_rows: Any) -> None:
    if max_rows is not None and (
        not isinstance(max_rows, int) or isinstance(max_rows, bool) or max_rows < 1
    ):
        raise InvalidParameter(f"{what}: max_rows must be a positive int or None, got {max_rows!r}")


@dataclass(frozen=True)
class Spec:
    """A statistic to release, with its accuracy target (the base of the spec types)."""

    kind: ClassVar[str] = "spec"
    name: str
    target: Target
    rows: Rows = field(default_factory=Rows)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, (Target, Rows)):
                v = {g.name: _plain(getattr(v, g.name)) for g in fields(v)}
            out[f.name] = _plain(v)
        return out

    @property
    def groups(self) -> int:
        """How many released numbers share the target (1 but for grouped statistics)."""
        return 1


def _plain(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v


@dataclass(frozen=True)
class Count(Spec):
    """The number of rows in ``rows``."""

    kind: ClassVar[str] = "count"


@dataclass(frozen=True)
class Sum(Spec):
    """The sum of ``column`` clamped to ``bounds`` over ``rows``.

    Integer bounds: an integer column, summed exactly with integer noise.  Float bounds: an
    f64 column, summed on the float grid; its stated interval adds every rounding term of the
    float sum, part of which grows with the number of rows, so ``max_rows`` (a public upper
    bound on the rows summed) keeps it small; without it the sum's size limit (2^40 rows) is
    used.  (For a mean the per-row terms are divided by the count: ``max_rows`` is unused.)
    """

    kind: ClassVar[str] = "sum"
    column: Any = None
    bounds: tuple[Any, Any] = (0, 0)
    max_rows: int | None = None

    def __post_init__(self) -> None:
        what = f"{self.kind} {self.name!r}"
        object.__setattr__(self, "bounds", _check_bounds(what, self.bounds))
        _check_max_rows(what, self.max_rows)

    @property
    def is_float(self) -> bool:
        """True if the bounds are floats: an f64 column summed on the float grid."""
        return isinstance(self.bounds[0], float)


@dataclass(frozen=True)
class Mean(Sum):
    """The mean of ``column`` clamped to ``bounds``: a noisy sum over a noisy count.

    ``min_rows`` is a public lower bound on the number of rows in ``rows``: the mean's
    interval is only bounded when the count's noise cannot bring it near zero.
    """

    kind: ClassVar[str] = "mean"
    min_rows: int | None = None


@dataclass(frozen=True)
class GroupedCount(Spec):
    """The number of rows per value of ``by``.

    ``keys`` lists the public keys; ``keys=None`` releases the keys from the data with a
    threshold (approximate DP), which needs ``max_groups`` (a public bound on how many keys
    can occur) and ``release_size`` (groups with at least this many rows are released with
    probability ≥ level).  The target holds for every group at once if ``simultaneous``.
    ``exhaustive=True`` states (publicly) that every row's key is among ``keys``: the groups
    then sum to the count over the same rows, and the plan makes them consistent.
    """

    kind: ClassVar[str] = "grouped_count"
    by: Any = None
    keys: tuple[Any, ...] | None = None
    simultaneous: bool = True
    max_groups: int | None = None
    release_size: int | None = None
    exhaustive: bool = False

    def __post_init__(self) -> None:
        if self.exhaustive and self.keys is None:
            raise InvalidParameter(
                f"{self.kind} {self.name!r}: exhaustive=True says the public keys cover every "
                "row; it needs keys=[...]"
            )
        if isinstance(self.keys, list):
            object.__setattr__(self, "keys", tuple(self.keys))
        what = f"{self.kind} {self.name!r}"
        if self.keys is None and (self.max_groups is None or self.release_size is None):
            raise InvalidParameter(
                f"{what}: keys released from the data need max_groups (a public bound on the "
                "number of distinct keys) and release_size (the group size that must be "
                "released); or declare the public keys=[...]"
            )
        if self.keys is not None and len(self.keys) == 0:
            raise InvalidParameter(f"{what}: keys must not be empty")

    @property
    def groups(self) -> int:
        if not self.simultaneous:
            return 1
        return len(self.keys) if self.keys is not None else int(self.max_groups or 1)


@dataclass(frozen=True)
class GroupedSum(GroupedCount):
    """The sum of ``column`` clamped to ``bounds`` per value of ``by``.

    Released through ``make_grouped_sum``, which sums on the float grid whatever the column's
    type: the stated interval adds its rounding terms, with ``max_rows`` (a public bound on a
    group's rows; default the grouped sum's size limit, 2^40) for the part that grows with
    the rows.  Integer bounds read an integer column, float bounds an f64 column.
    """

    kind: ClassVar[str] = "grouped_sum"
    column: Any = None
    bounds: tuple[Any, Any] = (0, 0)
    max_rows: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        what = f"{self.kind} {self.name!r}"
        object.__setattr__(self, "bounds", _check_bounds(what, self.bounds))
        _check_max_rows(what, self.max_rows)

    @property
    def is_float(self) -> bool:
        """True if the bounds are floats (an f64 column)."""
        return isinstance(self.bounds[0], float)


@dataclass(frozen=True)
class Quantile(Spec):
    """The ``q``-quantile of ``column`` over ``rows``, chosen among public ``candidates``.

    The target is on the *rank*: the released candidate's quantile score (rows on the wrong
    side, ``|(1 − q)·#{x < c} − q·#{x > c}|``) is within ``half_width`` rows of the best
    candidate's; a relative target is a fraction of the rows (``lower_bound`` = rows).
    """

    kind: ClassVar[str] = "quantile"
    column: Any = None
    q: float = 0.5
    candidates: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.candidates, list):
            object.__setattr__(self, "candidates", tuple(self.candidates))
        if not 0 <= self.q <= 1:
            raise InvalidParameter(f"quantile {self.name!r}: q must be in [0, 1], got {self.q!r}")
        if len(self.candidates) < 1:
            raise InvalidParameter(f"quantile {self.name!r}: give at least one candidate")


_KINDS: dict[str, type[Spec]] = {
    k.kind: k for k in (Count, Sum, Mean, GroupedCount, GroupedSum, Quantile)
}


def spec_from_dict(d: dict[str, Any]) -> Spec:
    """Rebuild a spec from :meth:`Spec.to_dict`; every field is checked again.

    Raises:
        InvalidParameter: for an unknown kind or a bad field.
    """
    d = dict(d)
    kind = d.pop("kind", None)
    cls = _KINDS.get(str(kind))
    if cls is None:
        raise InvalidParameter(f"unknown statistic kind {kind!r}; known: {sorted(_KINDS)}")
    names = {f.name for f in fields(cls)}
    extra = set(d) - names
    if extra:
        raise InvalidParameter(f"{kind}: unknown fields {sorted(extra)}")
    if "target" in d:
        d["target"] = Target(**d["target"])
    if "rows" in d:
        d["rows"] = Rows(**d["rows"])
    return cls(**d)
