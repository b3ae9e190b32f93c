"""What the encoder and the decoder share: the format, the allow-list, the spaces written from
their fields, the classes and types a document may name, and the user-registered pieces."""

from __future__ import annotations

import dataclasses
from collections import ChainMap
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from .. import domains, measures, metrics
from .._registry import CONSTRUCTORS, RecordedConstructor
from ..combinators.composition import Odometer
from ..core import (
    Function,
    Measurement,
    Transformation,
)
from ..errors import SerializationError
from ..measurements.randomized_response import BitVectorDomain, bitvector_domain
from ..measurements.sensitivity_sampling import SampledSensitivity
from ..measurements.threshold import L0PInfDistance, l01inf_distance, l02inf_distance
from ..metrics import (
    ChangeOneIdDistance,
    PartitionDistance,
    SymmetricIdDistance,
    change_one_id_distance,
    partition_distance,
    symmetric_id_distance,
)
from ..transformations.partition import PartitionDomain

__all__ = ["ALLOWED", "FORMAT_VERSION", "register_serializable", "register_space"]

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
register_space(
    ChangeOneIdDistance, "change_one_id_distance", change_one_id_distance, ("identifier",)
)
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
    from ..errors import InvalidParameter

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


_FIX = (
    "serialization records constructor calls, not code: give it a name with "
    "dp.register_serializable('a name', obj), and register the same name before dp.deserialize"
)
