"""The privacy analysis of a table query, on opendp_lite's own plan.

Two walks:

1. **Descriptors.**  :func:`infer` gives each expression's :class:`ColInfo` (dtype,
   nullability, NaN, bounds known from a ``clip``, and ``origin``: the input column it still is,
   unchanged) from its node *alone* and the descriptors of the columns it reads.  A step's
   output column gets the descriptor of its new expression, never one carried over from the old
   column of the same name: a redefinition, cast or alias keeps only what the new expression
   itself establishes, so a bound or a margin can never outlive the column it was about (the
   OpenDP #2949 class of bug cannot be written).  Margins apply to a column only while its
   ``origin`` is itself.

2. **Privacy.**  Each private aggregate becomes one or more :class:`Item` (a noisy release of
   one exact aggregate per group).  An item's privacy map is never a formula written here: it
   is the map of the equivalent chain of proven constructors on a one-key partition
   (``make_partition_by`` with public keys, whose map does not depend on the keys) —

   * counts (``len``, ``count``, ``null_count``, ``n_unique``: each record moves each at most by
     one): ``make_grouped_count`` then ``make_laplace``/``make_gaussian``;
   * float sums: ``make_grouped_sum(size_limit=max_length)`` then the noise;
   * integer sums: ``make_grouped`` of ``select_column >> clamp >> sum >> noise``;
   * quantiles: ``make_grouped`` of ``select_column >> quantile_score_candidates >>
     noisy_max``;
   * the key release under private keys: ``make_laplace_threshold``/``make_gaussian_threshold``
     after ``make_partition_by``'s map;

   and several items compose by ``make_composition``'s map.  At run time the engine computes
   the same exact aggregates (``FramePlan``), and the noise is the same constructors' function
   (vectorised over the groups: one coordinate per group, the same law per coordinate).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .. import _arith as ar
from ..core import Domain, Measurement, Metric
from ..domains import atom_domain, dataframe_domain, map_domain, vector_domain
from ..errors import InvalidParameter, NotImplementedForType, NotInDomain
from ..measures import (
    Approximate,
    MaxDivergence,
    ZeroConcentratedDivergence,
)
from ..metrics import absolute_distance, l1_distance, l2_distance, symmetric_distance
from . import nodes as n
from .margins import Margin

__all__ = [
    "ColInfo",
    "Item",
    "Output",
    "TableDomain",
    "TablePlan",
    "infer",
    "plan_query",
    "walk_steps",
]

INTS = frozenset(
    {"Int8", "Int16", "Int32", "Int64", "Int128", "UInt8", "UInt16", "UInt32", "UInt64"}
)
FLOATS = frozenset({"Float32", "Float64"})
NUMERIC = INTS | FLOATS
_TEMPORAL = frozenset({"Date", "Datetime", "Time", "Duration"})


def base(dt: n.DType) -> str:
    """A data type's name without its parameters."""
    return str(dt[0]) if isinstance(dt, tuple) else str(dt)


@dataclass(frozen=True)
class ColInfo:
    """What the analysis knows of a column: its dtype, whether it may hold null or NaN, its
    bounds (from a ``clip``), and ``origin``: the input column it still is, unchanged."""

    dtype: n.DType
    nullable: bool = True
    nan: bool = False
    bounds: tuple[Any, Any] | None = None
    origin: str | None = None


@dataclass(frozen=True)
class TableDomain(Domain[Any]):
    """Frames of one engine whose schema is ``columns`` (names and dtypes, in order), with
    the public ``margins``.  A frame is a member when its declared schema is exactly this
    one (read from the schema only, never the values)."""

    columns: tuple[tuple[str, n.DType], ...]
    margins: tuple[Margin, ...] = ()

    def __repr__(self) -> str:
        cols = ", ".join(f"{k}: {base(v)}" for k, v in self.columns)
        return f"TableDomain({cols}; margins={len(self.margins)})"

    @property
    def carrier_type(self) -> str:
        return "LazyFrame"

    def schema(self) -> dict[str, n.DType]:
        return dict(self.columns)

    def _normalize(self, x: object) -> Any:
        from ..backends.tables import of_table

        engine = of_table(x)
        if engine is None:
            raise NotInDomain(
                f"expected a frame a table engine owns (a Polars LazyFrame...), got "
                f"{type(x).__name__}"
            )
        got = engine.schema(x)
        want = self.schema()
        if list(got) != list(want):
            raise NotInDomain(
                f"the frame's columns {list(got)} differ from the declared {list(want)}"
            )
        for k, v in want.items():
            if got[k] != v:
                raise NotInDomain(f"column {k!r} is {got[k]!r}, declared {v!r}")
        return x


def is_frame_domain(domain: object) -> bool:
    """Whether ``domain`` is a frame domain the table query serves (``TableDomain``, or
    OpenDP's ``lazyframe_domain``)."""
    return isinstance(domain, TableDomain) or type(domain).__name__ == "LazyFrameDomain"


def as_table_domain(domain: Any) -> TableDomain:
    """What the analysis reads of a frame domain: its schema and its margins.

    Raises:
        InvalidParameter: for a domain that is not a frame domain.
    """
    if isinstance(domain, TableDomain):
        return domain
    if type(domain).__name__ == "LazyFrameDomain":
        margins = tuple(
            Margin(
                by=sorted(m.by, key=repr),
                max_length=m.max_length or None,
                max_groups=m.max_groups or None,
                invariant=m.invariant,
            )
            for m in domain.margins
        )
        return TableDomain(tuple(dict(domain.schema).items()), margins)
    raise InvalidParameter(f"a table query needs a frame domain, got {domain!r}")


def _refuse(msg: str) -> InvalidParameter:
    return InvalidParameter(msg)


def _lit_info(e: n.Lit) -> ColInfo:
    if e.dtype is not None:
        dt = e.dtype
    elif isinstance(e.value, bool):
        dt = "Boolean"
    elif isinstance(e.value, int):
        dt = "Int32" if -(2**31) <= e.value < 2**31 else "Int64"
    elif isinstance(e.value, float):
        dt = "Float64"
    elif isinstance(e.value, str):
        dt = "String"
    elif e.value is None:
        dt = "Null"
    else:
        raise NotImplementedForType(f"a literal of type {type(e.value).__name__}")
    isnan = isinstance(e.value, float) and math.isnan(e.value)
    return ColInfo(dt, nullable=e.value is None, nan=isnan)


