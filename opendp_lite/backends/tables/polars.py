"""The Polars table engine: a :class:`~opendp_lite.table.nodes.FramePlan` compiled to Polars
expressions and run lazily on a Polars ``LazyFrame`` (or ``DataFrame``).

Only public Polars API is used (expressions, ``with_columns``/``select``/``filter``,
``group_by(...).agg``), never Polars' plan format, so the engine runs on every Polars the
expression API supports (1.x from 1.30, and 2.x).

Exactness: every aggregate the engine returns is an exact Python int.  Integer sums are summed
in two halves (``v = hi·2³² + lo``, ``0 <= lo < 2³²``) so that neither half can overflow
Int64 below 2³¹ rows; grid sums split each grid integer ``k`` (``|k| <= 2⁴⁶``) as
``hi·2²³ + lo`` the same way as ``make_grouped_sum`` does, and add the halves as Int64.

Casts, ``str.strptime`` and ``replace_strict`` without a default run non-strict (a value that
does not convert or match becomes null), so no record can make a plan fail; any error Polars
still raises while a plan runs is replaced by :class:`~opendp_lite.errors.FailedFunction`
naming the step, never carrying Polars' own message (which may quote a value).

>>> import polars as pl
>>> from opendp_lite.table import nodes as n
>>> plan = n.FramePlan(steps=(), aggregates=(("n", n.Length()),), by=(n.Col("g"),))
>>> r = ENGINE.run(pl.LazyFrame({"g": ["b", "a", "b"]}), plan)
>>> r.keys, r.values
({'g': ['a', 'b']}, {'n': [1, 2]})
"""

from __future__ import annotations

import contextvars
import importlib
from typing import Any

from ... import _truncation as K
from ..._order import group_key
from ...errors import FailedFunction, NotImplementedForType
from ...samplers.rng import fill_uint64
from ...table import nodes as n
from . import TableResult, register, truncation_rows_mask

__all__ = ["ENGINE", "PolarsEngine", "compile_expr", "polars_dtype"]


def _pl() -> Any:
    return importlib.import_module("polars")


def dtype_of(dt: Any) -> n.DType:
    """A Polars data type as a :data:`~opendp_lite.table.nodes.DType`."""
    base = dt.base_type() if hasattr(dt, "base_type") else dt
    name = getattr(base, "__name__", None) or type(base).__name__
    if name == "Enum":
        return ("Enum", tuple(dt.categories.to_list()))
    if name == "Datetime":
        return ("Datetime", getattr(dt, "time_unit", "us"), getattr(dt, "time_zone", None))
    if name == "Duration":
        return ("Duration", getattr(dt, "time_unit", "us"))
    return str(name)


def polars_dtype(dt: n.DType) -> Any:
    """A :data:`~opendp_lite.table.nodes.DType` as a Polars data type.

    Raises:
        NotImplementedForType: for a name Polars does not have.
    """
    pl = _pl()
    if isinstance(dt, tuple):
        head = dt[0]
        if head == "Enum":
            return pl.Enum(list(dt[1]))
        if head == "Datetime":
            return pl.Datetime(*(dt[1:] or ("us",)))
        if head == "Duration":
            return pl.Duration(*(dt[1:] or ("us",)))
        dt = head
    t = getattr(pl, str(dt), None)
    if t is None or not (isinstance(t, type) or hasattr(t, "base_type")):
        raise NotImplementedForType(f"no Polars data type named {dt!r}")
    return t


_BIN = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
    "//": lambda a, b: a // b,
    "%": lambda a, b: a % b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b,
}

_UN = {
    "is_null": lambda e: e.is_null(),
    "is_not_null": lambda e: e.is_not_null(),
    "is_nan": lambda e: e.is_nan(),
    "is_not_nan": lambda e: e.is_not_nan(),
    "is_finite": lambda e: e.is_finite(),
    "is_infinite": lambda e: e.is_infinite(),
    "not": lambda e: e.not_(),
    "neg": lambda e: -e,
    "abs": lambda e: e.abs(),
    "drop_nulls": lambda e: e.drop_nulls(),
    "drop_nans": lambda e: e.drop_nans(),
    "to_physical": lambda e: e.to_physical(),
}


