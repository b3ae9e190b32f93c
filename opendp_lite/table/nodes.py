"""The table API's intermediate representation: expression nodes and the exact aggregates.

Every node is a frozen dataclass, so a plan is a value: it can be compared, hashed, printed
and serialised, and nothing in it refers to data or to a Polars version.  Three kinds:

* **stable expressions** (:data:`Expr`) compute a column row by row (or filter rows):
  their stability is that of a row-by-row map, so a dataset distance carries over unchanged;
* **DP aggregates** (:class:`DPAgg`) are the private leaves: ``len``, ``count``,
  ``null_count``, ``n_unique``, ``sum``, ``mean``, ``quantile``, ``median``, ``noise``;
* **post-processing** is any stable expression whose inputs are DP aggregates.

The **exact aggregates** (:class:`ExactAgg`) are what the engine computes per group, before
any noise: integer counts and integer sums (a float sum is a sum of grid units, see
:class:`GridSum`), so the engine's answer is exact on every backend.

>>> e = Binary("+", Col("a"), Lit(1))
>>> e
Binary(op='+', left=Col(name='a'), right=Lit(value=1, dtype=None))
>>> output_name(Alias(e, "b")), output_name(e)
('b', 'a')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Union

__all__ = [
    "AGG_KINDS",
    "BINARY_OPS",
    "DT_PARTS",
    "EXACT_AGG_KINDS",
    "STABLE_AGG_KINDS",
    "UNARY_OPS",
    "Agg",
    "Alias",
    "Binary",
    "Cast",
    "Clip",
    "Col",
    "CountValid",
    "Cut",
    "DPAgg",
    "DtPart",
    "ExactAgg",
    "Expr",
    "FillNan",
    "FillNull",
    "FilterExpr",
    "FilterRows",
    "FramePlan",
    "GridSum",
    "GroupAgg",
    "IntSum",
    "Keep",
    "Len",
    "Length",
    "Lit",
    "NUnique",
    "NullCount",
    "QuantileCounts",
    "Replace",
    "Select",
    "SortKey",
    "Step",
    "StrPTime",
    "TruncateGroups",
    "TruncateRows",
    "Unary",
    "WithColumns",
    "children",
    "output_name",
]

#: binary operators, by their Python spelling
BINARY_OPS = frozenset(
    {"+", "-", "*", "/", "//", "%", "==", "!=", "<", "<=", ">", ">=", "&", "|", "^"}
)
#: unary row-by-row operations (``drop_*`` change the length, and so are not row-by-row)
UNARY_OPS = frozenset(
    {
        "is_null",
        "is_not_null",
        "is_nan",
        "is_not_nan",
        "is_finite",
        "is_infinite",
        "not",
        "neg",
        "abs",
        "drop_nulls",
        "drop_nans",
        "to_physical",
    }
)
#: the ``dt.*`` components
DT_PARTS = frozenset(
    {
        "year",
        "iso_year",
        "quarter",
        "month",
        "week",
        "weekday",
        "day",
        "ordinal_day",
        "hour",
        "minute",
        "second",
        "millisecond",
        "microsecond",
        "nanosecond",
        "date",
        "time",
    }
)
#: the DP aggregates (``.dp.<kind>``)
AGG_KINDS = frozenset(
    {"len", "count", "null_count", "n_unique", "sum", "mean", "quantile", "median", "noise"}
)

#: the exact Polars aggregations (``pl.col("x").sum()``), private only under ``.dp.noise()``
EXACT_AGG_KINDS = frozenset({"sum", "len", "count", "null_count", "n_unique"})

#: the aggregations a stable ``group_by(...).agg(...)`` (:class:`GroupAgg`) may hold: each is a
#: function of the group's multiset of values (never of row order), computed exactly (a float
#: sum or mean accumulated as a rational, rounded once)
STABLE_AGG_KINDS = EXACT_AGG_KINDS | frozenset({"min", "max", "mean", "median", "var", "std"})

#: a data type, by its Polars name: "Int64", "Float32", "String", "Boolean", "Categorical",
#: "Enum", "Date", "Datetime", "Time", "UInt32", ...; parameters (an Enum's categories, a
#: Datetime's unit and zone) go in a tuple: ("Enum", ("a", "b")), ("Datetime", "us", None)
DType = Union[str, tuple[Any, ...]]


@dataclass(frozen=True)
class Col:
    """A column by name (``pl.col("a")``)."""

    name: str


@dataclass(frozen=True)
class Lit:
    """A literal; ``dtype`` if the expression fixed one (``pl.lit(1, dtype=pl.Int8)``)."""

    value: Any
    dtype: DType | None = None


@dataclass(frozen=True)
class Len:
    """The number of rows (``pl.len()``): not a row-by-row expression; private only under
    ``.dp`` or as the top-level ``dp.len()`` (which is ``DPAgg("len", Len())``)."""


@dataclass(frozen=True)
class Agg:
    """An exact Polars aggregation, ``kind`` in :data:`EXACT_AGG_KINDS`, of ``expr``
    (``pl.col("x").clip(0, 1).sum()``): not a row-by-row expression; private only under
    ``.dp.noise()`` (``DPAgg("noise", Agg("sum", ...))``), like :class:`Len`; or, with
    ``kind`` in :data:`STABLE_AGG_KINDS`, one output column of a stable :class:`GroupAgg`
    (``var``/``std`` with Polars' default ``ddof=1``)."""

    kind: str
    expr: Expr


@dataclass(frozen=True)
class Alias:
    expr: Expr
    name: str


@dataclass(frozen=True)
class Binary:
    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Unary:
    op: str
    expr: Expr


@dataclass(frozen=True)
class Cast:
    expr: Expr
    dtype: DType
    strict: bool = True


@dataclass(frozen=True)
class Clip:
    """``expr.clip(lower, upper)``; a missing side is None."""

    expr: Expr
    lower: Any = None
    upper: Any = None


@dataclass(frozen=True)
class FillNull:
    expr: Expr
    value: Expr


@dataclass(frozen=True)
class FillNan:
    expr: Expr
    value: Expr


@dataclass(frozen=True)
class FilterExpr:
    """``expr.filter(predicate)``: keeps the rows where the predicate holds."""

    expr: Expr
    predicate: Expr


@dataclass(frozen=True)
class Cut:
    """``expr.cut(breaks, labels=, left_closed=)`` (``bin_intervals`` on Polars 2)."""

    expr: Expr
    breaks: tuple[Any, ...]
    labels: tuple[str, ...] | None = None
    left_closed: bool = False


@dataclass(frozen=True)
class Replace:
    """``replace`` (``strict=False``, unmatched values kept) or ``replace_strict``
    (``strict=True``: unmatched values become ``default``, or an error without one)."""

    expr: Expr
    old: tuple[Any, ...]
    new: tuple[Any, ...]
    strict: bool = False
    default: Expr | None = None
    return_dtype: DType | None = None


@dataclass(frozen=True)
class StrPTime:
    """``expr.str.strptime(dtype, format)``; unparsable values become null
    (``strict=False``), so no record can make the query fail."""

    expr: Expr
    dtype: DType
    format: str | None = None


@dataclass(frozen=True)
class DtPart:
    """``expr.dt.<part>()``."""

    expr: Expr
    part: str


@dataclass(frozen=True)
class DPAgg:
    """A private aggregate: ``kind`` in :data:`AGG_KINDS` over ``expr``.

    ``bounds`` for sum/mean, ``candidates`` and ``alpha`` for quantile/median, ``scale``
    (None: chosen by the query's budget), ``signed`` for the counts (None: unset, which
    warns as OpenDP 0.16 does), ``mechanism`` for noise (None: Laplace under pure DP,
    Gaussian under zCDP).
    """

    kind: str
    expr: Expr
    bounds: tuple[Any, Any] | None = None
    candidates: tuple[Any, ...] | None = None
    alpha: float | None = None
    scale: float | None = None
    signed: bool | None = None
    mechanism: Literal["laplace", "gaussian"] | None = None
    threshold: int | None = None


Expr = Union[
    Col,
    Lit,
    Len,
    Agg,
    Alias,
    Binary,
    Unary,
    Cast,
    Clip,
    FillNull,
    FillNan,
    FilterExpr,
    Cut,
    Replace,
    StrPTime,
    DtPart,
    DPAgg,
]


def children(e: Expr) -> tuple[Expr, ...]:
    """The expressions ``e`` reads (its inputs), in order."""
    if isinstance(e, (Col, Lit, Len)):
        return ()
    if isinstance(e, Binary):
        return (e.left, e.right)
    if isinstance(e, (FillNull, FillNan)):
        return (e.expr, e.value)
    if isinstance(e, FilterExpr):
        return (e.expr, e.predicate)
    if isinstance(e, Replace):
        return (e.expr,) if e.default is None else (e.expr, e.default)
    return (e.expr,)


def output_name(e: Expr) -> str:
    """The name of the column ``e`` produces, by Polars' rule: the alias, else the leftmost
    input's name ("len" for ``Len``, "literal" for a literal)."""
    if isinstance(e, Alias):
        return e.name
    if isinstance(e, Col):
        return e.name
    if isinstance(e, Lit):
        return "literal"
    if isinstance(e, Len):
        return "len"
    return output_name(children(e)[0])


# --- the exact aggregates the engine computes per group, before any noise -----------------


@dataclass(frozen=True)
class Length:
    """The number of rows."""


@dataclass(frozen=True)
class CountValid:
    """The number of non-null values of ``expr`` (NaN counts as a value, as in Polars)."""

    expr: Expr


@dataclass(frozen=True)
class NullCount:
    expr: Expr


@dataclass(frozen=True)
class NUnique:
    """The number of distinct values of ``expr`` (null is one value, as in Polars)."""

    expr: Expr


@dataclass(frozen=True)
class IntSum:
    """The exact sum of an integer ``expr`` clipped to ``[lower, upper]``, nulls skipped:
    a Python int (no overflow on any backend)."""

    expr: Expr
    lower: int
    upper: int


@dataclass(frozen=True)
class GridSum:
    """A float sum on the grid ``2**-p``: each value clipped to ``[lower, upper]``, then
    ``trunc(ldexp(value, p))`` (``_aggregate.grid_k``: the same rounding as
    ``make_sum``'s exact path), nulls and NaN skipped, summed exactly as integers: the answer
    is an int, the sum in units of ``2**-p``."""

    expr: Expr
    lower: float
    upper: float
    p: int


@dataclass(frozen=True)
class QuantileCounts:
    """For each candidate ``c``, the numbers of non-null values ``< c`` and ``> c``: two int
    vectors of ``len(candidates)`` (the quantile score is computed from them exactly)."""

    expr: Expr
    candidates: tuple[Any, ...]


ExactAgg = Union[Length, CountValid, NullCount, NUnique, IntSum, GridSum, QuantileCounts]


# --- the frame steps before the aggregation ------------------------------------------------


@dataclass(frozen=True)
class WithColumns:
    exprs: tuple[Expr, ...]


@dataclass(frozen=True)
class Select:
    exprs: tuple[Expr, ...]


@dataclass(frozen=True)
class FilterRows:
    predicate: Expr


@dataclass(frozen=True)
class SortKey:
    """``keep=`` by a sort key (OpenDP's ``SortBy``): a person's rows in the order of ``by``
    (each ascending unless ``descending``; nulls first unless ``nulls_last``); rows equal on
    the key are ordered by the total order of :mod:`opendp_lite._order` on the whole row,
    never by their position in the frame."""

    by: tuple[Expr, ...]
    descending: tuple[bool, ...]
    nulls_last: tuple[bool, ...]


#: which rows (or groups) truncation keeps: ``"sample"`` (uniform, from the library's
#: randomness), ``"first"``/``"last"`` (by the total order of :mod:`opendp_lite._order` on the
#: whole row, or on the group key; never by position), or a :class:`SortKey`
Keep = Union[Literal["sample", "first", "last"], SortKey]


@dataclass(frozen=True)
class TruncateRows:
    """``truncate_per_group(k, by)``: keep at most ``k`` rows of each person (each distinct
    value of ``identifier``) in each group of ``by`` (the whole frame when ``by`` is empty).
    Which rows are kept depends only on that person's rows in that group (and, under
    ``"sample"``, on the library's randomness: each subset of size k is equally likely)."""

    identifier: tuple[Expr, ...]
    by: tuple[Expr, ...]
    k: int
    keep: Keep = "sample"


@dataclass(frozen=True)
class TruncateGroups:
    """``truncate_num_groups(k, by)``: keep each person's rows in at most ``k`` of the groups
    of ``by`` it has rows in (all its rows in a kept group).  Which groups are kept depends
    only on that person's group keys (and, under ``"sample"``, on the library's randomness:
    each set of k of its groups is equally likely)."""

    identifier: tuple[Expr, ...]
    by: tuple[Expr, ...]
    k: int
    keep: Literal["sample", "first", "last"] = "sample"


@dataclass(frozen=True)
class GroupAgg:
    """A stable ``group_by(by).agg(aggs)`` before the private aggregation: one row per group
    of ``by`` (the keys, then one column per aggregate, each an :class:`Agg` of a
    :data:`STABLE_AGG_KINDS` kind, maybe aliased).  Grouping by the unit's identifier is a
    truncation (one row per identifier in each group of the other keys); otherwise one added
    or removed row changes one output row (a removal and an addition)."""

    by: tuple[Expr, ...]
    aggs: tuple[Expr, ...]


Step = Union[WithColumns, Select, FilterRows, TruncateRows, TruncateGroups, GroupAgg]


@dataclass(frozen=True)
class FramePlan:
    """What the engine runs: ``steps`` row by row, then per group of ``by`` (None: the whole
    frame is one group) each named exact aggregate.

    ``keys``: public keys (a dict of equal-length lists, one per ``by`` column): the answer
    has exactly these groups, in this order, absent ones with zero counts and sums (a left
    join of the keys with the aggregates).  Without ``keys`` the answer has the groups that
    occur, in the total order of :mod:`opendp_lite._order` on the key tuples (never in the
    data's order).
    """

    steps: tuple[Step, ...]
    aggregates: tuple[tuple[str, ExactAgg], ...]
    by: tuple[Expr, ...] | None = None
    # compared (plans releasing other groups differ), not hashed (a dict): a plan with keys is
    # unhashable by value, one without keys hashes as usual
    keys: dict[str, list[Any]] | None = field(default=None, hash=False)
