"""The constructor spine: every ``then_x`` partial is derived from its ``make_x`` declaration.

A constructor is declared once, as ``make_x(input_domain, input_metric, *params)`` with its
annotations (and ``@overload`` stubs where the output type depends on the arguments).  Its
partial is one line, ``then_x = then(make_x)``: a function of ``params`` that returns a partial
waiting for ``(domain, metric)``.  At run time every partial is the same thing,
``Partial(lambda d, m: make_x(d, m, *params))``; the derivation also gives it a ``__name__``,
``__doc__`` and ``__signature__`` (``make_x``'s, minus the space), so ``help()``, the docs and
the Context API see the parameters of ``make_x``.

For mypy the parameters are carried by a ``ParamSpec`` (with ``make_x``'s overloads), and the
type of the partial comes from ``make_x``'s return type:

* :func:`then`: the carriers are fixed by the arguments (``make_clamp``'s bounds, the float-only
  ``make_mean``): ``then(make_clamp)((0, 10))`` is a ``PartialTransformation[Vec[int], ...]``;
  :func:`measured` is the same for a measurement constructor (``make_canonical_noise``).

When the output type depends on the *input* space, a ``ParamSpec`` cannot say so: the partial
is typed by what it is chained after instead (``left >> partial`` is typed
``partial._after(left)``, see ``core._Then``; ``space >> partial`` by ``__rrshift__``), with
type variables of the method.  A few shared patterns cover every constructor:

* :func:`keep`: a vector stays a vector of the same element type, the distance type is kept
  (reordering, resizing, metric changes, trees);
* :func:`non_null`: ``Vec[E | None] -> Vec[E]`` (and a float vector with NaN stays ``Vec[float]``);
* :func:`same`: the identity on any space;
* :func:`into`: a vector becomes the output type that ``make_x`` declares (counts, casts,
  lookups, moments); the output type is read from ``make_x``'s return annotation;
* :func:`fold`: ``Vec[int] -> int``, ``Vec[float] -> float`` (the sum);
* :func:`noise`, :func:`int_noise`: int/float scalars and vectors keep their carrier (vectors
  release arrays); the integer-only mechanisms refuse floats;
* :func:`release`, :func:`release_vec`: a measurement on any space (or any vector space) whose
  release and loss types are those ``make_x`` declares;
* :func:`keyed`: a measurement on a map that releases a ``dict`` of some of its keys, with
  values of the map's value type (the stability-threshold mechanisms);
* :func:`key_queries`: a measurement on a map that releases a queryable answering per key
  (the ALP sketch);
* :func:`pick`: a measurement that releases one value of the input vector's element type
  (the private quantile releases a candidate, normalised to the data's carrier).

Patterns that need a family's own types live in that family and are derived with
:func:`derive` too: the sparse vector technique (``measurements/sparse_vector.py``, a
:class:`MeasurementPattern` whose queries are on the space it follows) and the compositors
(``combinators/composition.py``, on the compositors' own partial base, since an odometer is not
a measurement).

A ``Never`` input carrier on the pattern classes keeps the untyped partial overloads of
``Transformation.__rshift__`` from accepting an ill-typed chain as ``Any``.

>>> from opendp_lite.transformations.clamp import make_clamp
>>> then_clamp = then(make_clamp)
>>> then_clamp.__name__, str(inspect.signature(then_clamp))
('then_clamp', "(bounds: 'tuple[Any, Any]') -> 'PartialTransformation[Any, Any, int, int]'")
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable, Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    Concatenate,
    Generic,
    ParamSpec,
    Protocol,
    TypeVar,
    cast,
    overload,
)

import numpy.typing as npt

from ._registry import constructor
from ._types import Never, Vec
from .core import (
    Domain,
    Measurement,
    Metric,
    PartialMeasurement,
    PartialTransformation,
    Queryable,
    Transformation,
    _space,
)

__all__ = [
    "IntNoiseCarriers",
    "MeasurementPattern",
    "NoiseCarriers",
    "Numeric",
    "ThenFold",
    "ThenIntNoise",
    "ThenInto",
    "ThenKeep",
    "ThenKeyQueries",
    "ThenKeyed",
    "ThenNoise",
    "ThenNonNull",
    "ThenPick",
    "ThenRelease",
    "ThenReleaseVec",
    "ThenSame",
    "TransformationPattern",
    "derive",
    "fold",
    "int_noise",
    "int_noise_carriers",
    "into",
    "keep",
    "key_queries",
    "keyed",
    "measured",
    "noise",
    "noise_carriers",
    "non_null",
    "pick",
    "release",
    "release_vec",
    "same",
    "then",
    "typed_as",
    "typed_by",
]

P = ParamSpec("P")
TI = TypeVar("TI")
TO = TypeVar("TO")
DI = TypeVar("DI")
DO = TypeVar("DO")
MO = TypeVar("MO")
_TI = TypeVar("_TI")
_DI = TypeVar("_DI")
_D = TypeVar("_D")
_DO = TypeVar("_DO")
_E = TypeVar("_E")
_X = TypeVar("_X")
_K = TypeVar("_K")
_V = TypeVar("_V")
_F = TypeVar("_F")
Numeric = TypeVar("Numeric", int, float)  # the numeric carriers: one row covers both


# ----------------------------------------------------------------------------------------------
# The run-time derivation: one function for every partial


def _doc(make: Callable[..., Any], name: str) -> str:
    """``Partial of make_x``, then ``make_x``'s summary line and the statement of its map."""
    paragraphs = (inspect.getdoc(make) or "").split("\n\n")
    summary = paragraphs[0].strip()
    maps = [
        para[found.start() :].strip()
        for para in paragraphs[1:]
        if (found := re.search(r"(stability|privacy) map", para, re.IGNORECASE))
    ]
    parts = [
        f"Partial of :func:`{make.__name__}`: ``space >> {name}(...)`` is "
        f"``{make.__name__}(*space, ...)``.",
        summary,
        *maps[:1],
        f"See :func:`{make.__name__}` for the parameters, the errors, the proof and an example.",
    ]
    return "\n\n".join(p for p in parts if p)


