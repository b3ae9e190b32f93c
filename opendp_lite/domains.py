"""Domains: the sets of values a transformation or measurement accepts.

All domains are frozen dataclasses: immutable, hashable, and equal when their contents are.
Their reprs follow OpenDP's.

>>> atom_domain(T=float)
AtomDomain(nan=true, T=f64)
>>> vector_domain(atom_domain(bounds=(0.0, 1.0)), size=3)
VectorDomain(AtomDomain(bounds=[0.0, 1.0], T=f64), size=3)
>>> atom_domain(T=float).member(float("nan")), atom_domain(T=float, nan=False).member(float("nan"))
(True, False)
>>> vector_domain(atom_domain(T=int)).member(np.array([1, 2, 3]))
True
"""

from __future__ import annotations

import datetime as _dt
import math
import struct
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar, overload

import numpy as np
import numpy.typing as npt

from . import _frames
from ._types import Vec, carrier_dtype, carrier_name, int_bounds, is_float, is_int, is_temporal
from ._validate import check_int
from .core import Domain
from .errors import InvalidParameter, NotInDomain

# -- backends: lazy, distributed carriers (Dask) register themselves here ------------------------


@dataclass(frozen=True)
class Backend:
    """How a lazy backend's vectors and frames are checked (see ``opendp_lite.backends.dask``).

    A backend module registers one of these when it is imported, so this module never imports
    a backend (the layers run one way: backends import domains).  ``owns_vector(x)`` says
    whether ``x`` is the backend's vector; ``checked_vector(element, size, x, coerce)`` returns
    ``x`` as a lazily checked member, each block checked by ``coerce(element, block)`` (the
    numpy vector check); ``force`` computes every check; ``owns_frame``/``checked_frame`` do
    the same for data frames, whose keys are checked by ``coerce_key(K, key)``;
    ``force_frame(x, check)`` runs ``check`` on each eager partition of a frame, in one pass.
    """

    name: str
    owns_vector: Callable[[object], bool]
    checked_vector: Callable[..., Any]
    force: Callable[[Any], None]
    owns_frame: Callable[[object], bool]
    checked_frame: Callable[..., Any]
    force_frame: Callable[..., None]


_BACKENDS: list[Backend] = []


def register_backend(backend: Backend) -> None:
    """Make ``backend``'s vectors and frames members of the domains (idempotent by name)."""
    _BACKENDS[:] = [b for b in _BACKENDS if b.name != backend.name] + [backend]


def _vector_backend(x: object) -> Backend | None:
    return next((b for b in _BACKENDS if b.owns_vector(x)), None)


def _frame_backend(x: object) -> Backend | None:
    return next((b for b in _BACKENDS if b.owns_frame(x)), None)


__all__ = [
    "AtomDomain",
    "CategoricalDomain",
    "DataFrameDomain",
    "ExtrinsicDomain",
    "MapDomain",
    "OptionDomain",
    "UserDomain",
    "VectorDomain",
    "atom_domain",
    "categorical_domain",
    "dataframe_domain",
    "is_lazy_array",
    "map_domain",
    "option_domain",
    "user_domain",
    "vector_domain",
]

C = TypeVar("C")
K = TypeVar("K")
_Num = TypeVar("_Num", int, float)  # the carrier a bounds pair gives, when T is not named
V = TypeVar("V")

