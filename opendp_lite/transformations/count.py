"""Counting: records, distinct records, records by key and by fixed categories.

Counts are integers of carrier ``TO`` (``i32`` by default, as OpenDP) and *saturate* at the
carrier's maximum; a saturating count is still 1-stable, since ``min(·, max)`` is 1-Lipschitz.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, Generic, TypeVar, overload

import numpy as np
import numpy.typing as npt

from .. import _dask
from .._types import Never, Vec, carrier_dtype, carrier_name, int_bounds, is_float, is_int
from ..core import (
    Domain,
    Metric,
    PartialTransformation,
    Transformation,
)
from ..domains import (
    AtomDomain,
    FloatName,
    IntName,
    VectorDomain,
    atom_domain,
    map_domain,
    vector_domain,
)
from ..errors import InvalidParameter, NotImplementedForType, NotInDomain
from ..metrics import (
    InsertDeleteDistance,
    L1Distance,
    L2Distance,
    SymmetricDistance,
    absolute_distance,
    l1_distance,
    l2_distance,
)
from ._aggregate import ThenAggregate, blocks, check_metric

__all__ = [
    "make_count",
    "make_count_by",
    "make_count_by_categories",
    "make_count_distinct",
    "then_count",
    "then_count_by",
    "then_count_by_categories",
    "then_count_distinct",
]

_METRICS = (SymmetricDistance, InsertDeleteDistance)
_TI = TypeVar("_TI")


def _vector(name: str, domain: Domain[Any]) -> VectorDomain[Any]:
    if not isinstance(domain, VectorDomain):
        raise NotImplementedForType(f"{name} needs a vector input_domain, got {domain!r}")
    return domain


def _count_type(name: str, TO: object) -> str:
    T = carrier_name(TO)
    if not (is_int(T) or is_float(T)):
        raise NotImplementedForType(f"{name}: TO must be a numeric type, got {TO!r}")
    return T


def _saturate(n: int, T: str) -> int | float:
    """A count in carrier ``T``: saturating at its maximum (floats hold counts exactly)."""
    if is_float(T):
        return float(n)
    return min(n, int_bounds(T)[1])


def _identity_map(T: str) -> Any:
    if is_float(T):
        return lambda d_in: float(d_in)
    return lambda d_in: d_in


# Typed overloads (no runtime effect), so that mypy infers a chain's carriers (issue 2).
@overload
def make_count(
    input_domain: Domain[_TI], input_metric: Metric[int], TO: type[int] | IntName = "int"
) -> Transformation[_TI, int, int, int]: ...
@overload
def make_count(
    input_domain: Domain[_TI], input_metric: Metric[int], TO: type[float] | FloatName
) -> Transformation[_TI, float, int, float]: ...
@overload
def make_count(
    input_domain: Domain[_TI], input_metric: Metric[int], TO: object
) -> Transformation[_TI, Any, int, Any]: ...
def make_count(
    input_domain: Domain[Any], input_metric: Metric[Any], TO: object = "int"
) -> Transformation[Any, Any, int, Any]:
    r"""Count the records of a vector, as a scalar of type ``TO`` (saturating at its maximum).

    Stability map (symmetric or insert-delete distance): :math:`d_{out} = d_{in}`.

    Raises:
        NotImplementedForType: if the domain is not a vector domain, the metric is not a
            symmetric or insert-delete distance, or ``TO`` is not numeric.

    Proof: docs/proofs/make_count.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
    >>> count = space >> dp.t.then_count()
    >>> count(["a", "b", "c"]), count.map(1), count.output_domain
    (3, 1, AtomDomain(T=i32))
    """
    name = "make_count"
    _vector(name, input_domain)
    check_metric(name, input_metric, _METRICS)
    T = _count_type(name, TO)

    def function(x: npt.NDArray[Any]) -> int | float:
        # a Dask vector is counted on the workers (its lengths may be unknown, and counting
        # runs the lazy membership checks); numpy knows its length
        return _saturate(_dask.length(x) if _dask.is_dask_array(x) else len(x), T)

    return Transformation(
        input_domain,
        input_metric,
        atom_domain(T=T),
        absolute_distance(T=T),
        function,
        _identity_map(T),
    )


_U = TypeVar("_U")
_DU = TypeVar("_DU")
_Q = TypeVar("_Q")
_C = TypeVar("_C")  # the count's carrier
_E = TypeVar("_E")
_DI = TypeVar("_DI")


class _ThenCount(ThenAggregate, Generic[_C]):
    """``then_count(TO)``: at run time a plain partial; for mypy, typed by what it follows.

    ``left >> then_count()`` is typed by ``_after(left)`` (see ``core._Then``): the count of a
    vector keeps the chain's input type.  (``Never`` keeps the untyped partial overload of
    ``Transformation.__rshift__`` from accepting an ill-typed chain as ``Any``.)
    """

    __slots__ = ()

    def _after(
        self, left: Transformation[_TI, Vec[Any], _DI, int]
    ) -> Transformation[_TI, _C, _DI, _C]:
        return left >> self

    @overload
    def __rrshift__(
        self, other: tuple[Domain[Vec[_E]], Metric[int]]
    ) -> Transformation[Vec[_E], _C, int, _C]: ...
    @overload
    def __rrshift__(
        self, other: tuple[Domain[Never], Metric[int]]
    ) -> Transformation[Never, Any, int, Any]: ...
    def __rrshift__(self, other: tuple[Domain[Any], Metric[Any]]) -> Any:
        return super().__rrshift__(other)


@overload
def then_count(TO: type[int] | IntName = "int") -> _ThenCount[int]: ...
@overload
def then_count(TO: type[float] | FloatName) -> _ThenCount[float]: ...
@overload
def then_count(TO: object) -> _ThenCount[Any]: ...
def then_count(TO: object = "int") -> _ThenCount[Any]:
    """Partial of :func:`make_count`: ``space >> then_count()``."""

    def build(d: Domain[Any], m: Metric[Any]) -> Transformation[Any, Any, int, Any]:
        return make_count(d, m, TO)

    return _ThenCount(build)


def _distinct(x: Any) -> int:
    if isinstance(x, np.ndarray) and x.dtype == object:
        return len(set(x.tolist()))
    if isinstance(x, np.ndarray):
        return int(np.unique(x).shape[0])  # NaNs count as one value (numpy's equal_nan)
    return len(_value_counts(x)[0])


def make_count_distinct(
    input_domain: Domain[Any], input_metric: Metric[Any], TO: object = "int"
) -> Transformation[Any, Any, int, Any]:
    r"""Count the distinct values of a vector, as a scalar of type ``TO`` (saturating).

    Stability map (symmetric or insert-delete distance): :math:`d_{out} = d_{in}`.

    Raises:
        NotImplementedForType: if the domain is not a vector domain, the metric is not a
            symmetric or insert-delete distance, or ``TO`` is not numeric.

    Proof: docs/proofs/make_count_distinct.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    >>> t = space >> dp.t.then_count_distinct()
    >>> t([1, 1, 2, 5, 5]), t.map(2)
    (3, 2)
    """
    name = "make_count_distinct"
    _vector(name, input_domain)
    check_metric(name, input_metric, _METRICS)
    T = _count_type(name, TO)

    def function(x: npt.NDArray[Any]) -> int | float:
        return _saturate(_distinct(x), T)

    return Transformation(
        input_domain,
        input_metric,
        atom_domain(T=T),
        absolute_distance(T=T),
        function,
        _identity_map(T),
    )


def then_count_distinct(TO: object = "int") -> PartialTransformation[Any, Any, int, Any]:
    """Partial of :func:`make_count_distinct`."""
    return PartialTransformation(lambda d, m: make_count_distinct(d, m, TO))


def _value_counts(x: Any) -> tuple[list[Any], list[int]]:
    """Distinct values of ``x`` and their counts (vectorised; objects through a dict).

    A lazy array is counted block by block and the counts merged, never materialised whole.
    """
    if not isinstance(x, np.ndarray):
        merged: Counter[Any] = Counter()
        nan = 0
        for b in blocks(x):
            b_keys, b_counts = _value_counts(b)
            for k, c in zip(b_keys, b_counts, strict=True):
                if k != k:  # NaN: one value, as numpy.unique counts it
                    nan += c
                else:
                    merged[k] += c
        out_k, out_c = list(merged), list(merged.values())
        if nan:
            out_k.append(float("nan"))
            out_c.append(nan)
        return out_k, out_c
    if x.dtype == object:
        tally = Counter(x.tolist())  # counted in C (collections._count_elements)
        return list(tally), list(tally.values())
    uniq, n = np.unique(x, return_counts=True)
    return uniq.tolist(), n.tolist()


def make_count_by(
    input_domain: Domain[Any], input_metric: Metric[Any], TV: object = "int"
) -> Transformation[Any, Any, int, Any]:
    r"""Count the records of each distinct key, as a map ``key -> count`` of type ``TV``.

    The keys come from the data (so releasing them needs a stability-based mechanism).
    Output metric: ``l1_distance(T=TV)`` on the counts, a key missing on one side counting as 0
    (OpenDP 0.16 uses its ``L01InfDistance``, which opendp_lite does not have).
    Stability map: :math:`d_{out} = d_{in}` (each added or removed record moves one count by 1).

    Raises:
        NotImplementedForType: if the domain is not a vector of atoms, the metric is not a
            symmetric or insert-delete distance, or ``TV`` is not numeric.

    Proof: docs/proofs/make_count_by.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
    >>> t = space >> dp.t.then_count_by()
    >>> t(["a", "b", "a"]), t.map(1)
    ({'a': 2, 'b': 1}, 1)
    """
    name = "make_count_by"
    vec = _vector(name, input_domain)
    check_metric(name, input_metric, _METRICS)
    if not isinstance(vec.element_domain, AtomDomain):
        raise NotImplementedForType(f"{name} needs atomic keys, got {vec.element_domain!r}")
    key_T = vec.element_domain.T
    T = _count_type(name, TV)

    def function(x: npt.NDArray[Any]) -> dict[Any, Any]:
        keys, counts = _value_counts(x)
        return {k: _saturate(c, T) for k, c in zip(keys, counts, strict=True)}

    return Transformation(
        input_domain,
        input_metric,
        map_domain(atom_domain(T=key_T), atom_domain(T=T)),
        l1_distance(T=T),
        function,
        _identity_map(T),
    )


def then_count_by(TV: object = "int") -> PartialTransformation[Any, Any, int, Any]:
    """Partial of :func:`make_count_by`."""
    return PartialTransformation(lambda d, m: make_count_by(d, m, TV))


def _output_metric(name: str, MO: object, T: str) -> Metric[Any]:
    if isinstance(MO, (L1Distance, L2Distance)):
        return l1_distance(T=T) if isinstance(MO, L1Distance) else l2_distance(T=T)
    text = str(MO).replace(" ", "")
    if text.startswith("L1Distance"):
        return l1_distance(T=T)
    if text.startswith("L2Distance"):
        return l2_distance(T=T)
    raise NotImplementedForType(f"{name}: MO must be L1Distance<T> or L2Distance<T>, got {MO!r}")


def make_count_by_categories(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    categories: Sequence[Any],
    null_category: bool = True,
    MO: object = "L1Distance<int>",
    TOA: object = "int",
) -> Transformation[Any, Any, int, Any]:
    r"""Count the records equal to each of the public ``categories`` (+ one "other" count).

    The output is a vector of ``len(categories)`` counts (plus, if ``null_category``, a last
    count of the records in no category), in the order given.  The categories are fixed at
    construction and never read from the data.  Counts saturate at the maximum of ``TOA``.
    Stability map (symmetric or insert-delete distance; L1 or L2 output):
    :math:`d_{out} = d_{in}`.

    Raises:
        InvalidParameter: if the categories repeat or are not members of the element domain.
        NotImplementedForType: if the domain is not a vector of atoms, the metric is not a
            symmetric or insert-delete distance, or MO/TOA are not supported.

    Proof: docs/proofs/make_count_by_categories.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
    >>> t = space >> dp.t.then_count_by_categories(["a", "b"])
    >>> t(["a", "c", "a", "b", "z"]).tolist(), t.map(1)
    ([2, 1, 2], 1)
    """
    name = "make_count_by_categories"
    vec = _vector(name, input_domain)
    check_metric(name, input_metric, _METRICS)
    elem = vec.element_domain
    if not isinstance(elem, AtomDomain):
        raise NotImplementedForType(f"{name} needs atomic elements, got {elem!r}")
    T = carrier_name(TOA)
    if not is_int(T) and not is_float(T):
        raise NotImplementedForType(f"{name}: TOA must be numeric, got {TOA!r}")
    out_metric = _output_metric(name, MO, T)
    cats: list[Any] = []
    for c in categories:
        try:
            cats.append(elem._normalize(c))
        except NotInDomain as e:
            raise InvalidParameter(f"{name}: category {c!r} is not in {elem!r}: {e}") from None
    if len(set(cats)) != len(cats):
        raise InvalidParameter(f"{name}: categories must be distinct, got {list(categories)!r}")
    index = {c: i for i, c in enumerate(cats)}
    k = len(cats)
    size = k + 1 if null_category else k
    dtype = carrier_dtype(T)

    def function(x: npt.NDArray[Any]) -> npt.NDArray[Any]:
        out = [0] * (k + 1)
        if _dask.is_dask_array(x):
            # counted per block on the workers against the public categories: no value of
            # the data other than these counts ever reaches the driver
            out = [int(c) for c in _dask.reduce_blocks(x, _category_counts, cats)]
        else:
            keys, counts = _value_counts(x)
            for key, c in zip(keys, counts, strict=True):  # one step per distinct value
                out[index.get(key, k)] += c
        vals = [_saturate(c, T) for c in out[:size]]
        return np.asarray(vals, dtype=dtype)

    return Transformation(
        input_domain,
        input_metric,
        vector_domain(atom_domain(T=T), size=size),
        out_metric,
        function,
        _identity_map(T),
    )


def _category_counts(block: npt.NDArray[Any], cats: list[Any]) -> npt.NDArray[np.int64]:
    """Counts of a block in each category (by ``==``), then of the rest (length k+1).

    Runs on a Dask worker for each block; integer blocks with a small range of categories
    take a clip-and-bincount path, others a search in the sorted categories.

    >>> _category_counts(np.array([0, 3, 3, 9], dtype=np.uint64), [3, 0, 5]).tolist()
    [2, 1, 0, 1]
    """
    k = len(cats)
    n = block.shape[0]
    out = np.zeros(k + 1, dtype=np.int64)
    if k == 0:
        out[0] = n
        return out
    kind = block.dtype.kind
    if kind == "b":
        trues = int(np.count_nonzero(block))
        out[:k] = [trues if c else n - trues for c in cats]
    elif kind in "iu" and max(cats) - min(cats) <= 1 << 16:
        # a small range of integer categories: one clip and one bincount
        info = np.iinfo(block.dtype)
        lo_c = min(cats) - 1 if min(cats) > info.min else min(cats)  # bin lo_c: below
        hi_c = max(cats) + 1 if max(cats) < info.max else max(cats)  # bin hi_c: above
        if lo_c == 0 and kind == "u":
            idx = np.minimum(block, block.dtype.type(hi_c))
        else:
            idx = np.clip(block, lo_c, hi_c)
            if kind == "i":
                idx = idx.astype(np.int64)  # then idx − lo_c is in [0, 2^16 + 2]: no overflow
            if lo_c != 0:
                idx -= idx.dtype.type(lo_c)  # unsigned: idx >= lo_c >= 0, no wrap-around
        # 0 <= idx <= 2^16 + 2: reading the bits as intp is exact (and avoids a copy)
        idx = idx.view(np.intp) if idx.dtype.itemsize == np.dtype(np.intp).itemsize else idx
        counts = np.bincount(idx.astype(np.intp, copy=False), minlength=hi_c - lo_c + 1)
        out[:k] = counts[[c - lo_c for c in cats]]
    else:
        c_arr = np.asarray(cats, dtype=block.dtype)
        order = np.argsort(c_arr, kind="stable")
        sorted_c = c_arr[order]
        pos = np.searchsorted(sorted_c, block, side="left")
        hit = pos < k
        hit[hit] = sorted_c[pos[hit]] == block[hit]
        out[:k] = np.bincount(order[pos[hit]], minlength=k)
    out[k] = n - int(out[:k].sum())
    return out


def then_count_by_categories(
    categories: Sequence[Any],
    null_category: bool = True,
    MO: object = "L1Distance<int>",
    TOA: object = "int",
) -> PartialTransformation[Any, Any, int, Any]:
    """Partial of :func:`make_count_by_categories`."""
    return PartialTransformation(
        lambda d, m: make_count_by_categories(d, m, categories, null_category, MO, TOA)
    )
