"""Type descriptors in OpenDP 0.16's style: ``dp.i32``, ``dp.Vec[dp.f64]``, ``RuntimeType``.

A type descriptor names a carrier or a distance type the way OpenDP names it (Rust syntax).
Atomic types are plain strings (``dp.i32 == "i32"``); generic types are :class:`RuntimeType`
values, which are strings too (``dp.Vec[dp.i32] == "Vec<i32>"``), so every constructor that
accepts a type name as a string accepts them unchanged.  ``T="i32"``, ``T=dp.i32``, ``T=int``
(the default integer type) and ``T=numpy.int32`` all name the same carrier.

>>> RuntimeType.parse("Vec<int>"), RuntimeType.parse(list[float]), RuntimeType.infer([1, 2])
(Vec<i32>, Vec<f64>, Vec<i32>)
>>> Vec[i32] == "Vec<i32>", RuntimeType.parse(int), L1Distance[float]
(True, 'i32', L1Distance<f64>)
"""

from __future__ import annotations

import collections.abc
import typing
from collections.abc import Sequence
from typing import Any, TypeAlias, Union

import numpy as np

from . import _types
from .errors import NotImplementedForType, UnknownTypeException

__all__ = [
    "AbsoluteDistance",
    "BitVector",
    "Carrier",
    "ChangeOneDistance",
    "DiscreteDistance",
    "FixedSmoothedMaxDivergence",
    "HammingDistance",
    "HashMap",
    "InsertDeleteDistance",
    "L1Distance",
    "L2Distance",
    "LInfDistance",
    "MaxDivergence",
    "Option",
    "RuntimeType",
    "RuntimeTypeDescriptor",
    "SensitivityMetric",
    "SmoothedMaxDivergence",
    "String",
    "SymmetricDistance",
    "UnknownTypeException",
    "Vec",
    "ZeroConcentratedDivergence",
    "f32",
    "f64",
    "get_atom",
    "get_carrier_type",
    "get_distance_type",
    "get_first",
    "i8",
    "i16",
    "i32",
    "i64",
    "i128",
    "isize",
    "parse_or_infer",
    "set_default_float_type",
    "set_default_int_type",
    "u8",
    "u16",
    "u32",
    "u64",
    "u128",
    "usize",
]


# atomic type names (plain strings, as in OpenDP)
i8: str = "i8"
i16: str = "i16"
i32: str = "i32"
i64: str = "i64"
i128: str = "i128"
isize: str = "isize"
u8: str = "u8"
u16: str = "u16"
u32: str = "u32"
u64: str = "u64"
u128: str = "u128"
usize: str = "usize"
f32: str = "f32"
f64: str = "f64"
String: str = "String"
BitVector: str = "BitVector"

