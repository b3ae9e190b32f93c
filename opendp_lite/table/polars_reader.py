"""Polars expressions read into the table API's nodes, through a fail-closed whitelist.

:func:`read_expr` reads ``expr.meta.serialize(format="json")`` (the expression as Polars
writes it, on Polars 1.x and 2.x) and translates each node it recognises into
:mod:`opendp_lite.table.nodes`.  It never guesses: a node kind, a function, an option or a
JSON shape it does not know (a Python UDF, a window, a Polars version whose JSON differs) is
refused with :class:`UnsupportedPolarsExpression`, which names the construct and the
supported alternatives.  Nothing in the JSON is executed or unpickled: a pickled Python
function is refused by its node kind, before its bytes are looked at.

The ``.dp`` calls (:mod:`opendp_lite.table.dp_namespace`) are plain Polars expressions that
carry a marker; they are read into :class:`~opendp_lite.table.nodes.DPAgg`.

:func:`~opendp_lite.table.polars_plan.read_plan` reads a LazyFrame's plan
(``lf.serialize(format="json")``) through the same whitelist: a schema-only scan, then
select, with_columns, filter, group_by/agg, sort and join.

>>> import polars as pl
>>> read_expr((pl.col("a") + 1).alias("b"))
Alias(expr=Binary(op='+', left=Col(name='a'), right=Lit(value=1, dtype=None)), name='b')
>>> read_expr(pl.col("a").map_batches(lambda s: s))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
opendp_lite...UnsupportedPolarsExpression: a Python function (map_elements/map_batches...
"""

from __future__ import annotations

import datetime
import io
import json
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn, Union

from opendp_lite.errors import NotImplementedForType
from opendp_lite.table import dp_namespace
from opendp_lite.table import nodes as n

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl

__all__ = [
    "SUPPORTED",
    "GroupByAgg",
    "JoinKeys",
    "PlanReading",
    "PlanStep",
    "SortStep",
    "UnsupportedPolarsExpression",
    "read_expr",
    "read_expr_json",
]

#: what the reader supports, named in every refusal
SUPPORTED = (
    "pl.col(name), pl.lit(value[, dtype]), pl.len(), .alias, the binary operators "
    "(== != < <= > >= + - * / // % & | ^), ~ and unary -, abs, is_null, is_not_null, is_nan, "
    "is_not_nan, is_finite, is_infinite, cast, clip(lower, upper) with literal bounds, "
    "fill_null(value), fill_nan(value), drop_nulls, drop_nans, filter, cut/bin_intervals with "
    "explicit breaks, replace, replace_strict, to_physical, str.strptime(dtype, format), "
    "dt.<component>, exact sum/len/count/null_count/n_unique under .dp.noise(), and the .dp "
    "aggregates (len, count, null_count, n_unique, sum, mean, "
    "quantile, median, noise) and dp.len()"
)


class UnsupportedPolarsExpression(NotImplementedForType):
    """A Polars expression (or plan) holds a construct the table API does not read.

    ``construct`` names it; the message names the supported alternatives.  Raised when the
    query is built, from the expression's shape alone (never from data).
    """

    def __init__(
        self, construct: str, detail: str = "", alternatives: str = "", supported: str = ""
    ) -> None:
        self.construct = construct
        message = f"{construct} is not supported in a DP table query"
        if detail:
            message += f": {detail}"
        message += (
            f". Fix: {alternatives or 'rewrite it with the supported expressions'}"
            f" (supported: {supported or SUPPORTED})"
        )
        super().__init__(message)


def _refuse(
    construct: str, detail: str = "", alternatives: str = "", supported: str = ""
) -> NoReturn:
    raise UnsupportedPolarsExpression(construct, detail, alternatives, supported)


def _refuse_forged(detail: str) -> NoReturn:
    _refuse(
        "an unknown or altered .dp marker",
        detail,
        alternatives="build DP aggregates with the .dp methods of this opendp_lite version",
    )


def _drift(where: str, got: Any) -> NoReturn:
    """An unknown JSON shape: another Polars version, or a tampered document."""
    text = json.dumps(got, default=str)
    if len(text) > 120:
        text = text[:117] + "..."
    _refuse(
        f"the Polars JSON form of {where}",
        f"unrecognised shape {text} (a Polars version this reader does not know, or a "
        "modified document)",
        "use a tested Polars version (1.36 or 2.1) or the Polars-free builder",
    )


# --- the JSON readers, one per node kind ------------------------------------------------


def _one_key(d: Any, where: str) -> tuple[str, Any]:
    if not isinstance(d, dict) or len(d) != 1:
        _drift(where, d)
    ((k, v),) = d.items()
    return k, v


def _fields(d: Any, keys: set[str], where: str) -> dict[str, Any]:
    if not isinstance(d, dict) or set(d) != keys:
        _drift(where, d)
    return d


def _str(v: Any, where: str) -> str:
    if not isinstance(v, str):
        _drift(where, v)
    return v


def _bool(v: Any, where: str) -> bool:
    if not isinstance(v, bool):
        _drift(where, v)
    return v


def _int(v: Any, where: str) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        _drift(where, v)
    return v


