"""Casting between carriers, record by record: ``make_cast``, ``make_cast_default``,
``make_cast_inherent``.

The cast of one value follows OpenDP's conventions:

* ``String → int``: an optional sign and decimal digits only (no spaces, no ``_``); a value out
  of the carrier's range fails.  ``String → float``: a decimal or exponent literal, ``inf``,
  ``infinity`` or ``nan`` (any case), no spaces.  ``String → bool``: true iff non-empty.
* ``float → int``: truncation toward zero; NaN, ±inf and out-of-range values fail.
* ``int → int``: fails when out of the target range.  ``→ float``: round to nearest.
* ``number → bool``: ``x != 0``.  ``bool → number``: 1 or 0.
* ``→ String``: the shortest round-trip decimal, without exponent (``1.0 → "1"``,
  ``NaN → "NaN"``, ``inf → "inf"``); ``true``/``false`` for bools.

A failed cast is ``None`` (``make_cast``), the type's default (``make_cast_default``: 0, 0.0,
``False``, ``""``) or NaN (``make_cast_inherent``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any, Literal, Protocol, TypeVar, overload
from typing import cast as _cast

import numpy as np
import numpy.typing as npt

from .. import backends
from .._registry import constructor
from .._spine import into, typed_by
from .._types import (
    Never,
    Vec,
    carrier_dtype,
    carrier_name,
    int_bounds,
    is_float,
    is_int,
    is_temporal,
)
from ..core import Domain, Metric, Transformation
from ..domains import AtomDomain, FloatName, IntName, atom_domain, option_domain
from ..errors import FailedFunction, NotImplementedForType
from ._rowwise import row_by_row, vector_element

__all__ = [
    "make_cast",
    "make_cast_default",
    "make_cast_inherent",
    "then_cast",
    "then_cast_default",
    "then_cast_inherent",
]

_INT_RE = re.compile(r"[+-]?[0-9]+\Z")
_FLOAT_RE = re.compile(
    r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)\Z",
    re.IGNORECASE,
)
_DEFAULTS: dict[str, Any] = {"bool": False, "String": ""}


def _default(T: str) -> Any:
    if is_float(T):
        return 0.0
    if is_int(T):
        return 0
    return _DEFAULTS[T]


def _float_to_string(x: float, T: str) -> str:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    # the shortest digits that round-trip *in T* (an f32 0.1 prints as "0.1"), no exponent
    v = np.float32(x) if T == "f32" else x
    s = np.format_float_positional(v, trim="-")
    return _tie_up(s, v)


def _tie_up(s: str, v: Any) -> str:
    """Where two shortest decimals are equally close to ``v`` (its exact value is halfway),
    the one of greater magnitude, as Rust's ``Display`` (OpenDP) writes it; numpy writes the
    even one (``562949953421312.25`` is "…312.3" in Rust, "…312.2" in numpy)."""
    if "." not in s or s[-1] == "9":
        return s
    up = s[:-1] + str(int(s[-1]) + 1)
    exact = Fraction(float(v))
    if abs(Fraction(up) - exact) != abs(Fraction(s) - exact) or type(v)(float(Fraction(up))) != v:
        return s
    return up


def _formatter(TIA: str) -> Callable[[Any], str]:
    """The formatter of ``TIA`` values as strings (chosen once per vector)."""
    if TIA == "bool":
        return lambda v: "true" if v else "false"
    if is_float(TIA):
        return lambda v: _float_to_string(float(v), TIA)
    return str


_F32_MAX = Fraction(float(np.finfo(np.float32).max))
_F32_OVERFLOW = _F32_MAX + Fraction(2) ** 103  # max + half an ulp: from here on, round to inf


def _parse_f32(s: str) -> float:
    """The f32 nearest to the decimal ``s`` (ties to even), without double rounding.

    ``s`` is already a finite decimal literal.  ``float(Fraction)`` is correctly rounded to
    f64; the f32 answer is that value's f32 rounding or one of its two f32 neighbours, chosen
    by exact rational distance.
    """
    exact = Fraction(s)
    if abs(exact) >= _F32_OVERFLOW:
        return math.copysign(math.inf, float(exact)) if exact else 0.0
    with np.errstate(over="ignore"):
        c = np.float32(float(exact))
        if math.isinf(c):
            return math.copysign(float(np.finfo(np.float32).max), float(exact))
        cands = [c, np.nextafter(c, np.float32(np.inf)), np.nextafter(c, np.float32(-np.inf))]
    best = min(
        (abs(Fraction(float(v)) - exact), int(np.float32(v).view(np.uint32)) & 1, float(v))
        for v in cands
        if math.isfinite(v)
    )
    out = best[2]
    return math.copysign(0.0, -1.0) if out == 0 and s.lstrip().startswith("-") else out


def _parser(TOA: str) -> Callable[[str], Any]:
    """The parser of strings as ``TOA``: ``None`` when a string does not parse or does not fit.

    Built once per vector (the carrier's range is read once, not per element).
    """
    if TOA == "String":
        return lambda s: s
    if TOA == "bool":
        return lambda s: s != ""
    if is_int(TOA):
        lo, hi = int_bounds(TOA)
        is_int_literal = _INT_RE.match

        def parse_int(s: str) -> int | None:
            if not is_int_literal(s):
                return None
            v = int(s)
            return v if lo <= v <= hi else None

        return parse_int
    is_float_literal = _FLOAT_RE.match
    f32 = TOA == "f32"

    def parse_float(s: str) -> float | None:
        if not is_float_literal(s):
            return None
        f = float(s)
        return _parse_f32(s) if f32 and math.isfinite(f) else f

    return parse_float


def _cast_values(TIA: str, TOA: str, arg: npt.NDArray[Any]) -> tuple[npt.NDArray[Any], Any]:
    """Cast a vector: returns ``(values, ok)`` where ``ok`` marks successful casts.

    ``values`` has the output dtype (object for strings); where ``ok`` is false it holds a
    placeholder that the caller replaces.  Numeric-to-numeric casts are vectorised.
    """
    if TIA == "String" or TOA == "String":
        n = len(arg)  # only here: a numeric cast of a lazy array never needs its length
        if TIA == "String":
            parsed = list(map(_parser(TOA), arg.tolist()))
        else:
            parsed = list(map(_formatter(TIA), arg.tolist()))
        ok = np.fromiter((p is not None for p in parsed), dtype=bool, count=n)
        out = np.empty(n, dtype=object) if TOA == "String" else None
        if out is not None:
            out[:] = parsed
            return out, ok
        filled = [p if p is not None else _default(TOA) for p in parsed]
        return np.asarray(filled, dtype=carrier_dtype(TOA)).reshape(n), ok
    dtype = carrier_dtype(TOA)
    # ones_like dispatches on the array type: a lazy (Dask) input gets a lazy mask
    if TOA == "bool":
        return np.not_equal(arg, 0), np.ones_like(arg, dtype=bool)
    if TIA == "bool":
        return arg.astype(dtype), np.ones_like(arg, dtype=bool)
    if is_float(TOA):
        with np.errstate(over="ignore"):
            return arg.astype(dtype), np.ones_like(arg, dtype=bool)
    lo, hi = int_bounds(TOA)
    if is_float(TIA):
        with np.errstate(invalid="ignore"):
            t = np.trunc(arg.astype(np.float64))
            # lo and hi + 1 are exact floats (0 or ± a power of two, or small integers)
            ok = np.isfinite(t) & (t >= float(lo)) & (t < float(hi + 1))
        vals = np.where(ok, t, 0.0).astype(dtype)
        return vals, ok
    # int → int: compare in the wider of the two types to avoid wrap-around
    ok = (arg >= lo) & (arg <= hi) if arg.size else np.ones(0, dtype=bool)
    vals = np.where(ok, arg, 0).astype(dtype)
    return vals, ok


def _spaces(name: str, input_domain: Domain[Any], TOA: object) -> tuple[str, str]:
    elem = vector_element(name, input_domain)
    assert isinstance(elem, AtomDomain)  # noqa: S101 - vector_element returns an atom here
    TOA_name = carrier_name(TOA)
    if is_temporal(elem.T) or is_temporal(TOA_name):
        raise NotImplementedForType(
            f"{name} casts between numbers, bool and String; it does not cast {elem.T} to "
            f"{TOA_name} (in a table query, use .dt.* components or str.strptime)"
        )
    return elem.T, TOA_name


_TI = TypeVar("_TI")


_RI = TypeVar("_RI")
_RF = TypeVar("_RF")
_RS = TypeVar("_RS")


class ByTOA(Protocol[_RI, _RF, _RS]):
    """Typing only: the casts' carrier table, written once.

    ``TOA`` an integer type or name gives ``_RI``, a float one ``_RF``, ``str``/``"String"``
    ``_RS``; anything else (a numpy type, a ``RuntimeType``) leaves the output open.  A row
    that is refused at construction (``make_cast_inherent`` to a non-float) is ``Never``.
    """

    @overload
    def __call__(
        self, input_domain: Domain[_TI], input_metric: Metric[int], TOA: type[int] | IntName
    ) -> Transformation[_TI, _RI, int, int]: ...
    @overload
    def __call__(
        self, input_domain: Domain[_TI], input_metric: Metric[int], TOA: type[float] | FloatName
    ) -> Transformation[_TI, _RF, int, int]: ...
    @overload
    def __call__(
        self,
        input_domain: Domain[_TI],
        input_metric: Metric[int],
        TOA: type[str] | Literal["String"],
    ) -> Transformation[_TI, _RS, int, int]: ...
    @overload
    def __call__(
        self, input_domain: Domain[_TI], input_metric: Metric[int], TOA: object
    ) -> Transformation[_TI, Any, int, int]: ...


# The output carrier is TOA's, each element optional (a value that does not cast is None).
@typed_by(_cast("ByTOA[Vec[int | None], Vec[float | None], Vec[str | None]]", None))
@constructor
def make_cast(
    input_domain: Domain[Any], input_metric: Metric[Any], TOA: object
) -> Transformation[Any, Any, int, int]:
    r"""Cast each element to ``TOA``; a value that does not cast becomes ``None``.

    Output domain: ``vector_domain(option_domain(atom_domain(T=TOA)))`` (a float ``TOA``
    admits NaN, e.g. from the string ``"nan"``).  Stability map (row by row, any dataset
    metric): :math:`d_{out} = d_{in}`.

    Raises:
        NotImplementedForType: if the input is not a vector of atoms, ``TOA`` is not a
            carrier, or the metric is not a dataset metric.

    Proof: docs/proofs/make_cast.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
    >>> cast = space >> dp.t.then_cast(TOA=int)
    >>> cast(["1", "a", "-3"]), cast.map(2)
    ([1, None, -3], 2)
    """
    TIA, T = _spaces("make_cast", input_domain, TOA)

    def function(arg: npt.NDArray[Any]) -> npt.NDArray[Any]:
        backend = backends.of(arg)
        if not backend.holds_objects:
            # an option vector is an object array of Python values, which Dask cannot hold
            raise FailedFunction(
                f"make_cast (option output) does not run on {backend.label}; use "
                "make_cast_default or make_cast_inherent"
            )
        vals, ok = _cast_values(TIA, T, arg)
        out = np.empty(len(arg), dtype=object)
        out[:] = vals.tolist()
        out[~ok] = None
        return out

    elem = atom_domain(T=T, nan=True if is_float(T) else None)
    return row_by_row("make_cast", input_domain, input_metric, option_domain(elem), function)


@typed_by(_cast("ByTOA[Vec[int], Vec[float], Vec[str]]", None))
@constructor
def make_cast_default(
    input_domain: Domain[Any], input_metric: Metric[Any], TOA: object
) -> Transformation[Any, Any, int, int]:
    r"""Cast each element to ``TOA``; a value that does not cast becomes ``TOA``'s default.

    Defaults: 0 for integers, 0.0 for floats, ``False``, ``""``.  Output domain:
    ``vector_domain(atom_domain(T=TOA))`` (admitting NaN when ``TOA`` is a float, as a string
    ``"nan"`` or a NaN input casts to NaN).  Stability map: :math:`d_{out} = d_{in}`.

    Raises:
        NotImplementedForType: as :func:`make_cast`.

    Proof: docs/proofs/make_cast_default.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=float)), dp.symmetric_distance()
    >>> (space >> dp.t.then_cast_default(TOA=int))([1.7, -2.5, 1e20])
    [1, -2, 0]
    """
    TIA, T = _spaces("make_cast_default", input_domain, TOA)
    default = _default(T)

    def function(arg: npt.NDArray[Any]) -> npt.NDArray[Any]:
        vals, ok = _cast_values(TIA, T, arg)
        if vals.dtype == object:
            vals = vals.copy()
            vals[~ok] = default
            return vals
        return np.where(ok, vals, np.asarray(default, dtype=vals.dtype))

    elem = atom_domain(T=T, nan=True if is_float(T) else None)  # OpenDP's float default
    return row_by_row("make_cast_default", input_domain, input_metric, elem, function)


# Only a float TOA has an inherent null (NaN); another TOA is refused at construction.
@typed_by(_cast("ByTOA[Never, Vec[float], Never]", None))
@constructor
def make_cast_inherent(
    input_domain: Domain[Any], input_metric: Metric[Any], TOA: object
) -> Transformation[Any, Any, int, int]:
    r"""Cast each element to the float type ``TOA``; a value that does not cast becomes NaN.

    Output domain: ``vector_domain(atom_domain(T=TOA, nan=True))``.  Stability map:
    :math:`d_{out} = d_{in}`.

    Raises:
        NotImplementedForType: if ``TOA`` has no inherent null (only floats do), or as
            :func:`make_cast`.

    Proof: docs/proofs/make_cast_inherent.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
    >>> (space >> dp.t.then_cast_inherent(TOA=float))(["1.5", "x"])
    [1.5, nan]
    """
    TIA, T = _spaces("make_cast_inherent", input_domain, TOA)
    if not is_float(T):
        raise NotImplementedForType(
            f"make_cast_inherent needs a float TOA (NaN is its null), got {T}"
        )

    def function(arg: npt.NDArray[Any]) -> npt.NDArray[Any]:
        vals, ok = _cast_values(TIA, T, arg)
        return np.where(ok, vals, np.asarray(np.nan, dtype=vals.dtype))

    elem = atom_domain(T=T, nan=True)
    return row_by_row("make_cast_inherent", input_domain, input_metric, elem, function)


then_cast = into(make_cast)


then_cast_default = into(make_cast_default)


then_cast_inherent = into(make_cast_inherent)
