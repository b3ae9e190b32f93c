"""Partition a dataframe by key columns, bounding each individual's reach (l0, l1, l∞).

``make_partition_by`` turns a dataframe into a :class:`Partitioned` dataset: one sub-frame per
group (a ``Mapping`` from the group's label to its rows), under :func:`partition_distance`,
whose distances are triples ``(l0, l1, l∞)``: how many groups differ, how many records differ
in all, and how many at most in one group.  ``make_grouped_count`` and ``make_grouped_sum``
are the vectorised per-group aggregates on it (one pass of integer codes and ``np.bincount``,
exact integer grid sums); ``opendp_lite.combinators.grouped.make_grouped`` maps any
measurement over the groups.

Each *individual* is a record under ``symmetric_distance()``; under
``symmetric_id_distance(identifier)`` an individual is every row sharing one identifier, and
its rows are truncated to ``max_partitions`` groups and ``max_contributions_per_partition``
rows per group before anything is aggregated (never counted beyond the bound).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from .. import _arith as ar
from .. import backends
from .._order import MISSING, group_codes, group_key, group_ranks, tie_ranks
from .._registry import constructor
from .._spine import then
from .._types import Vec
from .._validate import check_int
from ..core import Domain, Metric, Transformation
from ..domains import DataFrameDomain, atom_domain, vector_domain
from ..errors import (
    DomainMismatch,
    FailedFunction,
    InvalidParameter,
    MetricMismatch,
    NotInDomain,
)
from ..metrics import (
    PartitionDistance,
    SymmetricDistance,
    SymmetricIdDistance,
    Triple,
    l1_distance,
    l2_distance,
    partition_distance,
    symmetric_distance,
    symmetric_id_distance,
)
from ._aggregate import grid_k, grid_shift, rounding_error, to_carrier

__all__ = [
    "PartitionDistance",
    "PartitionDomain",
    "Partitioned",
    "SymmetricIdDistance",
    "make_grouped_count",
    "make_grouped_sum",
    "make_partition_by",
    "partition_distance",
    "symmetric_id_distance",
    "then_grouped_count",
    "then_grouped_sum",
    "then_partition_by",
]

# -- the partitioned carrier ----------------------------------------------------------------


class Partitioned(Mapping[Any, Mapping[Any, Any]]):
    """A dataframe split into groups: ``self[key]`` is the sub-frame of group ``key``.

    ``keys`` are the group labels in release order (the declared keys, or the keys found in
    the data, in the order of ``opendp_lite._order``, when they are private); ``codes[i]`` is
    row ``i``'s group index into ``keys`` (``-1``: dropped, outside the keys or truncated);
    ``frame`` holds the columns.
    On a Dask dataframe ``codes`` is ``None`` and ``frame`` stays lazy: the per-group
    aggregates reduce per-partition partials on the workers; reading a group computes the
    frame on the driver.
    """

    __slots__ = ("_parts", "by", "codes", "frame", "keys_")

    def __init__(
        self,
        keys: tuple[Any, ...],
        codes: npt.NDArray[np.int64] | None,
        frame: Any,
        by: tuple[Any, ...],
    ) -> None:
        self.keys_ = keys
        self.codes = codes
        self.frame = frame
        self.by = by
        self._parts: dict[Any, dict[Any, npt.NDArray[Any]]] | None = None

    def _split(self) -> dict[Any, dict[Any, npt.NDArray[Any]]]:
        if self._parts is None:
            if self.codes is None:  # a lazy frame: computed on the driver for a generic map
                lazy = backends.of_frame(self.frame)
                assert lazy is not None  # noqa: S101 - only a lazy frame is kept unsplit
                part = _partition_numpy(lazy.frame_to_dict(self.frame), self.by, self.keys_)
                self.codes, self.frame = part.codes, part.frame
            codes = self.codes
            assert codes is not None  # noqa: S101 - set just above
            counts = np.bincount(codes[codes >= 0], minlength=len(self.keys_))
            order = np.argsort(codes, kind="stable")
            start = int(np.count_nonzero(codes < 0))  # the dropped rows sort first
            cols = {c: np.asarray(v)[order] for c, v in self.frame.items()}
            parts: dict[Any, dict[Any, npt.NDArray[Any]]] = {}
            for key, n in zip(self.keys_, counts.tolist(), strict=True):
                parts[key] = {c: v[start : start + n] for c, v in cols.items()}
                start += n
            self._parts = parts
        return self._parts

    def __getitem__(self, key: Any) -> Mapping[Any, Any]:
        return self._split()[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.keys_)

    def __len__(self) -> int:
        return len(self.keys_)

    def __repr__(self) -> str:
        return f"Partitioned(by={self.by!r}, groups={len(self.keys_)})"


@dataclass(frozen=True)
class PartitionDomain(Domain[Partitioned]):
    """Partitioned dataframes grouped by columns ``by``.

    ``keys`` is the public key set (the groups are exactly these, in this order) or ``None``
    when the keys are data-dependent (a release must then select them privately).
    """

    by: tuple[Any, ...]
    keys: tuple[Any, ...] | None
    part_domain: DataFrameDomain

    def __repr__(self) -> str:
        keys = "private" if self.keys is None else f"{len(self.keys)} public"
        return f"PartitionDomain(by={list(self.by)!r}, keys={keys})"

    @property
    def carrier_type(self) -> str:
        return f"HashMap<Key, {self.part_domain.carrier_type}>"

    def _normalize(self, x: object) -> Partitioned:
        if type(x).__name__ != "Partitioned" or tuple(getattr(x, "by", ())) != self.by:
            raise NotInDomain(
                f"expected the output of make_partition_by(by={list(self.by)!r}), got "
                f"{type(x).__name__}: chain make_partition_by first"
            )
        part = cast(Partitioned, x)
        if self.keys is not None and tuple(part.keys_) != self.keys:
            raise NotInDomain("the partition's keys differ from the declared keys")
        return part


# -- key codes -------------------------------------------------------------------------------


def _lookup(col: npt.NDArray[Any], comp: Sequence[Any]) -> npt.NDArray[np.int64]:
    """``codes[i]`` = the index of ``col[i]`` in ``comp`` (distinct values), ``-1`` if none."""
    n = len(col)
    if not comp:
        return np.full(n, -1, dtype=np.int64)
    ref = np.asarray(list(comp))
    ck, rk = col.dtype.kind, ref.dtype.kind
    # u64 against signed integers: numpy would compare them as float64; exact dict instead
    u64 = (ck == "u" and col.itemsize == 8) or (rk == "u" and ref.itemsize == 8)
    mixed64 = u64 and ck in "iu" and rk in "iu" and ck != rk
    if ck in "iub" and rk in "iu" and not u64:
        lo, hi = int(ref.min()), int(ref.max())
        if hi - lo <= 4 * len(ref) + (1 << 16):  # a direct table: one gather per row
            c = col.astype(np.int64, copy=False)
            if n and lo >= 0 and int(c.min()) >= 0 and int(c.max()) <= hi:
                # every value indexes the table directly: one gather, no temporaries
                table = np.full(hi + 1, -1, dtype=np.int64)
                table[ref] = np.arange(len(ref))
                return np.take(table, c)
            table = np.full(hi - lo + 1, -1, dtype=np.int64)
            table[ref - lo] = np.arange(len(ref))
            inside = (c >= lo) & (c <= hi)
            out = np.full(n, -1, dtype=np.int64)
            out[inside] = table[c[inside] - lo]
            return out
    # ints against floats: numpy compares them as float64, which merges ints beyond 2^53 with
    # their neighbours; exact (the dict below) unless every int is within 2^53
    wide = (
        ck in "iu"
        and rk == "f"
        and bool(n)
        and max(abs(int(col.min())), abs(int(col.max()))) > 2**53
    )
    wide |= rk in "iu" and ck == "f" and max(abs(int(ref.min())), abs(int(ref.max()))) > 2**53
    if ck in "iuf" and rk in "iuf" and not mixed64 and not wide:
        order = np.argsort(ref, kind="stable")
        srt = ref[order]
        pos = np.clip(np.searchsorted(srt, col), 0, len(srt) - 1)
        hit = srt[pos] == col  # NaN equals nothing
        return np.where(hit, order[pos], -1).astype(np.int64)
    pd = sys.modules.get("pandas")
    if pd is not None and all(type(v) is str for v in comp) and col.dtype.kind == "O":
        values = col.tolist()
        if all(type(v) is str for v in values):  # one C pass; a str equals only a str
            idx = pd.Index(list(comp), dtype=object)
            codes = idx.get_indexer(np.asarray(values, dtype=object))
            return np.asarray(codes, dtype=np.int64)
    # Python's equality, as a dict sees it (1, 1.0 and True are one key; a missing value,
    # None or NaN, matches nothing):
    # the same whatever dtype the column was given (the group_key of the shared order)
    table_d = {k: i for i, k in enumerate(map(group_key, comp)) if k != MISSING}
    return np.fromiter((table_d.get(group_key(v), -1) for v in col.tolist()), np.int64, n)


def _columns(frame: Mapping[Any, Any], by: tuple[Any, ...]) -> list[npt.NDArray[Any]]:
    missing = [b for b in by if b not in frame]
    if missing:
        raise FailedFunction(f"the dataframe has no column {missing[0]!r}; columns: {list(frame)}")
    return [np.asarray(frame[b]) for b in by]


def _codes(cols: list[npt.NDArray[Any]], keys: tuple[Any, ...] | None) -> tuple[Any, Any]:
    """(codes, keys): group index of each row (-1: dropped); with ``keys=None`` the keys
    present, in the shared order (a row with a missing key cell, None or NaN, is dropped)."""
    n = len(cols[0]) if cols else 0
    if keys is None:
        # each column's groups in the shared order (a NaN cell is in no group): a function of
        # each value alone, whatever else the column holds
        coded = [group_codes(c) for c in cols]
        parts = [p for p, _ in coded]
        comps = [labels for _, labels in coded]
        if len(cols) == 1:
            return parts[0], tuple(comps[0])
        valid = np.logical_and.reduce([p >= 0 for p in parts])
        stacked = np.stack([p[valid] for p in parts], axis=1)
        rows, inv = np.unique(stacked, axis=0, return_inverse=True)  # lexicographic order
        codes = np.full(n, -1, dtype=np.int64)
        codes[valid] = inv.reshape(-1)
        found = tuple(tuple(comps[j][i] for j, i in enumerate(r)) for r in rows.tolist())
        return codes, found
    if len(cols) == 1:
        return _lookup(cols[0], list(keys)), keys
    # several columns: extend the code of each row's key prefix one column at a time; every
    # intermediate code is below len(keys)², so nothing overflows whatever the columns
    cur = np.zeros(n, dtype=np.int64)
    key_prefix = np.zeros(len(keys), dtype=np.int64)
    for j, col in enumerate(cols):
        comp = list(dict.fromkeys(k[j] for k in keys))
        index = {v: i for i, v in enumerate(comp)}
        part = _lookup(col, comp)
        pairs = key_prefix * len(comp) + np.array([index[k[j]] for k in keys], dtype=np.int64)
        uniq, key_prefix = np.unique(pairs, return_inverse=True)
        key_prefix = key_prefix.reshape(-1)
        row_pairs = np.where((cur >= 0) & (part >= 0), cur * len(comp) + part, -1)
        cur = _lookup(row_pairs, uniq.tolist())
    to_key = np.empty(len(keys), dtype=np.int64)
    to_key[key_prefix] = np.arange(len(keys))  # keys are distinct: a bijection
    return np.where(cur >= 0, to_key[np.maximum(cur, 0)], -1), keys


@dataclass(frozen=True)
class _Bounds:
    max_partitions: int
    max_per_partition: int
    max_total: int | None = None


def _truncate(
    frame: Mapping[Any, npt.NDArray[Any]], codes: npt.NDArray[np.int64], ident: Any, b: _Bounds
) -> npt.NDArray[np.int64]:
    """Codes with each individual cut to ``max_partitions`` groups (its smallest group
    indices) and ``max_per_partition`` rows in each (its smallest rows in the order of
    ``opendp_lite._order``, column by column).  The rows kept are a function of the
    individual's own rows only."""
    valid = np.flatnonzero(codes >= 0)  # rows outside the keys are dropped anyway
    out = np.full(len(codes), -1, dtype=np.int64)
    if len(valid) == 0:
        return out
    sub = {c: np.asarray(v)[valid] for c, v in frame.items()}
    g = codes[valid]
    id_code = group_ranks(sub[ident])  # equal ids (1, 1.0): one individual
    # rows of one individual sorted by group, then every column's value (by ==: the same order
    # whatever dtype the column was given), then what tells equal values apart (bool < int <
    # float, -0.0 < 0.0, NaN payloads): the order of two rows depends on those two rows only
    by_value = [group_ranks(v) for v in sub.values()]
    finer = [r for r in map(tie_ranks, sub.values()) if r is not None]
    order = np.lexsort((*reversed(finer), *reversed(by_value), g, id_code))
    sid, sg = id_code[order], g[order]
    new_id = np.r_[True, sid[1:] != sid[:-1]]
    new_group = new_id | np.r_[True, sg[1:] != sg[:-1]]
    idx = np.arange(len(order))
    # rank of each row in its (individual, group) run; rank of the group in the individual
    row_rank = idx - np.maximum.accumulate(np.where(new_group, idx, 0))
    run = np.cumsum(new_group) - 1
    group_rank = run - np.maximum.accumulate(np.where(new_id, run, 0))
    keep = (row_rank < b.max_per_partition) & (group_rank < b.max_partitions)
    if b.max_total is not None:  # then its first max_total kept rows, in the same order
        kept = np.cumsum(keep)
        base = np.maximum.accumulate(np.where(new_id, kept - keep, 0))
        keep &= kept - base <= b.max_total
    out[valid[order[keep]]] = sg[keep]
    return out


