"""What OpenDP 0.16's constructor level beneath the table API shares:
``dp.m.make_private_lazyframe`` and ``dp.m.make_private_expr`` (:mod:`.private`),
``dp.t.make_stable_lazyframe`` and ``dp.t.make_stable_expr`` (:mod:`.stable`).

Each is a thin constructor over the table query's analysis (:mod:`.analysis`): the plan it is
given (a Polars LazyFrame, read through the reader's fail-closed whitelist, or opendp_lite's
own query) is analysed exactly as ``context.query()`` analyses it, and its map is the map of
the measurement the analysis composes from proven constructors.  Nothing here adds a map.

Distances: under ``symmetric_distance()`` a ``d_in`` is a number of rows added or removed;
under ``frame_distance(symmetric_distance())`` it is a list of ``dp.polars.Bound`` and the row
bound read from it (:func:`rows_of`) is what the maps receive.
"""

from __future__ import annotations

from typing import Any

from ..errors import FailedMap, NotImplementedForType
from ..metrics import SymmetricDistance
from . import nodes as n
from .domains import LazyFrameDomain, lazyframe_domain_from_schema
from .metrics import FrameDistance

__all__ = ["rows_of", "table_domain"]


def rows_of(metric: Any, d_in: Any) -> int:
    """The number of rows neighbouring frames differ in, as a distance of ``metric`` says.

    A list of bounds gives the least row total any one bound implies: ``per_group`` for a
    bound over no columns, ``per_group * num_groups`` for a bound that has both.

    Raises:
        FailedMap: if no bound implies a row total (identifier-level units: next issue).
    """
    if not isinstance(d_in, list | tuple):
        return int(metric._check_distance(d_in))
    totals = []
    for b in metric._check_distance(d_in):
        by = list(b.by or [])
        if not by and b.per_group is not None:
            totals.append(int(b.per_group))
        elif b.per_group is not None and b.num_groups is not None:
            totals.append(int(b.per_group) * int(b.num_groups))
    if not totals:
        raise FailedMap(
            "the bounds give no total of rows (a bound over no columns, or one with both "
            "per_group and num_groups); bounds per group alone are identifier-level units, "
            "which are the next issue"
        )
    return min(totals)


def _check_metric(input_metric: Any) -> None:
    ok = isinstance(input_metric, SymmetricDistance) or (
        isinstance(input_metric, FrameDistance)
        and isinstance(input_metric.inner_metric, SymmetricDistance)
    )
    if not ok:
        raise NotImplementedForType(
            "the table constructors take symmetric_distance() or "
            f"frame_distance(symmetric_distance()), got {input_metric!r} (identifier-level "
            "units are the next issue)"
        )


def table_domain(domain: LazyFrameDomain) -> Any:
    """The analysis' ``TableDomain`` of a ``lazyframe_domain``: its schema and its margins
    (margins by columns only); what a Context given ``domain=lazyframe_domain(...)`` needs.

    Raises:
        NotImplementedForType: for a margin grouping by an expression.
    """
    from . import analysis as an
    from .margins import Margin

    margins = []
    for m in domain.margins:
        names = []
        for e in m.by:
            if not isinstance(e, n.Col):
                raise NotImplementedForType(
                    f"a margin grouping by an expression ({m.by_repr()}) is not supported here; "
                    "group the margin by columns"
                )
            names.append(e.name)
        margins.append(
            Margin(
                by=sorted(names),
                max_length=m.max_length,
                max_groups=m.max_groups,
                invariant=m.invariant,
            )
        )
    return an.TableDomain(tuple(domain.schema.items()), tuple(margins))


def _read(lazyframe: Any) -> tuple[Any, ...]:
    """``(steps, by, aggs, keys)`` of a plan: a raw Polars LazyFrame (read through the reader's
    whitelist) or opendp_lite's own query."""
    from .query import LazyFrameQuery

    if isinstance(lazyframe, LazyFrameQuery):
        s = lazyframe._state
        return s.steps, s.by, s.aggs, s.keys
    from .polars_plan import read_plan
    from .polars_reader import GroupByAgg, JoinKeys, SortStep

    reading = read_plan(lazyframe)
    steps: list[n.Step] = []
    by = aggs = keys = None
    for step in reading.steps:
        if isinstance(step, GroupByAgg):
            by, aggs = step.by, step.aggs
        elif isinstance(step, JoinKeys):
            keys = {name: list(values) for name, _, values in step.keys}
        elif isinstance(step, SortStep):
            if aggs is not None:
                raise NotImplementedForType(
                    "sort after the aggregation: sort the collected release instead"
                )
        elif isinstance(step, n.Select) and any(_has_agg(e) for e in step.exprs):
            aggs = step.exprs
        else:
            if aggs is not None:
                raise NotImplementedForType(
                    "a row step after the aggregation is post-processing: apply it to the "
                    "collected release"
                )
            steps.append(step)
    return tuple(steps), by, aggs, keys


def _has_agg(e: n.Expr) -> bool:
    return isinstance(e, n.DPAgg) or any(_has_agg(c) for c in n.children(e))


def _output_frame_domain(env: dict[str, Any]) -> LazyFrameDomain:
    """The widest frame domain of the analysis' descriptors (every column nullable; the
    descriptors' bounds are not claimed: membership is by schema)."""
    from . import analysis as an

    schema = {name: info.dtype for name, info in env.items()}
    try:
        return lazyframe_domain_from_schema(schema)
    except NotImplementedForType:  # a type no column domain names (Date, Time, ...)
        del an
        raise


def _apply_steps(data: Any, steps: tuple[n.Step, ...]) -> Any:
    """Run the row steps on a Polars frame (compiled by the Polars engine)."""
    from ..backends.tables.polars import compile_expr
    from .domains import polars_kind

    if polars_kind(data) not in ("LazyFrame", "DataFrame"):
        raise NotImplementedForType(
            "make_stable_lazyframe's function runs on Polars frames; on another engine's frame "
            "use the query (context.query()), which runs on its own engine"
        )
    out = data
    for step in steps:
        if isinstance(step, n.FilterRows):
            out = out.filter(compile_expr(step.predicate))
        elif isinstance(step, n.Select):
            out = out.select([compile_expr(e) for e in step.exprs])
        elif isinstance(step, (n.TruncateRows, n.TruncateGroups)):
            raise NotImplementedForType("make_stable_lazyframe does not truncate")
        elif isinstance(step, n.GroupAgg):
            raise NotImplementedForType(
                "make_stable_lazyframe does not run a group_by(...).agg(...): use the query "
                "(context.query())"
            )
        else:
            out = out.with_columns([compile_expr(e) for e in step.exprs])
    return out