FloatName = Literal["f64", "f32", "float"]
IntName = Literal["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "usize", "int"]


@dataclass(frozen=True)
class AtomDomain(Domain[C]):
    """A domain of scalars of carrier ``T``, optionally bounded, optionally admitting NaN."""

    T: str
    bounds: tuple[Any, Any] | None = None
    nan: bool = False

    def __repr__(self) -> str:
        parts = []
        if self.bounds is not None:
            parts.append(f"bounds=[{self.bounds[0]!r}, {self.bounds[1]!r}]")
        if self.nan:
            parts.append("nan=true")
        parts.append(f"T={self.T}")
        return f"AtomDomain({', '.join(parts)})"

    @property
    def carrier_type(self) -> str:
        return self.T

    def _normalize(self, x: object) -> C:
        # a Python float for f64 is already its own carrier value (what _coerce_scalar returns);
        # for f32, the value the C cast gives (what _coerce_float_scalar returns)
        v: Any
        if type(x) is float and self.T == "f64":
            v = x
        elif type(x) is float and self.T == "f32":
            try:  # the C cast: _coerce_float_scalar("f32", x) for a value f32 can hold
                v = _F32.unpack(_F32.pack(x))[0]
            except OverflowError:
                v = math.inf
            if math.isinf(v) and not math.isinf(x):
                v = _coerce_float_scalar("f32", x)  # refuses x: it overflows f32
        else:
            v = _coerce_scalar(self.T, x)
        if isinstance(v, float) and math.isnan(v):
            if not self.nan:
                raise NotInDomain(f"NaN is not a member of {self!r}")
            return v  # type: ignore[return-value]
        if self.bounds is not None and not (self.bounds[0] <= v <= self.bounds[1]):
            raise NotInDomain(f"{x!r} is outside the bounds of {self!r}")
        return v  # type: ignore[no-any-return]


def _coerce_scalar(T: str, x: object) -> Any:
    """Check that ``x`` is a scalar of carrier ``T``; return it as a Python scalar."""
    if isinstance(x, (bool, np.bool_)):
        if T == "bool":
            return bool(x)
    elif is_float(T):
        if isinstance(x, (float, int, np.floating, np.integer)):
            return _coerce_float_scalar(T, x)
    elif is_int(T):
        if isinstance(x, (int, np.integer)):
            return _coerce_int_scalar(T, x)
    elif T == "String":
        if isinstance(x, str):
            return x
    elif T == "NaiveDate":  # a datetime is a date to Python, not to OpenDP (chrono)
        if isinstance(x, _dt.date) and not isinstance(x, _dt.datetime):
            return x
    elif T == "NaiveTime":
        if isinstance(x, _dt.time) and x.tzinfo is None:
            return x
    raise NotInDomain(f"inferred type is {type(x).__name__}, expected {T}: got {x!r}")


def _coerce_float_scalar(T: str, x: float | int | np.floating[Any] | np.integer[Any]) -> float:
    try:
        v = float(x)
    except OverflowError:  # a Python int beyond the float range
        raise NotInDomain(f"an int of {int(x).bit_length()} bits is too large for {T}") from None
    if T == "f32":
        try:  # the C cast to float: round to nearest, ties to even (as numpy's astype)
            v32: float = _F32.unpack(_F32.pack(v))[0]
        except OverflowError:
            v32 = math.inf
        if math.isinf(v32) and not math.isinf(v):
            raise NotInDomain(f"{x!r} overflows f32")
        v = v32
    return v


_F32 = struct.Struct("f")


def _coerce_int_scalar(T: str, x: int | np.integer[Any]) -> int:
    lo, hi = int_bounds(T)
    v = int(x)
    if not lo <= v <= hi:
        raise NotInDomain(f"{x!r} is outside the range of {T} [{lo}, {hi}]")
    return v


@overload
def atom_domain(
    bounds: tuple[bool, bool] | None = None,
    nan: None = None,
    *,
    T: type[bool] | Literal["bool"],
) -> AtomDomain[bool]: ...
@overload
def atom_domain(
    bounds: tuple[int, int] | None = None,
    nan: bool | None = None,
    *,
    T: type[int] | IntName,
) -> AtomDomain[int]: ...
@overload
def atom_domain(
    bounds: tuple[float, float] | None = None,
    nan: bool | None = None,
    *,
    T: type[float] | FloatName,
) -> AtomDomain[float]: ...
@overload
def atom_domain(
    bounds: None = None, nan: None = None, *, T: type[str] | Literal["String"]
) -> AtomDomain[str]: ...
@overload
def atom_domain(bounds: tuple[_Num, _Num], nan: bool | None = None) -> AtomDomain[_Num]: ...
@overload
def atom_domain(
    bounds: tuple[Any, Any] | None = None, nan: bool | None = None, T: object = None
) -> AtomDomain[Any]: ...
def atom_domain(
    bounds: tuple[Any, Any] | None = None, nan: bool | None = None, T: object = None
) -> AtomDomain[Any]:
    """The domain of all scalars of type ``T``, within ``bounds`` if given.

    ``T`` may be ``float``/``"f64"``, ``"f32"``, ``int``/``"i32"``, ``"i8"`` … ``"u64"``,
    ``bool``, ``str``, ``datetime.date``/``"NaiveDate"``, ``datetime.time``/``"NaiveTime"``
    (without bounds) or a numpy dtype; it is inferred from ``bounds`` when omitted.  As in
    OpenDP, a float domain without bounds admits NaN unless ``nan=False``; the mechanisms
    that need numbers refuse such a domain at build time and say how to narrow it.  A bounded
    domain never holds NaN (NaN is within no bounds), so its ``nan`` is ``False``.

    >>> atom_domain(bounds=(0, 10))
    AtomDomain(bounds=[0, 10], T=i32)
    >>> atom_domain(T="f32"), atom_domain(T="f32", nan=False)
    (AtomDomain(nan=true, T=f32), AtomDomain(T=f32))

    Raises:
        InvalidParameter: if the bounds are not ordered, not finite, or do not fit ``T``, or
            if ``nan=True`` is given with bounds or for a non-float type.
        NotImplementedForType: if ``T`` is not a supported carrier.
    """
    if T is None:
        if bounds is None:
            raise InvalidParameter("atom_domain needs T or bounds to know its carrier type")
        T = "f64" if any(isinstance(b, (float, np.floating)) for b in bounds) else "i32"
    name = carrier_name(T)
    if nan and not is_float(name):
        raise InvalidParameter(f"nan=True is only meaningful for float types, not {name}")
    if nan and bounds is not None:
        raise InvalidParameter("a bounded domain cannot admit NaN (NaN is not within bounds)")
    if nan is None:  # OpenDP's default: an unbounded float domain admits NaN
        nan = is_float(name) and bounds is None
    if bounds is not None and is_temporal(name):
        raise InvalidParameter(
            f"bounds on a {name} domain are not supported; bound a number derived from it "
            "instead (e.g. the year, by .dt.year(), then clip)"
        )
    if bounds is not None:
        if not (isinstance(bounds, tuple | list) and len(bounds) == 2):
            raise InvalidParameter(f"bounds must be a (lower, upper) pair, got {bounds!r}")
        try:
            lo, hi = (_coerce_scalar(name, b) for b in bounds)
        except NotInDomain as e:
            raise InvalidParameter(f"bounds {bounds!r} do not fit T={name}: {e}") from None
        if isinstance(lo, float) and not (math.isfinite(lo) and math.isfinite(hi)):
            raise InvalidParameter(f"bounds must be finite, got {bounds!r}")
        if not lo <= hi:
            raise InvalidParameter(f"lower bound must not exceed upper bound, got {bounds!r}")
        bounds = (lo, hi)
    return AtomDomain(T=name, bounds=bounds, nan=bool(nan))


@dataclass(frozen=True)
class VectorDomain(Domain[Vec[C]], Generic[C]):
    """Vectors whose elements are members of ``element_domain``; of length ``size`` if set.

    Members are lists, tuples or 1-d numpy arrays; functions receive a read-only numpy array
    of the carrier dtype (``object`` for strings and options).  A lazy duck array (e.g. Dask)
    of atoms is checked by reductions and passed on unmaterialised (see :func:`is_lazy_array`).
    """

    element_domain: Domain[C]
    size: int | None = None

    def __repr__(self) -> str:
        size = "" if self.size is None else f", size={self.size}"
        return f"VectorDomain({self.element_domain!r}{size})"

    @property
    def carrier_type(self) -> str:
        return f"Vec<{self.element_domain.carrier_type}>"

    def _normalize(self, x: object) -> Vec[C]:
        """The one entry point of vector normalisation: route ``x`` by kind, then check size.

        Backend vectors (Dask) are checked lazily by their backend, other duck arrays by
        reductions (:func:`_coerce_lazy_vector`), lists, tuples and numpy arrays eagerly
        (:func:`_coerce_vector`).
        """
        plain = _plain_vector(self.element_domain, x)
        if plain is not None:
            if self.size is not None and len(plain) != self.size:
                raise NotInDomain(f"expected a vector of size {self.size}, got length {len(plain)}")
            return plain
        # pandas/Polars/pyarrow columns: their numpy values take the checks below (the plain
        # path when it applies); a refusal is re-explained naming the column if it was a
        # missing value (the column is then read again, scanning for them)
        column = _frames.as_vector(x, self.element_domain, scan=False)
        if column is not x:
            try:
                return self._normalize(column)
            except NotInDomain:
                _frames.as_vector(x, self.element_domain)  # raises the named refusal, if any
                raise
        arr: npt.NDArray[Any]
        backend = _vector_backend(x)
        if backend is not None and isinstance(self.element_domain, AtomDomain):
            # checked block by block inside the task graph, fused with the chain's own pass
            checked: npt.NDArray[Any] = backend.checked_vector(
                self.element_domain, self.size, x, _coerce_vector
            )
            return checked
        if is_lazy_array(x) and isinstance(self.element_domain, AtomDomain):
            # a duck array stands in for an ndarray from here on (same numpy API)
            arr = _coerce_lazy_vector(self.element_domain, x)
        else:
            arr = _coerce_vector(self.element_domain, x)
            arr.flags.writeable = False
        if self.size is not None and len(arr) != self.size:
            raise NotInDomain(f"expected a vector of size {self.size}, got length {len(arr)}")
        return arr

    def member(self, x: object) -> bool:
        """Whether ``x`` is a member; a Dask vector's blocks are all computed and checked."""
        backend = _vector_backend(x)
        if backend is not None and isinstance(self.element_domain, AtomDomain):
            try:
                backend.force(self._normalize(x))
            except NotInDomain:
                return False
            return True
        return super().member(x)


# -- lazy (chunked) arrays: the one place that knows about array backends other than numpy --


def is_lazy_array(x: object) -> bool:
    """Whether ``x`` is a duck array other than a numpy array (e.g. a Dask array).

    Such arrays implement the numpy API through ``__array_function__``/``__array_ufunc__``;
    vector domains check them with reductions (``min``, ``max``, ``any``), which a chunked
    backend evaluates chunk by chunk, and pass them on without materialising them, so
    numpy-API transformations (clamp, numeric casts, impute_constant) stay lazy.
    """
    return (
        not isinstance(x, np.ndarray)
        and hasattr(x, "__array_function__")
        and hasattr(x, "dtype")
        and hasattr(x, "ndim")
    )


#: An eager vector: a list, a tuple or a 1-d numpy array.
_Eager = npt.NDArray[Any] | list[Any] | tuple[Any, ...]


def _coerce_lazy_vector(element: AtomDomain[Any], x: Any) -> Any:
    """A lazy (duck) array of atoms, checked by reductions and returned unmaterialised."""
    if x.ndim != 1:
        raise NotInDomain(f"expected a 1-d vector, got an array of shape {x.shape}")
    T = element.T
    kind = _check_lazy_dtype(T, x)
    if len(x) == 0:
        return x.astype(carrier_dtype(T))
    if is_int(T):
        _check_int_range(T, x)
    with np.errstate(over="ignore"):
        arr = x.astype(carrier_dtype(T)) if np.dtype(x.dtype) != np.dtype(carrier_dtype(T)) else x
    if is_float(T):
        _check_float_values(element, kind, x, arr)
    _check_vector_bounds(element, arr)
    return arr


def _check_lazy_dtype(T: str, x: Any) -> str:
    """The dtype kind of a lazy array, if it can hold members of carrier ``T``."""
    kind = str(np.dtype(x.dtype).kind)
    if T == "String" or (T == "bool") != (kind == "b") or kind not in "biuf":
        raise NotInDomain(f"inferred element type is {x.dtype}, expected {T}")
    if is_int(T) and kind not in "iu":
        raise NotInDomain(f"inferred element type is {x.dtype}, expected {T}")
    return kind


# The checks below cost one or two reductions on success; only once one fails is the first
# offending element located (``np.argmax`` of the failing mask), so that the refusal names
# its position and value.


def _first(mask: Any, values: Any) -> tuple[int, Any] | None:
    """The position and value of the first ``True`` of ``mask`` (on the failure path only).

    None if a lazy array cannot be indexed by position (e.g. unknown chunk lengths).
    """
    try:
        pos = int(np.argmax(mask))
        value = np.asarray(values[pos]).item()
    except Exception:  # a lazy backend that cannot index by position: name no position
        return None
    return pos, value


def _where(found: tuple[int, Any] | None) -> str:
    return "a value" if found is None else f"position {found[0]}: {found[1]!r}"


def _check_int_range(T: str, a: Any) -> None:
    """Refuse integer data outside the range of ``T`` (one ``min`` and one ``max`` reduction)."""
    lo, hi = int_bounds(T)
    if int(a.min()) < lo or int(a.max()) > hi:
        found = _first((a < lo) | (a > hi), a)
        v = None if found is None else int(found[1])
        wide = "u64" if v is not None and v >= 2**63 else "i64"
        raise NotInDomain(
            f"{_where(found)} is outside the range of {T}: expected {lo} <= x <= {hi}. "
            f"Fix: declare a type that holds it, atom_domain(T={wide!r}), or convert the "
            "column to float (np.asarray(x, dtype=float), series.astype(float)) with "
            "atom_domain(T=float)"
        )


def _plain_vector(element: Domain[Any], x: object) -> npt.NDArray[Any] | None:
    """A read-only view of ``x`` if it is a plain 1-d numpy array already of the carrier dtype
    of an unbounded numeric or bool atom ``element``, holding no NaN it does not admit; else
    None (the general path then checks it and names what is wrong).

    The same checks as :func:`_coerce_vector` on such an array (the cast is the identity, so
    no f32 overflow and no integer out of range), without its per-call dispatch.
    """
    if type(x) is not np.ndarray or x.ndim != 1 or type(element) is not AtomDomain:
        return None
    if element.bounds is not None or element.T == "String" or x.dtype != carrier_dtype(element.T):
        return None
    if x.dtype.kind == "f" and not element.nan:
        # a NaN makes the sum NaN (a false alarm, inf − inf, only sends x to the general path)
        if math.isnan(sum(x.tolist())) if len(x) <= 32 else bool(np.isnan(x).any()):
            return None
    arr = x.view()
    arr.flags.writeable = False
    return arr


def _check_float_values(element: AtomDomain[Any], kind: str, raw: Any, arr: Any) -> None:
    """Refuse an f32 overflow (finite ``raw`` that became infinite) and an unadmitted NaN."""
    if element.T == "f32" and kind == "f" and bool((np.isinf(arr) & np.isfinite(raw)).any()):
        found = _first(np.isinf(arr) & np.isfinite(raw), raw)
        top = float(np.finfo(np.float32).max)
        raise NotInDomain(
            f"{_where(found)} overflows f32: expected |x| <= {top!r}. Fix: declare "
            'atom_domain(T="f64"), or clamp while still f64 (then_clamp(bounds) on an f64 '
            'domain, then then_cast_default(TOA="f32"))'
        )
    if not element.nan and bool(np.isnan(arr).any()):
        found = _first(np.isnan(arr), arr)
        where = "" if found is None else f"position {found[0]}: "
        fix = (
            ""
            if element.bounds is None
            else ". Fix: a bounded domain holds no NaN: drop or fill it before the bounded "
            "step (an f64 domain with nan=True, then_drop_null() or then_impute_constant(v), "
            "then then_clamp(bounds))"
        )
        raise NotInDomain(f"{where}NaN is not a member of {element!r}{fix}")


def _check_vector_bounds(element: AtomDomain[Any], arr: Any) -> None:
    if element.bounds is not None:
        lo_b, hi_b = element.bounds
        if not (bool(arr.min() >= lo_b) and bool(arr.max() <= hi_b)):
            with np.errstate(invalid="ignore"):
                found = _first(~((arr >= lo_b) & (arr <= hi_b)), arr)
            raise NotInDomain(
                f"{_where(found)} is outside the bounds of {element!r}: expected "
                f"{lo_b!r} <= x <= {hi_b!r}. Fix: clamp first: start from "
                f"atom_domain(T={element.T!r}) without bounds and chain "
                f"then_clamp(({lo_b!r}, {hi_b!r})) (values outside move to the nearest bound)"
            )


def _coerce_vector(element: Domain[Any], x: object) -> npt.NDArray[Any]:
    """An eager vector (list, tuple or 1-d numpy array) as a numpy array of the carrier dtype.

    Dispatches by element domain: options, other non-atom domains, strings, then numeric and
    bool atoms (read as one array, then checked by carrier kind and bounds).
    """
    seq = _eager_sequence(element, x)
    if isinstance(element, OptionDomain):
        return _coerce_option_vector(element, seq)
    if not isinstance(element, AtomDomain) or is_temporal(element.T):
        return _coerce_element_vector(element, seq)  # checked one by one, as objects
    if element.T == "String":
        return _coerce_string_vector(element, seq)
    raw = _read_scalars(element, seq)
    if raw.size == 0:
        return np.empty(0, dtype=carrier_dtype(element.T))
    if element.T == "bool":
        if raw.dtype.kind != "b":
            raise NotInDomain(f"expected a vector of bool, got dtype {raw.dtype}")
        return raw.view()
    arr = _int_array(element.T, raw) if is_int(element.T) else _float_array(element, raw)
    _check_vector_bounds(element, arr)
    return arr.view() if arr is raw else arr


def _eager_sequence(element: Domain[Any], x: object) -> _Eager:
    """``x`` if it is a list, a tuple or a 1-d numpy array (not a masked array)."""
    if isinstance(x, np.ma.MaskedArray):
        # its data under the mask is arbitrary: the caller decides what a masked entry means
        raise NotInDomain(
            "a masked array is not a vector: pass x.compressed(), or x.filled(value), or "
            "None for masked entries in an option vector"
        )
    if isinstance(x, np.ndarray):
        if x.ndim != 1:
            raise NotInDomain(f"expected a 1-d vector, got an array of shape {x.shape}")
        return x
    if isinstance(x, list | tuple):
        return x
    raise NotInDomain(f"inferred type is {type(x).__name__}, expected Vec<{element.carrier_type}>")


def _coerce_element_vector(element: Domain[Any], x: _Eager) -> npt.NDArray[Any]:
    """A vector of non-atom elements (maps, bit vectors, ...): each checked by its domain."""
    out = np.empty(len(x), dtype=object)
    for i, v in enumerate(x):
        out[i] = element._normalize(v)
    return out


def _coerce_string_vector(element: AtomDomain[Any], x: _Eager) -> npt.NDArray[Any]:
    if isinstance(x, np.ndarray) and x.dtype.kind == "U":
        # a numpy unicode array holds only str: no per-element check is needed
        return x.astype(object)
    values = list(x)
    if not _all_str(values):
        raise NotInDomain(f"expected a vector of str for {element!r}")
    # the same object array as np.empty + slice assignment, filled about 30% faster
    arr: npt.NDArray[Any] = np.fromiter(values, dtype=object, count=len(values))
    return arr


def _all_str(values: list[Any]) -> bool:
    """Whether every value is a ``str`` (a subclass such as ``numpy.str_`` included).

    ``str.join`` accepts exactly the ``str`` instances and raises ``TypeError`` on anything
    else; joined in slices of 4096 (bounded memory), it checks a value in C, about 2x faster
    than ``isinstance`` per value in Python.

    >>> _all_str(["a", "b"]), _all_str(["a", 1]), _all_str([])
    (True, False, True)
    """
    try:
        for i in range(0, len(values), 4096):
            "".join(values[i : i + 4096])
    except TypeError:
        return False
    return True


def _int_array(T: str, raw: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """A numeric array as carrier ``T`` (an integer type), refusing values out of its range."""
    if raw.dtype.kind not in "iu":
        raise NotInDomain(f"inferred element type is {raw.dtype}, expected {T}")
    # a dtype whose every value fits T (e.g. int64 data for i64) needs no scan of the data
    if not np.can_cast(raw.dtype, carrier_dtype(T)):
        _check_int_range(T, raw)
    return raw.astype(carrier_dtype(T), copy=False)


def _float_array(element: AtomDomain[Any], raw: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """A numeric array as a float carrier, refusing f32 overflow and unadmitted NaN."""
    kind = raw.dtype.kind
    if kind not in "fiu":
        raise NotInDomain(f"inferred element type is {raw.dtype}, expected {element.T}")
    with np.errstate(over="ignore"):
        arr = raw.astype(carrier_dtype(element.T), copy=False)
    _check_float_values(element, kind, raw, arr)
    return arr


def _read_scalars(element: AtomDomain[Any], x: Any) -> npt.NDArray[Any]:
    """A list, tuple or array of scalars for a numeric or bool ``element``, as a 1-d array.

    Cells are read by value: a bool is refused unless ``T`` is bool (bool is a subclass of
    int), and cells numpy cannot hold in a numeric dtype (``None``, strings, Python ints
    beyond 64 bits) are checked one by one, so the error names the position and the value.
    """
    T = element.T
    if isinstance(x, np.ndarray) and x.dtype.kind == "O":
        # an object array (e.g. the non-missing part of an option vector) is read by value
        x = x.tolist()
    if isinstance(x, list | tuple):
        _refuse_mixed_bools(element, x)
    try:
        raw = np.asarray(x)
    except (ValueError, OverflowError):  # ragged: some cell is not a scalar
        raw = np.empty(len(x), dtype=object)
    if raw.ndim != 1:
        raise NotInDomain(f"expected a 1-d vector of {T}, got shape {raw.shape}")
    if raw.dtype.kind in "OUS":
        raw = _read_cells(T, x)
    return raw


def _refuse_mixed_bools(element: AtomDomain[Any], x: list[Any] | tuple[Any, ...]) -> None:
    """Bool is a subclass of int: a stray ``True`` must not pass as the integer 1 (or back)."""
    if any(isinstance(v, (bool, np.bool_)) for v in x):
        for i, v in enumerate(x):
            if (element.T == "bool") != isinstance(v, (bool, np.bool_)):
                raise NotInDomain(f"position {i}: {v!r} is not a member of {element!r}")


def _read_cells(T: str, x: Any) -> npt.NDArray[Any]:
    """Cells numpy cannot hold in a numeric dtype, checked one by one (the error names one)."""
    cells = []
    for i, v in enumerate(x):
        try:
            cells.append(_coerce_scalar(T, v))
        except NotInDomain as e:
            raise NotInDomain(f"position {i}: {e}") from None
    return np.array(cells, dtype=carrier_dtype(T))


def _coerce_option_vector(element: OptionDomain[Any], x: Any) -> npt.NDArray[Any]:
    """A vector of options: an object array of ``None`` and Python scalars of the inner type.

    The non-missing values are checked together (vectorised) by the inner vector check.
    """
    out = np.empty(len(x), dtype=object)
    out[:] = list(x)
    missing = np.asarray(np.equal(out, np.array(None)), dtype=np.bool_)
    present = out[~missing]
    inner = element.element_domain
    if present.size:
        vals = _coerce_vector(inner, present)
        out[~missing] = vals.tolist() if vals.dtype != object else vals
    return out


def vector_domain(atom_domain: Domain[C], size: int | None = None) -> VectorDomain[C]:
    """The domain of vectors of elements from ``atom_domain``, of known ``size`` if given.

    >>> vector_domain(atom_domain(T=int), size=10)
    VectorDomain(AtomDomain(T=i32), size=10)

    Raises:
        InvalidParameter: if ``size`` is negative or not an integer.
    """
    if size is not None:
        size = check_int("size", size, min=0, what="a non-negative int or None")
    if not isinstance(atom_domain, Domain):
        raise InvalidParameter(f"atom_domain must be a Domain, got {atom_domain!r}")
    return VectorDomain(atom_domain, size)


@dataclass(frozen=True)
class OptionDomain(Domain["C | None"], Generic[C]):
    """Values of ``element_domain``, or ``None`` (a missing value)."""

    element_domain: Domain[C]

    def __repr__(self) -> str:
        return f"OptionDomain({self.element_domain!r})"

    @property
    def carrier_type(self) -> str:
        return f"Option<{self.element_domain.carrier_type}>"

    def _normalize(self, x: object) -> C | None:
        return None if x is None else self.element_domain._normalize(x)


def option_domain(element_domain: Domain[C], D: object = None) -> OptionDomain[C]:
    """Values of ``element_domain`` or ``None``.

    >>> option_domain(atom_domain(T=float)).member(None)
    True
    """
    return OptionDomain(element_domain)


@dataclass(frozen=True)
class MapDomain(Domain[Mapping[K, V]], Generic[K, V]):
    """Dictionaries whose keys are in ``key_domain`` and values in ``value_domain``."""

    key_domain: Domain[K]
    value_domain: Domain[V]

    def __repr__(self) -> str:
        return (
            f"MapDomain {{ key_domain: {self.key_domain!r}, value_domain: {self.value_domain!r} }}"
        )

    @property
    def carrier_type(self) -> str:
        return f"HashMap<{self.key_domain.carrier_type}, {self.value_domain.carrier_type}>"

    def _normalize(self, x: object) -> Mapping[K, V]:
        if not isinstance(x, Mapping):
            raise NotInDomain(f"inferred type is {type(x).__name__}, expected {self.carrier_type}")
        return {
            self.key_domain._normalize(k): self.value_domain._normalize(v) for k, v in x.items()
        }


def map_domain(key_domain: Domain[K], value_domain: Domain[V]) -> MapDomain[K, V]:
    """Dictionaries from ``key_domain`` to ``value_domain``.

    >>> map_domain(atom_domain(T=str), atom_domain(T=int)).member({"a": 1})
    True
    """
    return MapDomain(key_domain, value_domain)


class ExtrinsicDomain(Domain[Any]):
    """A domain defined outside the library (OpenDP's class for what ``user_domain`` returns).

    ``isinstance(dp.user_domain(...), ExtrinsicDomain)`` holds, as in OpenDP 0.16.
    """

    __slots__ = ()


@dataclass(frozen=True)
class UserDomain(ExtrinsicDomain):
    """A user-defined domain: membership by a predicate, equality by identifier and descriptor."""

    identifier: str
    member_fn: Callable[[Any], bool] = field(compare=False, repr=False)
    descriptor: Any = None

    def __repr__(self) -> str:
        return str(self.identifier)  # as OpenDP prints a user domain

    @property
    def carrier_type(self) -> str:
        return "ExtrinsicObject"

    def _normalize(self, x: object) -> Any:
        if not self.member_fn(x):
            raise NotInDomain(f"{x!r} is not a member of {self!r}")
        return x


def user_domain(
    identifier: str, member: Callable[[Any], bool], descriptor: Any = None
) -> UserDomain:
    """A domain defined by a membership predicate.

    >>> evens = user_domain("Evens", lambda x: isinstance(x, int) and x % 2 == 0)
    >>> evens.member(4), evens.member(3)
    (True, False)
    """
    return UserDomain(identifier, member, descriptor)


#: lazy frames whose declared columns were checked cell by cell, by identity (a Dask frame's
#: ``==`` is elementwise): id(frame) -> (a weak reference to it, the columns checked)
_CHECKED_FRAMES: dict[int, tuple[weakref.ref[Any], frozenset[Any]]] = {}


def _force_declared_columns(
    backend: Backend, frame: Any, columns: tuple[tuple[Any, VectorDomain[Any]], ...]
) -> None:
    """Check every cell of a lazy frame's declared columns now (``NotInDomain`` naming the
    column, before any randomness), so that whether a later query on the frame fails never
    depends on one record.  A frame object already checked for these columns is not read again.
    """
    key = id(frame)
    entry = _CHECKED_FRAMES.get(key)
    done = entry[1] if entry is not None and entry[0]() is frame else frozenset()
    todo = [(k, v) for k, v in columns if (k, v) not in done]
    for name, _ in todo:
        if name not in frame.columns:
            have = list(frame.columns)
            raise NotInDomain(f"the dataframe has no column {name!r}; columns: {have}")
    if todo:  # one pass over the frame for every column

        def check(partition: Any) -> None:
            for name, vd in todo:
                vd._normalize(partition[name])

        backend.force_frame(frame, check)
    if todo:

        def forget(_: object) -> None:
            _CHECKED_FRAMES.pop(key, None)

        try:
            ref = weakref.ref(frame, forget)
        except TypeError:  # not weakly referenceable: checked every time
            return
        _CHECKED_FRAMES[key] = (ref, done | frozenset(todo))


@dataclass(frozen=True)
class DataFrameDomain(Domain[Mapping[Any, Any]]):
    """Dataframes: a ``dict`` from column names of carrier ``K`` to equal-length columns.

    A column is a list, tuple or 1-d numpy array (not a masked array); a dataset's *records*
    are its rows, so the dataset metrics (symmetric distance, ...) count rows.  Functions
    receive a ``dict`` of read-only 1-d numpy arrays (``object`` dtype for strings).

    ``columns`` (set by constructors such as ``make_select_column``) declares typed columns:
    pairs ``(name, vector_domain)``.  A member must have each declared column, and every cell
    of it must be a member of the vector domain's elements; the column is normalised to that
    vector domain, so a bad cell is refused with ``NotInDomain`` naming the column, the
    position and the value, before any function runs.  As in OpenDP, whose
    ``DataFrameDomain<K>`` carries no column types, the declared columns are not part of the
    domain's equality or repr, so a dataframe producer still chains into a column consumer.
    A column declared by both sides of a join (a chain, a query sent to a compositor, a
    grouped release) must be declared the same: otherwise the join is refused when it is
    built, naming the column and its two types (``Domain._conflict``), so a query whose
    column types differ from the data's declared schema never reaches the data.
    """

    K: str = "String"
    columns: tuple[tuple[Any, VectorDomain[Any]], ...] = field(
        default=(), compare=False, repr=False
    )

    def __repr__(self) -> str:
        return f'DataFrameDomain("{self.K}")'

    @property
    def carrier_type(self) -> str:
        return f"HashMap<{self.K}, Column>"

    def _declaring(self, other: Domain[Any]) -> Domain[Any]:
        # a partition's groups are frames too: their declared columns are those of its part
        part = other if isinstance(other, DataFrameDomain) else getattr(other, "part_domain", None)
        if not isinstance(part, DataFrameDomain):
            return self
        ours = dict(self.columns)
        extra = tuple((k, v) for k, v in part.columns if k not in ours)
        if not extra:
            return self
        return DataFrameDomain(self.K, columns=self.columns + extra)

    def _conflict(self, other: Domain[Any]) -> tuple[object, Any, Any] | None:
        if not isinstance(other, DataFrameDomain) or not self.columns:
            return None
        ours = dict(self.columns)
        for name, theirs in other.columns:
            if name in ours and ours[name] != theirs:
                return f"column {name!r}", ours[name], theirs
        return None

    def _normalize(self, x: object) -> Mapping[Any, Any]:
        x = _frames.as_frame(x)  # pandas/Polars DataFrames, pyarrow Tables: dicts of columns
        backend = _frame_backend(x)
        if backend is not None:
            # a lazy dataframe: names checked now; the declared columns' cells now too (one
            # pass, where the data enters, remembered for this frame object), the others when a
            # vector domain reads them
            frame: Mapping[Any, Any] = backend.checked_frame(self.K, x, _coerce_scalar)
            if self.columns:
                _force_declared_columns(backend, frame, self.columns)
            return frame
        if not isinstance(x, Mapping):
            raise NotInDomain(f"inferred type is {type(x).__name__}, expected a dataframe (dict)")
        typed = dict(self.columns)
        for name in typed:
            if name not in x:
                raise NotInDomain(f"the dataframe has no column {name!r}; columns: {list(x)}")
        out: dict[Any, npt.NDArray[Any]] = {}
        length: int | None = None
        for k, col in x.items():
            key = _coerce_scalar(self.K, k)
            arr = _coerce_column(k, col) if key not in typed else _typed_column(k, typed[key], col)
            if length is not None and len(arr) != length:
                raise NotInDomain(
                    f"columns of a dataframe must have equal lengths: {k!r} has {len(arr)}, "
                    f"expected {length}"
                )
            length = len(arr)
            arr.flags.writeable = False
            out[key] = arr
        return out


def _typed_column(name: object, dom: VectorDomain[Any], col: object) -> npt.NDArray[Any]:
    """A declared column, normalised by its vector domain cell by cell (bools, ``None``,
    strings, huge ints and masked arrays are refused, naming the column and the position)."""
    try:
        return np.asarray(dom._normalize(col))
    except NotInDomain as e:
        raise NotInDomain(f"column {name!r}: {e}") from None


def _coerce_column(name: object, col: object) -> npt.NDArray[Any]:
    if isinstance(col, np.ndarray):
        if isinstance(col, np.ma.MaskedArray):
            raise NotInDomain(
                f"column {name!r} is a masked array (its data under the mask is arbitrary): "
                "pass col.filled(value), e.g. NaN in a float column"
            )
        if col.ndim != 1:
            raise NotInDomain(f"column {name!r} must be 1-d, got shape {col.shape}")
        return col.astype(object) if col.dtype.kind == "U" else col.view()
    if not isinstance(col, list | tuple):
        raise NotInDomain(f"column {name!r} must be a list or 1-d array, got {type(col).__name__}")
    if any(isinstance(v, str) for v in col):
        # keep values as they are: numpy would silently turn [1, "a"] into strings
        arr = np.empty(len(col), dtype=object)
        arr[:] = list(col)
        return arr
    try:
        arr = np.asarray(col)
    except (ValueError, OverflowError) as e:
        raise NotInDomain(f"column {name!r} is not a vector: {e}") from None
    if arr.ndim != 1:
        raise NotInDomain(f"column {name!r} must be 1-d, got shape {arr.shape}")
    return arr


def dataframe_domain(
    K: object = str, columns: Mapping[Any, object] | None = None
) -> DataFrameDomain:
    """Dataframes keyed by column names of type ``K``: ``dict[K, list | ndarray]``.

    ``columns`` (an opendp_lite extension) declares the type of the cells of some columns,
    ``{name: T}``, as ``make_select_column(name, TOA=T)`` reads them (a float column admits
    NaN): a member's every cell of them is checked where the data enters, and a query that
    reads one as another type is refused when it is built (see docs/context.md).

    >>> dataframe_domain(str)
    DataFrameDomain("String")
    >>> dataframe_domain().member({"age": [30, 41], "name": ["a", "b"]})
    True
    >>> dataframe_domain().member({"age": [30, 41], "name": ["a"]})
    False
    >>> dataframe_domain(columns={"age": int}).member({"age": [30, None]})
    False

    Raises:
        NotImplementedForType: if ``K`` or a column type is not a supported carrier.
        InvalidParameter: if a column name is not of type ``K``.
    """
    key = carrier_name(K)
    declared = []
    for name, T in (columns or {}).items():
        try:
            name = atom_domain(T=key, nan=False)._normalize(name)
        except NotInDomain as e:
            raise InvalidParameter(f"columns: a name must be of type K={key}: {e}") from None
        t = carrier_name(T)
        declared.append((name, vector_domain(atom_domain(T=t, nan=True if is_float(t) else None))))
    return DataFrameDomain(key, columns=tuple(declared))


@dataclass(frozen=True)
class CategoricalDomain(Domain[str]):
    """Strings from a finite, ordered set of ``categories`` (any string when it is None).

    OpenDP 0.16's ``CategoricalDomain``.  Vectors of it are checked element by element, so a
    string outside the categories is refused with ``NotInDomain`` before anything runs.
    """

    categories: tuple[str, ...] | None = None
    T = "String"

    def __repr__(self) -> str:
        cats = "None" if self.categories is None else repr(list(self.categories))
        return f"CategoricalDomain(categories={cats})"

    @property
    def carrier_type(self) -> str:
        return "String"

    def _normalize(self, x: object) -> str:
        if not isinstance(x, str):
            raise NotInDomain(f"{x!r} is not a string, so not a member of {self!r}")
        if self.categories is not None and x not in self.categories:
            raise NotInDomain(f"{x!r} is not one of the categories of {self!r}")
        return x


def categorical_domain(categories: Sequence[str] | None = None) -> CategoricalDomain:
    """The domain of strings in ``categories`` (an ordered set), or of all strings if None.

    As OpenDP 0.16's ``dp.categorical_domain``; usable as the element domain of
    ``vector_domain`` for ``make_count_by_categories`` and ``make_count_by``.

    >>> dom = categorical_domain(["low", "high"])
    >>> dom.member("low"), dom.member("mid"), dom
    (True, False, CategoricalDomain(categories=['low', 'high']))

    Raises:
        InvalidParameter: if a category is not a string or the categories repeat.
    """
    if categories is None:
        return CategoricalDomain(None)
    if isinstance(categories, str) or not all(isinstance(c, str) for c in categories):
        raise InvalidParameter(f"categories must be a sequence of strings, got {categories!r}")
    cats = tuple(categories)
    if len(set(cats)) != len(cats):
        raise InvalidParameter(f"categories must be distinct, got {list(cats)!r}")
    return CategoricalDomain(cats)