def _numeric(info: ColInfo, what: str) -> None:
    if base(info.dtype) not in NUMERIC | {"Null"}:
        raise _refuse(f"{what} needs a numeric column, got {base(info.dtype)}")


def _arith_dtype(op: str, a: ColInfo, b: ColInfo) -> n.DType:
    ta, tb = base(a.dtype), base(b.dtype)
    if ta in _TEMPORAL or tb in _TEMPORAL:
        raise NotImplementedForType(f"arithmetic {op!r} on {ta} and {tb} is not supported")
    _numeric(a, f"operator {op!r}")
    _numeric(b, f"operator {op!r}")
    if op == "/" or ta in FLOATS or tb in FLOATS:
        return "Float64" if "Float64" in (ta, tb) or op == "/" else "Float32"
    return "Int64"


def _widen(bounds: tuple[Any, Any] | None, value: n.Expr) -> tuple[Any, Any] | None:
    """Bounds that still hold after filling some cells with ``value``: widened to include a
    finite numeric literal, else unknown."""
    if bounds is None or not isinstance(value, n.Lit):
        return None
    v = value.value
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        return None
    return (min(bounds[0], v), max(bounds[1], v))


def _kind(dt: n.DType) -> str:
    b = base(dt)
    if b in INTS or b in FLOATS:
        return "number"
    if b in ("String", "Categorical", "Enum"):
        return "text"
    return b  # Boolean, Null, and each temporal type on its own


def _comparable(op: str, a: ColInfo, b: ColInfo) -> None:
    """Refuse, when the query is built, a comparison Polars would refuse when it runs (so no
    query fails on the data): operands of different kinds (a number and a string, a date and
    a time), or an ordering of a Categorical (its order is not each value's alone)."""
    ka, kb = _kind(a.dtype), _kind(b.dtype)
    if "Null" not in (ka, kb) and ka != kb:
        raise _refuse(
            f"cannot compare {base(a.dtype)} with {base(b.dtype)} ({op!r}); cast one side first"
        )
    if op not in ("==", "!=") and "Categorical" in (base(a.dtype), base(b.dtype)):
        raise _refuse(
            f"cannot order a Categorical ({op!r}); compare with == or !=, or cast it to String"
        )


def infer(e: n.Expr, env: dict[str, ColInfo]) -> ColInfo:
    """The descriptor of a stable (row-by-row) expression over columns ``env``.

    Raises:
        InvalidParameter: for an unknown column, or an operation on the wrong type.
        NotImplementedForType: for a private aggregate or ``len()`` where a row-by-row
            expression is expected, or an unsupported operation.
    """
    if isinstance(e, n.Col):
        if e.name not in env:
            raise _refuse(f"unknown column {e.name!r}; the columns are {sorted(env)}")
        return env[e.name]
    if isinstance(e, n.Lit):
        return _lit_info(e)
    if isinstance(e, n.Alias):
        info = infer(e.expr, env)
        # an alias is a new column: what held of the old name does not carry to the new one
        return replace(info, origin=None)
    if isinstance(e, n.Binary):
        a, b = infer(e.left, env), infer(e.right, env)
        nullable = a.nullable or b.nullable
        if e.op in ("==", "!=", "<", "<=", ">", ">="):
            _comparable(e.op, a, b)
            return ColInfo("Boolean", nullable=nullable)
        if e.op in ("&", "|", "^"):
            for x in (a, b):
                if base(x.dtype) not in ("Boolean", "Null") and base(x.dtype) not in INTS:
                    raise _refuse(f"operator {e.op!r} needs Boolean columns")
            return ColInfo("Boolean" if base(a.dtype) == "Boolean" else a.dtype, nullable)
        dt = _arith_dtype(e.op, a, b)
        # integer division/modulus by zero is null in Polars
        nul = nullable or (e.op in ("//", "%") and base(dt) in INTS)
        return ColInfo(dt, nullable=nul, nan=base(dt) in FLOATS)
    if isinstance(e, n.Unary):
        a = infer(e.expr, env)
        if e.op in ("is_null", "is_not_null"):
            return ColInfo("Boolean", nullable=False)
        if e.op in ("is_nan", "is_not_nan", "is_finite", "is_infinite"):
            if base(a.dtype) not in FLOATS:
                raise _refuse(f"{e.op} needs a float column, got {base(a.dtype)}")
            return ColInfo("Boolean", nullable=a.nullable)
        if e.op == "not":
            return ColInfo("Boolean" if base(a.dtype) == "Boolean" else a.dtype, a.nullable)
        if e.op in ("neg", "abs"):
            _numeric(a, e.op)
            return ColInfo(a.dtype, a.nullable, a.nan)
        if e.op == "drop_nulls":
            return ColInfo(a.dtype, False, a.nan, a.bounds)
        if e.op == "drop_nans":
            return ColInfo(a.dtype, a.nullable, False, a.bounds)
        if e.op == "to_physical":
            bt = base(a.dtype)
            if bt == "Categorical" and not isinstance(e.expr, n.Cut):
                raise NotImplementedForType(
                    "to_physical: to prevent the release of the data's row order, a "
                    "Categorical column's codes are not read (its codes depend on the order the "
                    "data holds its values, not on each value alone); cast it to String, or use "
                    "an Enum (fixed categories)"
                )
            dt = (
                "UInt32"
                if bt in ("Categorical", "Enum")
                else "Int32"
                if bt == "Date"
                else ("Int64" if bt in _TEMPORAL else a.dtype)
            )
            return ColInfo(dt, a.nullable, a.nan)
        raise NotImplementedForType(f"unsupported operation {e.op!r}")
    if isinstance(e, n.Cast):
        a = infer(e.expr, env)
        # non-strict: a value that does not convert becomes null; bounds do not carry over
        same = base(a.dtype) == base(e.dtype)
        return ColInfo(
            e.dtype, nullable=a.nullable or not same, nan=base(e.dtype) in FLOATS and a.nan
        )
    if isinstance(e, n.Clip):
        a = infer(e.expr, env)
        _numeric(a, "clip")
        bounds = None
        if e.lower is not None and e.upper is not None:
            if not e.lower <= e.upper:
                raise _refuse(f"clip bounds must be ordered, got ({e.lower!r}, {e.upper!r})")
            bounds = (e.lower, e.upper)
        return ColInfo(a.dtype, a.nullable, a.nan, bounds)
    if isinstance(e, n.FillNull):
        a, v = infer(e.expr, env), infer(e.value, env)
        return ColInfo(
            a.dtype, a.nullable and v.nullable, a.nan or v.nan, _widen(a.bounds, e.value)
        )
    if isinstance(e, n.FillNan):
        a, v = infer(e.expr, env), infer(e.value, env)
        if base(a.dtype) not in FLOATS:
            raise _refuse(f"fill_nan needs a float column, got {base(a.dtype)}")
        return ColInfo(a.dtype, a.nullable or v.nullable, v.nan, _widen(a.bounds, e.value))
    if isinstance(e, n.FilterExpr):
        a, p = infer(e.expr, env), infer(e.predicate, env)
        if base(p.dtype) != "Boolean":
            raise _refuse("filter needs a Boolean predicate")
        return ColInfo(a.dtype, a.nullable, a.nan, a.bounds)
    if isinstance(e, n.Cut):
        a = infer(e.expr, env)
        _numeric(a, "cut")
        return ColInfo("Categorical", a.nullable)
    if isinstance(e, n.Replace):
        a = infer(e.expr, env)
        dt = e.return_dtype or a.dtype
        return ColInfo(dt, nullable=True)
    if isinstance(e, n.StrPTime):
        a = infer(e.expr, env)
        if base(a.dtype) != "String":
            raise _refuse(f"str.strptime needs a String column, got {base(a.dtype)}")
        return ColInfo(e.dtype, nullable=True)
    if isinstance(e, n.DtPart):
        a = infer(e.expr, env)
        if base(a.dtype) not in _TEMPORAL:
            raise _refuse(f"dt.{e.part} needs a temporal column, got {base(a.dtype)}")
        dt = {"date": "Date", "time": "Time", "year": "Int32", "iso_year": "Int32"}.get(
            e.part, "Int8"
        )
        if e.part in ("ordinal_day",):
            dt = "Int16"
        if e.part in ("millisecond", "microsecond", "nanosecond"):
            dt = "Int32"
        return ColInfo(dt, a.nullable)
    if isinstance(e, n.Len):
        raise NotImplementedForType(
            "len() is not a row-by-row expression: release it privately with dp.len()"
        )
    if isinstance(e, n.Agg):
        raise NotImplementedForType(
            f"{e.kind}() is an exact aggregation: use it in a stable group_by(...).agg(...) "
            "(before the private aggregation), or noise it (.dp.noise() of a len, count, "
            "null_count, n_unique or clipped sum), not row by row"
        )
    if isinstance(e, n.DPAgg):
        raise NotImplementedForType(
            f".dp.{e.kind} is a private aggregate: use it in select(...) or "
            "group_by(...).agg(...), not in with_columns or filter"
        )
    raise NotImplementedForType(f"unsupported expression {type(e).__name__}")


