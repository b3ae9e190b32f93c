"""Parameter search: find the tightest parameter that satisfies a monotone predicate.

The search runs on the ordered set of representable values itself (floats are bisected through
their bit patterns, ints directly), so it always ends with two *adjacent* values, one passing and
one failing: the value returned passes, and the neighbouring float (or int) step towards the
decision boundary fails.

>>> binary_search(lambda x: x >= 5.0)
5.0
>>> binary_search(lambda x: x > 5, T=int)
6
"""

from __future__ import annotations

import struct
import sys
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["binary_search", "binary_search_chain", "binary_search_param"]

M = TypeVar("M")

_MAX_FLOAT = sys.float_info.max
_INT_LIMIT = 2**63 - 1
# probe distances from the centre of an exponential search: growing like 2^(2^k), so that a
# boundary anywhere in the float range is bracketed within a dozen evaluations per side; 0.5
# first, as OpenDP's bands, so that a probability in [1/2, 1] is found from 0
_FLOAT_STEPS: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0, 16.0, 256.0, 2.0**16, 2.0**32, 2.0**64)
_FLOAT_STEPS += (2.0**128, 2.0**256, 2.0**512, _MAX_FLOAT)
_INT_STEPS = (1, 2, 4, 16, 256, 2**16, 2**32, _INT_LIMIT)
_FLOAT_NAMES = {"f64", "f32", "float"}
_INT_NAMES = {"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "usize", "isize", "int"}


def _key(x: float) -> int:
    """An order-preserving integer key of a float: adjacent floats have adjacent keys."""
    if x == 0:
        return 0
    bits = int(struct.unpack("<q", struct.pack("<d", abs(x)))[0])
    return bits if x > 0 else -bits


def _unkey(k: int) -> float:
    value = float(struct.unpack("<d", struct.pack("<q", abs(k)))[0])
    return value if k >= 0 else -value


def _parse_type(T: object) -> type:
    if T is float or T in _FLOAT_NAMES:
        return float
    if T is int or T in _INT_NAMES:
        return int
    raise TypeError(f"T must be float or int, got {T!r}")


def _type_of(value: object) -> type:
    if isinstance(value, bool):
        raise TypeError(f"a search bound must be a number, got {value!r}")
    if isinstance(value, int):
        return int
    if isinstance(value, float):
        return float
    try:
        import numpy as np

        if isinstance(value, np.integer):
            return int
        if isinstance(value, np.floating):
            return float
    except ImportError:  # pragma: no cover - numpy is a dependency
        pass
    raise TypeError(f"a search bound must be a float or an int, got {type(value).__name__}")


def _infer_type(predicate: Callable[[Any], object]) -> type:
    """float, unless the predicate rejects a float with a TypeError but accepts an int."""
    try:
        predicate(0.0)
        return float
    except TypeError:
        pass
    except Exception:
        return float
    try:
        predicate(0)
    except TypeError as e:
        raise TypeError("unable to infer the type T of the predicate's argument; pass T") from e
    except Exception:
        return int
    return int


def _step(center: Any, sign: int, distance: Any, T: type) -> Any:
    if T is float:
        x = center + sign * distance
        return max(-_MAX_FLOAT, min(_MAX_FLOAT, x))
    return max(-_INT_LIMIT, min(_INT_LIMIT, center + sign * distance))


def _bisect(
    test: Callable[[Any], bool], lower: Any, upper: Any, T: type, at_upper: bool
) -> tuple[Any, Any]:
    """Narrow [lower, upper] to adjacent values, with test(lower) != at_upper == test(upper)."""
    if T is float:
        lo, hi = _key(lower), _key(upper)
        while hi - lo > 1:
            mid = lo + (hi - lo) // 2
            if test(_unkey(mid)) == at_upper:
                hi = mid
            else:
                lo = mid
        return _unkey(lo), _unkey(hi)
    while upper - lower > 1:
        mid = lower + (upper - lower) // 2
        if test(mid) == at_upper:
            upper = mid
        else:
            lower = mid
    return lower, upper


def _raises(predicate: Callable[[Any], object], x: Any) -> bool:
    try:
        predicate(x)
    except Exception:
        return True
    return False


def _infer_bounds(
    predicate: Callable[[Any], object], lower: Any, upper: Any, T: type
) -> tuple[Any, Any]:
    zero = T(0)
    directions: tuple[int, ...]
    steps: tuple[Any, ...] = _FLOAT_STEPS if T is float else _INT_STEPS
    if lower is not None:
        center, directions = lower, (1,)
        at_center = bool(predicate(center))
    elif upper is not None:
        center, directions = upper, (-1,)
        at_center = bool(predicate(center))
    else:
        center, directions = zero, (1, -1)
        try:
            at_center = bool(predicate(center))
        except Exception as first:
            # recover once: move to the nearest value on the side where the predicate is
            # defined, just past the boundary of the region where it raises
            for distance in steps:
                found = False
                for sign in (1, -1):
                    probe = _step(zero, sign, distance, T)
                    if not _raises(predicate, probe):
                        lo, hi = (zero, probe) if sign > 0 else (probe, zero)
                        lo, hi = _bisect(
                            lambda x: not _raises(predicate, x), lo, hi, T, at_upper=sign > 0
                        )
                        center, directions, found = (hi if sign > 0 else lo), (sign,), True
                        break
                if found:
                    break
            else:
                raise first
            at_center = bool(predicate(center))
    previous = dict.fromkeys(directions, center)
    for distance in steps:
        for sign in directions:
            probe = _step(center, sign, distance, T)
            try:
                outcome = bool(predicate(probe))
            except Exception:  # noqa: S112 - a raising probe gives no information; try further
                continue
            if outcome != at_center:
                ends = (previous[sign], probe)
                return min(ends), max(ends)
            previous[sign] = probe
    if lower is not None:
        side = f"the decision boundary is below the lower bound {lower!r}"
    elif upper is not None:
        side = f"the decision boundary is above the upper bound {upper!r}"
    else:
        side = "the predicate may be constant"
    raise ValueError(
        f"unable to infer bounds: the predicate does not change within the search ({side}, "
        "if the predicate is monotone). Fix: pass bounds that contain the decision boundary"
    )


def binary_search(
    predicate: Callable[[Any], bool],
    bounds: tuple[Any, Any] | None = (None, None),
    T: object = None,
    return_sign: bool = False,
) -> Any:
    """Find the passing value of a monotone ``predicate`` nearest its decision boundary.

    Missing bounds are inferred by an exponential search (from 0, or from the given bound for a
    one-sided search); if the predicate raises at 0, the search restarts once just inside the
    region where it is defined.  The result passes, and the adjacent representable value on
    the other side fails.  With ``return_sign``, also returns +1 if larger values pass (the
    smallest passing value was found) and -1 if smaller values pass.

    Raises:
        TypeError: if T cannot be inferred or is not float/int, or the bounds' types differ.
        ValueError: if ``bounds`` does not have two elements, the predicate is constant over
            the bounds (the decision boundary is outside them), or bounds cannot be inferred.

    >>> binary_search(lambda x: x <= 5.0)
    5.0
    >>> binary_search(lambda x: x < 5, T=int)
    4
    >>> binary_search(lambda x: x >= 0.1, bounds=(0.0, 1.0), return_sign=True)
    (0.1, 1)
    """
    if bounds is None:
        lower, upper = None, None
    else:
        if len(bounds) != 2:
            raise ValueError(
                "bounds must contain exactly two elements; use (lower, None) or (None, upper) "
                "for a one-sided search"
            )
        lower, upper = bounds
    if lower is not None and upper is not None and _type_of(lower) is not _type_of(upper):
        raise TypeError("bounds must share the same type")
    if T is not None:
        kind = _parse_type(T)
    elif lower is not None:
        kind = _type_of(lower)
    elif upper is not None:
        kind = _type_of(upper)
    else:
        kind = _infer_type(predicate)
    lower = None if lower is None else kind(lower)
    upper = None if upper is None else kind(upper)

    if lower is None or upper is None:
        lower, upper = _infer_bounds(predicate, lower, upper, kind)
    lower, upper = min(lower, upper), max(lower, upper)

    def test(x: Any) -> bool:
        return bool(predicate(x))

    at_lower, at_upper = test(lower), test(upper)
    if at_lower == at_upper:
        raise ValueError("the decision boundary of the predicate is outside the bounds")
    lo, hi = _bisect(test, lower, upper, kind, at_upper)
    value = hi if at_upper else lo
    if return_sign:
        return value, 1 if at_upper else -1
    return value


def binary_search_param(
    make_chain: Callable[[Any], Any],
    d_in: Any,
    d_out: Any,
    bounds: tuple[Any, Any] | None = (None, None),
    T: object = None,
) -> Any:
    """The parameter of ``make_chain`` nearest the boundary at which it is (d_in, d_out)-close.

    ``make_chain(param).check(d_in, d_out)`` holds at the result and fails one representable
    step further towards the boundary.

    Raises: as :func:`binary_search`.

    >>> import opendp_lite.prelude as dp
    >>> dp.enable_features("honest-but-curious")
    >>> space = dp.atom_domain(T=float), dp.absolute_distance(T=float)
    >>> def make_noise(scale):
    ...     return dp.m.make_user_measurement(
    ...         *space, dp.max_divergence(), lambda x: x, lambda d: d / scale)
    >>> dp.binary_search_param(make_noise, d_in=1.0, d_out=0.5)
    2.0
    """
    return binary_search(lambda param: make_chain(param).check(d_in, d_out), bounds, T)


def binary_search_chain(
    make_chain: Callable[[Any], M],
    d_in: Any,
    d_out: Any,
    bounds: tuple[Any, Any] | None = (None, None),
    T: object = None,
) -> M:
    """``make_chain(binary_search_param(make_chain, d_in, d_out, bounds, T))``.

    Raises: as :func:`binary_search`.

    >>> import opendp_lite.prelude as dp
    >>> dp.enable_features("honest-but-curious")
    >>> space = dp.atom_domain(T=float), dp.absolute_distance(T=float)
    >>> def make_noise(scale):
    ...     return dp.m.make_user_measurement(
    ...         *space, dp.max_divergence(), lambda x: x, lambda d: d / scale)
    >>> dp.binary_search_chain(make_noise, d_in=1.0, d_out=0.5).map(1.0)
    0.5
    """
    return make_chain(binary_search_param(make_chain, d_in, d_out, bounds, T))
