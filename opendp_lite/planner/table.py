"""Planner specs from the table API: aggregate expressions, or a table query, become statistics.

The table API states *what* to release (``dp.len()``, ``dp.col("x").fill_null(0.0).dp.sum(b)``,
``.dp.mean(b)``, ``.dp.quantile(q, candidates)``, grouped by a column); the planner adds *how
accurate* (a :class:`~.specs.Target` per output name) and chooses the scales.  This module only
reads the expressions' nodes (:mod:`opendp_lite.table.nodes`): nothing here touches data, and
an expression the planner's release chains would not compute exactly as written is refused,
naming the supported shapes.  The plan is then released by :meth:`.Plan.release` (a Polars
frame is collected to pandas at that data boundary).

>>> import opendp_lite.prelude as dp
>>> from opendp_lite.planner import within
>>> specs = specs_from_table(
...     [dp.len(signed=True), dp.col("inc").fill_null(0.0).dp.sum((0.0, 1e5)).alias("total")],
...     {"len": within(30.0), "total": within(2e5)},
... )
>>> [(s.kind, s.name) for s in specs]
[('count', 'len'), ('sum', 'total')]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import InvalidParameter, NotImplementedForType
from ..table import nodes as n
from ..table.builder import to_node
from .specs import Count, GroupedCount, GroupedSum, Mean, Quantile, Rows, Spec, Sum, Target

__all__ = ["specs_from_query", "specs_from_table"]

_SHAPES = (
    "dp.len(); dp.col(c).dp.sum(bounds) or dp.col(c).fill_null(0).dp.sum(bounds) (0.0 for a "
    "float column); the same with .dp.mean(bounds); dp.col(c).dp.quantile(q, candidates) or "
    ".dp.median(candidates); each optionally .alias(name)"
)


def _column(e: n.Expr, kind: str, name: str) -> Any:
    """The column a sum/mean/quantile reads: ``Col(c)``, or ``Col(c).fill_null(0)`` (and
    ``fill_nan(0)``), which is what the planner's chain computes (a missing value adds 0)."""
    while isinstance(e, (n.FillNull, n.FillNan)):
        if kind in ("quantile", "median"):
            break
        if not (isinstance(e.value, n.Lit) and e.value.value == 0):
            raise NotImplementedForType(
                f"{name!r}: the planner's sum fills a missing value with 0 only, got "
                f"{e.value!r}; supported shapes: {_SHAPES}"
            )
        e = e.expr
    if isinstance(e, n.Col):
        return e.name
    raise NotImplementedForType(
        f"{name!r}: the planner releases a statistic of one column as read, got {e!r}; "
        f"supported shapes: {_SHAPES}. Compute derived columns first, or release this "
        "aggregate through context.query()"
    )


def _target(targets: Target | Mapping[str, Target], name: str) -> Target:
    if isinstance(targets, Target):
        return targets
    if name not in targets:
        raise InvalidParameter(f"no target for {name!r}: give targets={{{name!r}: within(...)}}")
    return targets[name]


