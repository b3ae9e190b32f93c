"""The core algebra: domains, metrics and measures; functions, transformations, measurements.

A :class:`Transformation` is a function together with a *stability map*: if two inputs are
``d_in``-close under the input metric, their images are ``map(d_in)``-close under the output
metric.  A :class:`Measurement` is a randomised function together with a *privacy map*: the
privacy loss (in the output measure) between the output laws on two ``d_in``-close inputs is
at most ``map(d_in)``.

Both are generic in their carriers and distance types, so mypy checks a chain built with
``>>`` before anything runs; the runtime checks domain and metric *values* as well (bounds and
sizes are not types).

>>> import opendp_lite.prelude as dp
>>> dp.enable_features("honest-but-curious")
>>> space = dp.atom_domain(T=int), dp.absolute_distance(T=int)
>>> double = dp.t.make_user_transformation(*space, *space, lambda x: 2 * x, lambda d: 2 * d)
>>> (double >> double).map(1)
4
>>> (double >> double)(5)
20
>>> (double >> double).check(d_in=1, d_out=3)
False
"""

from __future__ import annotations

import contextvars
import itertools
import math
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Any, Generic, NoReturn, Protocol, TypeVar, cast, overload

from ._registry import constructor
from ._validate import is_real_value
from .errors import (
    DomainMismatch,
    FailedFunction,
    FailedMap,
    FeatureNotEnabled,
    InfiniteLoss,
    MetricMismatch,
    NotInDomain,
    QueryableError,
)

__all__ = [
    "Absorbing",
    "Deferred",
    "Domain",
    "Function",
    "Measure",
    "Measurement",
    "Metric",
    "PartialMeasurement",
    "PartialTransformation",
    "Queryable",
    "Transformation",
    "as_array",
    "assert_features",
    "check_fits",
    "compose",
    "disable_features",
    "enable_features",
    "invoke_private",
    "make_chain_mt",
    "make_chain_pm",
    "make_chain_tt",
    "new_function",
    "new_queryable",
]

T = TypeVar("T")
U = TypeVar("U")
V = TypeVar("V")
D = TypeVar("D")
Q = TypeVar("Q")
TI = TypeVar("TI")
TO = TypeVar("TO")
DI = TypeVar("DI")
DO = TypeVar("DO")
MO = TypeVar("MO")
DU = TypeVar("DU")
A = TypeVar("A")
R = TypeVar("R")
if TYPE_CHECKING:
    from typing_extensions import deprecated
else:  # typing only: the run-time check in Measurement.__rshift__ raises TypeError

    def deprecated(message: str) -> Callable[[T], T]:
        return lambda f: f


_L_contra = TypeVar("_L_contra", contravariant=True)
_R_co = TypeVar("_R_co", covariant=True)


class _Then(Protocol[_L_contra, _R_co]):
    """Typing only: a partial whose result type depends on what it is chained after.

    ``left >> partial`` is typed ``partial._after(left)``; at run time ``_after(left)`` is
    ``left >> partial``, the ordinary path.
    """

    def _after(self, left: _L_contra) -> _R_co: ...


class _OnSpace(Protocol[T, D, U, Q]):
    """Typing only: a partial measurement typed by the space it is built on (``__rrshift__``).

    ``left >> partial`` is typed by ``partial.__rrshift__`` on ``left``'s output space, so a
    pattern (the noise mechanisms of ``_spine.py``) declares its carrier table once.
    """

    def __rrshift__(self, other: tuple[Domain[T], Metric[D]]) -> Measurement[Any, U, Any, Q]: ...


class _OnSpaceT(Protocol[T, D, U, Q]):
    """Typing only: :class:`_OnSpace` for a partial transformation (``_spine``'s fold)."""

    def __rrshift__(self, other: tuple[Domain[T], Metric[D]]) -> Transformation[Any, U, Any, Q]: ...


# ----------------------------------------------------------------------------------------------
# Feature flags


_FEATURES: set[str] = set()
_KNOWN_FEATURES = frozenset(
    {
        "contrib",
        "floating-point",
        "honest-but-curious",
        "idealized-numerics",
        "random-dp",
        "rust-stack-trace",
    }
)


def enable_features(*features: str) -> None:
    """Opt in to features that weaken or change what a guarantee rests on.

    * ``"contrib"``: accepted for compatibility with OpenDP; no constructor needs it here.
    * ``"floating-point"`` and its OpenDP 0.16 name ``"idealized-numerics"``: accepted for
      compatibility with OpenDP (maps here already account for float rounding).
    * ``"rust-stack-trace"``: accepted for compatibility with OpenDP; has no effect.
    * ``"honest-but-curious"``: user-defined functions and maps are trusted as written.
    * ``"random-dp"``: random-DP (sensitivity-sampled) measurements may be composed with
      worst-case DP measurements.

    >>> enable_features("contrib")
    """
    for f in features:
        if f not in _KNOWN_FEATURES:
            import difflib

            close = difflib.get_close_matches(str(f), sorted(_KNOWN_FEATURES), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise FeatureNotEnabled(
                f"unknown feature {f!r}; known: {sorted(_KNOWN_FEATURES)}{hint}"
            )
    _FEATURES.update(features)


def disable_features(*features: str) -> None:
    """Withdraw features enabled by :func:`enable_features`."""
    _FEATURES.difference_update(features)


#: True while ``deserialize`` rebuilds a document that its reader did not vouch for
#: (``trust_claims=False``, the default).  The claims that "honest-but-curious" admits (a user's
#: map, a stated sensitivity or distance) are then refused whatever the enabled features, so that
#: no document can lower a map by what it asserts (docs/serialization.md).
_UNTRUSTED_DOCUMENT: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "_UNTRUSTED_DOCUMENT", default=False
)