def derive(make: Callable[..., Any], partial: type[Any]) -> Callable[..., Any]:
    """``then_x(*params) = partial(lambda d, m: make_x(d, m, *params))``, with its metadata."""
    name = "then_" + make.__name__.removeprefix("make_")
    signature = inspect.signature(make)
    params = list(signature.parameters.values())[2:]

    partial_signature = signature.replace(parameters=params)

    module, make_name = sys.modules[make.__module__], make.__name__

    def then_x(*args: Any, **kwargs: Any) -> Any:
        partial_signature.bind(*args, **kwargs)  # a wrong call fails here, as a def would
        # the module's public ``make_x`` at call time (the one ``@constructor`` declared)
        public = getattr(module, make_name, make)
        return partial(lambda d, m: public(d, m, *args, **kwargs))

    then_x.__name__ = then_x.__qualname__ = name
    then_x.__module__ = make.__module__
    then_x.__doc__ = _doc(make, name)
    then_x.__signature__ = partial_signature.replace(  # type: ignore[attr-defined]
        return_annotation=_partial_annotation(signature, partial)
    )
    return constructor(then_x)


def _partial_annotation(signature: inspect.Signature, partial: type[Any]) -> str:
    made = str(signature.return_annotation)
    if partial in (PartialTransformation, PartialMeasurement):
        return f"Partial{made}"
    return partial.__name__


def _on_space(partial: Any, other: object) -> Any:
    """``space >> partial`` at run time: the partial built on the space."""
    return partial(*_space(other))


def _chain_method(partial: Any, left: object) -> Any:
    """``partial._after(left)`` at run time: the ordinary chain."""
    return _chain(left, partial)