_BINARY = {
    "Eq": "==",
    "NotEq": "!=",
    "Lt": "<",
    "LtEq": "<=",
    "Gt": ">",
    "GtEq": ">=",
    "Plus": "+",
    "Minus": "-",
    "Multiply": "*",
    "TrueDivide": "/",
    "FloorDivide": "//",
    "Modulus": "%",
    "And": "&",
    "Or": "|",
    "Xor": "^",
}
_BINARY_REFUSED = {
    "EqValidity": "eq_missing",
    "NotEqValidity": "ne_missing",
    "Divide": "integer-preserving division",
    "LogicalAnd": "logical and of non-booleans",
    "LogicalOr": "logical or of non-booleans",
}

_BOOLEAN = {
    "Not": "not",
    "IsNull": "is_null",
    "IsNotNull": "is_not_null",
    "IsNan": "is_nan",
    "IsNotNan": "is_not_nan",
    "IsFinite": "is_finite",
    "IsInfinite": "is_infinite",
}

_TEMPORAL = {
    "Year": "year",
    "IsoYear": "iso_year",
    "Quarter": "quarter",
    "Month": "month",
    "Week": "week",
    "WeekDay": "weekday",
    "Day": "day",
    "OrdinalDay": "ordinal_day",
    "Hour": "hour",
    "Minute": "minute",
    "Second": "second",
    "Millisecond": "millisecond",
    "Microsecond": "microsecond",
    "Nanosecond": "nanosecond",
    "Date": "date",
    "Time": "time",
}

_SIMPLE_FUNCTIONS = {
    "Negate": "neg",
    "Abs": "abs",
    "DropNulls": "drop_nulls",
    "DropNans": "drop_nans",
    "ToPhysical": "to_physical",
}

#: node kinds refused by name, with the alternative
_REFUSED_KINDS = {
    "AnonymousFunction": (
        "a Python function (map_elements/map_batches: a UDF)",
        "Python functions cannot be analysed; express it with the supported expressions",
    ),
    "PythonUdf": (
        "a Python function (a UDF)",
        "Python functions cannot be analysed; express it with the supported expressions",
    ),
    "Over": (
        "a window expression (.over)",
        "group with query.group_by(...).agg(...) instead",
    ),
    "Window": (
        "a window expression (.over/.rolling)",
        "group with query.group_by(...).agg(...) instead",
    ),
    "Rolling": ("a rolling window", "group with query.group_by(...).agg(...) instead"),
    "Selector": (
        "a multi-column selector (pl.all, pl.col(a, b), regex, dtype selection, exclude)",
        "name each column: pl.col('a'), pl.col('b')",
    ),
    **{
        kind: (
            "a multi-column selector (pl.all, pl.col(a, b), regex, dtype selection, exclude)",
            "name each column: pl.col('a'), pl.col('b')",
        )
        for kind in ("Columns", "DtypeColumn", "IndexColumn", "Nth", "Exclude", "Wildcard")
    },
    "RenameAlias": ("a .name.* renaming", "use .alias(new_name)"),
    "KeepName": ("name.keep", "use .alias(new_name)"),
    "Ternary": (
        "when/then/otherwise",
        "use replace/replace_strict, fill_null, clip or cut",
    ),
    "Sort": ("sort inside an expression", "sort the released frame afterwards"),
    "SortBy": ("sort_by inside an expression", "sort the released frame afterwards"),
    "Gather": ("gather/get (row positions)", "select rows with filter(predicate)"),
    "Slice": ("slice/head/tail (row positions)", "select rows with filter(predicate)"),
    "Explode": ("explode", "no alternative: it changes the rows' contributions"),
    "Eval": ("list/array eval", "no alternative yet"),
    "Element": ("pl.element()", "no alternative yet"),
    "Field": ("a struct field", "no alternative yet"),
    "SubPlan": ("a sub-plan", "no alternative"),
    "DataTypeFunction": ("a data-type function", "cast to a named dtype"),
}

_REFUSED_FUNCTIONS = {
    "FillNullWithStrategy": (
        "fill_null with a strategy (forward/backward/mean/min/max/zero/one)",
        "fill with a value: fill_null(value)",
    ),
    "FfiPlugin": (
        "a Polars plugin function (other than OpenDP 0.16's .dp calls)",
        "use the supported expressions; .dp calls are read from opendp_lite's namespace "
        "(opendp_lite.table.dp_namespace.ensure_registered()) or OpenDP 0.16's",
    ),
    "AsStruct": ("pl.struct", "select the fields as separate columns"),
    "Quantile": (
        "the exact Polars aggregation 'Quantile'",
        "use .dp.quantile(alpha, candidates) or .dp.median(candidates)",
    ),
}


def _read(node: Any) -> n.Expr:
    if node == "Len":
        return n.Len()
    if isinstance(node, str):
        if node in _REFUSED_KINDS:
            construct, alternative = _REFUSED_KINDS[node]
            _refuse(construct, alternatives=alternative)
        _refuse(f"the Polars expression {node!r}")
    kind, body = _one_key(node, "an expression")
    reader = _KINDS.get(kind)
    if reader is not None:
        return reader(body)
    if kind in _REFUSED_KINDS:
        construct, alternative = _REFUSED_KINDS[kind]
        _refuse(construct, alternatives=alternative)
    _refuse(f"the Polars expression node {kind!r}")