def assert_features(*features: str) -> None:
    """Raise :class:`FeatureNotEnabled` unless every feature named is enabled.

    Inside ``deserialize(text)`` of an untrusted document "honest-but-curious" is never
    granted: a claim taken on trust must come from the reader, not from the document.
    """
    missing = [f for f in features if f not in _FEATURES]
    if missing:
        quoted = ", ".join('"' + f + '"' for f in missing)  # as OpenDP spells the fix
        raise FeatureNotEnabled(
            f"this constructor requires the feature(s) {missing}; "
            f"opt in with enable_features({quoted})"
        )
    if "honest-but-curious" in features and _UNTRUSTED_DOCUMENT.get():
        raise FeatureNotEnabled(
            "the document asserts a claim that only 'honest-but-curious' admits (a user's map, "
            "a stated sensitivity or distance), and a document must not lower a map by what it "
            "asserts. Fix: if you wrote the document, deserialize(text, trust_claims=True)"
        )


# ----------------------------------------------------------------------------------------------
# Domains, metrics and measures


_DescriptorT = TypeVar("_DescriptorT")


def _cast_descriptor(owner: object, kind: str, type_: type[_DescriptorT]) -> _DescriptorT:
    """OpenDP's ``.cast(type_)``: the descriptor of a user-defined domain, metric or measure
    as ``type_``, or an error."""
    from .errors import InvalidParameter

    descriptor = getattr(owner, "descriptor", None)
    if not isinstance(descriptor, type_):
        raise InvalidParameter(
            f"{kind} descriptor must be a {type_.__name__}, found {owner!r}. Fix: cast to the "
            "type of the descriptor given to its constructor"
        )
    return descriptor


class Domain(Generic[T]):
    """A set of values of carrier type ``T``.

    Subclasses are frozen dataclasses, so domains compare structurally.  ``member(x)`` tells
    whether ``x`` is in the domain; ``_normalize(x)`` returns the canonical representation
    (e.g. a numpy array for vectors) or raises :class:`~opendp_lite.errors.NotInDomain`.
    """

    def cast(self, type_: type[_DescriptorT]) -> _DescriptorT:
        """The descriptor of a user-defined domain as ``type_`` (OpenDP's ``Domain.cast``).

        Raises:
            InvalidParameter: if the domain has no descriptor of that type.
        """
        return _cast_descriptor(self, "domain", type_)

    def member(self, x: object) -> bool:
        """Whether ``x`` is a member of this domain."""
        from .errors import NotInDomain

        try:
            self._normalize(x)
        except NotInDomain:
            return False
        return True

    def _normalize(self, x: object) -> T:  # pragma: no cover - abstract
        raise NotImplementedError

    def _declaring(self, other: Domain[Any]) -> Domain[Any]:
        """This domain, also declaring what ``other`` declares of the same data and this one
        leaves open (a dataframe domain: the columns ``other`` types); ``self`` by default."""
        return self

    def _conflict(self, other: Domain[Any]) -> tuple[object, Any, Any] | None:
        """A part ``other`` declares otherwise than this domain: ``(where, ours, theirs)``.

        Equality leaves some declarations out (a dataframe domain's column types, as in
        OpenDP), so a step whose input domain is equal to this one may still check its data
        against a narrower type.  Such a conflict is read from the two domains alone, so it
        is refused when the chain or query is built (:func:`check_fits`); None if there is
        none (the default: nothing is left out of equality).
        """
        return None

    @property
    def carrier_type(self) -> str:
        """The OpenDP name of the carrier, e.g. ``"f64"`` or ``"Vec<i32>"``."""
        raise NotImplementedError  # pragma: no cover - abstract


class Metric(Generic[D]):
    """A distance between members of a domain, with distance type ``D``.

    ``_check_distance(d)`` validates a distance (finite, non-negative, of the right type).
    """

    @property
    def distance_type(self) -> str:
        """The distance type as OpenDP names it (a subclass overrides it, by a class attribute
        or a property)."""
        return "u32"

    def _check_distance(self, d: object) -> D:
        return _check_distance(self, d, self.distance_type)  # type: ignore[return-value]

    def cast(self, type_: type[_DescriptorT]) -> _DescriptorT:
        """The descriptor of a user-defined metric as ``type_`` (OpenDP's ``Metric.cast``).

        Raises:
            InvalidParameter: if the metric has no descriptor of that type.
        """
        return _cast_descriptor(self, "metric", type_)


class Measure(Generic[Q]):
    """A privacy measure: the unit of privacy loss, with loss type ``Q``."""

    @property
    def distance_type(self) -> str:
        """The loss type as OpenDP names it (a subclass overrides it, by a class attribute or a
        property)."""
        return "f64"

    def _check_loss(self, d: object) -> Q:
        """Validate a privacy loss (a ``d_out``, or a map's result)."""
        return _check_distance(self, d, self.distance_type)  # type: ignore[return-value]

    def _le(self, a: Q, b: Q) -> bool:
        """Whether loss ``a`` is at most loss ``b``."""
        return bool(a <= b)  # type: ignore[operator]

    def cast(self, type_: type[_DescriptorT]) -> _DescriptorT:
        """The descriptor of a user-defined measure as ``type_`` (OpenDP's ``Measure.cast``).

        Raises:
            InvalidParameter: if the measure has no descriptor of that type.
        """
        return _cast_descriptor(self, "measure", type_)


