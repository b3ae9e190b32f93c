"""Counting: records, distinct records, records by key and by fixed categories.

Counts are integers of carrier ``TO`` (``i32`` by default, as OpenDP) and *saturate* at the
carrier's maximum; a saturating count is still 1-stable, since ``min(·, max)`` is 1-Lipschitz.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

import numpy as np
import numpy.typing as npt

from .. import backends
from .._registry import constructor
from .._spine import into, typed_as
from .._types import Vec, carrier_dtype, carrier_name, int_bounds, is_float, is_int
from ..core import (
    Domain,
    Metric,
    Transformation,
)
from ..domains import (
    AtomDomain,
    CategoricalDomain,
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
    l01inf_distance,
    l1_distance,
    l2_distance,
)
from ._aggregate import blocks, check_metric

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


if TYPE_CHECKING:
    # The carrier table of the counts (make_count, make_count_distinct), written once: the
    # output is an int (TO an integer type, the default) or a float; the input carrier is kept.
    # An overloaded function type, so the partials (then_count, ...) keep the overloads.

    @overload
    def _count_table(
        input_domain: Domain[_TI], input_metric: Metric[int], TO: type[int] | IntName = ...
    ) -> Transformation[_TI, int, int, int]: ...
    @overload
    def _count_table(
        input_domain: Domain[_TI], input_metric: Metric[int], TO: type[float] | FloatName
    ) -> Transformation[_TI, float, int, float]: ...
    @overload
    def _count_table(
        input_domain: Domain[_TI], input_metric: Metric[int], TO: object
    ) -> Transformation[_TI, Any, int, Any]: ...
    def _count_table(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError  # the table's type only, never called

else:
    _count_table = None


def _vector(name: str, domain: Domain[Any]) -> VectorDomain[Any]:
    if not isinstance(domain, VectorDomain):
        raise NotImplementedForType(f"{name} needs a vector input_domain, got {domain!r}")
    return domain


def _count_type(name: str, TO: object) -> str:
    T = carrier_name(TO)
    if not (is_int(T) or is_float(T)):
        raise NotImplementedForType(f"{name}: TO must be a numeric type, got {TO!r}")
    return T


#: The largest count a float carrier holds with every smaller integer: 2^(mantissa bits + 1).
#: Above it neighbouring counts can round apart by more than one (f32: 2^24 + 1 rounds down,
#: 2^24 + 2 does not), so float counts saturate there, which keeps them 1-stable.
_FLOAT_COUNT_MAX = {"f32": 2**24, "f64": 2**53}


def _count_max(T: str) -> int:
    """The largest count of carrier ``T`` below which every integer is exact."""
    return _FLOAT_COUNT_MAX[T] if is_float(T) else int_bounds(T)[1]


def _saturate(n: int, T: str) -> int | float:
    """A count in carrier ``T``: saturating at :func:`_count_max` (``min`` is 1-Lipschitz)."""
    return _saturating(T)(n)


def _saturating(T: str) -> Callable[[int], int | float]:
    """:func:`_saturate` for carrier ``T``, with its maximum looked up once."""
    top = _count_max(T)
    if is_float(T):
        return lambda n: float(min(n, top))
    return lambda n: min(n, top)


def _identity_map(T: str) -> Any:
    if is_float(T):
        return lambda d_in: float(d_in)
    return lambda d_in: d_in


# Typed overloads (no runtime effect), so that mypy infers a chain's carriers.
@typed_as(_count_table)
@constructor
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
        return _saturate(backends.of(x).length(x), T)

    return Transformation(
        input_domain,
        input_metric,
        atom_domain(T=T, nan=False),
        absolute_distance(T=T),
        function,
        _identity_map(T),
    )


then_count = into(make_count)


def _distinct(x: Any) -> int:
    if isinstance(x, np.ndarray) and x.dtype == object:
        return len(set(x.tolist()))
    if isinstance(x, np.ndarray) and x.dtype.kind in "iub" and x.shape[0]:
        return len(_int_value_counts(x)[0])
    if isinstance(x, np.ndarray):
        return int(np.unique(x).shape[0])  # NaNs count as one value (numpy's equal_nan)
    return len(_value_counts(x)[0])


@typed_as(_count_table)
@constructor
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
        atom_domain(T=T, nan=False),
        absolute_distance(T=T),
        function,
        _identity_map(T),
    )


then_count_distinct = into(make_count_distinct)


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
    if x.dtype.kind in "iub" and x.shape[0]:
        return _int_value_counts(x)
    uniq, n = np.unique(x, return_counts=True)
    return uniq.tolist(), n.tolist()


def _int_value_counts(x: npt.NDArray[Any]) -> tuple[list[Any], list[int]]:
    """``np.unique(x, return_counts=True)`` (as lists) for a non-empty integer or bool array.

    Counted with one ``bincount`` of ``x − min`` when the range is at most ``2n + 2^16``
    (linear time, memory ``O(n)``); a wider range is sorted.

    >>> _int_value_counts(np.array([5, -2, 5, 3], dtype=np.int8))
    ([-2, 3, 5], [1, 1, 2])
    >>> _int_value_counts(np.array([True, True]))
    ([True], [2])
    """
    if x.dtype.kind == "b":
        trues = int(np.count_nonzero(x))
        pairs = [(False, x.shape[0] - trues), (True, trues)]
        return [k for k, c in pairs if c], [c for _, c in pairs if c]
    lo, hi = _min_max(x)
    span = hi - lo
    if span > 2 * x.shape[0] + (1 << 16):
        uniq, n = np.unique(x, return_counts=True)
        return uniq.tolist(), n.tolist()
    counts = _span_counts(x, lo, span)[: span + 1]
    present = np.flatnonzero(counts)
    return [lo + i for i in present.tolist()], counts[present].tolist()


@constructor
def make_count_by(
    input_domain: Domain[Any], input_metric: Metric[Any], TV: object = "int"
) -> Transformation[Any, Any, int, Any]:
    r"""Count the records of each distinct key, as a map ``key -> count`` of type ``TV``.

    The keys come from the data (so releasing them needs a stability-based mechanism such as
    ``then_laplace_threshold``).  Output metric, as in OpenDP 0.16:
    ``l01inf_distance(absolute_distance(T=TV))``, a key missing on one side counting as 0.
    Stability map: :math:`d_{out} = (d_{in}, d_{in}, d_{in})` (each added or removed record
    moves one count by 1: at most d_in keys change, by d_in in total and at most).

    Raises:
        NotImplementedForType: if the domain is not a vector of atoms, the metric is not a
            symmetric or insert-delete distance, or ``TV`` is not numeric.

    Proof: docs/proofs/make_count_by.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
    >>> t = space >> dp.t.then_count_by()
    >>> t(["a", "b", "a"]), t.map(1)
    ({'a': 2, 'b': 1}, (1, 1, 1))
    """
    name = "make_count_by"
    vec = _vector(name, input_domain)
    check_metric(name, input_metric, _METRICS)
    if not isinstance(vec.element_domain, (AtomDomain, CategoricalDomain)):
        raise NotImplementedForType(f"{name} needs atomic keys, got {vec.element_domain!r}")
    key_T = vec.element_domain.T
    key_nan = bool(getattr(vec.element_domain, "nan", False))  # NaNs count as one key
    T = _count_type(name, TV)

    def function(x: npt.NDArray[Any]) -> dict[Any, Any]:
        keys, counts = _value_counts(x)
        sat = _saturating(T)
        return {k: sat(c) for k, c in zip(keys, counts, strict=True)}

    return Transformation(
        input_domain,
        input_metric,
        map_domain(atom_domain(T=key_T, nan=key_nan), atom_domain(T=T, nan=False)),
        l01inf_distance(absolute_distance(T=T)),
        function,
        _triple_map(T),
    )


def _triple_map(T: str) -> Any:
    one = _identity_map(T)
    return lambda d_in: (d_in, one(d_in), one(d_in))


then_count_by = into(make_count_by)


def _output_metric(name: str, MO: object, T: str) -> Metric[Any]:
    """The output metric MO names: ``L1Distance<Q>`` or ``L2Distance<Q>`` (a descriptor such as
    ``dp.L1Distance[int]``, its string, or a metric); its distance type is ``Q`` as in OpenDP,
    or the counts' type ``T`` when MO names none."""
    if isinstance(MO, (L1Distance, L2Distance)):
        return MO
    text = str(MO).replace(" ", "")
    for prefix, make in (("L1Distance", l1_distance), ("L2Distance", l2_distance)):
        if text == prefix or (text.startswith(prefix + "<") and text.endswith(">")):
            arg = text[len(prefix) + 1 : -1]
            try:
                Q = carrier_name(arg) if arg else T
            except (NotImplementedForType, TypeError, ValueError):
                Q = ""
            if not (is_int(Q) or is_float(Q)):
                raise NotImplementedForType(
                    f"{name}: the distance type of MO must be numeric, got {MO!r}"
                )
            return make(T=Q)
    raise NotImplementedForType(f"{name}: MO must be L1Distance<Q> or L2Distance<Q>, got {MO!r}")