_AGG_ALTERNATIVES = (
    "use the private aggregates: .dp.sum(bounds), .dp.mean(bounds), .dp.count(), .dp.len(), "
    ".dp.n_unique(), .dp.null_count(), .dp.quantile(alpha, candidates), .dp.median(candidates)"
    ", or noise an exact sum/len/count/null_count/n_unique: .sum().dp.noise()"
)


def _read_agg(body: Any) -> n.Expr:
    kind, payload = _one_key(body, "an aggregation")
    if kind == "Sum":
        return n.Agg("sum", _read(payload))
    if kind == "NUnique":
        return n.Agg("n_unique", _read(payload))
    if kind == "Count":
        if isinstance(payload, list) and len(payload) == 2:  # Polars 1.30
            payload = {"input": payload[0], "include_nulls": payload[1]}
        d = _fields(payload, {"input", "include_nulls"}, "count/len")
        include_nulls = _bool(d["include_nulls"], "count/len")
        return n.Agg("len" if include_nulls else "count", _read(d["input"]))
    if kind in ("Min", "Max"):
        if isinstance(payload, dict) and "input" in payload:
            d = _fields(payload, {"input", "propagate_nans"}, kind.lower())
            if _bool(d["propagate_nans"], kind.lower()):
                _refuse(f"nan_{kind.lower()} (NaN propagated)", alternatives=f".{kind.lower()}()")
            payload = d["input"]
        return n.Agg(kind.lower(), _read(payload))
    if kind in ("Mean", "Median"):
        return n.Agg(kind.lower(), _read(payload))
    if kind in ("Std", "Var"):
        if not isinstance(payload, list) or len(payload) != 2:
            _drift(kind.lower(), payload)
        if payload[1] != 1 or isinstance(payload[1], bool):
            _refuse(f"{kind.lower()}(ddof={payload[1]!r})", alternatives="ddof=1 (the default)")
        return n.Agg(kind.lower(), _read(payload[0]))
    if kind in ("First", "Last", "Item", "Implode", "AggGroups"):
        _refuse(
            f"the aggregation {kind.lower()}() (it depends on the rows' order, which is protected)",
            alternatives="an order-free aggregate: min, max, mean, median, sum, len, count, "
            "null_count, n_unique, var, std",
        )
    _refuse(f"the exact Polars aggregation {kind!r}", alternatives=_AGG_ALTERNATIVES)


def _f_null_count(inputs: list[Any], payload: Any) -> n.Expr:
    _no_payload(payload, "null_count")
    _arity(inputs, 1, "null_count")
    return n.Agg("null_count", _read(inputs[0]))


def _read_column(body: Any) -> n.Expr:
    name = _str(body, "a column")
    if name == "*" or (name.startswith("^") and name.endswith("$")):
        construct, alternative = _REFUSED_KINDS["Selector"]
        _refuse(construct, f"Polars reads the column name {name!r} as a pattern", alternative)
    return n.Col(name)


def _read_alias(body: Any) -> n.Expr:
    if not isinstance(body, list) or len(body) != 2:
        _drift("an alias", body)
    return n.Alias(_read(body[0]), _str(body[1], "an alias name"))


def _read_binary(body: Any) -> n.Expr:
    d = _fields(body, {"left", "op", "right"}, "a binary expression")
    op = d["op"]
    if op in _BINARY_REFUSED:
        _refuse(f"the operator {_BINARY_REFUSED[op]}", alternatives="use == != < <= > >=")
    if op not in _BINARY:
        _drift("a binary operator", op)
    return n.Binary(_BINARY[op], _read(d["left"]), _read(d["right"]))


_UNITS = {"Milliseconds": "ms", "Microseconds": "us", "Nanoseconds": "ns"}
_PLAIN_DTYPES = frozenset(
    {
        "Int8",
        "Int16",
        "Int32",
        "Int64",
        "UInt8",
        "UInt16",
        "UInt32",
        "UInt64",
        "Float32",
        "Float64",
        "String",
        "Boolean",
        "Date",
        "Time",
    }
)


def _read_dtype(v: Any) -> n.DType:
    """A data type in Polars' JSON, as a :data:`nodes.DType`."""
    if isinstance(v, str):
        if v in _PLAIN_DTYPES:
            return v
        _refuse(
            f"the data type {v}",
            alternatives="use an integer, float, String, Boolean, "
            "Categorical, Enum, Date, Datetime or Time type",
        )
    kind, body = _one_key(v, "a data type")
    if kind == "Datetime":
        if not isinstance(body, list) or len(body) != 2 or body[0] not in _UNITS:
            _drift("a Datetime type", body)
        return ("Datetime", _UNITS[body[0]], _read_zone(body[1]))
    if kind == "Categorical":
        if isinstance(body, list) and len(body) == 2:  # Polars 1.30 (a frame's reverse map
            # of category strings may come first: it is never read)
            if body[1] == "Lexical":
                _refuse(
                    "a lexically ordered Categorical", alternatives="use pl.Categorical or pl.Enum"
                )
            if body[1] != "Physical":
                _drift("a Categorical type", body)
            return "Categorical"
        if not isinstance(body, dict) or body.get("name", "") != "":
            _drift("a Categorical type", body)
        return "Categorical"
    if kind == "Enum":
        if isinstance(body, list) and len(body) == 2 and body[1] == "Physical":  # Polars 1.30
            strings = body[0]
        else:
            strings = _fields(body, {"strings"}, "an Enum type")["strings"]
        categories = _read_series(strings, "an Enum's categories")
        if not all(isinstance(c, str) for c in categories):
            _drift("an Enum's categories", categories)
        return ("Enum", tuple(categories))
    _refuse(
        f"the data type {kind}",
        alternatives="use an integer, float, String, Boolean, "
        "Categorical, Enum, Date, Datetime or Time type",
    )


