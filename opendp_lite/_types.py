"""Carrier types: the names OpenDP uses for atomic types, and their numpy dtypes.

A carrier is named like OpenDP names it: ``"f64"``, ``"f32"``, ``"i8"`` … ``"i64"``,
``"u8"`` … ``"u64"``, ``"bool"``, ``"String"``, and the calendar types ``"NaiveDate"`` (a
``datetime.date`` that is not a ``datetime``) and ``"NaiveTime"`` (a ``datetime.time`` without
a time zone).  Python's ``float`` is ``f64``, ``int`` is ``i32`` (OpenDP's default integer),
``str`` is ``String``, ``datetime.date`` is ``NaiveDate``.  numpy dtypes are accepted too.

>>> carrier_name(float), carrier_name(int), carrier_name("i64"), carrier_name(np.float32)
('f64', 'i32', 'i64', 'f32')
"""

from __future__ import annotations

import datetime as _dt
import sys
from collections.abc import Sequence
from typing import Any, TypeAlias, TypeVar, Union

import numpy as np
import numpy.typing as npt

from .errors import NotImplementedForType, UnknownTypeException

__all__ = [
    "FLOAT_TYPES",
    "INT_TYPES",
    "NUMERIC_TYPES",
    "Never",
    "Vec",
    "carrier_dtype",
    "carrier_name",
    "int_bounds",
    "is_float",
    "is_int",
    "is_temporal",
]

FLOAT_TYPES = ("f32", "f64")
SIGNED_TYPES = ("i8", "i16", "i32", "i64")
UNSIGNED_TYPES = ("u8", "u16", "u32", "u64", "usize")
INT_TYPES = SIGNED_TYPES + UNSIGNED_TYPES
NUMERIC_TYPES = FLOAT_TYPES + INT_TYPES
TEMPORAL_TYPES = ("NaiveDate", "NaiveTime")
ALL_TYPES = (*NUMERIC_TYPES, "bool", "String", *TEMPORAL_TYPES)

_ALIASES: dict[object, str] = {
    float: "f64",
    int: "i32",
    bool: "bool",
    str: "String",
    _dt.date: "NaiveDate",
    _dt.time: "NaiveTime",
    "float": "f64",
    "int": "i32",
    "str": "String",
    "string": "String",
    "f64": "f64",
    "float64": "f64",
    "float32": "f32",
}

_DTYPES: dict[str, Any] = {
    "f64": np.float64,
    "f32": np.float32,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "u8": np.uint8,
    "u16": np.uint16,
    "u32": np.uint32,
    "u64": np.uint64,
    "usize": np.uint64,
    "bool": np.bool_,
    "String": np.object_,
    "NaiveDate": np.object_,
    "NaiveTime": np.object_,
}

_T = TypeVar("_T")

# The bottom type: ``typing.Never`` is Python 3.11+; on 3.10 ``typing.NoReturn`` is the same
# type to mypy (and an ordinary typing form at run time).
if sys.version_info >= (3, 11):
    from typing import Never
else:
    from typing import NoReturn as Never

#: A vector carrier: any sequence, or a 1-d numpy array.  Vector domains normalise it to a
#: numpy array of the carrier dtype before a function sees it.
Vec: TypeAlias = Union[Sequence[_T], "npt.NDArray[Any]"]


def carrier_name(T: object) -> str:
    """The OpenDP name of a carrier type given as a Python type, a string or a numpy dtype.

    Raises:
        UnknownTypeException: if ``T`` names no type at all (a ``NotImplementedForType``).
        NotImplementedForType: if ``T`` is a type numpy cannot carry (i128, u128, isize).
    """
    if isinstance(T, str) and T in ALL_TYPES:
        return T
    if T in _ALIASES:
        return _ALIASES[T]
    try:
        dt = np.dtype(T)  # type: ignore[call-overload]
    except TypeError:
        dt = None
    if dt is not None and dt.kind in "fiub":
        name = {"f": "f", "i": "i", "u": "u", "b": "bool"}[dt.kind]
        return "bool" if name == "bool" else f"{name}{dt.itemsize * 8}"
    message = f"unsupported carrier type T={T!r}; expected one of {ALL_TYPES}"
    if isinstance(T, str) and T in ("i128", "u128", "isize"):  # known, but numpy has no dtype
        raise NotImplementedForType(message)
    raise UnknownTypeException(message)  # names no type: OpenDP's exception for that


def carrier_dtype(T: str) -> Any:
    """The numpy scalar type that holds carrier ``T``."""
    return _DTYPES[T]


def is_float(T: str) -> bool:
    """Whether carrier ``T`` is a binary floating-point type."""
    return T in FLOAT_TYPES


def is_temporal(T: str) -> bool:
    """Whether carrier ``T`` is a calendar type (``NaiveDate``, ``NaiveTime``)."""
    return T in TEMPORAL_TYPES


def is_int(T: str) -> bool:
    """Whether carrier ``T`` is a fixed-width integer type."""
    return T in INT_TYPES


def _int_bounds_table() -> dict[str, tuple[int, int]]:
    out = {}
    for name, dt in _DTYPES.items():
        if np.issubdtype(dt, np.integer):
            info = np.iinfo(dt)
            out[name] = (int(info.min), int(info.max))
    return out


_INT_BOUNDS = _int_bounds_table()  # np.iinfo costs ~1 µs: looked up once per carrier


def int_bounds(T: str) -> tuple[int, int]:
    """The inclusive range of integer carrier ``T``.

    >>> int_bounds("i8")
    (-128, 127)
    """
    try:
        return _INT_BOUNDS[T]
    except KeyError:
        info = np.iinfo(_DTYPES[T])  # raises KeyError for a non-integer carrier, as before
        return int(info.min), int(info.max)
