"""The Dask engine: a :class:`~opendp_lite.table.nodes.FramePlan` on a ``dask.dataframe``.

Each partition (a pandas frame, cut to the columns the plan reads) runs the plan's row-by-row
steps and exact aggregates on the worker, by the narwhals engine's code
(:func:`~opendp_lite.backends.tables.narwhals.run_arrow`); only the partial answers come back:
per group, integer counts and sums, the set of distinct values for ``n_unique``.  They are
merged exactly: by one more Arrow group-by of the int64 totals where no merged group's rows
times the most one row adds reach ``2^63``, else in Python (integer addition and set union),
so the answer is the same for every partitioning, and the groups of a plan without public
keys come in the total order of :mod:`opendp_lite._order`.  The frame itself is never
computed whole, except under truncation (``truncate_per_group``/``truncate_num_groups``):
a person's rows may lie in several partitions, and which of them are kept must be decided
on all of them together, so such a plan runs on the frame repartitioned to one partition (the
columns it reads, on one worker: the memory of the whole frame, as a pandas frame).

A failure inside a partition is :class:`~opendp_lite.errors.FailedFunction` naming the step
(never a value), as on the other engines; a failure of Dask itself while computing the
partitions is one too, without its message.

>>> import dask.dataframe as dd, pandas as pd
>>> from opendp_lite.table import nodes as N
>>> df = dd.from_pandas(pd.DataFrame({"g": [2, 1, 2, 1], "x": [1, 2, 3, 4]}), npartitions=2)
>>> plan = N.FramePlan((), (("s", N.IntSum(N.Col("x"), 0, 3)),), by=(N.Col("g"),))
>>> ENGINE.run(df, plan)
TableResult(keys={'g': [1, 2]}, values={'s': [5, 4]})
"""

from __future__ import annotations

import importlib
from typing import Any

from ...errors import FailedFunction, OpenDPLiteError
from ...table import nodes as N
from ..dask import is_dask_dataframe
from . import TableResult, register
from .narwhals import Partial, _arrow, finish, kept_columns, pandas_dtype_name, run_arrow

__all__ = ["ENGINE", "DaskEngine"]


def _partial(partition: Any, plan: N.FramePlan) -> Partial:
    """The plan's partial answer on one partition (on the worker)."""
    return run_arrow(_arrow(partition), plan, parallel=False)  # Dask runs partitions in parallel


class DaskEngine:
    """``dask.dataframe.DataFrame``: the plan per partition, partial answers merged exactly."""

    name = "dask"
    label = "Dask dataframes"

    def owns(self, x: object) -> bool:
        return is_dask_dataframe(x)

    def schema(self, x: Any) -> dict[str, N.DType]:
        return {str(c): pandas_dtype_name(d) for c, d in x.dtypes.items()}

    def run(self, x: Any, plan: N.FramePlan) -> TableResult:
        self.schema(x)  # refuses object columns by their dtype, before anything is computed
        keep = kept_columns(list(x.columns), plan)
        if keep is not None:  # the partitions bring the columns the plan reads only (lazily:
            x = x[keep]  # Dask pushes the projection into its reading where it can)
        dask: Any = importlib.import_module("dask")
        if any(isinstance(s, (N.TruncateRows, N.TruncateGroups, N.GroupAgg)) for s in plan.steps):
            # a person's rows may lie in several partitions: truncation sees them together
            # (the frame is computed on the driver, one partition; see the module docstring)
            x = x.repartition(npartitions=1)
        parts = [dask.delayed(_partial, pure=True)(p, plan) for p in x.to_delayed()]
        failed = False
        try:
            partials = dask.compute(*parts) if parts else ()
        except OpenDPLiteError:
            raise
        except Exception:
            failed = True
        if failed:  # raised outside the handler: Dask's message (maybe a value) is not chained
            raise FailedFunction("the Dask engine failed while computing the partitions")
        return finish(list(partials), plan)


ENGINE = DaskEngine()
register(ENGINE)