def _partition_numpy(
    frame: Mapping[Any, Any],
    by: tuple[Any, ...],
    keys: tuple[Any, ...] | None,
    ident: Any = None,
    bounds: _Bounds | None = None,
) -> Partitioned:
    codes, found = _codes(_columns(frame, by), keys)
    if bounds is not None:
        if ident not in frame:
            raise FailedFunction(f"the dataframe has no identifier column {ident!r}")
        codes = _truncate(frame, codes, ident, bounds)
        if keys is None:  # groups emptied by truncation are not groups of the partition
            present = np.unique(codes[codes >= 0])
            remap = np.full(len(found), -1, dtype=np.int64)
            remap[present] = np.arange(len(present))
            if len(found):  # (no group at all: every key cell was NaN)
                codes = np.where(codes >= 0, remap[np.maximum(codes, 0)], -1)
            found = tuple(found[i] for i in present.tolist())
    return Partitioned(found, codes, dict(frame), by)


def _check_count(name: str, v: object) -> int:
    return check_int(name, v, min=1)


def _check_keys(keys: object, n_by: int) -> tuple[Any, ...] | None:
    if keys is None:
        return None
    if isinstance(keys, str | bytes) or not isinstance(keys, Sequence | np.ndarray):
        raise InvalidParameter(f"keys must be a list of group labels, got {keys!r}")
    out = tuple(v.item() if isinstance(v, np.generic) else v for v in keys)
    if n_by > 1 and not all(isinstance(k, tuple) and len(k) == n_by for k in out):
        raise InvalidParameter(f"keys must be tuples of {n_by} values (one per by column)")
    try:
        distinct = len(set(out)) == len(out)
    except TypeError:
        raise InvalidParameter(f"keys must be hashable, got {keys!r}") from None
    if not distinct:
        raise InvalidParameter(f"keys must be distinct, got {keys!r}")
    cells = [c for k in out for c in (k if n_by > 1 else (k,))]
    if any(group_key(c) == MISSING for c in cells):
        raise InvalidParameter(
            f"keys must not hold a missing value (None, NaN), got {keys!r}: a row whose key is "
            "missing is in no group (pandas reads None as NaN in a numeric column); impute it "
            "first (make_impute_constant) to count it"
        )
    return out


