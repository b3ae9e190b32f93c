"""``dp.polars.Margin`` and ``dp.polars.Bound``: what is public about a grouped dataset, and the
bounds on one individual's contributions.

A :class:`Margin` describes the data (its groups' lengths, its number of groups, which of its
keys or lengths are invariant, i.e. unprotected); a :class:`Bound` describes one individual
(how many rows it adds to one group, how many groups it touches), and goes in the privacy unit
(``dp.unit_of(contributions=[dp.polars.Bound(...)], identifier=...)``); :class:`SortBy` is
the order a truncation keeps a person's rows in (``truncate_per_group(k, keep=SortBy(...))``).
As in OpenDP 0.16, the renamed 0.13 fields are deprecated properties (``max_partition_length``,
``max_num_partitions``,
``public_info``), and the two fields that moved to :class:`Bound` raise, naming where they
went.

>>> m = Margin(by=["region"], max_length=1000, invariant="keys")
>>> m.max_length, m.by_names()
(1000, ('region',))
>>> import warnings
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     m.max_partition_length
1000
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import InvalidParameter, NotImplementedForType
from . import nodes as n

__all__ = ["Bound", "Margin", "SortBy", "by_nodes"]

_INVARIANTS = (None, "keys", "lengths")


def by_nodes(by: Any) -> tuple[n.Expr, ...]:
    """The grouping columns ``by`` (names, ``dp.col``/``pl.col`` expressions) as nodes."""
    from .builder import to_node

    items = [by] if isinstance(by, str) or not isinstance(by, Sequence) else list(by)
    return tuple(to_node(b) for b in items)


def _moved(name: str, field_: str) -> NotImplementedError:
    return NotImplementedError(
        f"{name} has been moved. Use `dp.unit_of(contributions=[dp.polars.Bound({field_}=...)])` "
        "instead."
    )


def _deprecated(old: str, new: str) -> None:
    warnings.warn(
        f"Margin.{old} is deprecated since 0.13.0: use {new} instead", DeprecationWarning, 2
    )


@dataclass
class Margin:
    """What is known publicly about the data grouped by ``by``.

    ``max_length``: an upper bound on the rows of any one group (a float sum needs it, for
    the rounding of its sum, as in CSVW22); ``max_groups``: an upper bound on the number of
    groups; ``invariant``: ``"keys"`` (the group keys are not protected) or ``"lengths"``
    (neither the keys nor the group lengths are).

    Raises:
        InvalidParameter: for a bound that is not a positive int, or another ``invariant``.
    """

    by: Sequence[Any] = field(default_factory=list)
    max_length: int | None = None
    max_groups: int | None = None
    invariant: str | None = None

    def __post_init__(self) -> None:
        for name in ("max_length", "max_groups"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                raise InvalidParameter(f"Margin.{name} must be a positive int, got {v!r}")
        if self.invariant not in _INVARIANTS:
            raise InvalidParameter(
                f'Margin.invariant must be "keys", "lengths" or None, got {self.invariant!r}'
            )

    def by_names(self) -> tuple[str, ...]:
        """The grouping columns' output names (a set: order does not matter for matching)."""
        return tuple(n.output_name(b) for b in by_nodes(self.by))

    def by_key(self) -> frozenset[n.Expr]:
        return frozenset(by_nodes(self.by))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Margin):
            return False
        return (self.by_key(), self.max_length, self.max_groups, self.invariant) == (
            other.by_key(),
            other.max_length,
            other.max_groups,
            other.invariant,
        )

    def __hash__(self) -> int:
        return hash((self.by_key(), self.max_length, self.max_groups, self.invariant))

    # -- 0.13's names -----------------------------------------------------------------------

    @property
    def max_partition_length(self) -> int | None:
        _deprecated("max_partition_length", "max_length")
        return self.max_length

    @max_partition_length.setter
    def max_partition_length(self, value: int | None) -> None:
        _deprecated("max_partition_length", "max_length")
        self.max_length = value

    @property
    def max_num_partitions(self) -> int | None:
        _deprecated("max_num_partitions", "max_groups")
        return self.max_groups

    @max_num_partitions.setter
    def max_num_partitions(self, value: int | None) -> None:
        _deprecated("max_num_partitions", "max_groups")
        self.max_groups = value

    @property
    def public_info(self) -> str | None:
        _deprecated("public_info", "invariant")
        return self.invariant

    @public_info.setter
    def public_info(self, value: str | None) -> None:
        _deprecated("public_info", "invariant")
        self.invariant = value

    @property
    def max_partition_contributions(self) -> Any:
        raise _moved("max_partition_contributions", "per_group")

    @max_partition_contributions.setter
    def max_partition_contributions(self, value: Any) -> None:
        raise _moved("max_partition_contributions", "per_group")

    @property
    def max_influenced_partitions(self) -> Any:
        raise _moved("max_influenced_partitions", "num_groups")

    @max_influenced_partitions.setter
    def max_influenced_partitions(self, value: Any) -> None:
        raise _moved("max_influenced_partitions", "num_groups")