#: the dict-shaped data types (a bare dtype of Polars 1.30 is told from a dtype expression
#: by these names)
_DTYPE_KINDS = frozenset(
    {"Datetime", "Duration", "Categorical", "Enum", "List", "Array", "Struct", "Decimal"}
)


def _read_zone(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, str):
        return v
    if isinstance(v, dict) and set(v) == {"inner"} and isinstance(v["inner"], str):
        return str(v["inner"])
    _drift("a time zone", v)


def _read_dtype_expr(v: Any) -> n.DType:
    """A dtype argument: ``{"Literal": dtype}`` (Polars >= 1.3x; other forms compute the type
    from data), or the bare dtype (Polars 1.30)."""
    if isinstance(v, str) or (
        isinstance(v, dict) and len(v) == 1 and "Literal" not in v and next(iter(v)) in _DTYPE_KINDS
    ):
        return _read_dtype(v)
    kind, body = _one_key(v, "a data type argument")
    if kind != "Literal":
        _refuse(
            "a computed data type (pl.dtype_of / a data-type expression)",
            alternatives="cast to a named dtype",
        )
    return _read_dtype(body)


def _read_cast(body: Any) -> n.Expr:
    d = _fields(body, {"expr", "dtype", "options"}, "a cast")
    options = d["options"]
    if options not in ("Strict", "NonStrict"):
        if options == "Overflowing":
            _refuse("cast with wrap_numerical=True", alternatives="cast(dtype, strict=False)")
        _drift("cast options", options)
    return n.Cast(_read(d["expr"]), _read_dtype_expr(d["dtype"]), strict=options == "Strict")


def _read_filter(body: Any) -> n.Expr:
    d = _fields(body, {"input", "by"}, "a filter")
    return n.FilterExpr(_read(d["input"]), _read(d["by"]))


def _read_ternary(body: Any) -> n.Expr:
    d = _fields(body, {"predicate", "truthy", "falsy"}, "when/then/otherwise")
    # fill_nan(v) is written as: when(x.is_not_nan() | x.is_null()).then(x).otherwise(v)
    pred = d["predicate"]
    if (
        isinstance(pred, dict)
        and set(pred) == {"BinaryExpr"}
        and isinstance(pred["BinaryExpr"], dict)
        and pred["BinaryExpr"].get("op") == "Or"
    ):
        b = _fields(pred["BinaryExpr"], {"left", "op", "right"}, "a binary expression")
        x = _read(d["truthy"])
        if _read(b["left"]) == n.Unary("is_not_nan", x) and _read(b["right"]) == n.Unary(
            "is_null", x
        ):
            return n.FillNan(x, _read(d["falsy"]))
    construct, alternative = _REFUSED_KINDS["Ternary"]
    _refuse(construct, alternatives=alternative)


_FUNCTION_OPTIONS = frozenset({"check_lengths", "flags"})


def _read_function(body: Any) -> n.Expr:
    if isinstance(body, dict) and "options" in body:
        # Polars 1.30 writes each function's fixed properties too (ignored: they follow from
        # the function, which is what is read)
        options = body["options"]
        if not isinstance(options, dict) or set(options) != _FUNCTION_OPTIONS:
            _drift("a function's options", options)
        body = {k: v for k, v in body.items() if k != "options"}
    d = _fields(body, {"input", "function"}, "a function")
    inputs = d["input"]
    if not isinstance(inputs, list) or not inputs:
        _drift("a function's inputs", inputs)
    spec = d["function"]
    if isinstance(spec, str):
        name, payload = spec, None
    else:
        name, payload = _one_key(spec, "a function")
    if name == "AsStruct" and payload is None:
        try:
            marked = dp_namespace._read_marker(inputs, _read, _string_literal)
        except dp_namespace._ForgedMarker as forged:
            _refuse_forged(str(forged))
        if marked is not None:
            return marked
    if name == "FfiPlugin":
        try:
            opendp_call = dp_namespace._read_opendp_plugin(inputs, payload, _read, _values)
        except dp_namespace._ForgedMarker as forged:
            _refuse_forged(str(forged))
        if opendp_call is not None:
            return opendp_call
    if name in _REFUSED_FUNCTIONS:
        construct, alternative = _REFUSED_FUNCTIONS[name]
        _refuse(construct, alternatives=alternative)
    reader = _FUNCTIONS.get(name)
    if reader is None:
        _refuse(f"the Polars function {name!r}")
    return reader(inputs, payload)