@constructor
def make_partition_by(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    by: Any,
    keys: Sequence[Any] | None = None,
    max_partitions: int | None = None,
    max_contributions_per_partition: int | None = None,
    max_contributions: int | None = None,
) -> Transformation[Mapping[Any, Any], Partitioned, int, Triple]:
    r"""Partition a dataframe into groups by the columns ``by``.

    With public ``keys`` the groups are exactly ``keys`` (in that order): rows with another
    key are dropped, and a key absent from the data is an empty group.  With ``keys=None``
    the groups are the keys present in the data, which must then be selected privately
    (``make_grouped(..., threshold=...)``).  One column gives scalar labels, several give
    tuples.  Keys match as ``dict`` keys do (``1``, ``1.0`` and ``True`` are one key, whatever
    dtype the column was given); a missing key cell (``None``, NaN) is in no group.  Private
    keys are sorted in the order of ``opendp_lite._order`` (numbers by value, then strings,
    bytes, tuples, other values), an integral number labelled by an ``int``.

    Under ``symmetric_id_distance(identifier)`` each individual's rows are first cut to
    ``k = max_partitions`` groups (its smallest group indices) and ``m =
    max_contributions_per_partition`` rows per group (its first rows in the order of
    ``opendp_lite._order``: every column's value, column by column, then what tells equal
    values apart), and, if ``c = max_contributions`` is given, to its first ``c`` of those
    rows in the same order, so a contribution beyond the bounds is never counted.  The order
    of two rows depends on those two rows only, so the rows kept for an individual depend on
    its own rows only.

    Stability map, into ``partition_distance()``:
        symmetric distance:  d ↦ (d, d, d)
        symmetric_id_distance:  d ↦ (d·min(k, c), d·min(k·m, c), d·min(m, c))   (c = ∞
        when not given)

    Raises:
        DomainMismatch: if ``input_domain`` is not a ``dataframe_domain``.
        MetricMismatch: if ``input_metric`` is neither ``symmetric_distance()`` nor
            ``symmetric_id_distance(identifier)``.
        InvalidParameter: if ``by`` is empty or names the identifier, ``keys`` are not
            distinct hashable labels (tuples for several ``by`` columns) or hold a missing
            value (``None``, NaN), the bounds are
            not positive ints, or are missing under ``symmetric_id_distance`` or given under
            ``symmetric_distance`` (where each record is its own individual).
        FailedFunction: at invocation, if a ``by`` or identifier column is missing.
        NotInDomain: at invocation, if a column it reads (the ``by`` columns; every column
            under ``symmetric_id_distance``) holds an unhashable cell, such as a list.

    Proof: docs/proofs/make_partition_by.md

    >>> import opendp_lite.prelude as dp
    >>> t = dp.t.make_partition_by(dp.dataframe_domain(), dp.symmetric_distance(),
    ...                            by="region", keys=["north", "south"])
    >>> parts = t({"region": ["north", "east", "north"], "income": [1.0, 2.0, 3.0]})
    >>> {k: v["income"].tolist() for k, v in parts.items()}, t.map(1)
    ({'north': [1.0, 3.0], 'south': []}, (1, 1, 1))
    """
    if not isinstance(input_domain, DataFrameDomain):
        raise DomainMismatch(DataFrameDomain("String"), input_domain, "make_partition_by")
    by_t = (by,) if not isinstance(by, list | tuple) else tuple(by)
    if not by_t:
        raise InvalidParameter("by must name at least one column, got []")
    key_set = _check_keys(keys, len(by_t))
    bounds: _Bounds | None = None
    if isinstance(input_metric, SymmetricIdDistance):
        if input_metric.identifier in by_t:
            raise InvalidParameter(f"by must not include the identifier {by!r}")
        if max_partitions is None or max_contributions_per_partition is None:
            raise InvalidParameter(
                "under symmetric_id_distance, max_partitions and "
                "max_contributions_per_partition must be given (the bounds on one individual)"
            )
        bounds = _Bounds(
            _check_count("max_partitions", max_partitions),
            _check_count("max_contributions_per_partition", max_contributions_per_partition),
            None
            if max_contributions is None
            else _check_count("max_contributions", max_contributions),
        )
    elif isinstance(input_metric, SymmetricDistance):
        if (max_partitions, max_contributions_per_partition, max_contributions) != (None,) * 3:
            raise InvalidParameter(
                "max_partitions, max_contributions_per_partition and max_contributions need an "
                "identifier: under "
                "symmetric_distance() each record is its own individual (one group, one row); "
                "use symmetric_id_distance(identifier) to bound individuals with several rows"
            )
    else:
        raise MetricMismatch(symmetric_distance(), input_metric, "make_partition_by")
    ident = getattr(input_metric, "identifier", None)
    # a group's rows are rows of the input: its declared columns hold for every group
    out_domain = PartitionDomain(
        by_t, key_set, DataFrameDomain(input_domain.K, input_domain.columns)
    )

    def function(frame: Any) -> Partitioned:
        lazy = backends.of_frame(frame)
        if lazy is not None:
            if bounds is not None or key_set is None:
                return _partition_numpy(lazy.frame_to_dict(frame), by_t, key_set, ident, bounds)
            for b in by_t:
                if b not in frame.columns:
                    raise FailedFunction(f"the dataframe has no column {b!r}")
            return Partitioned(key_set, None, frame, by_t)
        return _partition_numpy(frame, by_t, key_set, ident, bounds)

    if bounds is None:

        def stability_map(d_in: int) -> Triple:
            return d_in, d_in, d_in
    else:
        k, m, c = bounds.max_partitions, bounds.max_per_partition, bounds.max_total
        l0, l1, li = (k, k * m, m) if c is None else (min(k, c), min(k * m, c), min(m, c))

        def stability_map(d_in: int) -> Triple:
            return d_in * l0, d_in * l1, d_in * li

    parts = Transformation(
        input_domain, input_metric, out_domain, partition_distance(), function, stability_map
    )
    parts.keeps_cells = True  # a chain declares the groups' column types on its input
    return parts


