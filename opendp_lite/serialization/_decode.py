"""The decoder: a document's nodes read through a table of node kinds, its calls made through
the allow-list."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from ..core import _UNTRUSTED_DOCUMENT, Measurement, Transformation
from ..errors import OpenDPLiteError, SerializationError
from ..typing import RuntimeType
from ._tables import (
    _CLASSES,
    _FIX,
    _FORMAT,
    _NP_KINDS,
    _PY_TYPES,
    _REGISTERED,
    _SPACE_CONSTRUCTORS,
    _UNTRUSTED,
    _VALUES,
    ALLOWED,
    FORMAT_VERSION,
)

__all__ = ["deserialize"]

# ----------------------------------------------------------------------------------------------
# Decoding


def _reject_constant(name: str) -> Any:
    raise SerializationError(
        f"{name} is not valid JSON; infinities are written as {{'float': ...}}"
    )


def deserialize(text: str | bytes, *, trust_claims: bool = False) -> Any:
    """Rebuild the object that :func:`serialize` wrote, by calling the constructors it names.

    Safe on untrusted input: only the public constructors of opendp_lite in the allow-list
    can be called, and user-defined pieces only by a name registered with
    :func:`register_serializable` in this process; each constructor checks its arguments again.
    A constructor that takes a claim on trust (it needs ``honest-but-curious``: a user's map, a
    stated sensitivity, ``record_distance``, ``population_size``, ...) is refused unless the
    reader vouches for the document with ``trust_claims=True`` (and has the feature enabled):
    a document must not lower a map by what it asserts.

    Raises:
        SerializationError: for a document that is not one, a format version other than
            :data:`FORMAT_VERSION`, a name outside the allow-list or not registered, or
            arguments that a constructor refuses for a reason other than its own typed error.
        OpenDPLiteError: the typed error of a constructor that refuses its arguments.
    """
    try:
        doc = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as e:
        if isinstance(e, SerializationError):
            raise
        raise SerializationError(f"not a JSON document: {e}") from None
    if not isinstance(doc, dict) or set(doc) != {"format", "version", "value"}:
        raise SerializationError(
            "not an opendp_lite document: expected an object with keys format, version, value"
        )
    if doc["format"] != _FORMAT:
        raise SerializationError(f"not an opendp_lite document: format {doc['format']!r}")
    version = doc["version"]
    if type(version) is not int or version != FORMAT_VERSION:
        raise SerializationError(
            f"unknown format version {version!r}: this opendp_lite reads version "
            f"{FORMAT_VERSION}; deserialize with the opendp_lite that wrote it"
        )
    token = _UNTRUSTED_DOCUMENT.set(not trust_claims)
    try:
        return _decode(doc["value"])
    except RecursionError:
        raise SerializationError("the document is nested too deeply") from None
    finally:
        _UNTRUSTED_DOCUMENT.reset(token)


def _decode(node: Any) -> Any:
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if isinstance(node, list):
        raise SerializationError("a bare JSON array is not a value here; lists are {'list': [...]}")
    if not isinstance(node, dict) or not node:
        raise SerializationError(f"unexpected node {node!r}")
    keys = frozenset(node)
    compound = _COMPOUND_NODES.get(keys)
    if compound is not None:
        return compound(node)
    if len(keys) != 1:
        raise SerializationError(f"unexpected node with keys {sorted(keys)}")
    (kind,) = keys
    decode = _NODES.get(kind)
    if decode is None:
        raise SerializationError(f"unknown node kind {kind!r}")
    return decode(node[kind])


def _decode_ndarray(node: dict[str, Any]) -> Any:
    dtype = _decode_dtype(node["dtype"])
    data = _decode(node["ndarray"])
    if not isinstance(data, list):
        raise SerializationError("ndarray data must be a list")
    if dtype.kind == "O":
        arr = np.empty(len(data), dtype=object)
        arr[:] = data
        return arr
    return np.asarray(data, dtype=dtype)


def _decode_np_scalar(node: dict[str, Any]) -> Any:
    value = _decode(node["np_scalar"])
    if not isinstance(value, (bool, int, float, str, bytes)):
        raise SerializationError(f"a numpy scalar must be a plain value, got {value!r}")
    return _decode_dtype(node["dtype"]).type(value)


def _decode_value(node: dict[str, Any]) -> Any:
    for untrusted, why in _UNTRUSTED.items():
        if node["value"] == untrusted.__name__:
            raise SerializationError(f"{why}{_FIX}")
    cls = _VALUES.get(node["value"]) if isinstance(node["value"], str) else None
    fields = _decode(node["fields"])
    if cls is None or not isinstance(fields, dict):
        raise SerializationError(f"unknown value class {node['value']!r}")
    try:
        return cls(**fields)
    except TypeError as e:
        raise SerializationError(f"{node['value']}: {e}") from None


def _decode_items(kind: str, value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise SerializationError(f"{kind} must hold a JSON array")
    return [_decode(v) for v in value]


def _decode_hashables(kind: str, build: Callable[[list[Any]], Any]) -> Callable[[Any], Any]:
    def decode(value: Any) -> Any:
        items = _decode_items(kind, value)
        try:
            return build(items)
        except TypeError as e:
            raise SerializationError(f"{kind}: {e}") from None

    return decode


def _decode_dict(value: Any) -> Any:
    if not isinstance(value, list) or not all(isinstance(p, list) and len(p) == 2 for p in value):
        raise SerializationError("dict must hold [key, value] pairs")
    try:
        return {_decode(k): _decode(v) for k, v in value}
    except TypeError as e:
        raise SerializationError(f"dict: {e}") from None


_FLOATS = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def _decode_float(value: Any) -> Any:
    if value not in _FLOATS:
        raise SerializationError(f"unknown float {value!r}")
    return _FLOATS[value]


def _decode_fraction(value: Any) -> Any:
    if not (
        isinstance(value, list)
        and len(value) == 2
        and all(type(v) is int for v in value)
        and value[1] > 0
    ):
        raise SerializationError(
            f"fraction must be [numerator, positive denominator], got {value!r}"
        )
    return Fraction(value[0], value[1])


def _decode_range(value: Any) -> Any:
    if not (isinstance(value, list) and len(value) == 3 and all(type(v) is int for v in value)):
        raise SerializationError(f"range must be [start, stop, step], got {value!r}")
    if value[2] == 0:
        raise SerializationError("range step must not be 0")
    return range(*value)


def _decode_runtime_type(value: Any) -> Any:
    if not isinstance(value, str):
        raise SerializationError("runtime_type must be a string")
    try:
        return RuntimeType.parse(value)
    except OpenDPLiteError as e:
        raise SerializationError(f"runtime_type {value!r}: {e}") from None


def _decode_type(value: Any) -> Any:
    if value not in _PY_TYPES:
        raise SerializationError(f"unknown type {value!r}; known: {sorted(_PY_TYPES)}")
    return _PY_TYPES[value]


def _decode_class(value: Any) -> Any:
    if value not in _CLASSES:
        raise SerializationError(f"unknown class {value!r}; known: {sorted(_CLASSES)}")
    return _CLASSES[value]


def _decode_registered(value: Any) -> Any:
    if not isinstance(value, str) or value not in _REGISTERED:
        raise SerializationError(
            f"the document refers to the user-defined piece {value!r}, which is not "
            f"registered in this process: call dp.register_serializable({value!r}, obj) "
            "with the same code first"
        )
    return _REGISTERED[value]


def _decode_invoke(value: Any) -> Any:
    target = _decode(value)
    if not isinstance(target, (Transformation, Measurement)):
        raise SerializationError("invoke must refer to a transformation or measurement")
    return target.invoke


def _decode_dtype(name: Any) -> np.dtype[Any]:
    if not isinstance(name, str):
        raise SerializationError(f"a numpy dtype is named by a string, got {name!r}")
    try:
        dtype = np.dtype(name)
    except TypeError:
        raise SerializationError(f"unknown numpy dtype {name!r}") from None
    if dtype.kind not in _NP_KINDS or dtype.fields is not None:
        raise SerializationError(f"numpy dtype {name!r} is not allowed")
    return dtype


def _decode_call(node: dict[str, Any]) -> Any:
    name = node["call"]
    if not isinstance(name, str):
        raise SerializationError(f"a constructor is named by a string, got {name!r}")
    fn = _SPACE_CONSTRUCTORS.get(name) or ALLOWED.get(name)
    if fn is None:
        raise SerializationError(
            f"{name!r} is not a constructor that a document may call (only opendp_lite's "
            "public constructors can be)"
        )
    args, kwargs = node["args"], node["kwargs"]
    if not isinstance(args, list) or not isinstance(kwargs, dict):
        raise SerializationError(f"{name}: args must be a list and kwargs an object")
    pos = [_decode(a) for a in args]
    kw = {str(k): _decode(v) for k, v in kwargs.items()}
    try:
        return fn(*pos, **kw)
    except OpenDPLiteError:
        raise
    except Exception as e:  # a wrong argument shape from a crafted document
        raise SerializationError(f"{name}: the document's arguments are refused: {e!r}") from e


#: Nodes of several keys, by their key set -> decoder of the node.
_COMPOUND_NODES: dict[frozenset[str], Callable[[dict[str, Any]], Any]] = {
    frozenset({"call", "args", "kwargs"}): _decode_call,
    frozenset({"ndarray", "dtype"}): _decode_ndarray,
    frozenset({"np_scalar", "dtype"}): _decode_np_scalar,
    frozenset({"value", "fields"}): _decode_value,
}

#: Nodes of one key, by that key (the node's kind) -> decoder of the key's value.
_NODES: dict[str, Callable[[Any], Any]] = {
    "list": lambda value: _decode_items("list", value),
    "tuple": lambda value: tuple(_decode_items("tuple", value)),
    "set": _decode_hashables("set", set),
    "frozenset": _decode_hashables("frozenset", frozenset),
    "dict": _decode_dict,
    "float": _decode_float,
    "fraction": _decode_fraction,
    "range": _decode_range,
    "runtime_type": _decode_runtime_type,
    "type": _decode_type,
    "np_type": lambda value: _decode_dtype(value).type,
    "np_dtype": _decode_dtype,
    "class": _decode_class,
    "registered": _decode_registered,
    "invoke": _decode_invoke,
}