def _changes_length(e: n.Expr) -> bool:
    if isinstance(e, n.FilterExpr) or (
        isinstance(e, n.Unary) and e.op in ("drop_nulls", "drop_nans")
    ):
        return True
    return any(_changes_length(c) for c in n.children(e))


def walk_steps(
    schema: dict[str, n.DType], steps: tuple[n.Step, ...]
) -> tuple[dict[str, ColInfo], bool]:
    """The descriptors after ``steps`` (from the input ``schema``), and whether a step
    removed rows (a filter).

    Raises:
        InvalidParameter: for a step reading an unknown column or a wrong type, a filter
            whose predicate is not Boolean, or duplicate output names.
        NotImplementedForType: for a private aggregate or a length-changing expression in a
            row-by-row step.
    """
    env = {k: ColInfo(v, nullable=True, nan=base(v) in FLOATS, origin=k) for k, v in schema.items()}
    filtered = False
    for step in steps:
        if isinstance(step, n.FilterRows):
            p = infer(step.predicate, env)
            if base(p.dtype) != "Boolean":
                raise _refuse(f"filter needs a Boolean predicate, got {base(p.dtype)}")
            filtered = True
            continue
        if isinstance(step, (n.TruncateRows, n.TruncateGroups)):
            for e in (*step.identifier, *step.by):
                infer(e, env)  # the columns exist (what holds after it: .truncation)
            if isinstance(step.keep, n.SortKey):
                for e in step.keep.by:
                    infer(e, env)
            continue
        if isinstance(step, n.GroupAgg):
            env = group_agg_env(step, env)
            filtered = True  # (the output's length is the number of groups)
            continue
        outs: dict[str, ColInfo] = {}
        for e in step.exprs:
            if _changes_length(e):
                raise NotImplementedForType(
                    "filter, drop_nulls and drop_nans change a column's length: use them "
                    "inside a private aggregate, or filter the rows with .filter(...)"
                )
            name = n.output_name(e)
            if name in outs:
                raise _refuse(f"the column name {name!r} is given twice in one step")
            info = infer(e, env)
            # the new column is what its expression says: a column passed through unchanged
            # keeps its origin; anything else starts afresh (no stale bound or margin)
            outs[name] = info if isinstance(e, n.Col) else replace(info, origin=None)
        env = outs if isinstance(step, n.Select) else {**env, **outs}
    return env, filtered


_SMALL_SUMS = frozenset({"Int8", "Int16", "UInt8", "UInt16"})


def stable_agg_dtype(kind: str, dt: n.DType) -> n.DType:
    """The dtype Polars gives ``kind`` of a column of dtype ``dt`` in a stable ``agg``.

    Raises:
        InvalidParameter: for an aggregation the column's type has no exact meaning for.
    """
    b = base(dt)
    if kind in ("len", "count", "null_count", "n_unique"):
        return "UInt32"
    if kind in ("min", "max"):
        if b in NUMERIC or b in ("String", "Boolean", "Date", "Datetime", "Time", "Duration"):
            return dt
        raise _refuse(f"{kind}() of a {b} column is not supported in a stable agg")
    if b not in NUMERIC:
        raise _refuse(f"{kind}() needs a numeric column, got {b}")
    if kind == "sum":
        return "Int64" if b in _SMALL_SUMS else dt
    return "Float32" if b == "Float32" else "Float64"  # mean, median, var, std


def _stable_agg(e: n.Expr) -> tuple[str, n.Agg]:
    """The output name and the aggregation of one expression of a stable ``agg``.

    Raises:
        NotImplementedForType: for anything but an aggregation of the whitelist (maybe
            aliased) over a row-by-row expression.
    """
    name = n.output_name(e)
    inner = e.expr if isinstance(e, n.Alias) else e
    if isinstance(inner, n.Len):
        inner = n.Agg("len", n.Lit(1))
    if not isinstance(inner, n.Agg) or inner.kind not in n.STABLE_AGG_KINDS:
        raise NotImplementedForType(
            f"a stable group_by(...).agg(...) holds aggregations of the whitelist only "
            f"({', '.join(sorted(n.STABLE_AGG_KINDS))}, pl.len()), each of a row-by-row "
            f"expression, got {type(inner).__name__}"
            + (f" {inner.kind!r}" if isinstance(inner, n.Agg) else "")
        )
    return name, inner


