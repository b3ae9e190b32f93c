"""Truncation kernels shared by ``transformations.truncate`` and every table engine.

An engine evaluates the identifier, grouping and sort expressions on its own library, turns
each column into a numpy array (:func:`cells`), and asks for a boolean mask of the rows to keep
(:func:`rows_mask` for ``TruncateRows``, :func:`groups_mask` for ``TruncateGroups``).  The mask
is a function of each person's own rows and of the library's randomness only:

* people (and groups) are told apart by :func:`opendp_lite._order.group_ranks` on each cell,
  one class per value as ``==`` sees it, missing values one class; tuples by their cells;
* ``"sample"`` orders each run (a person, or a person in a group) by independent uniform keys
  from :mod:`opendp_lite.samplers.rng`, redrawing a run whose keys tie (:func:`sample_order`),
  so every subset of k rows is equally likely;
* ``"first"``/``"last"`` order a run by the total order of :mod:`opendp_lite._order` on the
  whole row (columns in frame order, then the tie classes), a ``SortKey`` by its keys first;
  two rows' order depends on those two rows only, never on their positions in the frame.

Cost: the evaluated columns are materialised once as numpy arrays (an integer or float column
without nulls as it is; a column with nulls, or strings, as Python objects); a run code is one
``np.unique`` per column, the order one sort.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from ._order import MISSING, group_key, group_ranks, tie_ranks
from .samplers.rng import fill_uint64

__all__ = [
    "cell_hash",
    "cells",
    "distinct_codes",
    "equal_codes",
    "groups_mask",
    "keep_first_k",
    "rows_mask",
    "run_codes",
    "sample_candidates",
    "sample_order",
    "sample_settle",
]

I64 = npt.NDArray[np.int64]


def cells(values: Sequence[Any] | npt.NDArray[Any], nulls: bool) -> npt.NDArray[Any]:
    """A column as numpy: as it is when ``values`` is a numpy array of a fixed-width kind and
    ``nulls`` is False; else an object array of the Python values (``None`` for a null), so
    that a large integer or a null is never read as a float."""
    if not nulls and isinstance(values, np.ndarray) and values.dtype.kind in "iubfmM":
        return values
    out = np.empty(len(values), dtype=object)
    out[:] = list(values)
    return out


def run_codes(cols: Sequence[npt.NDArray[Any]], n: int) -> I64:
    """Codes of the row tuples ``(cols[0][i], cols[1][i], ...)``: equal exactly when every cell
    is equal by :func:`~opendp_lite._order.group_ranks`, and increasing in the lexicographic
    total order of the tuples (no columns: one run)."""
    if not cols:
        return np.zeros(n, dtype=np.int64)
    codes = group_ranks(cols[0])
    for col in cols[1:]:
        r = group_ranks(col)
        width = int(r.max()) + 1 if len(r) else 1
        _, inv = np.unique(codes * width + r, return_inverse=True)  # < n^2: no overflow
        codes = np.asarray(inv, dtype=np.int64).reshape(-1)
    return codes


def equal_codes(cols: Sequence[npt.NDArray[Any]], n: int) -> I64:
    """Codes equal exactly when the tuples are (as :func:`run_codes`), in no particular order:
    a single integer column of range below 2^31 is its own code, offset (no sort); a uniform
    sample does not need the order."""
    if len(cols) == 1 and cols[0].dtype.kind in "iu" and len(cols[0]):
        col = cols[0]
        lo, hi = int(col.min()), int(col.max())
        if hi - lo < 2**31:
            return col.astype(np.int64) - lo
    return run_codes(cols, n)


def _missing(col: npt.NDArray[Any]) -> npt.NDArray[np.bool_]:
    out: npt.NDArray[np.bool_]
    if col.dtype.kind == "f":
        out = np.isnan(col)
        return out
    if col.dtype.kind in "mM":
        out = np.isnat(col)
        return out
    if col.dtype.kind != "O":
        return np.zeros(len(col), dtype=bool)
    return np.fromiter((group_key(v) == MISSING for v in col), dtype=bool, count=len(col))


def _row_keys(cols: Sequence[npt.NDArray[Any]], descending: bool) -> list[I64]:
    """Sort keys (most significant first) of the whole row in the total order of ``_order``."""
    keys: list[I64] = []
    for col in cols:
        keys.append(group_ranks(col))
        t = tie_ranks(col)
        if t is not None:
            keys.append(t)
    return [-k for k in keys] if descending else keys


def _sort_keys(
    cols: Sequence[npt.NDArray[Any]], descending: Sequence[bool], nulls_last: Sequence[bool]
) -> list[I64]:
    """Sort keys of a ``SortKey``: each key by its value, descending if asked, its missing
    values first unless ``nulls_last`` (whatever the direction, as Polars' ``sort_by``)."""
    keys: list[I64] = []
    for col, desc, last in zip(cols, descending, nulls_last, strict=True):
        r = group_ranks(col)
        k = -r if desc else r
        miss = _missing(col)
        if miss.any():
            edge = np.int64(len(col) + 1)
            k = np.where(miss, edge if last else -edge, k)
        keys.append(k)
    return keys


def _order_by(run: I64, keys: Sequence[I64]) -> I64:
    """Rows sorted by run, then by ``keys`` (most significant first)."""
    return np.lexsort((*reversed(keys), run)).astype(np.int64)  # lexsort: last key first


def rows_mask(
    ids: Sequence[npt.NDArray[Any]],
    by: Sequence[npt.NDArray[Any]],
    k: int,
    keep: str,
    row: Sequence[npt.NDArray[Any]] = (),
    sort: Sequence[npt.NDArray[Any]] = (),
    descending: Sequence[bool] = (),
    nulls_last: Sequence[bool] = (),
    n: int = 0,
) -> npt.NDArray[np.bool_]:
    """The rows ``TruncateRows`` keeps: at most ``k`` of each run of (identifier, by), chosen
    by ``keep`` (``"sample"``, ``"first"``, ``"last"``, or ``"sort"``: by ``sort`` with its
    directions, ties by ``row`` ascending).  ``row``: every column of the frame, in order."""
    if keep == "sample":
        run = equal_codes([*ids, *by], n)
        order = sample_order(run)
        return keep_first_k(order, run, k)
    run = run_codes([*ids, *by], n)
    if keep == "sort":
        order = _order_by(run, [*_sort_keys(sort, descending, nulls_last), *_row_keys(row, False)])
    else:
        order = _order_by(run, _row_keys(row, keep == "last"))
    return keep_first_k(order, run, k)


def groups_mask(
    ids: Sequence[npt.NDArray[Any]],
    by: Sequence[npt.NDArray[Any]],
    k: int,
    keep: str,
    n: int = 0,
) -> npt.NDArray[np.bool_]:
    """The rows ``TruncateGroups`` keeps: each person's rows in at most ``k`` of its groups of
    ``by``, the groups chosen by ``keep`` (uniformly, or the least/greatest in ``_order``)."""
    person = run_codes(ids, n)
    group = run_codes(by, n)
    width = int(group.max()) + 1 if n else 1
    pairs, inv = np.unique(person * width + group, return_inverse=True)
    inv = np.asarray(inv, dtype=np.int64).reshape(-1)
    pair_person = (pairs // width).astype(np.int64)
    pair_group = (pairs % width).astype(np.int64)
    if keep == "sample":
        order = sample_order(pair_person)
    else:
        g = -pair_group if keep == "last" else pair_group
        order = np.lexsort((g, pair_person)).astype(np.int64)
    kept = keep_first_k(order, pair_person, k)
    out: npt.NDArray[np.bool_] = kept[inv]
    return out


def sample_order(pid: npt.NDArray[np.int64], key_bits: int | None = None) -> npt.NDArray[np.int64]:
    """Rows sorted by individual, and within one individual in a uniformly random order.

    Each row draws an independent uniform key of ``r`` bits from the library's randomness; an
    individual whose keys tie redraws all its keys (rejection), so conditioned on acceptance
    its keys are i.i.d. and distinct, and every order of its rows is equally likely (the event
    "all distinct" is symmetric in the rows).  When the individuals' codes need ``b <= 32``
    bits the key has ``r = 64 - b >= 32`` bits and is packed below the code into one
    ``uint64`` (one sort); else ``r = 64`` and the two are sorted together.  ``key_bits``
    (tests only) narrows the key to make ties frequent; it must allow as many distinct keys
    as an individual has rows.
    """
    n = len(pid)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    bits = max(1, int(pid.max()).bit_length())
    packed = bits <= 32
    r = (64 - bits if packed else 64) if key_bits is None else key_bits
    mask = np.uint64((1 << r) - 1) if r < 64 else np.uint64(2**64 - 1)
    high = pid.astype(np.uint64) << np.uint64(64 - bits) if packed else None
    rand = fill_uint64(n) & mask
    while True:
        if high is not None:
            key = high | rand
            order = np.argsort(key)  # keys are distinct once accepted: no stability needed
            sk = key[order]
            same = sk[1:] == sk[:-1]
        else:
            order = np.lexsort((rand, pid))
            sp, sr = pid[order], rand[order]
            same = (sp[1:] == sp[:-1]) & (sr[1:] == sr[:-1])
        if not same.any():
            return order.astype(np.int64)
        tie = np.zeros(n, dtype=bool)
        tie[1:] |= same
        tie[:-1] |= same
        redo = np.isin(pid, np.unique(pid[order[tie]]))
        rand[redo] = fill_uint64(int(redo.sum())) & mask


def keep_first_k(
    order: npt.NDArray[np.int64], run_codes: npt.NDArray[np.int64], k: int
) -> npt.NDArray[np.bool_]:
    """``keep[i]``: row ``i`` is among the first ``k`` rows of its run in ``order``."""
    n = len(order)
    keep = np.zeros(n, dtype=bool)
    if n == 0:
        return keep
    s = run_codes[order]
    new = np.r_[True, s[1:] != s[:-1]]
    idx = np.arange(n)
    rank = idx - np.maximum.accumulate(np.where(new, idx, 0))
    keep[order[rank < k]] = True
    return keep


# ----------------------------------------------------------------------------------------------
# Two stages (the Dask engine): each part of the frame keeps its candidates, the candidates of
# one run meet on one worker, and the kernel above decides there (docs/proofs/table/truncation.md,
# "Dask: two stages").

_U64 = npt.NDArray[np.uint64]
_MISSING_HASH = np.uint64(0x6D69_7373_696E_6721)  # every missing value: one bucket


def _mix(x: _U64) -> _U64:
    """splitmix64's finaliser: a fixed bijection of ``uint64`` that spreads nearby integers."""
    with np.errstate(over="ignore"):
        z = x + np.uint64(0x9E37_79B9_7F4A_7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58_476D_1CE4_E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D0_49BB_1331_11EB)
        out: _U64 = z ^ (z >> np.uint64(31))
    return out


def _int_hash(values: Sequence[int]) -> _U64:
    return _mix(np.asarray(values, dtype=np.int64).view(np.uint64))


def _text_hash(b: bytes) -> np.uint64:
    return np.uint64(int.from_bytes(hashlib.blake2b(b, digest_size=8).digest(), "little"))


def cell_hash(col: npt.NDArray[Any]) -> _U64:
    """A hash of each cell that is a function of its :func:`~opendp_lite._order.group_key`
    class alone: values ``==`` calls equal (``1``, ``1.0``, ``True``) hash alike, every missing
    value (``None``, NaN, NaT, pandas ``NA``) hashes alike, whether the column is a numpy
    array of a fixed-width kind or of Python objects, in every process (no ``hash()`` of a
    string, which Python salts per process).  An integral number in ``int64`` hashes as that
    integer; another number as its exact value (a ``Fraction``); a string by its UTF-8 bytes;
    anything else by the text of its group key.  Equal hashes do not mean equal values."""
    n = len(col)
    kind = col.dtype.kind
    if kind in "bi" or (kind == "u" and (n == 0 or int(col.max()) < 2**63)):
        return _mix(col.astype(np.int64).view(np.uint64))
    if kind in "mM":
        out = _mix(col.view(np.int64).view(np.uint64))
        out[np.isnat(col)] = _MISSING_HASH
        return out
    if kind == "f":
        f = col.astype(np.float64)
        nan = np.isnan(f)
        with np.errstate(invalid="ignore"):
            whole = ~nan & (f == np.trunc(f)) & (np.abs(f) < 2.0**63)
        out = _mix(np.where(whole, f, 0.0).astype(np.int64).view(np.uint64))
        out[nan] = _MISSING_HASH
        for i in np.flatnonzero(~nan & ~whole).tolist():
            out[i] = _object_hash(float(f[i]))
        return out
    out = np.empty(n, dtype=np.uint64)
    ints: list[int] = []
    where: list[int] = []
    for i, v in enumerate(col.tolist()):
        h = _object_hash(v)
        if isinstance(h, int):
            ints.append(h)
            where.append(i)
        else:
            out[i] = h
    if ints:
        out[np.asarray(where, dtype=np.intp)] = _int_hash(ints)
    return out


def _object_hash(v: Any) -> np.uint64 | int:
    """The hash of one cell, or the integer to hash with the fixed-width integers."""
    if type(v) is str:
        return _text_hash(b"s" + v.encode("utf-8", "surrogatepass"))
    key = group_key(v)
    if key == MISSING:
        return _MISSING_HASH
    if key[0] == group_key(0)[0]:  # a number: its exact value
        x = key[1]
        if isinstance(x, float) and not math.isfinite(x):
            return _text_hash(b"n" + repr(x).encode())
        q = Fraction(x)
        if q.denominator == 1 and -(2**63) <= q.numerator < 2**63:
            return int(q.numerator)
        return _text_hash(b"n" + repr(q).encode())
    if key[0] == group_key("")[0]:
        return _text_hash(b"s" + str(key[1]).encode("utf-8", "surrogatepass"))
    return _text_hash(b"o" + repr(key).encode("utf-8", "backslashreplace"))


def _ranks_in_runs(s: npt.NDArray[Any]) -> tuple[I64, I64]:
    """``(rank, start)`` of each position of the sorted run codes ``s``: its rank within its
    run and the position where its run starts."""
    n = len(s)
    idx = np.arange(n, dtype=np.int64)
    new = np.r_[True, s[1:] != s[:-1]] if n else np.zeros(0, dtype=bool)
    start = np.maximum.accumulate(np.where(new, idx, 0)) if n else idx
    return idx - start, start


def _by_run_and_key(run: I64, keys: _U64, key_bits: int) -> I64:
    """Rows sorted by run, then key (rows equal in both in any order): one sort of the packed
    words when the run codes fit above the key's bits."""
    if key_bits < 64 and int(run.max()) < 1 << (64 - key_bits):
        packed = (run.astype(np.uint64) << np.uint64(key_bits)) | keys
        return np.argsort(packed).astype(np.int64)
    return np.lexsort((keys, run)).astype(np.int64)


def sample_candidates(run: I64, k: int, key_bits: int = 32) -> tuple[npt.NDArray[np.bool_], _U64]:
    """Stage 1 of ``"sample"`` on one part of the frame: ``(keep, keys)``, each row's i.i.d.
    uniform key of ``key_bits`` bits, and the rows whose key is at most the k-th smallest key
    of their run in this part (all rows tied with it kept).  Every row whose key is at most
    the k-th smallest of its run in the *whole* frame is kept: fewer than k rows of the run
    have a smaller key, in the whole frame and so in this part.  Ties cost a little work in
    :func:`sample_settle`, never the law: any width is exact (tests use 2 bits)."""
    n = len(run)
    keys = fill_uint64(n)
    if key_bits < 64:
        keys = keys >> np.uint64(64 - key_bits)
    keep = np.ones(n, dtype=bool)
    if n == 0:
        return keep, keys
    order = _by_run_and_key(run, keys, key_bits)
    s, sk = run[order], keys[order]
    _, start = _ranks_in_runs(s)
    kth = np.minimum(start + (k - 1), n - 1)
    has_k = s[kth] == s  # the run has a k-th row in this part
    keep[order] = ~has_k | (sk <= sk[kth])
    return keep, keys


def sample_settle(run: I64, keys: _U64, k: int, key_bits: int = 64) -> npt.NDArray[np.bool_]:
    """Stage 2 of ``"sample"``, on all of a run's candidates: the rows whose key is below the
    k-th smallest key K of the run, and, of the rows whose key is K, a uniformly random subset
    (:func:`sample_order`) of the size that makes k.  Every row with key at most K is among
    the candidates, so this is the kept set of the whole run; the rows are exchangeable and
    the choice commutes with relabelling them, so each subset of min(k, n) rows of the run is
    equally likely (the law of :func:`rows_mask`).  ``key_bits``: the keys' width (a bound;
    for one sort of packed words)."""
    n = len(run)
    keep = np.ones(n, dtype=bool)
    if n == 0:
        return keep
    order = _by_run_and_key(run, keys, key_bits)
    s, sk = run[order], keys[order]
    rank, start = _ranks_in_runs(s)
    kth = np.minimum(start + (k - 1), n - 1)
    has_k = s[kth] == s
    bound = sk[kth]
    below = ~has_k | (sk < bound)
    tied = has_k & (sk == bound)
    keep[:] = False
    keep[order[below]] = True
    if tied.any():  # the first row tied with K has as its rank the rows below K
        tpos = np.flatnonzero(tied)
        _, first, code = np.unique(s[tpos], return_index=True, return_inverse=True)
        code = np.asarray(code, dtype=np.int64).reshape(-1)
        need = k - rank[tpos[first]]
        o = sample_order(code)  # within each run, its rows tied with K in a uniform order
        r, _ = _ranks_in_runs(code[o])
        keep[order[tpos[o[r < need[code[o]]]]]] = True
    return keep


def distinct_codes(cols: Sequence[npt.NDArray[Any]], n: int) -> I64:
    """Codes equal exactly when the tuples are (as :func:`equal_codes`), in no particular
    order; integer columns (no nulls) whose ranges multiply below 2^62 are packed into one
    integer without a sort per column."""
    if cols and all(c.dtype.kind in "iu" for c in cols) and n:
        lows = [int(c.min()) for c in cols]
        widths = [int(c.max()) - lo + 1 for c, lo in zip(cols, lows, strict=True)]
        if math.prod(widths) < 2**62:
            code = np.zeros(n, dtype=np.int64)
            for c, lo, w in zip(cols, lows, widths, strict=True):
                code = code * w + (c.astype(np.int64) - lo)
            return code
    return equal_codes(cols, n)
