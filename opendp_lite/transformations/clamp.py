"""Clamping: bound each record to ``[lower, upper]`` so that aggregates have a sensitivity."""

from __future__ import annotations

import math
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from .. import backends
from .._registry import constructor
from .._spine import then
from .._types import Vec, carrier_dtype
from .._validate import check_no_nan
from ..core import Deferred, Domain, Metric, Transformation
from ..domains import AtomDomain, atom_domain
from ..errors import InvalidParameter, NotImplementedForType
from ._rowwise import row_by_row, vector_element

__all__ = ["make_clamp", "then_clamp"]


# Typed overloads (no runtime effect): the bounds fix the carrier, so mypy infers a chain and
# rejects e.g. float bounds on an integer vector.
@overload
def make_clamp(
    input_domain: Domain[Vec[int]], input_metric: Metric[int], bounds: tuple[int, int]
) -> Transformation[Vec[int], Vec[int], int, int]: ...
@overload
def make_clamp(
    input_domain: Domain[Vec[float]], input_metric: Metric[int], bounds: tuple[float, float]
) -> Transformation[Vec[float], Vec[float], int, int]: ...
@constructor
def make_clamp(
    input_domain: Domain[Any], input_metric: Metric[Any], bounds: tuple[Any, Any]
) -> Transformation[Any, Any, int, int]:
    r"""Clamp each element of a numeric vector to ``bounds = (lower, upper)``.

    Output domain: ``vector_domain(atom_domain(bounds=(lower, upper), T=T), size)`` with the
    input carrier ``T`` and size.  Stability map (any dataset metric, row by row):
    :math:`d_{out} = d_{in}`.

    Raises:
        InvalidParameter: if the bounds are NaN, infinite, reversed or do not fit ``T``, or if
            the input domain admits NaN (NaN has no place in ``[lower, upper]``; impute first).
        NotImplementedForType: if the input is not a vector of numeric atoms or the metric is
            not a dataset metric.

    Proof: docs/proofs/make_clamp.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    >>> clamp = space >> dp.t.then_clamp((0.0, 10.0))
    >>> clamp([-1.0, 5.0, 12.0]), clamp.map(1)
    ([0.0, 5.0, 10.0], 1)
    >>> clamp.output_domain
    VectorDomain(AtomDomain(bounds=[0.0, 10.0], T=f64))
    """
    elem = vector_element("make_clamp", input_domain)
    assert isinstance(elem, AtomDomain)  # noqa: S101 - vector_element returns an atom here
    if elem.T in ("String", "bool"):
        raise NotImplementedForType(f"make_clamp needs a numeric carrier, got T={elem.T}")
    check_no_nan("make_clamp", input_domain, elem, error=InvalidParameter)  # NaN has no bound
    if not (isinstance(bounds, tuple | list) and len(bounds) == 2):
        raise InvalidParameter(f"bounds must be a (lower, upper) pair, got {bounds!r}")
    for b in bounds:
        if isinstance(b, float) and not math.isfinite(b):
            raise InvalidParameter(f"bounds must be finite and not NaN, got {bounds!r}")
    out_elem = atom_domain(bounds=(bounds[0], bounds[1]), T=elem.T)
    assert out_elem.bounds is not None  # noqa: S101 - atom_domain stored the checked bounds
    dtype = np.dtype(carrier_dtype(elem.T))
    lo = np.asarray(out_elem.bounds[0], dtype=dtype)
    hi = np.asarray(out_elem.bounds[1], dtype=dtype)

    def function(arg: npt.NDArray[Any]) -> npt.NDArray[Any]:
        # lazily where the backend is lazy; an exact aggregate may fuse it (clip_source)
        out: npt.NDArray[Any] = backends.of(arg).clip(arg, lo, hi)
        return out

    # deferred: an exact float aggregate chained next clamps each cache-sized piece itself
    # (core.compose), so the clamped copy of the vector is never written
    deferred: Deferred[Any, Any] = Deferred(("clip", lo, hi), function)
    return row_by_row("make_clamp", input_domain, input_metric, out_elem, deferred)


then_clamp = then(make_clamp)