def specs_from_table(
    aggs: Sequence[Any],
    targets: Target | Mapping[str, Target],
    by: str | None = None,
    keys: Sequence[Any] | None = None,
    rows: Rows | None = None,
    min_rows: int | None = None,
    max_rows: int | None = None,
    max_groups: int | None = None,
    release_size: int | None = None,
    exhaustive: bool = False,
) -> list[Spec]:
    """Planner specs for table-API aggregate expressions (optionally grouped ``by`` a column).

    ``targets`` is one :class:`Target` for every statistic or one per output name (the
    alias, or the column's name, ``"len"`` for ``dp.len()``).  Grouped: ``keys`` (public) or
    ``max_groups`` and ``release_size`` (keys released from the data, approximate DP);
    grouped means and quantiles are not planned.  ``min_rows`` (means) and ``max_rows``
    (float sums) are the public row bounds of :class:`~.specs.Mean` and :class:`~.specs.Sum`.

    Raises:
        NotImplementedForType: an aggregate the planner cannot release as written (a
            derived column, a fixed ``scale``, a grouped mean), naming the supported shapes.
        InvalidParameter: a missing target or a bad spec field.
    """
    rows = rows or Rows()
    out: list[Spec] = []
    for x in aggs:
        e = to_node(x)
        name = n.output_name(e)
        while isinstance(e, n.Alias):
            e = e.expr
        if not isinstance(e, n.DPAgg):
            raise NotImplementedForType(
                f"{name!r} is not a private aggregate (dp.len(), .dp.sum, ...); post-process "
                f"released values after the plan's release. Supported shapes: {_SHAPES}"
            )
        if e.scale is not None or e.threshold is not None:
            raise NotImplementedForType(
                f"{name!r} fixes its scale or threshold; the planner chooses them from the "
                "targets: leave them unset"
            )
        t = _target(targets, name)
        grouped: dict[str, Any] = {
            "by": by,
            "keys": None if keys is None else tuple(keys),
            "max_groups": max_groups,
            "release_size": release_size,
        }
        if e.kind == "len":
            if by is None:
                out.append(Count(name, t, rows))
            else:
                out.append(GroupedCount(name, t, rows, exhaustive=exhaustive, **grouped))
            continue
        col = _column(e.expr, e.kind, name)
        if e.kind in ("sum", "mean"):
            if e.bounds is None:
                raise InvalidParameter(f"{name!r}: a {e.kind} needs bounds")
            bounds = (e.bounds[0], e.bounds[1])
            if by is not None and e.kind == "sum":
                out.append(
                    GroupedSum(
                        name, t, rows, column=col, bounds=bounds, max_rows=max_rows, **grouped
                    )
                )
            elif by is not None:
                raise NotImplementedForType(
                    f"{name!r}: the planner has no grouped mean; plan a grouped sum and a "
                    "grouped count and divide the released values"
                )
            elif e.kind == "sum":
                out.append(Sum(name, t, rows, column=col, bounds=bounds, max_rows=max_rows))
            else:
                out.append(Mean(name, t, rows, column=col, bounds=bounds, min_rows=min_rows))
            continue
        if e.kind in ("quantile", "median") and by is None:
            q = 0.5 if e.kind == "median" else float(e.alpha if e.alpha is not None else 0.5)
            cands = tuple(e.candidates or ())
            out.append(Quantile(name, t, rows, column=col, q=q, candidates=cands))
            continue
        raise NotImplementedForType(
            f"{name!r}: the planner does not plan a {'grouped ' if by else ''}{e.kind!r} "
            f"aggregate; supported shapes: {_SHAPES}"
        )
    return out


_ROW_OPS = {"==", "!=", "<", "<=", ">", ">="}


def _rows_of(steps: tuple[n.Step, ...]) -> Rows:
    if not steps:
        return Rows()
    pred = steps[0].predicate if isinstance(steps[0], n.FilterRows) else None
    if (
        len(steps) == 1
        and isinstance(pred, n.Binary)
        and pred.op in _ROW_OPS
        and isinstance(pred.left, n.Col)
        and isinstance(pred.right, n.Lit)
    ):
        return Rows(pred.left.name, pred.op, pred.right.value)
    raise NotImplementedForType(
        "the planner reads a query with at most one filter of the form col <op> literal "
        "(op one of ==, !=, <, <=, >, >=) before group_by(...).agg(...); compute other "
        "columns before building the context"
    )


def specs_from_query(query: Any, targets: Target | Mapping[str, Target], **kw: Any) -> list[Spec]:
    """Planner specs for a table query ``context.query()[.filter(c op v)][.group_by(c)
    [.with_keys(...)]].agg(...)``: its filter becomes the specs' :class:`~.specs.Rows`, its
    one grouping column ``by``, its ``with_keys`` keys the public ``keys``; other keyword
    arguments go to :func:`specs_from_table`.  The query itself is not run: the plan's
    release runs the statistics under its own Context.

    Raises:
        NotImplementedForType: a query shape the planner cannot read (see above).
    """
    state = getattr(query, "_state", None)
    if state is None or state.aggs is None:
        raise NotImplementedForType("give a table query with .agg(...) (context.query()...)")
    by = None
    if state.by is not None:
        if len(state.by) != 1 or not isinstance(state.by[0], n.Col):
            raise NotImplementedForType("the planner groups by one column, as read")
        by = state.by[0].name
    if state.keys is not None and "keys" not in kw:
        if by is None or list(state.keys) != [by]:
            raise NotImplementedForType("with_keys must give the keys of the one group column")
        kw["keys"] = tuple(state.keys[by])
    return specs_from_table(state.aggs, targets, by=by, rows=_rows_of(state.steps), **kw)