#: the float columns of the frame an expression is compiled for (None: unknown); ``drop_nans``
#: and ``fill_nan`` of a non-float expression are no-ops (Polars refuses some of them)
_FLOATS: contextvars.ContextVar[frozenset[str] | None] = contextvars.ContextVar(
    "_FLOATS", default=None
)


def _is_float(e: n.Expr, floats: frozenset[str]) -> bool:
    """Whether ``e`` is a float expression over a frame whose float columns are ``floats``."""
    if isinstance(e, n.Col):
        return e.name in floats
    if isinstance(e, n.Lit):
        return isinstance(e.value, float) or str(e.dtype).startswith("Float")
    if isinstance(e, n.Cast):
        return str(e.dtype).startswith("Float")
    if isinstance(e, n.Binary):
        if e.op in ("+", "-", "*", "//", "%"):
            return _is_float(e.left, floats) or _is_float(e.right, floats)
        return e.op == "/"
    if isinstance(e, n.Unary):
        return e.op in ("neg", "abs", "drop_nulls", "drop_nans") and _is_float(e.expr, floats)
    if isinstance(e, n.Alias | n.Clip | n.FillNull | n.FillNan | n.FilterExpr):
        return _is_float(e.expr, floats)
    return False


def _nan_free(e: n.Expr) -> bool:
    """Whether ``e`` is known not to be a float expression (so NaN operations are no-ops)."""
    floats = _FLOATS.get()
    return floats is not None and not _is_float(e, floats)


def compile_expr(e: n.Expr) -> Any:
    """A stable expression node as a Polars expression.

    Raises:
        NotImplementedForType: for a DP aggregate, ``Len`` outside an aggregate, or an
            operation this Polars does not have.
    """
    pl = _pl()
    c = compile_expr
    if isinstance(e, n.Col):
        return pl.col(e.name)
    if isinstance(e, n.Lit):
        lit = pl.lit(e.value) if e.dtype is None else pl.lit(e.value, dtype=polars_dtype(e.dtype))
        if _BROADCAST.get():  # one value per row (see _rows)
            return pl.when(pl.int_range(pl.len()) >= 0).then(lit)
        return lit
    if isinstance(e, n.Alias):
        return c(e.expr).alias(e.name)
    if isinstance(e, n.Binary):
        return _BIN[e.op](c(e.left), c(e.right))
    if isinstance(e, n.Unary):
        if e.op == "to_physical" and isinstance(e.expr, n.Cut):
            return _bin_index(e.expr)
        if e.op == "drop_nans" and _nan_free(e.expr):
            return c(e.expr)
        return _UN[e.op](c(e.expr))
    if isinstance(e, n.Cast):
        # non-strict: a value that does not convert becomes null (no record can fail a plan)
        return c(e.expr).cast(polars_dtype(e.dtype), strict=False)
    if isinstance(e, n.Clip):
        return c(e.expr).clip(e.lower, e.upper)
    if isinstance(e, n.FillNull):
        return c(e.expr).fill_null(c(e.value))
    if isinstance(e, n.FillNan):
        if _nan_free(e.expr):
            return c(e.expr)
        return c(e.expr).fill_nan(c(e.value))
    if isinstance(e, n.FilterExpr):
        return c(e.expr).filter(c(e.predicate))
    if isinstance(e, n.Cut):
        inner = c(e.expr)
        if hasattr(inner, "cut"):
            return inner.cut(
                list(e.breaks),
                labels=None if e.labels is None else list(e.labels),
                left_closed=e.left_closed,
            )
        raise NotImplementedForType("cut is not available in this Polars version")
    if isinstance(e, n.Replace):
        if not e.strict:
            return c(e.expr).replace(list(e.old), list(e.new))
        # an unmatched value without a default becomes null: Polars would raise, and whether a
        # release fails must never depend on a record
        kw: dict[str, Any] = {"default": pl.lit(None) if e.default is None else c(e.default)}
        if e.return_dtype is not None:
            kw["return_dtype"] = polars_dtype(e.return_dtype)
        return c(e.expr).replace_strict(list(e.old), list(e.new), **kw)
    if isinstance(e, n.StrPTime):
        return c(e.expr).str.strptime(polars_dtype(e.dtype), e.format, strict=False)
    if isinstance(e, n.DtPart):
        return getattr(c(e.expr).dt, e.part)()
    if isinstance(e, n.Len):
        return pl.len()
    raise NotImplementedForType(
        f"{type(e).__name__} is not a stable expression; private aggregates go in agg/select"
    )


