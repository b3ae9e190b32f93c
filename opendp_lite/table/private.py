"""The table API's measurements (``dp.m``): ``make_private_lazyframe``, ``make_private_expr``.

Thin constructors over the table query's analysis (:mod:`.analysis`), sharing the reading of
plans and distances with :mod:`.stable` (:mod:`.constructors`).  They are ``dp.m``'s: the
measurements package sits below the table layer, so the registry publishes them there
(:func:`opendp_lite._registry.publish`) when this module is imported (the prelude imports it).
"""

from __future__ import annotations

from typing import Any

from .._registry import constructor, publish
from ..core import Measurement, assert_features
from ..errors import InvalidParameter
from ..metrics import SymmetricDistance
from . import nodes as n
from .constructors import _check_metric, _read, rows_of, table_domain
from .domains import LazyFrameDomain, WildExprDomain

__all__ = ["make_private_expr", "make_private_lazyframe"]


@constructor
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
    >>> from opendp_lite.table.private import make_private_lazyframe
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


@constructor
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

    >>> import opendp_lite.prelude as dp
    >>> from opendp_lite.table.dp_namespace import len as dp_len
    >>> dp.enable_features("contrib", "honest-but-curious")
    >>> domain = dp.wild_expr_domain(
    ...     [dp.series_domain("x", dp.atom_domain(T=dp.f64))], dp.polars.Margin(by=[]))
    >>> meas = dp.m.make_private_expr(
    ...     domain, dp.symmetric_distance(), dp.max_divergence(), dp_len(signed=True),
    ...     global_scale=2.0)
    >>> meas.map(1)
    0.5

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


publish(make_private_lazyframe, make_private_expr)
