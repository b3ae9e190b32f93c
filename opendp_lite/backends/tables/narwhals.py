"""The narwhals engine: a :class:`~opendp_lite.table.nodes.FramePlan` on pandas and pyarrow frames.

The frame is taken through narwhals to Apache Arrow once, only the columns the plan reads
(a pandas frame's numpy float columns read NaN as null there, as ``pl.from_pandas`` does),
every expression node is evaluated with ``pyarrow.compute`` by Polars' rules (written out in
``tests/backends/tables/_reference.py``, which the tests compare against), and every exact
aggregate of the plan comes from one Arrow group-by: int64 sums and non-null counts per
group.  Where Arrow's own kernels differ from Polars the node is built from kernels that
agree:

* comparisons order NaN above every number and equal to itself, ``clip`` keeps NaN;
* integer ``//`` and ``%`` floor (signs as in Python), and give null for a zero divisor;
  float ``%`` is ``a - b·floor(a / b)``;
* a float sum is summed in grid units (:class:`~opendp_lite.table.nodes.GridSum`):
  ``x · 2^p`` clipped to the scaled bounds (exact: scaling by a power of two), truncated to
  int64; bounds too large for ``2^53`` grid units are summed per value in Python (exact,
  slow);
* an int64 sum is taken as it is when no group's rows times the most one row adds reach
  ``2^63`` (checked on the group-by's own row counts; Arrow's sums wrap silently), else it is
  summed again in digits whose totals cannot pass int64, and read back as Python ints;
* integer, boolean and string keys are ordered by Arrow (numbers by value, strings by code
  point, null last: :mod:`opendp_lite._order`'s total order on them); other keys are merged
  and ordered in Python by :mod:`opendp_lite._order` (``-0.0`` and ``0.0`` are one group,
  NaN one group, null one group, as in Polars).

Nothing raised by Arrow while a plan runs reaches the caller: it is replaced by a
:class:`~opendp_lite.errors.FailedFunction` naming the step.  Polars objects are never claimed
(the Polars engine owns them).

>>> import pyarrow as pa
>>> from opendp_lite.table import nodes as N
>>> t = pa.table({"g": ["b", "a", "b"], "x": [1.5, 2.0, None]})
>>> plan = N.FramePlan((), (("n", N.Length()), ("s", N.GridSum(N.Col("x"), 0.0, 2.0, 1))),
...                    by=(N.Col("g"),))
>>> ENGINE.run(t, plan)
TableResult(keys={'g': ['a', 'b']}, values={'n': [1, 2], 's': [4, 3]})
"""

from __future__ import annotations

import datetime as _dt
import importlib
import math
import sys
from decimal import Decimal
from fractions import Fraction
from typing import Any, Union

from ... import _order
from ... import _truncation as K
from ...errors import FailedFunction, NotImplementedForType
from ...table import nodes as N
from . import TableResult, register, truncation_rows_mask

__all__ = [
    "ENGINE",
    "NarwhalsEngine",
    "Partial",
    "arrow_of_pandas",
    "canon",
    "columns_read",
    "exact_float_sum",
    "finish",
    "kept_columns",
    "pandas_dtype_name",
    "run_arrow",
    "stable_aggregate",
    "stable_group_rows",
    "stable_grouped_rows",
]


class _Refused(Exception):
    """A plan shape this engine does not run (raised as FailedFunction, data-independent)."""


def _pa() -> Any:
    return importlib.import_module("pyarrow")  # optional, untyped: imported when used


def _pc() -> Any:
    return importlib.import_module("pyarrow.compute")


# ----------------------------------------------------------------------------------------------
# Schemas: Polars dtype names from declared dtypes only


def arrow_dtype_name(t: Any) -> N.DType:
    """The Polars name of an Arrow type."""
    pa = _pa()
    ty = pa.types
    for bits in (8, 16, 32, 64):
        if t == getattr(pa, f"int{bits}")():
            return f"Int{bits}"
        if t == getattr(pa, f"uint{bits}")():
            return f"UInt{bits}"
    if t == pa.float32():
        return "Float32"
    if t == pa.float64():
        return "Float64"
    if ty.is_boolean(t):
        return "Boolean"
    if ty.is_string(t) or ty.is_large_string(t) or ty.is_string_view(t):
        return "String"
    if ty.is_dictionary(t) and (ty.is_string(t.value_type) or ty.is_large_string(t.value_type)):
        return "Categorical"
    if ty.is_date32(t):
        return "Date"
    if ty.is_timestamp(t):
        return ("Datetime", t.unit, t.tz)
    if ty.is_time(t):
        return "Time"
    if ty.is_duration(t):
        return ("Duration", t.unit)
    if ty.is_null(t):
        return "Null"
    raise NotImplementedForType(
        f"the Arrow type {t} has no Polars counterpart the table API reads; cast the column "
        "to a number, string, boolean or date/time type first"
    )


def pandas_dtype_name(dtype: Any) -> N.DType:
    """The Polars name of a pandas dtype, read from the dtype alone.

    An ``object`` column is refused: its type would have to be read from its values.  Strings
    must be a ``StringDtype`` (pandas 3's default ``str``) or an Arrow string dtype.
    """
    import numpy as np

    pd: Any = importlib.import_module("pandas")
    if isinstance(dtype, pd.CategoricalDtype):
        return "Categorical"
    if isinstance(dtype, pd.StringDtype):
        return "String"
    if isinstance(dtype, pd.ArrowDtype):
        return arrow_dtype_name(dtype.pyarrow_dtype)
    if isinstance(dtype, pd.DatetimeTZDtype):
        return ("Datetime", dtype.unit, str(dtype.tz))
    if isinstance(dtype, pd.BooleanDtype):
        return "Boolean"
    if isinstance(dtype, pd.api.extensions.ExtensionDtype) and hasattr(dtype, "numpy_dtype"):
        return pandas_dtype_name(dtype.numpy_dtype)  # Int64, Float64, ... (masked)
    if isinstance(dtype, np.dtype):
        k = dtype.kind
        if k == "b":
            return "Boolean"
        if k in "iu":
            return f"{'Int' if k == 'i' else 'UInt'}{dtype.itemsize * 8}"
        if k == "f" and dtype.itemsize in (4, 8):
            return f"Float{dtype.itemsize * 8}"
        if k == "M":
            return ("Datetime", np.datetime_data(dtype)[0], None)
        if k == "m":
            return ("Duration", np.datetime_data(dtype)[0])
    raise NotImplementedForType(
        f"the pandas dtype {dtype} is not read by the table API (an object column's type "
        "would have to be read from its values); convert it with .astype('string') for "
        "text, or to a numeric, boolean, categorical or datetime dtype"
    )


def arrow_of_pandas(df: Any, columns: list[str] | None = None) -> Any:
    """A pandas frame as an Arrow table (numpy float NaN becomes null, as in
    ``pl.from_pandas``), of ``columns`` only when given; object columns are refused by their
    dtype."""
    for c, d in df.dtypes.items():
        pandas_dtype_name(d)
        if not isinstance(c, str):
            raise NotImplementedForType(
                f"column names must be strings, got {type(c).__name__}; rename the columns"
            )
    return _pa().Table.from_pandas(df, columns=columns, preserve_index=False)


def _arrow(x: Any, columns: list[str] | None = None) -> Any:
    """The Arrow table of an owned frame, of ``columns`` only when given (dictionary columns
    decoded to strings)."""
    pa = _pa()
    if _is_narwhals(x):
        import narwhals as nw

        x = nw.to_native(x)
    if isinstance(x, pa.Table):
        t = x if columns is None else x.select(columns)
    else:
        t = arrow_of_pandas(x, columns)
    cols = []
    for col in t.columns:
        if pa.types.is_dictionary(col.type):
            col = col.cast(pa.large_string())
        cols.append(col)
    return pa.table(cols, names=t.column_names)


# ----------------------------------------------------------------------------------------------
# Expressions by Polars' rules, on Arrow arrays


def _is_float(a: Any) -> bool:
    return bool(_pa().types.is_floating(a.type))


def _is_int(a: Any) -> bool:
    return bool(_pa().types.is_integer(a.type))


def _lit(v: Any, dtype: N.DType | None = None) -> Any:
    pa = _pa()
    if dtype is not None:
        return pa.scalar(v, type=_arrow_type(dtype))
    if v is None:
        return pa.scalar(None, type=pa.null())
    if isinstance(v, bool):
        return pa.scalar(v, pa.bool_())
    if isinstance(v, int):
        return pa.scalar(v, pa.int64() if -(2**63) <= v < 2**63 else pa.uint64())
    if isinstance(v, float):
        return pa.scalar(v, pa.float64())
    if isinstance(v, str):
        return pa.scalar(v, pa.large_string())
    return pa.scalar(v)


def _arrow_type(dtype: N.DType) -> Any:
    pa = _pa()
    simple = {
        "Float64": pa.float64(),
        "Float32": pa.float32(),
        "Boolean": pa.bool_(),
        "String": pa.large_string(),
        "Categorical": pa.large_string(),
        "Date": pa.date32(),
        "Time": pa.time64("us"),
        "Null": pa.null(),
    }
    if isinstance(dtype, str):
        if dtype in simple:
            return simple[dtype]
        for sign, prefix in ((True, "Int"), (False, "UInt")):
            if dtype.startswith(prefix) and dtype[len(prefix) :].isdigit():
                bits = int(dtype[len(prefix) :])
                return getattr(pa, f"{'int' if sign else 'uint'}{bits}")()
    if isinstance(dtype, tuple) and dtype:
        if dtype[0] == "Datetime":
            unit = dtype[1] if len(dtype) > 1 and dtype[1] else "us"
            tz = dtype[2] if len(dtype) > 2 else None
            return pa.timestamp(unit, tz)
        if dtype[0] in ("Enum", "Categorical"):
            return pa.large_string()
        if dtype[0] == "Duration":
            return pa.duration(dtype[1] if len(dtype) > 1 else "us")
    raise _Refused(f"the dtype {dtype!r}")


def _null_if(cond: Any, a: Any) -> Any:
    """``a`` with null where ``cond`` holds (a null ``cond`` keeps ``a``)."""
    pc = _pc()
    return pc.if_else(pc.fill_null(cond, False), _pa().scalar(None, a.type), a)


