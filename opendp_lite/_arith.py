"""Conservative arithmetic for privacy and stability maps: the one place maps touch gmpy2.

Every map in opendp_lite computes its result here, either

* exactly, in rationals (:func:`q`, then ``+ - * /`` on ``mpq``), then rounds **once** to a
  float with :func:`up` (or :func:`down` where a smaller value is the conservative side), or
* with correctly rounded MPFR operations in an IEEE-754 binary64 context whose rounding mode
  is pinned to the conservative direction (:func:`exp_up`, :func:`log_down`, ...).

A float returned by ``up`` is the least binary64 value ``>= x`` (overflow gives ``inf``, which
is still an upper bound); ``down`` is the greatest value ``<= x``.  So ``up(x)`` is at most one
ulp above the exact value, and never below it.

>>> down(q(1) / 3) == 1 / 3 < up(q(1) / 3)
True
>>> up(q(0.1) + q(0.2)) == 0.30000000000000004
True
>>> add_up(0.1, 0.1, 0.1, 0.1, 0.1)
0.5000000000000001
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import gmpy2

from .errors import FailedMap

__all__ = [
    "Rational",
    "add_up",
    "div_up",
    "down",
    "exact",
    "exp_down",
    "exp_up",
    "expm1_up",
    "is_rational",
    "log1p_up",
    "log_down",
    "log_up",
    "mul_up",
    "q",
    "sqrt_down",
    "sqrt_up",
    "up",
]

#: The exact rational type (gmpy2.mpq).  gmpy2 ships no stubs, so mypy sees ``Any``.
Rational = Any

_UP = gmpy2.ieee(64)
_UP.round = gmpy2.RoundUp
_DOWN = gmpy2.ieee(64)
_DOWN.round = gmpy2.RoundDown


def is_rational(x: object) -> bool:
    """Whether ``x`` is a gmpy2 rational or integer (exact, not a float)."""
    return isinstance(x, (type(gmpy2.mpq(0)), type(gmpy2.mpz(0))))


def q(x: float | int | Rational) -> Rational:
    """The exact rational value of a finite float, int or rational.

    Raises:
        FailedMap: if ``x`` is NaN or infinite (it has no rational value).
    """
    if isinstance(x, float) and not math.isfinite(x):
        raise FailedMap(f"cannot take the exact value of non-finite {x!r}")
    return gmpy2.mpq(x)


exact = q


def _round(ctx: Any, x: Rational | float) -> float:
    if isinstance(x, float):
        return x
    with gmpy2.context(ctx):
        return float(gmpy2.mpfr(x))


def up(x: Rational | float | int) -> float:
    """The least binary64 float ``>= x`` (``inf`` when ``x`` exceeds the float range)."""
    return _round(_UP, x)


def down(x: Rational | float | int) -> float:
    """The greatest binary64 float ``<= x``."""
    return _round(_DOWN, x)


def add_up(*xs: float | int | Rational) -> float:
    """The exact sum of ``xs``, rounded up once."""
    return up(sum((q(x) for x in xs), gmpy2.mpq(0)))


def mul_up(*xs: float | int | Rational) -> float:
    """The exact product of ``xs``, rounded up once."""
    out = gmpy2.mpq(1)
    for x in xs:
        out *= q(x)
    return up(out)


def div_up(a: float | int | Rational, b: float | int | Rational) -> float:
    """``a / b`` exactly, rounded up once.

    Raises:
        FailedMap: if ``b`` is zero.
    """
    if q(b) == 0:
        raise FailedMap("division by zero in a map")
    return up(q(a) / q(b))


def _mpfr_fn(ctx: Any, fn: Callable[[Any], Any], x: float | int | Rational) -> float:
    with gmpy2.context(ctx):
        return float(fn(gmpy2.mpfr(q(x)) if not isinstance(x, float) else gmpy2.mpfr(x)))


def _exactly_representable(x: float | int | Rational) -> bool:
    if isinstance(x, float):
        return True
    with gmpy2.context(gmpy2.ieee(64)) as ctx:
        gmpy2.mpfr(q(x))
        return not ctx.inexact


def _monotone(fn: Callable[[Any], Any], ctx: Any, x: float | int | Rational, is_up: bool) -> float:
    # An exact rational input is first rounded in the direction that keeps a monotone
    # increasing ``fn`` conservative, then ``fn`` is evaluated with correct directed rounding.
    xf = x if _exactly_representable(x) else (up(x) if is_up else down(x))
    return _mpfr_fn(ctx, fn, xf)


def exp_up(x: float | int | Rational) -> float:
    """An upper bound on ``exp(x)``, at most one ulp above (correctly rounded up by MPFR)."""
    return _monotone(gmpy2.exp, _UP, x, True)


def exp_down(x: float | int | Rational) -> float:
    """A lower bound on ``exp(x)``."""
    return _monotone(gmpy2.exp, _DOWN, x, False)


def expm1_up(x: float | int | Rational) -> float:
    """An upper bound on ``exp(x) - 1``."""
    return _monotone(gmpy2.expm1, _UP, x, True)


def log_up(x: float | int | Rational) -> float:
    """An upper bound on ``ln(x)`` for ``x > 0``."""
    _positive(x)
    return _monotone(gmpy2.log, _UP, x, True)


def log_down(x: float | int | Rational) -> float:
    """A lower bound on ``ln(x)`` for ``x > 0``."""
    _positive(x)
    return _monotone(gmpy2.log, _DOWN, x, False)


def log1p_up(x: float | int | Rational) -> float:
    """An upper bound on ``ln(1 + x)`` for ``x > -1``."""
    return _monotone(gmpy2.log1p, _UP, x, True)


def sqrt_up(x: float | int | Rational) -> float:
    """An upper bound on ``sqrt(x)`` for ``x >= 0``."""
    return _monotone(gmpy2.sqrt, _UP, x, True)


def sqrt_down(x: float | int | Rational) -> float:
    """A lower bound on ``sqrt(x)`` for ``x >= 0``."""
    return _monotone(gmpy2.sqrt, _DOWN, x, False)


def _positive(x: float | int | Rational) -> None:
    if not q(x) > 0:
        raise FailedMap(f"logarithm of a non-positive value: {x!r}")


def sum_up(xs: Iterable[float | int | Rational]) -> float:
    """The exact sum of an iterable, rounded up once."""
    return add_up(*xs)
