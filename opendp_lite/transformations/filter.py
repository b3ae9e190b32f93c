"""Filter the rows of a dataframe with a public predicate on one column (``make_filter_rows``).

A row is kept when ``row[column] <op> value`` holds, for a comparison ``op`` and a ``value``
fixed at construction.  The predicate reads one row at a time and nothing else (no statistic of
the column, no state), so one added or removed row adds or removes at most itself: the
stability map is :math:`d_{out} = d_{in}`.  OpenDP 0.16 has no counterpart outside its Polars
plans (``filter`` there is the same row-by-row transformation).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import backends
from .._registry import constructor
from .._spine import then
from .._types import carrier_name, is_float
from ..core import Domain, Metric, Transformation
from ..domains import DataFrameDomain, atom_domain, vector_domain
from ..errors import FailedFunction, InvalidParameter, NotImplementedForType
from ..metrics import InsertDeleteDistance, SymmetricDistance

__all__ = ["FILTER_OPS", "make_filter_rows", "then_filter_rows"]

_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}

#: The comparisons ``make_filter_rows`` accepts.
FILTER_OPS = (*_COMPARE, "in", "not in")


def _value_type(op: str, value: Any) -> Any:
    if op in ("in", "not in"):
        if isinstance(value, str) or not isinstance(value, Sequence | set | frozenset):
            raise InvalidParameter(f"value for {op!r} must be a list of values, got {value!r}")
        if not value:
            raise InvalidParameter(f"value for {op!r} must not be empty")
        first = next(iter(value))
    else:
        first = value
    if isinstance(first, bool | np.bool_):
        return bool
    if isinstance(first, int | np.integer):
        return "i64"
    if isinstance(first, float | np.floating):
        return float
    if isinstance(first, str):
        return str
    raise InvalidParameter(f"value must be a number, a bool or a str, got {first!r}")


def _mask(col: Any, op: str, value: Any) -> Any:
    if op == "in":
        return backends.of(col).isin(col, list(value))
    if op == "not in":
        return ~backends.of(col).isin(col, list(value))
    return _COMPARE[op](col, value)


@constructor
def make_filter_rows(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    column: Any,
    op: str,
    value: Any,
    TIA: object = None,
) -> Transformation[Mapping[Any, Any], Mapping[Any, Any], int, int]:
    r"""Keep the rows of a dataframe whose ``column`` satisfies ``<op> value``; a public filter.

    ``op`` is one of ``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``in``, ``not in`` (for
    ``in``, ``value`` is a list).  The column's cells must be of type ``TIA`` (inferred from
    ``value``: ``int`` → i64, ``float`` → f64 admitting NaN, ``str``, ``bool``); the input
    domain declares it, so a frame whose column holds another type is refused with
    ``NotInDomain`` before anything runs.  NaN compares false (``!=``: true), as in numpy.

    Input and output: the dataframe domain ``input_domain``, under the symmetric or
    insert-delete distance.  Stability map: :math:`d_{out} = d_{in}`.

    Raises:
        InvalidParameter: for an unknown ``op``, or a ``value`` of no supported type.
        NotImplementedForType: for a domain that is not a dataframe domain, or another metric.

    Proof: docs/proofs/make_filter_rows.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.dataframe_domain(), dp.symmetric_distance()
    >>> adults = dp.t.make_filter_rows(*space, "age", ">=", 18)
    >>> adults({"age": [12, 30, 45], "city": ["a", "b", "c"]})["city"].tolist(), adults.map(1)
    (['b', 'c'], 1)
    """
    if not isinstance(input_domain, DataFrameDomain):
        raise NotImplementedForType(
            f"make_filter_rows needs input_domain dataframe_domain(K), got {input_domain!r}"
        )
    if not isinstance(input_metric, SymmetricDistance | InsertDeleteDistance):
        raise NotImplementedForType(
            "make_filter_rows needs input_metric symmetric_distance() or "
            f"insert_delete_distance(), got {input_metric!r} (a filter changes the length)"
        )
    if op not in FILTER_OPS:
        raise InvalidParameter(f"op must be one of {list(FILTER_OPS)}, got {op!r}")
    T = carrier_name(TIA if TIA is not None else _value_type(op, value))
    try:
        key = atom_domain(T=input_domain.K, nan=False)._normalize(column)
    except Exception as e:
        raise InvalidParameter(f"column must be of type K={input_domain.K}: {e}") from None
    col_domain = vector_domain(atom_domain(T=T, nan=True if is_float(T) else None))
    columns = dict(input_domain.columns)
    if key in columns and columns[key] != col_domain:
        raise InvalidParameter(
            f"column {key!r} is declared {columns[key]!r} by the input domain, "
            f"not {col_domain!r}; pass TIA to match"
        )
    columns[key] = col_domain
    domain = DataFrameDomain(input_domain.K, columns=tuple(columns.items()))

    def function(df: Mapping[Any, Any]) -> Any:
        if key not in df:
            raise FailedFunction(f"the dataframe has no column {key!r}; columns: {list(df)}")
        lazy = backends.of_frame(df)
        if lazy is not None:  # a lazy frame (Dask): typed by its metadata, filtered lazily
            carrier = lazy.frame_carrier(df, key)
            if carrier != T and not (is_float(T) and carrier in ("f32", "f64")):
                raise FailedFunction(f"column {key!r} holds {carrier}, not {T}")
            return lazy.filter_frame(df, _mask(df[key], op, value))
        keep: npt.NDArray[np.bool_] = np.asarray(_mask(df[key], op, value), dtype=np.bool_)
        out = {}
        for name, col in df.items():
            kept = np.asarray(col)[keep]
            kept.flags.writeable = False
            out[name] = kept
        return out

    kept = Transformation(domain, input_metric, domain, input_metric, function, lambda d: d)
    kept.keeps_cells = True  # a chain declares the next step's columns on its input
    return kept


then_filter_rows = then(make_filter_rows)