def _check_distance(owner: object, d: object, distance_type: str) -> int | float:
    """Validate a scalar distance: a real number, not NaN, finite and ``>= 0``."""
    import numpy as np

    if not is_real_value(d):
        raise FailedMap(f"distance must be a number for {owner!r}, got {type(d).__name__} {d!r}")
    if distance_type.startswith(("i", "u")) and not isinstance(d, (int, np.integer)):
        if not float(d).is_integer():
            raise FailedMap(f"distance for {owner!r} must be an integer, got {d!r}")
        d = int(d)
    if isinstance(d, (np.integer, np.floating)):
        d = d.item()
    if isinstance(d, float) and not math.isfinite(d):
        nan = " (NaN is not comparable)" if d != d else ""
        raise FailedMap(f"distance must be finite for {owner!r}, got {d!r}{nan}")
    if d < 0:
        raise FailedMap(f"distance must be >= 0 for {owner!r}, got {d!r}")
    return d


# ----------------------------------------------------------------------------------------------
# Functions


class Function(Generic[TI, TO]):
    """A (possibly randomised) function, used for post-processing.

    >>> double = Function(lambda x: 2 * x)
    >>> double(3)
    6
    """

    # ``_record``: the constructor call that built this object (set by ``serialization``)
    __slots__ = ("_record", "function")

    def __init__(self, function: Callable[[TI], TO]) -> None:
        self.function = function

    def __call__(self, arg: TI) -> TO:
        return self.function(arg)

    def __repr__(self) -> str:
        return f"Function({getattr(self.function, '__name__', 'function')})"


@constructor
def new_function(function: Callable[[TI], TO], TO: object = None) -> Function[TI, TO]:
    """Wrap a Python callable as a :class:`Function` (``TO`` is accepted for OpenDP parity)."""
    return Function(function)


def _type_name(name: str) -> str:
    """A type name as an OpenDP type descriptor (a ``RuntimeType`` for generic types)."""
    from .typing import RuntimeType

    try:
        return RuntimeType.parse(name)
    except Exception:
        return name


class Deferred(Generic[TI, TO]):
    """A function ``x ↦ finish(inner(x))`` whose last, row-by-row step the next may take over.

    ``step`` names ``finish`` (e.g. ``("clip", lo, hi)`` for a clamp).  Called, it computes
    ``finish(inner(x))``; chained before an :class:`Absorbing` function that absorbs ``step``
    (see :func:`compose`), ``finish`` is never run on its own: the aggregate applies it to each
    cache-sized piece, and the intermediate vector is never written.
    """

    __slots__ = ("finish", "inner", "step")

    def __init__(
        self,
        step: tuple[Any, ...],
        finish: Callable[[Any], TO],
        inner: Callable[[TI], Any] | None = None,
    ) -> None:
        self.step = step
        self.finish = finish
        self.inner = inner

    def __call__(self, arg: TI) -> TO:
        return self.finish(arg if self.inner is None else self.inner(arg))


class Absorbing(Generic[TI, TO]):
    """A function that can take over the deferred last step of the function chained before it.

    ``absorb(step)`` returns ``g`` with ``g(y) == function(finish(y))`` for every ``y`` (the
    ``finish`` that ``step`` names), or ``None`` if it cannot.
    """

    __slots__ = ("absorb", "function")

    def __init__(
        self,
        function: Callable[[TI], TO],
        absorb: Callable[[tuple[Any, ...]], Callable[[Any], TO] | None],
    ) -> None:
        self.function = function
        self.absorb = absorb

    def __call__(self, arg: TI) -> TO:
        return self.function(arg)


def invoke_private(query: Any, data: Any) -> Any:
    """``query.invoke(data)`` inside an interactive release (a compositor, a privacy filter):
    the analyst chose the query and sees what it raises, so a failure is re-raised without
    its message.

    The data owner's boundary is where the data enters (building the compositor, calling a
    measurement directly); there a refusal may name a value and a position.  A query runs
    on data that boundary has already checked against the compositor's input domain, and
    :func:`check_fits` refuses, when it is submitted, a query that declares a column type
    the domain declares otherwise; what still fails here depends on the data, so neither the
    value, nor the position, nor the original message is passed on (and no exception is
    chained: ``__cause__`` and ``__context__`` are empty).  ``NotInDomain`` stays a
    ``NotInDomain``, an error whose class sets ``withheld_keeps_class`` (the randomness
    source's failure) keeps its class; anything else (a user function's error, a worker
    crash) becomes a ``FailedFunction``.  ``QueryableError`` (budget, re-entrancy) is raised
    by the queryables themselves and passes unchanged.
    """
    try:
        return query.invoke(data)
    except QueryableError:
        raise
    except Exception as e:  # every failure on private data is withheld
        kind: type[Exception] = FailedFunction
        if isinstance(e, NotInDomain):
            kind = NotInDomain
        elif getattr(type(e), "withheld_keeps_class", False):  # e.g. RandomnessError
            kind = type(e)
    raise kind(
        "the query failed while it ran on the private data; the reason is withheld from the "
        "analyst, as it may name a record. Fix (analyst): build the query on the column types "
        "the context declares (its schema); (data owner): call the measurement on the data "
        "yourself to see the reason"
    )


def compose(f1: Callable[[U], TO], f0: Callable[[TI], U]) -> Callable[[TI], TO]:
    """``f1 ∘ f0``; fused when ``f1`` absorbs the deferred last step of ``f0``.

    The result equals ``f1(f0(x))`` for every ``x`` in each case (see :class:`Deferred` and
    :class:`Absorbing`); only the work done differs.
    """
    if isinstance(f0, Deferred) and isinstance(f1, Absorbing):
        fused = f1.absorb(f0.step)
        if fused is not None:
            inner0 = f0.inner
            return fused if inner0 is None else lambda x: fused(inner0(x))
    if isinstance(f1, Deferred):  # keep f1's last step deferred for what follows
        inner1 = f1.inner
        return Deferred(f1.step, f1.finish, f0 if inner1 is None else lambda x: inner1(f0(x)))
    return lambda x: f1(f0(x))


