"""The reference table engine: a FramePlan evaluated row by row in plain Python.

It writes down the semantics every engine must have (Polars' rules), one value at a time,
with no library underneath, so the engines can be compared with it:

* null (``None``) propagates through every operation, except Kleene ``&``/``|`` (``False &
  null`` is ``False``, ``True | null`` is ``True``), ``is_null``/``is_not_null``,
  ``fill_null`` and ``replace`` of null;
* NaN is a value, distinct from null: comparisons order it above every number and equal to
  itself, ``clip`` keeps it, ``is_nan`` finds it, ``fill_nan`` replaces it; ``cut`` gives it
  null; the exact aggregates skip it in sums and in ``QuantileCounts`` (as null), and count it in
  ``count``/``n_unique``;
* integers: ``//`` and ``%`` floor (the sign of ``%`` is the divisor's), a zero divisor gives
  null; ``+ - * neg abs`` wrap to 64 bits; ``/`` is float division (``x/0`` is ±inf or NaN);
* floats: ``//`` is ``floor(a / b)``, ``%`` is ``a - b·floor(a / b)`` (IEEE, so ``x % 0`` is NaN);
* casts: float to int truncates toward zero, and a value that does not fit (NaN, ±inf, out of
  range, an unparsable string) is null, whatever ``strict`` says (so no record can make a
  plan fail; nor ``replace_strict`` without a default: an unmatched value is null); to
  String, floats are written
  as Polars writes them;
* ``clip`` with a missing side leaves that side open; null stays null;
* ``cut``: interval ``i`` holds the values with ``i`` breaks below them (``(a, b]``), or
  ``[a, b)`` when ``left_closed``; labels as Polars writes them;
* groups: null one group, NaN one group, ``-0.0`` and ``0.0`` one group; without public keys
  the groups come in :mod:`opendp_lite._order`'s total order (null before NaN among the
  missing); with public keys, exactly those, in their order, absent ones zero.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from opendp_lite import _order
from opendp_lite.backends.tables import TableResult
from opendp_lite.table import nodes as N

Frame = dict[str, list[Any]]


class Failed(Exception):
    """The plan fails on this data (replace_strict without a default)."""


_NAN_KEY = ("nan",)


def _wrap(v: int) -> int:
    return (v + 2**63) % 2**64 - 2**63


def _is_nan(v: Any) -> bool:
    return isinstance(v, float) and v != v


def _fdiv(a: float, b: float) -> float:
    """IEEE division."""
    if b == 0:
        if a != a or a == 0:
            return math.nan
        sign = math.copysign(1.0, a) * math.copysign(1.0, b)
        return math.inf * sign
    return a / b


def _floor(x: float) -> float:
    if x != x or math.isinf(x):
        return x
    return math.copysign(float(math.floor(x)), x) if x == 0 else float(math.floor(x))  # -0.0


def _lt(a: Any, b: Any) -> bool:
    """The total order: NaN above every number, equal to itself."""
    if _is_nan(a):
        return False
    if _is_nan(b):
        return not isinstance(a, str)
    return bool(a < b)


def _eq(a: Any, b: Any) -> bool:
    if _is_nan(a) or _is_nan(b):
        return _is_nan(a) and _is_nan(b)
    return bool(a == b)


def float_text(v: float) -> str:
    if v != v:
        return "NaN"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    s = repr(v)
    if "e" in s:
        m, e = s.split("e")
        s = f"{m}e{int(e)}" if int(e) < 0 else f"{m}e+{int(e)}"
    return s


def _break_text(b: Any) -> str:
    f = float(b)
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    return str(int(f)) if f.is_integer() else format(Decimal(repr(f)), "f")


_RANGES = {
    f"{p}{b}": ((-(2 ** (b - 1)), 2 ** (b - 1) - 1) if p == "Int" else (0, 2**b - 1))
    for p in ("Int", "UInt")
    for b in (8, 16, 32, 64)
}


def cast(v: Any, dtype: N.DType, strict: bool) -> Any:
    if v is None:
        return None
    name = dtype if isinstance(dtype, str) else dtype[0]
    out: Any
    if name in _RANGES:
        lo, hi = _RANGES[name]
        if isinstance(v, bool):
            out = int(v)
        elif isinstance(v, float):
            out = None if not math.isfinite(v) else math.trunc(v)
        elif isinstance(v, str):
            try:
                out = int(v)
            except ValueError:
                out = None
        else:
            out = int(v)
        if out is not None and not lo <= out <= hi:
            out = None
    elif name in ("Float64", "Float32"):
        if isinstance(v, str):
            try:
                out = math.nan if v.strip().lower() in ("nan", "+nan", "-nan") else float(v)
            except ValueError:
                out = None
        else:
            out = float(v)
    elif name in ("String", "Categorical"):
        if isinstance(v, bool):
            out = "true" if v else "false"
        elif isinstance(v, float):
            out = float_text(v)
        else:
            out = str(v)
    elif name == "Boolean":
        out = bool(v != 0) if not isinstance(v, str) else None
    else:
        raise NotImplementedError(name)
    return out  # non-strict whatever ``strict`` says: no record can make a plan fail


def _binary(op: str, a: Any, b: Any) -> Any:
    if op in ("&", "|") and (isinstance(a, bool) or isinstance(b, bool) or a is b is None):
        if op == "&":
            if a is False or b is False:
                return False
            return None if a is None or b is None else True
        if a is True or b is True:
            return True
        return None if a is None or b is None else False
    if a is None or b is None:
        return None
    ints = isinstance(a, int) and isinstance(b, int) and not isinstance(a, float)
    if op == "+" and isinstance(a, str):
        return a + b
    if op in ("+", "-", "*"):
        r = {"+": a + b, "-": a - b, "*": a * b}[op]
        if isinstance(a, bool) or isinstance(b, bool):
            return r
        return _wrap(r) if ints else r
    if op == "/":
        return _fdiv(float(a), float(b))
    if op == "//":
        if ints:
            return None if b == 0 else a // b
        return _floor(_fdiv(float(a), float(b)))
    if op == "%":
        if ints:
            return None if b == 0 else a % b
        fa, fb = float(a), float(b)
        q = _floor(_fdiv(fa, fb))
        return fa - fb * q
    if op == "==":
        return _eq(a, b)
    if op == "!=":
        return not _eq(a, b)
    if op == "<":
        return _lt(a, b)
    if op == ">":
        return _lt(b, a)
    if op == "<=":
        return not _lt(b, a)
    if op == ">=":
        return not _lt(a, b)
    if op == "^":
        return (a != b) if isinstance(a, bool) else a ^ b
    if op == "&":
        return a & b
    if op == "|":
        return a | b
    raise NotImplementedError(op)


def _unary(op: str, v: Any) -> Any:
    if op == "is_null":
        return v is None
    if op == "is_not_null":
        return v is not None
    if v is None:
        return None
    if op == "is_nan":
        return _is_nan(v)
    if op == "is_not_nan":
        return not _is_nan(v)
    if op == "is_finite":
        return math.isfinite(v) if isinstance(v, float) else True
    if op == "is_infinite":
        return math.isinf(v) if isinstance(v, float) else False
    if op == "not":
        return (not v) if isinstance(v, bool) else ~v
    if op == "neg":
        return -v if isinstance(v, float) else _wrap(-v)
    if op == "abs":
        return abs(v) if isinstance(v, float) else _wrap(abs(v))
    raise NotImplementedError(op)


def _clip(v: Any, lo: Any, hi: Any) -> Any:
    if v is None or _is_nan(v):
        return v
    if lo is not None and v < lo:
        v = type(v)(lo) if isinstance(v, float) else lo
    if hi is not None and v > hi:
        v = type(v)(hi) if isinstance(v, float) else hi
    return v


def _cut(v: Any, e: N.Cut) -> Any:
    if v is None or _is_nan(v):
        return None
    breaks = [float(b) for b in e.breaks]
    if e.left_closed:
        i = sum(1 for b in breaks if b <= v)
    else:
        i = sum(1 for b in breaks if b < v)
    if e.labels is not None:
        return e.labels[i]
    edges = ["-inf", *(_break_text(b) for b in breaks), "inf"]
    lo, hi = ("[", ")") if e.left_closed else ("(", "]")
    return f"{lo}{edges[i]}, {edges[i + 1]}{hi}"


def _key(v: Any) -> Any:
    return _NAN_KEY if _is_nan(v) else v


class Row:
    def __init__(self, cols: Frame, i: int) -> None:
        self.cols, self.i = cols, i

    def value(self, e: N.Expr) -> Any:
        if isinstance(e, N.Col):
            return self.cols[e.name][self.i]
        if isinstance(e, N.Lit):
            return e.value if e.dtype is None else cast(e.value, e.dtype, True)
        if isinstance(e, N.Alias):
            return self.value(e.expr)
        if isinstance(e, N.Binary):
            return _binary(e.op, self.value(e.left), self.value(e.right))
        if isinstance(e, N.Unary):
            return _unary(e.op, self.value(e.expr))
        if isinstance(e, N.Cast):
            return cast(self.value(e.expr), e.dtype, e.strict)
        if isinstance(e, N.Clip):
            return _clip(self.value(e.expr), e.lower, e.upper)
        if isinstance(e, N.FillNull):
            v = self.value(e.expr)
            return self.value(e.value) if v is None else v
        if isinstance(e, N.FillNan):
            v = self.value(e.expr)
            return self.value(e.value) if _is_nan(v) else v
        if isinstance(e, N.Cut):
            return _cut(self.value(e.expr), e)
        if isinstance(e, N.Replace):
            v = self.value(e.expr)
            table = {_key(o): n for o, n in zip(e.old, e.new, strict=True)}
            if _key(v) in table:
                return table[_key(v)]
            if not e.strict:
                return v
            if e.default is not None:
                return self.value(e.default)
            return None  # unmatched, no default: null, so no record can make a plan fail
        raise NotImplementedError(type(e).__name__)

    def kept(self, e: N.Expr) -> tuple[Any, bool]:
        """``e``'s value and whether the row is kept (filters, drop_nulls/drop_nans)."""
        if isinstance(e, N.FilterExpr):
            v, keep = self.kept(e.expr)
            return v, keep and self.value(e.predicate) is True
        if isinstance(e, N.Unary) and e.op in ("drop_nulls", "drop_nans"):
            v, keep = self.kept(e.expr)
            drop = v is None if e.op == "drop_nulls" else _is_nan(v)
            return v, keep and not drop
        if isinstance(e, (N.Alias, N.Unary, N.Cast, N.Clip, N.Cut)):
            v, keep = self.kept(e.expr)
            inner = N.Lit(v)
            return Row({}, 0).value(_replace_child(e, inner)), keep
        return self.value(e), True


