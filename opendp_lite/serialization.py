"""Save, share and audit measurements as JSON: ``serialize`` / ``deserialize``.

A document records the *constructor calls* that built an object (name and arguments,
recursively), never code: ``deserialize`` rebuilds the object by calling the same public
constructors again, so every check they make runs again.  See ``docs/serialization.md``.

How calls are recorded: every public constructor is declared with ``@constructor``
(``opendp_lite/_registry.py``), which stores ``(name, args, kwargs)`` on the Transformation,
Measurement or Function it returns (the ``_record`` slot of the core classes).  A partial
stores its call on its constructor, and what it builds records the ``make_*`` call with the
domain and metric it was applied to.  Domains, metrics and measures are plain frozen values,
written from their fields as calls of their public constructors.  The encoder
(:class:`_Encoder`) writes those calls; the decoder (:func:`_decode`) reads a node through a
table of node kinds (:data:`_NODES`, :data:`_COMPOUND_NODES`).

Deserialization is safe on untrusted input: a call names one of the constructors in
:data:`ALLOWED` (the constructors registered by ``@constructor``, and ``apply_partial``; nothing
is imported, looked up by attribute or evaluated), and a user-defined piece is found only in the
registry filled by :func:`register_serializable` in this process. Nothing a document carries may
lower a map: constructors recompute their maps from the document's arguments, and a value a map
would take as a fact that cannot be recomputed (a :class:`SampledSensitivity`, estimated from
data) is refused unless the reader registered it; ``docs/serialization.md`` lists every node and
what it can carry into a map.

>>> import opendp_lite.prelude as dp
>>> space = dp.vector_domain(dp.atom_domain(bounds=(0, 10))), dp.symmetric_distance()
>>> meas = space >> dp.t.then_sum() >> dp.m.then_laplace(scale=5.0)
>>> text = dp.serialize(meas)
>>> copy = dp.deserialize(text)
>>> copy.map(1) == meas.map(1), copy.input_domain == meas.input_domain
(True, True)
>>> dp.serialize(copy) == text
True
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections import ChainMap
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any, TypeVar

import numpy as np

from . import domains, measures, metrics
from ._registry import CONSTRUCTORS, RecordedConstructor
from .combinators.composition import Odometer
from .core import (
    _UNTRUSTED_DOCUMENT,
    Domain,
    Function,
    Measure,
    Measurement,
    Metric,
    Queryable,
    Transformation,
)
from .errors import OpenDPLiteError, SerializationError
from .measurements.randomized_response import BitVectorDomain, bitvector_domain
from .measurements.sensitivity_sampling import SampledSensitivity
from .measurements.threshold import L0PInfDistance, l01inf_distance, l02inf_distance
from .transformations.partition import (
    PartitionDistance,
    PartitionDomain,
    SymmetricIdDistance,
    partition_distance,
    symmetric_id_distance,
)
from .typing import RuntimeType

__all__ = [
    "ALLOWED",
    "FORMAT_VERSION",
    "deserialize",
    "register_serializable",
    "register_space",
    "serialize",
]

T = TypeVar("T")

#: The version of the document format written by :func:`serialize`; :func:`deserialize`
#: refuses any other.
FORMAT_VERSION = 1
_FORMAT = "opendp_lite"

#: Names given by the user to user-defined pieces (functions, user domains, whole objects).
_REGISTERED: dict[str, object] = {}

_Record = tuple[str, tuple[Any, ...], dict[str, Any]]

#: What carries the call that built it (in its ``_record`` slot).
_RECORDED = (Transformation, Measurement, Function, Odometer)

#: Plain frozen values that constructors take, written field by field.  None today: the one
#: such value, a SampledSensitivity, carries an estimate from data into a map (see below).
_VALUES: dict[str, type] = {}

#: Values that a map reads as facts the library cannot recompute from the document: refused
#: in a document, they reach a deserialized object only as a piece the reader registered.
_UNTRUSTED: dict[type, str] = {
    SampledSensitivity: (
        "a SampledSensitivity's sensitivity and gamma are estimated from draws of data, which "
        "no document can prove: a document may carry one only by a registered name. "
    ),
}

# ----------------------------------------------------------------------------------------------
# Recorded constructor calls (recorded by ``@constructor``, opendp_lite/_registry.py)


def _record_of(obj: object) -> _Record | None:
    return getattr(obj, "_record", None)


def _apply_partial(partial: Any, input_domain: Any, input_metric: Any) -> Any:
    """``partial(input_domain, input_metric)``, for a partial rebuilt from a document."""
    if not isinstance(_partial_constructor(partial), RecordedConstructor):
        raise SerializationError(f"apply_partial needs a then_x partial, got {partial!r}")
    return partial(input_domain, input_metric)


def _partial_constructor(partial: object) -> Any:
    for slot in ("constructor", "_make"):
        inner = getattr(partial, slot, None)
        if callable(inner):
            return inner
    return None


#: Constructor name -> the callable that deserialization may call (the allow-list): every
#: constructor declared with ``@constructor`` (read live from the registry, so the extras'
#: constructors are in it once their module is loaded), and ``apply_partial``.
ALLOWED: Mapping[str, Callable[..., Any]] = ChainMap(
    {"apply_partial": _apply_partial}, CONSTRUCTORS
)


# ----------------------------------------------------------------------------------------------
# Domains, metrics and measures, written from their fields


def _dataframe_domain(K: Any = "String", columns: Any = ()) -> domains.DataFrameDomain:
    """``dataframe_domain(K)`` with the typed columns a constructor declared."""
    out = domains.dataframe_domain(K)
    if not columns:
        return out
    if not isinstance(columns, tuple) or not all(
        isinstance(c, tuple) and len(c) == 2 and isinstance(c[1], domains.VectorDomain)
        for c in columns
    ):
        raise SerializationError(
            f"dataframe columns must be (name, vector_domain) pairs, got {columns!r}"
        )
    return dataclasses.replace(out, columns=columns)


_SPACE_CONSTRUCTORS: dict[str, Callable[..., Any]] = {
    "atom_domain": domains.atom_domain,
    "vector_domain": domains.vector_domain,
    "option_domain": domains.option_domain,
    "map_domain": domains.map_domain,
    "dataframe_domain": _dataframe_domain,
    "bitvector_domain": bitvector_domain,
    "symmetric_distance": metrics.symmetric_distance,
    "insert_delete_distance": metrics.insert_delete_distance,
    "change_one_distance": metrics.change_one_distance,
    "hamming_distance": metrics.hamming_distance,
    "discrete_distance": metrics.discrete_distance,
    "absolute_distance": metrics.absolute_distance,
    "l1_distance": metrics.l1_distance,
    "l2_distance": metrics.l2_distance,
    "linf_distance": metrics.linf_distance,
    "l01inf_distance": l01inf_distance,
    "l02inf_distance": l02inf_distance,
    "max_divergence": measures.max_divergence,
    "zero_concentrated_divergence": measures.zero_concentrated_divergence,
    "approximate": measures.approximate,
    "smoothed_max_divergence": measures.smoothed_max_divergence,
    "renyi_divergence": measures.renyi_divergence,
    "random_max_divergence": measures.random_max_divergence,
    "random_zero_concentrated_divergence": measures.random_zero_concentrated_divergence,
}

_USER_SPACES = (domains.UserDomain, metrics.UserDistance, measures.UserDivergence)

#: Spaces written as ``name(**fields)``: class -> (constructor name, the fields it takes)
_FIELD_SPACES: dict[type, tuple[str, tuple[str, ...]]] = {}


def register_space(
    cls: type, name: str, build: Callable[..., Any], fields: tuple[str, ...]
) -> None:
    """Serialize ``cls`` instances as the call ``build(**{f: obj.f for f in fields})``, by ``name``.

    ``build`` is a public constructor or a builder that checks every field as one would (a
    document is untrusted).  For spaces of modules that load after this one (the extras).
    """
    _FIELD_SPACES[cls] = (name, fields)
    _SPACE_CONSTRUCTORS[name] = build


def _partition_domain(by: Any, keys: Any, part_domain: Any) -> PartitionDomain:
    """``make_partition_by``'s output domain, checked field by field."""
    if not isinstance(by, tuple) or not by:
        raise SerializationError(f"a partition domain's 'by' is a non-empty tuple, got {by!r}")
    if keys is not None and not isinstance(keys, tuple):
        raise SerializationError(f"a partition domain's keys are a tuple or null, got {keys!r}")
    if not isinstance(part_domain, domains.DataFrameDomain):
        raise SerializationError(
            f"a partition domain's part_domain is a dataframe domain, got {part_domain!r}"
        )
    return PartitionDomain(by=by, keys=keys, part_domain=part_domain)