then_partition_by = then(make_partition_by)


# -- vectorised per-group aggregates ---------------------------------------------------------


def _check_space(name: str, d: Domain[Any], m: Metric[Any]) -> PartitionDomain:
    # compared by name (not class identity), so a re-imported module still matches
    if type(d).__name__ != "PartitionDomain":
        raise DomainMismatch(PartitionDomain(("key",), (), DataFrameDomain()), d, name)
    if type(m).__name__ != "PartitionDistance":
        raise MetricMismatch(partition_distance(), m, name)
    dom = cast(PartitionDomain, d)
    if dom.keys is None:
        raise InvalidParameter(
            f"{name}: the keys are private (make_partition_by(keys=None)); a vector of "
            "aggregates needs public keys; declare keys=[...], or use "
            "make_grouped(..., threshold=...) to release the keys privately"
        )
    return dom


def _norm(name: str, norm: object) -> int:
    if norm not in (1, 2) or isinstance(norm, bool):
        raise InvalidParameter(f"{name}: norm must be 1 or 2, got {norm!r}")
    return 1 if norm == 1 else 2


def _reach(d_in: Triple, norm: int) -> ar.Rational:
    """A bound on ‖(d_g)_g‖_norm for group differences d_g <= l∞, Σ d_g <= l1, at most l0
    non-zero: l1 for norm 1; √min(l1·l∞, l0·l∞²) for norm 2 (returned squared)."""
    l0, l1, li = d_in
    li = min(li, l1)
    if norm == 1:
        return ar.q(min(l1, l0 * li))
    return ar.q(min(l1 * li, l0 * li * li))