def group_agg_env(step: n.GroupAgg, env: dict[str, ColInfo]) -> dict[str, ColInfo]:
    """The descriptors after a stable ``group_by(by).agg(aggs)``: the keys (a key passed
    through unchanged keeps its origin), then one nullable column per aggregate, of the
    dtype Polars gives it, with no bound and no origin.

    Raises:
        InvalidParameter: for an unknown column, a wrong type or a name given twice.
        NotImplementedForType: for an aggregation not in the whitelist.
    """
    out: dict[str, ColInfo] = {}
    for b in step.by:
        if _changes_length(b):
            raise NotImplementedForType("a group_by key cannot filter or drop rows")
        info = infer(b, env)
        name = n.output_name(b)
        if name in out:
            raise _refuse(f"group_by names a column twice: {name!r}")
        out[name] = info if isinstance(b, n.Col) else replace(info, origin=None)
    for e in step.aggs:
        name, agg = _stable_agg(e)
        if name in out:
            raise _refuse(f"the column name {name!r} is given twice in group_by(...).agg(...)")
        if _changes_length(agg.expr):
            raise NotImplementedForType(
                "filter, drop_nulls and drop_nans inside a stable agg are not supported: "
                "filter the rows with .filter(...) before the group_by"
            )
        info = infer(agg.expr, env)
        dt = stable_agg_dtype(agg.kind, info.dtype)
        nan = (
            agg.kind in ("min", "max", "sum", "mean", "median", "var", "std") and base(dt) in FLOATS
        )
        out[name] = ColInfo(dt, nullable=True, nan=nan)
    return out


def margins_after(margins: tuple[Margin, ...], steps: tuple[n.Step, ...]) -> tuple[Margin, ...]:
    """The margins that still hold after ``steps``: a stable ``group_by(by).agg`` keeps a
    margin only when its grouping is a subset of ``by`` (a group's rows are at most its input
    rows, its groups at most the input's), with its invariant dropped."""
    out = margins
    for step in steps:
        if isinstance(step, n.GroupAgg):
            keys = set(step.by)
            out = tuple(replace(m, invariant=None) for m in out if m.by_key() <= keys)
    return out


# -- the private aggregates -------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    """One noisy release of an exact aggregate per group."""

    name: str
    column: str
    aggregate: str
    exact: n.ExactAgg
    family: str  # "count" | "isum" | "fsum" | "quantile"
    scale: float | None = None
    mechanism: str | None = None
    signed: bool = False
    bounds: tuple[Any, Any] | None = None
    max_length: int | None = None
    candidates: tuple[Any, ...] | None = None
    alpha: float | None = None
    float_out: bool = False
    #: the release's dtype for a sum: the summed expression's (as OpenDP), else None
    dtype: n.DType | None = None
    #: ungrouped under a change unit (the frames compared have equal length): the range of
    #: each row's term of the sum or count (:func:`same_size_range`); its map is then
    #: ``make_sum``'s on a sized vector (:func:`_same_size_sum`)
    same_size: tuple[int, int] | None = None

    @property
    def integer(self) -> bool:
        return self.family in ("count", "isum")


@dataclass(frozen=True)
class Output:
    """An output column: ``expr`` over the items' columns (``Col("#i")``)."""

    name: str
    expr: n.Expr
    dtype: n.DType


_LABEL = {
    "count": "Count",
    "null_count": "Null Count",
    "n_unique": "N Unique",
    "sum": "Sum",
}


