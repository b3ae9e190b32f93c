"""The typed error hierarchy of opendp_lite.

Every error the library raises on purpose is an :class:`OpenDPLiteError`.  Each also
subclasses the builtin exception a Python user would reach for (``ValueError`` for a bad
value, ``TypeError`` for a bad type), so ``except ValueError`` keeps working.

Mismatch errors carry both sides, so a failed chain shows what met what.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "DomainMismatch",
    "FailedFunction",
    "FailedMap",
    "FeatureNotEnabled",
    "InvalidParameter",
    "MeasureMismatch",
    "MetricMismatch",
    "NotImplementedForType",
    "NotInDomain",
    "OpenDPLiteError",
    "OpenDPLiteWarning",
    "ParameterTypeError",
    "QueryableError",
    "SerializationError",
]


class OpenDPLiteError(Exception):
    """Base class of every error raised on purpose by opendp_lite."""


class OpenDPLiteWarning(UserWarning):
    """Warns of a setting that weakens a guarantee (for example scripted randomness)."""


class _Mismatch(OpenDPLiteError, ValueError):
    kind = "objects"

    def __init__(self, left: Any, right: Any, context: str = "") -> None:
        self.left = left
        self.right = right
        where = f" in {context}" if context else ""
        super().__init__(
            f"intermediate {self.kind} don't match{where}:\n"
            f"    output {self.kind[:-1]}: {left!r}\n"
            f"    input {self.kind[:-1]}:  {right!r}"
        )


class DomainMismatch(_Mismatch):
    """Two domains that must be equal are not; ``left`` and ``right`` hold both."""

    kind = "domains"


class MetricMismatch(_Mismatch):
    """Two metrics that must be equal are not; ``left`` and ``right`` hold both."""

    kind = "metrics"


class MeasureMismatch(_Mismatch):
    """Two privacy measures that must be equal are not; ``left`` and ``right`` hold both."""

    kind = "measures"


class InvalidParameter(OpenDPLiteError, ValueError):
    """A constructor argument is out of range; the constructor refuses to build."""


class ParameterTypeError(InvalidParameter, TypeError):
    """A constructor argument has the wrong type (e.g. a float where a count is needed).

    Also a ``TypeError``, as in OpenDP: :func:`~opendp_lite.search.binary_search` infers the
    type of the parameter it searches from which type the predicate refuses this way.
    """


class FailedFunction(OpenDPLiteError):
    """A function could not be evaluated; nothing was released."""


class NotInDomain(FailedFunction, ValueError, TypeError):
    """The argument is not a member of the input domain; raised before any randomness is drawn.

    It is both a ``ValueError`` (a value outside bounds, a NaN) and a ``TypeError`` (a scalar
    where a vector was expected), as callers of OpenDP catch either.
    """


class FailedMap(OpenDPLiteError, ValueError):
    """A stability or privacy map could not be evaluated (for example a negative ``d_in``)."""


class NotImplementedForType(OpenDPLiteError, TypeError):
    """The constructor does not support this carrier, metric or measure type."""


class FeatureNotEnabled(OpenDPLiteError, RuntimeError):
    """The constructor is behind a feature flag; call ``enable_features(...)`` to opt in."""


class QueryableError(OpenDPLiteError, RuntimeError):
    """An interactive queryable refused a query (budget, re-entrancy, copying)."""


class SerializationError(OpenDPLiteError, ValueError):
    """An object cannot be serialized (a user-defined piece without a registered name, a
    queryable), or a document cannot be deserialized (unknown format version, a constructor
    name outside the allow-list, an unregistered name)."""