def _bincount(codes: npt.NDArray[np.int64], k: int, w: Any = None) -> npt.NDArray[Any]:
    keep = codes >= 0
    if w is None:
        return np.bincount(codes[keep], minlength=k)
    return np.bincount(codes[keep], weights=w[keep], minlength=k)


def _count_partial(pdf: Any, by: tuple[Any, ...], keys: tuple[Any, ...]) -> npt.NDArray[Any]:
    codes, _ = _codes([pdf[b].to_numpy() for b in by], keys)
    return _bincount(codes, len(keys)).astype(np.int64)


def _reduce_lazy(frame: Any, fn: Any, k: int, *args: Any) -> npt.NDArray[Any]:
    """Per-partition partials (vectors of exact integers) of a lazy frame, added exactly by
    the backend that owns it (on the workers, for Dask)."""
    lazy = backends.of_frame(frame)
    assert lazy is not None  # noqa: S101 - codes are None only for a lazy frame
    return lazy.reduce_partitions(frame, fn, k, *args)


@constructor
def make_grouped_count(
    input_domain: Domain[Any], input_metric: Metric[Any], norm: int = 1
) -> Transformation[Partitioned, Vec[int], Triple, int | float]:
    r"""The number of rows of each group: a vector in the order of the public keys.

    Stability map, into ``l1_distance(T=int)`` (``norm=1``) or ``l2_distance(T=float)``
    (``norm=2``), with (l0, l1, l∞) = d_in and l∞′ = min(l∞, l1):
        norm 1:  min(l1, l0·l∞′)
        norm 2:  √min(l1·l∞′, l0·l∞′²)   (rounded up)

    Raises:
        DomainMismatch, MetricMismatch: if the space is not a partition space.
        InvalidParameter: if the keys are private, or ``norm`` is not 1 or 2.

    Proof: docs/proofs/make_grouped_count.md

    >>> import opendp_lite.prelude as dp
    >>> part = dp.t.make_partition_by(dp.dataframe_domain(), dp.symmetric_distance(),
    ...                               by="g", keys=[1, 2, 3])
    >>> t = part >> dp.t.then_grouped_count()
    >>> t({"g": [1, 1, 3, 7]}), t.map(1)
    ([2, 0, 1], 1)
    """
    name = "make_grouped_count"
    dom = _check_space(name, input_domain, input_metric)
    p = _norm(name, norm)
    keys = dom.keys
    assert keys is not None  # noqa: S101 - _check_space refuses private keys

    def function(x: Partitioned) -> npt.NDArray[np.int64]:
        if x.codes is None:
            return np.asarray(_reduce_lazy(x.frame, _count_partial, len(keys), x.by, keys)).astype(
                np.int64
            )
        return _bincount(x.codes, len(keys)).astype(np.int64)

    if p == 1:
        out_metric: Metric[Any] = l1_distance(T=int)

        def stability_map(d_in: Triple) -> int | float:
            return int(_reach(d_in, 1))
    else:
        out_metric = l2_distance(T=float)

        def stability_map(d_in: Triple) -> int | float:
            return ar.sqrt_up(_reach(d_in, 2))

    out_dom: Domain[Any] = vector_domain(atom_domain(T="i64"), size=len(keys))
    return Transformation(input_domain, input_metric, out_dom, out_metric, function, stability_map)


