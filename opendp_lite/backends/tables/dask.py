"""The Dask engine: a :class:`~opendp_lite.table.nodes.FramePlan` on a ``dask.dataframe``.

Each partition (a pandas frame, cut to the columns the plan reads) runs the plan's row-by-row
steps and exact aggregates on the worker, by the narwhals engine's code
(:func:`~opendp_lite.backends.tables.narwhals.run_arrow`); only the partial answers come back:
per group, integer counts and sums, the set of distinct values for ``n_unique``.  They are
merged exactly: by one more Arrow group-by of the int64 totals where no merged group's rows
times the most one row adds reach ``2^63``, else in Python (integer addition and set union),
so the answer is the same for every partitioning, and the groups of a plan without public
keys come in the total order of :mod:`opendp_lite._order`.  The frame itself is never
computed whole, nor moved to one partition.

Truncation (``truncate_per_group``/``truncate_num_groups``): a person's rows may lie in
several partitions, and which of them are kept is decided on all of them together, in two
stages per truncation step (:func:`_truncating`; the proof is
``docs/proofs/table/truncation.md``, "Dask: two stages"):

1. on each partition, the steps before the truncation, then each run's *candidates* (a run:
   the person, with the truncation's ``by``): under ``truncate_per_group(k)`` its k first rows
   by the kept order, or, under ``"sample"``, every row whose uniform 32-bit key (from
   :mod:`opendp_lite.samplers.rng`) is at most the run's k-th least key in the partition;
   under ``truncate_num_groups(k)`` the partition's distinct (person, group) pairs (under
   first/last, each person's k first of them);
2. the candidates move to one of ``min(partitions, 64)`` buckets by a hash of the run's (or
   person's) class (:func:`_truncation.cell_hash`: ``1``, ``1.0`` and ``True`` meet, and all
   missing ids), where the shared kernel decides on all of them; under ``"sample"`` the rows
   tied with a run's k-th key are ordered by fresh keys (exact; no rerun);
   ``truncate_num_groups`` sends the kept pairs' indices back to the partition each came
   from, which keeps the rows of its kept pairs.

Cost: one all-to-all exchange per truncation step, of at most k rows per run per partition
(``truncate_per_group``) or of each partition's distinct (person, group) pairs, and their
indices back (``truncate_num_groups``); no worker holds more than its bucket's candidates.
A person's rows are never gathered.  Later steps and the aggregates run per bucket (after
``truncate_per_group``) or per partition (after ``truncate_num_groups``), merged as above.

A stable ``group_by(...).agg(...)`` (one, without truncation; :func:`_grouping`) needs each
group's rows together: each partition runs the steps before it and splits its rows into
``min(partitions, 64)`` buckets by the same class hash of the group keys (``-0.0`` with
``0.0``, NaN with null), so each bucket holds whole groups and runs the rest of the plan; one
exchange of the rows, no worker holding more than its bucket.  A plan with several stable
group-bys, or one with a truncation too, runs on one partition.

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
import importlib
import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from ... import _truncation as K
from ...errors import FailedFunction, OpenDPLiteError
from ...table import nodes as N
from ..dask import is_dask_dataframe
from . import TableResult, register, truncation_rows_mask
from .narwhals import (
    Partial,
    _arrow,
    _cells,
    _Eval,
    _Failed,
    _one_chunk,
    _Refused,
    _step,
    finish,
    kept_columns,
    pandas_dtype_name,
    run_arrow,
)

__all__ = ["ENGINE", "DaskEngine"]

#: the most partitions the candidates of a truncation are shuffled into (the shuffle has
#: partitions x buckets pieces)
MAX_BUCKETS = 64
#: the bits of a ``"sample"`` key: a tie at a run's k-th key is broken by fresh keys in stage
#: 2 (exact for any width; 32 bits: rare, and the run code and key sort as one word)
KEY_BITS = 32
_TRUNCATIONS = (N.TruncateRows, N.TruncateGroups)
_H = "\x00opendp_lite.truncation."  # hidden columns: no frame has such a name
_KEY = _H + "key"

#: one part of the frame on a worker: its Arrow columns by name and its number of rows
_Part = tuple[dict[str, Any], int]


def _pa() -> Any:
    return importlib.import_module("pyarrow")


def _partial(partition: Any, plan: N.FramePlan) -> Partial:
    """The plan's partial answer on one partition (on the worker)."""
    return run_arrow(_arrow(partition), plan, parallel=False)  # Dask runs partitions in parallel