def _named(e: n.Expr) -> Any:
    """``e`` compiled and named by the nodes' rule (:func:`~opendp_lite.table.nodes.output_name`),
    whatever name Polars would give the compiled form."""
    return compile_expr(e).alias(n.output_name(e))


def _bin_index(cut: n.Cut) -> Any:
    """The bin index of ``cut`` (its ``to_physical``) computed from each value alone: the
    number of breaks below it (``<=`` it, for left-closed bins); null stays null.  Never the
    codes of a Categorical, which depend on the order of the data on some Polars versions."""
    pl = _pl()
    x = compile_expr(cut.expr)
    above = [(x >= b) if cut.left_closed else (x > b) for b in cut.breaks]
    index = pl.sum_horizontal([a.cast(pl.UInt32) for a in above]) if above else pl.lit(0)
    return pl.when(x.is_null()).then(None).otherwise(index).cast(pl.UInt32)


_TWO32 = 1 << 32


def _reads_a_column(e: n.Expr) -> bool:
    return isinstance(e, n.Col) or any(_reads_a_column(k) for k in n.children(e))


#: set while compiling an aggregate's input that reads no column: literals become columns
_BROADCAST: contextvars.ContextVar[bool] = contextvars.ContextVar("_BROADCAST", default=False)


def _rows(e: n.Expr) -> Any:
    """``e`` compiled as one value per row: in an expression that reads no column, each
    literal is broadcast to the frame's (or group's) rows, as the aggregates count rows."""
    if _reads_a_column(e):
        return compile_expr(e)
    token = _BROADCAST.set(True)
    try:
        return compile_expr(e)
    finally:
        _BROADCAST.reset(token)


def _agg_exprs(name: str, a: n.ExactAgg, float_cols: set[str]) -> list[Any]:
    """The Polars aggregate expressions computing ``a`` (aliased ``name#i``)."""
    pl = _pl()
    if isinstance(a, n.Length):
        parts = [pl.len()]
    elif isinstance(a, n.CountValid):
        parts = [_rows(a.expr).count()]
    elif isinstance(a, n.NullCount):
        parts = [_rows(a.expr).null_count()]
    elif isinstance(a, n.NUnique):
        parts = [_rows(a.expr).n_unique()]
    elif isinstance(a, n.IntSum):
        v = _rows(a.expr).clip(a.lower, a.upper).cast(pl.Int64)
        hi = v // _TWO32
        lo = v - hi * _TWO32
        parts = [hi.sum(), lo.sum()]
    elif isinstance(a, n.GridSum):
        x = _rows(a.expr).cast(pl.Float64)
        x = x.fill_nan(None).clip(a.lower, a.upper)
        # trunc(x·2^p): the product is exact (a power of two) and |k| <= 2^46, and the cast to
        # Int64 truncates toward zero, exactly; then k = hi·2^23 + lo as Int64 halves
        k = (x * (2.0**a.p)).cast(pl.Int64)
        hi = k // (1 << 23)
        lo = k - hi * (1 << 23)
        parts = [hi.sum(), lo.sum()]
    elif isinstance(a, n.QuantileCounts):
        x = _rows(a.expr)
        if _is_float(a.expr, frozenset(float_cols)):  # by its type, not its name: a / b is
            x = x.fill_nan(None)  # a float expression named after an integer column
        parts = []
        for cand in a.candidates:
            parts += [(x < cand).sum(), (x > cand).sum()]
    else:  # pragma: no cover - the union is closed
        raise NotImplementedForType(f"unknown exact aggregate {a!r}")
    return [p.alias(f"{name}#{i}") for i, p in enumerate(parts)]