def _chain(left: Any, partial: Any) -> Any:
    """``left >> partial`` at run time: the ordinary chain (the typed ``_after`` of a pattern)."""
    return left >> partial


# ----------------------------------------------------------------------------------------------
# then: the carriers are fixed by the arguments


def then(
    make: Callable[Concatenate[Any, Any, P], Transformation[TI, TO, DI, DO]],
) -> Callable[P, PartialTransformation[TI, TO, DI, DO]]:
    """The partial of a transformation constructor ``make``, typed by its declaration (see the
    module docstring); a measurement constructor's is :func:`measured`."""
    _check_made(make, "Transformation", "measured")
    return derive(make, PartialTransformation)


def measured(
    make: Callable[Concatenate[Any, Any, P], Measurement[TI, TO, DI, MO]],
) -> Callable[P, PartialMeasurement[TI, TO, DI, MO]]:
    """The partial of a measurement constructor ``make``, typed by its declaration (see the
    module docstring); a transformation constructor's is :func:`then`."""
    _check_made(make, "Measurement", "then")
    return derive(make, PartialMeasurement)


def _check_made(make: Callable[..., Any], kind: str, other: str) -> None:
    made = str(inspect.signature(make).return_annotation)
    if not made.startswith(kind):
        raise TypeError(
            f"{make.__name__} must be annotated to return a {kind} (a constructor of the other "
            f"kind is derived by {other})"
        )


# ----------------------------------------------------------------------------------------------
# Transformations typed by what they follow


class TransformationPattern(PartialTransformation[Any, Any, Any, Any]):
    """Base of the transformation patterns: a partial typed by the space it is chained after.

    Its own uses stay as untyped as a plain partial: a direct call, and ``partial >> next``.
    """

    __slots__ = ()

    def __call__(
        self, input_domain: Domain[Any], input_metric: Metric[Any]
    ) -> Transformation[Any, Any, Any, Any]:
        return super().__call__(input_domain, input_metric)

    if not TYPE_CHECKING:  # a pattern typed by ``__rrshift__`` alone (core._OnSpaceT)

        def _after(self, left):
            return _chain(left, self)


class ThenKeep(TransformationPattern):
    """A vector stays a vector of the same element type; the distance type is kept."""

    __slots__ = ()

    if TYPE_CHECKING:  # the types; at run time the ordinary chain

        def _after(
            self, left: Transformation[_TI, Vec[_E], _DI, _D]
        ) -> Transformation[_TI, Vec[_E], _DI, _D]: ...

        def __rrshift__(
            self, other: tuple[Domain[Vec[_E]], Metric[_D]]
        ) -> Transformation[Vec[_E], Vec[_E], _D, _D]: ...

    else:
        _after, __rrshift__ = _chain_method, _on_space


class ThenSame(TransformationPattern):
    """The identity: any carrier and distance type are kept."""

    __slots__ = ()

    if TYPE_CHECKING:  # the types; at run time the ordinary chain

        def _after(
            self, left: Transformation[_TI, _X, _DI, _D]
        ) -> Transformation[_TI, _X, _DI, _D]: ...

        def __rrshift__(
            self, other: tuple[Domain[_X], Metric[_D]]
        ) -> Transformation[_X, _X, _D, _D]: ...

    else:
        _after, __rrshift__ = _chain_method, _on_space


class ThenNonNull(TransformationPattern):
    """``Vec[E | None] -> Vec[E]``; a float vector (NaN as null) stays ``Vec[float]``."""

    __slots__ = ()

    @overload
    def _after(
        self, left: Transformation[_TI, Vec[_E | None], _DI, int]
    ) -> Transformation[_TI, Vec[_E], _DI, int]: ...
    @overload
    def _after(
        self, left: Transformation[_TI, Vec[float], _DI, int]
    ) -> Transformation[_TI, Vec[float], _DI, int]: ...
    def _after(self, left: Transformation[Any, Any, Any, Any]) -> Any:
        return _chain(left, self)

    @overload
    def __rrshift__(
        self, other: tuple[Domain[Vec[_E | None]], Metric[int]]
    ) -> Transformation[Vec[_E | None], Vec[_E], int, int]: ...
    @overload
    def __rrshift__(
        self, other: tuple[Domain[Vec[float]], Metric[int]]
    ) -> Transformation[Vec[float], Vec[float], int, int]: ...
    def __rrshift__(self, other: tuple[Domain[Any], Metric[Any]]) -> Any:
        return _on_space(self, other)


