"""Truncation by individual: bound how many rows each person contributes.

Under ``symmetric_id_distance(identifier)`` (or ``change_one_id_distance(identifier)``) an
individual is every row sharing one identifier value; one individual may hold any number of
rows.  :func:`make_truncate_per_id` keeps at most ``k`` rows of each individual, so the rows
that follow are under the row-level ``symmetric_distance()``, and every row-level aggregate
chains after it.  :func:`make_truncate_num_groups` keeps each individual's rows in at most
``k`` of its groups (by the ``by`` columns), still under the identifier distance.

Which rows are kept depends only on the individual's own rows (and, for ``keep="sample"``,
on the library's randomness): never on other individuals' rows, nor on the order of the rows
in the frame (under the symmetric distance a frame and its permutation are at distance 0).
Identifiers match as ``dict`` keys do (``1``, ``1.0`` and ``True`` are one individual, in any
dtype); the rows whose identifier is missing (``None``, NaN) are one individual, as Polars
groups nulls together.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import backends
from .._order import group_ranks, tie_ranks
from .._registry import constructor
from .._spine import then
from .._truncation import keep_first_k as _keep_first_k
from .._truncation import sample_order as _sample_order
from .._types import Vec
from .._validate import check_int
from ..core import Domain, Metric, Transformation
from ..domains import DataFrameDomain, atom_domain, vector_domain
from ..errors import DomainMismatch, FailedFunction, InvalidParameter, MetricMismatch
from ..metrics import (
    ChangeOneIdDistance,
    SymmetricIdDistance,
    symmetric_distance,
    symmetric_id_distance,
)

__all__ = [
    "make_count_per_id",
    "make_truncate_num_groups",
    "make_truncate_per_id",
    "then_count_per_id",
    "then_truncate_num_groups",
    "then_truncate_per_id",
]

_KEEPS = ("sample", "first", "last")


def _id_metric(name: str, metric: Metric[Any]) -> tuple[Any, int]:
    """``(identifier, factor)``: a change of one individual is ``factor`` additions/removals."""
    if isinstance(metric, SymmetricIdDistance):
        return metric.identifier, 1
    if isinstance(metric, ChangeOneIdDistance):
        return metric.identifier, 2
    raise MetricMismatch(symmetric_id_distance("identifier"), metric, name)


def _check_keep(keep: object) -> tuple[str, tuple[Any, ...]]:
    """``("sample"|"first"|"last", ())`` or ``("by", columns)``."""
    if isinstance(keep, str) and keep in _KEEPS:
        return keep, ()
    cols: tuple[Any, ...]
    if isinstance(keep, list | tuple):
        cols = tuple(keep)
    elif isinstance(keep, str | int):
        cols = (keep,)
    else:
        cols = ()
    if not cols:
        raise InvalidParameter(
            f'keep must be "sample", "first", "last" or the column(s) to sort by, got {keep!r}'
        )
    return "by", cols


def _columns_of(frame: Mapping[Any, Any], names: Sequence[Any], what: str) -> None:
    for c in names:
        if c not in frame:
            raise FailedFunction(
                f"the dataframe has no {what} column {c!r}; columns: {list(frame)}"
            )


def _person_codes(frame: Mapping[Any, Any], ident: Any) -> npt.NDArray[np.int64]:
    _columns_of(frame, [ident], "identifier")
    return group_ranks(np.asarray(frame[ident]))  # equal ids (1, 1.0, True): one individual


def _sample_codes(frame: Mapping[Any, Any], ident: Any) -> npt.NDArray[np.int64]:
    """Codes equal exactly for equal identifiers (their order is immaterial to a uniform
    sample): an integer column of range below 2^31 is its own code, offset (no sort);
    else :func:`_person_codes`."""
    _columns_of(frame, [ident], "identifier")
    col = np.asarray(frame[ident])
    if col.dtype.kind in "iu" and len(col):
        lo, hi = int(col.min()), int(col.max())
        if hi - lo < 2**31:
            return (col.astype(np.int64) - lo) if lo else col.astype(np.int64, copy=False)
    return _person_codes(frame, ident)


def _value_order(
    frame: Mapping[Any, Any], pid: npt.NDArray[np.int64], cols: Sequence[Any], descending: bool
) -> npt.NDArray[np.int64]:
    """Rows sorted by individual, then by the values of ``cols`` (then every other column) in
    the total order of ``opendp_lite._order``: the order of two rows depends on those two
    rows only."""
    names = list(cols) + [c for c in frame if c not in cols]
    keys: list[npt.NDArray[np.int64]] = []
    for c in names:
        col = np.asarray(frame[c])
        keys.append(group_ranks(col))
        t = tie_ranks(col)
        if t is not None:
            keys.append(t)
    if descending:
        keys = [-k for k in keys]
    # np.lexsort sorts by the last key first
    return np.lexsort((*reversed(keys), pid)).astype(np.int64)


def truncate_mask(
    frame: Mapping[Any, Any], ident: Any, k: int, keep: object
) -> npt.NDArray[np.bool_]:
    """The rows :func:`make_truncate_per_id` keeps (a boolean mask in the frame's order)."""
    mode, cols = _check_keep(keep)
    if mode == "sample":
        pid = _sample_codes(frame, ident)
        order = _sample_order(pid)
    else:
        pid = _person_codes(frame, ident)
        _columns_of(frame, cols, "sort")
        order = _value_order(frame, pid, cols, descending=mode == "last")
    return _keep_first_k(order, pid, k)


def _to_dict(frame: Any) -> Mapping[Any, Any]:
    lazy = backends.of_frame(frame)
    if lazy is not None:
        # every row of one individual must meet its others; the frame is computed on the
        # driver (see the how-to "many rows per person" for the cost)
        return lazy.frame_to_dict(frame)
    return frame  # type: ignore[no-any-return]


def _filter(frame: Mapping[Any, Any], keep: npt.NDArray[np.bool_]) -> dict[Any, Any]:
    return {c: np.asarray(v)[keep] for c, v in frame.items()}


@constructor
def make_truncate_per_id(
    input_domain: Domain[Any], input_metric: Metric[Any], k: int, keep: object = "sample"
) -> Transformation[Mapping[Any, Any], Mapping[Any, Any], int, int]:
    r"""Keep at most ``k`` rows of each individual (the rows sharing one identifier value).

    ``keep`` chooses which rows: ``"sample"`` a uniformly random subset of ``k`` of the
    individual's rows (all of them if it has at most ``k``), drawn from the library's
    randomness; ``"first"``/``"last"`` its ``k`` smallest/largest rows in the total order of
    ``opendp_lite._order`` (every column's value, column by column, then what tells equal
    values apart); a column name (or a list of them) its ``k`` rows with the smallest values
    of those columns, ties broken by the other columns in the same order.  Never by the
    position of a row in the frame: a frame and its permutation are neighbours at distance 0.
    The rows kept keep their order in the frame.

    Stability map, into ``symmetric_distance()`` (rows):
        symmetric_id_distance(identifier):   d ↦ k·d
        change_one_id_distance(identifier):  d ↦ 2·k·d   (a changed individual is one
        removed and one added)
    exact integers.

    Raises:
        DomainMismatch: if ``input_domain`` is not a ``dataframe_domain``.
        MetricMismatch: unless ``input_metric`` is ``symmetric_id_distance(identifier)`` or
            ``change_one_id_distance(identifier)``.
        InvalidParameter: if ``k`` is not an int >= 1, or ``keep`` is none of the above.
        FailedFunction: at invocation, if the identifier or a sort column is missing (names
            only the column).
        NotInDomain: at invocation, if a column it orders by holds an unhashable cell.

    Proof: docs/proofs/make_truncate_per_id.md

    >>> import opendp_lite.prelude as dp
    >>> t = dp.t.make_truncate_per_id(dp.dataframe_domain(), dp.symmetric_id_distance("id"),
    ...                               k=2, keep="first")
    >>> out = t({"id": [1, 1, 1, 2], "x": [3.0, 1.0, 2.0, 9.0]})
    >>> out["id"].tolist(), out["x"].tolist(), t.map(3)
    ([1, 1, 2], [1.0, 2.0, 9.0], 6)
    """
    if not isinstance(input_domain, DataFrameDomain):
        raise DomainMismatch(DataFrameDomain("String"), input_domain, "make_truncate_per_id")
    ident, factor = _id_metric("make_truncate_per_id", input_metric)
    kk = check_int("k", k, min=1)
    _check_keep(keep)
    out_domain = DataFrameDomain(input_domain.K, input_domain.columns)

    def function(frame: Any) -> dict[Any, Any]:
        data = _to_dict(frame)
        return _filter(data, truncate_mask(data, ident, kk, keep))

    t: Transformation[Mapping[Any, Any], Mapping[Any, Any], int, int] = Transformation(
        input_domain,
        input_metric,
        out_domain,
        symmetric_distance(),
        function,
        lambda d_in: factor * kk * d_in,
    )
    t.keeps_cells = True  # rows of the input: the declared column types still hold
    return t


then_truncate_per_id = then(make_truncate_per_id)


@constructor
def make_truncate_num_groups(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    by: Any,
    k: int,
    keep: object = "sample",
) -> Transformation[Mapping[Any, Any], Mapping[Any, Any], int, int]:
    r"""Keep each individual's rows in at most ``k`` of its groups (by the ``by`` columns).

    An individual's groups are the distinct values of the ``by`` columns among its rows (a
    missing cell is a value).  ``keep="sample"`` keeps ``k`` of them chosen uniformly at
    random from the library's randomness; ``"first"``/``"last"`` its ``k`` smallest/largest
    group keys in the total order of ``opendp_lite._order``.  Every row of a kept group is
    kept.  The output is still measured by individuals (the identifier column is kept), so
    it chains into :func:`make_truncate_per_id` or ``make_partition_by``.

    Stability map, into the input metric: d ↦ d (an individual's rows are a function of its
    own rows: truncation never makes two individuals differ that did not).

    Raises:
        DomainMismatch: if ``input_domain`` is not a ``dataframe_domain``.
        MetricMismatch: unless ``input_metric`` is ``symmetric_id_distance(identifier)`` or
            ``change_one_id_distance(identifier)``.
        InvalidParameter: if ``by`` is empty or names the identifier, ``k`` is not an int
            >= 1, or ``keep`` is not ``"sample"``, ``"first"`` or ``"last"``.
        FailedFunction: at invocation, if a ``by`` or identifier column is missing.

    Proof: docs/proofs/make_truncate_num_groups.md

    >>> import opendp_lite.prelude as dp
    >>> t = dp.t.make_truncate_num_groups(dp.dataframe_domain(), dp.symmetric_id_distance("id"),
    ...                                   by="g", k=1, keep="first")
    >>> t({"id": [1, 1, 1, 2], "g": ["b", "a", "b", "b"]})["g"].tolist(), t.map(1)
    (['a', 'b'], 1)
    """
    if not isinstance(input_domain, DataFrameDomain):
        raise DomainMismatch(DataFrameDomain("String"), input_domain, "make_truncate_num_groups")
    ident, _ = _id_metric("make_truncate_num_groups", input_metric)
    by_t = tuple(by) if isinstance(by, list | tuple) else (by,)
    if not by_t:
        raise InvalidParameter("by must name at least one column, got []")
    if ident in by_t:
        raise InvalidParameter(f"by must not include the identifier {ident!r}")
    kk = check_int("k", k, min=1)
    if not (isinstance(keep, str) and keep in _KEEPS):
        raise InvalidParameter(f'keep must be "sample", "first" or "last", got {keep!r}')

    def function(frame: Any) -> dict[Any, Any]:
        data = _to_dict(frame)
        pid = _person_codes(data, ident)
        _columns_of(data, by_t, "by")
        n = len(pid)
        # one code per (individual, group): ranks of the by values, a function of each value
        parts = [pid] + [group_ranks(np.asarray(data[b])) for b in by_t]
        if n:
            _, pg = np.unique(np.stack(parts, axis=1), axis=0, return_inverse=True)
            pg = np.asarray(pg, dtype=np.int64).reshape(-1)
        else:
            pg = np.zeros(0, dtype=np.int64)
        # one representative row per (individual, group) pair, in pair order (which sorts by
        # individual first, then by the groups' ranks)
        n_pairs = int(pg.max()) + 1 if n else 0
        first = np.full(n_pairs, n, dtype=np.int64)
        np.minimum.at(first, pg, np.arange(n))
        pair_pid = pid[first] if n else pid
        if keep == "sample":
            order = _sample_order(pair_pid)
        else:
            order = np.arange(n_pairs, dtype=np.int64)  # pairs sort by individual, then group
            if keep == "last":
                pos = np.arange(n_pairs)
                order = np.lexsort((-pos, pair_pid)).astype(np.int64)
        kept_pair = _keep_first_k(order, pair_pid, kk)
        return _filter(data, kept_pair[pg] if n else np.zeros(0, dtype=bool))

    t: Transformation[Mapping[Any, Any], Mapping[Any, Any], int, int] = Transformation(
        input_domain,
        input_metric,
        DataFrameDomain(input_domain.K, input_domain.columns),
        input_metric,
        function,
        lambda d_in: d_in,
    )
    t.keeps_cells = True
    return t


then_truncate_num_groups = then(make_truncate_num_groups)


@constructor
def make_count_per_id(
    input_domain: Domain[Any], input_metric: Metric[Any]
) -> Transformation[Mapping[Any, Any], Vec[int], int, int]:
    r"""The number of rows of each individual: one count per identifier value, a vector.

    The counts come in the order of the identifiers in ``opendp_lite._order`` (a vector under
    the symmetric distance, whose order is immaterial); the rows with a missing identifier are
    one individual.  A DP quantile of this vector suggests a truncation bound ``k`` for
    :func:`make_truncate_per_id` (``dp.suggest_max_rows_per_id``).

    Stability map, into ``symmetric_distance()`` (one count per individual):
        symmetric_id_distance(identifier):   d ↦ d
        change_one_id_distance(identifier):  d ↦ 2·d   (a changed count is one removed and
        one added)

    Raises:
        DomainMismatch: if ``input_domain`` is not a ``dataframe_domain``.
        MetricMismatch: unless ``input_metric`` is ``symmetric_id_distance(identifier)`` or
            ``change_one_id_distance(identifier)``.
        FailedFunction: at invocation, if the identifier column is missing.

    Proof: docs/proofs/make_count_per_id.md

    >>> import opendp_lite.prelude as dp
    >>> t = dp.t.make_count_per_id(dp.dataframe_domain(), dp.symmetric_id_distance("id"))
    >>> list(t({"id": ["a", "b", "a", None, "a"]})), t.map(1)
    ([3, 1, 1], 1)
    """
    if not isinstance(input_domain, DataFrameDomain):
        raise DomainMismatch(DataFrameDomain("String"), input_domain, "make_count_per_id")
    ident, factor = _id_metric("make_count_per_id", input_metric)

    def function(frame: Any) -> npt.NDArray[np.int64]:
        data = _to_dict(frame)
        pid = _person_codes(data, ident)
        return np.bincount(pid).astype(np.int64) if len(pid) else np.zeros(0, np.int64)

    return Transformation(
        input_domain,
        input_metric,
        vector_domain(atom_domain(T="i64")),
        symmetric_distance(),
        function,
        lambda d_in: factor * d_in,
    )


then_count_per_id = then(make_count_per_id)