then_grouped_count = then(make_grouped_count)


# grid sums: k = trunc(clamp(x)·2^p), |k| <= 2^46, split as k = hi·2^23 + lo (0 <= lo < 2^23,
# |hi| <= 2^23).  np.bincount adds float64 weights; all partial sums of up to _GCHUNK integers
# of magnitude <= 2^23 stay below 2^53, so every one is exact whatever the order.
_SPLIT = float(1 << 23)
_GCHUNK = 1 << 20


def _grid_group_sums(
    col: npt.NDArray[Any], codes: npt.NDArray[np.int64], k: int, p: int, lo: float, hi: float
) -> list[int]:
    """The exact Σ trunc(clamp(x_i)·2^p) of each group (Python ints)."""
    s_hi = np.zeros(k, dtype=object)
    s_lo = np.zeros(k, dtype=object)
    scale = math.ldexp(1.0, p)
    m = min(len(col), _GCHUNK)
    v, h, low = np.empty(m), np.empty(m), np.empty(m)
    for i in range(0, len(col), _GCHUNK):
        c = codes[i : i + _GCHUNK]
        x = col[i : i + _GCHUNK]
        vb, hb, lb = v[: len(c)], h[: len(c)], low[: len(c)]
        np.clip(x, lo, hi, out=vb, dtype=np.float64)
        if int(c.min(initial=0)) < 0:  # rows outside the keys (or truncated): left out
            keep = c >= 0
            c = c[keep]
            vb, hb, lb = vb[: len(c)], hb[: len(c)], lb[: len(c)]
            vb[:] = np.clip(x[keep], lo, hi, dtype=np.float64)
        np.multiply(vb, scale, out=vb)  # exact: |v·2^p| <= 2^46 (a product below 1 truncates
        np.trunc(vb, out=vb)  # to 0 either way)
        np.multiply(vb, 1.0 / _SPLIT, out=hb)  # exact: scaling an integer by 2^-23
        np.floor(hb, out=hb)
        np.multiply(hb, _SPLIT, out=lb)
        np.subtract(vb, lb, out=lb)  # exact: an integer in [0, 2^23)
        s_hi += np.bincount(c, weights=hb, minlength=k).astype(np.int64).astype(object)
        s_lo += np.bincount(c, weights=lb, minlength=k).astype(np.int64).astype(object)
    return [int(a) * (1 << 23) + int(b) for a, b in zip(s_hi, s_lo, strict=True)]


