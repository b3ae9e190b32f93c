"""Lookup and binning, record by record: ``make_identity``, ``make_is_equal``, ``make_find``,
``make_find_bin``, ``make_index``.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, TypeVar, overload

import numpy as np
import numpy.typing as npt

from .. import backends
from .._registry import constructor
from .._spine import into, same
from .._types import Vec, carrier_dtype, carrier_name, is_float
from ..core import Domain, Metric, Transformation
from ..domains import AtomDomain, atom_domain, option_domain
from ..errors import InvalidParameter, NotImplementedForType, NotInDomain
from ._rowwise import row_by_row, vector_element

__all__ = [
    "make_find",
    "make_find_bin",
    "make_identity",
    "make_index",
    "make_is_equal",
    "then_find",
    "then_find_bin",
    "then_identity",
    "then_index",
    "then_is_equal",
]

_TI = TypeVar("_TI")
_C = TypeVar("_C")


@constructor
def make_identity(domain: Domain[Any], metric: Metric[Any]) -> Transformation[Any, Any, Any, Any]:
    r"""The identity on ``(domain, metric)``.

    Stability map: :math:`d_{out} = d_{in}` (for any metric).

    Proof: docs/proofs/make_identity.md

    >>> import opendp_lite.prelude as dp
    >>> ident = dp.t.make_identity(dp.atom_domain(T=int), dp.absolute_distance(T=int))
    >>> ident(3), ident.map(2)
    (3, 2)
    """
    return Transformation(domain, metric, domain, metric, lambda x: x, lambda d_in: d_in)


def _atom(name: str, input_domain: Domain[Any]) -> AtomDomain[Any]:
    elem = vector_element(name, input_domain)
    assert isinstance(elem, AtomDomain)  # noqa: S101 - vector_element returns an atom here
    return elem


def _member(elem: AtomDomain[Any], what: str, value: Any) -> Any:
    try:
        return elem._normalize(value)
    except NotInDomain as e:
        raise InvalidParameter(f"{what} must be a member of {elem!r}, got {value!r}: {e}") from None


@constructor
def make_is_equal(
    input_domain: Domain[Any], input_metric: Metric[Any], value: Any
) -> Transformation[Any, Vec[bool], int, int]:
    r"""Map each element to whether it equals ``value`` (NaN equals nothing).

    Output domain: ``vector_domain(atom_domain(T=bool))``.  Stability map (row by row, any
    dataset metric): :math:`d_{out} = d_{in}`.

    Raises:
        InvalidParameter: if ``value`` has another type than the elements.
        NotImplementedForType: if the input is not a vector of atoms or the metric is not a
            dataset metric.

    Proof: docs/proofs/make_is_equal.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
    >>> (space >> dp.t.then_is_equal("yes"))(["yes", "no"])
    [True, False]
    """
    elem = _atom("make_is_equal", input_domain)
    # the value need not lie within the bounds: only its type must match
    v = _member(atom_domain(T=elem.T, nan=True if is_float(elem.T) else None), "value", value)

    def function(arg: npt.NDArray[Any]) -> npt.NDArray[Any]:
        return np.asarray(np.equal(arg, v), dtype=bool)

    return row_by_row("make_is_equal", input_domain, input_metric, atom_domain(T=bool), function)


def _categories(name: str, elem: AtomDomain[Any], categories: Any) -> list[Any]:
    if not isinstance(categories, list | tuple | np.ndarray):
        raise InvalidParameter(f"{name}: categories must be a list, got {categories!r}")
    cats = [_member(elem, "each category", c) for c in list(categories)]
    if len(set(cats)) != len(cats) or any(isinstance(c, float) and math.isnan(c) for c in cats):
        raise InvalidParameter(f"{name}: categories must be unique and not NaN, got {categories!r}")
    return cats


@constructor
def make_find(
    input_domain: Domain[Any], input_metric: Metric[Any], categories: Any
) -> Transformation[Any, Vec[int | None], int, int]:
    r"""Map each element to its index in ``categories``, or ``None`` if it is not there.

    Output domain: ``vector_domain(option_domain(atom_domain(T="usize")))``.  Stability map
    (row by row, any dataset metric): :math:`d_{out} = d_{in}`.

    Raises:
        InvalidParameter: if the categories are not unique or not of the element type.
        NotImplementedForType: if the input is not a vector of atoms or the metric is not a
            dataset metric.

    Proof: docs/proofs/make_find.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
    >>> (space >> dp.t.then_find(["a", "b"]))(["b", "z", "a"])
    [1, None, 0]
    """
    elem = _atom("make_find", input_domain)
    cats = _categories("make_find", atom_domain(T=elem.T, nan=elem.nan), categories)
    lookup = {c: i for i, c in enumerate(cats)}

    def function(arg: npt.NDArray[Any]) -> npt.NDArray[Any]:
        # the output is an object array on the driver anyway; a lazy (Dask) input is read
        # whole (its chunk lengths may be unknown, and searchsorted does not dispatch on it)
        arg = backends.of(arg).materialize(arg)
        out = np.empty(len(arg), dtype=object)
        if arg.dtype != object and cats:
            # numeric: vectorised by binary search in the sorted categories
            order = np.argsort(np.asarray(cats, dtype=arg.dtype), kind="stable")
            sorted_c = np.asarray(cats, dtype=arg.dtype)[order]
            pos = np.clip(np.searchsorted(sorted_c, arg), 0, len(cats) - 1)
            hit = sorted_c[pos] == arg
            out[:] = np.where(hit, order[pos], -1).tolist()
            out[~hit] = None
        else:
            out[:] = [lookup.get(v) for v in arg.tolist()]
        return out

    out_elem = option_domain(atom_domain(T="usize"))
    return row_by_row("make_find", input_domain, input_metric, out_elem, function)


@constructor
def make_find_bin(
    input_domain: Domain[Any], input_metric: Metric[Any], edges: Any
) -> Transformation[Any, Vec[int], int, int]:
    r"""Map each element to the number of ``edges`` at or below it (its bin index).

    With strictly increasing edges :math:`e_0 < \dots < e_{k-1}`, ``x`` goes to bin
    :math:`\#\{i : e_i \le x\}` in ``0..k`` (NaN goes to bin ``k``).  Output domain:
    ``vector_domain(atom_domain(T="usize"))``.  Stability map (row by row, any dataset
    metric): :math:`d_{out} = d_{in}`.

    Raises:
        InvalidParameter: if the edges are not strictly increasing, are NaN, or are not of the
            element type.
        NotImplementedForType: if the input is not a numeric vector or the metric is not a
            dataset metric.

    Proof: docs/proofs/make_find_bin.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    >>> (space >> dp.t.then_find_bin([0, 10, 20]))([-5, 0, 5, 10, 25])
    [0, 1, 1, 2, 3]
    """
    elem = _atom("make_find_bin", input_domain)
    if elem.T in ("String", "bool"):
        raise NotImplementedForType(f"make_find_bin needs a numeric carrier, got T={elem.T}")
    if not isinstance(edges, list | tuple | np.ndarray):
        raise InvalidParameter(f"make_find_bin: edges must be a list, got {edges!r}")
    checked = [_member(atom_domain(T=elem.T, nan=False), "each edge", e) for e in list(edges)]
    if any(not a < b for a, b in itertools.pairwise(checked)):
        raise InvalidParameter(f"edges must be strictly increasing, got {edges!r}")
    edge_arr = np.asarray(checked, dtype=carrier_dtype(elem.T)).reshape(len(checked))

    def bins(arg: npt.NDArray[Any]) -> npt.NDArray[Any]:
        # side="right" counts edges <= x; numpy sorts NaN last, so NaN lands in bin k
        # the bin indices are >= 0, so reading intp's bits as uint64 is exact (no copy)
        idx = np.searchsorted(edge_arr, arg, side="right")
        return idx.view(np.uint64) if idx.dtype.itemsize == 8 else idx.astype(np.uint64)

    def function(arg: npt.NDArray[Any]) -> npt.NDArray[Any]:
        # per block: searchsorted does not dispatch on its 2nd argument
        out: npt.NDArray[Any] = backends.of(arg).map_rows(arg, bins, np.uint64)
        return out

    return row_by_row("make_find_bin", input_domain, input_metric, atom_domain(T="usize"), function)


# The output carrier is TOA's: null's type when TOA is omitted, else TOA given as a type.
@overload
def make_index(
    input_domain: Domain[_TI],
    input_metric: Metric[int],
    categories: Any,
    null: _C,
    TOA: type[_C] | None = None,
) -> Transformation[_TI, Vec[_C], int, int]: ...
@overload
def make_index(
    input_domain: Domain[_TI], input_metric: Metric[int], categories: Any, null: Any, TOA: object
) -> Transformation[_TI, Any, int, int]: ...
@constructor
def make_index(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    categories: Any,
    null: Any,
    TOA: object = None,
) -> Transformation[Any, Any, int, int]:
    r"""Map each index ``i`` to ``categories[i]``, or to ``null`` when ``i`` is out of range.

    Output domain: ``vector_domain(atom_domain(T=TOA))`` (``TOA`` inferred from ``null`` if
    omitted).  Stability map (row by row, any dataset metric): :math:`d_{out} = d_{in}`.

    Raises:
        InvalidParameter: if a category or ``null`` is not of type ``TOA``.
        NotImplementedForType: if the input is not a vector of unsigned indices or the metric
            is not a dataset metric.

    Proof: docs/proofs/make_index.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T="usize")), dp.symmetric_distance()
    >>> (space >> dp.t.then_index(["a", "b"], "other"))([1, 0, 7])
    ['b', 'a', 'other']
    """
    elem = _atom("make_index", input_domain)
    if not elem.T.startswith("u"):
        raise NotImplementedForType(f"make_index needs unsigned indices, got T={elem.T}")
    if TOA is None:
        TOA = type(null) if isinstance(null, (bool, int, float, str)) else None
        if TOA is None:
            raise InvalidParameter(f"cannot infer TOA from null={null!r}; pass TOA")
    out_elem = atom_domain(T=carrier_name(TOA), nan=True if is_float(carrier_name(TOA)) else None)
    if not isinstance(categories, list | tuple | np.ndarray):
        raise InvalidParameter(f"make_index: categories must be a list, got {categories!r}")
    table = [_member(out_elem, "each category", c) for c in list(categories)]
    table.append(_member(out_elem, "null", null))
    dtype = carrier_dtype(out_elem.T)
    values = np.empty(len(table), dtype=object) if dtype is np.object_ else None
    if values is not None:
        values[:] = table
    else:
        values = np.asarray(table, dtype=dtype)
    k = len(table) - 1

    def function(arg: npt.NDArray[Any]) -> npt.NDArray[Any]:
        out: npt.NDArray[Any] = values[np.minimum(arg, np.uint64(k)).astype(np.intp)]
        return out

    return row_by_row("make_index", input_domain, input_metric, out_elem, function)


then_identity = same(make_identity)


then_is_equal = into(make_is_equal)


then_find = into(make_find)


then_find_bin = into(make_find_bin)


then_index = into(make_index)
