"""The table API's transformations (``dp.t``): ``make_stable_lazyframe``, ``make_stable_expr``.

Row-by-row steps of a plan as transformations between frame domains, read as the table
query reads them (:mod:`.constructors`).  They are ``dp.t``'s: the transformations package sits
below the table layer, so the registry publishes them there
(:func:`opendp_lite._registry.publish`) when this module is imported (the prelude imports it).
"""

from __future__ import annotations

from typing import Any

from .._registry import constructor, publish
from ..core import Transformation
from ..errors import InvalidParameter, NotImplementedForType
from . import nodes as n
from .constructors import _apply_steps, _check_metric, _output_frame_domain, _read
from .domains import LazyFrameDomain, WildExprDomain

__all__ = ["make_stable_expr", "make_stable_lazyframe"]


@constructor
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
    >>> from opendp_lite.table.stable import make_stable_lazyframe
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


@constructor
def make_stable_expr(
    input_domain: WildExprDomain, input_metric: Any, expr: Any
) -> Transformation[Any, Any, Any, Any]:
    r"""A row-by-row expression (``pl.col("A").clip(0, 1)``, ...) as a transformation: the
    column it computes, from frames of the domain's columns.

    Stability map: :math:`d_{out} = d_{in}` (row by row).  The output is a frame domain
    holding the one column the expression names.

    >>> import polars as pl
    >>> import opendp_lite.prelude as dp
    >>> domain = dp.wild_expr_domain([dp.series_domain("x", dp.atom_domain(T=dp.f64))])
    >>> trans = dp.t.make_stable_expr(domain, dp.symmetric_distance(), pl.col("x").clip(0.0, 1.0))
    >>> trans.output_domain, trans.map(2)
    (FrameDomain(x: f64; margins=[]), 2)
    >>> trans(pl.LazyFrame({"x": [-1.0, 0.5, 3.0]})).collect()["x"].to_list()
    [0.0, 0.5, 1.0]

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


publish(make_stable_lazyframe, make_stable_expr)