def _sum_partial(
    pdf: Any,
    by: tuple[Any, ...],
    keys: tuple[Any, ...],
    column: Any,
    p: int,
    lo: float,
    hi: float,
) -> npt.NDArray[Any]:
    codes, _ = _codes([pdf[b].to_numpy() for b in by], keys)
    col = _float_column(pdf[column].to_numpy(), column)
    return np.asarray(_grid_group_sums(col, codes, len(keys), p, lo, hi), dtype=object)


def _float_column(col: Any, column: Any) -> npt.NDArray[np.float64]:
    """The column as f64, row by row; a cell that is not a number (NaN, ``None``, a string,
    a bool) is a missing value and becomes 0 (then clamped like any value).

    Row by row and total: whether the grouped sum releases never depends on a cell, and a
    cell in a row whose key is dropped is never looked at in a way that can raise.
    """
    arr = np.asarray(col)
    if arr.ndim != 1:
        raise NotInDomain(f"column {column!r} must be 1-d, got shape {arr.shape}")
    if arr.dtype.kind in "iu":
        return arr.astype(np.float64)  # row by row, then clamped: any value maps into bounds
    if arr.dtype.kind == "f":
        out = arr.astype(np.float64, copy=False)
        nan = np.isnan(out)
        return np.where(nan, 0.0, out) if nan.any() else out
    return np.array([_float_cell(v) for v in arr.tolist()], dtype=np.float64)


def _float_cell(v: object) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or v != v:
        return 0.0  # missing: not a number
    try:
        return float(v)
    except OverflowError:  # an int beyond f64: its sign's infinity, clamped to a bound
        return math.inf if v > 0 else -math.inf