def _either_null(a: Any, b: Any) -> Any:
    pc = _pc()
    return pc.or_(pc.is_null(a), pc.is_null(b))


def _nan(a: Any) -> Any:
    """is NaN (False for non-floats, null for null)."""
    pc = _pc()
    if _is_float(a):
        return pc.is_nan(a)
    return pc.if_else(pc.is_null(a), _pa().scalar(None, _pa().bool_()), False)


def _lt(a: Any, b: Any) -> Any:
    """``a < b`` with NaN the largest value (null if either side is null)."""
    pc = _pc()
    if not (_is_float(a) or _is_float(b)):
        return pc.less(a, b)
    an, bn = _nan(a), _nan(b)
    core = pc.and_kleene(pc.invert(an), pc.or_kleene(pc.less(a, b), bn))
    return _null_if(_either_null(a, b), pc.fill_null(core, False))


def _eq(a: Any, b: Any) -> Any:
    pc = _pc()
    if not (_is_float(a) or _is_float(b)):
        return pc.equal(a, b)
    core = pc.or_kleene(pc.equal(a, b), pc.and_kleene(_nan(a), _nan(b)))
    return _null_if(_either_null(a, b), pc.fill_null(core, False))


def _as_float(a: Any) -> Any:
    pa, pc = _pa(), _pc()
    if _is_float(a):
        return a
    return pc.cast(a, pa.float64(), safe=False)


def _floordiv(a: Any, b: Any) -> Any:
    pa, pc = _pa(), _pc()
    if _is_float(a) or _is_float(b):
        return pc.floor(pc.divide(_as_float(a), _as_float(b)))
    zero = pc.fill_null(pc.equal(b, 0), False)
    bs = pc.if_else(zero, pa.scalar(1, b.type), b)
    q = pc.divide(a, bs)  # truncates toward zero
    r = pc.subtract(a, pc.multiply(q, bs))
    fix = pc.and_(pc.not_equal(r, 0), pc.not_equal(pc.less(r, 0), pc.less(bs, 0)))
    q = pc.subtract(q, pc.cast(pc.fill_null(fix, False), q.type))
    return _null_if(zero, q)


def _mod(a: Any, b: Any) -> Any:
    pc = _pc()
    if _is_float(a) or _is_float(b):
        fa, fb = _as_float(a), _as_float(b)
        return pc.subtract(fa, pc.multiply(fb, pc.floor(pc.divide(fa, fb))))
    q = _floordiv(a, b)  # null where b == 0
    bs = pc.cast(b, q.type) if hasattr(b, "type") else b
    return pc.subtract(pc.cast(a, q.type), pc.multiply(q, bs))


def _binary(op: str, a: Any, b: Any) -> Any:
    pa, pc = _pa(), _pc()
    if op in ("+", "-", "*"):
        strings = pa.types.is_large_string(a.type) or pa.types.is_string(a.type)
        if op == "+" and strings:
            return pc.binary_join_element_wise(a, b, "")
        return {"+": pc.add, "-": pc.subtract, "*": pc.multiply}[op](a, b)
    if op == "/":
        if pa.types.is_float32(a.type) and pa.types.is_float32(b.type):
            return pc.divide(a, b)
        return pc.divide(_as_float(a), _as_float(b))
    if op == "//":
        return _floordiv(a, b)
    if op == "%":
        return _mod(a, b)
    if op == "==":
        return _eq(a, b)
    if op == "!=":
        return pc.invert(_eq(a, b))
    if op == "<":
        return _lt(a, b)
    if op == ">":
        return _lt(b, a)
    if op == "<=":
        return pc.invert(_lt(b, a))
    if op == ">=":
        return pc.invert(_lt(a, b))
    boolean = pa.types.is_boolean(a.type) or pa.types.is_null(a.type)
    if op == "&":
        return pc.and_kleene(a, b) if boolean else pc.bit_wise_and(a, b)
    if op == "|":
        return pc.or_kleene(a, b) if boolean else pc.bit_wise_or(a, b)
    if op == "^":
        return pc.xor(a, b) if boolean else pc.bit_wise_xor(a, b)
    raise _Refused(f"the operator {op!r}")


def _unary(op: str, a: Any) -> Any:
    pa, pc = _pa(), _pc()
    if op == "is_null":
        return pc.is_null(a)
    if op == "is_not_null":
        return pc.is_valid(a)
    if op == "is_nan":
        return _nan(a)
    if op == "is_not_nan":
        return pc.invert(_nan(a))
    if op == "is_finite":
        if _is_float(a):
            return pc.is_finite(a)
        return pc.invert(_nan(a))
    if op == "is_infinite":
        if _is_float(a):
            return pc.is_inf(a)
        return _nan(a)
    if op == "not":
        return pc.invert(a) if pa.types.is_boolean(a.type) else pc.bit_wise_not(a)
    if op == "neg":
        return pc.negate(a)
    if op == "abs":
        return pc.abs(a)
    if op == "to_physical":
        t = a.type
        if pa.types.is_date32(t):
            return pc.cast(a, pa.int32())
        if pa.types.is_timestamp(t) or pa.types.is_duration(t):
            return pc.cast(a, pa.int64())
        if pa.types.is_time(t):
            return pc.cast(pc.cast(a, pa.time64("ns")), pa.int64())
        return a
    raise _Refused(f"the operation {op!r} in a row-by-row position")


_INT_RANGE = {
    f"{p}{b}": ((-(2 ** (b - 1)), 2 ** (b - 1) - 1) if p == "Int" else (0, 2**b - 1))
    for p in ("Int", "UInt")
    for b in (8, 16, 32, 64)
}


def float_text(v: float) -> str:
    """A float as Polars writes it when casting to String ('1.0', '1e-7', 'NaN', 'inf')."""
    if v != v:
        return "NaN"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    s = repr(v)
    if "e" in s:
        m, e = s.split("e")
        s = f"{m}e{int(e)}" if int(e) < 0 else f"{m}e+{int(e)}"
    return s


def break_text(v: Any) -> str:
    """A break of ``cut`` as Polars labels it (Rust's ``Display``: no exponent, '1' for 1.0)."""
    f = float(v)
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    if f.is_integer():
        return str(int(f))
    return format(Decimal(repr(f)), "f")


def _cast(a: Any, dtype: N.DType, strict: bool) -> Any:
    """``a`` cast to ``dtype``, non-strict whatever ``strict`` says (as the Polars engine):
    a value that does not convert becomes null, so no record can make a plan fail."""
    strict = False
    pa, pc = _pa(), _pc()
    target = _arrow_type(dtype)
    src = a.type
    if src == target or (dtype in ("String", "Categorical") and pa.types.is_large_string(src)):
        return a
    name = dtype if isinstance(dtype, str) else dtype[0]
    if name in _INT_RANGE:
        lo, hi = _INT_RANGE[name]
        if pa.types.is_floating(src):
            ok = pc.and_(pc.is_finite(a), _truncates_into(a, lo, hi))
            ok = pc.fill_null(ok, True)
            if strict and not pc.all(ok).as_py():
                raise _Failed()
            a = pc.trunc(_null_if(pc.invert(ok), a))
            return pc.cast(a, target, safe=False)
        if pa.types.is_integer(src):
            ok = pc.fill_null(_int_within(a, lo, hi), True)
            if strict and not pc.all(ok).as_py():
                raise _Failed()
            return pc.cast(_null_if(pc.invert(ok), a), target, safe=False)
        if pa.types.is_boolean(src):
            return pc.cast(a, target)
        if pa.types.is_string(src) or pa.types.is_large_string(src):
            return _parse(a, target, _int_parser(lo, hi), strict)
    if name in ("Float32", "Float64"):
        if pa.types.is_string(src) or pa.types.is_large_string(src):
            return _parse(a, target, _float_of_text, strict)
        return pc.cast(a, target, safe=False)
    if name in ("String", "Categorical"):
        if pa.types.is_floating(src):
            vals = [None if v is None else float_text(v) for v in a.to_pylist()]
            return pa.array(vals, pa.large_string())
        return pc.cast(a, target)
    if name == "Boolean":
        if pa.types.is_integer(src) or pa.types.is_floating(src):
            return pc.not_equal(a, 0)
    if pa.types.is_string(src) or pa.types.is_large_string(src):
        # Arrow's string casts fail on (and quote) the first value they cannot read:
        # parsed value by value instead, null where a value does not convert
        return _strptime(a, N.StrPTime(N.Lit(None), dtype, None))
    return pc.cast(a, target, safe=strict)


def _truncates_into(a: Any, lo: int, hi: int) -> Any:
    """``lo <= trunc(a) <= hi`` for finite floats (exact comparisons in binary64)."""
    pa, pc = _pa(), _pc()
    f = pa.float64()
    if abs(lo) < 2**53:
        low = pc.greater(a, pa.scalar(float(lo - 1), f))
    else:  # -2^63: no float lies strictly between -2^63 - 1 and -2^63
        low = pc.greater_equal(a, pa.scalar(float(lo), f))
    high = pc.less(a, pa.scalar(float(hi + 1), f))  # exact: hi + 1 is 2^k or below 2^53
    return pc.and_(low, high)


def _float_of_text(s: str) -> float:
    t = s.strip().lower()
    if t in ("nan", "+nan", "-nan"):
        return math.nan
    return float(s)


def _int_parser(lo: int, hi: int) -> Any:
    """``int`` of a string, a ``ValueError`` (so null) outside ``[lo, hi]``: the target's range,
    as Polars' non-strict cast gives null for "300" cast to Int8."""

    def parse(v: str) -> int:
        i = int(v)
        if not lo <= i <= hi:
            raise ValueError("out of range")  # caught by _parse: never shown
        return i

    return parse


def _parse(a: Any, target: Any, fn: Any, strict: bool) -> Any:
    """Strings parsed value by value (null where unparsable, or one data-free error)."""
    out: list[Any] = []
    for v in a.to_pylist():
        if v is None:
            out.append(None)
            continue
        try:
            out.append(fn(v))
        except ValueError:
            if strict:
                raise _Failed() from None
            out.append(None)
    try:
        return _pa().array(out, target)
    except (OverflowError, ValueError, TypeError):
        if strict:
            raise _Failed() from None
        raise


