"""OpenDP's ``opendp.extras.polars``: the names its Polars API exposes there, opendp_lite's.

The same objects as ``dp.polars`` and ``dp.m`` / ``dp.t``, gathered where OpenDP keeps them,
so ``from opendp_lite.extras.polars import Margin, Bound`` reads as OpenDP's import does:

* ``Margin``, ``Bound``, ``SortBy``: the facts a frame domain states, a unit's bound per group,
  and the order a truncation keeps a person's rows in;
* ``DPExpr``: the ``.dp`` namespace of a Polars expression (``pl.col("x").dp.sum(...)``),
  registered when Polars is imported; ``dp_len``: OpenDP's ``dp.len()``;
* ``OnceFrame``, ``LazyFrameQuery``, ``LazyGroupByQuery``: a context's table query, its
  grouped form and its release;
* ``make_private_lazyframe``, ``make_stable_lazyframe``: the constructors beneath the table
  query (also ``dp.m`` / ``dp.t``'s).

Importing this module does not import Polars.

>>> from opendp_lite.extras.polars import Bound, Margin
>>> Margin(by=["A"], max_length=10).max_length
10
>>> Bound(by=["A"], per_group=2).per_group
2
"""

from __future__ import annotations

from ..table._polars_entry import len as dp_len
from ..table.dp_namespace import DPExpr
from ..table.margins import Bound, Margin, SortBy
from ..table.once_frame import OnceFrame
from ..table.private import make_private_lazyframe
from ..table.query import LazyFrameQuery
from ..table.query import LazyGroupBy as LazyGroupByQuery
from ..table.stable import make_stable_lazyframe

__all__ = [
    "Bound",
    "DPExpr",
    "LazyFrameQuery",
    "LazyGroupByQuery",
    "Margin",
    "OnceFrame",
    "SortBy",
    "dp_len",
    "make_private_lazyframe",
    "make_stable_lazyframe",
]