# The counts' carrier is TOA's; the output distance type is MO's Q (int by default).
_IntMO = Literal["L1Distance<int>", "L2Distance<int>"]


@overload
def make_count_by_categories(
    input_domain: Domain[_TI],
    input_metric: Metric[int],
    categories: Sequence[Any],
    null_category: bool = True,
    MO: _IntMO = "L1Distance<int>",
    TOA: type[int] | IntName = "int",
) -> Transformation[_TI, Vec[int], int, int]: ...
@overload
def make_count_by_categories(
    input_domain: Domain[_TI],
    input_metric: Metric[int],
    categories: Sequence[Any],
    null_category: bool = ...,
    MO: object = ...,
    TOA: type[int] | IntName = ...,
) -> Transformation[_TI, Vec[int], int, Any]: ...
@overload
def make_count_by_categories(
    input_domain: Domain[_TI],
    input_metric: Metric[int],
    categories: Sequence[Any],
    null_category: bool = ...,
    MO: object = ...,
    TOA: type[float] | FloatName = ...,
) -> Transformation[_TI, Vec[float], int, Any]: ...
@overload
def make_count_by_categories(
    input_domain: Domain[_TI],
    input_metric: Metric[int],
    categories: Sequence[Any],
    null_category: bool = ...,
    MO: object = ...,
    TOA: object = ...,
) -> Transformation[_TI, Any, int, Any]: ...
@constructor
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

    ``MO`` is ``L1Distance<Q>`` or ``L2Distance<Q>``, spelled as in OpenDP (``dp.L1Distance[int]``,
    ``"L1Distance<f64>"``); as there, ``Q`` is the type of the output distance, whatever ``TOA``.

    Raises:
        InvalidParameter: if the categories repeat or are not members of the element domain.
        NotImplementedForType: if the domain is not a vector of atoms, the metric is not a
            symmetric or insert-delete distance, or MO/TOA are not supported.

    Proof: docs/proofs/make_count_by_categories.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
    >>> t = space >> dp.t.then_count_by_categories(["a", "b"])
    >>> t(["a", "c", "a", "b", "z"]), t.map(1)
    ([2, 1, 2], 1)
    """
    name = "make_count_by_categories"
    vec = _vector(name, input_domain)
    check_metric(name, input_metric, _METRICS)
    elem = vec.element_domain
    if not isinstance(elem, (AtomDomain, CategoricalDomain)):
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
    k = len(cats)
    size = k + 1 if null_category else k
    dtype = carrier_dtype(T)
    top = _count_max(T)

    def function(x: npt.NDArray[Any]) -> npt.NDArray[Any]:
        out: npt.NDArray[np.int64]
        # counted block by block (on the workers, for Dask) against the public categories:
        # no value of the data other than these counts ever reaches the driver, and a lazy
        # vector is never materialised whole
        parts = backends.of(x).reduce_blocks(x, _category_counts, cats)
        out = np.asarray(parts, dtype=np.int64)
        if top < 2**63 - 1:  # counts are int64 (< 2^63): saturate where T stops being exact
            out = np.minimum(out, top)
        if is_float(T):  # as float(count) then T, like a scalar count
            out = out.astype(np.float64)
        counts: npt.NDArray[Any] = out[:size].astype(dtype)  # exact: each count now fits T
        return counts

    return Transformation(
        input_domain,
        input_metric,
        vector_domain(atom_domain(T=T, nan=False), size=size),
        out_metric,
        function,
        _identity_map(out_metric.distance_type),
    )


#: Values handled at a time by the numpy counting loops (1 MiB of int64 indices: in cache).
_STEP = 1 << 17
#: Integer categories spanning at most this many values are counted with one ``bincount``.
_MAX_SPAN = 1 << 16
#: Up to this many categories, other numeric values are compared with each category in turn.
_MAX_EQ = 32


def _category_counts(block: npt.NDArray[Any], cats: list[Any]) -> npt.NDArray[np.int64]:
    """Counts of a block in each category (by ``==``), then of the rest (length k+1).

    Runs on each numpy vector (or block of a lazy one) and on each Dask block on the workers.
    Linear time, memory bounded by a few cache-sized pieces: bools are counted with one
    ``count_nonzero``, strings by hashing (``Counter``), integers whose categories span a
    small range with a wrap-around shift and one ``bincount`` per piece, other numbers with
    one comparison per category (few categories) or a search in the sorted categories.  A
    value equal to no category (NaN included, as ``NaN != NaN``) counts in the last entry.

    >>> _category_counts(np.array([0, 3, 3, 9], dtype=np.uint64), [3, 0, 5]).tolist()
    [2, 1, 0, 1]
    >>> _category_counts(np.array([1.5, np.nan, -0.0]), [0.0, np.nan]).tolist()
    [1, 0, 2]
    """
    k = len(cats)
    n = block.shape[0]
    out = np.zeros(k + 1, dtype=np.int64)
    kind = block.dtype.kind
    if k == 0 or n == 0:
        pass
    elif kind == "b":
        trues = int(np.count_nonzero(block))
        out[:k] = [trues if c else n - trues for c in cats]
    elif kind == "O":
        tally = Counter(block.tolist())  # hashed in C; the categories are then looked up
        out[:k] = [tally.get(c, 0) for c in cats]
    elif kind in "iu" and max(cats) - min(cats) <= _MAX_SPAN:
        lo = min(cats)
        span_counts = _span_counts(block, lo, max(cats) - lo)
        out[:k] = span_counts[[c - lo for c in cats]]
    elif k <= _MAX_EQ:
        out[:k] = _equal_counts(block, cats)
    else:
        out[:k] = _sorted_counts(block, cats)
    out[k] = n - int(out[:k].sum())
    return out


def _min_max(x: npt.NDArray[Any]) -> tuple[int, int]:
    """``(min(x), max(x))`` of a non-empty integer array, reading it once (piece by piece)."""
    lows = []
    highs = []
    for i in range(0, x.shape[0], _STEP):
        piece = x[i : i + _STEP]
        lows.append(int(piece.min()))
        highs.append(int(piece.max()))
    return min(lows), max(highs)


def _span_counts(x: npt.NDArray[Any], lo: int, span: int) -> npt.NDArray[np.int64]:
    """``c[j] = #{x_i = lo + j}`` for ``0 <= j <= span``, then ``c[span+1]`` = the rest.

    ``lo`` and ``lo + span`` are values of ``x``'s integer dtype and ``span < 2^62``.  Each
    piece is shifted to ``d = x − lo``: exactly in int64 for dtypes narrower than 64 bits;
    modulo 2^64 for 64-bit ones, where ``d mod 2^64 <= span`` iff ``lo <= x <= lo + span``
    (a wrapped difference is at least ``2^64 − (lo − min(dtype))``, which exceeds ``span``
    because ``lo + span <= max(dtype)``).  Read as unsigned, every value outside the range is
    then above ``span`` and is capped at ``span + 1``, and one ``bincount`` counts the piece.

    >>> _span_counts(np.array([-128, 127, 0, 1, -1], dtype=np.int8), -1, 2).tolist()
    [1, 1, 1, 2]
    >>> big = np.array([2**63 - 1, -(2**63), 5], dtype=np.int64)
    >>> _span_counts(big, 2**63 - 2, 1).tolist()
    [0, 1, 2]
    """
    n = x.shape[0]
    counts = np.zeros(span + 2, dtype=np.int64)
    if n == 0:
        return counts
    # pieces of at least 4 values per bin, so that each bincount's array of span + 2 counts
    # costs little next to the piece (a span comparable to n takes one piece)
    step = max(_STEP, 4 * (span + 2))
    buf = np.empty(min(n, step), dtype=np.uint64)
    top = np.uint64(span + 1)
    wide = x.dtype.itemsize == 8
    src = x.view(np.uint64) if wide else x
    shift = np.uint64(lo % 2**64)
    for i in range(0, n, step):
        piece = src[i : i + step]
        b = buf[: piece.shape[0]]
        if not wide:
            np.subtract(piece, lo, out=b.view(np.int64), dtype=np.int64)  # exact
            np.minimum(b, top, out=b)
        elif lo != 0:
            np.subtract(piece, shift, out=b)  # modulo 2^64
            np.minimum(b, top, out=b)
        else:
            np.minimum(piece, top, out=b)
        # every entry is now <= span + 1 < 2^63: reading the bits as intp is exact
        counts += np.bincount(b.view(np.intp), minlength=span + 2)
    return counts


def _equal_counts(x: npt.NDArray[Any], cats: list[Any]) -> npt.NDArray[np.int64]:
    """``#{x_i == c}`` for each category ``c`` (a value of ``x``'s dtype), piece by piece."""
    c_arr = np.asarray(cats, dtype=x.dtype)
    counts = np.zeros(len(cats), dtype=np.int64)
    buf = np.empty(min(x.shape[0], _STEP), dtype=np.bool_)
    for i in range(0, x.shape[0], _STEP):
        piece = x[i : i + _STEP]
        b = buf[: piece.shape[0]]
        for j in range(len(cats)):
            np.equal(piece, c_arr[j], out=b)
            counts[j] += np.count_nonzero(b)
    return counts


def _sorted_counts(x: npt.NDArray[Any], cats: list[Any]) -> npt.NDArray[np.int64]:
    """``#{x_i == c}`` for each category ``c``, by binary search in the sorted categories."""
    k = len(cats)
    c_arr = np.asarray(cats, dtype=x.dtype)
    order = np.argsort(c_arr, kind="stable")  # NaN last, as searchsorted expects
    sorted_c = c_arr[order]
    counts = np.zeros(k + 1, dtype=np.int64)
    for i in range(0, x.shape[0], _STEP):
        piece = x[i : i + _STEP]
        pos = np.searchsorted(sorted_c, piece, side="left")
        np.minimum(pos, k - 1, out=pos)
        pos[sorted_c[pos] != piece] = k  # the first category >= x is not x: no category
        counts += np.bincount(pos, minlength=k + 1)
    out = np.empty(k, dtype=np.int64)
    out[order] = counts[:k]
    return out


then_count_by_categories = into(make_count_by_categories)
