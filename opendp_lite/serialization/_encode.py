"""The encoder: an object as the JSON of the constructor calls that built it."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np

from .._registry import RecordedConstructor
from ..core import Domain, Function, Measure, Measurement, Metric, Queryable, Transformation
from ..errors import SerializationError
from ..typing import RuntimeType
from ._tables import (
    _CLASSES,
    _FIX,
    _FORMAT,
    _NP_KINDS,
    _PY_TYPES,
    _RECORDED,
    _UNTRUSTED,
    _USER_SPACES,
    _VALUES,
    FORMAT_VERSION,
    _partial_constructor,
    _Record,
    _record_of,
    _registered_name,
    _space_call,
)

__all__ = ["serialize"]

# ----------------------------------------------------------------------------------------------
# Encoding


class _Encoder:
    def __init__(self) -> None:
        self.active: set[int] = set()

    def encode(self, obj: Any, where: str) -> Any:
        if obj is None or isinstance(obj, bool):
            return obj
        if isinstance(obj, RuntimeType):
            return {"runtime_type": str(obj)}
        if isinstance(obj, str):
            return str(obj)
        if isinstance(obj, np.generic):
            return self._np_scalar(obj, where)
        if isinstance(obj, int):
            return int(obj)
        if isinstance(obj, float):
            f = float(obj)
            if math.isfinite(f):
                return f
            return {"float": "nan" if math.isnan(f) else ("inf" if f > 0 else "-inf")}
        if isinstance(obj, Fraction):
            return {"fraction": [obj.numerator, obj.denominator]}
        if isinstance(obj, range):
            return {"range": [obj.start, obj.stop, obj.step]}
        name = _registered_name(obj)
        if name is not None:
            return {"registered": name}
        if isinstance(obj, type):
            return self._type(obj, where)
        if isinstance(obj, np.dtype):
            return {"np_dtype": self._dtype_name(obj, where)}
        if id(obj) in self.active:
            raise SerializationError(f"{where}: {obj!r} refers to itself")
        self.active.add(id(obj))
        try:
            return self._compound(obj, where)
        finally:
            self.active.discard(id(obj))

    def _compound(self, obj: Any, where: str) -> Any:
        if isinstance(obj, list):
            return {"list": [self.encode(v, where) for v in obj]}
        if isinstance(obj, tuple):
            return {"tuple": [self.encode(v, where) for v in obj]}
        if isinstance(obj, (set, frozenset)):
            kind = "set" if isinstance(obj, set) else "frozenset"
            items = [self.encode(v, where) for v in obj]
            return {kind: sorted(items, key=lambda v: json.dumps(v, sort_keys=True))}
        if isinstance(obj, Mapping) and not isinstance(obj, (Domain, Metric, Measure)):
            return {
                "dict": [[self.encode(k, where), self.encode(v, where)] for k, v in obj.items()]
            }
        if isinstance(obj, np.ndarray):
            if isinstance(obj, np.ma.MaskedArray) or obj.ndim == 0:
                raise SerializationError(f"{where}: cannot serialize the array {obj!r}")
            dtype = self._dtype_name(obj.dtype, where)
            data = obj.tolist() if obj.dtype.kind != "O" else list(obj)
            return {"ndarray": self.encode(data, where), "dtype": dtype}
        if isinstance(obj, Queryable):
            raise SerializationError(
                f"{where}: a Queryable holds privacy state that no constructor call can "
                "rebuild; serialize the measurement that makes it instead"
            )
        if isinstance(obj, _USER_SPACES):
            raise SerializationError(
                f"{where}: the user-defined {type(obj).__name__} {obj!r} cannot be serialized "
                f"as it is: {_FIX}"
            )
        if isinstance(obj, (Domain, Metric, Measure)):
            call = _space_call(obj)
            if call is None:
                raise SerializationError(
                    f"{where}: {type(obj).__name__} {obj!r} has no serializable form: {_FIX}"
                )
            return self._call(call, where)
        if isinstance(obj, _RECORDED):
            record = _record_of(obj)
            if record is not None:
                return self._call(record, where)
            if isinstance(obj, Function):
                return self._function(obj, where)
            raise SerializationError(
                f"{where}: this {type(obj).__name__} was not built by a public constructor of "
                f"opendp_lite (or was built before opendp_lite finished importing): {_FIX}"
            )
        if type(obj) in _UNTRUSTED:
            raise SerializationError(f"{where}: {_UNTRUSTED[type(obj)]}{_FIX}")
        if _VALUES.get(type(obj).__name__) is type(obj) and dataclasses.is_dataclass(obj):
            fields = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
            return {"value": type(obj).__name__, "fields": self.encode(fields, where)}
        partial_call = self._partial_call(obj)
        if partial_call is not None:
            return self._call(partial_call, where)
        if callable(obj):
            invoked = getattr(obj, "__self__", None)
            if isinstance(invoked, (Transformation, Measurement)) and getattr(
                obj, "__name__", None
            ) in ("invoke", "__call__"):
                return {"invoke": self.encode(invoked, where)}
            label = getattr(obj, "__qualname__", None) or repr(obj)
            raise SerializationError(
                f"{where}: the user-defined function {label} cannot be serialized: {_FIX}"
            )
        raise SerializationError(
            f"{where}: cannot serialize {type(obj).__name__} {obj!r}; only transformations, "
            "measurements, partials, functions, domains, metrics, measures and plain values "
            "built from them can be"
        )

    def _function(self, obj: Function[Any, Any], where: str) -> Any:
        return self._call(("new_function", (obj.function,), {}), where)

    @staticmethod
    def _partial_call(obj: object) -> _Record | None:
        inner = _partial_constructor(obj)
        return inner.call if isinstance(inner, RecordedConstructor) else None

    def _call(self, call: _Record, where: str) -> Any:
        name, args, kwargs = call
        inner = f"{where} > {name}" if where else name
        return {
            "call": name,
            "args": [self.encode(a, inner) for a in args],
            "kwargs": {str(k): self.encode(v, f"{inner}({k}=)") for k, v in kwargs.items()},
        }

    def _type(self, obj: type, where: str) -> Any:
        if _PY_TYPES.get(obj.__name__) is obj:
            return {"type": obj.__name__}
        if issubclass(obj, np.generic):
            return {"np_type": self._dtype_name(np.dtype(obj), where)}
        if _CLASSES.get(obj.__name__) is obj:
            return {"class": obj.__name__}
        raise SerializationError(f"{where}: cannot serialize the class {obj!r}: {_FIX}")

    @staticmethod
    def _dtype_name(dtype: np.dtype[Any], where: str) -> str:
        if dtype.kind not in _NP_KINDS or dtype.fields is not None:
            raise SerializationError(f"{where}: cannot serialize numpy dtype {dtype!r}")
        return dtype.str if dtype.kind in "US" else dtype.name

    def _np_scalar(self, obj: np.generic, where: str) -> Any:
        dtype = self._dtype_name(obj.dtype, where)
        return {"np_scalar": self.encode(obj.item(), where), "dtype": dtype}


def serialize(obj: Any) -> str:
    """A JSON document that rebuilds ``obj`` with :func:`deserialize`.

    ``obj`` may be a transformation, measurement, partial (``then_x(...)``), chain,
    post-processing function, domain, metric or measure, or a plain value (numbers, strings,
    tuples, lists, dicts) holding them.  The document records the constructor calls that built
    it, never code.

    Raises:
        SerializationError: for a user-defined piece that has no registered name (the message
            says how to give it one), a Queryable, or an object no public constructor built.
    """
    value = _Encoder().encode(obj, "")
    return json.dumps(
        {"format": _FORMAT, "version": FORMAT_VERSION, "value": value}, allow_nan=False
    )