def _arity(inputs: list[Any], k: int, what: str) -> None:
    if len(inputs) != k:
        _drift(f"the inputs of {what}", len(inputs))


def _no_payload(payload: Any, what: str) -> None:
    if payload is not None:
        _drift(what, payload)


def _f_simple(op: str) -> Callable[[list[Any], Any], n.Expr]:
    def read(inputs: list[Any], payload: Any) -> n.Expr:
        _no_payload(payload, op)
        _arity(inputs, 1, op)
        return n.Unary(op, _read(inputs[0]))

    return read


def _name(payload: Any) -> str:
    """A function variant's name: the string, or the one key of a dict."""
    if isinstance(payload, str):
        return payload
    if isinstance(payload, dict) and len(payload) == 1:
        return str(next(iter(payload)))
    return repr(payload)[:60]


def _f_boolean(inputs: list[Any], payload: Any) -> n.Expr:
    if not isinstance(payload, str) or payload not in _BOOLEAN:
        _refuse(f"the boolean function {_name(payload)!r} (is_in, is_between, any, all, ...)")
    _arity(inputs, 1, payload)
    return n.Unary(_BOOLEAN[payload], _read(inputs[0]))


def _f_temporal(inputs: list[Any], payload: Any) -> n.Expr:
    if not isinstance(payload, str) or payload not in _TEMPORAL:
        _refuse(
            f"the temporal function {_name(payload)!r}",
            alternatives="use one of dt." + ", dt.".join(sorted(n.DT_PARTS)),
        )
    _arity(inputs, 1, f"dt.{_TEMPORAL[payload]}")
    return n.DtPart(_read(inputs[0]), _TEMPORAL[payload])


def _f_fill_null(inputs: list[Any], payload: Any) -> n.Expr:
    _no_payload(payload, "fill_null")
    _arity(inputs, 2, "fill_null")
    return n.FillNull(_read(inputs[0]), _read(inputs[1]))


def _literal_value(node: Any, what: str) -> Any:
    e = _read(node)
    if not isinstance(e, n.Lit):
        _refuse(f"a non-literal {what}", alternatives=f"pass a constant {what}")
    return e.value


def _f_clip(inputs: list[Any], payload: Any) -> n.Expr:
    d = _fields(payload, {"has_min", "has_max"}, "clip")
    has_min, has_max = _bool(d["has_min"], "clip"), _bool(d["has_max"], "clip")
    _arity(inputs, 1 + has_min + has_max, "clip")
    lower = _literal_value(inputs[1], "clip bound") if has_min else None
    upper = _literal_value(inputs[1 + has_min], "clip bound") if has_max else None
    return n.Clip(_read(inputs[0]), lower, upper)


def _f_cut(inputs: list[Any], payload: Any) -> n.Expr:
    d = _fields(payload, {"breaks", "labels", "left_closed", "include_breaks"}, "cut")
    _arity(inputs, 1, "cut")
    if _bool(d["include_breaks"], "cut"):
        _refuse("cut(include_breaks=True)", alternatives="cut(breaks, labels=...)")
    breaks = d["breaks"]
    if not isinstance(breaks, list) or not all(
        isinstance(b, (int, float)) and not isinstance(b, bool) for b in breaks
    ):
        _drift("cut's breaks", breaks)
    return n.Cut(
        _read(inputs[0]),
        tuple(float(b) for b in breaks),
        _labels(d["labels"]),
        _bool(d["left_closed"], "cut"),
    )


def _labels(v: Any) -> tuple[str, ...] | None:
    if v is None:
        return None
    if not isinstance(v, list) or not all(isinstance(s, str) for s in v):
        _drift("cut labels", v)
    return tuple(v)


def _f_bin(inputs: list[Any], payload: Any) -> n.Expr:
    d = _fields(payload, {"method", "labels", "include_intervals"}, "bin_intervals")
    _arity(inputs, 1, "bin_intervals")
    if _bool(d["include_intervals"], "bin_intervals"):
        _refuse(
            "bin_intervals(include_intervals=True)",
            alternatives="bin_intervals(breaks, labels=[...])",
        )
    kind, method = _one_key(d["method"], "a binning method")
    if kind != "Intervals":
        _refuse(f"the binning method {kind!r}", alternatives="bin_intervals(breaks, labels=...)")
    m = _fields(method, {"spec", "right_closed"}, "bin_intervals")
    spec_kind, spec = _one_key(m["spec"], "bin_intervals' breaks")
    if spec_kind != "Breaks":
        _refuse(
            "bin_intervals with a number of bins (breaks derived from the data)",
            alternatives="pass explicit breaks: bin_intervals([b1, b2, ...], labels=[...])",
        )
    breaks = _read_series(spec, "bin_intervals' breaks")
    if not all(isinstance(b, (int, float)) and not isinstance(b, bool) for b in breaks):
        _refuse("bin_intervals with non-numeric breaks", alternatives="use numeric breaks")
    labels = _labels(d["labels"])
    if labels is None:
        _refuse(
            "bin_intervals(labels=False) (an integer bin index)",
            alternatives="pass labels=[...] (one per bin)",
        )
    return n.Cut(
        _read(inputs[0]),
        tuple(breaks),
        labels,
        left_closed=not _bool(m["right_closed"], "bin_intervals"),
    )