def _replace_child(e: Any, child: N.Expr) -> N.Expr:
    from dataclasses import replace

    return replace(e, expr=child)  # type: ignore[no-any-return]


def grid_k(x: float, p: int) -> int:
    return math.trunc(math.ldexp(x, p))


def run(frame: Frame, plan: N.FramePlan) -> TableResult:
    """The plan on ``frame`` (a dict of equal-length lists), row by row.

    Raises:
        Failed: where the plan fails on this data.
    """
    cols = {k: list(v) for k, v in frame.items()}
    n = len(next(iter(cols.values()))) if cols else 0
    for step in plan.steps:
        rows = [Row(cols, i) for i in range(n)]
        if isinstance(step, N.FilterRows):
            keep = [r.value(step.predicate) is True for r in rows]
            cols = {k: [x for x, t in zip(v, keep, strict=True) if t] for k, v in cols.items()}
            n = sum(keep)
            continue
        new = {N.output_name(e): [r.value(e) for r in rows] for e in step.exprs}
        cols = {**cols, **new} if isinstance(step, N.WithColumns) else new
    rows = [Row(cols, i) for i in range(n)]
    groups: dict[tuple[Any, ...], list[int]] = {}
    labels: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    for i, r in enumerate(rows):
        lab = tuple(r.value(e) for e in plan.by) if plan.by is not None else ()
        key = tuple(_key(v) for v in lab)
        groups.setdefault(key, []).append(i)
        labels.setdefault(key, lab)
    names = [N.output_name(e) for e in plan.by] if plan.by is not None else []
    if plan.by is None:
        order: list[tuple[Any, ...]] = [()]
        keys_out: dict[str, list[Any]] = {}
    elif plan.keys is not None:
        klists = [plan.keys[nm] for nm in names]
        order = [tuple(_key(c[i]) for c in klists) for i in range(len(klists[0]))]
        keys_out = {nm: list(c) for nm, c in zip(names, klists, strict=True)}
    else:

        def total(k: tuple[Any, ...]) -> Any:
            lab = labels[k]
            return (
                tuple(_order.group_key(v) for v in lab),
                tuple(0 if v is None else 1 for v in lab),
            )

        order = sorted(groups, key=total)
        keys_out = {nm: [labels[k][j] for k in order] for j, nm in enumerate(names)}
    values: dict[str, list[Any]] = {name: [] for name, _ in plan.aggregates}
    for key in order:
        members = [rows[i] for i in groups.get(key, [])]
        for name, agg in plan.aggregates:
            values[name].append(_agg(agg, members))
    return TableResult(keys=keys_out, values=values)


