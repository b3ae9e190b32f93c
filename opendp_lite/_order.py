"""One total order on cell values: a fixed function of each value alone.

Where the rows kept or the indices of keys depend on sorting data (``make_partition_by``: the
private keys, the identifier codes, the truncation's tie-breaks), the order must not depend on
which other values happen to share the column, nor on the dtype the column was given (a column
of ints becomes a float column, and a float column an object column, when another record holds
``2.5`` or ``None``).  So every value gets a sort key computed from that value alone, and a
column's codes are ranks of those keys.

The classes, in order: numbers (``bool``, ``int``, ``float``, numpy numbers, ``Fraction``,
``Decimal``) by their exact value whatever their type (Python compares ints, floats and
fractions exactly); ``str`` (by code points); ``bytes``; tuples (element by element,
recursively); any other hashable value (by type name, then ``repr``); last, the missing values
(``None``, NaN, NaT, pandas ``NA``), one class, as pandas turns ``None`` into NaN in a numeric
column.  A cell that is not hashable (a list) is refused with
:class:`~opendp_lite.errors.NotInDomain`.

Two grains of the same order:

* :func:`group_key`: equal exactly when Python's ``==`` calls two values equal (``True``,
  ``1``, ``1.0``, ``Fraction(1)`` and ``np.int64(1)`` are one group, as they are one ``dict``
  key), with the missing values one class; groups are labelled by :func:`label` (an ``int`` for an
  integral number, else a ``float`` if exact, else a ``Fraction``), so neither the grouping nor
  a label depends on the dtype a column was given.
* :func:`tie_key`: a refinement that separates values Python calls equal but a reader can tell
  apart: among equal numbers ``bool < int < float < Fraction < Decimal``, ``-0.0`` before
  ``0.0``, ``None`` before NaNs, and NaNs by sign and payload.  Truncation orders rows by
  :func:`group_key` first (column by column), then by it, so two rows tie only when their cells
  are the same values, and the order by value does not depend on a column's dtype.

>>> sorted([2.5, None, "b", 1, "a", 0.5], key=group_key)
[0.5, 1, 2.5, 'a', 'b', None]
>>> [label(v) for v in (True, 2.0, 2.5, np.int64(3))]
[1, 2, 2.5, 3]
>>> group_key(True) == group_key(1.0), tie_key(True) < tie_key(1) < tie_key(1.0)
(True, True)
"""

from __future__ import annotations

import math
import struct
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from .errors import NotInDomain

__all__ = ["group_codes", "group_key", "group_ranks", "label", "tie_key", "tie_ranks"]

_NUM, _STR, _BYTES, _TUPLE, _OTHER, _MISSING = range(6)
#: The group key of a missing value: ``None``, NaN, NaT or pandas ``NA``.
MISSING = (_MISSING,)


def _number(v: Any) -> tuple[Any, int] | None:
    """``(exact value, type rank)`` of a number (the value ``None`` for NaN), else ``None``."""
    if isinstance(v, bool):
        return int(v), 0
    if isinstance(v, int):
        return v, 1
    if isinstance(v, float):
        return (None if v != v else v), 2
    if isinstance(v, Fraction):
        return v, 3
    if isinstance(v, Decimal):
        if v.is_nan():
            return None, 4
        return (Fraction(v) if v.is_finite() else float(v)), 4
    if isinstance(v, np.floating | np.integer):  # what .item() leaves (np.longdouble)
        return _number(float(v) if isinstance(v, np.floating) else int(v))
    return None


def _bits(v: float) -> int:
    out: int = struct.unpack("<Q", struct.pack("<d", v))[0]
    return out


def _plain(v: Any) -> Any:
    if isinstance(v, np.datetime64 | np.timedelta64):
        return None if np.isnat(v) else v
    if isinstance(v, np.generic):
        return v.item()
    if type(v).__name__ in ("NAType", "NaTType"):  # pandas' missing values, by their type
        return None
    return v