def _values(node: Any, what: str) -> tuple[Any, ...]:
    """The values of a literal list/Series (``replace``'s old and new), or of a scalar."""
    kind, body = _one_key(node, what)
    if kind != "Literal":
        _refuse(f"a non-literal {what}", alternatives=f"pass the {what} as constants")
    lkind, lbody = _one_key(body, what)
    if lkind == "Series":
        return tuple(_read_series(lbody, what))
    if lkind == "Scalar":
        lbody = _scalar_new_form(lbody)
        if isinstance(lbody, dict) and set(lbody) == {"List"}:
            return tuple(_read_series(lbody["List"], what))
    return (_read_literal(body).value,)


def _f_replace(inputs: list[Any], payload: Any) -> n.Expr:
    _no_payload(payload, "replace")
    _arity(inputs, 3, "replace")
    old, new = (
        _values(inputs[1], "replace's old values"),
        _values(inputs[2], "replace's new values"),
    )
    if len(new) == 1 and len(old) != 1:
        new = new * len(old)
    if len(old) != len(new):
        _drift("replace's old and new values", [len(old), len(new)])
    return n.Replace(_read(inputs[0]), old, new)


def _f_replace_strict(inputs: list[Any], payload: Any) -> n.Expr:
    d = _fields(payload, {"return_dtype"}, "replace_strict")
    if len(inputs) not in (3, 4):
        _drift("the inputs of replace_strict", len(inputs))
    old = _values(inputs[1], "replace_strict's old values")
    new = _values(inputs[2], "replace_strict's new values")
    if len(new) == 1 and len(old) != 1:
        new = new * len(old)
    if len(old) != len(new):
        _drift("replace_strict's old and new values", [len(old), len(new)])
    default = _read(inputs[3]) if len(inputs) == 4 else None
    dtype = None if d["return_dtype"] is None else _read_dtype_expr(d["return_dtype"])
    return n.Replace(_read(inputs[0]), old, new, True, default, dtype)


def _f_string(inputs: list[Any], payload: Any) -> n.Expr:
    if _name(payload) != "Strptime":
        _refuse(
            f"the string function {_name(payload)!r}", alternatives="str.strptime(dtype, format)"
        )
    _, body = _one_key(payload, "a string function")
    if not isinstance(body, list) or len(body) != 2:
        _drift("str.strptime", body)
    dtype = _read_dtype_expr(body[0])
    opts = _fields(body[1], {"format", "strict", "exact", "cache"}, "str.strptime's options")
    _arity(inputs, 2, "str.strptime")
    ambiguous = _literal_value(inputs[1], "ambiguous= argument")
    if ambiguous not in ("raise", "null"):
        _refuse(f"str.strptime(ambiguous={ambiguous!r})", alternatives="leave ambiguous unset")
    if opts["format"] is None:
        _refuse(
            "str.strptime without a format (Polars infers it from the data)",
            alternatives="pass format=, e.g. str.strptime(pl.Date, '%Y-%m-%d')",
        )
    if not _bool(opts["exact"], "str.strptime"):
        _refuse("str.strptime(exact=False)", alternatives="str.strptime(dtype, format)")
    _bool(opts["strict"], "str.strptime")
    if dtype not in ("Date", "Time") and not (isinstance(dtype, tuple) and dtype[0] == "Datetime"):
        _refuse(f"str.strptime to {dtype}", alternatives="parse to pl.Date, pl.Datetime or pl.Time")
    return n.StrPTime(_read(inputs[0]), dtype, _str(opts["format"], "a format"))


_FUNCTIONS: dict[str, Callable[[list[Any], Any], n.Expr]] = {
    **{name: _f_simple(op) for name, op in _SIMPLE_FUNCTIONS.items()},
    "Boolean": _f_boolean,
    "TemporalExpr": _f_temporal,
    "FillNull": _f_fill_null,
    "Clip": _f_clip,
    "Cut": _f_cut,
    "Bin": _f_bin,
    "Replace": _f_replace,
    "ReplaceStrict": _f_replace_strict,
    "StringExpr": _f_string,
    "NullCount": _f_null_count,
}


# --- literals -----------------------------------------------------------------------------

_INT_TYPES = frozenset({"Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64"})
_EPOCH = datetime.datetime(1970, 1, 1)
_PER_US = {"ms": None, "us": 1, "ns": 1000}


def _float(v: Any, where: str) -> float:
    if v is None:
        # Polars writes NaN and +-inf as JSON null: which one was meant is lost
        _refuse(
            "a non-finite float literal (NaN or infinity)",
            "Polars' JSON writes NaN and infinities alike, as null",
            alternatives="use a finite literal (fill_nan, is_nan and is_infinite test for them)",
        )
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        _drift(where, v)
    return float(v)