@dataclass
class Bound:
    """Bounds on one individual: ``per_group`` rows in any one group of ``by``, and
    ``num_groups`` groups.  A value type here: the privacy unit that reads it
    (``dp.unit_of(contributions=[Bound(...)])``) is the identifier-level unit of the next
    issue.

    Raises:
        InvalidParameter: for a bound that is not a positive int.
    """

    by: Sequence[Any] = field(default_factory=list)
    per_group: int | None = None
    num_groups: int | None = None

    def __post_init__(self) -> None:
        for name in ("per_group", "num_groups"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                raise InvalidParameter(f"Bound.{name} must be a positive int, got {v!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Bound):
            return False
        return (frozenset(by_nodes(self.by)), self.per_group, self.num_groups) == (
            frozenset(by_nodes(other.by)),
            other.per_group,
            other.num_groups,
        )

    def __hash__(self) -> int:
        return hash((frozenset(by_nodes(self.by)), self.per_group, self.num_groups))


def check_margins(margins: Any) -> tuple[Margin, ...]:
    """The context's ``margins`` as a tuple of :class:`Margin`.

    Raises:
        InvalidParameter: for an item that is not a Margin.
        NotImplementedForType: for a Margin whose ``by`` holds an aggregate.
    """
    if margins is None:
        return ()
    items = _from_dict(margins) if isinstance(margins, dict) else list(margins)
    for m in items:
        if not isinstance(m, Margin):
            raise InvalidParameter(f"margins must be dp.polars.Margin objects, got {m!r}")
        for b in by_nodes(m.by):
            if _has_private(b):
                raise NotImplementedForType(
                    f"a margin's by must be row-by-row expressions of the data, got {b!r}"
                )
    return tuple(items)


def _from_dict(margins: dict[Any, Any]) -> list[Any]:
    """OpenDP 0.13's form ``{by: Margin(...)}``: each key becomes its margin's ``by`` (a
    DeprecationWarning, as OpenDP); a margin that states another ``by`` is refused."""
    warnings.warn(
        'Margin dicts should be replaced with lists, with the key supplied as the "by" kwarg: '
        "margins=[dp.polars.Margin(by=[...], ...)]",
        DeprecationWarning,
        stacklevel=5,
    )
    out: list[Any] = []
    for key, m in margins.items():
        by = [key] if isinstance(key, str) else list(key)
        if isinstance(m, Margin):
            if list(m.by) and set(by_nodes(m.by)) != set(by_nodes(by)):
                raise InvalidParameter(
                    f"a margin dict's key {key!r} and its margin's by={m.by!r} differ: pass "
                    "a list of margins, each with its by"
                )
            m = replace(m, by=by)
        out.append(m)
    return out


def _has_private(e: n.Expr) -> bool:
    return isinstance(e, n.DPAgg | n.Len) or any(_has_private(c) for c in n.children(e))


@dataclass(frozen=True)
class SortBy:
    """``keep=`` of ``truncate_per_group``: keep each person's first ``k`` rows in the order of
    ``by`` (OpenDP's ``dp.polars.SortBy``; each key ascending unless ``descending``, nulls first
    unless ``nulls_last``).  Rows equal on the key are ordered by the whole row (the total
    order of ``opendp_lite._order``), never by their position in the frame.

    >>> SortBy("visit", descending=True).to_node().descending
    (True,)

    Raises:
        InvalidParameter: for no key, or ``descending``/``nulls_last`` of another length.
    """

    by: Any
    descending: bool | Sequence[bool] = False
    nulls_last: bool | Sequence[bool] = False

    def to_node(self) -> n.SortKey:
        """The IR's :class:`~.nodes.SortKey`."""
        keys = by_nodes(self.by)
        if not keys:
            raise InvalidParameter("SortBy needs at least one key")

        def flags(name: str, v: bool | Sequence[bool]) -> tuple[bool, ...]:
            out = (bool(v),) * len(keys) if isinstance(v, bool) else tuple(bool(x) for x in v)
            if len(out) != len(keys):
                raise InvalidParameter(f"SortBy.{name} has {len(out)} flags for {len(keys)} keys")
            return out

        return n.SortKey(
            keys, flags("descending", self.descending), flags("nulls_last", self.nulls_last)
        )