# ----------------------------------------------------------------------------------------------
# Transformations


def _holds_array(arg: object) -> bool:
    """Whether the caller passed an array (numpy, Dask, ...) rather than Python values (a
    numpy scalar counts as a value, as in OpenDP)."""
    if getattr(arg, "shape", None) == ():
        return False
    if hasattr(arg, "__array__") or hasattr(arg, "dtype"):
        return True
    if isinstance(arg, dict):
        return any(hasattr(v, "__array__") or hasattr(v, "dtype") for v in arg.values())
    return False


_PLAIN = frozenset({float, int, bool, str, type(None)})


def _as_list_for(arg: object, out: T) -> T:
    """``out`` as Python values if ``arg`` held no array: a 1-d numpy array as a list, a numpy
    scalar (e.g. a category drawn from an array) as a Python scalar.

    Only the outermost call converts: chains compose the functions, which pass numpy on.
    """
    if type(out) in _PLAIN:  # a Python scalar (never a numpy type): nothing to convert
        return out
    if type(out) is type(arg) and getattr(arg, "ndim", None) != 0:
        return out  # an array for an array, a list for a list (a numpy scalar, ndim 0, is not)
    import numpy as np

    value: Any = out
    if isinstance(value, (np.ndarray, np.generic)) and not _holds_array(arg):
        if type(value) is np.ndarray and value.ndim == 1:
            return value.tolist()  # type: ignore[no-any-return]
        if isinstance(value, np.generic):
            return value.item()  # type: ignore[no-any-return]
    return out


def _check_result(check: Callable[[object], Any], d_out: object, what: str) -> Any:
    """Validate a map's result: a map that returns NaN, a negative or a non-number fails."""
    try:
        return check(d_out)
    except FailedMap as e:
        raise FailedMap(f"{what} returned an invalid value: {e}") from e


class _InputTypes:
    """The input types of a transformation or measurement, as OpenDP names them."""

    __slots__ = ()
    input_domain: Domain[Any]
    input_metric: Metric[Any]

    @property
    def input_carrier_type(self) -> str:
        """The input carrier type as OpenDP names it, e.g. ``"Vec<i32>"``."""
        return _type_name(self.input_domain.carrier_type)

    @property
    def input_distance_type(self) -> str:
        """The type of ``d_in``, e.g. ``"u32"``."""
        return _type_name(self.input_metric.distance_type)


class Transformation(_InputTypes, Generic[TI, TO, DI, DO]):
    """A stable function from ``input_domain`` to ``output_domain``.

    Type parameters: input carrier ``TI``, output carrier ``TO``, input distance ``DI``,
    output distance ``DO``.  ``map(d_in)`` bounds the output distance of ``d_in``-close inputs.
    """

    __slots__ = (
        "_record",  # the constructor call that built this object (set by ``serialization``)
        "function",
        "input_domain",
        "input_metric",
        "keeps_cells",
        "output_domain",
        "output_metric",
        "stability_map",
    )

    def __init__(
        self,
        input_domain: Domain[TI],
        input_metric: Metric[DI],
        output_domain: Domain[TO],
        output_metric: Metric[DO],
        function: Callable[[TI], TO],
        stability_map: Callable[[DI], DO],
    ) -> None:
        self.input_domain = input_domain
        self.input_metric = input_metric
        self.output_domain = output_domain
        self.output_metric = output_metric
        self.function = function
        self.stability_map = stability_map
        self.keeps_cells = False
        """Whether every cell of the output is a cell of the input, unchanged (a filter or a
        partition of rows): a chain then declares the next step's column types on its own
        input domain, so they are checked where the data enters (:func:`make_chain_tt`)."""

    @property
    def input_space(self) -> tuple[Domain[TI], Metric[DI]]:
        return self.input_domain, self.input_metric

    @property
    def output_space(self) -> tuple[Domain[TO], Metric[DO]]:
        return self.output_domain, self.output_metric

    @property
    def output_distance_type(self) -> str:
        """The type of ``d_out``, e.g. ``"f64"``."""
        return _type_name(self.output_metric.distance_type)

    def invoke(self, arg: TI) -> TO:
        """Apply the function, after checking that ``arg`` is in the input domain.

        As in OpenDP, a vector output is a Python list (a scalar a Python scalar) when ``arg``
        holds no array (a list, a string, a dict of lists); numpy in gives numpy out, and a lazy
        array stays lazy.
        """
        return _as_list_for(arg, self.function(self.input_domain._normalize(arg)))

    def __call__(self, arg: TI) -> TO:
        return self.invoke(arg)

    def map(self, d_in: DI) -> DO:
        """The output distance bound for inputs at most ``d_in`` apart (rounded up)."""
        d = self.input_metric._check_distance(d_in)
        return _check_result(  # type: ignore[no-any-return]
            self.output_metric._check_distance, self.stability_map(d), "stability map"
        )

    def check(self, d_in: DI, d_out: DO, *, debug: bool = False) -> bool:
        """Whether ``d_in``-close inputs are guaranteed ``d_out``-close outputs."""
        d_out = self.output_metric._check_distance(d_out)
        le = getattr(self.output_metric, "_le", None)  # componentwise for (l0, lp, l∞) triples
        if le is not None:
            return bool(le(self.map(d_in), d_out))
        return bool(self.map(d_in) <= d_out)  # type: ignore[operator]

    @overload
    def __rshift__(self, other: Transformation[TO, U, DO, DU]) -> Transformation[TI, U, DI, DU]: ...
    @overload
    def __rshift__(self, other: Measurement[TO, U, DO, Q]) -> Measurement[TI, U, DI, Q]: ...
    @overload
    def __rshift__(self, other: _Then[Transformation[TI, TO, DI, DO], R]) -> R: ...
    @overload
    def __rshift__(self, other: _OnSpace[TO, DO, U, Q]) -> Measurement[TI, U, DI, Q]: ...
    @overload  # also a PartialTransformation / PartialMeasurement (their ``__rrshift__``)
    def __rshift__(self, other: _OnSpaceT[TO, DO, U, DU]) -> Transformation[TI, U, DI, DU]: ...
    def __rshift__(self, other: object) -> object:
        if isinstance(other, (PartialTransformation, PartialMeasurement)):
            other = other(self.output_domain, self.output_metric)
        if isinstance(other, Transformation):
            return make_chain_tt(other, self)
        if isinstance(other, Measurement):
            return make_chain_mt(other, self)
        # let the right side decide (``other.__rrshift__``: e.g. a compositor partial, a
        # PartialChain); if it cannot either, Python raises TypeError naming both types
        return NotImplemented

    def __repr__(self) -> str:
        return (
            "Transformation(\n"
            f"    input_domain   = {self.input_domain!r},\n"
            f"    output_domain  = {self.output_domain!r},\n"
            f"    input_metric   = {self.input_metric!r},\n"
            f"    output_metric  = {self.output_metric!r})"
        )