class ThenInto(TransformationPattern, Generic[TO, DO]):
    """A vector (of any element type) becomes a ``TO``; integer distances become ``DO``."""

    __slots__ = ()

    if TYPE_CHECKING:  # the types; at run time the ordinary chain

        def _after(
            self, left: Transformation[_TI, Vec[Any], _DI, int]
        ) -> Transformation[_TI, TO, _DI, DO]: ...

        def __rrshift__(
            self, other: tuple[Domain[Vec[_E]], Metric[int]]
        ) -> Transformation[Vec[_E], TO, int, DO]: ...

    else:
        _after, __rrshift__ = _chain_method, _on_space


class ThenFold(TransformationPattern):
    """``Vec[int] -> int`` and ``Vec[float] -> float``, integer distances to the carrier's.

    The first overloads, on ``Never``, match only an ``Any`` carrier (an untyped constructor's
    output), which then stays ``Any`` rather than a guessed carrier.
    """

    __slots__ = ()

    @overload
    def __rrshift__(
        self, other: tuple[Domain[Never], Metric[int]]
    ) -> Transformation[Any, Any, int, Any]: ...
    @overload
    def __rrshift__(  # type: ignore[overload-overlap]
        self, other: tuple[Domain[Vec[int]], Metric[int]]
    ) -> Transformation[Vec[int], int, int, int]: ...
    @overload
    def __rrshift__(
        self, other: tuple[Domain[Vec[float]], Metric[int]]
    ) -> Transformation[Vec[float], float, int, float]: ...
    def __rrshift__(self, other: tuple[Domain[Any], Metric[Any]]) -> Any:
        return _on_space(self, other)


_AnyT = Transformation[Any, Any, Any, Any]
_AnyM = Measurement[Any, Any, Any, Any]


def keep(make: Callable[Concatenate[Any, Any, P], _AnyT]) -> Callable[P, ThenKeep]:
    """The partial of ``make``, typed by :class:`ThenKeep`."""
    return derive(make, ThenKeep)


def same(make: Callable[Concatenate[Any, Any, P], _AnyT]) -> Callable[P, ThenSame]:
    """The partial of ``make``, typed by :class:`ThenSame`."""
    return derive(make, ThenSame)


def non_null(make: Callable[Concatenate[Any, Any, P], _AnyT]) -> Callable[P, ThenNonNull]:
    """The partial of ``make``, typed by :class:`ThenNonNull`."""
    return derive(make, ThenNonNull)


def into(
    make: Callable[Concatenate[Any, Any, P], Transformation[Any, TO, Any, DO]],
) -> Callable[P, ThenInto[TO, DO]]:
    """The partial of ``make``, typed by :class:`ThenInto` with ``make``'s output types."""
    return derive(make, ThenInto)


def fold(make: Callable[Concatenate[Any, Any, P], _AnyT]) -> Callable[P, ThenFold]:
    """The partial of ``make``, typed by :class:`ThenFold`."""
    return derive(make, ThenFold)


# ----------------------------------------------------------------------------------------------
# Measurements typed by what they follow