def _int_within(a: Any, lo: int, hi: int) -> Any:
    pa, pc = _pa(), _pc()
    t = a.type
    src_lo, src_hi = _INT_RANGE[arrow_dtype_name(t)]  # type: ignore[index]
    low = pc.greater_equal(a, pa.scalar(lo, t)) if lo > src_lo else pc.is_valid(a)
    high = pc.less_equal(a, pa.scalar(hi, t)) if hi < src_hi else pc.is_valid(a)
    return pc.and_(low, high)


class _Failed(Exception):
    """A data-dependent failure (a strict cast, replace_strict), raised without any value."""


def _clip(a: Any, lo: Any, hi: Any) -> Any:
    pa, pc = _pa(), _pc()
    out = a
    # a value equal to a bound is kept as it is (Polars keeps -0.0 under a bound of 0.0, where
    # Arrow's max_element_wise returns the bound)
    if lo is not None:
        b = pa.scalar(lo).cast(_bound_type(a, lo))
        out = pc.if_else(pc.less(out, b), b, pc.cast(out, b.type) if out.type != b.type else out)
    if hi is not None:
        b = pa.scalar(hi).cast(_bound_type(a, hi))
        out = pc.if_else(pc.greater(out, b), b, pc.cast(out, b.type) if out.type != b.type else out)
    if _is_float(a):
        out = pc.if_else(pc.fill_null(pc.is_nan(a), False), a, pc.cast(out, a.type))
    return out


def _bound_type(a: Any, v: Any) -> Any:
    pa = _pa()
    if isinstance(v, float) and not _is_float(a):
        return pa.float64()
    return a.type


def _cut(a: Any, e: N.Cut) -> Any:
    import numpy as np

    pa, pc = _pa(), _pc()
    breaks = [float(b) for b in e.breaks]
    if e.labels is not None:
        labels = list(e.labels)
    else:
        edges = ["-inf", *(break_text(b) for b in breaks), "inf"]
        lo_b, hi_b = ("[", ")") if e.left_closed else ("(", "]")
        labels = [f"{lo_b}{edges[i]}, {edges[i + 1]}{hi_b}" for i in range(len(edges) - 1)]
    if len(labels) != len(breaks) + 1:
        raise _Refused("cut with a number of labels other than breaks + 1")
    f = _as_float(a)
    missing = pc.fill_null(pc.or_(pc.is_null(f), pc.is_nan(f)), True)
    vals = pc.fill_null(f, 0.0).to_numpy(zero_copy_only=False)
    idx = np.searchsorted(np.asarray(breaks), vals, side="right" if e.left_closed else "left")
    out = pc.take(pa.array(labels, pa.large_string()), pa.array(idx))
    return _null_if(missing, out)


def _replace(a: Any, e: N.Replace, default: Any) -> Any:
    pa, pc = _pa(), _pc()
    old = pa.array(list(e.old))
    if old.type != a.type and not pa.types.is_null(old.type):
        old = old.cast(a.type)
    idx = pc.index_in(a, value_set=old, skip_nulls=False)
    if e.return_dtype is not None:
        new_t = _arrow_type(e.return_dtype)
    elif not e.strict:
        new_t = a.type
    else:
        new_t = pa.array(list(e.new)).type
    new = pa.array(list(e.new)).cast(new_t)
    hit = pc.is_valid(idx)
    taken = pc.take(new, pc.fill_null(idx, 0)) if len(new) else pa.nulls(len(a), new_t)
    if not e.strict:
        rest = a if a.type == new_t else pc.cast(a, new_t)
    elif default is not None:
        rest = default.cast(new_t) if isinstance(default, pa.Scalar) else pc.cast(default, new_t)
    else:  # an unmatched value is null (as on the Polars engine): no record fails a plan
        rest = pa.scalar(None, new_t)
    return pc.if_else(hit, taken, rest)


_DT_TYPES = {
    "year": "Int32",
    "iso_year": "Int32",
    "quarter": "Int8",
    "month": "Int8",
    "week": "Int8",
    "weekday": "Int8",
    "day": "Int8",
    "ordinal_day": "Int16",
    "hour": "Int8",
    "minute": "Int8",
    "second": "Int8",
    "millisecond": "Int32",
    "microsecond": "Int32",
    "nanosecond": "Int32",
}


def _dt_part(a: Any, part: str) -> Any:
    pa, pc = _pa(), _pc()
    if part == "date":
        return pc.cast(a, pa.date32())
    if part == "time":
        return pc.cast(a, pa.time64("us"))
    fns = {
        "year": pc.year,
        "iso_year": pc.iso_year,
        "quarter": pc.quarter,
        "month": pc.month,
        "week": pc.iso_week,
        "day": pc.day,
        "ordinal_day": pc.day_of_year,
        "hour": pc.hour,
        "minute": pc.minute,
        "second": pc.second,
        "millisecond": pc.millisecond,
    }
    if part == "weekday":
        out = pc.day_of_week(a, count_from_zero=False, week_start=1)
    elif part == "microsecond":
        out = pc.add(pc.multiply(pc.millisecond(a), 1000), pc.microsecond(a))
    elif part == "nanosecond":
        us = pc.add(pc.multiply(pc.millisecond(a), 1000), pc.microsecond(a))
        out = pc.add(pc.multiply(us, 1000), pc.nanosecond(a))
    else:
        out = fns[part](a)
    return pc.cast(out, _arrow_type(_DT_TYPES[part]))


def _strptime(a: Any, e: N.StrPTime) -> Any:
    pa = _pa()
    target = _arrow_type(e.dtype)
    out: list[Any] = []
    for v in a.to_pylist():
        if v is None:
            out.append(None)
            continue
        try:
            if e.format is None:
                d: Any = _dt.datetime.fromisoformat(v)
            else:
                d = _dt.datetime.strptime(v, e.format)
        except ValueError:
            out.append(None)
            continue
        if pa.types.is_date32(target):
            d = d.date()
        elif pa.types.is_time(target):
            d = d.time()
        out.append(d)
    return pa.array(out, target)


def _length_changing(e: N.Expr) -> bool:
    return isinstance(e, N.FilterExpr) or (
        isinstance(e, N.Unary) and e.op in ("drop_nulls", "drop_nans")
    )


class _Eval:
    """Evaluates expressions on the columns of an Arrow table of ``n`` rows."""

    def __init__(self, cols: dict[str, Any], n: int) -> None:
        self.cols = cols
        self.n = n

    def full(self, e: N.Expr) -> Any:
        """``e`` as an array of ``n`` values (a literal is broadcast)."""
        pa = _pa()
        v = self._broadcast(self.expr(e))
        if isinstance(v, pa.ChunkedArray):
            return v.combine_chunks()
        return v

    def expr(self, e: N.Expr, sub: dict[int, Any] | None = None) -> Any:
        if sub is not None and id(e) in sub:
            return sub[id(e)]
        if isinstance(e, N.Col):
            if e.name not in self.cols:
                raise _Refused(f"the column {e.name!r}, which the frame does not have")
            return self.cols[e.name]
        if isinstance(e, N.Lit):
            return _lit(e.value, e.dtype)
        if isinstance(e, N.Alias):
            return self.expr(e.expr, sub)
        if _length_changing(e):
            raise _Refused("a filter or drop_nulls/drop_nans in a row-by-row position")
        if isinstance(e, N.Binary):
            left, right = self.expr(e.left, sub), self.expr(e.right, sub)
            if isinstance(left, _pa().Scalar) and isinstance(right, _pa().Scalar):
                left = self._broadcast(left)  # the kernels broadcast a scalar against an array
            return _binary(e.op, left, right)
        if isinstance(e, N.Unary):
            return _unary(e.op, self._arr(e.expr, sub))
        if isinstance(e, N.Cast):
            return _cast(self._arr(e.expr, sub), e.dtype, e.strict)
        if isinstance(e, N.Clip):
            return _clip(self._arr(e.expr, sub), e.lower, e.upper)
        if isinstance(e, N.FillNull):
            a, v = self._arr(e.expr, sub), self.expr(e.value, sub)
            return _fill_null(a, v)
        if isinstance(e, N.FillNan):
            a = self._arr(e.expr, sub)
            if not _is_float(a):
                return a
            v = self.expr(e.value, sub)
            v = v.cast(a.type) if not _is_float(v) else v
            return _pc().if_else(_pc().fill_null(_pc().is_nan(a), False), v, a)
        if isinstance(e, N.Cut):
            return _cut(self._arr(e.expr, sub), e)
        if isinstance(e, N.Replace):
            d = None if e.default is None else self.expr(e.default, sub)
            return _replace(self._arr(e.expr, sub), e, d)
        if isinstance(e, N.StrPTime):
            return _strptime(self._arr(e.expr, sub), e)
        if isinstance(e, N.DtPart):
            return _dt_part(self._arr(e.expr, sub), e.part)
        raise _Refused(f"the node {type(e).__name__}")

    def _arr(self, e: N.Expr, sub: dict[int, Any] | None) -> Any:
        """``e`` as an array (a literal broadcast to every row)."""
        return self._broadcast(self.expr(e, sub))

    def _broadcast(self, v: Any) -> Any:
        pa = _pa()
        if isinstance(v, pa.Scalar):
            return pa.array([v.as_py()] * self.n, v.type)
        return v

    def masked(self, e: N.Expr) -> tuple[Any, Any]:
        """``(values, keep)``: ``e``'s values on every row and the rows it keeps (``keep``
        None: all rows), for the length-changing nodes under an aggregate."""
        pc = _pc()
        if isinstance(e, N.FilterExpr):
            v, m = self.masked(e.expr)
            if m is not None:
                raise _Refused("a filter of a filtered expression")
            keep = pc.fill_null(self.full(e.predicate), False)
            return v, keep
        if isinstance(e, N.Unary) and e.op in ("drop_nulls", "drop_nans"):
            v, m = self.masked(e.expr)
            ok = pc.is_valid(v) if e.op == "drop_nulls" else pc.fill_null(pc.invert(_nan(v)), True)
            return v, ok if m is None else pc.and_(m, ok)
        if isinstance(e, (N.Col, N.Lit, N.Len)) or not _has_length_change(e):
            return self.full(e), None
        kids = N.children(e)
        inner = [k for k in kids if _has_length_change(k)]
        if len(inner) != 1 or any(not isinstance(k, N.Lit) for k in kids if k is not inner[0]):
            raise _Refused("an expression combining a filtered input with another column")
        v, m = self.masked(inner[0])
        out = self.expr(e, {id(inner[0]): v})
        return out, m


