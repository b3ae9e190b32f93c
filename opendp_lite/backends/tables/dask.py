"""The Dask engine: a :class:`~opendp_lite.table.nodes.FramePlan` on a ``dask.dataframe``.

Each partition (a pandas frame, cut to the columns the plan reads) runs the plan's row-by-row
steps and exact aggregates on the worker, by the narwhals engine's code
(:func:`~opendp_lite.backends.tables.narwhals.run_arrow`); only the partial answers come back:
per group, integer counts and sums, the set of distinct values for ``n_unique``.  They are
merged exactly: by one more Arrow group-by of the int64 totals where no merged group's rows
times the most one row adds reach ``2^63``, else in Python (integer addition and set union),
so the answer is the same for every partitioning, and the groups of a plan without public
keys come in the total order of :mod:`opendp_lite._order`.  The frame itself is never
computed whole.  Under truncation (``truncate_per_group``/``truncate_num_groups``) a person's
rows may lie in several partitions, and which of them are kept must be decided on all of them
together; the plan then runs in two stages (:func:`_run_truncating`):

1. each partition runs the steps before the first truncation and keeps, of each run (the
   person, then the truncation's ``by``), the rows that can survive it: under
   ``truncate_per_group(k)`` its ``k`` first rows by the kept order, or, under ``"sample"``,
   every row whose uniform 32-bit key (from :mod:`opendp_lite.samplers.rng`) is at most the
   run's k-th least key in the partition, with the key kept; under ``truncate_num_groups``
   every row;
2. the survivors move to the partition of their person (a hash of the person's class, so
   ``1``, ``1.0`` and ``True`` meet, and all missing ids), where the truncation is decided
   on all of the person's survivors, then the rest of the plan runs and the partial answers
   are merged as above.

Cost: one all-to-all exchange of the survivors (at most ``k`` rows per person per partition for
``truncate_per_group``; every row the steps keep for ``truncate_num_groups``, whose kept groups
keep all their rows), no partition holding more than its people's survivors.  Under
``"sample"`` a tie between a run's k-th and (k+1)-th least key (probability below
``r 2^-32`` for ``r`` runs of more than k rows) redraws every key: the whole computation runs again
(nothing is released before it ends).  See ``docs/proofs/table/truncation.md``.

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

import dataclasses
import hashlib
import importlib
from typing import Any

import numpy as np

from ... import _truncation as K
from ..._order import MISSING, group_key
from ...errors import FailedFunction, OpenDPLiteError
from ...samplers.rng import fill_uint64
from ...table import nodes as N
from ..dask import is_dask_dataframe
from . import TableResult, register
from .narwhals import (
    Partial,
    _arrow,
    _cells,
    _Eval,
    _step,
    finish,
    kept_columns,
    pandas_dtype_name,
    run_arrow,
)

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
        failed = False
        try:
            if any(isinstance(s, (N.TruncateRows, N.TruncateGroups)) for s in plan.steps):
                partials = _run_truncating(dask, x, plan)
            else:
                parts = [dask.delayed(_partial, pure=True)(p, plan) for p in x.to_delayed()]
                partials = list(dask.compute(*parts)) if parts else []
        except OpenDPLiteError:
            raise
        except Exception:
            failed = True
        if failed:  # raised outside the handler: Dask's message (maybe a value) is not chained
            raise FailedFunction("the Dask engine failed while computing the partitions")
        return finish(partials, plan)


# --- truncation in two stages (module docstring) -------------------------------------------------

_KEY = "\x00key"  # a row's sample key, carried from stage 1 to stage 2
_M61 = (1 << 61) - 1


_TRUNCATIONS = (N.TruncateRows, N.TruncateGroups)


def _truncation(plan: N.FramePlan, t: int) -> N.TruncateRows | N.TruncateGroups:
    step = plan.steps[t]
    if not isinstance(step, _TRUNCATIONS):  # pragma: no cover - t is found by _run_truncating
        raise TypeError("not a truncation step")
    return step


def _class_hash(a: Any) -> Any:
    """A uint64 per cell, equal for cells of one ``_order.group_key`` class (``==`` values;
    missing values), whatever the array's representation: an integer-valued number hashes to
    its value mod 2^61 - 1 (so 1, 1.0 and True agree), another number by Python's numeric
    hash (not randomized), a missing value to one constant, anything else by BLAKE2b of its
    class key (Python's ``hash`` of a str differs between processes)."""
    pa = importlib.import_module("pyarrow")
    if (pa.types.is_integer(a.type) or pa.types.is_boolean(a.type)) and a.null_count == 0:
        v = a.to_numpy(zero_copy_only=False)
        if v.dtype.kind == "u":
            return (v % np.uint64(_M61)).astype(np.uint64)
        return (v.astype(np.int64) % _M61).astype(np.uint64)
    out = np.empty(len(a), dtype=np.uint64)
    for i, v in enumerate(a.to_pylist()):
        key = group_key(v)
        if key == MISSING:
            out[i] = _M61 + 1
        elif isinstance(key[1], (int, float)) and not isinstance(key[1], bool) and len(key) == 2:
            num = key[1]
            integral = isinstance(num, int) or float(num).is_integer()
            out[i] = (int(num) % _M61) if integral else (hash(num) % _M61)
        else:
            digest = hashlib.blake2b(repr(key).encode(), digest_size=8).digest()
            out[i] = int.from_bytes(digest, "little")
    return out


def _person_bucket(ev: _Eval, step: N.TruncateRows | N.TruncateGroups, buckets: int) -> Any:
    h = np.zeros(ev.n, dtype=np.uint64)
    for e in step.identifier:
        h = h * np.uint64(1_000_003) + _class_hash(_one(ev.full(e)))  # wraps mod 2^64
    return (h % np.uint64(buckets)).astype(np.int64)


def _one(a: Any) -> Any:
    return a.combine_chunks() if hasattr(a, "combine_chunks") else a


def _runs(ev: _Eval, step: N.TruncateRows | N.TruncateGroups) -> Any:
    """Codes equal exactly for the rows of one run (the kernel's classes; in no order)."""
    return K.equal_codes([_cells(_one(ev.full(e))) for e in (*step.identifier, *step.by)], ev.n)


def _least_keys(run: Any, key: Any, k: int) -> tuple[Any, Any, Any]:
    """Rows sorted by (run, key); each row's rank in its run in that order; the runs sorted.
    ``key`` has 32 bits and ``run`` codes are below 2^32 (rows of one partition): one sort of
    the packed words."""
    order = np.argsort((run.astype(np.uint64) << np.uint64(32)) | key)
    s = run[order]
    new = np.r_[True, s[1:] != s[:-1]] if len(s) else np.zeros(0, dtype=bool)
    idx = np.arange(len(s))
    rank = idx - np.maximum.accumulate(np.where(new, idx, 0)) if len(s) else idx
    return order, rank, s


def _stage1(part: Any, plan: N.FramePlan, t: int, buckets: int) -> tuple[Any, ...]:
    """One partition: the steps before truncation ``t``, the rows that can survive it, split
    by the person's bucket (a tuple of ``buckets`` Arrow tables)."""
    pa = importlib.import_module("pyarrow")
    table = _arrow(part)
    cols = {name: _one(table.column(name)) for name in table.column_names}
    n = table.num_rows
    for step in plan.steps[:t]:
        cols, n = _step(cols, n, step)
    trunc = _truncation(plan, t)
    ev = _Eval(cols, n)
    keep = np.ones(n, dtype=bool)
    if isinstance(trunc, N.TruncateRows):
        if trunc.keep == "sample":
            key = fill_uint64(n) >> np.uint64(32)  # 32 uniform bits (see _least_keys)
            runs = _runs(ev, trunc)
            order, rank, run = _least_keys(runs, key, trunc.k)
            at_k = rank == trunc.k - 1  # each run's k-th least key (runs of k rows or more)
            limit = np.full(int(runs.max()) + 1 if n else 0, np.iinfo(np.uint64).max, np.uint64)
            limit[run[at_k]] = key[order][at_k]
            keep = key <= limit[runs]  # rows tied with the k-th key stay
            cols[_KEY] = pa.array(key)
        else:
            keep = _rows_mask(cols, ev, n, trunc)
    bucket = _person_bucket(ev, trunc, buckets)
    out = pa.table(cols)
    return tuple(out.filter(pa.array(keep & (bucket == j))) for j in range(buckets))


def _rows_mask(cols: dict[str, Any], ev: _Eval, n: int, step: N.TruncateRows) -> Any:
    from .narwhals import _truncation_mask

    return _truncation_mask({c: v for c, v in cols.items() if c != _KEY}, ev, n, step)


def _stage2(pieces: list[Any], plan: N.FramePlan, t: int) -> tuple[Partial | None, bool]:
    """One bucket: truncation ``t`` decided on each person's survivors, then the rest of the
    plan; ``(partial, tied)``, ``tied`` when a ``"sample"`` run's k-th and (k+1)-th least keys
    are equal (then the caller redraws every key, and the partial is not used)."""
    pa = importlib.import_module("pyarrow")
    table = pa.concat_tables(pieces, promote_options="default")
    cols = {name: _one(table.column(name)) for name in table.column_names}
    n = table.num_rows
    trunc = _truncation(plan, t)
    if isinstance(trunc, N.TruncateRows) and trunc.keep == "sample":
        key = cols.pop(_KEY).to_numpy(zero_copy_only=False)
        ev = _Eval(cols, n)
        order, rank, _ = _least_keys(_runs(ev, trunc), key, trunc.k)
        sk = key[order]
        edge = np.flatnonzero(rank == trunc.k)  # a (k+1)-th row; its run's k-th is just before
        if bool(np.any(sk[edge] == sk[edge - 1])):
            return None, True
        keep = np.zeros(n, dtype=bool)
        keep[order[rank < trunc.k]] = True
        mask = pa.array(keep)
        cols = {c: v.filter(mask) for c, v in cols.items()}
        n = int(keep.sum())
    else:
        cols, n = _step(cols, n, trunc)
    rest = dataclasses.replace(plan, steps=plan.steps[t + 1 :])
    table = pa.table(cols) if cols else pa.table({"\x00n": pa.nulls(n)})
    return run_arrow(table, rest, parallel=False), False


def _run_truncating(dask: Any, x: Any, plan: N.FramePlan) -> list[Partial]:
    """The two stages (module docstring), redrawn whole while a ``"sample"`` key ties."""
    t = next(
        i for i, s in enumerate(plan.steps) if isinstance(s, (N.TruncateRows, N.TruncateGroups))
    )
    parts = x.to_delayed()
    buckets = max(1, len(parts))
    while True:
        first = [dask.delayed(_stage1, nout=buckets)(p, plan, t, buckets) for p in parts]
        second = [dask.delayed(_stage2)([f[j] for f in first], plan, t) for j in range(buckets)]
        results = dask.compute(*second)
        if not any(tied for _, tied in results):
            return [p for p, _ in results if p is not None]


ENGINE = DaskEngine()
register(ENGINE)