_INTEGER_TYPES = frozenset({"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "usize"})
_FLOAT_TYPES = frozenset({"f32", "f64"})
# names OpenDP knows that this library has no carrier for: parsed, but refused by constructors
_FOREIGN_ATOMS = frozenset({"i128", "u128", "isize", "BitVector", "ExtrinsicObject"})
_ATOMS = _INTEGER_TYPES | _FLOAT_TYPES | {"bool", "String"} | _FOREIGN_ATOMS
#: the primitive type names OpenDP 0.16 has (its private ``opendp.typing._PRIMITIVE_TYPES``);
#: ``i128``, ``u128`` parse here but constructors refuse them (no numpy dtype)
_PRIMITIVE_TYPES = frozenset(
    {"i8", "i16", "i32", "i64", "i128", "u8", "u16", "u32", "u64", "u128", "usize"}
    | {"f32", "f64", "bool", "String"}
)
_SENSITIVITY_METRICS = frozenset({"AbsoluteDistance", "L1Distance", "L2Distance", "LInfDistance"})
_BARE = frozenset(
    {
        "SymmetricDistance",
        "InsertDeleteDistance",
        "ChangeOneDistance",
        "HammingDistance",
        "DiscreteDistance",
        "MaxDivergence",
        "SmoothedMaxDivergence",
        "FixedSmoothedMaxDivergence",
        "ZeroConcentratedDivergence",
        "RenyiDivergence",
    }
)

SymmetricDistance: str = "SymmetricDistance"
InsertDeleteDistance: str = "InsertDeleteDistance"
ChangeOneDistance: str = "ChangeOneDistance"
HammingDistance: str = "HammingDistance"
DiscreteDistance: str = "DiscreteDistance"
MaxDivergence: str = "MaxDivergence"
SmoothedMaxDivergence: str = "SmoothedMaxDivergence"
FixedSmoothedMaxDivergence: str = "FixedSmoothedMaxDivergence"
ZeroConcentratedDivergence: str = "ZeroConcentratedDivergence"

#: every way of giving type information: a RuntimeType, a Rust-syntax string, a Python type
#: (``int``, ``list[int]``, ``dict[str, float]``), a numpy dtype, or a tuple of these
RuntimeTypeDescriptor: TypeAlias = Union["RuntimeType", str, type, tuple[Any, ...], Any]


def _default_int() -> str:
    return _types._ALIASES[int]


def _default_float() -> str:
    return _types._ALIASES[float]


def _render(origin: str, args: Sequence[str]) -> str:
    if origin == "Tuple":
        return f"({', '.join(args)})"
    return f"{origin}<{', '.join(args)}>" if args else origin


def _split_top(text: str) -> list[str]:
    """Split ``text`` at the commas that are not nested inside ``<>`` or ``()``."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
            if depth < 0:
                raise UnknownTypeException(f"unbalanced brackets in type name {text!r}")
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if depth != 0:
        raise UnknownTypeException(f"unbalanced brackets in type name {text!r}")
    last = text[start:].strip()
    if last:
        parts.append(last)
    return parts


class RuntimeType(str):
    """A generic type such as ``Vec<i32>``: an ``origin`` and its type ``args``.

    It is a ``str`` holding its Rust-syntax name, so it can be passed wherever a type name is
    accepted; it compares equal to any descriptor that parses to the same type.

    >>> t = RuntimeType("Vec", ["i32"])
    >>> t, t.origin, t.args, t == "Vec<int>", t == Vec[np.int32]
    (Vec<i32>, 'Vec', ['i32'], True, True)
    """

    origin: str
    args: list[str]

    def __new__(cls, origin: str, args: Sequence[str] | None = None) -> RuntimeType:
        if not isinstance(origin, str):
            raise UnknownTypeException(f"origin must be a string, got {origin!r}")
        arg_list = list(args or [])
        self = super().__new__(cls, _render(origin, [str(a) for a in arg_list]))
        self.origin = origin
        self.args = arg_list
        return self

    def __repr__(self) -> str:
        return str.__str__(self)

    def __str__(self) -> str:
        return str.__str__(self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str) and not isinstance(other, RuntimeType):
            try:
                other = RuntimeType.parse(other)
            except NotImplementedForType:
                return False
            if not isinstance(other, RuntimeType):  # an atom: compare the names
                return str.__eq__(self, other)
        if not isinstance(other, RuntimeType):
            return False
        return self.origin == other.origin and list(self.args) == list(other.args)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return str.__hash__(self)

    @classmethod
    def parse(cls, type_name: object, generics: Sequence[str] | None = None) -> str:
        """Normalise a type descriptor to a type name (``str``) or a :class:`RuntimeType`.

        Raises:
            UnknownTypeException: if ``type_name`` describes no known type.

        >>> RuntimeType.parse("HashMap<str, float>"), RuntimeType.parse((int, "f32"))
        (HashMap<String, f64>, (i32, f32))
        """
        if isinstance(type_name, RuntimeType):
            return type_name
        if isinstance(type_name, str):
            return _parse_str(type_name, tuple(generics or ()))
        if isinstance(type_name, tuple):
            return RuntimeType("Tuple", [cls.parse(t, generics) for t in type_name])
        origin = typing.get_origin(type_name)
        if origin is not None:
            args = [cls.parse(a, generics) for a in typing.get_args(type_name)]
            if origin in (list, collections.abc.Sequence, np.ndarray):
                return RuntimeType("Vec", args[:1])
            if origin in (dict, collections.abc.Mapping):
                return RuntimeType("HashMap", args)
            if origin is tuple:
                return RuntimeType("Tuple", args)
            if origin is Union and len(args) == 2 and "()" in args:
                return RuntimeType("Option", [a for a in args if a != "()"])
            name = getattr(origin, "__name__", "")
            if name in _SENSITIVITY_METRICS:
                return SensitivityMetric(name, args)
            raise UnknownTypeException(f"unrecognized generic type {type_name!r}")
        if type_name is type(None):
            return "()"
        if type_name in (list, tuple, dict):
            raise UnknownTypeException(
                f"{type_name.__name__} needs its element type, e.g. {type_name.__name__}[int]"
            )
        if isinstance(type_name, type) and type_name.__name__ in _BARE:
            return type_name.__name__
        if isinstance(type_name, type) and type_name.__name__ in _SENSITIVITY_METRICS:
            return SensitivityMetric(type_name.__name__)  # the class dp.L1Distance, unparametrised
        try:
            return _types.carrier_name(type_name)
        except NotImplementedForType as e:
            raise UnknownTypeException(f"unrecognized type descriptor {type_name!r}") from e

    @classmethod
    def infer(cls, public_example: object, py_object: bool = False) -> str:
        """The type of a public example (never pass sensitive data).

        Raises:
            UnknownTypeException: if the type cannot be inferred (e.g. an empty list).

        >>> RuntimeType.infer(23), RuntimeType.infer((1.0, True, "a")), RuntimeType.infer({"a": 1})
        ('i32', (f64, bool, String), HashMap<String, i32>)
        """
        x = public_example
        if isinstance(x, RuntimeType):
            return x
        polars = _polars_kind(x)
        if polars is not None:  # a Polars Series, DataFrame, LazyFrame or Expr, by its name
            return polars
        if isinstance(x, (bool, np.bool_)):
            return "bool"
        if isinstance(x, (int, float)) and not isinstance(x, np.generic):
            return _default_int() if isinstance(x, int) else _default_float()
        if isinstance(x, str):
            return "String"
        if isinstance(x, np.generic):
            return cls.parse(x.dtype)
        if isinstance(x, np.ndarray):
            if x.ndim == 0:
                return cls.infer(x.item(), py_object)
            if x.ndim != 1:
                raise UnknownTypeException(f"only 1-d arrays are supported, got {x.ndim}-d")
            if x.dtype.kind == "U":
                return RuntimeType("Vec", ["String"])
            if x.dtype == object:
                return RuntimeType("Vec", [cls.infer(_first(x.tolist()))])
            return RuntimeType("Vec", [cls.parse(x.dtype)])
        if isinstance(x, tuple):
            return RuntimeType("Tuple", [cls.infer(e, py_object) for e in x])
        if isinstance(x, dict):
            keys = list(x.keys())
            return RuntimeType(
                "HashMap",
                [_homogeneous(keys, py_object), _homogeneous(list(x.values()), py_object)],
            )
        if isinstance(x, (list, collections.abc.Sequence)):
            return RuntimeType("Vec", [_homogeneous(list(x), py_object)])
        if x is None:
            raise UnknownTypeException(
                "Type of Option cannot be inferred from None. Fix: pass the type, "
                "e.g. T='Option<i32>'"
            )
        if callable(x):
            return "CallbackFn"
        if py_object:
            return "ExtrinsicObject"
        raise UnknownTypeException(
            f"unable to infer the type of {x!r} ({type(x)!r}). Fix: pass the type (T=...), "
            "or py_object=True for an ExtrinsicObject"
        )

    @classmethod
    def parse_or_infer(cls, type_name: object = None, public_example: object = None) -> str:
        """``parse(type_name)`` if it is given, else ``infer(public_example)``."""
        if type_name is not None:
            return cls.parse(type_name)
        if public_example is not None:
            return cls.infer(public_example)
        raise UnknownTypeException("either type_name or public_example must be passed")


def _first(values: list[Any]) -> Any:
    if not values:
        raise UnknownTypeException(
            "Cannot infer atomic type when empty (no element to infer from). Fix: pass the type"
        )
    return values[0]


def _homogeneous(values: list[Any], py_object: bool) -> str:
    """The one type of all the elements (as OpenDP: mixed types are refused, or with
    ``py_object`` are ``ExtrinsicObject``).  Elements of one Python scalar type are inferred
    once; containers each (their inner types can differ)."""
    first = _first(values)
    kinds = set(map(type, values))
    scalar = (bool, int, float, str, np.generic)
    if len(kinds) == 1 and issubclass(next(iter(kinds)), scalar):
        return RuntimeType.infer(first, py_object)
    found = {
        RuntimeType.infer(v, py_object)
        for v in (
            values
            if not all(issubclass(k, scalar) for k in kinds)
            else [next(v for v in values if type(v) is k) for k in kinds]
        )
    }
    if len(found) == 1:
        return found.pop()
    if py_object:
        return "ExtrinsicObject"
    raise UnknownTypeException(
        f"elements must be homogeneously typed. Found {sorted(map(str, found))}. Fix: convert "
        "them to one type, or pass the type explicitly"
    )


def _parse_str(text: str, generics: tuple[str, ...]) -> str:
    name = text.strip()
    if not name:
        raise UnknownTypeException("empty type name")
    if name in generics:
        return RuntimeType(name)
    if name.startswith("(") and name.endswith(")"):
        return RuntimeType("Tuple", [_parse_str(p, generics) for p in _split_top(name[1:-1])])
    if "<" in name:
        if not name.endswith(">"):
            raise UnknownTypeException(f"malformed type name {text!r}")
        origin, inner = name[:-1].split("<", 1)
        args = [_parse_str(p, generics) for p in _split_top(inner)]
        if origin.strip() in _SENSITIVITY_METRICS:
            return SensitivityMetric(origin.strip(), args)
        return RuntimeType(origin.strip(), args)
    if name in _ATOMS or name in _BARE or name == "()":
        return name
    lowered = {"int": _default_int(), "float": _default_float(), "str": "String"}
    if name in lowered:
        return lowered[name]
    try:
        return _types.carrier_name(name)
    except NotImplementedForType:
        pass
    if name.isidentifier() and name[:1].isupper():
        return name  # a bare (non-generic) metric, measure or domain name
    raise UnknownTypeException(f"unrecognized type name {text!r}")


class Carrier(RuntimeType):
    """A generic carrier constructor: ``Vec[i32]``, ``Option[f64]``, ``HashMap[str, int]``."""

    def __getitem__(self, subtypes: Any) -> RuntimeType:
        items = subtypes if isinstance(subtypes, tuple) else (subtypes,)
        return Carrier(self.origin, [RuntimeType.parse(t) for t in items])


class SensitivityMetric(RuntimeType):
    """A generic distance-type metric: ``L1Distance[int]`` is ``L1Distance<i32>``."""

    def __getitem__(self, associated_type: Any) -> RuntimeType:
        return SensitivityMetric(self.origin, [RuntimeType.parse(associated_type)])


Vec: Carrier = Carrier("Vec")
Option: Carrier = Carrier("Option")
HashMap: Carrier = Carrier("HashMap")
AbsoluteDistance: SensitivityMetric = SensitivityMetric("AbsoluteDistance")
L1Distance: SensitivityMetric = SensitivityMetric("L1Distance")
L2Distance: SensitivityMetric = SensitivityMetric("L2Distance")
LInfDistance: SensitivityMetric = SensitivityMetric("LInfDistance")


def _set_default(kind: type, T: object, allowed: frozenset[str]) -> None:
    name = RuntimeType.parse(T)
    if name not in allowed:
        raise UnknownTypeException(f"T must be one of {sorted(allowed)}, got {T!r}")
    _types._ALIASES[kind] = name
    _types._ALIASES[kind.__name__] = name


def set_default_int_type(T: object) -> None:
    """Make ``int`` (and ``"int"``) mean the integer carrier ``T`` everywhere (default i32).

    Raises:
        UnknownTypeException: if ``T`` is not an integer type.
    """
    _set_default(int, T, _INTEGER_TYPES)


def set_default_float_type(T: object) -> None:
    """Make ``float`` (and ``"float"``) mean the float carrier ``T`` everywhere (default f64).

    Raises:
        UnknownTypeException: if ``T`` is not ``f32`` or ``f64``.
    """
    _set_default(float, T, _FLOAT_TYPES)


def get_atom(type_name: object) -> str | None:
    """The innermost atomic type of a descriptor: ``get_atom("Vec<i32>") == "i32"``."""
    t = RuntimeType.parse(type_name)
    while isinstance(t, RuntimeType):
        if not t.args:
            return None
        t = t.args[0]
    return t


def get_first(value: Any) -> Any:
    """The first element of a collection, or None if it is None or empty."""
    if value is None or not len(value):
        return None
    return next(iter(value))


def parse_or_infer(type_name: object, example: object) -> str:
    """:meth:`RuntimeType.parse_or_infer`."""
    return RuntimeType.parse_or_infer(type_name, example)


def get_carrier_type(domain: Any) -> str:
    """The carrier type of a domain, as a descriptor."""
    return RuntimeType.parse(domain.carrier_type)


def get_distance_type(value: Any) -> str:
    """The distance type of a metric or measure, as a descriptor."""
    return RuntimeType.parse(value.distance_type)


def _polars_kind(x: object) -> str | None:
    """``"Series"``, ``"DataFrame"``, ``"LazyFrame"`` or ``"Expr"`` for a Polars object of that
    class (or a subclass), else None: the table API's carriers, named without importing Polars."""
    for cls in type(x).__mro__:
        if cls.__module__.split(".")[0] == "polars" and cls.__name__ in _POLARS_KINDS:
            return cls.__name__
    return None


_POLARS_KINDS = ("Series", "DataFrame", "LazyFrame", "Expr")