def _read_literal(body: Any) -> n.Lit:
    kind, value = _one_key(body, "a literal")
    if kind == "Dyn":
        dkind, v = _one_key(value, "a literal")
        if dkind == "Int":
            return n.Lit(_int(v, "an integer literal"))
        if dkind == "Float":
            return n.Lit(_float(v, "a float literal"))
        if dkind == "Str":
            return n.Lit(_checked_str(_str(v, "a string literal")))
        _drift("a literal", value)
    if kind == "Scalar":
        skind, v = _one_key(_scalar_new_form(value), "a literal")
        if skind == "Null":
            if v != "Null":
                _drift("a null literal", v)
            return n.Lit(None)
        if skind == "Boolean":
            return n.Lit(_bool(v, "a boolean literal"))
        if skind == "String":
            return n.Lit(_checked_str(_str(v, "a string literal")))
        if skind in _INT_TYPES:
            return n.Lit(_int(v, "an integer literal"), skind)
        if skind in ("Float32", "Float64"):
            return n.Lit(_float(v, "a float literal"), skind)
        if skind == "Date":
            return n.Lit(_EPOCH.date() + datetime.timedelta(days=_int(v, "a date")), "Date")
        if skind == "Time":
            ns = _int(v, "a time")
            if ns % 1000 or not 0 <= ns < 86_400 * 10**9:
                _refuse("a time literal with nanoseconds", alternatives="use microseconds")
            t = (_EPOCH + datetime.timedelta(microseconds=ns // 1000)).time()
            return n.Lit(t, "Time")
        if skind == "Datetime":
            if not isinstance(v, list) or len(v) != 3 or v[1] not in _UNITS:
                _drift("a datetime literal", v)
            unit, zone = _UNITS[v[1]], _read_zone(v[2])
            if zone not in (None, "UTC"):
                _refuse(
                    "a datetime literal in a time zone other than UTC",
                    alternatives="use a naive or UTC datetime",
                )
            ticks = _int(v[0], "a datetime")
            if unit == "ns" and ticks % 1000:
                _refuse("a datetime literal with nanoseconds", alternatives="use microseconds")
            us = ticks * 1000 if unit == "ms" else ticks // 1000 if unit == "ns" else ticks
            value = _EPOCH + datetime.timedelta(microseconds=us)
            if zone == "UTC":
                value = value.replace(tzinfo=datetime.timezone.utc)
            return n.Lit(value, ("Datetime", unit, zone))
        if skind in ("List", "Array"):
            _refuse("a list literal", alternatives="use a scalar literal")
        _refuse(
            f"a literal of type {skind}",
            alternatives="use an int, float, str, bool, date, datetime or time literal",
        )
    if kind == "Series":
        _refuse("a Series literal", alternatives="use a scalar literal")
    _drift("a literal", body)


#: Polars 1.30's scalar value variants whose names differ from the dtype's
_OLD_VALUE_NAMES = {"Bool": "Boolean", "StringOwned": "String", "DatetimeOwned": "Datetime"}


def _scalar_new_form(value: Any) -> Any:
    """A scalar as Polars >= 1.3x writes it (``{dtype name: value}``), from Polars 1.30's
    ``{"dtype": dtype, "value": {variant: value}}`` (the variant must agree with the dtype)."""
    if not (isinstance(value, dict) and set(value) == {"dtype", "value"}):
        return value
    dtype, inner = value["dtype"], value["value"]
    if inner == "Null":
        if dtype != "Null":
            _refuse("a typed null literal", alternatives="use pl.lit(None)")
        return {"Null": "Null"}
    variant, v = _one_key(inner, "a literal")
    name = _OLD_VALUE_NAMES.get(variant, variant)
    dtype_name = dtype if isinstance(dtype, str) else _one_key(dtype, "a literal's type")[0]
    if name != dtype_name:
        _drift("a literal's value and type", value)
    if name == "Datetime":
        if not isinstance(v, list) or len(v) != 3:
            _drift("a datetime literal", v)
        return {"Datetime": [v[0], v[1], v[2]]}
    return {name: v}


def _string_literal(node: Any) -> str | None:
    """The string of a string literal node (either Polars form), else None."""
    if not (isinstance(node, dict) and set(node) == {"Literal"}):
        return None
    body = node["Literal"]
    if not (isinstance(body, dict) and set(body) == {"Scalar"}):
        return None
    try:
        value = _scalar_new_form(body["Scalar"])
    except UnsupportedPolarsExpression:
        return None
    if isinstance(value, dict) and set(value) == {"String"} and isinstance(value["String"], str):
        return str(value["String"])
    return None


def _checked_str(s: str) -> str:
    if s.startswith(dp_namespace.MARKER_PREFIX):
        _refuse(
            "a DP marker outside a .dp call",
            "a string literal carries opendp_lite's .dp marker where no .dp call is",
            alternatives="call the .dp methods; do not build their markers by hand",
        )
    return s


def _read_series(data: Any, what: str) -> list[Any]:
    """The values of a Series that Polars wrote as Arrow IPC bytes (read as data, never
    executed), if they are plain scalars."""
    if not isinstance(data, list) or not all(isinstance(b, int) and 0 <= b < 256 for b in data):
        _drift(what, "...")
    import polars as pl

    try:
        frame = pl.read_ipc_stream(io.BytesIO(bytes(data)))
    except (KeyboardInterrupt, SystemExit):  # pragma: no cover
        raise
    except BaseException:  # any failure to read is drift (Polars' Rust panics included)
        _drift(what, "unreadable bytes")
    if frame.width != 1:
        _drift(what, f"{frame.width} columns")
    series = frame.to_series(0)
    dtype = series.dtype
    if not (dtype.is_numeric() or dtype in (pl.String, pl.Boolean, pl.Null)):
        _refuse(f"{what} of type {dtype}", alternatives="use numbers, strings or booleans")
    values = series.to_list()
    if any(isinstance(v, float) and v != v for v in values):
        pass  # NaN is a value here (Arrow keeps it exactly)
    return values


_KINDS: dict[str, Callable[[Any], n.Expr]] = {
    "Column": _read_column,
    "Literal": _read_literal,
    "Alias": _read_alias,
    "BinaryExpr": _read_binary,
    "Cast": _read_cast,
    "Filter": _read_filter,
    "Ternary": _read_ternary,
    "Function": _read_function,
    "Agg": _read_agg,
}


def read_expr_json(text: str) -> n.Expr:
    """Read an expression from Polars' JSON text (``expr.meta.serialize(format="json")``).

    The text is untrusted: any shape the whitelist does not know is refused.

    >>> read_expr_json('{"Alias":[{"Column":"a"},"b"]}')
    Alias(expr=Col(name='a'), name='b')
    >>> read_expr_json('{"Column":"a","Extra":1}')  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    opendp_lite...UnsupportedPolarsExpression: the Polars JSON form of an expression is not ...
    """
    try:
        node = json.loads(text)
    except ValueError:
        _drift("an expression", "not JSON")
    return _read(node)


def read_expr(e: pl.Expr | str) -> n.Expr:
    """Read a Polars expression into the table API's nodes (fail closed); a string is a
    column name (as in Polars' methods and OpenDP's ``make_stable_expr``).

    >>> import polars as pl
    >>> read_expr(pl.col("age").cast(pl.Int32).clip(0, 100))
    Clip(expr=Cast(expr=Col(name='age'), dtype='Int32', strict=True), lower=0, upper=100)
    """
    import polars as pl

    if isinstance(e, str):  # a column name, as Polars' methods take it
        return _read_column(e)
    if not isinstance(e, pl.Expr):
        raise UnsupportedPolarsExpression(
            f"a {type(e).__name__}",
            "expected a Polars expression",
            alternatives="pass pl.col(...), pl.lit(...) or pl.len() expressions",
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            text = e.meta.serialize(format="json")
        except Exception as error:  # e.g. a .name.* function Polars 1.30 cannot write
            raise UnsupportedPolarsExpression(
                "an expression Polars cannot write as JSON",
                f"{type(error).__name__}: {str(error)[:120]}",
                alternatives="rewrite it with the supported expressions",
            ) from None
    return read_expr_json(text)


# --- LazyFrame plans ----------------------------------------------------------------------


@dataclass(frozen=True)
class GroupByAgg:
    """``group_by(*by).agg(*aggs)`` (``maintain_order`` as Polars' flag)."""

    by: tuple[n.Expr, ...]
    aggs: tuple[n.Expr, ...]
    maintain_order: bool = False


@dataclass(frozen=True)
class SortStep:
    """``sort(*by, descending=, nulls_last=, maintain_order=)`` (one flag per key)."""

    by: tuple[n.Expr, ...]
    descending: tuple[bool, ...]
    nulls_last: tuple[bool, ...]
    maintain_order: bool = False


@dataclass(frozen=True)
class JoinKeys:
    """A join of the query with a public key set (OpenDP's ``with_keys`` is
    ``keys.join(query, on=..., how="left", nulls_equal=True)``).

    ``keys``: the key frame's columns, each ``(name, dtype, values)``; ``keys_on_left``: the
    key frame is the join's left input (else its right); ``how``: "left", "right" or "inner";
    ``left_on``/``right_on``: the join expressions of the left and right inputs.
    """

    keys: tuple[tuple[str, n.DType, tuple[Any, ...]], ...]
    keys_on_left: bool
    how: str
    left_on: tuple[n.Expr, ...]
    right_on: tuple[n.Expr, ...]
    nulls_equal: bool = False
    suffix: str = "_right"

    def keys_dict(self) -> dict[str, list[Any]]:
        """The key frame as a dict of columns (:attr:`nodes.FramePlan.keys`' form)."""
        return {name: list(values) for name, _, values in self.keys}


#: a step of a read plan: the row-by-row steps of :mod:`.nodes`, then the frame-level ones
PlanStep = Union[n.WithColumns, n.Select, n.FilterRows, GroupByAgg, SortStep, JoinKeys]


@dataclass(frozen=True)
class PlanReading:
    """A LazyFrame plan read through the whitelist: the private input's ``schema`` (column
    name and dtype, read from an in-memory frame's scan, never its data; None for a file
    scan, whose schema is the input domain's) and its ``steps`` in order.  The plan's input
    stands for the data the measurement is later called on: nothing else of it is kept."""

    schema: tuple[tuple[str, n.DType], ...] | None
    steps: tuple[PlanStep, ...]

    @property
    def group_by(self) -> GroupByAgg | None:
        """The (first) ``group_by(...).agg(...)`` step, if any."""
        return next((s for s in self.steps if isinstance(s, GroupByAgg)), None)
