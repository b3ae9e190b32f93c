"""The typed error hierarchy of opendp_lite.

Every error the library raises on purpose is an :class:`OpenDPLiteError`.  Each also
subclasses the builtin exception a Python user would reach for (``ValueError`` for a bad
value, ``TypeError`` for a bad type), so ``except ValueError`` keeps working.

Mismatch errors carry both sides, so a failed chain shows what met what, and each error
whose cause has a usual remedy ends with the call that fixes it (a ``Fix:`` line): the
mismatch errors compute it from the two sides (:func:`mismatch_fix`); ``NotInDomain``,
``NotImplementedForType`` and ``InvalidParameter`` add it for the common mistakes
(:func:`with_fix`), so every raise site gets it without repeating it.

>>> error = NotInDomain("expected a vector of size 3, got length 2")
>>> "then_resize(size=n, constant=v)" in str(error)
True
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "DomainMismatch",
    "FailedFunction",
    "FailedMap",
    "FeatureNotEnabled",
    "InfiniteLoss",
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
    "UnknownTypeException",
    "mismatch_fix",
    "with_fix",
]


class OpenDPLiteError(Exception):
    """Base class of every error raised on purpose by opendp_lite."""


class OpenDPLiteWarning(UserWarning):
    """Warns of a setting that weakens a guarantee (for example scripted randomness)."""


# -- the call that fixes a mistake ---------------------------------------------------------
#
# Duck-typed (this module is the bottom layer): a domain is read through its attributes
# ``element_domain``, ``size``, ``bounds``, ``nan``, ``T``; metrics and measures by class name.

_FIX = "Fix: "


def _element(domain: Any) -> Any:
    return getattr(domain, "element_domain", None)


def _domain_fix(left: Any, right: Any) -> str | None:
    """The step that turns the output domain ``left`` into the input domain ``right``."""
    le, re_ = _element(left), _element(right)
    if le is not None and re_ is not None and type(left) is type(right):
        size_l, size_r = getattr(left, "size", None), getattr(right, "size", None)
        if size_l != size_r and size_r is not None:
            return (
                f"the next step needs vectors of known size {size_r}: chain "
                f"then_resize(size={size_r}, constant=v) before it, or declare "
                f"vector_domain(..., size={size_r}) at the start"
            )
        if size_l is not None and size_r is None:
            return "the next step is built for an unsized vector: build it on the sized domain"
        fix = _domain_fix(le, re_)
        if fix is not None:
            return fix
    if type(left).__name__ == "OptionDomain" and type(right).__name__ != "OptionDomain":
        return "missing values must go first: chain then_impute_constant(v) or then_drop_null()"
    T_l, T_r = getattr(left, "T", None), getattr(right, "T", None)
    if T_l is not None and T_r is not None:
        if T_l != T_r:
            return f"the types differ ({T_l} -> {T_r}): chain then_cast_default(TOA={T_r!r})"
        b_l, b_r = getattr(left, "bounds", None), getattr(right, "bounds", None)
        if b_l != b_r and b_r is not None:
            return f"the next step needs bounded values: chain then_clamp(bounds={b_r!r})"
        if getattr(left, "nan", False) and not getattr(right, "nan", False):
            return "NaN must go first: chain then_impute_constant(v) (or then_drop_null())"
    return None


_METRIC_FIXES = {
    ("SymmetricDistance", "InsertDeleteDistance"): "chain then_ordered_random()",
    ("InsertDeleteDistance", "SymmetricDistance"): "chain then_unordered()",
    ("SymmetricDistance", "ChangeOneDistance"): (
        "on a sized vector domain, chain then_metric_bounded()"
    ),
    ("ChangeOneDistance", "SymmetricDistance"): "chain then_metric_unbounded()",
    ("HammingDistance", "InsertDeleteDistance"): "chain then_metric_unbounded()",
    ("InsertDeleteDistance", "HammingDistance"): "chain then_metric_bounded() (sized domains)",
}

_MEASURE_FIXES = {
    ("MaxDivergence", "ZeroConcentratedDivergence"): "wrap it: make_pureDP_to_zCDP(measurement)",
    ("ZeroConcentratedDivergence", "Approximate"): (
        "wrap it: make_fix_delta(make_zCDP_to_approxDP(measurement), delta)"
    ),
    ("MaxDivergence", "Approximate"): "wrap it: make_approximate(measurement)",
}


def mismatch_fix(kind: str, left: Any, right: Any) -> str | None:
    """The call that makes ``left`` (what a step gives) fit ``right`` (what the next expects).

    >>> mismatch_fix("metrics", type("SymmetricDistance", (), {})(),
    ...              type("InsertDeleteDistance", (), {})())
    'chain then_ordered_random()'
    """
    if kind == "domains":
        return _domain_fix(left, right)
    names = (type(left).__name__, type(right).__name__)
    if kind == "metrics":
        return _METRIC_FIXES.get(names)
    if kind == "measures":
        return _MEASURE_FIXES.get(names)
    return None


#: (pattern of a message, the fix it gets): the common mistakes, matched on the message so
#: that every raise site gets the same advice.
_MESSAGE_FIXES: list[tuple[str, str]] = [
    (
        r"NaN is not a member",
        "declare the float domain with nan=True (atom_domain(T=float, nan=True)) and chain "
        "then_impute_constant(v), or drop the NaNs first (x[~np.isnan(x)], series.dropna())",
    ),
    (
        r"(must exclude|may not contain|must not admit) NaN",
        "if the data holds no NaN, declare it: atom_domain(T=float, nan=False) "
        "(atom_domain(T=float) admits NaN, as in OpenDP); otherwise fill or drop the NaNs "
        "first: then_impute_constant(v) or then_drop_null()",
    ),
    (
        r"outside the bounds of",
        "start from a domain without bounds and chain then_clamp(bounds) (values outside are "
        "moved to the nearest bound)",
    ),
    (
        r"expected a vector of size",
        "declare the true size, vector_domain(..., size=n), or chain then_resize(size=n, "
        "constant=v) so that any length fits",
    ),
    (
        r"inferred type is \w+, expected (Vec|a dataframe)",
        "pass a list, a 1-d numpy array or a pandas/Polars/pyarrow Series for a vector; a dict "
        "of columns, a pandas/Polars DataFrame or a pyarrow Table for a dataframe",
    ),
    (
        r"inferred type is NoneType, expected .*: got None",
        "a missing value: drop or fill it before the release (pandas: df.dropna() / "
        "df.fillna(v); Polars: drop_nulls() / fill_null(v)), or use a domain that admits it: "
        "option_domain(...) then chain then_impute_constant(v) or then_drop_null()",
    ),
    (
        r"inferred (element )?type is .*expected (f32|f64|[iu]\d+|usize|bool|String)",
        "convert the data to the domain's type (np.asarray(x, dtype=...), series.astype(...)), "
        "or declare the domain with the data's type: atom_domain(T=...); a cast inside the "
        "chain is then_cast_default(TOA=...)",
    ),
    (
        r"is not a member of AtomDomain",
        "remove or convert that value (bool is not a number here), or declare the domain "
        "with the type the data has",
    ),
    (
        r"(overflows f32|outside the range of)",
        'declare a wider type: atom_domain(T="f64") or atom_domain(T="i64")',
    ),
    (r"expected a 1-d vector", "pass a 1-d array: x.ravel(), or one column x[:, j]"),
    (r"has no column", "pass the name of one of the columns listed"),
    (r"must have equal lengths", "give every column the same number of rows"),
    (
        r"needs a vector input_domain, got DataFrameDomain",
        "select a column first: .select(name) in a Context query, or chain "
        "make_select_column(name, TOA=...)",
    ),
    (
        r"needs a known dataset size",
        "declare vector_domain(..., size=n), or chain then_resize(size=n, constant=v) first",
    ),
    (
        r"needs absolute_distance\(T\), got (Symmetric|InsertDelete|ChangeOne|Hamming)",
        "a noise mechanism adds noise to an aggregate: chain then_count(), then_sum() (after "
        "then_clamp(bounds)) or another aggregate first",
    ),
    (
        r"needs l[12]_distance\(T\), got AbsoluteDistance",
        "the input is a vector: pass input_metric=l1_distance(T=...) (or l2_distance), or "
        "atom_domain(...) with absolute_distance for one number",
    ),
]


def with_fix(message: str) -> str:
    """``message`` followed by the fix for a common mistake, unless it already gives one.

    >>> with_fix("NaN is not a member of AtomDomain(T=f64)").split(". Fix: ")[1][:28]
    'declare the float domain wit'
    """
    if "Fix:" in message or "fix:" in message:
        return message
    for pattern, fix in _MESSAGE_FIXES:
        if re.search(pattern, message):
            return f"{message.rstrip('.')}. {_FIX}{fix}"
    return message


class _WithFix(Exception):
    """An error whose (single) message gets the fix for a common mistake appended."""

    def __init__(self, *args: object) -> None:
        if len(args) == 1 and isinstance(args[0], str):
            args = (with_fix(args[0]),)
        super().__init__(*args)


class _Mismatch(OpenDPLiteError, ValueError):
    kind = "objects"

    def __init__(self, left: Any, right: Any, context: str = "") -> None:
        self.left = left
        self.right = right
        where = f" in {context}" if context else ""
        fix = mismatch_fix(self.kind, left, right)
        advice = (
            f"\n    {_FIX}{fix}"
            if fix
            else f"\n    {_FIX}build the second step on the first's output {self.kind[:-1]}"
        )
        super().__init__(
            f"intermediate {self.kind} don't match{where}:\n"
            f"    output {self.kind[:-1]}: {left!r}\n"
            f"    input {self.kind[:-1]}:  {right!r}{advice}"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.left, self.right))


class DomainMismatch(_Mismatch):
    """Two domains that must be equal are not; ``left`` and ``right`` hold both."""

    kind = "domains"


class MetricMismatch(_Mismatch):
    """Two metrics that must be equal are not; ``left`` and ``right`` hold both."""

    kind = "metrics"


class MeasureMismatch(_Mismatch):
    """Two privacy measures that must be equal are not; ``left`` and ``right`` hold both."""

    kind = "measures"


class InvalidParameter(_WithFix, OpenDPLiteError, ValueError):
    """A constructor argument is out of range; the constructor refuses to build."""


class ParameterTypeError(InvalidParameter, TypeError):
    """A constructor argument has the wrong type (e.g. a float where a count is needed).

    Also a ``TypeError``, as in OpenDP: :func:`~opendp_lite.search.binary_search` infers the
    type of the parameter it searches from which type the predicate refuses this way.
    """


class FailedFunction(OpenDPLiteError):
    """A function could not be evaluated; nothing was released."""


class NotInDomain(_WithFix, FailedFunction, ValueError, TypeError):
    """The argument is not a member of the input domain; raised before any randomness is drawn.

    It is both a ``ValueError`` (a value outside bounds, a NaN) and a ``TypeError`` (a scalar
    where a vector was expected), as callers of OpenDP catch either.
    """


class FailedMap(OpenDPLiteError, ValueError):
    """A stability or privacy map could not be evaluated (for example a negative ``d_in``)."""


class InfiniteLoss(FailedMap):
    """The privacy loss is infinite (a noise scale of 0 at ``d_in > 0``).

    ``map`` raises it, as no finite number bounds the loss; ``check`` answers ``False``, so a
    parameter search (``binary_search_chain``) treats the scale as too small, as OpenDP's
    infinite loss does.
    """


class NotImplementedForType(_WithFix, OpenDPLiteError, TypeError):
    """The constructor does not support this carrier, metric or measure type."""


class UnknownTypeException(NotImplementedForType):
    """A type descriptor names no type this library knows, or a type cannot be inferred.

    OpenDP's name (``opendp.mod.UnknownTypeException``); a ``NotImplementedForType``, so code
    that catches the latter still catches it.
    """


class FeatureNotEnabled(OpenDPLiteError, RuntimeError):
    """The constructor is behind a feature flag; call ``enable_features(...)`` to opt in."""


class QueryableError(OpenDPLiteError, RuntimeError):
    """An interactive queryable refused a query (budget, re-entrancy, copying)."""


class SerializationError(OpenDPLiteError, ValueError):
    """An object cannot be serialized (a user-defined piece without a registered name, a
    queryable), or a document cannot be deserialized (unknown format version, a constructor
    name outside the allow-list, an unregistered name)."""