def _has_length_change(e: N.Expr) -> bool:
    return _length_changing(e) or any(_has_length_change(k) for k in N.children(e))


def _fill_null(a: Any, v: Any) -> Any:
    pa, pc = _pa(), _pc()
    if pa.types.is_null(a.type):
        return v
    if v.type != a.type:
        if _is_int(a) and isinstance(v, pa.Scalar) and pa.types.is_floating(v.type):
            a = pc.cast(a, pa.float64())
        v = v.cast(a.type)
    return pc.coalesce(a, v)


# ----------------------------------------------------------------------------------------------
# Exact aggregation


def canon(v: Any) -> tuple[Any, ...]:
    """The merge key of a cell: null, NaN and each value class of ``_order.group_key``
    (``-0.0`` and ``0.0`` one key, as in Polars)."""
    if v is None:
        return (0,)
    if isinstance(v, float) and v != v:
        return (1,)
    return (2, _order.group_key(v))


#: the largest int64 total plus one: a column's per-group sum is exact in int64 when the rows
#: of the largest group times the largest value one row adds is below it
_I64 = 1 << 63


def _one_chunk(c: Any) -> Any:
    """A column as one Arrow array where it has one chunk (no copy), else as it is."""
    if isinstance(c, _pa().ChunkedArray) and c.num_chunks == 1:
        return c.chunk(0)
    return c


def _values(v: Any, dtype: Any) -> Any:
    """The values buffer of a primitive Arrow array as a numpy view (no copy): a null's slot
    holds whatever the buffer holds there, so the caller keeps ``v``'s validity."""
    import numpy as np

    if len(v) == 0:
        return np.empty(0, dtype=dtype)
    buf = v.buffers()[1]
    return np.frombuffer(buf, dtype=dtype, count=len(v) + v.offset)[v.offset :]


def _with_validity(k: Any, v: Any, data: Any = None) -> Any:
    """The int64 values ``k`` (a numpy array, or the Arrow buffer ``data`` it views) as an
    Arrow array null exactly where ``v`` is."""
    pa = _pa()
    data = pa.py_buffer(k) if data is None else data
    if v.null_count == 0:
        validity = None
    elif v.offset == 0:
        validity = v.buffers()[0]
    else:  # a boolean array's values are a bitmap laid out as a validity bitmap
        valid = _pc().is_valid(v)
        if valid.offset != 0:
            return pa.array(k, mask=_pc().is_null(v).to_numpy(zero_copy_only=False))
        validity = valid.buffers()[1]
    return pa.Array.from_buffers(pa.int64(), len(v), [validity, data], null_count=v.null_count)


def _pooled(n: int) -> tuple[Any, Any]:
    """A new buffer of ``n`` int64 values from Arrow's memory pool (memory the pool reuses
    from call to call, where fresh numpy memory is faulted in page by page), and its numpy
    view."""
    import numpy as np

    buf = _pa().allocate_buffer(8 * n)
    return buf, np.frombuffer(buf, dtype=np.int64, count=n)


#: rows per chunk of the grid-unit pass (its temporaries stay in the CPU's cache), and the
#: rows per thread from which the pass is shared among Arrow's CPU threads
_CHUNK = 1 << 16
_PER_THREAD = 1 << 20


def _grid_units(x: Any, s1: float, s2: float, lo_s: float, hi_s: float, out: Any) -> None:
    """``out = trunc(clip(x · s1 · s2, lo_s, hi_s))`` (numpy int64), a NaN giving 0, chunk by
    chunk."""
    import numpy as np

    n = len(x)
    tmp = np.empty(min(n, _CHUNK))
    multiply, clip, copyto, smallest = np.multiply, np.clip, np.copyto, np.minimum.reduce
    with np.errstate(all="ignore"):  # a null's slot may hold anything (its result is unread)
        for a in range(0, n, _CHUNK):
            b = min(n, a + _CHUNK)
            t = tmp[: b - a]
            multiply(x[a:b], s1, out=t)
            if s2 != 1.0:
                t *= s2
            clip(t, lo_s, hi_s, out=t)  # NaN stays NaN, the rest is finite
            # NaN iff some value is (minimum propagates NaN): a read-only reduction, cheaper
            # than a sum or a mask when there is none
            if math.isnan(smallest(t)):
                t[np.isnan(t)] = 0.0  # NaN adds 0
            copyto(out[a:b], t, casting="unsafe")  # trunc, exact: |t| < 2^53