def _agg(agg: N.ExactAgg, rows: list[Row]) -> Any:
    if isinstance(agg, N.Length):
        return len(rows)
    kept = [v for v, keep in (r.kept(agg.expr) for r in rows) if keep]
    if isinstance(agg, N.CountValid):
        return sum(v is not None for v in kept)
    if isinstance(agg, N.NullCount):
        return sum(v is None for v in kept)
    if isinstance(agg, N.NUnique):
        return len({_key(v) for v in kept})
    if isinstance(agg, N.IntSum):
        return sum(min(max(int(v), agg.lower), agg.upper) for v in kept if v is not None)
    if isinstance(agg, N.GridSum):
        lo, hi = float(agg.lower), float(agg.upper)
        return sum(
            grid_k(min(max(float(v), lo), hi), agg.p)
            for v in kept
            if v is not None and not _is_nan(v)
        )
    if isinstance(agg, N.QuantileCounts):
        vals = [v for v in kept if v is not None and not _is_nan(v)]
        below = [sum(_lt(v, c) for v in vals) for c in agg.candidates]
        above = [sum(_lt(c, v) for v in vals) for c in agg.candidates]
        return (below, above)
    raise NotImplementedError(type(agg).__name__)


__all__ = ["Failed", "Frame", "cast", "float_text", "run"]