# ----------------------------------------------------------------------------------------------
# Measurements


class Measurement(_InputTypes, Generic[TI, TO, DI, MO]):
    """A randomised function whose output law is ``map(d_in)``-private in ``output_measure``.

    Type parameters: input carrier ``TI``, output type ``TO``, input distance ``DI``, privacy
    loss type ``MO`` (``float`` for ε or ρ, ``tuple[float, float]`` for (ε, δ)).
    """

    __slots__ = (
        "_record",  # the constructor call that built this object (set by ``serialization``)
        "function",
        "input_domain",
        "input_metric",
        "output_measure",
        "privacy_map",
    )

    def __init__(
        self,
        input_domain: Domain[TI],
        input_metric: Metric[DI],
        output_measure: Measure[MO],
        function: Callable[[TI], TO],
        privacy_map: Callable[[DI], MO],
    ) -> None:
        self.input_domain = input_domain
        self.input_metric = input_metric
        self.output_measure = output_measure
        self.function = function
        self.privacy_map = privacy_map

    @property
    def input_space(self) -> tuple[Domain[TI], Metric[DI]]:
        return self.input_domain, self.input_metric

    @property
    def output_distance_type(self) -> str:
        """The type of the privacy loss, e.g. ``"f64"``."""
        return _type_name(self.output_measure.distance_type)

    def invoke(self, arg: TI) -> TO:
        """Release ``function(arg)``.

        ``arg`` is checked against the input domain first; a non-member raises
        :class:`~opendp_lite.errors.NotInDomain` before any randomness is drawn.  As in
        OpenDP, a vector release is a Python list when ``arg`` holds no array.
        """
        return _as_list_for(arg, self.function(self.input_domain._normalize(arg)))

    def __call__(self, arg: TI) -> TO:
        # ``invoke`` written out (one call less per release): the same domain check first
        out = self.function(self.input_domain._normalize(arg))
        return out if type(out) in _PLAIN else _as_list_for(arg, out)

    def map(self, d_in: DI) -> MO:
        """The privacy loss for inputs at most ``d_in`` apart (never below the exact value)."""
        d = self.input_metric._check_distance(d_in)
        return _check_result(  # type: ignore[no-any-return]
            self.output_measure._check_loss, self.privacy_map(d), "privacy map"
        )

    def check(self, d_in: DI, d_out: MO, *, debug: bool = False) -> bool:
        """Whether the measurement is ``d_out``-private for inputs ``d_in`` apart."""
        d_out = self.output_measure._check_loss(d_out)
        try:
            loss = self.map(d_in)
        except InfiniteLoss:
            return False  # no finite d_out bounds an infinite loss
        return self.output_measure._le(loss, d_out)

    # A Measurement is callable, so the Callable overload would accept it as post-processing;
    # this overload catches it first and mypy reports the chain as an error (the project's mypy
    # config enables the ``deprecated`` error code; see tests/typing).
    @overload
    @deprecated("a Measurement cannot be chained after a Measurement: only post-processing can")
    def __rshift__(self, other: Measurement[Any, Any, Any, Any]) -> NoReturn: ...
    @overload
    def __rshift__(self, other: Function[TO, U]) -> Measurement[TI, U, DI, MO]: ...
    @overload  # also a Transformation (its ``__call__``)
    def __rshift__(self, other: Callable[[TO], U]) -> Measurement[TI, U, DI, MO]: ...
    def __rshift__(self, other: object) -> object:
        """Post-process the release with a function, a :class:`Function` or a Transformation.

        As in OpenDP, ``measurement >> transformation`` applies the transformation's function to
        the release (which is checked against its input domain first); its stability map plays
        no part.  A Measurement cannot follow a Measurement.
        """
        if isinstance(other, (Measurement, PartialTransformation, PartialMeasurement)):
            raise TypeError(
                f"a Measurement can only be followed by post-processing, not {type(other).__name__}"
            )
        if isinstance(other, Transformation):
            return make_chain_pm(Function(other.invoke), self)
        if isinstance(other, Function):
            return make_chain_pm(other, self)
        if callable(other):
            return make_chain_pm(Function(other), self)
        return NotImplemented  # the right side may know (``other.__rrshift__``)

    def __repr__(self) -> str:
        return (
            "Measurement(\n"
            f"    input_domain   = {self.input_domain!r},\n"
            f"    input_metric   = {self.input_metric!r},\n"
            f"    output_measure = {self.output_measure!r})"
        )