class MeasurementPattern(PartialMeasurement[Any, Any, Any, Any]):
    """Base of the measurement patterns; a direct call stays as untyped as a plain partial.

    A pattern defines ``_after(left)`` (typing ``left >> partial``) and ``__rrshift__(space)``
    (typing ``space >> partial``) with type variables of the method; at run time both are the
    ordinary chain (``_chain``, ``_on_space``).  A pattern whose release depends only on the
    space it is built on (the noise patterns) defines ``__rrshift__`` alone: ``left >> partial``
    is then typed by ``__rrshift__`` on ``left``'s output space (``core._OnSpace``), so its
    carrier table is written once.
    """

    __slots__ = ()

    def __call__(
        self, input_domain: Domain[Any], input_metric: Metric[Any]
    ) -> Measurement[Any, Any, Any, Any]:
        return super().__call__(input_domain, input_metric)

    if not TYPE_CHECKING:  # a pattern typed by ``__rrshift__`` alone (core._OnSpace)

        def _after(self, left):
            return _chain(left, self)


# The carrier tables of the noise mechanisms, written once.  ``@noise_carriers`` on a
# ``make_x(input_domain, input_metric, *params)`` types it by :class:`NoiseCarriers` (the
# ``params`` carried by a ``ParamSpec``); at run time it returns ``make_x`` itself.


class NoiseCarriers(Protocol[P]):
    """Noise on int or float scalars and vectors: the carrier is kept, vectors release arrays.

    ``Numeric`` is constrained to ``int`` and ``float``, so one row covers both carriers.
    """

    @overload
    def __call__(
        self, input_domain: Domain[Numeric], input_metric: Metric[_D], /, *a: P.args, **k: P.kwargs
    ) -> Measurement[Numeric, Numeric, _D, float]: ...
    @overload
    def __call__(
        self,
        input_domain: Domain[Vec[Numeric]],
        input_metric: Metric[_D],
        /,
        *a: P.args,
        **k: P.kwargs,
    ) -> Measurement[Vec[Numeric], npt.NDArray[Any], _D, float]: ...


class IntNoiseCarriers(Protocol[P]):
    """Noise on integer scalars and vectors only: the carrier is kept, vectors release arrays."""

    @overload
    def __call__(
        self, input_domain: Domain[int], input_metric: Metric[_D], /, *a: P.args, **k: P.kwargs
    ) -> Measurement[int, int, _D, float]: ...
    @overload
    def __call__(
        self, input_domain: Domain[Vec[int]], input_metric: Metric[_D], /, *a: P.args, **k: P.kwargs
    ) -> Measurement[Vec[int], npt.NDArray[Any], _D, float]: ...


def typed_as(table: _F) -> Callable[[Callable[..., Any]], _F]:
    """Typing only: type the decorated ``make_x`` as ``table``; at run time the decorator
    returns ``make_x``.

    ``table`` is a carrier table declared once: an overloaded function under ``TYPE_CHECKING``,
    or a ``Protocol`` whose ``__call__`` is the table, named by ``cast("_Table", None)`` (mypy
    reads the ``cast``'s type; nothing is built at run time)."""
    return lambda make: cast(_F, make)


_F_co = TypeVar("_F_co", covariant=True)


class _Calls(Protocol[_F_co]):
    @property
    def __call__(self) -> _F_co: ...


def typed_by(table: _Calls[_F] | None) -> Callable[[Callable[..., Any]], _F]:
    """Typing only: type the decorated ``make_x`` as the ``__call__`` of ``table``, a
    ``Protocol`` whose overloaded ``__call__`` is a carrier table written once, named by
    ``cast("Table[...]", None)``: the ``make_x`` is then an overloaded function, whose
    overloads a derived partial (``into(make_x)``) keeps.  At run time it returns ``make_x``."""
    return lambda make: cast(_F, make)


def noise_carriers(make: Callable[Concatenate[Any, Any, P], _AnyM]) -> NoiseCarriers[P]:
    """Type ``make`` by :class:`NoiseCarriers`; returns ``make`` itself."""
    return cast(NoiseCarriers[P], make)


def int_noise_carriers(make: Callable[Concatenate[Any, Any, P], _AnyM]) -> IntNoiseCarriers[P]:
    """Type ``make`` by :class:`IntNoiseCarriers`; returns ``make`` itself."""
    return cast(IntNoiseCarriers[P], make)