@dataclass
class _Builder:
    env: dict[str, ColInfo]
    max_length: int | None
    items: list[Item] = field(default_factory=list)

    def new(self, **kw: Any) -> n.Expr:
        name = f"#{len(self.items)}"
        self.items.append(Item(name=name, **kw))
        return n.Col(name)

    def lower(self, e: n.Expr, column: str) -> n.Expr:
        """``e`` with each private aggregate replaced by its item column(s)."""
        if isinstance(e, n.DPAgg):
            return self.agg(e, column)
        if isinstance(e, n.Col):
            raise NotImplementedForType(
                f"column {e.name!r} is read outside a private aggregate: every column of a "
                "release must come from .dp.* aggregates (or the group keys)"
            )
        if isinstance(e, n.Len):
            raise NotImplementedForType("len() is not private: use dp.len()")
        kids = n.children(e)
        if not kids:
            return e
        new = [self.lower(k, column) for k in kids]
        return _rebuild(e, new)

    def agg(self, a: n.DPAgg, column: str) -> n.Expr:
        if a.kind not in n.AGG_KINDS:
            raise NotImplementedForType(f"unknown private aggregate {a.kind!r}")
        mech = a.mechanism
        signed = bool(a.signed)
        exact_agg = getattr(n, "Agg", None)  # pl.col(...).sum() etc. (read by the reader)
        if a.kind == "noise" and exact_agg is not None and isinstance(a.expr, exact_agg):
            return self.agg(self._noised(a, a.expr), column)
        if a.kind in ("len", "noise"):
            inner = a.expr
            if a.kind == "noise" and not isinstance(inner, n.Len):
                raise NotImplementedForType(
                    ".dp.noise applies to an exact aggregate (pl.len(), .sum() of a clipped "
                    "column, .count(), .null_count(), .n_unique()) or use the .dp shortcuts "
                    "(.dp.sum(bounds), .dp.count(), ...)"
                )
            if not isinstance(inner, n.Len):
                self._row_expr(inner)
            label = "Frame Length" if isinstance(inner, n.Len) else "Length"
            exact: n.ExactAgg = (
                n.Length()
                if isinstance(inner, n.Len) or not _changes_length(inner)
                else n.CountValid(inner)
            )
            if not isinstance(exact, n.Length):
                label = "Length"
            return self.new(
                column=column,
                aggregate=label,
                exact=exact,
                family="count",
                scale=a.scale,
                mechanism=mech,
                signed=signed,
            )
        if a.kind in ("count", "null_count", "n_unique"):
            self._row_expr(a.expr)
            ex: n.ExactAgg = (
                n.CountValid(a.expr)
                if a.kind == "count"
                else n.NullCount(a.expr)
                if a.kind == "null_count"
                else n.NUnique(a.expr)
            )
            return self.new(
                column=column,
                aggregate=_LABEL[a.kind],
                exact=ex,
                family="count",
                scale=a.scale,
                mechanism=mech,
                signed=signed,
            )
        if a.kind in ("sum", "mean"):
            s = self._sum(a, column)
            if a.kind == "sum":
                return s
            length = self.new(
                column=column,
                aggregate="Length",
                exact=n.Length() if not _changes_length(a.expr) else n.CountValid(a.expr),
                family="count",
                scale=a.scale,
                mechanism=mech,
                signed=True,
            )
            return n.Binary("/", n.Cast(s, "Float64"), n.Cast(length, "Float64"))
        # quantile / median
        info = self._row_expr(a.expr)
        _numeric(info, f".dp.{a.kind}")
        cands = a.candidates
        if not cands:
            raise _refuse(f".dp.{a.kind} needs candidates")
        alpha = 0.5 if a.kind == "median" else a.alpha
        if alpha is None or not 0 <= alpha <= 1:
            raise _refuse(f"alpha must be in [0, 1], got {alpha!r}")
        return self.new(
            column=column,
            aggregate=f"{alpha}-Quantile",
            exact=n.QuantileCounts(a.expr, cands),
            family="quantile",
            scale=a.scale,
            candidates=cands,
            alpha=float(alpha),
            float_out=any(isinstance(c, float) for c in cands),
        )

    def _noised(self, a: n.DPAgg, agg: Any) -> n.DPAgg:
        """``.dp.noise()`` of an exact aggregate as the private aggregate it is: a count of
        its kind (unsigned, as OpenDP), or a sum whose bounds are the ``clip`` the summed
        expression itself establishes (its descriptor: never one of a replaced column)."""
        kind, inner = agg.kind, agg.expr
        if kind in ("len", "count", "null_count", "n_unique"):
            return n.DPAgg(kind, inner, scale=a.scale, signed=False, mechanism=a.mechanism)
        if kind == "sum":
            info = self._row_expr(inner)
            if info.bounds is None:
                raise _refuse(
                    "the sum under .dp.noise() needs bounds: clip the summed expression "
                    "(pl.col(...).fill_null(0).clip(lower, upper).sum().dp.noise()), or use "
                    ".dp.sum(bounds)"
                )
            return n.DPAgg("sum", inner, bounds=info.bounds, scale=a.scale, mechanism=a.mechanism)
        raise NotImplementedForType(f"the exact aggregation {kind!r} under .dp.noise()")

    def _row_expr(self, e: n.Expr) -> ColInfo:
        return infer(e, self.env)

    def _sum(self, a: n.DPAgg, column: str) -> n.Expr:
        info = self._row_expr(a.expr)
        _numeric(info, f".dp.{a.kind}")
        if a.bounds is None:
            raise _refuse(f".dp.{a.kind} needs bounds=(lower, upper)")
        lo, hi = a.bounds
        for v in (lo, hi):
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                raise _refuse(f".dp.{a.kind}: bounds must be finite numbers, got {a.bounds!r}")
        if not lo <= hi:
            raise _refuse(f".dp.{a.kind}: bounds must be ordered, got {a.bounds!r}")
        if self.max_length is None:
            raise _refuse(
                f".dp.{a.kind} needs max_length: the number of rows per group must be "
                "bounded for a sum (the float rounding and the saturation of the sum depend "
                "on it, CSVW22). Fix: pass margins=[dp.polars.Margin(by=[...], "
                "max_length=...)] to the context (a loose bound, e.g. the population, is fine)"
            )
        is_float = base(info.dtype) in FLOATS or isinstance(lo, float) or isinstance(hi, float)
        if is_float:
            from ..transformations._aggregate import grid_shift

            flo, fhi = float(lo), float(hi)
            p = grid_shift(max(abs(flo), abs(fhi)))
            exact: n.ExactAgg = n.GridSum(a.expr, flo, fhi, p)
            family = "fsum"
            bounds: tuple[Any, Any] = (flo, fhi)
        else:
            if max(abs(lo), abs(hi)) * self.max_length >= 2**63:
                raise _refuse(
                    f".dp.{a.kind}: max_length * max(|lower|, |upper|) must be below 2^63 "
                    "(an Int64 sum)"
                )
            exact = n.IntSum(a.expr, int(lo), int(hi))
            family = "isum"
            bounds = (int(lo), int(hi))
        return self.new(
            column=column,
            aggregate="Sum",
            exact=exact,
            family=family,
            scale=a.scale,
            mechanism=a.mechanism,
            bounds=bounds,
            max_length=self.max_length,
            float_out=is_float,
            dtype=info.dtype if base(info.dtype) in NUMERIC else None,
        )


def _rebuild(e: n.Expr, kids: list[n.Expr]) -> n.Expr:
    if isinstance(e, n.Binary):
        return replace(e, left=kids[0], right=kids[1])
    if isinstance(e, n.FillNull | n.FillNan):
        return replace(e, expr=kids[0], value=kids[1])
    if isinstance(e, n.FilterExpr):
        return replace(e, expr=kids[0], predicate=kids[1])
    if isinstance(e, n.Replace):
        return replace(e, expr=kids[0], default=kids[1] if len(kids) > 1 else None)
    return replace(e, expr=kids[0])  # type: ignore[arg-type]


def _out_dtype(e: n.Expr, items: dict[str, Item]) -> n.DType:
    if isinstance(e, n.Col) and e.name in items:
        it = items[e.name]
        if it.family == "count":
            return "Int64" if it.signed else "UInt32"
        if it.family == "quantile":
            return "Float64" if it.float_out else "Int64"
        if it.dtype is not None and (base(it.dtype) in FLOATS) == it.float_out:
            return it.dtype
        return "Float64" if it.float_out else "Int64"
    if isinstance(e, n.Alias):
        return _out_dtype(e.expr, items)
    env = {k: ColInfo(_out_dtype(n.Col(k), items)) for k in items}
    return infer(e, env).dtype


# -- the plan -------------------------------------------------------------------------------


