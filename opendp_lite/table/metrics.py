"""``dp.frame_distance``: the distance between frames, as OpenDP 0.16 names it.

A distance in :class:`FrameDistance` is a list of ``dp.polars.Bound``: each bounds how many
rows (``per_group``) and how many groups (``num_groups``) of the grouping ``by`` the
neighbouring frames differ in, rows compared by ``inner_metric``.  A bare number ``k`` is
read as the single bound ``Bound(by=[], per_group=k)`` (the frames differ in at most ``k``
rows), which is what ``dp.unit_of(contributions=k)`` means.

>>> import opendp_lite.prelude as dp
>>> metric = dp.frame_distance(dp.symmetric_distance())
>>> metric, metric.inner_metric, metric == dp.frame_distance(dp.symmetric_distance())
(FrameDistance(SymmetricDistance()), SymmetricDistance(), True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core import Metric, _check_distance
from ..errors import FailedMap, InvalidParameter
from ..metrics import InsertDeleteDistance, SymmetricDistance

__all__ = ["FrameDistance", "frame_distance"]

_BOUND_FIELDS = ("by", "per_group", "num_groups")


def _inner_metrics() -> tuple[type, ...]:
    from ..transformations.partition import SymmetricIdDistance

    return (SymmetricDistance, InsertDeleteDistance, SymmetricIdDistance)


@dataclass(frozen=True)
class FrameDistance(Metric[Any]):
    """Neighbouring frames differ within a list of bounds (``dp.polars.Bound``), their rows
    compared by ``inner_metric``."""

    inner_metric: Metric[Any]
    distance_type = "Bounds"

    def __repr__(self) -> str:
        return f"FrameDistance({self.inner_metric!r})"

    @property
    def type(self) -> str:
        """OpenDP's type name, ``FrameDistance<SymmetricDistance>``."""
        return f"FrameDistance<{type(self.inner_metric).__name__}>"

    def _check_distance(self, d: object) -> Any:
        """A distance: a list of bounds, or a number of rows ``k`` (``Bound(per_group=k)``)."""
        if not isinstance(d, list | tuple):
            _check_distance(self, d, "u32")
            return d
        for b in d:
            if not all(hasattr(b, f) for f in _BOUND_FIELDS):
                raise FailedMap(f"a distance in {self!r} is a list of dp.polars.Bound, got {b!r}")
            for f in ("per_group", "num_groups"):
                v = getattr(b, f)
                if v is not None:
                    _check_distance(self, v, "u32")
        return d


def frame_distance(inner_metric: Metric[Any]) -> FrameDistance:
    """The distance between frames whose rows are compared by ``inner_metric``
    (``symmetric_distance()``, ``insert_delete_distance()`` or ``symmetric_id_distance(...)``).

    >>> import opendp_lite.prelude as dp
    >>> dp.frame_distance(dp.insert_delete_distance())
    FrameDistance(InsertDeleteDistance())

    Raises:
        InvalidParameter: for another inner metric (the message lists those accepted).
    """
    if not isinstance(inner_metric, _inner_metrics()):
        raise InvalidParameter(
            "frame_distance needs symmetric_distance(), insert_delete_distance() or "
            f"symmetric_id_distance(...), got {inner_metric!r}"
        )
    return FrameDistance(inner_metric)


def _register() -> None:
    from ..serialization._tables import register_space

    register_space(FrameDistance, "frame_distance", frame_distance, ("inner_metric",))


_register()