def _guarded(where: str, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``; a failure is :class:`FailedFunction` naming ``where``, never a value."""
    failure = ""
    try:
        return fn(*args)
    except OpenDPLiteError:
        raise
    except (_Failed, _Refused, ArithmeticError, ValueError, TypeError, LookupError) as e:
        failure = f": this engine does not run {e.args[0]}" if isinstance(e, _Refused) else ""
    except Exception as e:  # pyarrow's own errors (ArrowInvalid, ArrowNotImplementedError)
        if type(e).__module__.split(".")[0] not in ("pyarrow", "narwhals", "numpy"):
            raise
    raise FailedFunction(f"the Dask engine failed at {where}{failure}")


def _array(a: Any) -> Any:
    return a.combine_chunks() if isinstance(a, _pa().ChunkedArray) else a


def _start(partition: Any) -> _Part:
    t = _arrow(partition)
    return {name: _one_chunk(t.column(name)) for name in t.column_names}, t.num_rows


def _rows(part: Any, steps: tuple[N.Step, ...]) -> _Part:
    """The row-by-row ``steps`` on one part (a partition of the frame, or a part already)."""
    cols, n = part if isinstance(part, tuple) else _start(part)
    for i, step in enumerate(steps):
        cols, n = _guarded(f"step {i} ({type(step).__name__})", _step, cols, n, step)
    return cols, n


def _user(cols: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in cols.items() if not k.startswith(_H)}


def _hidden(cols: dict[str, Any], kind: str) -> list[Any]:
    head = _H + kind
    names = sorted((k for k in cols if k.startswith(head)), key=lambda k: int(k[len(head) :]))
    return [_array(cols[k]) for k in names]


def _take(cols: dict[str, Any], idx: Any) -> dict[str, Any]:
    ix = _pa().array(idx, type=_pa().int64())
    return {k: v.take(ix) for k, v in cols.items()}


def _hash_cells(a: Any) -> Any:
    """An Arrow column as the cells :func:`_truncation.cell_hash` hashes: a temporal column by
    its integer count of its unit, so a column with nulls (Python objects) and one without
    (numpy) hash alike."""
    pa = _pa()
    a = _array(a)
    if pa.types.is_temporal(a.type):
        a = a.view(pa.int64() if a.type.bit_width == 64 else pa.int32())
    return _cells(a)


def _class_hash(a: Any) -> Any:
    """A ``uint64`` per cell of an Arrow column, equal for cells of one ``_order.group_key``
    class in every representation (:func:`_truncation.cell_hash`)."""
    return K.cell_hash(_hash_cells(a))


def _split(cols: dict[str, Any], n: int, keys: list[Any], q: int) -> list[_Part]:
    """The rows of ``cols`` in ``q`` buckets by the canonical hash of ``keys``: rows whose
    keys are equal (``_order.group_key``, cell by cell) share a bucket in every part."""
    if q == 1:
        return [(cols, n)]
    h = np.zeros(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for a in keys:
            h = h * np.uint64(0x100_0000_01B3) ^ _class_hash(a)
    bucket = (h % np.uint64(q)).astype(np.uint16)  # q <= MAX_BUCKETS: a radix sort
    order = np.argsort(bucket, kind="stable")
    cuts = np.searchsorted(bucket[order], np.arange(q + 1)).tolist()
    moved = _take(cols, order)  # one take per column, then zero-copy slices
    return [
        ({c: v.slice(lo, hi - lo) for c, v in moved.items()}, hi - lo)
        for lo, hi in itertools.pairwise(cuts)
    ]


def _concat(parts: tuple[_Part, ...]) -> _Part:
    pa = _pa()
    n = sum(p[1] for p in parts)
    names = list(parts[0][0]) if parts else []
    tables = [pa.table([_array(p[0][c]) for c in names], names=names) for p in parts]
    t = pa.concat_tables(tables, promote_options="permissive") if tables else None
    if t is None or not names:
        return {}, n
    return {c: _one_chunk(t.column(c)) for c in names}, n


def _evaluated(
    cols: dict[str, Any], n: int, step: N.TruncateRows | N.TruncateGroups
) -> dict[str, Any]:
    """The identifier, the ``by`` and sort-key expressions of ``step`` as hidden columns."""
    ev = _Eval(cols, n)
    out = {f"{_H}id.{i}": ev.full(e) for i, e in enumerate(step.identifier)}
    out.update({f"{_H}by.{i}": ev.full(e) for i, e in enumerate(step.by)})
    if isinstance(step.keep, N.SortKey):
        out.update({f"{_H}sort.{i}": ev.full(e) for i, e in enumerate(step.keep.by)})
    return out


def _pairs_mask(cols: dict[str, Any], n: int, step: N.TruncateGroups) -> Any:
    """The (person, group) pairs of ``cols`` the kernel's group law keeps."""
    ids = [_cells(a) for a in _hidden(cols, "id.")]
    by = [_cells(a) for a in _hidden(cols, "by.")]
    return K.groups_mask(ids, by, step.k, step.keep, n=n)


def _mask(cols: dict[str, Any], n: int, step: N.TruncateRows) -> Any:
    """The rows of this part that the exact kernel keeps (first/last/a sort key)."""
    sort = _hidden(cols, "sort.") if isinstance(step.keep, N.SortKey) else []
    return truncation_rows_mask(
        step,
        [_cells(a) for a in _hidden(cols, "id.")],
        [_cells(a) for a in _hidden(cols, "by.")],
        [_cells(_array(v)) for v in _user(cols).values()],
        [_cells(a) for a in sort],
        n,
    )


def _filter(cols: dict[str, Any], keep: Any) -> _Part:
    m = _pa().array(keep)
    return {k: v.filter(m) for k, v in cols.items()}, int(keep.sum())


def _rows_stage1(
    part: _Part, pre: tuple[N.Step, ...], step: N.TruncateRows, q: int, bits: int
) -> list[_Part]:
    """Stage 1 of ``TruncateRows`` on one part: its candidates, in ``q`` buckets by run."""
    cols, n = _rows(part, pre)

    def go() -> list[_Part]:
        full = {**cols, **_evaluated(cols, n, step)}
        if step.keep == "sample":
            ids = [_cells(a) for a in (*_hidden(full, "id."), *_hidden(full, "by."))]
            keep, keys = K.sample_candidates(K.equal_codes(ids, n), step.k, bits)
            full[_KEY] = _pa().array(keys, type=_pa().uint64())
        else:
            keep = _mask(full, n, step)
        kept, m = _filter(full, keep)
        return _split(kept, m, [*_hidden(kept, "id."), *_hidden(kept, "by.")], q)

    out: list[_Part] = _guarded("the truncation's candidates", go)
    return out


def _rows_stage2(step: N.TruncateRows, *pieces: _Part) -> _Part:
    """Stage 2 of ``TruncateRows``: all the candidates of each of its runs, and the kernel."""

    def go() -> _Part:
        cols, n = _concat(pieces)
        if step.keep == "sample":
            ids = [_cells(a) for a in (*_hidden(cols, "id."), *_hidden(cols, "by."))]
            keys = np.asarray(_array(cols[_KEY]).to_numpy(zero_copy_only=False), dtype=np.uint64)
            bits = int(keys.max()).bit_length() if n else 1  # the keys' width, for packing
            keep = K.sample_settle(K.equal_codes(ids, n), keys, step.k, bits)
        else:
            keep = _mask(cols, n, step)
        return _filter(_user(cols), keep)

    out: _Part = _guarded("the truncation", go)
    return out


def _pairs_stage1(
    part: _Part, pre: tuple[N.Step, ...], step: N.TruncateGroups, q: int, src: int
) -> list[Any]:
    """Stage 1 of ``TruncateGroups`` on part ``src``: the part with each row's pair index (its
    (person, group) pair among the part's distinct pairs), then the distinct pairs (under
    first/last, each person's k first of them here), with ``src`` and their index, in ``q``
    buckets by person."""
    cols, n = _rows(part, pre)

    def go() -> list[Any]:
        pa = _pa()
        hid = _evaluated(cols, n, step)
        ids, by = _hidden(hid, "id."), _hidden(hid, "by.")
        codes = K.distinct_codes([_cells(a) for a in (*ids, *by)], n)
        _, first, inv = np.unique(codes, return_index=True, return_inverse=True)
        pairs = _take(hid, first)
        m = len(first)
        pairs[_H + "src"] = pa.array(np.full(m, src, dtype=np.int64))
        pairs[_H + "pair"] = pa.array(np.arange(m, dtype=np.int64))
        if step.keep != "sample":
            keep = _pairs_mask(pairs, m, step)
            pairs, m = _filter(pairs, keep)
        row_pair = np.asarray(inv, dtype=np.int64).reshape(-1)
        return [(cols, n, row_pair, len(first)), *_split(pairs, m, _hidden(pairs, "id."), q)]

    out: list[Any] = _guarded("the truncation's group pairs", go)
    return out


def _pairs_stage2(step: N.TruncateGroups, parts: int, *pieces: _Part) -> list[Any]:
    """Stage 2 of ``TruncateGroups``: each person's pairs from every part together, chosen by
    the kernel's group law (a pair met in several parts is one group); the kept pairs' indices,
    sent back to the part each came from (``parts`` arrays)."""

    def go() -> list[Any]:
        cols, n = _concat(pieces)
        if n == 0:
            return [np.zeros(0, dtype=np.int64)] * parts
        keep = _pairs_mask(cols, n, step)
        src = _array(cols[_H + "src"]).to_numpy()[keep]
        pair = _array(cols[_H + "pair"]).to_numpy()[keep]
        order = np.argsort(src, kind="stable")
        cuts = np.searchsorted(src[order], np.arange(parts + 1)).tolist()
        return [pair[order[lo:hi]] for lo, hi in itertools.pairwise(cuts)]

    out: list[Any] = _guarded("the truncation", go)
    return out


def _semi_join(data: tuple[dict[str, Any], int, Any, int], *kept: Any) -> _Part:
    """The rows of one part whose (person, group) pair was kept (by the pairs' indices)."""
    cols, _n, row_pair, pairs = data
    pair_kept = np.zeros(pairs, dtype=bool)
    for idx in kept:
        pair_kept[idx] = True
    return _filter(cols, pair_kept[row_pair])


def _final(part: _Part, plan: N.FramePlan) -> Partial:
    """The rest of the plan (row-by-row steps, then the aggregates) on one part."""
    cols, n = part
    pa = _pa()
    if cols:
        table = pa.table([_array(v) for v in cols.values()], names=list(cols))
    else:  # no columns: a table of n rows
        table = pa.table({"": pa.nulls(n)}).select([])
    return run_arrow(table, plan, parallel=False)


def _and_finish(stage: str, rest: N.FramePlan, *args: Any) -> Partial:
    """The last truncation's last stage (looked up by name), then :func:`_final`: one task."""
    part: _Part = globals()[stage](*args)
    return _final(part, rest)


def _truncating(dask: Any, x: Any, plan: N.FramePlan) -> list[Any]:
    """The delayed partial answers of a plan with truncation steps: each step in two stages
    (see the module docstring); the frame is never gathered on one worker."""
    delayed = dask.delayed
    parts: list[Any] = list(x.to_delayed())
    last = max(i for i, s in enumerate(plan.steps) if isinstance(s, _TRUNCATIONS))
    rest = dataclasses.replace(plan, steps=plan.steps[last + 1 :])
    pre: list[N.Step] = []
    for t, step in enumerate(plan.steps[: last + 1]):
        if not isinstance(step, _TRUNCATIONS):
            pre.append(step)
            continue
        q = max(1, min(len(parts), MAX_BUCKETS))
        # the last stage of the last truncation runs the rest of the plan in the same task
        finish_here = t == last
        fn: Callable[..., Any]
        head: tuple[Any, ...]
        if isinstance(step, N.TruncateRows):
            stage1 = [
                delayed(_rows_stage1, pure=False, nout=q)(p, tuple(pre), step, q, KEY_BITS)
                for p in parts
            ]
            fn, head = (_and_finish, ("_rows_stage2", rest)) if finish_here else (_rows_stage2, ())
            parts = [
                delayed(fn, pure=False)(*head, step, *[s1[b] for s1 in stage1]) for b in range(q)
            ]
        else:
            stage1 = [
                delayed(_pairs_stage1, pure=False, nout=q + 1)(p, tuple(pre), step, q, i)
                for i, p in enumerate(parts)
            ]
            p_in = len(parts)
            kept = [
                delayed(_pairs_stage2, pure=False, nout=p_in)(
                    step, p_in, *[s1[b + 1] for s1 in stage1]
                )
                for b in range(q)
            ]
            fn, head = (_and_finish, ("_semi_join", rest)) if finish_here else (_semi_join, ())
            parts = [
                delayed(fn, pure=True)(*head, s1[0], *[kb[i] for kb in kept])
                for i, s1 in enumerate(stage1)
            ]
        pre = []
    return parts


def _group_stage1(partition: Any, plan: N.FramePlan, t: int, q: int) -> list[_Part]:
    """One partition: the row-by-row steps before the stable group-by ``t``, then its rows in
    ``q`` buckets by the hash of the group keys' classes."""
    step = plan.steps[t]
    if not isinstance(step, N.GroupAgg):  # pragma: no cover - t is found by the caller
        raise TypeError("not a stable group-by step")
    cols, n = _rows(partition, plan.steps[:t])
    ev = _Eval(cols, n)
    keys = _guarded("the group keys", lambda: [_array(ev.full(e)) for e in step.by])
    return list(_guarded("the group keys", _split, cols, n, keys, q))


def _group_stage2(pieces: tuple[_Part, ...], plan: N.FramePlan, t: int) -> Partial:
    """One bucket: every row of its groups; the stable group-by and the rest of the plan."""
    cols, n = _concat(pieces)
    rest = dataclasses.replace(plan, steps=plan.steps[t:])
    pa = _pa()
    table = pa.table(cols) if cols else pa.table({_H + "n": pa.nulls(n)})
    return run_arrow(table, rest, parallel=False)


def _grouping(dask: Any, x: Any, plan: N.FramePlan, t: int) -> list[Any]:
    """A plan with one stable group-by (step ``t``) and no truncation: each partition runs the
    steps before it and splits its rows by the keys' classes; each bucket holds whole groups
    and runs the rest of the plan (its partial answer merged as any partition's)."""
    parts = x.to_delayed()
    q = max(1, min(len(parts), MAX_BUCKETS))
    first = [dask.delayed(_group_stage1, nout=q)(p, plan, t, q) for p in parts]
    return [dask.delayed(_group_stage2)(tuple(f[j] for f in first), plan, t) for j in range(q)]


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
        group_aggs = [i for i, s in enumerate(plan.steps) if isinstance(s, N.GroupAgg)]
        truncates = any(isinstance(s, (N.TruncateRows, N.TruncateGroups)) for s in plan.steps)
        if len(group_aggs) == 1 and not truncates:
            # a stable group_by(...).agg(...) needs each group's rows together: they move to
            # one bucket by a hash of the keys' classes (module docstring), never the frame
            parts = _grouping(dask, x, plan, group_aggs[0])
        elif group_aggs:
            # several stable group-bys, or one with truncation: the plan runs on one partition
            # (the columns it reads, on one worker)
            x = x.repartition(npartitions=1)
            parts = [dask.delayed(_partial, pure=True)(p, plan) for p in x.to_delayed()]
        elif any(isinstance(s, (N.TruncateRows, N.TruncateGroups)) for s in plan.steps):
            parts = _truncating(dask, x, plan)  # two stages per truncation: module docstring
        else:
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