@dataclass(frozen=True)
class TablePlan:
    """An analysed query: what the engine runs, the items, the outputs, the key release."""

    plan: n.FramePlan
    items: tuple[Item, ...]
    outputs: tuple[Output, ...]
    by_names: tuple[str, ...]
    by_dtypes: tuple[n.DType, ...]
    keys: str  # "none" (ungrouped) | "public" | "invariant" | "private"
    key_pass: n.FramePlan | None  # the public key set, read before any filter
    threshold_item: str | None
    threshold: int | None = None
    #: each item's exact aggregate, by its name in ``plan`` (shared when asked twice)
    sources: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
    #: an output name given twice (or a key's): the release would be ambiguous
    clash: str | None = None


def _columns_read(e: n.Expr) -> set[str]:
    if isinstance(e, n.Col):
        return {e.name}
    return set().union(*(_columns_read(c) for c in n.children(e)))


def _unchanged(e: n.Expr, env: dict[str, ColInfo]) -> bool:
    """Whether every column ``e`` reads is still the input's column of that name (so an
    expression of the input, as a margin states it, means the same here)."""
    return all(c in env and env[c].origin == c for c in _columns_read(e))


def _max_length(margins: tuple[Margin, ...], by: set[n.Expr]) -> int | None:
    """The tightest max_length of a margin grouping by a subset of ``by`` (a group of a finer
    grouping has at most the rows of the coarser group holding it)."""
    found = [m.max_length for m in margins if m.max_length is not None and m.by_key() <= by]
    return min(found) if found else None


def plan_query(
    domain: TableDomain,
    steps: tuple[n.Step, ...],
    by: tuple[n.Expr, ...] | None,
    aggs: tuple[n.Expr, ...],
    keys: dict[str, list[Any]] | None,
    measure: Any,
    building: bool = False,
) -> TablePlan:
    """Analyse a query: descriptors through ``steps``, then the private aggregates.

    Raises:
        InvalidParameter: for a shape error (unknown column, wrong type, a sum without
            max_length), or, unless ``building`` (``with_keys`` may still follow), private keys
            without δ or without a dp.len().
        NotImplementedForType: for an unsupported expression.
    """
    env, filtered = walk_steps(domain.schema(), steps)
    if any(isinstance(st, n.GroupAgg) for st in steps):
        domain = replace(domain, margins=margins_after(domain.margins, steps))
    by_names: tuple[str, ...] = ()
    by_dtypes: tuple[n.DType, ...] = ()
    mode = "none"
    key_pass = None
    if by is not None:
        infos = [infer(b, env) for b in by]
        by_names = tuple(n.output_name(b) for b in by)
        by_dtypes = tuple(i.dtype for i in infos)
        if len(set(by_names)) != len(by_names):
            raise _refuse(f"group_by names a column twice: {list(by_names)}")
        # margins hold for the input's columns: a grouping key is covered only while every
        # column it reads is unchanged since the input (a redefinition drops the margin)
        original = all(_unchanged(b, env) for b in by)
        invariant = original and any(
            m.invariant in ("keys", "lengths") and set(by) <= m.by_key()
            for m in domain.margins
            if all(_unchanged(b, env) for b in m.by_key())
        )
        if keys is not None:
            mode = "public"
        elif invariant:
            mode = "invariant"
            if filtered:  # the key set is the input's, read before the filter
                key_pass = n.FramePlan(steps=(), aggregates=(("#n", n.Length()),), by=tuple(by))
        else:
            mode = "private"
    usable = tuple(m for m in domain.margins if all(_unchanged(b, env) for b in m.by_key()))
    # (a filter only removes rows: max_length still bounds the groups)
    max_length = _max_length(usable, set(by or ()))
    builder = _Builder(env, max_length)
    outputs = []
    seen = set(by_names)
    clash = None
    for e in aggs:
        name = n.output_name(e)
        if isinstance(e, n.DPAgg) and isinstance(e.expr, n.Len):
            name = "len"
        if name in seen and clash is None:  # refused at release (summarize still works)
            clash = name
        seen.add(name)
        lowered = builder.lower(e, name)
        outputs.append((name, lowered))
    if not builder.items:
        raise _refuse("a release needs at least one private aggregate (.dp.*, dp.len())")
    items = {it.name: it for it in builder.items}
    outs = tuple(Output(name, ex, _out_dtype(ex, items)) for name, ex in outputs)
    thr_item = None
    if mode == "private" and not building:  # (with_keys may still follow the agg)
        if not (isinstance(measure, Approximate)):
            key_set = ", ".join(f'col("{b}")' for b in by_names)
            raise _refuse(
                f"The key-set of {{{key_set}}} is private: "
                "grouping by private keys releases the keys with a noisy threshold, which "
                "needs delta > 0. Fix: give the context a delta (dp.loss_of(epsilon=..., "
                "delta=...)), or declare the keys public (dp.polars.Margin(by=[...], "
                'invariant="keys"), or query.with_keys(keys))'
            )
        candidates = [it for it in builder.items if isinstance(it.exact, n.Length)]
        candidates += [it for it in builder.items if isinstance(it.exact, n.CountValid)]
        if not candidates:
            raise _refuse(
                "grouping by private keys needs a dp.len() (or .dp.count()) in the agg: its "
                "noisy value decides which keys are released. Fix: add dp.len(), or declare "
                "the keys public"
            )
        thr_item = candidates[0].name
    # an exact aggregate asked twice (a mean's sum and a sum of the same column) runs once
    first: dict[n.ExactAgg, str] = {}
    for it in builder.items:
        first.setdefault(it.exact, it.name)
    aggregates = tuple((name, exact) for exact, name in first.items())
    sources = {it.name: first[it.exact] for it in builder.items}
    plan = n.FramePlan(
        steps=steps,
        aggregates=aggregates,
        by=None if by is None else tuple(by),
        keys=keys,
    )
    return TablePlan(
        plan,
        tuple(builder.items),
        outs,
        by_names,
        by_dtypes,
        mode,
        key_pass,
        thr_item,
        sources=sources,
        clash=clash,
    )


# -- the measurements of the items (their maps: proven constructors only) ------------------------

_GROUP = "#g"
_COL = "#x"  # (+ the item name: each item reads its own column, of its own type)


#: per-person bounds ``(groups, rows per group, rows in all)`` over the aggregate's grouping,
#: established by truncation (:mod:`.truncation`); None for a row-level unit
Person = tuple[int, int, int | None] | None


