"""Table engines: where a table query's exact, non-private part runs.

A table query (:mod:`opendp_lite.table`) is analysed on opendp_lite's own plan; what it reads
from the data is a :class:`~opendp_lite.table.nodes.FramePlan`: row-by-row steps, then exact
integer aggregates per group.  An engine runs that plan on the input's own library (Polars
expressions for Polars, narwhals for pandas and pyarrow, Dask for Dask frames) and returns
a :class:`TableResult`.  Noise is added afterwards, by the samplers, never inside an engine.

Engines are peers behind :class:`TableEngine`; :func:`of_table` returns the one that owns a
frame.  Adding one is a module implementing the protocol plus one :func:`register` call.

Rules every engine keeps (the analysis relies on them):

* the answer is exact: counts and sums are Python ints (a float sum is a sum of grid units,
  :class:`~opendp_lite.table.nodes.GridSum`), whatever the frame's dtypes or size;
* nothing it raises while running a plan carries a value of the data, or a row position: a
  library's own error (a failed cast, an overflow) is replaced by
  :class:`~opendp_lite.errors.FailedFunction` naming the step only;
* the groups of a plan without public keys come in the total order of
  :mod:`opendp_lite._order` on the key tuples, never in the data's order;
* ``schema(x)`` reads the frame's declared schema only, never its values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ...table.nodes import DType, FramePlan

__all__ = ["TableEngine", "TableResult", "of_table", "register", "registered"]


@dataclass(frozen=True)
class TableResult:
    """An engine's answer to a :class:`~opendp_lite.table.nodes.FramePlan`.

    ``keys``: one list per ``by`` expression (by output name), the groups in order (empty
    dict for an ungrouped plan, which has one group).  ``values``: one entry per named
    aggregate, a list with one Python int per group (for ``QuantileCounts``, one pair of
    lists ``(below, above)`` per group).
    """

    keys: dict[str, list[Any]]
    values: dict[str, list[Any]]


@runtime_checkable
class TableEngine(Protocol):
    """What the table analysis may ask of the engine owning a frame."""

    name: str
    #: the label used in messages ("Polars LazyFrames")
    label: str

    def owns(self, x: object) -> bool: ...
    def schema(self, x: Any) -> dict[str, DType]: ...
    def run(self, x: Any, plan: FramePlan) -> TableResult: ...


_REGISTRY: list[TableEngine] = []


def register(engine: TableEngine) -> None:
    """Make ``engine`` the owner of the frames it claims (idempotent by name)."""
    _REGISTRY[:] = [e for e in _REGISTRY if e.name != engine.name] + [engine]


def registered() -> tuple[str, ...]:
    """The names of the registered engines, in the order they are asked."""
    return tuple(e.name for e in _REGISTRY)


def of_table(x: object) -> TableEngine | None:
    """The engine that owns the frame ``x``, or None (the caller refuses the data)."""
    for e in _REGISTRY:
        if e.owns(x):
            return e
    return None


def truncation_rows_mask(
    step: Any, ids: list[Any], by: list[Any], row: list[Any], sort: list[Any], n: int
) -> Any:
    """The shared kernel's ``rows_mask`` (:mod:`opendp_lite._truncation`) for a
    ``TruncateRows`` step, on cells an engine evaluated: ``ids`` and ``by`` the identifier's
    and grouping columns, ``row`` every column of the frame (unused under ``"sample"``),
    ``sort`` the sort key's columns (empty unless ``keep`` is a ``SortKey``)."""
    from ... import _truncation as K
    from ...table.nodes import SortKey

    sk = step.keep if isinstance(step.keep, SortKey) else None
    return K.rows_mask(
        ids,
        by,
        step.k,
        "sort" if sk is not None else str(step.keep),
        row=row,
        sort=sort,
        descending=sk.descending if sk else (),
        nulls_last=sk.nulls_last if sk else (),
        n=n,
    )


# the engines (one import each; each module registers itself)
from . import dask as _dask  # noqa: E402, F401 - dask.dataframe (imported lazily)
from . import narwhals as _narwhals  # noqa: E402, F401 - pandas and pyarrow (imported lazily)
from . import polars as _polars  # noqa: E402, F401