def _other(v: Any) -> tuple[Any, ...]:
    try:
        hash(v)
    except TypeError:
        raise NotInDomain(
            "a column read as keys or rows holds an unhashable cell (e.g. a list): cells of a "
            "partitioned dataframe must be hashable values (numbers, strings, tuples, ...)"
        ) from None
    t = type(v)
    return (_OTHER, f"{t.__module__}.{t.__qualname__}", repr(v))


def group_key(v: Any) -> tuple[Any, ...]:
    """The sort key of ``v``'s group: equal for values that ``==`` calls equal, and one for
    every missing value (``None``, NaN, NaT, pandas ``NA``).

    Raises:
        NotInDomain: if ``v`` (or an element of a tuple ``v``) is not hashable.
    """
    t = type(v)
    if t is int or t is str:  # the common cells first (the same keys as below)
        return (_STR if t is str else _NUM, v)
    if t is float:
        return (_NUM, v) if v == v else MISSING
    v = _plain(v)
    if v is None:
        return MISSING
    if isinstance(v, str):
        return (_STR, str(v))
    num = _number(v)
    if num is not None:
        return MISSING if num[0] is None else (_NUM, num[0])
    if isinstance(v, bytes):
        return (_BYTES, bytes(v))
    if isinstance(v, tuple):
        return (_TUPLE, tuple(group_key(e) for e in v))
    return _other(v)


def tie_key(v: Any) -> tuple[Any, ...]:
    """A refinement of :func:`group_key` that orders values Python calls equal by type (and
    ``-0.0`` before ``0.0``; among missing values ``None`` first, then NaNs by sign and
    payload).

    Raises:
        NotInDomain: if ``v`` (or an element of a tuple ``v``) is not hashable.
    """
    t = type(v)
    if t is int:  # the common cells first (the same keys as below)
        return (_NUM, v, 1, 0)
    if t is str:
        return (_STR, v)
    if t is float and v == v:
        return (_NUM, v, 2, 0 if math.copysign(1.0, v) < 0 else 1)
    v = _plain(v)
    if v is None:
        return (_MISSING, -1, 0)
    num = _number(v) if not isinstance(v, str) else None
    if num is None:
        if isinstance(v, tuple):
            return (_TUPLE, tuple(tie_key(e) for e in v))
        return group_key(v)
    value, rank = num
    if isinstance(v, np.floating):  # np.longdouble: compared as the float it rounds to
        v = float(v)
    if value is None:  # NaN: by type, then sign and payload (or the Decimal's text)
        bits: Any = str(v) if isinstance(v, Decimal) else _bits(v)
        return (_MISSING, rank, bits)
    if isinstance(v, float):
        return (_NUM, value, rank, 0 if math.copysign(1.0, v) < 0 else 1)
    return (_NUM, value, rank, str(v) if isinstance(v, Decimal) else 0)


def label(v: Any) -> Any:
    """The label of ``v``'s group, the same for every value of the group: an integral number is
    an ``int``, another number a ``float`` if it is one exactly, else a ``Fraction``; tuples
    element by element; ``None``, strings and other values as they are."""
    v = _plain(v)
    if isinstance(v, str | bytes) or v is None:
        return v
    if isinstance(v, tuple):
        return tuple(label(e) for e in v)
    num = _number(v)
    if num is None:
        return v
    x = num[0]
    if x is None:
        return float("nan")
    if isinstance(x, float):
        return int(x) if x.is_integer() else x
    q = Fraction(x)
    if q.denominator == 1:
        return int(q)
    return float(q) if Fraction(float(q)) == q else q


def _runs(order: npt.NDArray[Any], *sorted_keys: npt.NDArray[Any]) -> npt.NDArray[np.int64]:
    """Codes of rows sorted by ``order``: the index of each row's run of equal keys."""
    n = len(order)
    new = np.zeros(n, dtype=bool)
    if n:
        new[0] = True
        for k in sorted_keys:
            new[1:] |= k[1:] != k[:-1]
    codes = np.empty(n, dtype=np.int64)
    codes[order] = np.cumsum(new) - 1
    return codes