# ----------------------------------------------------------------------------------------------
# Partial constructors: ``(domain, metric) >> then_xxx(...)``


class PartialTransformation(Generic[TI, TO, DI, DO]):
    """A transformation constructor still waiting for its input domain and metric."""

    __slots__ = ("constructor",)

    def __init__(
        self, constructor: Callable[[Domain[TI], Metric[DI]], Transformation[TI, TO, DI, DO]]
    ) -> None:
        self.constructor = constructor

    def __call__(
        self, input_domain: Domain[TI], input_metric: Metric[DI]
    ) -> Transformation[TI, TO, DI, DO]:
        return self.constructor(input_domain, input_metric)

    def __rrshift__(self, other: tuple[Domain[TI], Metric[DI]]) -> Transformation[TI, TO, DI, DO]:
        return self(*_space(other))

    @overload
    def __rshift__(
        self, other: Transformation[TO, U, DO, DU]
    ) -> PartialTransformation[TI, U, DI, DU]: ...
    @overload
    def __rshift__(self, other: Measurement[TO, U, DO, Q]) -> PartialMeasurement[TI, U, DI, Q]: ...
    def __rshift__(self, other: object) -> object:
        if isinstance(other, Transformation):
            o_t = other
            return PartialTransformation(lambda d, m: self(d, m) >> o_t)
        if isinstance(other, Measurement):
            o_m = other
            return PartialMeasurement(lambda d, m: self(d, m) >> o_m)
        return NotImplemented  # the right side may know (``other.__rrshift__``)


class PartialMeasurement(Generic[TI, TO, DI, MO]):
    """A measurement constructor still waiting for its input domain and metric."""

    __slots__ = ("constructor",)

    def __init__(
        self, constructor: Callable[[Domain[TI], Metric[DI]], Measurement[TI, TO, DI, MO]]
    ) -> None:
        self.constructor = constructor

    def __call__(
        self, input_domain: Domain[TI], input_metric: Metric[DI]
    ) -> Measurement[TI, TO, DI, MO]:
        return self.constructor(input_domain, input_metric)

    def __rrshift__(self, other: tuple[Domain[TI], Metric[DI]]) -> Measurement[TI, TO, DI, MO]:
        return self(*_space(other))


def _space(other: object) -> tuple[Any, Any]:
    if (
        isinstance(other, tuple)
        and len(other) == 2
        and isinstance(other[0], Domain)
        and isinstance(other[1], Metric)
    ):
        return other[0], other[1]
    raise TypeError(f"expected a (domain, metric) pair on the left of >>, got {other!r}")


# ----------------------------------------------------------------------------------------------
# Chaining


def check_fits(outer: Domain[Any], inner: Domain[Any], where: str = "") -> None:
    """Refuse a step on data of ``outer`` whose input domain ``inner`` declares a part of the
    data otherwise (a column of another type), from the domains alone.

    Raises:
        DomainMismatch: naming the part (a column) and its two declarations, never data.
    """
    conflict = outer._conflict(inner)
    if conflict is not None:
        part, ours, theirs = conflict
        raise DomainMismatch(ours, theirs, f"{part}{' of ' + where if where else ''}")


def _head_domain(transformation0: Transformation[Any, Any, Any, Any], right: Domain[Any]) -> Any:
    """The input domain of ``transformation0`` followed by a step whose input domain is
    ``right``: when ``transformation0`` keeps cells (a row filter or partition), what
    ``right`` declares of the columns is declared on the chain's input, so a cell the later
    step would refuse is refused where the data enters, whichever rows it keeps."""
    if not transformation0.keeps_cells:
        return transformation0.input_domain
    return transformation0.input_domain._declaring(right)


def _assert_join(left_domain: Any, left_metric: Any, right_domain: Any, right_metric: Any) -> None:
    if left_domain != right_domain:
        raise DomainMismatch(left_domain, right_domain)
    check_fits(left_domain, right_domain)
    if left_metric != right_metric:
        raise MetricMismatch(left_metric, right_metric)


@constructor
def make_chain_tt(
    transformation1: Transformation[U, TO, DU, DO],
    transformation0: Transformation[TI, U, DI, DU],
) -> Transformation[TI, TO, DI, DO]:
    r"""Chain ``transformation0`` then ``transformation1``.

    Stability map: :math:`d_{out} = \mathrm{map}_1(\mathrm{map}_0(d_{in}))`.

    Raises:
        DomainMismatch, MetricMismatch: if the output space of ``transformation0`` is not the
        input space of ``transformation1``; the error names both.

    Proof: docs/proofs/make_chain_tt.md

    >>> import opendp_lite.prelude as dp
    >>> dp.enable_features("honest-but-curious")
    >>> space = dp.atom_domain(T=int), dp.absolute_distance(T=int)
    >>> double = dp.t.make_user_transformation(*space, *space, lambda x: 2 * x, lambda d: 2 * d)
    >>> quad = dp.c.make_chain_tt(double, double)
    >>> quad(3), quad.map(1)
    (12, 4)
    """
    _assert_join(
        transformation0.output_domain,
        transformation0.output_metric,
        transformation1.input_domain,
        transformation1.input_metric,
    )
    f0, f1 = transformation0.function, transformation1.function
    m0, m1 = transformation0.map, transformation1.map
    chain = Transformation(
        _head_domain(transformation0, transformation1.input_domain),
        transformation0.input_metric,
        transformation1.output_domain,
        transformation1.output_metric,
        compose(f1, f0),
        lambda d: m1(m0(d)),
    )
    chain.keeps_cells = transformation0.keeps_cells and transformation1.keeps_cells
    return chain