def _partition_distance(inner: Any) -> PartitionDistance:
    return partition_distance(inner)


register_space(SymmetricIdDistance, "symmetric_id_distance", symmetric_id_distance, ("identifier",))
register_space(PartitionDistance, "partition_distance", _partition_distance, ("inner",))
register_space(
    PartitionDomain, "partition_domain", _partition_domain, ("by", "keys", "part_domain")
)
register_space(
    domains.CategoricalDomain, "categorical_domain", domains.categorical_domain, ("categories",)
)

#: Classes that may appear as arguments (e.g. ``MO=dp.MaxDivergence``), by name.
_CLASSES: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        domains.AtomDomain,
        domains.VectorDomain,
        domains.OptionDomain,
        domains.MapDomain,
        domains.DataFrameDomain,
        BitVectorDomain,
        metrics.SymmetricDistance,
        metrics.InsertDeleteDistance,
        metrics.ChangeOneDistance,
        metrics.HammingDistance,
        metrics.DiscreteDistance,
        metrics.AbsoluteDistance,
        metrics.L1Distance,
        metrics.L2Distance,
        metrics.LInfDistance,
        L0PInfDistance,
        measures.MaxDivergence,
        measures.ZeroConcentratedDivergence,
        measures.Approximate,
        measures.SmoothedMaxDivergence,
        measures.RenyiDivergence,
    )
}