def _collect(a: n.ExactAgg, row: dict[str, Any], name: str) -> Any:
    def g(i: int) -> int:
        v = row.get(f"{name}#{i}")
        return 0 if v is None else int(v)

    if isinstance(a, n.IntSum):
        return g(0) * _TWO32 + g(1)
    if isinstance(a, n.GridSum):
        return g(0) * (1 << 23) + g(1)
    if isinstance(a, n.QuantileCounts):
        k = len(a.candidates)
        return ([g(2 * j) for j in range(k)], [g(2 * j + 1) for j in range(k)])
    return g(0)


def _zero(a: n.ExactAgg) -> Any:
    if isinstance(a, n.QuantileCounts):
        k = len(a.candidates)
        return ([0] * k, [0] * k)
    return 0


class PolarsEngine:
    """Runs plans on Polars LazyFrames and DataFrames."""

    name = "polars"
    label = "Polars LazyFrames and DataFrames"

    def owns(self, x: object) -> bool:
        t = type(x)
        return t.__module__.partition(".")[0] == "polars" and t.__name__ in (
            "LazyFrame",
            "DataFrame",
        )

    def schema(self, x: Any) -> dict[str, n.DType]:
        s = x.collect_schema() if hasattr(x, "collect_schema") else x.schema
        return {str(k): dtype_of(v) for k, v in s.items()}

    def run(self, x: Any, plan: n.FramePlan) -> TableResult:
        where = "compiling the plan"
        try:
            lf = x.lazy()
            for i, step in enumerate(plan.steps):
                where = f"step {i} ({type(step).__name__})"
                _FLOATS.set(_float_columns(lf))
                if isinstance(step, n.WithColumns):
                    lf = lf.with_columns([_named(e) for e in step.exprs])
                elif isinstance(step, n.Select):
                    lf = lf.select([_named(e) for e in step.exprs])
                elif isinstance(step, (n.TruncateRows, n.TruncateGroups)):
                    lf = _truncate(lf, step)
                elif isinstance(step, n.GroupAgg):
                    lf = _group_agg(lf, step)
                else:
                    lf = lf.filter(compile_expr(step.predicate))
            where = "the aggregation"
            float_cols = set(_float_columns(lf))
            _FLOATS.set(frozenset(float_cols))
            aggs = [p for name, a in plan.aggregates for p in _agg_exprs(name, a, float_cols)]
            if plan.by is None:
                if not aggs:
                    aggs = [_pl().len().alias("#len")]
                df = lf.select(aggs).collect()
                row = df.row(0, named=True) if df.height else {}
                return TableResult(
                    {}, {name: [_collect(a, row, name)] for name, a in plan.aggregates}
                )
            by_exprs = [_named(b) for b in plan.by]
            by_names = [n.output_name(b) for b in plan.by]
            df = lf.group_by(by_exprs).agg(aggs or [_pl().len().alias("#len")]).collect()
            rows = df.rows(named=True)
        except NotImplementedForType:
            raise
        except Exception:
            # Polars' own message may quote a value of the data: never passed on
            raise FailedFunction(
                f"the Polars engine failed at {where}; the message is withheld as it may "
                "carry data (check the query's types and casts)"
            ) from None
        finally:
            _FLOATS.set(None)
        return _assemble(plan, rows, by_names)


def _cells(s: Any) -> Any:
    """A Polars Series as numpy for the truncation kernels (see ``_truncate.cells``)."""
    plain = s.dtype.is_numeric() or s.dtype.is_temporal() or s.dtype == _pl().Boolean
    if plain and s.null_count() == 0:
        return K.cells(s.to_numpy(), nulls=False)
    return K.cells(s.to_list(), nulls=True)


