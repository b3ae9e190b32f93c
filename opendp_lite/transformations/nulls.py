"""Missing values: ``make_is_null``, ``make_drop_null``, ``make_impute_constant``,
``make_impute_uniform_float``.

A *null* is NaN in a float vector that admits NaN (``atom_domain(T=float, nan=True)``), or
``None`` in a vector of options (``option_domain(atom_domain(T))``); in an option of a
NaN-admitting float (the output of ``make_cast(..., TOA=float)``) both ``None`` and NaN are
null, so that imputing or dropping leaves a NaN-free vector that ``make_clamp`` accepts.
"""

from __future__ import annotations

import math
from typing import Any, TypeVar, overload

import numpy as np
import numpy.typing as npt

from .. import backends
from .._registry import constructor
from .._spine import into, keep, non_null
from .._types import Vec, carrier_dtype, is_float
from ..core import Domain, Metric, Transformation
from ..domains import AtomDomain, OptionDomain, atom_domain, vector_domain
from ..errors import FailedFunction, InvalidParameter, NotImplementedForType, NotInDomain
from ..samplers.rng import fill_uint64
from ._rowwise import SIZE_CHANGING_METRICS, check_metric, row_by_row, vector_element

__all__ = [
    "make_drop_null",
    "make_impute_constant",
    "make_impute_uniform_float",
    "make_is_null",
    "then_drop_null",
    "then_impute_constant",
    "then_impute_uniform_float",
    "then_is_null",
]


def _nullable(name: str, input_domain: Domain[Any]) -> tuple[bool, AtomDomain[Any]]:
    """``(is_option, inner atom domain)``; refuses a domain that cannot hold a null."""
    elem = vector_element(name, input_domain, option=True)
    if isinstance(elem, OptionDomain):
        inner = elem.element_domain
        assert isinstance(inner, AtomDomain)  # noqa: S101 - vector_element checked it
        return True, inner
    assert isinstance(elem, AtomDomain)  # noqa: S101 - vector_element returns an atom here
    if not (elem.nan or is_float(elem.T)):  # NaN-free floats are accepted, as by OpenDP
        raise NotImplementedForType(
            f"{name} needs elements that can be null: a float atom_domain or an "
            f"option_domain; got {elem!r}"
        )
    return False, elem


def _null_mask(is_option: bool, arg: npt.NDArray[Any]) -> npt.NDArray[np.bool_]:
    if is_option:
        # None, or NaN inside an option of a NaN-admitting float: both are missing values
        return np.fromiter(
            (v is None or (isinstance(v, float) and v != v) for v in arg.tolist()),
            dtype=np.bool_,
            count=len(arg),
        )
    isnan: npt.NDArray[np.bool_] = np.isnan(arg)  # no asarray: a lazy array stays lazy
    return isnan


def _non_null(inner: AtomDomain[Any]) -> AtomDomain[Any]:
    """The inner domain with NaN excluded."""
    return atom_domain(bounds=inner.bounds, nan=False, T=inner.T) if inner.nan else inner


