"""Shared checks for the row-by-row transformations of part A (private).

A row-by-row transformation applies one function to each record independently, so a record
added, removed or changed in the input is a record added, removed or changed in the output:
under every dataset metric the stability map is ``d_out = d_in``.  The backend-specific code
(numpy here, any array library implementing the numpy API later) stays in the functions that
call these helpers, written against ``numpy`` functions that dispatch on the array type.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from .._validate import check_metric  # re-exported for the families
from ..core import Domain, Metric, Transformation
from ..domains import AtomDomain, OptionDomain, VectorDomain, vector_domain
from ..errors import InvalidParameter, NotImplementedForType
from ..metrics import (
    ChangeOneDistance,
    HammingDistance,
    InsertDeleteDistance,
    SymmetricDistance,
)
from ..samplers.rng import fill_uint64

__all__ = [
    "DATASET_METRICS",
    "SIZE_CHANGING_METRICS",
    "check_metric",
    "row_by_row",
    "uniform_permutation",
    "uniform_prefix",
    "vector_element",
]

#: Metrics under which a row-by-row map is 1-stable (each counts record edits).
DATASET_METRICS = (SymmetricDistance, InsertDeleteDistance, ChangeOneDistance, HammingDistance)
#: Metrics that allow the number of records to change (for filters such as drop_null).
SIZE_CHANGING_METRICS = (SymmetricDistance, InsertDeleteDistance)


def vector_element(name: str, domain: Domain[Any], *, option: bool = False) -> Domain[Any]:
    """The element domain of a vector domain of atoms (or of options of atoms if ``option``)."""
    if isinstance(domain, VectorDomain):
        elem = domain.element_domain
        if isinstance(elem, AtomDomain):
            return elem
        if (
            option
            and isinstance(elem, OptionDomain)
            and isinstance(elem.element_domain, AtomDomain)
        ):
            return elem
    want = "vector_domain(atom_domain(T))" + (" or vector_domain(option_domain(...))" * option)
    raise NotImplementedForType(f"{name} needs input_domain = {want}, got {domain!r}")


def row_by_row(
    name: str,
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    output_element: Domain[Any],
    function: Callable[[npt.NDArray[Any]], npt.NDArray[Any]],
) -> Transformation[Any, Any, int, int]:
    """A 1-stable transformation that maps each record independently (size is preserved)."""
    check_metric(name, input_metric, DATASET_METRICS)
    assert isinstance(input_domain, VectorDomain)  # noqa: S101 - callers checked it
    out_domain = vector_domain(output_element, size=input_domain.size)
    return Transformation(
        input_domain, input_metric, out_domain, input_metric, function, _identity_map
    )


def _identity_map(d_in: int) -> int:
    return d_in


def uniform_permutation(n: int) -> npt.NDArray[np.intp]:
    """A uniformly random permutation of ``0..n−1``, vectorised.

    Sorts ``n`` independent uniform 64-bit keys from :func:`fill_uint64`.  If any two keys
    collide the whole draw is rejected and repeated, so the result is *exactly* uniform:
    conditioned on distinct keys, every ordering of i.i.d. keys is equally likely by symmetry.
    """
    if n < 0:
        raise InvalidParameter(f"n must be >= 0, got {n}")
    while True:
        keys = fill_uint64(n)
        order = np.argsort(keys)  # among distinct keys the order is unique: no need for stable
        sorted_keys = keys[order]
        if n < 2 or bool(np.all(sorted_keys[1:] != sorted_keys[:-1])):
            return order


def uniform_prefix(n: int, k: int) -> npt.NDArray[np.intp]:
    """The first ``k`` entries of a uniformly random permutation of ``0..n−1``, in O(n).

    That is, a uniformly random ``k``-subset in uniformly random order.  Selects the ``k``
    smallest of ``n`` i.i.d. uniform 64-bit keys (``argpartition``) and sorts only those.  A
    draw is rejected unless the selected keys are distinct and strictly below every other key;
    that event is invariant under permuting the indices, so conditioning on it keeps the keys
    exchangeable and the result exactly uniform.
    """
    if not 0 <= k <= n:
        raise InvalidParameter(f"need 0 <= k <= n, got k={k}, n={n}")
    if k == n:
        return uniform_permutation(n)
    while True:
        keys = fill_uint64(n)
        part = np.argpartition(keys, k)
        chosen = part[:k]
        chosen_keys = keys[chosen]
        order = np.argsort(chosen_keys)
        sorted_keys = chosen_keys[order]
        distinct = k < 2 or bool(np.all(sorted_keys[1:] != sorted_keys[:-1]))
        below = k == 0 or bool(sorted_keys[-1] < keys[part[k]])
        if distinct and below:
            return chosen[order]