def _float_order(col: npt.NDArray[Any]) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
    """``(is NaN, key)``: numbers by value with ``-0.0`` first, then NaNs by their bits, the
    order :func:`tie_key` gives the same floats."""
    f = np.ascontiguousarray(col, dtype=np.float64)
    nan = np.isnan(f)
    s = f.view(np.int64)
    key = np.where(s >= 0, s, s ^ np.int64(0x7FFF_FFFF_FFFF_FFFF))  # IEEE totalOrder
    key = np.where(nan, s ^ np.int64(-(1 << 63)), key)  # NaN bits as unsigned, in int64
    return nan, key


def group_ranks(col: npt.NDArray[Any]) -> npt.NDArray[np.int64]:
    """``codes[i]`` = the rank of ``group_key(col[i])`` among the column's distinct group keys
    (NaNs one last class): equal values, by ``==``, get one code whatever the dtype.

    Raises:
        NotInDomain: if a cell is not hashable.
    """
    kind = col.dtype.kind
    if kind in "iubfmM":  # np.unique: -0.0 and 0.0 one value, NaNs (NaTs) one value, last
        _, inv = np.unique(col, return_inverse=True)
        return np.asarray(inv, dtype=np.int64).reshape(-1)
    values = col.tolist()
    plain = all(type(v) is str for v in values)
    keys: list[Any] = values if plain else list(map(group_key, values))
    rank = {k: i for i, k in enumerate(sorted(set(keys)))}
    return np.fromiter((rank[k] for k in keys), dtype=np.int64, count=len(keys))


def tie_ranks(col: npt.NDArray[Any]) -> npt.NDArray[np.int64] | None:
    """``codes[i]`` = the rank of ``tie_key(col[i])`` among the column's distinct tie keys, or
    ``None`` when that is :func:`group_ranks` already (integer, bool, datetime columns, or
    strings only).

    Raises:
        NotInDomain: if a cell is not hashable.
    """
    kind = col.dtype.kind
    if kind in "iubmM":
        return None
    if kind == "f":
        nan, key = _float_order(col)
        order = np.lexsort((key, nan))
        return _runs(order, nan[order], key[order])
    values = col.tolist()
    if all(type(v) is str for v in values):
        return None
    keys = [tie_key(v) for v in values]
    rank = {k: i for i, k in enumerate(sorted(set(keys)))}
    return np.fromiter((rank[k] for k in keys), dtype=np.int64, count=len(keys))


def group_codes(col: npt.NDArray[Any]) -> tuple[npt.NDArray[np.int64], list[Any]]:
    """``(codes, labels)``: ``labels`` the column's groups in the order of :func:`group_key`
    (as :func:`label`), ``codes[i]`` the index of row ``i``'s group, ``-1`` for a missing
    value (``None``, NaN, NaT), which is in no group.

    Raises:
        NotInDomain: if a cell is not hashable.
    """
    kind = col.dtype.kind
    n = len(col)
    if kind in "iub":
        uniq, inv = np.unique(col, return_inverse=True)
        return np.asarray(inv, dtype=np.int64).reshape(-1), [int(v) for v in uniq.tolist()]
    if kind in "fmM":
        nan = np.isnan(col)
        codes = np.full(n, -1, dtype=np.int64)
        uniq, inv = np.unique(col[~nan], return_inverse=True)  # -0.0 and 0.0: one group
        codes[~nan] = inv.reshape(-1)
        return codes, [label(v) for v in uniq.tolist()] if kind == "f" else list(uniq)
    values = col.tolist()
    if all(type(v) is str for v in values):
        keys: list[Any] = values
        distinct: list[Any] = sorted(set(values))
        labels = distinct
    else:
        keys = list(map(group_key, values))
        first: dict[Any, Any] = {}
        for k, v in zip(keys, values, strict=True):
            first.setdefault(k, v)
        distinct = sorted(k for k in first if k != MISSING)
        labels = [label(first[k]) for k in distinct]
    index = {k: i for i, k in enumerate(distinct)}
    return np.fromiter((index.get(k, -1) for k in keys), dtype=np.int64, count=n), labels