def _values(inner: AtomDomain[Any], vals: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """Non-null values of an option vector as an array of the inner carrier's dtype."""
    if inner.T == "String":
        return vals
    return np.asarray(vals.tolist(), dtype=carrier_dtype(inner.T)).reshape(len(vals))


@constructor
def make_is_null(
    input_domain: Domain[Any], input_metric: Metric[Any]
) -> Transformation[Any, Vec[bool], int, int]:
    r"""Map each element to whether it is null (NaN, or ``None`` in an option vector).

    Output domain: ``vector_domain(atom_domain(T=bool))``.  Stability map (row by row, any
    dataset metric): :math:`d_{out} = d_{in}`.

    Raises:
        NotImplementedForType: if the elements cannot be null, or the metric is not a dataset
            metric.

    Proof: docs/proofs/make_is_null.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=float, nan=True)), dp.symmetric_distance()
    >>> (space >> dp.t.then_is_null())([1.0, float("nan")])
    [False, True]
    """
    is_option, _ = _nullable("make_is_null", input_domain)

    def function(arg: npt.NDArray[Any]) -> npt.NDArray[Any]:
        return _null_mask(is_option, arg)

    return row_by_row("make_is_null", input_domain, input_metric, atom_domain(T=bool), function)


@constructor
def make_drop_null(
    input_domain: Domain[Any], input_metric: Metric[Any]
) -> Transformation[Any, Any, int, int]:
    r"""Remove the null elements (NaN, or ``None`` in an option vector).

    Output domain: ``vector_domain(inner)`` with NaN excluded and no size.  Stability map
    (symmetric or insert-delete distance): :math:`d_{out} = d_{in}`.

    Raises:
        NotImplementedForType: if the elements cannot be null, or the metric does not allow
            the size to change (only symmetric and insert-delete distances do).

    Proof: docs/proofs/make_drop_null.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.option_domain(dp.atom_domain(T=int))), dp.symmetric_distance()
    >>> drop = space >> dp.t.then_drop_null()
    >>> drop([1, None, 3]), drop.output_domain
    ([1, 3], VectorDomain(AtomDomain(T=i32)))
    """
    is_option, inner = _nullable("make_drop_null", input_domain)
    check_metric("make_drop_null", input_metric, SIZE_CHANGING_METRICS)

    def function(arg: npt.NDArray[Any]) -> npt.NDArray[Any]:
        kept = arg[~_null_mask(is_option, arg)]
        return _values(inner, kept) if is_option else kept

    return Transformation(
        input_domain,
        input_metric,
        vector_domain(_non_null(inner)),
        input_metric,
        function,
        lambda d_in: d_in,
    )


_T = TypeVar("_T")


# Typed overloads (no runtime effect), so that mypy infers a chain's carriers.
@overload
def make_impute_constant(
    input_domain: Domain[Vec[_T | None]], input_metric: Metric[int], constant: _T
) -> Transformation[Vec[_T | None], Vec[_T], int, int]: ...
@overload
def make_impute_constant(
    input_domain: Domain[Vec[float]], input_metric: Metric[int], constant: float
) -> Transformation[Vec[float], Vec[float], int, int]: ...
@constructor
def make_impute_constant(
    input_domain: Domain[Any], input_metric: Metric[Any], constant: Any
) -> Transformation[Any, Any, int, int]:
    r"""Replace each null element (NaN, or ``None`` in an option vector) by ``constant``.

    Output domain: ``vector_domain(inner, size)`` with NaN excluded.  Stability map (row by
    row, any dataset metric): :math:`d_{out} = d_{in}`.

    Raises:
        InvalidParameter: if ``constant`` is null or not a member of the output element domain.
        NotImplementedForType: if the elements cannot be null, or the metric is not a dataset
            metric.

    Proof: docs/proofs/make_impute_constant.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=float, nan=True)), dp.symmetric_distance()
    >>> (space >> dp.t.then_impute_constant(0.0))([1.0, float("nan")])
    [1.0, 0.0]
    """
    is_option, inner = _nullable("make_impute_constant", input_domain)
    out_elem = _non_null(inner)
    try:
        c = out_elem._normalize(constant)
    except NotInDomain as e:
        raise InvalidParameter(
            f"constant must be a non-null member of {out_elem!r}, got {constant!r}: {e}"
        ) from None

    def function(arg: npt.NDArray[Any]) -> npt.NDArray[Any]:
        mask = _null_mask(is_option, arg)
        if is_option:
            filled = arg.copy()
            filled[mask] = c
            return _values(inner, filled)
        return np.where(mask, np.asarray(c, dtype=arg.dtype), arg)

    return row_by_row("make_impute_constant", input_domain, input_metric, out_elem, function)


@constructor
def make_impute_uniform_float(
    input_domain: Domain[Any], input_metric: Metric[Any], bounds: tuple[Any, Any]
) -> Transformation[Any, Any, int, int]:
    r"""Replace each NaN by an independent draw from ``[lower, upper]``.

    The draw is :math:`\mathrm{clip}(\mathrm{fl}(\mathrm{fl}(l(1-t)) + \mathrm{fl}(u\,t)))`
    with :math:`t` uniform on the grid :math:`2^{-53}\{0,\dots,2^{53}-1\}` (from the OS
    CSPRNG), so it always lies in ``[lower, upper]`` and never overflows.  Output domain:
    ``vector_domain(atom_domain(T), size)`` without NaN.  Stability map (row by row, any
    dataset metric; neighbours' shared rows use shared draws): :math:`d_{out} = d_{in}`.

    Raises:
        InvalidParameter: if a bound is NaN or infinite, or ``lower >= upper``.
        NotImplementedForType: if the input is not a float vector admitting NaN, or the
            metric is not a dataset metric.

    Proof: docs/proofs/make_impute_uniform_float.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=float, nan=True)), dp.symmetric_distance()
    >>> out = (space >> dp.t.then_impute_uniform_float((2.0, 3.0)))([1.0, float("nan")])
    >>> out[0], bool(2.0 <= out[1] <= 3.0)
    (1.0, True)
    """
    elem = vector_element("make_impute_uniform_float", input_domain)
    assert isinstance(elem, AtomDomain)  # noqa: S101 - vector_element returns an atom here
    if not (is_float(elem.T) and elem.nan):
        raise NotImplementedForType(
            f"make_impute_uniform_float needs a float atom_domain with nan=True, got {elem!r}"
        )
    if not (isinstance(bounds, tuple | list) and len(bounds) == 2):
        raise InvalidParameter(f"bounds must be a (lower, upper) pair, got {bounds!r}")
    lo_f, hi_f = (float(b) for b in bounds)
    if not (math.isfinite(lo_f) and math.isfinite(hi_f)):
        raise InvalidParameter(f"bounds must be finite and not NaN, got {bounds!r}")
    if not lo_f < hi_f:
        raise InvalidParameter(f"lower bound must be below upper bound, got {bounds!r}")
    out_elem = atom_domain(T=elem.T, nan=False)
    dtype = carrier_dtype(elem.T)
    lo_b = atom_domain(bounds=(lo_f, hi_f), T=elem.T).bounds
    assert lo_b is not None  # noqa: S101 - atom_domain checked and stored the bounds
    lo, hi = float(lo_b[0]), float(lo_b[1])

    def function(arg: npt.NDArray[Any]) -> npt.NDArray[Any]:
        backend = backends.of(arg)
        if not backend.stable_blocks:
            # a recomputed block (after a worker failure) would get fresh draws, so two
            # consumers of one block could see different imputations: refuse
            raise FailedFunction(
                f"make_impute_uniform_float does not run on {backend.label}; use "
                "make_impute_constant or make_drop_null"
            )
        mask = np.isnan(arg)
        k = int(np.count_nonzero(mask))
        if k == 0:
            return arg
        t = (fill_uint64(k) >> np.uint64(11)).astype(np.float64) * 2.0**-53
        # 1 − t is exact on this grid; each product is at most |bound|, so nothing overflows
        draw = np.clip(lo * (1.0 - t) + hi * t, lo, hi).astype(dtype)
        out = arg.copy()
        out[mask] = draw
        return out

    return row_by_row("make_impute_uniform_float", input_domain, input_metric, out_elem, function)


then_is_null = into(make_is_null)


then_drop_null = non_null(make_drop_null)


then_impute_constant = non_null(make_impute_constant)


then_impute_uniform_float = keep(make_impute_uniform_float)
