"""Shared argument validators: one home for the checks every constructor makes.

Each validator returns the value converted to a plain Python type, or raises the typed error
from :mod:`opendp_lite.errors` with a message that names the parameter, what it must be (the
fix) and the value it got, optionally prefixed by the constructor (``who``):

>>> check_int("size", 3, min=1)
3
>>> check_int("size", 3.0, min=1, who="make_sum")
Traceback (most recent call last):
    ...
opendp_lite.errors.ParameterTypeError: make_sum: size must be a positive int, got float 3.0
>>> check_int("k", 7, min=0, max=5)
Traceback (most recent call last):
    ...
opendp_lite.errors.InvalidParameter: k must be an int in [0, 5], got 7

A ``bool`` is never a number here (``True`` is an ``int`` to Python, not to a constructor);
numpy integers and floats are accepted and converted.
"""

from __future__ import annotations

import math
from typing import Any, TypeGuard

import numpy as np

from ._arith import q
from .errors import FailedMap, InvalidParameter, NotImplementedForType, ParameterTypeError

__all__ = [
    "check_exact_real",
    "check_finite_nonneg",
    "check_int",
    "check_metric",
    "check_no_nan",
    "check_real",
    "is_int_value",
    "is_real_value",
]


def _prefix(who: str) -> str:
    return f"{who}: " if who else ""


def is_int_value(value: object) -> TypeGuard[int | np.integer[Any]]:
    """Whether ``value`` is an integer (Python or numpy), and not a bool.

    >>> is_int_value(3), is_int_value(np.int8(3)), is_int_value(True), is_int_value(3.0)
    (True, True, False, False)
    """
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def is_real_value(value: object) -> TypeGuard[int | float | np.integer[Any] | np.floating[Any]]:
    """Whether ``value`` is a real number (Python or numpy int or float), and not a bool."""
    return is_int_value(value) or isinstance(value, (float, np.floating))


def _int_phrase(min: int | None, max: int | None) -> str:
    if min is not None and max is not None:
        return f"an int in [{min}, {max}]"
    if min == 0:
        return "a non-negative int"
    if min == 1:
        return "a positive int"
    if min is not None:
        return f"an int >= {min}"
    if max is not None:
        return f"an int <= {max}"
    return "an int"


def check_int(
    name: str,
    value: object,
    *,
    min: int | None = None,
    max: int | None = None,
    who: str = "",
    what: str | None = None,
) -> int:
    """``value`` as a Python int, if it is an int (not a bool) in ``[min, max]``.

    ``what`` replaces the generated requirement ("a positive int", "an int in [0, 5]", ...)
    where the bound is not a constant.

    Raises:
        ParameterTypeError: if ``value`` is not an integer (``3.0`` and ``True`` are not).
        InvalidParameter: if it is outside ``[min, max]``.
    """
    phrase = what if what is not None else _int_phrase(min, max)
    if not is_int_value(value):
        raise ParameterTypeError(
            f"{_prefix(who)}{name} must be {phrase}, got {type(value).__name__} {value!r}"
        )
    v = int(value)
    if (min is not None and v < min) or (max is not None and v > max):
        raise InvalidParameter(f"{_prefix(who)}{name} must be {phrase}, got {value!r}")
    return v


def check_real(name: str, value: object, *, who: str = "", what: str = "a real number") -> float:
    """``value`` as a Python float, if it is a real number (int or float, not a bool).

    The float may be infinite or NaN: range checks are the caller's (or use
    :func:`check_finite_nonneg`).

    Raises:
        InvalidParameter: ``alpha must be a real number, got str '0.5'``.
    """
    if not is_real_value(value):
        raise InvalidParameter(
            f"{_prefix(who)}{name} must be {what}, got {type(value).__name__} {value!r}"
        )
    return float(value)


def check_exact_real(name: str, value: object) -> Any:
    """The exact rational value (an ``_arith`` rational) of a finite real number.

    Python ints are taken exactly, however large; numpy scalars by their value.

    Raises:
        InvalidParameter: ``threshold must be a finite real number, got nan``.
    """
    if not is_real_value(value):
        raise InvalidParameter(f"{name} must be a finite real number, got {value!r}")
    try:
        return q(value.item() if isinstance(value, np.generic) else value)
    except (FailedMap, ValueError, OverflowError):
        raise InvalidParameter(f"{name} must be a finite real number, got {value!r}") from None


def check_finite_nonneg(name: str, value: object) -> float:
    """Validate a scale-like parameter: a real number, finite and ``>= 0``.

    >>> check_finite_nonneg("scale", 2)
    2.0

    Raises:
        InvalidParameter: ``scale must be finite and >= 0, got -1.0``.
    """
    v = check_real(name, value)
    if not (math.isfinite(v) and v >= 0):
        raise InvalidParameter(f"{name} must be finite and >= 0, got {value!r}")
    return v


def check_metric(who: str, metric: Any, allowed: tuple[type, ...]) -> None:
    """Refuse a metric outside ``allowed`` with a typed error naming the constructor.

    Raises:
        NotImplementedForType: ``make_x needs input_metric in (SymmetricDistance), got ...``.
    """
    if not isinstance(metric, allowed):
        names = ", ".join(t.__name__ for t in allowed)
        raise NotImplementedForType(f"{who} needs input_metric in ({names}), got {metric!r}")


def check_no_nan(
    who: str,
    input_domain: Any,
    element: Any,
    *,
    error: type[Exception] = NotImplementedForType,
    vector: bool | None = None,
) -> None:
    """Refuse a float ``element`` domain that admits NaN, naming ``input_domain`` and the fix.

    ``atom_domain(T=float)`` admits NaN (as in OpenDP); a constructor whose guarantee needs
    numbers calls this at build time.  ``vector`` (default: whether ``input_domain`` has an
    ``element_domain``) adds the imputation route to the fix.

    >>> from opendp_lite.domains import atom_domain
    >>> try:
    ...     check_no_nan("make_x", atom_domain(T=float), atom_domain(T=float))
    ... except NotImplementedForType as e:
    ...     print(str(e).split(". Fix: ")[1])
    if the data holds no NaN, declare it: atom_domain(T=float, nan=False)

    Raises:
        ``error`` (``NotImplementedForType`` unless given) if ``element.nan``.
    """
    if not getattr(element, "nan", False):
        return
    if vector is None:
        vector = hasattr(input_domain, "element_domain")
    T = getattr(element, "T", "f64")
    declare = f"atom_domain(T={'float' if T == 'f64' else repr(T)}, nan=False)"
    fix = f"if the data holds no NaN, declare it: {declare}"
    if vector:
        fix += (
            "; otherwise fill or drop the NaNs first: chain then_impute_constant(v) or "
            "then_drop_null() before it"
        )
    msg = f"{who}: input_domain {input_domain!r} admits NaN, which {who} cannot take"
    raise error(f"{msg}. Fix: {fix}")