def _truncate(lf: Any, step: n.TruncateRows | n.TruncateGroups) -> Any:
    """The rows a truncation step keeps (:mod:`._truncate`): the identifier, grouping and sort
    expressions are evaluated by Polars, the mask computed from each person's own rows."""
    names = lf.collect_schema().names()
    if isinstance(step, n.TruncateRows) and step.keep == "sample":
        native = _sample_rows(lf, [*step.identifier, *step.by], step.k)
        if native is not None:
            return native
    ids = {f"\x00id{i}": e for i, e in enumerate(step.identifier)}
    by = {f"\x00by{i}": e for i, e in enumerate(step.by)}
    sort = (
        {f"\x00sort{i}": e for i, e in enumerate(step.keep.by)}
        if isinstance(step, n.TruncateRows) and isinstance(step.keep, n.SortKey)
        else {}
    )
    extra = {**ids, **by, **sort}
    df = lf.with_columns([compile_expr(e).alias(k) for k, e in extra.items()]).collect()
    col = {k: _cells(df.get_column(k)) for k in extra}
    h = df.height
    if isinstance(step, n.TruncateGroups):
        mask = K.groups_mask([col[k] for k in ids], [col[k] for k in by], step.k, step.keep, n=h)
    else:
        row = [] if step.keep == "sample" else [_cells(df.get_column(c)) for c in names]
        mask = truncation_rows_mask(
            step, [col[k] for k in ids], [col[k] for k in by], row, [col[k] for k in sort], h
        )
    return df.select(names).filter(_pl().Series(mask)).lazy()


# The dtypes whose Polars grouping (``over``) tells values apart as ``_order.group_key`` does,
# once a float's NaN is made null: one class per ``==`` value, -0.0 with 0.0, missing values
# one class (checked in tests/test_truncation.py for each kind).
_RUN_KINDS = ("is_integer", "is_float", "is_temporal")


def _runs_like_the_kernel(dtype: Any) -> bool:
    pl = _pl()
    if any(getattr(dtype, kind)() for kind in _RUN_KINDS):
        return True
    return dtype in (pl.String, pl.Boolean) or isinstance(dtype, (pl.Categorical, pl.Enum))


def _sample_rows(lf: Any, run: list[n.Expr], k: int, draw: Any = None) -> Any:
    """``keep="sample"`` in Polars: a uniform ``min(k, size)``-subset of each run.

    Each row draws an independent uniform 64-bit key from :mod:`opendp_lite.samplers.rng`,
    and each run's rows are ranked by key (``rank("ordinal").over(run)``: tied keys get
    consecutive ranks).  The draw is accepted only when the keys of rank ``k`` and ``k + 1``,
    over all runs, are pairwise distinct, else every key is redrawn.  The acceptance event
    is a function of each run's k-th and (k+1)-th least keys (order statistics), so it is
    unchanged when a run's keys are permuted; conditioned on it the keys' law is still
    invariant under permutations within each run, and no run has a tie between its k-th and
    (k+1)-th least key, so its ``k`` rows of least rank are its ``k`` least keys, a set that
    does not depend on how ties are broken.  Hence each run keeps a uniform
    ``min(k, size)``-subset of its rows, independently of the other runs: the kernel's law
    (:func:`opendp_lite._truncation.sample_order`), by another acceptance event
    (``docs/proofs/table/truncation.md``).  ``None`` when a run column's dtype is not one whose
    Polars grouping matches the kernel's classes (the caller then uses the kernel).  ``draw``
    (tests only) replaces ``fill_uint64``.
    """
    pl = _pl()
    exprs = [compile_expr(e) for e in run]
    schema = lf.select([e.alias(f"r{i}") for i, e in enumerate(exprs)]).collect_schema()
    dtypes = list(schema.values())
    if not all(_runs_like_the_kernel(d) for d in dtypes):
        return None
    over = [  # NaN and null: one class, as in the kernel
        e.fill_nan(None) if d.is_float() else e for e, d in zip(exprs, dtypes, strict=True)
    ]
    df = lf.collect()
    names = df.columns
    fill = draw if draw is not None else fill_uint64
    key, rank = "\x00key", "\x00rank"
    while True:
        ranked = (
            df.lazy()
            .with_columns(pl.Series(key, fill(df.height), dtype=pl.UInt64))
            .with_columns(pl.col(key).rank("ordinal").over(over).alias(rank))
            .filter(pl.col(rank) <= k + 1)
            .collect()
        )
        edge = ranked.get_column(key).filter(ranked.get_column(rank) >= k)
        if edge.n_unique() == edge.len():
            return ranked.lazy().filter(pl.col(rank) <= k).select(names)