@constructor
def make_grouped_sum(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    column: Any,
    bounds: tuple[float, float],
    norm: int = 1,
    size_limit: int = 1 << 40,
) -> Transformation[Partitioned, Vec[float], Triple, float]:
    r"""The sum of ``clamp(column, bounds)`` in each group: a vector in the order of the keys.

    Each clamped value is truncated to the grid 2^-p (p keeps 46 bits of M = max(|L|, |U|)),
    each group's grid integers are summed exactly and saturated at ±size_limit·K
    (K = max|k(L)|, |k(U)|), and rounded once to f64.  With M′ = K·2^-p, the rounding relaxation
    r = 2·e(size_limit·M′) (e(c) = 2^-53·c + 2^-1075; 0 when size_limit·K <= 2^53), (l0, l1,
    l∞) = d_in, l∞′ = min(l∞, l1) and g = min(l0, l1) changed groups:

    Stability map, into ``l1_distance(T=float)`` (norm 1) or ``l2_distance(T=float)`` (norm 2),
    rounded up:
        norm 1:  min(l1, l0·l∞′)·M′ + g·r
        norm 2:  √min(l1·l∞′, l0·l∞′²)·M′ + √g·r

    Raises:
        DomainMismatch, MetricMismatch: if the space is not a partition space.
        InvalidParameter: if the keys are private, ``norm`` is not 1 or 2, the bounds are not
            finite and ordered (or max(|L|, |U|) < 2^-950), or
            ``size_limit`` is not a positive int or could overflow f64.
        NotInDomain: at invocation, before any randomness, if the frame has no ``column``.

    A cell of ``column`` that is not a number (NaN, ``None``, a string, a bool) is a missing
    value: it adds clamp(0), like a number would, so one cell never decides whether the
    release raises.

    Proof: docs/proofs/make_grouped_sum.md

    >>> import opendp_lite.prelude as dp
    >>> part = dp.t.make_partition_by(dp.dataframe_domain(), dp.symmetric_distance(),
    ...                               by="g", keys=["a", "b"])
    >>> t = part >> dp.t.then_grouped_sum("x", bounds=(0.0, 10.0))
    >>> t({"g": ["a", "b", "a"], "x": [1.5, 20.0, 2.0]}), round(t.map(1), 6)
    ([3.5, 10.0], 10.002441)
    """
    name = "make_grouped_sum"
    dom = _check_space(name, input_domain, input_metric)
    p_norm = _norm(name, norm)
    keys = dom.keys
    assert keys is not None  # noqa: S101 - _check_space refuses private keys
    b = atom_domain(bounds=bounds, T=float).bounds
    assert b is not None  # noqa: S101 - atom_domain checked the bounds
    lo, hi = float(b[0]), float(b[1])
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise InvalidParameter(f"{name}: bounds must be finite, got {bounds!r}")
    limit = _check_count("size_limit", size_limit)
    mag = max(abs(lo), abs(hi))
    p = grid_shift(mag)
    if p > 1000 or p < -1000:
        raise InvalidParameter(f"{name}: bounds {bounds!r} are too small or too large")
    K = max(abs(grid_k(lo, p)), abs(grid_k(hi, p)))
    c_int = limit * K
    unit = ar.q(2) ** -p
    M = ar.q(K) * unit
    c = ar.q(c_int) * unit
    if ar.up(c + rounding_error(c, "f64")) > 1e307:
        raise InvalidParameter(f"{name}: size_limit·max(|L|, |U|) can overflow f64")
    relax = ar.q(0) if c_int <= 2**53 else 2 * rounding_error(c, "f64", unit)

    def function(x: Partitioned) -> npt.NDArray[np.float64]:
        if x.codes is None:
            frame = x.frame
            if column not in frame.columns:
                raise NotInDomain(f"the dataframe has no column {column!r}")
            sums = list(_reduce_lazy(frame, _sum_partial, len(keys), x.by, keys, column, p, lo, hi))
        else:
            if column not in x.frame:
                raise NotInDomain(f"the dataframe has no column {column!r}")
            col = _float_column(x.frame[column], column)
            sums = _grid_group_sums(col, x.codes, len(keys), p, lo, hi)
        sat = [min(max(int(s), -c_int), c_int) for s in sums]
        return np.array([to_carrier(s, 1, p, "f64") for s in sat], dtype=np.float64)

    if p_norm == 1:

        def stability_map(d_in: Triple) -> float:
            g = min(d_in[0], d_in[1])
            return ar.up(_reach(d_in, 1) * M + g * relax)

        out_metric: Metric[Any] = l1_distance(T=float)
    else:

        def stability_map(d_in: Triple) -> float:
            g = min(d_in[0], d_in[1])
            return ar.add_up(
                ar.mul_up(ar.sqrt_up(_reach(d_in, 2)), ar.up(M)),
                ar.mul_up(ar.sqrt_up(g), ar.up(relax)),
            )

        out_metric = l2_distance(T=float)

    out_dom: Domain[Any] = vector_domain(atom_domain(T=float, nan=False), size=len(keys))
    return Transformation(input_domain, input_metric, out_dom, out_metric, function, stability_map)


then_grouped_sum = then(make_grouped_sum)