_PY_TYPES: dict[str, type] = {t.__name__: t for t in (int, float, str, bool, bytes, complex)}
_NP_KINDS = frozenset("biufUSO")


def _space_call(obj: object) -> _Record | None:
    """The public constructor call that builds a domain, metric or measure equal to ``obj``."""
    D, M, S = domains, metrics, measures
    by_fields = _FIELD_SPACES.get(type(obj))
    if by_fields is not None:
        name, fields = by_fields
        return name, (), {f: getattr(obj, f) for f in fields}
    if isinstance(obj, D.AtomDomain):
        return "atom_domain", (), {"bounds": obj.bounds, "nan": obj.nan, "T": obj.T}
    if isinstance(obj, D.VectorDomain):
        return "vector_domain", (obj.element_domain,), {"size": obj.size}
    if isinstance(obj, D.OptionDomain):
        return "option_domain", (obj.element_domain,), {}
    if isinstance(obj, D.MapDomain):
        return "map_domain", (obj.key_domain, obj.value_domain), {}
    if isinstance(obj, D.DataFrameDomain):
        return "dataframe_domain", (), {"K": obj.K, "columns": obj.columns}
    if isinstance(obj, BitVectorDomain):
        return "bitvector_domain", (), {"max_weight": obj.max_weight}
    for cls, name in (
        (M.SymmetricDistance, "symmetric_distance"),
        (M.InsertDeleteDistance, "insert_delete_distance"),
        (M.ChangeOneDistance, "change_one_distance"),
        (M.HammingDistance, "hamming_distance"),
        (M.DiscreteDistance, "discrete_distance"),
        (S.MaxDivergence, "max_divergence"),
        (S.ZeroConcentratedDivergence, "zero_concentrated_divergence"),
        (S.SmoothedMaxDivergence, "smoothed_max_divergence"),
        (S.RenyiDivergence, "renyi_divergence"),
    ):
        if type(obj) is cls:
            return name, (), {}
    if isinstance(obj, M.LInfDistance):
        return "linf_distance", (), {"T": obj.T, "monotonic": obj.monotonic}
    sensitivity: dict[type, str] = {
        M.AbsoluteDistance: "absolute_distance",
        M.L1Distance: "l1_distance",
        M.L2Distance: "l2_distance",
    }
    if isinstance(obj, M._SensitivityMetric) and type(obj) in sensitivity:
        return sensitivity[type(obj)], (), {"T": obj.T}
    if isinstance(obj, L0PInfDistance):
        return ("l01inf_distance" if obj.p == 1 else "l02inf_distance"), (obj.inner,), {}
    if isinstance(obj, S.Approximate):
        return "approximate", (obj.inner,), {}
    if isinstance(obj, S.RandomDivergence):
        inner = obj.inner
        name = (
            "random_max_divergence"
            if isinstance(inner, S.MaxDivergence)
            else "random_zero_concentrated_divergence"
        )
        return name, (obj.gamma,), {}
    return None


# ----------------------------------------------------------------------------------------------
# Registering user-defined pieces


def register_serializable(name: str, obj: T) -> T:
    """Give a user-defined piece a name, so that what holds it can be serialized.

    ``obj`` may be a function passed to a user constructor (``make_user_transformation``,
    ``new_function``, ``user_domain``, ...), a user domain, metric or measure, or a whole
    transformation or measurement.  A document refers to it by ``name``; the process that
    deserializes must register the same name (to its own copy of the code) first.  The last
    registration of a name wins.  Returns ``obj``.

    >>> import opendp_lite.prelude as dp
    >>> def double(x): return 2 * x
    >>> _ = dp.register_serializable("double", double)
    >>> dp.deserialize(dp.serialize(dp.new_function(double)))(21)
    42

    Raises:
        InvalidParameter: if ``name`` is not a non-empty string.
    """
    from .errors import InvalidParameter

    if not isinstance(name, str) or not name:
        raise InvalidParameter(f"name must be a non-empty string, got {name!r}")
    _REGISTERED[name] = obj
    return obj


def _registered_name(obj: object) -> str | None:
    for name, value in _REGISTERED.items():
        if value is obj:
            return name
    if isinstance(obj, _USER_SPACES):
        for name, value in _REGISTERED.items():
            if type(value) is type(obj) and value == obj:
                return name
    return None


# ----------------------------------------------------------------------------------------------
# Encoding


_FIX = (
    "serialization records constructor calls, not code: give it a name with "
    "dp.register_serializable('a name', obj), and register the same name before dp.deserialize"
)


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