@constructor
def make_chain_mt(
    measurement1: Measurement[U, TO, DU, MO],
    transformation0: Transformation[TI, U, DI, DU],
) -> Measurement[TI, TO, DI, MO]:
    r"""Chain ``transformation0`` then ``measurement1``.

    Privacy map: :math:`\mathrm{map}_1(\mathrm{map}_0(d_{in}))`.

    Raises:
        DomainMismatch, MetricMismatch: if the spaces do not join; the error names both.

    Proof: docs/proofs/make_chain_mt.md

    >>> import opendp_lite.prelude as dp
    >>> dp.enable_features("honest-but-curious")
    >>> space = dp.atom_domain(T=int), dp.absolute_distance(T=int)
    >>> double = dp.t.make_user_transformation(*space, *space, lambda x: 2 * x, lambda d: 2 * d)
    >>> const = dp.m.make_user_measurement(*space, dp.max_divergence(), lambda x: 0, float)
    >>> dp.c.make_chain_mt(const, double).map(1)
    2.0
    """
    _assert_join(
        transformation0.output_domain,
        transformation0.output_metric,
        measurement1.input_domain,
        measurement1.input_metric,
    )
    f0, f1 = transformation0.function, measurement1.function
    m0, m1 = transformation0.map, measurement1.map
    return Measurement(
        _head_domain(transformation0, measurement1.input_domain),
        transformation0.input_metric,
        measurement1.output_measure,
        compose(f1, f0),
        lambda d: m1(m0(d)),
    )


@constructor
def make_chain_pm(
    postprocess1: Function[U, TO], measurement0: Measurement[TI, U, DI, MO]
) -> Measurement[TI, TO, DI, MO]:
    r"""Post-process the release of ``measurement0`` with ``postprocess1``.

    Privacy map: unchanged, :math:`\mathrm{map}_0(d_{in})` (post-processing).

    Proof: docs/proofs/make_chain_pm.md

    >>> import opendp_lite.prelude as dp
    >>> dp.enable_features("honest-but-curious")
    >>> space = dp.atom_domain(T=int), dp.absolute_distance(T=int)
    >>> const = dp.m.make_user_measurement(*space, dp.max_divergence(), lambda x: 7, float)
    >>> post = dp.c.make_chain_pm(dp.new_function(lambda y: y + 1), const)
    >>> post(0), post.map(1)
    (8, 1.0)
    """
    f0, f1 = measurement0.function, postprocess1.function
    return Measurement(
        measurement0.input_domain,
        measurement0.input_metric,
        measurement0.output_measure,
        lambda x: f1(f0(x)),
        measurement0.privacy_map,
    )


# ----------------------------------------------------------------------------------------------
# Queryables: the state of an interactive mechanism


class _Sequencer:
    """Disables the child queryables of a parent once the parent answers another query.

    Used by compositors under measures without concurrent composition.  The parent calls
    :meth:`advance` for each query it answers, and runs the query inside :meth:`children` of
    the new generation: every :class:`Queryable` *created* meanwhile (however the release
    wraps it: in a list, a dict, a user object, another queryable) records the generation, and
    refuses to answer once the parent has moved on.  Grandchildren inherit the guards of the
    queryable that created them.
    """

    __slots__ = ("generation", "lock", "order")
    _count = itertools.count()

    def __init__(self) -> None:
        self.generation = 0
        # re-entrant: a child function may (wrongly) query an old sibling; it must be refused,
        # not deadlock
        self.lock = threading.RLock()
        self.order = next(_Sequencer._count)  # locks are taken outermost (oldest) first

    def advance(self) -> int:
        with self.lock:
            self.generation += 1
            return self.generation

    @contextmanager
    def children(self, generation: int) -> Iterator[None]:
        """Guard every queryable created in this block by ``generation``."""
        outer = _CHILD_GUARDS.get()
        token = _CHILD_GUARDS.set(_merge_guards(outer, ((self, generation),)))
        try:
            yield
        finally:
            _CHILD_GUARDS.reset(token)


_Guards = tuple[tuple[_Sequencer, int], ...]

#: The guards that a queryable created now must honour (set while a guarded query runs).
_CHILD_GUARDS: contextvars.ContextVar[_Guards] = contextvars.ContextVar(
    "opendp_lite_child_guards", default=()
)


def _merge_guards(a: _Guards, b: _Guards) -> _Guards:
    """The union of two guard sets, one per sequencer (the newer generation), in lock order."""
    merged: dict[int, tuple[_Sequencer, int]] = {}
    for seq, gen in (*a, *b):
        prev = merged.get(id(seq))
        if prev is None or gen > prev[1]:
            merged[id(seq)] = (seq, gen)
    return tuple(sorted(merged.values(), key=lambda g: g[0].order))