class ThenNoise(MeasurementPattern):
    """Noise on int or float scalars and vectors (Laplace, Gaussian): the carrier is kept.

    Vectors release numpy arrays.  The first overload, on ``Never``, matches only an ``Any``
    carrier, which then stays ``Any`` rather than a guessed carrier.  The rows are written per
    carrier (not with :class:`NoiseCarriers`' constrained ``Numeric``): ``left >> partial`` matches
    them against ``core._OnSpace``, which infers the release type only from a non-generic row.
    """

    __slots__ = ()

    @overload
    def __rrshift__(
        self, other: tuple[Domain[Never], Metric[_D]]
    ) -> Measurement[Any, Any, _D, float]: ...
    @overload
    def __rrshift__(
        self, other: tuple[Domain[float], Metric[_D]]
    ) -> Measurement[float, float, _D, float]: ...
    @overload
    def __rrshift__(
        self, other: tuple[Domain[int], Metric[_D]]
    ) -> Measurement[int, int, _D, float]: ...
    @overload
    def __rrshift__(  # type: ignore[overload-overlap]  # both Vecs admit an ndarray
        self, other: tuple[Domain[Vec[float]], Metric[_D]]
    ) -> Measurement[Vec[float], npt.NDArray[Any], _D, float]: ...
    @overload
    def __rrshift__(
        self, other: tuple[Domain[Vec[int]], Metric[_D]]
    ) -> Measurement[Vec[int], npt.NDArray[Any], _D, float]: ...
    def __rrshift__(self, other: tuple[Domain[Any], Metric[Any]]) -> Any:
        return _on_space(self, other)


class ThenIntNoise(MeasurementPattern):
    """Noise on integer scalars and vectors only (geometric, discrete Laplace/Gaussian)."""

    __slots__ = ()

    @overload
    def __rrshift__(
        self, other: tuple[Domain[Never], Metric[_D]]
    ) -> Measurement[Any, Any, _D, float]: ...
    @overload
    def __rrshift__(
        self, other: tuple[Domain[int], Metric[_D]]
    ) -> Measurement[int, int, _D, float]: ...
    @overload
    def __rrshift__(
        self, other: tuple[Domain[Vec[int]], Metric[_D]]
    ) -> Measurement[Vec[int], npt.NDArray[Any], _D, float]: ...
    def __rrshift__(self, other: tuple[Domain[Any], Metric[Any]]) -> Any:
        return _on_space(self, other)


class ThenRelease(MeasurementPattern, Generic[TO, MO]):
    """A measurement on any space whose release is a ``TO`` and loss a ``MO``."""

    __slots__ = ()

    if TYPE_CHECKING:  # the types; at run time the ordinary chain

        def _after(
            self, left: Transformation[_TI, _X, _DI, _D]
        ) -> Measurement[_TI, TO, _DI, MO]: ...

        def __rrshift__(
            self, other: tuple[Domain[_X], Metric[_D]]
        ) -> Measurement[_X, TO, _D, MO]: ...

    else:
        _after, __rrshift__ = _chain_method, _on_space


class ThenReleaseVec(MeasurementPattern, Generic[TO, MO]):
    """A measurement on a vector space whose release is a ``TO`` and loss a ``MO``."""

    __slots__ = ()

    if TYPE_CHECKING:  # the types; at run time the ordinary chain

        def _after(
            self, left: Transformation[_TI, Vec[Any], _DI, _D]
        ) -> Measurement[_TI, TO, _DI, MO]: ...

        def __rrshift__(
            self, other: tuple[Domain[Vec[_E]], Metric[_D]]
        ) -> Measurement[Vec[_E], TO, _D, MO]: ...

    else:
        _after, __rrshift__ = _chain_method, _on_space