def _part(person: Person = None) -> Any:
    from ..metrics import symmetric_id_distance
    from ..transformations.partition import make_partition_by

    # one public key: make_partition_by's map, d -> (d, d, d), does not depend on the keys
    if person is None:
        return make_partition_by(dataframe_domain(), symmetric_distance(), by=_GROUP, keys=[0])
    # under identifier units: d -> (d·min(k, c), d·min(k·m, c), d·min(m, c))
    k, m, c = person
    return make_partition_by(
        dataframe_domain(),
        symmetric_id_distance("#id"),
        by=_GROUP,
        keys=[0],
        max_partitions=k,
        max_contributions_per_partition=m,
        max_contributions=c,
    )


def _input_metric(person: Person) -> Metric[Any]:
    from ..metrics import symmetric_id_distance

    return symmetric_distance() if person is None else symmetric_id_distance("#id")


def _native_mechanism(item: Item, measure: Any) -> str:
    inner = measure.inner if isinstance(measure, Approximate) else measure
    default = "gaussian" if isinstance(inner, ZeroConcentratedDivergence) else "laplace"
    mech = item.mechanism or default
    if mech == "gaussian" and isinstance(inner, MaxDivergence):
        raise _refuse(
            "Gaussian noise has no pure-DP guarantee: use Laplace noise (or a zCDP context)"
        )
    return mech


def noise_for(item: Item, mech: str, scale: float, size: int | None = None) -> Any:
    """The noise measurement of ``item`` on a vector of ``size`` groups (its law per group)."""
    from ..measurements.noise import make_gaussian, make_laplace

    if item.integer:
        dom: Domain[Any] = vector_domain(atom_domain(T="i64"), size=size)
    else:
        dom = vector_domain(atom_domain(T=float, nan=False), size=size)
    if mech == "laplace":
        met: Metric[Any] = l1_distance(T=int) if item.integer else l1_distance(T=float)
        return make_laplace(dom, met, scale)
    return make_gaussian(dom, l2_distance(T=float), scale)


def quantile_selector(item: Item, mech: str, scale: float, size: int) -> Any:
    """The noisy (arg)min over ``size`` candidate scores."""
    from ..measurements.noisy_max import make_noisy_max
    from ..measures import max_divergence, zero_concentrated_divergence
    from ..metrics import linf_distance

    m = max_divergence() if mech == "laplace" else zero_concentrated_divergence()
    dom = vector_domain(atom_domain(T="u64"), size=size)
    return make_noisy_max(dom, linf_distance(T="u64"), m, scale, negate=True)


def _transformation(item: Item, mech: str, person: Person = None) -> Any:
    """The stability part of an item's chain (None for the make_grouped families): into the
    L1 distance for Laplace noise, the L2 distance for Gaussian noise."""
    from ..transformations.partition import make_grouped_count, make_grouped_sum

    norm = 1 if mech == "laplace" else 2
    part = _part(person)
    if item.family == "count":
        return part >> make_grouped_count(part.output_domain, part.output_metric, norm)
    if item.family == "fsum":
        assert item.bounds is not None and item.max_length is not None  # noqa: S101
        return part >> make_grouped_sum(
            part.output_domain,
            part.output_metric,
            _COL + item.name,
            item.bounds,
            norm,
            item.max_length,
        )
    return None


def _inner(item: Item, mech: str, scale: float) -> Any:
    """The per-group measurement of a make_grouped family (integer sums, quantiles)."""
    from ..measurements.noise import make_gaussian, make_laplace
    from ..transformations.clamp import then_clamp
    from ..transformations.dataset import make_select_column
    from ..transformations.nulls import then_drop_null
    from ..transformations.quantile import then_quantile_score_candidates
    from ..transformations.sum import then_sum

    if item.family == "isum":
        assert item.bounds is not None  # noqa: S101
        t = make_select_column(_COL + item.name, TOA="i64") >> then_clamp(item.bounds) >> then_sum()
        noise = make_laplace if mech == "laplace" else make_gaussian
        return t >> noise(t.output_domain, t.output_metric, scale)
    assert item.candidates is not None and item.alpha is not None  # noqa: S101
    t = (
        make_select_column(_COL + item.name, TOA="f64")
        >> then_drop_null()
        >> then_quantile_score_candidates([float(c) for c in item.candidates], item.alpha)
    )
    sel = quantile_selector(item, mech, scale, len(item.candidates))
    return t >> sel


def same_size_range(item: Item, filtered: bool) -> tuple[int, int] | None:
    """The range [a, b] of each input row's term f(row) when an ungrouped item is a sum of
    f over the input's rows (None if it is not): an integer sum's f is the clamped value, or
    0 for a row filtered out or null, in [min(L, 0), max(U, 0)]; the frame length's is 1, or
    0 for a filtered row; a count or null count's is 0 or 1."""
    if item.family == "isum":
        assert item.bounds is not None  # noqa: S101
        return min(int(item.bounds[0]), 0), max(int(item.bounds[1]), 0)
    if item.family == "count" and isinstance(item.exact, n.Length):
        return (0, 1) if filtered else (1, 1)
    if item.family == "count" and isinstance(item.exact, (n.CountValid, n.NullCount)):
        return 0, 1
    return None


def _same_size_sum(item: Item) -> Any:
    """The stability of an ungrouped item between frames of equal length (a change unit):
    the item is the sum of f(row) over the input's rows, f(row) in ``item.same_size`` =
    [a, b] (:func:`same_size_range`), and the vectors of f have the frame's length.
    ``make_sum`` on a sized vector of those bounds gives its map, ``floor(d/2)·(b − a)`` at
    symmetric distance d, for any size (integers: no rounding term); the size given here only
    selects that map."""
    from ..transformations.sum import make_sum

    assert item.same_size is not None  # noqa: S101
    lo, hi = item.same_size
    dom = vector_domain(atom_domain(bounds=(lo, hi), T="i64"), size=1)
    return make_sum(dom, symmetric_distance())


def sensitivity(item: Item, d_in: Any, mech: str = "laplace", person: Person = None) -> Any:
    """The item's sensitivity at ``d_in`` (what a global scale is multiplied by)."""
    if item.same_size is not None and person is None:  # a row-level change unit only
        return _same_size_sum(item).map(d_in)
    t = _transformation(item, mech, person)
    if t is not None:
        return t.map(d_in)
    if person is not None:
        # the per-group chain sees at most l∞ rows of a group change; the global scale is
        # multiplied by the L1 sensitivity over all groups (as OpenDP's), so an integer sum
        # is taken at the rows changed in all groups (make_partition_by's total)
        d_in = _part(person).map(d_in)[1 if item.family == "isum" else 2]
    from ..transformations.clamp import then_clamp
    from ..transformations.dataset import make_select_column
    from ..transformations.nulls import then_drop_null
    from ..transformations.quantile import then_quantile_score_candidates
    from ..transformations.sum import then_sum

    if item.family == "isum":
        assert item.bounds is not None  # noqa: S101
        s = make_select_column(_COL + item.name, TOA="i64") >> then_clamp(item.bounds) >> then_sum()
        return s.map(d_in)
    assert item.candidates is not None and item.alpha is not None  # noqa: S101
    q = (
        make_select_column(_COL + item.name, TOA="f64")
        >> then_drop_null()
        >> then_quantile_score_candidates([float(c) for c in item.candidates], item.alpha)
    )
    return q.map(d_in)