def _float_columns(lf: Any) -> frozenset[str]:
    """The float columns of a LazyFrame, from its schema."""
    return frozenset(str(k) for k, v in lf.collect_schema().items() if v.is_float())


def _key(v: Any) -> tuple[Any, ...]:
    """A public key's match: Python's equality (1, 1.0 and True are one key), with null and
    NaN two different keys, as Polars groups them."""
    return (group_key(v), v is None)


def _assemble(plan: n.FramePlan, rows: list[dict[str, Any]], by_names: list[str]) -> TableResult:
    def key_of(row: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(row[b] for b in by_names)

    if plan.keys is not None:
        found = {tuple(_key(v) for v in key_of(r)): r for r in rows}
        cols = [list(plan.keys[b]) for b in by_names]
        size = len(cols[0]) if cols else 0
        out_vals: dict[str, list[Any]] = {name: [] for name, _ in plan.aggregates}
        for i in range(size):
            k = tuple(_key(c[i]) for c in cols)
            r = found.get(k)
            for name, a in plan.aggregates:
                out_vals[name].append(_zero(a) if r is None else _collect(a, r, name))
        return TableResult({b: list(c) for b, c in zip(by_names, cols, strict=True)}, out_vals)
    # the total order of the keys; a float key's null and NaN groups are one class there and
    # two groups in Polars: null first, never Polars' own (varying) order
    rows = sorted(rows, key=lambda r: tuple((group_key(v), v is not None) for v in key_of(r)))
    keys = {b: [r[b] for r in rows] for b in by_names}
    values = {name: [_collect(a, r, name) for r in rows] for name, a in plan.aggregates}
    return TableResult(keys, values)


ENGINE = PolarsEngine()
register(ENGINE)


def _group_agg(lf: Any, step: n.GroupAgg) -> Any:
    """The stable ``group_by(...).agg(...)``: the keys and each aggregate's input computed by
    Polars, row by row, and grouped by Polars (each group's values as a list, in an order that
    does not matter); the aggregates by the exact kernel shared by every engine
    (``narwhals.stable_grouped_rows``: a function of each group's multiset of values, groups
    in the total order of the keys)."""
    from .narwhals import _stable_out, _stable_parts, stable_grouped_rows

    pl = _pl()
    parts = _stable_parts(step)
    width = len(step.by)
    exprs = [_named(b).alias(f"#k{i}") for i, b in enumerate(step.by)]
    exprs += [compile_expr(e).alias(f"#a{j}") for j, (_, _, e) in enumerate(parts)]
    rows = lf.select(exprs)
    schema = rows.collect_schema()
    df = (
        rows.group_by([f"#k{i}" for i in range(width)])
        .agg([pl.col(f"#a{j}") for j in range(len(parts))])
        .collect()
    )
    key_rows = [list(r) for r in df.select([f"#k{i}" for i in range(width)]).rows()]
    grouped = [df[f"#a{j}"].to_list() for j in range(len(parts))]
    specs = []
    for j, (_, kind, _) in enumerate(parts):
        dt = dtype_of(schema[f"#a{j}"])
        specs.append((kind, dt, _stable_out(kind, dt)))
    key_cols, agg_cols = stable_grouped_rows(key_rows, grouped, specs, width)
    series = [
        pl.Series(n.output_name(b), vals, dtype=schema[f"#k{i}"])
        for i, (b, vals) in enumerate(zip(step.by, key_cols, strict=True))
    ]
    for (name, _, _), (_, _, out), vals in zip(parts, specs, agg_cols, strict=True):
        series.append(pl.Series(name, vals, dtype=polars_dtype(out), strict=False))
    return pl.DataFrame(series).lazy()


def stable_agg_expr(e: n.Expr) -> Any:
    """The Polars expression of one aggregate of a stable ``agg`` (for the plan stand-in of
    ``table.polars_plan``; the engine computes the values with the exact kernel)."""
    from .narwhals import _stable_parts

    ((name, kind, inner),) = _stable_parts(n.GroupAgg((), (e,)))
    expr = compile_expr(inner)
    method = {"len": "len", "count": "count", "null_count": "null_count"}.get(kind, kind)
    return getattr(expr, method)().alias(name)