class ThenPick(MeasurementPattern, Generic[MO]):
    """A measurement on a vector space that releases one value of the vector's element type."""

    __slots__ = ()

    if TYPE_CHECKING:  # the types; at run time the ordinary chain

        def _after(
            self, left: Transformation[_TI, Vec[_E], _DI, _D]
        ) -> Measurement[_TI, _E, _DI, MO]: ...

        def __rrshift__(
            self, other: tuple[Domain[Vec[_E]], Metric[_D]]
        ) -> Measurement[Vec[_E], _E, _D, MO]: ...

    else:
        _after, __rrshift__ = _chain_method, _on_space


class ThenKeyed(MeasurementPattern, Generic[MO]):
    """A measurement on a map space that releases a ``dict`` of some of its keys and values."""

    __slots__ = ()

    if TYPE_CHECKING:  # the types; at run time the ordinary chain

        def _after(
            self, left: Transformation[_TI, Mapping[_K, _V], _DI, _D]
        ) -> Measurement[_TI, dict[_K, _V], _DI, MO]: ...

        def __rrshift__(
            self, other: tuple[Domain[Mapping[_K, _V]], Metric[_D]]
        ) -> Measurement[Mapping[_K, _V], dict[_K, _V], _D, MO]: ...

    else:
        _after, __rrshift__ = _chain_method, _on_space


class ThenKeyQueries(MeasurementPattern, Generic[TO, MO]):
    """A measurement on a map space that releases a queryable answering ``TO`` per key."""

    __slots__ = ()

    if TYPE_CHECKING:  # the types; at run time the ordinary chain

        def _after(
            self, left: Transformation[_TI, Mapping[_K, _V], _DI, _D]
        ) -> Measurement[_TI, Queryable[_K, TO], _DI, MO]: ...

        def __rrshift__(
            self, other: tuple[Domain[Mapping[_K, _V]], Metric[_D]]
        ) -> Measurement[Mapping[_K, _V], Queryable[_K, TO], _D, MO]: ...

    else:
        _after, __rrshift__ = _chain_method, _on_space


def noise(make: NoiseCarriers[P]) -> Callable[P, ThenNoise]:
    """The partial of ``make``, typed by :class:`ThenNoise`."""
    return derive(cast(Callable[..., Any], make), ThenNoise)


def int_noise(make: IntNoiseCarriers[P]) -> Callable[P, ThenIntNoise]:
    """The partial of ``make``, typed by :class:`ThenIntNoise`."""
    return derive(cast(Callable[..., Any], make), ThenIntNoise)


def release(
    make: Callable[Concatenate[Any, Any, P], Measurement[Any, TO, Any, MO]],
) -> Callable[P, ThenRelease[TO, MO]]:
    """The partial of ``make``, typed by :class:`ThenRelease` with ``make``'s output types."""
    return derive(make, ThenRelease)


def release_vec(
    make: Callable[Concatenate[Any, Any, P], Measurement[Any, TO, Any, MO]],
) -> Callable[P, ThenReleaseVec[TO, MO]]:
    """The partial of ``make``, typed by :class:`ThenReleaseVec` with ``make``'s output types."""
    return derive(make, ThenReleaseVec)


def pick(
    make: Callable[Concatenate[Any, Any, P], Measurement[Any, Any, Any, MO]],
) -> Callable[P, ThenPick[MO]]:
    """The partial of ``make``, typed by :class:`ThenPick` with ``make``'s loss type."""
    return derive(make, ThenPick)


def keyed(
    make: Callable[Concatenate[Any, Any, P], Measurement[Any, Any, Any, MO]],
) -> Callable[P, ThenKeyed[MO]]:
    """The partial of ``make``, typed by :class:`ThenKeyed` with ``make``'s loss type."""
    return derive(make, ThenKeyed)


def key_queries(
    make: Callable[Concatenate[Any, Any, P], Measurement[Any, Queryable[Any, TO], Any, MO]],
) -> Callable[P, ThenKeyQueries[TO, MO]]:
    """The partial of ``make``, typed by :class:`ThenKeyQueries` with ``make``'s answer type."""
    return derive(make, ThenKeyQueries)