def item_measurement(
    item: Item, measure: Any, scale: float, person: Person = None
) -> Measurement[Any, Any, Any, Any]:
    """The measurement whose map is the item's privacy loss, built from proven constructors
    on (``dataframe_domain()``, ``symmetric_distance()``)."""
    from ..combinators.grouped import make_grouped

    mech = _native_mechanism(item, measure)
    t = _transformation(item, mech, person)
    if item.same_size is not None and person is None:  # a row-level change unit only
        m = _same_size_measurement(item, mech, scale)
    elif t is not None:
        m = t >> noise_for(item, mech, scale, size=1)
    else:
        part = _part(person)
        m = part >> make_grouped(part.output_domain, part.output_metric, _inner(item, mech, scale))
    out: Measurement[Any, Any, Any, Any] = _to_measure(m, measure)
    return out


def _same_size_measurement(item: Item, mech: str, scale: float) -> Any:
    """An ungrouped item's release between frames of equal length: the noise
    mechanism's map after :func:`_same_size_sum`'s (the chain rule).  Its map holds only for
    frames of equal length, which the query's change unit guarantees (LazyFrameQuery)"""
    from ..measurements.noise import make_gaussian, make_laplace

    t = _same_size_sum(item)
    noise = (make_laplace if mech == "laplace" else make_gaussian)(
        t.output_domain, t.output_metric, scale
    )

    def function(_: Any) -> Any:  # pragma: no cover - the map is what is used
        raise NotImplementedForType("run through the table query")

    return Measurement(
        dataframe_domain(),
        symmetric_distance(),
        noise.output_measure,
        function,
        lambda d: noise.map(t.map(d)),
    )


def threshold_measurement(
    item: Item, measure: Any, scale: float, threshold: int, person: Person = None
) -> tuple[Measurement[Any, Any, Any, Any], Any]:
    """The key release (the item's noisy count, thresholded): ``(measurement, thr)`` where
    ``measurement``'s map is ``thr``'s map after ``make_partition_by``'s (the chain rule)."""
    from ..measurements.threshold import (
        l01inf_distance,
        l02inf_distance,
        make_gaussian_threshold,
        make_laplace_threshold,
    )

    mech = _native_mechanism(item, measure)
    dom = map_domain(atom_domain(T="i64"), atom_domain(T="i64"))
    if mech == "laplace":
        thr = make_laplace_threshold(
            dom, l01inf_distance(absolute_distance(T="i64")), scale, threshold
        )
    else:
        thr = make_gaussian_threshold(
            dom, l02inf_distance(absolute_distance(T="i64")), scale, threshold
        )
    part = _part(person)

    def function(_: Any) -> Any:  # pragma: no cover - the map is what is used
        raise NotImplementedForType("run through the table query")

    m = Measurement(
        dataframe_domain(),
        _input_metric(person),
        thr.output_measure,
        function,
        lambda d: thr.map(part.map(d)),
    )
    return _to_measure(m, measure), thr


def _to_measure(m: Any, measure: Any) -> Any:
    from ..combinators.conversions import make_approximate, make_pureDP_to_zCDP

    frm = m.output_measure
    if frm == measure:
        return m
    inner = measure.inner if isinstance(measure, Approximate) else measure
    if isinstance(frm, MaxDivergence) and isinstance(inner, ZeroConcentratedDivergence):
        m = make_pureDP_to_zCDP(m)
        frm = m.output_measure
    if isinstance(measure, Approximate) and frm == measure.inner:
        return make_approximate(m)
    if frm == measure:
        return m
    raise NotImplementedForType(f"cannot state a {frm!r} release in {measure!r}")


def scales_of(
    tp: TablePlan, measure: Any, d_in: Any, global_scale: float, person: Person = None
) -> dict[str, float]:
    """Each item's noise scale: its own ``scale=`` if given, else ``global_scale`` times its
    sensitivity at ``d_in`` (as OpenDP's global scale)."""
    out = {}
    for it in tp.items:
        if it.scale is not None:
            out[it.name] = float(it.scale)
        else:
            mech = _native_mechanism(it, measure)
            sens = sensitivity(it, d_in, mech, person)
            out[it.name] = ar.mul_up(global_scale, ar.up(ar.q(sens)))
    return out


def composed(
    tp: TablePlan,
    measure: Any,
    scales: dict[str, float],
    threshold: int | None,
    person: Person = None,
) -> tuple[Measurement[Any, Any, Any, Any], Any]:
    """The composition of the items' measurements (``make_composition``'s map) and the
    threshold mechanism (None without private keys)."""
    from ..combinators.composition import make_composition

    ms = []
    thr = None
    for it in tp.items:
        if it.name == tp.threshold_item:
            assert threshold is not None  # noqa: S101
            m, thr = threshold_measurement(it, measure, scales[it.name], threshold, person)
        else:
            m = item_measurement(it, measure, scales[it.name], person)
        ms.append(m)
    return make_composition(ms), thr


def exact_values(item: Item, values: list[Any]) -> np.ndarray[Any, Any]:
    """The exact per-group values the item's noise is added to (the constructors' function:
    a float sum saturated at ±max_length·K grid units and rounded once to f64, as
    ``make_grouped_sum``; an integer sum as ``make_sum``'s, exact below 2^63)."""
    if item.family == "fsum":
        from ..transformations._aggregate import grid_k, to_carrier

        g = item.exact
        assert isinstance(g, n.GridSum) and item.max_length is not None  # noqa: S101
        K = max(abs(grid_k(g.lower, g.p)), abs(grid_k(g.upper, g.p)))
        c_int = item.max_length * K
        sat = [min(max(int(s), -c_int), c_int) for s in values]
        return np.array([to_carrier(s, 1, g.p, "f64") for s in sat], dtype=np.float64)
    return np.array([int(v) for v in values], dtype=np.int64)
