"""The core classes under OpenDP 0.16's module path: ``from opendp_lite.mod import ...``.

OpenDP keeps its core classes, feature flags and parameter search in ``opendp.mod``; this
module re-exports opendp_lite's under the same names, so ``from opendp.mod import
Measurement`` becomes ``from opendp_lite.mod import Measurement``.

>>> from opendp_lite.mod import Measurement, OpenDPException, binary_search
>>> binary_search(lambda x: x >= 2.5)
2.5
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import __version__
from .combinators.composition import Odometer, OdometerQueryable
from .core import (
    _FEATURES,
    Domain,
    Function,
    Measure,
    Measurement,
    Metric,
    PartialMeasurement,
    PartialTransformation,
    Queryable,
    Transformation,
    assert_features,
    disable_features,
    enable_features,
)
from .domains import AtomDomain, ExtrinsicDomain, OptionDomain, VectorDomain
from .errors import OpenDPLiteError as OpenDPException
from .measures import Approximate as ApproximateDivergence
from .measures import ExtrinsicDivergence, PrivacyProfile
from .metrics import ExtrinsicDistance
from .search import (
    _infer_bounds,
    _infer_type,
    _parse_type,
    binary_search,
    binary_search_chain,
    binary_search_param,
)
from .serialization import deserialize, serialize
from .typing import UnknownTypeException

__all__ = [
    "GLOBAL_FEATURES",
    "ApproximateDivergence",
    "AtomDomain",
    "Domain",
    "ExtrinsicDistance",
    "ExtrinsicDivergence",
    "ExtrinsicDomain",
    "Function",
    "Measure",
    "Measurement",
    "Metric",
    "Odometer",
    "OdometerQueryable",
    "OpenDPException",
    "OptionDomain",
    "PartialMeasurement",
    "PartialTransformation",
    "PrivacyProfile",
    "Queryable",
    "Transformation",
    "UnknownTypeException",
    "VectorDomain",
    "__version__",
    "assert_features",
    "binary_search",
    "binary_search_chain",
    "binary_search_param",
    "deserialize",
    "disable_features",
    "enable_features",
    "exponential_bounds_search",
    "serialize",
]

#: The set of enabled features (the same object :func:`enable_features` updates).
GLOBAL_FEATURES: set[str] = _FEATURES


def exponential_bounds_search(
    predicate: Callable[[Any], bool], T: object = None
) -> tuple[Any, Any] | None:
    """Bounds ``(lower, upper)`` between which ``predicate`` changes, or None if none is found.

    The search widens exponentially around 0 (as :func:`binary_search` does without bounds).
    ``T`` (``float`` or ``int``) is inferred from the predicate if not given.

    >>> exponential_bounds_search(lambda x: x >= 100.0)
    (16.0, 256.0)
    >>> exponential_bounds_search(lambda x: True, T=int) is None
    True
    """
    kind = _infer_type(predicate) if T is None else _parse_type(T)
    try:
        return _infer_bounds(predicate, None, None, kind)
    except ValueError:
        return None