class Queryable(Generic[Q, A]):
    """A stateful, interactive release: ``answer = queryable(query)``.

    Queries are serialised by a lock, so concurrent callers see a consistent state; a query
    made from inside the same queryable's own transition (re-entrancy) is refused.  A
    queryable holds privacy state, so it refuses to be copied, deep-copied or pickled: a clone
    would be a fresh budget.  For the same reason it answers only in the process that created
    it: a forked child inherits a copy of the state, and its queries are refused.

    A queryable created while a compositor without concurrent composition answers a query is
    that compositor's child: it refuses queries once the compositor has answered a later one
    (see ``_Sequencer``), wherever the release put it.

    >>> counter = new_queryable(lambda q: q + 1)
    >>> counter(41)
    42
    """

    __slots__ = ("__weakref__", "_guards", "_local", "_lock", "_pid", "_transition")

    def __init__(self, transition: Callable[[Q], A]) -> None:
        self._transition = transition
        self._lock = threading.Lock()
        self._local = threading.local()
        self._pid = os.getpid()
        self._guards = _CHILD_GUARDS.get()  # the parents' generations at creation

    def eval(self, query: Q) -> A:
        """Answer ``query``, updating the state under the queryable's lock."""
        if os.getpid() != self._pid:
            raise QueryableError(
                f"this queryable belongs to process {self._pid}; a forked copy in process "
                f"{os.getpid()} cannot spend its budget"
            )
        if getattr(self._local, "active", False):
            raise QueryableError("re-entrant query: a queryable cannot be queried from itself")
        with self._lock:
            self._local.active = True
            try:
                if not self._guards:
                    return self._transition(query)
                with ExitStack() as held:
                    # hold each parent's sequencer while answering: no parent moves on meanwhile
                    for seq, generation in self._guards:
                        held.enter_context(seq.lock)
                        if seq.generation != generation:
                            raise QueryableError(
                                "this child queryable was disabled: its parent has answered a "
                                "later query, and the measure does not support concurrent "
                                "composition"
                            )
                    # whatever this query creates is guarded by the same parents
                    token = _CHILD_GUARDS.set(_merge_guards(_CHILD_GUARDS.get(), self._guards))
                    try:
                        return self._transition(query)
                    finally:
                        _CHILD_GUARDS.reset(token)
            finally:
                self._local.active = False

    def __call__(self, query: Q) -> A:
        return self.eval(query)

    def __copy__(self) -> Queryable[Q, A]:
        raise QueryableError("a Queryable holds privacy state and cannot be copied")

    def __deepcopy__(self, memo: object) -> Queryable[Q, A]:
        raise QueryableError("a Queryable holds privacy state and cannot be copied")

    def __reduce__(self) -> Any:
        raise QueryableError("a Queryable holds privacy state and cannot be pickled")

    def __repr__(self) -> str:
        return "Queryable()"


def new_queryable(
    transition: Callable[[Q], A] | Callable[[Q, bool], A], Q: object = None, A: object = None
) -> Queryable[Q, A]:
    """Make a :class:`Queryable` from a transition function (``Q``/``A`` kept for OpenDP parity).

    As in OpenDP, a transition of one parameter is called as ``transition(query)``, and any
    other as ``transition(query, is_internal)``.  ``is_internal`` is always ``False`` here: no
    query is sent to a user's queryable by the library itself.

    >>> def echo(query, is_internal):
    ...     return (query, is_internal)
    >>> new_queryable(echo)("hi")
    ('hi', False)
    """
    import inspect

    try:
        n_params = len(inspect.signature(transition).parameters)
    except (TypeError, ValueError):  # no signature (some builtins): one argument
        n_params = 1
    if n_params == 1:
        return Queryable(cast("Callable[[Any], Any]", transition))
    two_args = cast("Callable[[Any, bool], Any]", transition)
    return Queryable(lambda query: two_args(query, False))


def as_array() -> Function[Any, Any]:
    """A :class:`Function` turning a list (OpenDP's ``Vec<T>``) into a 1-d numpy array of ``T``.

    As OpenDP 0.16's ``dp.as_array()``: ``T`` is inferred from the elements (a Python int is
    the default integer type, ``i32`` unless changed); anything but a non-empty list of one
    scalar type is refused.

    >>> to_array = as_array()
    >>> to_array([1, 2, 3]).dtype.name, to_array([1.5, 2.0]).tolist()
    ('int32', [1.5, 2.0])

    Raises:
        FailedFunction: (when called) if the argument is not a non-empty list of scalars of one
            type, or an integer does not fit the inferred type.
    """
    import numpy as np

    from ._types import carrier_dtype, is_float, is_int
    from .errors import FailedFunction, NotImplementedForType
    from .typing import RuntimeType

    def to_array(x: Any) -> Any:
        if isinstance(x, np.ndarray) and x.ndim == 1:  # already an array, as OpenDP returns it
            try:
                dtype = carrier_dtype(str(RuntimeType.parse(x.dtype)))
            except NotImplementedForType:
                raise FailedFunction(f"as_array: unsupported array dtype {x.dtype}") from None
            return np.array(x, dtype=dtype)
        if not isinstance(x, list):
            raise FailedFunction(f"as_array expects a list (Vec<T>), got {type(x).__name__}")
        try:
            T = str(RuntimeType.parse(RuntimeType.infer(x)).args[0])  # type: ignore[attr-defined]
        except (NotImplementedForType, AttributeError, IndexError):
            raise FailedFunction(f"as_array cannot infer the element type of {x!r}") from None
        # numpy scalars count as their Python kind (a list from a numpy-backed vector)
        if T == "String":
            same = all(isinstance(v, str) for v in x)
        elif T == "bool":
            same = all(isinstance(v, (bool, np.bool_)) for v in x)
        elif is_int(T):
            same = all(
                isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in x
            )
        else:
            same = is_float(T) and all(
                isinstance(v, (int, float, np.integer, np.floating))
                and not isinstance(v, (bool, np.bool_))
                for v in x
            )
        if not same:
            raise FailedFunction(f"as_array: the elements of a Vec<{T}> must all be {T}")
        try:
            return np.array(x, dtype=carrier_dtype(T))
        except OverflowError:
            raise FailedFunction(f"as_array: an element does not fit {T}") from None

    return Function(to_array)
