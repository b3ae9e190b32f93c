"""OpenDP 0.16's constructor level beneath the table API: ``dp.m.make_private_lazyframe``,
``dp.m.make_private_expr``, ``dp.t.make_stable_lazyframe`` and ``dp.t.make_stable_expr``.

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

from ..core import Measurement, Transformation, assert_features
from ..errors import FailedMap, InvalidParameter, NotImplementedForType
from ..metrics import SymmetricDistance
from . import nodes as n
from .domains import LazyFrameDomain, WildExprDomain, lazyframe_domain_from_schema
from .metrics import FrameDistance

__all__ = [
    "make_private_expr",
    "make_private_lazyframe",
    "make_stable_expr",
    "make_stable_lazyframe",
    "rows_of",
    "table_domain",
]


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
        else:
            out = out.with_columns([compile_expr(e) for e in step.exprs])
    return out


def make_private_lazyframe(
    input_domain: LazyFrameDomain,
    input_metric: Any,
    output_measure: Any,
    lazyframe: Any,
    global_scale: float | None = None,
    threshold: int | None = None,
) -> Measurement[Any, Any, Any, Any]:
    r"""A measurement releasing the private aggregates of ``lazyframe`` (a Polars LazyFrame
    plan over the input's schema, or a ``context.query()`` query).

    The plan is analysed as ``context.query()`` analyses it; each private aggregate ``i`` gets
    the noise scale :math:`s_i` it names, else :math:`s_i = g \cdot \Delta_i(1)` for the global
    scale :math:`g` (its sensitivity at one row).  Privacy map, for :math:`r` the rows the
    neighbours differ in (:func:`rows_of`):

    .. math:: d_{out} = \mathcal{M}_{composed}(r)

    the map of the composition, built by the analysis from proven constructors
    (``make_partition_by``, the grouped counts and sums, the noise and threshold mechanisms),
    of the aggregates at the scales :math:`s_i` (and, for private keys, the ``threshold``).
    The function returns an ``OnceFrame`` (collected once).

    >>> import polars as pl
    >>> import opendp_lite.prelude as dp
    >>> from opendp_lite.table.dp_namespace import ensure_registered, len as dp_len
    >>> ensure_registered()  # pl.Expr.dp
    >>> domain = dp.lazyframe_domain([dp.series_domain("x", dp.atom_domain(T=dp.i64))])
    >>> plan = pl.LazyFrame(schema={"x": pl.Int64}).select(dp_len(signed=True))
    >>> from opendp_lite.table.constructors import make_private_lazyframe
    >>> meas = make_private_lazyframe(
    ...     domain, dp.symmetric_distance(), dp.max_divergence(), plan, global_scale=2.0)
    >>> meas.map(1)
    0.5

    Raises:
        NotImplementedForType: for another input metric, or a plan step the whitelist refuses.
        InvalidParameter: for a shape error (see the query), no ``global_scale`` when an
            aggregate names no scale, or private keys without a ``threshold``.

    Proof: docs/proofs/make_private_lazyframe.md
    """
    from . import analysis as an
    from .once_frame import OnceFrame
    from .query import _run

    if not isinstance(input_domain, LazyFrameDomain):
        raise InvalidParameter(
            f"make_private_lazyframe needs a lazyframe_domain(...), got {input_domain!r}"
        )
    _check_metric(input_metric)
    steps, by, aggs, keys = _read(lazyframe)
    if aggs is None:
        raise InvalidParameter(
            "the plan has no private aggregate: end it with .select(dp.len(), ...) or "
            ".group_by(...).agg(...)"
        )
    tp = an.plan_query(table_domain(input_domain), steps, by, aggs, keys, output_measure)
    if tp.keys == "private" and threshold is None:
        raise InvalidParameter(
            f"the key-set of {list(tp.by_names)} is private: pass threshold= (under approximate "
            "DP), declare the keys public with a margin (invariant='keys'), or join public keys"
        )
    if any(it.scale is None for it in tp.items) and global_scale is None:
        raise InvalidParameter(
            "an aggregate has no scale: pass global_scale=, or give each .dp aggregate scale="
        )
    scales = an.scales_of(tp, output_measure, 1, 0.0 if global_scale is None else global_scale)
    m, thr = an.composed(tp, output_measure, scales, threshold)

    def function(data: Any) -> OnceFrame:
        return OnceFrame(_run(tp, output_measure, scales, thr, data))

    return Measurement(
        input_domain,
        input_metric,
        output_measure,
        function,
        lambda d_in: m.map(rows_of(input_metric, d_in)),
    )


def make_private_expr(
    input_domain: WildExprDomain,
    input_metric: Any,
    output_measure: Any,
    expr: Any,
    global_scale: float | None = None,
) -> Measurement[Any, Any, Any, Any]:
    r"""A measurement releasing the private expression ``expr`` (``dp.len()``,
    ``pl.col(...).dp.sum(...)``, ...) per group of the domain's margin (one group without
    columns), as ``make_private_lazyframe`` on ``group_by(margin.by).agg(expr)``.

    Privacy map: :math:`d_{out} = \mathcal{M}_{composed}(r)` with :math:`r` the rows the
    neighbours differ in (for ``l01inf_distance``, :math:`r = l_1`); see
    ``make_private_lazyframe``.  The function runs on a frame and returns the released
    DataFrame.  Needs ``honest-but-curious``, as in OpenDP.

    Raises:
        FeatureNotEnabled: without "contrib" and "honest-but-curious".
        InvalidParameter: if the domain has no margin, if ``expr`` is not an expression, or the
            margin's keys are private (use ``make_private_lazyframe`` with a threshold).

    Proof: docs/proofs/make_private_expr.md
    """
    from . import analysis as an
    from .builder import DPExpr, to_node
    from .domains import polars_kind
    from .query import _run

    assert_features("contrib", "honest-but-curious")
    if polars_kind(expr) != "Expr" and not isinstance(expr, DPExpr | n.DPAgg | n.Alias):
        raise InvalidParameter(f"expected Polars Expr (or dp.col(...)), got {type(expr).__name__}")
    if not isinstance(input_domain, WildExprDomain) or input_domain.margin is None:
        raise InvalidParameter(
            "make_private_expr needs wild_expr_domain(columns, margin=dp.polars.Margin(by=...))"
        )
    metric = input_metric
    if type(input_metric).__name__ == "L0PInfDistance":
        metric = SymmetricDistance()
    else:
        _check_metric(input_metric)
    node = to_node(expr)
    by = tuple(sorted(input_domain.margin.by, key=repr)) or None
    td = table_domain(input_domain.frame_domain)
    tp = an.plan_query(td, (), by, (node,), None, output_measure)
    if tp.keys == "private":
        raise InvalidParameter(
            "the margin's keys are private: declare them invariant (invariant='keys'), or use "
            "make_private_lazyframe(..., threshold=...)"
        )
    if any(it.scale is None for it in tp.items) and global_scale is None:
        raise InvalidParameter(
            "the expression has no scale: pass global_scale=, or give the .dp aggregate scale="
        )
    scales = an.scales_of(tp, output_measure, 1, 0.0 if global_scale is None else global_scale)
    m, thr = an.composed(tp, output_measure, scales, None)

    def rows(d_in: Any) -> int:
        if metric is input_metric:
            return rows_of(input_metric, d_in)
        _l0, l1, _li = input_metric._check_distance(d_in)
        return int(l1)

    def function(data: Any) -> Any:
        return _run(tp, output_measure, scales, thr, data)

    td_frame = input_domain.frame_domain
    return Measurement(td_frame, input_metric, output_measure, function, lambda d: m.map(rows(d)))


def make_stable_lazyframe(
    input_domain: LazyFrameDomain, input_metric: Any, lazyframe: Any
) -> Transformation[Any, Any, Any, Any]:
    r"""The row-by-row steps of ``lazyframe`` (``with_columns``, ``select``, ``filter``) as a
    transformation between frame domains.

    Stability map: :math:`d_{out} = d_{in}` (each output row is a function of one input row,
    and a filter only drops rows, so the rows that differ stay at most as many).  The output
    domain is the widest of the steps' output schema (every column nullable).

    >>> import polars as pl
    >>> import opendp_lite.prelude as dp
    >>> domain = dp.lazyframe_domain([dp.series_domain("x", dp.atom_domain(T=dp.i64))])
    >>> plan = pl.LazyFrame(schema={"x": pl.Int64}).with_columns(y=pl.col("x") * 2)
    >>> from opendp_lite.table.constructors import make_stable_lazyframe
    >>> trans = make_stable_lazyframe(domain, dp.symmetric_distance(), plan)
    >>> trans.output_domain, trans.map(3)
    (FrameDomain(x: i64, y: i64; margins=[]), 3)

    Raises:
        NotImplementedForType: for another metric, an aggregation in the plan, or a step the
            whitelist refuses.
        InvalidParameter: for a shape error (unknown column, wrong type).

    Proof: docs/proofs/make_stable_lazyframe.md
    """
    from . import analysis as an

    if not isinstance(input_domain, LazyFrameDomain):
        raise InvalidParameter(
            f"make_stable_lazyframe needs a lazyframe_domain(...), got {input_domain!r}"
        )
    _check_metric(input_metric)
    steps, by, aggs, _ = _read(lazyframe)
    if aggs is not None or by is not None:
        raise NotImplementedForType(
            "make_stable_lazyframe takes row-by-row steps only (with_columns, select, filter); "
            "an aggregation is private: make_private_lazyframe"
        )
    env, _filtered = an.walk_steps(input_domain.schema, steps)
    out = _output_frame_domain(env)
    return Transformation(
        input_domain,
        input_metric,
        out,
        input_metric,
        lambda data: _apply_steps(data, steps),
        lambda d_in: d_in,
    )


def make_stable_expr(
    input_domain: WildExprDomain, input_metric: Any, expr: Any
) -> Transformation[Any, Any, Any, Any]:
    r"""A row-by-row expression (``pl.col("A").clip(0, 1)``, ...) as a transformation: the
    column it computes, from frames of the domain's columns.

    Stability map: :math:`d_{out} = d_{in}` (row by row).  The output is a frame domain
    holding the one column the expression names.

    Raises:
        NotImplementedForType: for another metric, or an aggregate or length-changing
            expression.
        InvalidParameter: for a shape error.

    Proof: docs/proofs/make_stable_expr.md
    """
    from . import analysis as an
    from .builder import to_node

    if not isinstance(input_domain, WildExprDomain):
        raise InvalidParameter(
            f"make_stable_expr needs a wild_expr_domain(...), got {input_domain!r}"
        )
    _check_metric(input_metric)
    node = to_node(expr)
    step = n.Select((node,))
    env, _ = an.walk_steps(input_domain.frame_domain.schema, (step,))
    out = _output_frame_domain(env)
    return Transformation(
        input_domain.frame_domain,
        input_metric,
        out,
        input_metric,
        lambda data: _apply_steps(data, (step,)),
        lambda d_in: d_in,
    )
