"""Hypothesis strategies for the law suite: members of a domain, neighbouring inputs under a
dataset or sensitivity metric, and the exact distance between two outputs.

Distances are computed exactly: floats as :class:`fractions.Fraction`, multisets by counting
(NaN is one value, ``-0.0 == 0.0``), insert-delete distance by a longest common subsequence,
L2 by comparing squares.  A neighbouring pair is returned with the distance ``d`` that the
construction guarantees (an upper bound on the true distance; the law ``out <= map(d)`` is
then implied by monotonicity, so a violation is always a real counterexample).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np
from hypothesis import strategies as st

import opendp_lite.prelude as dp
from opendp_lite import _arith
from opendp_lite._types import int_bounds, is_float, is_int
from opendp_lite.domains import (
    AtomDomain,
    DataFrameDomain,
    MapDomain,
    OptionDomain,
    VectorDomain,
)
from opendp_lite.metrics import (
    AbsoluteDistance,
    ChangeOneDistance,
    DiscreteDistance,
    HammingDistance,
    InsertDeleteDistance,
    L0PInfDistance,
    L1Distance,
    L2Distance,
    LInfDistance,
    SymmetricDistance,
)

INF = math.inf
MAX_LEN = 6

# ----------------------------------------------------------------------------------------------
# members of a domain


def atoms(dom: AtomDomain[Any]) -> st.SearchStrategy[Any]:
    """Members of an atom domain (small magnitudes, plus the bounds' edges when bounded)."""
    T = dom.T
    if T == "bool":
        return st.booleans()
    if T == "String":
        # no line breaks: strings also stand for lines (make_split_lines)
        return st.text(alphabet="ab ,x", max_size=3)
    if is_int(T):
        if dom.bounds is not None:  # anywhere in the bounds, which may span the carrier
            lo, hi = dom.bounds
            return st.integers(lo, hi) | st.sampled_from([lo, hi])
        lo, hi = int_bounds(T)  # small values: distances must fit the distance type
        return st.integers(max(lo, -1000), min(hi, 1000))
    if is_float(T):
        width = 32 if T == "f32" else 64
        if dom.bounds is not None:
            lo, hi = dom.bounds
            s = st.floats(lo, hi, width=width) | st.sampled_from([lo, hi])
        else:
            s = st.floats(-1e6, 1e6, width=width)
        if dom.nan:
            s = s | st.just(math.nan)
        return s
    raise NotImplementedError(f"no strategy for atoms of {T}")


def members(dom: Any) -> st.SearchStrategy[Any]:
    """Members of a domain."""
    if isinstance(dom, AtomDomain):
        return atoms(dom)
    if isinstance(dom, OptionDomain):
        return st.none() | members(dom.element_domain)
    if isinstance(dom, VectorDomain):
        lo = dom.size if dom.size is not None else 0
        hi = dom.size if dom.size is not None else MAX_LEN
        return st.lists(members(dom.element_domain), min_size=lo, max_size=hi)
    raise NotImplementedError(f"no strategy for members of {dom!r}")


# ----------------------------------------------------------------------------------------------
# neighbouring inputs


@st.composite
def _dataset_neighbours(draw: Any, elem: st.SearchStrategy[Any], size: int | None, metric: Any):
    """Two datasets and an upper bound ``d`` on their distance under ``metric``."""
    n_lo, n_hi = (size, size) if size is not None else (0, MAX_LEN)
    x = draw(st.lists(elem, min_size=n_lo, max_size=n_hi))
    n = len(x)
    if isinstance(metric, (ChangeOneDistance, HammingDistance)) or (size is not None and n > 0):
        # same size: change k records (a removal and an addition each)
        k = draw(st.integers(0, n))
        idx = draw(st.permutations(range(n)))[:k]
        y = list(x)
        for i in idx:
            y[i] = draw(elem)
        if isinstance(metric, HammingDistance):
            return x, y, k
        if isinstance(metric, ChangeOneDistance):
            return x, draw(st.permutations(y)), k
        if isinstance(metric, SymmetricDistance):
            return x, draw(st.permutations(y)), 2 * k
        return x, y, 2 * k  # insert-delete: delete and insert at the same place
    # unknown size: remove some records, add some
    keep = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    y = [v for v, kp in zip(x, keep, strict=True) if kp]
    removed = n - len(y)
    added = draw(st.lists(elem, max_size=3))
    if isinstance(metric, InsertDeleteDistance):
        for v in added:
            y.insert(draw(st.integers(0, len(y))), v)
    else:
        y = draw(st.permutations(y + added))
    return x, y, removed + len(added)


def _to_q(v: Any) -> Fraction:
    return Fraction(v.item() if isinstance(v, np.generic) else v)


@st.composite
def _sensitivity_neighbours(draw: Any, dom: Any, metric: Any):
    """Two points and ``d`` >= their distance in ``metric`` (rounded up for float distances)."""
    if isinstance(dom, AtomDomain):
        x, y = draw(atoms(dom)), draw(atoms(dom))
        exact = abs(_to_q(x) - _to_q(y))
    else:
        elem = members(dom.element_domain)
        n = dom.size if dom.size is not None else draw(st.integers(0, MAX_LEN))
        x = draw(st.lists(elem, min_size=n, max_size=n))
        y = draw(st.lists(elem, min_size=n, max_size=n))
        if isinstance(metric, LInfDistance) and metric.monotonic:
            # a monotonic metric only relates vectors whose differences share one sign
            lo_hi = [sorted((a, b), key=_to_q) for a, b in zip(x, y, strict=True)]
            x, y = [p[0] for p in lo_hi], [p[1] for p in lo_hi]
        diffs = [abs(_to_q(a) - _to_q(b)) for a, b in zip(x, y, strict=True)]
        if isinstance(metric, L1Distance):
            exact = sum(diffs, Fraction(0))
        elif isinstance(metric, LInfDistance):
            exact = max(diffs, default=Fraction(0))
        else:  # L2: an integer or float ceiling of the square root
            sq = sum((t * t for t in diffs), Fraction(0))
            if is_int(metric.T):
                r = math.isqrt(math.ceil(sq))
                return x, y, r if r * r >= sq else r + 1
            return x, y, _sqrt_up(sq)
    if is_int(metric.T):
        return x, y, math.ceil(exact)
    return x, y, _arith.up(_arith.q(exact))


def _sqrt_up(sq: Fraction) -> float:
    """The least float >= sqrt(sq), in exact integer arithmetic.

    (Stepping up one ulp at a time from ``sqrt(float(sq))`` never ends when ``float(sq)``
    underflows: squares of subnormal differences, which Hypothesis finds on fresh seeds.)
    """
    if sq <= 0:
        return 0.0
    # n/2^k >= sqrt(sq) with at least 64 significant bits: n = ceil(sqrt(sq·4^k))
    k = 64 - (sq.numerator.bit_length() - sq.denominator.bit_length()) // 2
    scaled = sq * Fraction(4) ** k
    n = math.isqrt(math.ceil(scaled))
    while Fraction(n * n) < scaled:
        n += 1
    bound = Fraction(n, 2**k) if k >= 0 else Fraction(n * 2**-k)
    r = float(bound)
    if Fraction(r) < bound:
        r = math.nextafter(r, INF)
    while r > 0 and Fraction(math.nextafter(r, 0.0)) ** 2 >= sq:  # the least such float
        r = math.nextafter(r, 0.0)
    return r


@st.composite
def _discrete_neighbours(draw: Any, dom: Any):
    x, y = draw(members(dom)), draw(members(dom))
    return x, y, int(_key(x) != _key(y))


@st.composite
def _text_neighbours(draw: Any):
    """Texts whose multisets of lines are ``d`` apart (make_split_lines' input metric)."""
    x, y, d = draw(
        _dataset_neighbours(st.text(alphabet="ab ,", max_size=4), None, dp.symmetric_distance())
    )
    # every line ends with "\n", so that the text splits back into exactly these lines
    return "".join(v + "\n" for v in x), "".join(v + "\n" for v in y), d


#: the column types the laws draw Polars frames of, and their values
_POLARS_COLUMNS: dict[str, tuple[str, st.SearchStrategy[Any]]] = {
    "Float64": ("Float64", st.floats(-10, 10, allow_nan=False)),
    "Int32": ("Int32", st.integers(-5, 5)),
    "Int64": ("Int64", st.integers(-5, 5)),
    "Boolean": ("Boolean", st.booleans()),
    "String": ("String", st.text(alphabet="ab1", max_size=2)),
}


@st.composite
def _lazyframe_neighbours(draw: Any, dom: Any, metric: Any):
    """Polars LazyFrames of a ``lazyframe_domain``'s schema whose multisets of rows are ``d``
    apart (``metric`` is symmetric_distance or frame_distance over it: a row count)."""
    import polars as pl

    schema = {name: _POLARS_COLUMNS[str(dt)] for name, dt in dom.schema.items()}
    row = st.tuples(*(values for _, values in schema.values()))
    x, y, d = draw(_dataset_neighbours(row, None, dp.symmetric_distance()))
    pl_schema = {name: getattr(pl, dtype) for name, (dtype, _) in schema.items()}

    def frame(rows: list[tuple[Any, ...]]) -> Any:
        cols = {c: [r[j] for r in rows] for j, c in enumerate(schema)}
        return pl.LazyFrame(cols, schema=pl_schema)

    return frame(x), frame(y), d


@st.composite
def _frame_neighbours(draw: Any, cols: tuple[str, ...]):
    """Dataframes (dict of columns) whose multisets of rows are ``d`` apart."""
    row = st.tuples(*(st.text(alphabet="ab1", max_size=2) for _ in cols))
    x, y, d = draw(_dataset_neighbours(row, None, dp.symmetric_distance()))

    def frame(rows: list[tuple[str, ...]]) -> dict[str, list[str]]:
        return {c: [r[j] for r in rows] for j, c in enumerate(cols)}

    return frame(x), frame(y), d


def neighbours(dom: Any, metric: Any, cols: tuple[str, ...] = ("a", "b")) -> Any:
    """A strategy of ``(x, x2, d)`` with ``x, x2`` members of ``dom`` at most ``d`` apart."""
    arrays = array2_neighbours(dom, metric)
    if arrays is not None:
        return arrays
    if isinstance(metric, DiscreteDistance):
        return _discrete_neighbours(dom)
    if isinstance(metric, (AbsoluteDistance, L1Distance, L2Distance, LInfDistance)):
        return _sensitivity_neighbours(dom, metric)
    if isinstance(dom, DataFrameDomain):
        return _frame_neighbours(cols)
    if type(dom).__name__ == "LazyFrameDomain":
        return _lazyframe_neighbours(dom, metric)
    if isinstance(dom, AtomDomain) and dom.T == "String":
        return _text_neighbours()
    if isinstance(dom, VectorDomain):
        inner = dom.element_domain
        if isinstance(inner, VectorDomain):  # records of fields
            elem = st.lists(st.text(alphabet="ab1", max_size=2), max_size=3)
        else:
            elem = members(inner)
        return _dataset_neighbours(elem, dom.size, metric)
    raise NotImplementedError(f"no neighbours for {dom!r} under {metric!r}")


# ----------------------------------------------------------------------------------------------
# exact output distances


def _key(v: Any) -> Any:
    """A hashable, exact key: NaN is one value, arrays become tuples."""
    if isinstance(v, np.ndarray | list | tuple):
        return tuple(_key(u) for u in v)
    if isinstance(v, Mapping):
        return tuple(sorted(((_key(k), _key(u)) for k, u in v.items()), key=repr))
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    return v


def _rows(v: Any) -> list[Any]:
    if isinstance(v, Mapping):  # a dataframe: its rows
        cols = sorted(v, key=repr)
        n = len(v[cols[0]]) if cols else 0
        return [tuple(_key(v[c][i]) for c in cols) for i in range(n)]
    return [_key(u) for u in v]


def _lcs(a: list[Any], b: list[Any]) -> int:
    prev = [0] * (len(b) + 1)
    for u in a:
        cur = [0]
        for j, w in enumerate(b):
            cur.append(prev[j] + 1 if u == w else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def _diff(a: Any, b: Any) -> Fraction | float:
    a = a.item() if isinstance(a, np.generic) else a
    b = b.item() if isinstance(b, np.generic) else b
    if (isinstance(a, float) and not math.isfinite(a)) or (
        isinstance(b, float) and not math.isfinite(b)
    ):
        return Fraction(0) if _key(a) == _key(b) else INF
    return Fraction(a) - Fraction(b)


def _by_key(y: Mapping[Any, Any]) -> dict[Any, Any] | None:
    """``y`` keyed by exact keys (NaN is one key); None if two keys collide (e.g. two NaNs)."""
    out: dict[Any, Any] = {}
    for k, v in y.items():
        if _key(k) in out:
            return None
        out[_key(k)] = v
    return out


def _pairs(y: Any, y2: Any) -> list[Fraction | float] | None:
    if isinstance(y, Mapping):  # sparse vectors: a missing key counts as 0
        a, b = _by_key(y), _by_key(y2)
        if a is None or b is None:
            return None
        return [_diff(a.get(k, 0), b.get(k, 0)) for k in set(a) | set(b)]
    if np.ndim(y) == 0:
        return [_diff(y, y2)]
    if len(y) != len(y2):
        return None
    return [_diff(a, b) for a, b in zip(y, y2, strict=True)]


def within(metric: Any, y: Any, y2: Any, bound: Any) -> bool:
    """Whether ``d(y, y2) <= bound`` in ``metric``, exactly."""
    if isinstance(metric, L0PInfDistance):  # (l0, lp, l∞) over maps: each part bounded
        return _within_l0pinf(metric, y, y2, bound)
    b = Fraction(bound) if math.isfinite(bound) else None
    if b is None:
        return True
    if isinstance(
        metric, (SymmetricDistance, InsertDeleteDistance, ChangeOneDistance, HammingDistance)
    ):
        r, r2 = _rows(y), _rows(y2)
        if isinstance(metric, HammingDistance):
            if len(r) != len(r2):
                return False
            return sum(u != w for u, w in zip(r, r2, strict=True)) <= b
        if isinstance(metric, InsertDeleteDistance):
            return len(r) + len(r2) - 2 * _lcs(r, r2) <= b
        c, c2 = Counter(r), Counter(r2)
        sym = sum(((c - c2) + (c2 - c)).values())
        if isinstance(metric, ChangeOneDistance):
            return len(r) == len(r2) and Fraction(sym, 2) <= b
        return sym <= b
    if isinstance(metric, DiscreteDistance):
        return int(_key(y) != _key(y2)) <= b
    diffs = _pairs(y, y2)
    if diffs is None or any(t == INF for t in diffs):
        return False
    if isinstance(metric, (AbsoluteDistance, L1Distance)):
        return sum((abs(t) for t in diffs), Fraction(0)) <= b
    if isinstance(metric, L2Distance):
        return sum((t * t for t in diffs), Fraction(0)) <= b * b
    if isinstance(metric, LInfDistance):
        if metric.monotonic and any(t > 0 for t in diffs) and any(t < 0 for t in diffs):
            return False
        return max((abs(t) for t in diffs), default=Fraction(0)) <= b
    raise NotImplementedError(f"no exact distance for {metric!r}")


def _within_l0pinf(metric: Any, y: Any, y2: Any, bound: Any) -> bool:
    l0, lp, linf = (Fraction(b) if math.isfinite(b) else None for b in bound)
    diffs = _pairs(y, y2)
    if diffs is None or any(t == INF for t in diffs):
        return False
    nonzero = [abs(t) for t in diffs if t != 0]
    norm = sum(nonzero, Fraction(0)) if metric.p == 1 else sum(t * t for t in nonzero)
    return (
        (l0 is None or len(nonzero) <= l0)
        and (lp is None or norm <= (lp if metric.p == 1 else lp * lp))
        and (linf is None or max(nonzero, default=Fraction(0)) <= linf)
    )


def distances(metric: Any) -> st.SearchStrategy[Any]:
    """Admissible distances of ``metric`` (integers for dataset metrics and integer types)."""
    T = getattr(metric, "T", "u32")
    if is_int(T) or isinstance(
        metric,
        (
            SymmetricDistance,
            InsertDeleteDistance,
            ChangeOneDistance,
            HammingDistance,
            DiscreteDistance,
        ),
    ):
        return st.integers(0, 40)
    return st.floats(0, 1e3, allow_nan=False) | st.sampled_from([0.0, 1.0, 2.0**-40])


__all__ = ["MapDomain", "distances", "members", "neighbours", "within"]


# ----------------------------------------------------------------------------------------------
# 2-d arrays of the numpy extras (rows are records)


@st.composite
def _array2_rows(draw: Any, dom: Any, d: int) -> Any:
    """One row of ``dom``: any floats (NaN if allowed), or, under a norm, a point of the ball
    (on its boundary along an axis, or a scaled-down draw), checked by the domain itself."""
    vals = st.floats(-1e3, 1e3) | st.sampled_from([0.0, 1.0, -1.0, 1e-300])
    if dom.nan:
        vals = vals | st.just(math.nan)
    row = np.array(draw(st.lists(vals, min_size=d, max_size=d)), dtype=np.float64)
    if dom.norm is None:
        return row
    o = np.broadcast_to(np.asarray(dom.origin, dtype=np.float64), (d,))
    if d and draw(st.booleans()):  # on the boundary along one axis, when representable
        row = o.copy()
        row[draw(st.integers(0, d - 1))] += draw(st.sampled_from([1.0, -1.0])) * dom.norm
    else:
        length = float(np.linalg.norm(row, ord=dom.p))
        row = o + row * (dom.norm / length if length > dom.norm else 1.0)
    return row if dom.member(row[None, :]) else o.copy()


@st.composite
def _array2_neighbours(draw: Any, dom: Any, metric: Any):
    """Two members of an ``NPArray2Domain`` and ``d`` >= their symmetric distance."""
    d = dom.num_columns if dom.num_columns is not None else draw(st.integers(1, 3))
    x, y, dist = draw(_dataset_neighbours(_array2_rows(dom, d), dom.size, metric))
    return (
        np.array(x, dtype=np.float64).reshape(-1, d),
        np.array(y, dtype=np.float64).reshape(-1, d),
        dist,
    )


def array2_neighbours(dom: Any, metric: Any) -> Any:
    """Neighbours in a 2-d array domain of ``opendp_lite.extras.numpy``, or ``None``."""
    from opendp_lite.extras.numpy import NPArray2Domain

    return _array2_neighbours(dom, metric) if isinstance(dom, NPArray2Domain) else None