def _grid_units_parallel(
    x: Any, s1: float, s2: float, lo_s: float, hi_s: float, out: Any, parallel: bool
) -> None:
    """:func:`_grid_units` on slices of at least ``_PER_THREAD`` rows in Arrow's CPU threads
    (numpy releases the GIL), when ``parallel``."""
    n = len(x)
    threads = min(_pa().cpu_count(), n // _PER_THREAD) if parallel else 1
    if threads < 2:
        _grid_units(x, s1, s2, lo_s, hi_s, out)
        return
    from concurrent.futures import ThreadPoolExecutor

    step = -(-n // threads)
    with ThreadPoolExecutor(threads - 1) as ex:  # the first slice in this thread
        done = [
            ex.submit(_grid_units, x[a : a + step], s1, s2, lo_s, hi_s, out[a : a + step])
            for a in range(step, n, step)
        ]
        _grid_units(x[:step], s1, s2, lo_s, hi_s, out[:step])
        for f in done:
            f.result()


def _parts(k: Any, bound: int, width: int) -> list[tuple[Any, int, int]]:
    """``k`` (int64, ``|k| <= bound``) as ``(part, shift, part_bound)`` with
    ``k = Σ part << shift``: the low parts are the ``width``-bit digits (``0 <= part <
    2^width``), the top part ``k >> shift`` (floor) has ``|part| <= (bound >> shift) + 1 <
    2^width``."""
    import numpy as np

    out = []
    mask = (1 << width) - 1
    s = 0
    while (bound >> s) + 1 >= 1 << width:
        out.append((np.bitwise_and(np.right_shift(k, s), mask), s, mask))
        s += width
    out.append((np.right_shift(k, s), s, (bound >> s) + 1))
    return out


class _Plan:
    """The per-row columns the group-by aggregates, and how to read each aggregate back.

    ``columns``: name -> (Arrow array, ``"sum"`` | ``"count"``).  ``readers``: one per
    aggregate: ``("len", None)``, ``("all", None)``/``("none", None)`` (a count or null
    count of a column without nulls: the group's rows, or 0), ``("count", name)`` (its
    non-null values), ``("nulls", name)`` (rows minus non-null values), ``("sum", [names])``
    (boolean columns),
    ``("isum", (name, bound))`` (an int64 column, no row adding more than ``bound`` in
    absolute value; split in digits when a group's total could pass int64),
    ``("quantile", [(below, above)...])``, and the ones read row by row in Python:
    ``("distinct", (values, keep))``, ``("python", (values, fn))``.
    """

    def __init__(self) -> None:
        self.columns: dict[str, tuple[Any, str]] = {}
        self.readers: list[tuple[str, Any]] = []

    def add(self, col: Any, op: str = "sum") -> str:
        name = f"__a{len(self.columns)}"
        self.columns[name] = (col, op)
        return name


def _prepare(
    ev: _Eval, plan: N.FramePlan, n: int, parallel: bool = True
) -> tuple[_Plan, list[Any]]:
    """The columns of every aggregate; python-side readers where needed."""
    pc = _pc()
    out = _Plan()
    for _, agg in plan.aggregates:
        if isinstance(agg, N.Length):
            out.readers.append(("len", None))
            continue
        v, m = ev.masked(agg.expr)
        if isinstance(agg, N.CountValid) or isinstance(agg, N.NullCount):
            if m is None and v.null_count == 0:  # every row: the group's rows, or none
                kind = "all" if isinstance(agg, N.CountValid) else "none"
                out.readers.append((kind, None))
                continue
            if m is None:  # Arrow's count reads the validity bitmap only
                kind = "count" if isinstance(agg, N.CountValid) else "nulls"
                out.readers.append((kind, out.add(v, "count")))
                continue
            test = pc.is_valid(v) if isinstance(agg, N.CountValid) else pc.is_null(v)
            out.readers.append(("sum", [out.add(pc.and_(test, m))]))  # booleans: 1 bit a row
            continue
        if m is not None:
            v = _null_if(pc.invert(m), v)
        if isinstance(agg, N.NUnique):
            out.readers.append(("distinct", (v, m)))
            continue
        if isinstance(agg, N.QuantileCounts):
            if _is_float(v):  # NaN is in neither count, as null (the Polars engine's rule)
                v = _null_if(pc.is_nan(v), v)
            cols = []
            for c in agg.candidates:
                cs = _lit(c)
                # boolean columns (Arrow sums them as counts): 1 bit a row and candidate;
                # no NaN on either side (v's are null now): Arrow's own comparison
                lt = _lt if isinstance(c, float) and c != c else pc.less
                cols.append((out.add(lt(v, cs)), out.add(lt(cs, v))))
            out.readers.append(("quantile", cols))
            continue
        if isinstance(agg, N.IntSum):
            out.readers.append(_int_sum(out, v, agg, n))
            continue
        if isinstance(agg, N.GridSum):
            out.readers.append(_grid_sum(out, v, agg, n, parallel))
            continue
        raise _Refused(f"the aggregate {type(agg).__name__}")
    return out, []


def _int_sum(out: _Plan, v: Any, agg: N.IntSum, n: int) -> tuple[str, Any]:
    pa, pc = _pa(), _pc()
    lo, hi = int(agg.lower), int(agg.upper)
    if pa.types.is_boolean(v.type):
        v = pc.cast(v, pa.int64())
    if not pa.types.is_integer(v.type):
        raise _Refused("an integer sum of a non-integer column")
    bound = max(abs(lo), abs(hi))
    if pa.types.is_uint64(v.type) or bound >= 2**62:
        return ("python", (v, lambda x: min(max(int(x), lo), hi)))
    import numpy as np

    v = _one_chunk(pc.cast(v, pa.int64()))  # lossless: every integer type but UInt64
    if isinstance(v, pa.ChunkedArray):
        v = v.combine_chunks()
    data, k = _pooled(len(v))
    np.clip(_values(v, np.int64), lo, hi, out=k)  # a null's slot: unread (null)
    return ("isum", (out.add(_with_validity(k, v, data)), bound))


def _grid_sum(out: _Plan, v: Any, agg: N.GridSum, n: int, parallel: bool = True) -> tuple[str, Any]:
    pa, pc = _pa(), _pc()
    lo, hi, p = float(agg.lower), float(agg.upper), int(agg.p)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise _Refused("a grid sum with infinite bounds")
    if pa.types.is_boolean(v.type) or pa.types.is_integer(v.type):
        v = pc.cast(v, pa.float64(), safe=False)
    if not pa.types.is_floating(v.type):
        raise _Refused("a float sum of a non-numeric column")
    v = _one_chunk(pc.cast(v, pa.float64()))
    if isinstance(v, pa.ChunkedArray):
        v = v.combine_chunks()
    bound = max(Fraction(abs(lo)), Fraction(abs(hi))) * Fraction(2) ** p
    if bound >= 2**53:  # grid units beyond int64-safe floats: per value in Python
        v = _null_if(pc.is_nan(v), v)  # NaN skipped, as nulls
        v = pc.min_element_wise(pc.max_element_wise(v, lo, skip_nulls=False), hi, skip_nulls=False)
        return ("python", (v, lambda x: math.trunc(math.ldexp(x, p))))
    import numpy as np

    s1, s2 = (
        (math.ldexp(1.0, 1000), math.ldexp(1.0, p - 1000))
        if p > 1000
        else (math.ldexp(1.0, p), 1.0)
    )
    # scaled first, then clipped to the scaled bounds: the same numbers as clipping first,
    # as scaling by a power of two is monotone and exact wherever the clip keeps a value
    # (an overflow to inf is clipped to the top; a product rounded below 2^-1022 truncates
    # to 0 either way)
    lo_s, hi_s = lo * s1 * s2, hi * s1 * s2
    data, k = _pooled(len(v))
    _grid_units_parallel(_values(v, np.float64), s1, s2, lo_s, hi_s, k, parallel)
    return ("isum", (out.add(_with_validity(k, v, data)), math.floor(bound)))


def _zero(agg: N.ExactAgg) -> Any:
    if isinstance(agg, N.NUnique):
        return set()
    if isinstance(agg, N.QuantileCounts):
        k = len(agg.candidates)
        return ([0] * k, [0] * k)
    return 0


def _rows_by_key(keys: list[list[Any]], n: int) -> list[tuple[Any, ...]]:
    return [tuple(canon(col[i]) for col in keys) for i in range(n)] if keys else [()] * n


def run_arrow(table: Any, plan: N.FramePlan, *, parallel: bool = True) -> Partial:
    """The plan's partial answer on one Arrow table: each group's labels and aggregates
    (``NUnique`` as the set of its canonical values, so partials of several tables merge).
    ``parallel``: a long grid sum's per-row pass may use Arrow's CPU threads (False where
    the caller runs tables in parallel already, as Dask does).

    Raises:
        FailedFunction: naming the step where Arrow failed, never a value.
    """
    where = "reading the frame"
    failure: str | None = None
    try:
        cols = {name: _one_chunk(table.column(name)) for name in table.column_names}
        n = table.num_rows
        for i, step in enumerate(plan.steps):
            where = f"step {i} ({type(step).__name__})"
            cols, n = _step(cols, n, step)
        ev = _Eval(cols, n)
        where = "the group keys"
        keys = [ev.full(e) for e in plan.by] if plan.by is not None else []
        where = "the aggregates"
        prep, _ = _prepare(ev, plan, n, parallel)
        where = "the group-by"
        return _aggregate(keys, prep, plan, n)
    except (_Failed, _Refused, ArithmeticError, ValueError, TypeError, LookupError) as e:
        failure = f": this engine does not run {e.args[0]}" if isinstance(e, _Refused) else ""
    except Exception as e:  # pyarrow's own errors (ArrowInvalid, ArrowNotImplementedError)
        if type(e).__module__.split(".")[0] not in ("pyarrow", "narwhals"):
            raise
        failure = ""
    # raised outside the handler: no library message (which may quote a value) is chained
    raise FailedFunction(f"the table engine failed at {where}{failure}")


def _step(cols: dict[str, Any], n: int, step: N.Step) -> tuple[dict[str, Any], int]:
    pc = _pc()
    ev = _Eval(cols, n)
    if isinstance(step, N.FilterRows):
        keep = pc.fill_null(ev.full(step.predicate), False)
        out = {k: pc.filter(v, keep) for k, v in cols.items()}
        return out, int(pc.sum(pc.cast(keep, _pa().int64())).as_py() or 0)
    if isinstance(step, N.GroupAgg):
        return _group_agg_arrow(cols, n, step)
    if isinstance(step, (N.TruncateRows, N.TruncateGroups)):
        keep = _truncation_mask(cols, ev, n, step)
        mask = _pa().array(keep)
        return {k: pc.filter(v, mask) for k, v in cols.items()}, int(keep.sum())
    new = {}
    for e in step.exprs:
        if _has_length_change(e):
            raise _Refused("a filter or drop_nulls/drop_nans in with_columns/select")
        new[N.output_name(e)] = ev.full(e)
    if isinstance(step, N.WithColumns):
        return {**cols, **new}, n
    return new, n


def _cells(a: Any) -> Any:
    """An Arrow array as numpy for the truncation kernels (see ``_truncate.cells``)."""
    ty = _pa().types
    t = a.type
    plain = ty.is_integer(t) or ty.is_floating(t) or ty.is_boolean(t) or ty.is_temporal(t)
    if plain and a.null_count == 0:
        return K.cells(a.to_numpy(zero_copy_only=False), nulls=False)
    return K.cells(a.to_pylist(), nulls=True)


def _truncation_mask(
    cols: dict[str, Any], ev: _Eval, n: int, step: N.TruncateRows | N.TruncateGroups
) -> Any:
    """The rows a truncation step keeps (:mod:`._truncate`), from each person's own rows."""
    ids = [_cells(ev.full(e)) for e in step.identifier]
    by = [_cells(ev.full(e)) for e in step.by]
    if isinstance(step, N.TruncateGroups):
        return K.groups_mask(ids, by, step.k, step.keep, n=n)
    sk = step.keep if isinstance(step.keep, N.SortKey) else None
    row = [] if step.keep == "sample" else [_cells(v) for v in cols.values()]
    sort = [_cells(ev.full(e)) for e in sk.by] if sk else []
    return truncation_rows_mask(step, ids, by, row, sort, n)


def _plain(t: Any) -> bool:
    """Key columns of this Arrow type group as the canonical keys do, and sort in the total
    order: integers, booleans and strings (UTF-8 byte order is code-point order)."""
    ty = _pa().types
    return bool(ty.is_integer(t) or ty.is_boolean(t) or ty.is_string(t) or ty.is_large_string(t))


class _Block:
    """One table's answer, columnar: the groups as Arrow found them (``labels``: one Arrow
    array per key column), the rows of each group (``lens``), the int64 per-group totals of
    the summed columns (``cols``, each exact: no group's rows times ``bounds[i]``, the most
    one row adds, reach ``2^63``), and per aggregate how to read it from them (``readers``:
    ``("len", None)``, ``("col", i)``, ``("nulls", i)``, ``("parts", [(i, shift)...])``,
    ``("quantile", [(i_below, i_above)...])``, ``("distinct", j)``: the rows of
    ``distinct[j]``, an Arrow table of the distinct pairs (labels, canonical value)).  Used
    when every key column is :func:`_plain` and no aggregate is read row by row."""

    def __init__(
        self,
        labels: list[Any],
        lens: Any,
        cols: list[Any],
        bounds: list[int],
        readers: list[tuple[str, Any]],
        distinct: dict[int, Any] | None = None,
    ) -> None:
        self.labels = labels
        self.lens = lens
        self.cols = cols
        self.bounds = bounds
        self.readers = readers
        self.distinct = distinct or {}

    def _label_tuples(self) -> list[tuple[Any, ...]]:
        if not self.labels:
            return [()] * len(self.lens)
        return list(zip(*(a.to_pylist() for a in self.labels), strict=True))

    def _distinct_counts(self, j: int) -> list[int]:
        """The number of distinct values per group of ``distinct[j]``."""
        d = self.distinct[j]
        knames = [f"__k{i}" for i in range(len(self.labels))]
        counts = d.group_by(knames).aggregate([([], "count_all")]) if knames else None
        if counts is None:
            return [d.num_rows] * len(self.lens)
        found = zip(*(counts.column(k).to_pylist() for k in knames), strict=True)
        index = dict(zip(found, counts.column("count_all").to_pylist(), strict=True))
        return [int(index.get(lab, 0)) for lab in self._label_tuples()]

    def _distinct_sets(self, j: int) -> list[set[Any]]:
        """The canonical values per group of ``distinct[j]`` (for the Python merge)."""
        d = self.distinct[j]
        at = {lab: g for g, lab in enumerate(self._label_tuples())}
        sets: list[set[Any]] = [set() for _ in self.lens]
        labs = [d.column(f"__k{i}").to_pylist() for i in range(len(self.labels))]
        for r, v in enumerate(d.column("__v").to_pylist()):
            sets[at[tuple(c[r] for c in labs)]].add(canon(v))
        return sets

    def values(self, plan: N.FramePlan, sets: bool = False) -> list[list[Any]]:
        """Per aggregate, its value per group (Python ints; quantile count pairs; the sets of
        distinct canonical values where ``sets``, else their sizes)."""
        out: list[list[Any]] = []
        for (_, agg), (kind, spec) in zip(plan.aggregates, self.readers, strict=True):
            if kind == "distinct" and spec is not None:
                out.append(self._distinct_sets(spec) if sets else self._distinct_counts(spec))
            elif kind == "len":
                out.append(self.lens.tolist())
            elif kind == "col":
                out.append(self.cols[spec].tolist())
            elif kind == "nulls":
                out.append((self.lens - self.cols[spec]).tolist())
            elif kind == "parts":  # Python ints: the total may pass int64
                acc = [0] * len(self.lens)
                for i, s in spec:
                    part = self.cols[i].tolist()
                    acc = [a + (c << s) for a, c in zip(acc, part, strict=True)]
                out.append(acc)
            elif kind == "quantile":
                below = [self.cols[b].tolist() for b, _ in spec]
                above = [self.cols[a].tolist() for _, a in spec]
                out.append(
                    [([c[g] for c in below], [c[g] for c in above]) for g in range(len(self.lens))]
                )
            else:  # read row by row afterwards: a fresh zero per group (a set is mutable)
                out.append([_zero(agg) for _ in range(len(self.lens))])
        return out

    def groups(self, plan: N.FramePlan) -> _Groups:
        """The same answer keyed by the canonical labels (as the row-by-row path keys it)."""
        labels = self._label_tuples()
        values = self.values(plan, sets=True)
        result: _Groups = {}
        for g, lab in enumerate(labels):
            vals = [v[g] for v in values]
            key = tuple(canon(x) for x in lab)
            if key in result:
                result[key][1] = _merge(plan, result[key][1], vals)
            else:
                result[key] = [lab, vals]
        return result


#: one group's partial answer keyed by its canonical labels: its labels, then one entry per
#: aggregate (an int, a set of canonical values for ``NUnique``, a pair of int lists for
#: ``QuantileCounts``)
_Groups = dict[tuple[Any, ...], list[Any]]

#: a table's partial answer (of a Dask partition): columnar, or keyed by canonical labels
Partial = Union[_Block, _Groups]


def _group_by(keys: list[Any], columns: dict[str, tuple[Any, str]], n: int) -> Any:
    """Arrow's group-by of the key arrays: per group, each column's sum (0 when empty) or
    non-null count, and the group's rows (``count_all``)."""
    pa, pc = _pa(), _pc()
    if not keys:  # one group: Arrow's scalar aggregates (the same sums, wrapping alike)
        one = {
            f"{c}_{op}": [pc.sum(a, min_count=0) if op == "sum" else pc.count(a)]
            for c, (a, op) in columns.items()
        }
        one["count_all"] = [pa.scalar(n, pa.int64())]
        return pa.table({c: pa.array([v[0].as_py()], v[0].type) for c, v in one.items()})
    knames = [f"__k{i}" for i in range(len(keys))]
    cols = dict(zip(knames, keys, strict=True))
    cols.update({c: a for c, (a, _) in columns.items()})
    zero_if_empty = pc.ScalarAggregateOptions(skip_nulls=True, min_count=0)
    aggs: list[Any] = [
        (c, "sum", zero_if_empty) if op == "sum" else (c, "count") for c, (_, op) in columns.items()
    ]
    aggs.append(([], "count_all"))
    return pa.table(cols).group_by(knames).aggregate(aggs)


def _distinct(keys: list[Any], v: Any, keep: Any) -> Any:
    """The distinct pairs (labels, value) of the rows ``keep`` holds (all when None), the
    values made canonical (``-0.0`` is ``0.0``, every NaN one NaN; null is a value), as an
    Arrow table; None for a value type Arrow does not group as the canonical keys do."""
    pa, pc = _pa(), _pc()
    t = v.type
    if pa.types.is_floating(t):
        v = pc.if_else(pc.is_nan(v), pa.scalar(math.nan, t), pc.add(v, pa.scalar(0.0, t)))
    elif not _plain(t):
        return None
    cols = {f"__k{i}": k for i, k in enumerate(keys)}
    cols["__v"] = v
    table = pa.table(cols)
    if keep is not None:
        table = table.filter(keep)
    return table.group_by(list(cols)).aggregate([])


def _aggregate(keys: list[Any], prep: _Plan, plan: N.FramePlan, n: int) -> Partial:
    import numpy as np

    pa = _pa()
    columns = dict(prep.columns)
    grouped = _group_by(keys, columns, n)
    lens = grouped.column("count_all").to_numpy().astype(np.int64, copy=False)
    longest = int(lens.max()) if len(lens) else 0
    # an int sum whose largest group could pass int64 (Arrow's sums wrap): its column in
    # digits, and the group-by again (the first one's answer is discarded)
    split = {
        name: bound
        for kind, spec in prep.readers
        if kind == "isum"
        for name, bound in [spec]
        if max(n, 1) * bound >= _I64 and longest * bound >= _I64
    }
    digits: dict[str, list[tuple[str, int, int]]] = {}
    if split:
        width = 63 - longest.bit_length()  # longest · (2^width - 1) < 2^63
        if width < 1:
            raise _Refused("a group of more than 2^62 rows")
        for name, bound in split.items():
            k, _ = columns.pop(name)
            kn = _values(k, np.int64)
            digits[name] = []
            for d, (part, s, b) in enumerate(_parts(kn, bound, width)):
                dn = f"{name}_{d}"
                columns[dn] = (_with_validity(part, k), "sum")
                digits[name].append((dn, s, b))
        grouped = _group_by(keys, columns, n)
        lens = grouped.column("count_all").to_numpy().astype(np.int64, copy=False)

    def total(c: str) -> Any:
        op = columns[c][1]
        return grouped.column(f"{c}_{op}").to_numpy().astype(np.int64, copy=False)

    cols: list[Any] = []
    bounds: list[int] = []

    def col(c: str, bound: int) -> int:
        cols.append(total(c))
        bounds.append(bound)
        return len(cols) - 1

    readers: list[tuple[str, Any]] = []
    distinct: dict[int, Any] = {}
    plain = all(_plain(k.type) for k in keys)
    rowwise = False
    for kind, spec in prep.readers:
        if kind == "len":
            readers.append(("len", None))
        elif kind in ("all", "none"):  # every value counted: the group's rows (read as the
            cols.append(lens.copy())  # count's or the null count's column would be, so the
            bounds.append(1)  # blocks of partitions with and without nulls merge alike)
            readers.append(("col" if kind == "all" else "nulls", len(cols) - 1))
        elif kind == "count":
            readers.append(("col", col(spec, 1)))
        elif kind == "nulls":
            readers.append(("nulls", col(spec, 1)))
        elif kind == "sum":
            (c,) = spec
            readers.append(("col", col(c, 1)))
        elif kind == "isum":
            name, bound = spec
            if name in digits:
                readers.append(("parts", [(col(dn, b), s) for dn, s, b in digits[name]]))
            else:
                readers.append(("col", col(name, bound)))
        elif kind == "quantile":
            readers.append(("quantile", [(col(b, 1), col(a, 1)) for b, a in spec]))
        elif kind == "distinct" and plain:
            d = _distinct(keys, *spec)
            if d is None:
                rowwise = True
            else:
                distinct[len(readers)] = d
            readers.append(("distinct", None if d is None else len(readers)))
        else:
            rowwise = True
            readers.append((kind, None))
    labels = [_one_chunk(grouped.column(f"__k{i}")) for i in range(len(keys))]
    labels = [c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c for c in labels]
    if not keys and len(lens) and lens[0] == 0:  # an empty frame, ungrouped: no group
        labels, lens, cols = [], lens[:0], [c[:0] for c in cols]
    block = _Block(labels, lens, cols, bounds, readers, distinct)
    if not rowwise and plain:
        return block
    result = block.groups(plan)
    # the aggregates read per row in Python (distinct values, grid units beyond 2^53)
    row_keys: list[tuple[Any, ...]] | None = None
    labels_of: list[list[Any]] = []
    for j, (kind, spec) in enumerate(prep.readers):
        if kind not in ("distinct", "python") or j in distinct:
            continue
        if row_keys is None:
            labels_of = [k.to_pylist() for k in keys]
            row_keys = _rows_by_key(labels_of, n)
        v = spec[0]
        values = v.to_pylist()
        if kind == "distinct":
            m = spec[1]
            keep = [True] * n if m is None else m.to_pylist()
            for i in range(n):
                if keep[i]:
                    _entry(result, row_keys[i], labels_of, i, plan)[1][j].add(canon(values[i]))
        else:
            fn = spec[1]
            for i in range(n):
                if values[i] is not None:
                    _entry(result, row_keys[i], labels_of, i, plan)[1][j] += fn(values[i])
    return result


def _entry(
    result: _Groups, key: tuple[Any, ...], labels: list[list[Any]], i: int, plan: N.FramePlan
) -> list[Any]:
    if key not in result:
        result[key] = [tuple(col[i] for col in labels), [_zero(a) for _, a in plan.aggregates]]
    return result[key]


def _merge(plan: N.FramePlan, a: list[Any], b: list[Any]) -> list[Any]:
    out = []
    for (_, agg), x, y in zip(plan.aggregates, a, b, strict=True):
        if isinstance(agg, N.NUnique):
            out.append(x | y)
        elif isinstance(agg, N.QuantileCounts):
            out.append(
                (
                    [s + t for s, t in zip(x[0], y[0], strict=True)],
                    [s + t for s, t in zip(x[1], y[1], strict=True)],
                )
            )
        else:
            out.append(x + y)
    return out


def _merge_blocks(blocks: list[_Block]) -> _Block | None:
    """The blocks of several tables as one (Arrow's group-by of their totals), or None where
    that is not exact or not possible: the blocks read their aggregates differently (one split
    a sum in digits), their key types differ, or a merged group's rows times a column's bound
    reach ``2^63``."""
    import numpy as np

    if len(blocks) == 1:
        return blocks[0]
    first = blocks[0]
    if any(
        b.readers != first.readers or b.bounds != first.bounds or len(b.labels) != len(first.labels)
        for b in blocks
    ):
        return None
    pa = _pa()
    try:
        keys = [pa.concat_arrays([b.labels[i] for b in blocks]) for i in range(len(first.labels))]
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    columns = {
        f"__c{i}": (pa.array(np.concatenate([b.cols[i] for b in blocks])), "sum")
        for i in range(len(first.cols))
    }
    columns["__len"] = (pa.array(np.concatenate([b.lens for b in blocks])), "sum")
    grouped = _group_by(keys, columns, sum(len(b.lens) for b in blocks))
    lens = grouped.column("__len_sum").to_numpy().astype(np.int64, copy=False)
    longest = int(lens.max()) if len(lens) else 0
    if any(longest * b >= _I64 for b in first.bounds):
        return None
    cols = [
        grouped.column(f"__c{i}_sum").to_numpy().astype(np.int64, copy=False)
        for i in range(len(first.cols))
    ]
    labels = [_one_chunk(grouped.column(f"__k{i}")) for i in range(len(keys))]
    labels = [c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c for c in labels]
    distinct = {}
    for j, d in first.distinct.items():
        both = pa.concat_tables([b.distinct[j] for b in blocks])
        distinct[j] = both.group_by(d.column_names).aggregate([])
    return _Block(labels, lens, cols, first.bounds, first.readers, distinct)


_SIMPLE = (int, bool, str, float, type(None))


def _finish_block(b: _Block, plan: N.FramePlan) -> TableResult:
    """A block's :class:`TableResult`: public keys looked up (by Python equality, which for
    these labels and plain key values is the canonical keys' equality), or the groups sorted
    by Arrow in the total order (numbers by value, strings by code point, null last)."""
    import numpy as np

    pa, pc = _pa(), _pc()
    names = [N.output_name(e) for e in plan.by] if plan.by is not None else []
    vals = b.values(plan)
    zeros = [0 if isinstance(a, N.NUnique) else _zero(a) for _, a in plan.aggregates]
    values: dict[str, list[Any]] = {}
    if plan.by is None:
        return TableResult(
            keys={},
            values={
                nm: [v[0] if len(b.lens) else z]
                for (nm, _), v, z in zip(plan.aggregates, vals, zeros, strict=True)
            },
        )
    if plan.keys is not None:
        pub = [list(plan.keys[nm]) for nm in names]
        found = list(zip(*(a.to_pylist() for a in b.labels), strict=True))
        if all(type(v) in _SIMPLE for c in pub for v in c):
            index = {lab: g for g, lab in enumerate(found)}
            at = [index.get(lab) for lab in zip(*pub, strict=True)]
        else:
            index = {tuple(canon(v) for v in lab): g for g, lab in enumerate(found)}
            at = [index.get(tuple(canon(v) for v in lab)) for lab in zip(*pub, strict=True)]
        for (nm, _), v, z in zip(plan.aggregates, vals, zeros, strict=True):
            values[nm] = [z if g is None else v[g] for g in at]
        return TableResult(keys=dict(zip(names, pub, strict=True)), values=values)
    if b.labels:
        table = pa.table({f"__k{i}": a for i, a in enumerate(b.labels)})
        order = pc.sort_indices(
            table,
            sort_keys=[(f"__k{i}", "ascending") for i in range(len(b.labels))],
        ).to_numpy()  # nulls last: Arrow's default placement
    else:
        order = np.arange(len(b.lens))
    idx = order.tolist()
    keys = {nm: b.labels[i].take(order).to_pylist() for i, nm in enumerate(names)}
    for (nm, _), v in zip(plan.aggregates, vals, strict=True):
        values[nm] = [v[g] for g in idx]
    return TableResult(keys=keys, values=values)


def _finish_blocks(blocks: list[_Block], plan: N.FramePlan) -> TableResult | None:
    """The answer of columnar partials, or None where they merge in Python instead (not
    exactly mergeable in int64, or Arrow failed: its message, which may quote a label, is
    dropped)."""
    try:
        merged = _merge_blocks(blocks)
        return None if merged is None else _finish_block(merged, plan)
    except Exception:
        return None


def finish(partials: list[Partial], plan: N.FramePlan) -> TableResult:
    """Merge partial answers (of partitions) into the plan's :class:`TableResult`: the public
    keys in their order (absent groups zero), else the groups in the total order."""
    blocks = [p for p in partials if isinstance(p, _Block)]
    if blocks and len(blocks) == len(partials):
        fast = _finish_blocks(blocks, plan)
        if fast is not None:
            return fast
    groups = [p.groups(plan) if isinstance(p, _Block) else p for p in partials]
    merged_groups: _Groups = {}
    for part in groups:
        for key, (labels, vals) in part.items():
            if key in merged_groups:
                merged_groups[key][1] = _merge(plan, merged_groups[key][1], vals)
            else:
                merged_groups[key] = [labels, vals]
    zeros = [_zero(a) for _, a in plan.aggregates]
    names = [N.output_name(e) for e in plan.by] if plan.by is not None else []
    if plan.by is None:
        rows = [((), merged_groups.get((), [(), zeros])[1])]
        key_lists: dict[str, list[Any]] = {}
    elif plan.keys is not None:
        cols = [list(plan.keys[nm]) for nm in names]
        rows = []
        for i in range(len(cols[0]) if cols else 0):
            labels = tuple(c[i] for c in cols)
            got = merged_groups.get(tuple(canon(v) for v in labels))
            rows.append((labels, zeros if got is None else got[1]))
        key_lists = {nm: list(c) for nm, c in zip(names, cols, strict=True)}
    else:
        order = sorted(
            merged_groups.items(),
            key=lambda kv: (tuple(_order.group_key(v) for v in kv[1][0]), kv[0]),
        )
        rows = [(tuple(labels), vals) for _, (labels, vals) in order]
        key_lists = {nm: [r[0][i] for r in rows] for i, nm in enumerate(names)}
    values: dict[str, list[Any]] = {name: [] for name, _ in plan.aggregates}
    for _, vals in rows:
        for (name, agg), v in zip(plan.aggregates, vals, strict=True):
            if isinstance(agg, N.NUnique):
                values[name].append(len(v))
            elif isinstance(agg, N.QuantileCounts):
                values[name].append((list(v[0]), list(v[1])))
            else:
                values[name].append(int(v))
    return TableResult(keys=key_lists, values=values)


# ----------------------------------------------------------------------------------------------
# The engine


def _is_narwhals(x: object) -> bool:
    mod = sys.modules.get("narwhals")
    return mod is not None and isinstance(x, mod.DataFrame)


def _is_pandas(x: object) -> bool:
    mod = sys.modules.get("pandas")
    return mod is not None and isinstance(x, mod.DataFrame)


def _is_arrow(x: object) -> bool:
    mod = sys.modules.get("pyarrow")
    return mod is not None and isinstance(x, mod.Table)


class NarwhalsEngine:
    """pandas DataFrames and pyarrow Tables (and narwhals frames wrapping them)."""

    name = "narwhals"
    label = "pandas and pyarrow frames (through narwhals)"

    def owns(self, x: object) -> bool:
        if _is_narwhals(x):
            import narwhals as nw

            native = nw.to_native(x)  # type: ignore[call-overload]
            return _is_pandas(native) or _is_arrow(native)
        return _is_pandas(x) or _is_arrow(x)

    def schema(self, x: Any) -> dict[str, N.DType]:
        if _is_narwhals(x):
            import narwhals as nw

            x = nw.to_native(x)
        if _is_arrow(x):
            return {f.name: arrow_dtype_name(f.type) for f in x.schema}
        out: dict[str, N.DType] = {}
        for c, d in x.dtypes.items():
            out[str(c)] = pandas_dtype_name(d)
        return out

    def run(self, x: Any, plan: N.FramePlan) -> TableResult:
        if _is_narwhals(x):
            import narwhals as nw

            x = nw.to_native(x)
        if _is_pandas(x):
            self.schema(x)  # refuses object columns by their dtype (data owner's error)
        names = list(x.column_names) if _is_arrow(x) else list(x.columns)
        table = _arrow(x, kept_columns(names, plan))  # the columns read only, none copied
        return finish([run_arrow(table, plan)], plan)


def columns_read(plan: N.FramePlan) -> set[str] | None:
    """The input columns ``plan`` reads, or None when it may read every column (a step other
    than ``with_columns``/``select``/``filter``: truncation orders rows by the whole row)."""
    if not all(isinstance(s, (N.WithColumns, N.Select, N.FilterRows)) for s in plan.steps):
        return None
    names: set[str] = set()
    todo: list[Any] = [*plan.steps, *(plan.by or ()), *(a for _, a in plan.aggregates)]
    try:
        while todo:
            e = todo.pop()
            if isinstance(e, N.Col):
                names.add(e.name)
            elif isinstance(e, (N.WithColumns, N.Select)):
                todo.extend(e.exprs)
            elif isinstance(e, N.FilterRows):
                todo.append(e.predicate)
            elif not isinstance(e, N.Length):
                todo.extend(N.children(e))  # an expression's inputs, an aggregate's expr
    except AttributeError:  # a node this walk does not know: every column
        return None
    return names


def kept_columns(names: list[Any], plan: N.FramePlan) -> list[str] | None:
    """The frame's columns (``names``) that ``plan`` reads, at least one so the rows are
    still counted; None for all of them (also when the names are not distinct strings: the
    frame's refusal stays the data owner's)."""
    read = columns_read(plan)
    if read is None or not all(isinstance(c, str) for c in names) or len(set(names)) != len(names):
        return None
    keep = [c for c in names if c in read] or names[:1]
    return None if len(keep) == len(names) else keep


ENGINE = NarwhalsEngine()
register(ENGINE)


# --- the stable group_by(...).agg(...) (GroupAgg): one kernel for every engine ---------------

_FLOAT_NAMES = frozenset({"Float32", "Float64"})
_INT_RANGES = {
    f"{p}{b}": ((-(1 << (b - 1)), (1 << (b - 1)) - 1) if p == "Int" else (0, (1 << b) - 1))
    for p in ("Int", "UInt")
    for b in (8, 16, 32, 64)
}


def _dtype_base(dt: N.DType) -> str:
    return dt if isinstance(dt, str) else str(dt[0])


def _to_float(x: Fraction, out: N.DType) -> float:
    """``x`` rounded once to the nearest float (±inf beyond the range); a Float32 output is
    the nearest float32 of that."""
    try:
        f = float(x)  # Fraction.__float__: correctly rounded
    except OverflowError:
        f = math.inf if x > 0 else -math.inf
    if _dtype_base(out) == "Float32":
        import numpy as np

        return float(np.float32(f))
    return f


def _nonfinite(vals: list[float]) -> float | None:
    """The IEEE result of a sum of ``vals`` when one is not finite (NaN, or inf of one or
    both signs), else None: a function of the multiset, as the exact finite sum is."""
    if any(v != v for v in vals):
        return math.nan
    pos, neg = math.inf in vals, -math.inf in vals
    if pos and neg:
        return math.nan
    if pos or neg:
        return math.inf if pos else -math.inf
    return None


def exact_float_sum(values: list[float]) -> Fraction:
    """The exact sum of finite floats, as a rational: ``math.fsum`` gives the correctly
    rounded sum; the residual (the exact sum minus the parts found) is summed again, until it
    is zero (each residual is below half an ulp of the last part and on the grid ``2**-1074``,
    so this ends)."""
    parts: list[float] = []
    while True:
        r = math.fsum([*values, *(-p for p in parts)])
        if r == 0:
            return sum(map(Fraction, parts), Fraction(0))
        parts.append(r)


def stable_aggregate(kind: str, values: list[Any], dtype: N.DType, out: N.DType) -> Any:
    """One aggregate of a stable ``agg`` over a group's ``values`` (a column of ``dtype``,
    None for null), as Polars defines it, computed exactly: a function of the multiset of
    values only (never of their order).  Sums, means and variances of floats are summed as
    rationals and rounded once; an integer sum saturates into ``out``'s range.

    >>> stable_aggregate("mean", [1, 2, None], "Int64", "Float64")
    1.5
    >>> stable_aggregate("sum", [0.1] * 10, "Float64", "Float64")  # (in order: 0.9999999999999999)
    1.0
    >>> stable_aggregate("min", [2.0, float("nan"), None], "Float64", "Float64")
    2.0
    """
    if kind == "len":
        return len(values)
    nn = [v for v in values if v is not None]
    if kind == "count":
        return len(nn)
    if kind == "null_count":
        return len(values) - len(nn)
    if kind == "n_unique":
        return len({canon(v) for v in values})
    floats = _dtype_base(dtype) in _FLOAT_NAMES
    if kind in ("min", "max"):
        vals = [v for v in nn if not (floats and v != v)] if floats else nn
        if not vals:
            return math.nan if nn else None
        if floats:  # -0.0 below 0.0, so a tie of zeros is not decided by the rows' order
            key = lambda v: (v, math.copysign(1.0, v))  # noqa: E731
            return min(vals, key=key) if kind == "min" else max(vals, key=key)
        return min(vals) if kind == "min" else max(vals)
    if kind == "sum":
        if floats:
            bad = _nonfinite(nn)
            return bad if bad is not None else _to_float(exact_float_sum(nn), out)
        total = sum(int(v) for v in nn)
        lo, hi = _INT_RANGES.get(_dtype_base(out), (-(1 << 63), (1 << 63) - 1))
        return min(max(total, lo), hi)
    if not nn:
        return None
    if floats and (bad := _nonfinite(nn)) is not None and kind != "median":
        if kind in ("var", "std") and len(nn) < 2:
            return None
        return bad if kind == "mean" else math.nan
    if kind == "mean":
        exact: Fraction = exact_float_sum(nn) if floats else Fraction(sum(int(v) for v in nn))
        return _to_float(exact / len(nn), out)
    if kind == "median":
        if floats and any(v != v for v in nn):
            return math.nan
        s = sorted(nn)
        mid = len(s) // 2
        a, b = s[mid - 1] if len(s) % 2 == 0 else s[mid], s[mid]
        if floats and not (math.isfinite(a) and math.isfinite(b)):
            return (a + b) / 2  # (inf, -inf and nan as IEEE gives them: symmetric in a, b)
        return _to_float((Fraction(a) + Fraction(b)) / 2, out)
    if kind in ("var", "std"):
        if len(nn) < 2:
            return None
        xs = [Fraction(v) for v in nn]
        s1 = sum(xs, Fraction(0))
        s2 = sum((x * x for x in xs), Fraction(0))
        var = (s2 - s1 * s1 / len(xs)) / (len(xs) - 1)
        if kind == "var":
            return _to_float(var, out)
        return _to_float(Fraction(math.sqrt(float(var))), out)  # (sqrt of the rounded var)
    raise _Refused(f"the aggregation {kind!r}")


def stable_group_rows(
    keys: list[list[Any]],
    inputs: list[tuple[str, list[Any], N.DType, N.DType]],
) -> tuple[list[list[Any]], list[list[Any]]]:
    """A stable ``group_by(keys).agg(...)`` on columns as Python lists: ``inputs`` holds, per
    aggregate, its kind, its input column, the column's dtype and the output dtype.  Returns
    the key columns and the aggregate columns, one row per group (null and NaN are groups, as
    in Polars), the groups in the total order of :mod:`opendp_lite._order` on the keys (never
    in the data's order)."""
    n_rows = len(keys[0]) if keys else (len(inputs[0][1]) if inputs else 0)
    index: dict[tuple[Any, ...], list[int]] = {}
    for i in range(n_rows):
        index.setdefault(tuple(canon(k[i]) for k in keys), []).append(i)
    rows = [[k[ix[0]] for k in keys] for ix in index.values()]
    grouped = [[[col[i] for i in ix] for ix in index.values()] for _, col, _, _ in inputs]
    specs = [(kind, dt, out) for kind, _, dt, out in inputs]
    return stable_grouped_rows(rows, grouped, specs, len(keys))


def stable_grouped_rows(
    key_rows: list[list[Any]],
    grouped: list[list[list[Any]]],
    specs: list[tuple[str, N.DType, N.DType]],
    width: int | None = None,
) -> tuple[list[list[Any]], list[list[Any]]]:
    """As :func:`stable_group_rows`, from groups already formed (by an engine that groups as
    Polars does: null, NaN and the zeros each one key): ``key_rows[g]`` is group g's key
    tuple, ``grouped[j][g]`` the values of aggregate j's input in group g (in any order),
    ``specs[j]`` its kind, input dtype and output dtype."""
    # groups whose keys are one class (the engine may split -0.0 and 0.0, or NaNs): merged
    merged: dict[tuple[Any, ...], list[int]] = {}
    for g, row in enumerate(key_rows):
        merged.setdefault(tuple(canon(v) for v in row), []).append(g)
    if any(len(gs) > 1 for gs in merged.values()):
        key_rows = [key_rows[gs[0]] for gs in merged.values()]
        grouped = [[[v for g in gs for v in col[g]] for gs in merged.values()] for col in grouped]
    order = sorted(range(len(key_rows)), key=lambda g: tuple(canon(v) for v in key_rows[g]))
    if width is None:
        width = len(key_rows[0]) if key_rows else 0
    # a group's key as one value of its class: 0.0 for the zeros (-0.0 and 0.0 are one key)
    key_cols = [[_zero_key(key_rows[g][c]) for g in order] for c in range(width)]
    agg_cols = [
        [stable_aggregate(kind, vals[g], dt, out) for g in order]
        for (kind, dt, out), vals in zip(specs, grouped, strict=True)
    ]
    return key_cols, agg_cols


def _zero_key(v: Any) -> Any:
    return 0.0 if isinstance(v, float) and v == 0 else v


def _stable_parts(step: N.GroupAgg) -> list[tuple[str, str, N.Expr]]:
    """(output name, kind, input expression) of each aggregate of ``step``."""
    parts = []
    for e in step.aggs:
        inner = e.expr if isinstance(e, N.Alias) else e
        if isinstance(inner, N.Len):
            inner = N.Agg("len", N.Lit(1))
        if not isinstance(inner, N.Agg) or inner.kind not in N.STABLE_AGG_KINDS:
            raise _Refused("an aggregation outside the stable whitelist")
        parts.append((N.output_name(e), inner.kind, inner.expr))
    return parts


def _group_agg_arrow(cols: dict[str, Any], n: int, step: N.GroupAgg) -> tuple[dict[str, Any], int]:
    """The stable ``group_by(...).agg(...)`` on Arrow columns: Arrow groups the rows (each
    group's values as a list), :func:`stable_grouped_rows` merges the groups of one key class
    and aggregates them exactly."""
    pa = _pa()
    ev = _Eval(cols, n)
    keys = [ev.full(b) for b in step.by]
    parts = _stable_parts(step)
    inputs = [ev.full(e) for _, _, e in parts]
    table = pa.table(
        {**{f"#k{i}": k for i, k in enumerate(keys)}, **{f"#a{j}": a for j, a in enumerate(inputs)}}
    )
    names = [f"#k{i}" for i in range(len(keys))]
    grouped_table = table.group_by(names, use_threads=False).aggregate(
        [(f"#a{j}", "list") for j in range(len(inputs))]
    )
    key_lists = [grouped_table.column(c).to_pylist() for c in names]
    key_rows = [list(r) for r in zip(*key_lists, strict=True)]
    grouped = [grouped_table.column(f"#a{j}_list").to_pylist() for j in range(len(inputs))]
    specs = []
    for (_, kind, _), a in zip(parts, inputs, strict=True):
        dt = arrow_dtype_name(a.type)
        specs.append((kind, dt, _stable_out(kind, dt)))
    key_cols, agg_cols = stable_grouped_rows(key_rows, grouped, specs, len(keys))
    out: dict[str, Any] = {}
    for b, k, vals in zip(step.by, keys, key_cols, strict=True):
        out[N.output_name(b)] = pa.array(vals, type=k.type)
    for (name, _, _), (_, _, o), vals in zip(parts, specs, agg_cols, strict=True):
        out[name] = pa.array(vals, type=_arrow_type(o), from_pandas=True)
    return out, len(key_cols[0]) if key_cols else 0


def _stable_out(kind: str, dt: N.DType) -> N.DType:
    """The output dtype of ``kind`` over ``dt`` (as :func:`analysis.stable_agg_dtype`)."""
    b = _dtype_base(dt)
    if kind in ("len", "count", "null_count", "n_unique"):
        return "UInt32"
    if kind in ("min", "max"):
        return dt
    if kind == "sum":
        return "Int64" if b in ("Int8", "Int16", "UInt8", "UInt16") else dt
    return "Float32" if b == "Float32" else "Float64"
