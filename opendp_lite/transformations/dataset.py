"""Dataset handling: parse text into records and dataframes, and select columns.

``make_split_lines``, ``make_split_records``, ``make_create_dataframe``,
``make_split_dataframe``, ``make_select_column``.  A dataframe is a ``dict`` from column names
to equal-length columns (``list`` or 1-d ``ndarray``); its records are its rows.  Every map
here is :math:`d_{out} = d_{in}` under the symmetric distance, since each output record is a
function of exactly one input record (a line).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import backends
from .._registry import constructor
from .._types import carrier_dtype, carrier_name, is_float
from ..core import Transformation
from ..domains import DataFrameDomain, atom_domain, dataframe_domain, vector_domain
from ..errors import FailedFunction, InvalidParameter, NotInDomain
from ..metrics import symmetric_distance

__all__ = [
    "make_create_dataframe",
    "make_select_column",
    "make_split_dataframe",
    "make_split_lines",
    "make_split_records",
]


def _split_lines(text: str) -> npt.NDArray[Any]:
    # lines end at "\n" (an optional "\r" before it is dropped); a final "\n" ends the last
    # line rather than starting an empty one.  Unlike str.splitlines, no other separators.
    parts = text.split("\n")
    last = parts.pop()  # the text after the final "\n": a line only if non-empty
    lines = [p[:-1] if p.endswith("\r") else p for p in parts]  # "\r\n" ends a line too
    if last:
        lines.append(last)  # no "\n" follows it, so a trailing "\r" is kept (as Rust does)
    out = np.empty(len(lines), dtype=object)
    out[:] = lines
    return out


# Unicode White_Space, as Rust's str::trim uses (Python's str.strip also strips \x1c-\x1f)
_WHITESPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
_WHITESPACE += "\u2028\u2029\u202f\u205f\u3000"


def _split_record(line: str, separator: str) -> npt.NDArray[Any]:
    fields = [f.strip(_WHITESPACE) for f in line.split(separator)]
    out = np.empty(len(fields), dtype=object)
    out[:] = fields
    return out


@constructor
def make_split_lines() -> Transformation[str, Any, int, int]:
    r"""Split a string into its lines.

    Input ``atom_domain(T=str)``, output ``vector_domain(atom_domain(T=str))``, both under the
    symmetric distance between the multisets of lines.  Lines end at ``"\n"`` or ``"\r\n"``
    (Rust's ``str::lines``).  Stability map: :math:`d_{out} = d_{in}`.

    Proof: docs/proofs/make_split_lines.md

    >>> import opendp_lite.prelude as dp
    >>> dp.t.make_split_lines()("a,1\nb,2\r\n")
    ['a,1', 'b,2']
    """
    return Transformation(
        atom_domain(T=str),
        symmetric_distance(),
        vector_domain(atom_domain(T=str)),
        symmetric_distance(),
        _split_lines,
        lambda d_in: d_in,
    )


def _check_separator(separator: object) -> str:
    if not isinstance(separator, str) or separator == "":
        raise InvalidParameter(f"separator must be a non-empty str, got {separator!r}")
    return separator


@constructor
def make_split_records(separator: str) -> Transformation[Any, Any, int, int]:
    r"""Split each line into fields at ``separator``, trimming whitespace around each field.

    Input ``vector_domain(atom_domain(T=str))``, output
    ``vector_domain(vector_domain(atom_domain(T=str)))``, symmetric distance.  Stability map:
    :math:`d_{out} = d_{in}`.

    Raises:
        InvalidParameter: if ``separator`` is not a non-empty string.

    Proof: docs/proofs/make_split_records.md

    >>> import opendp_lite.prelude as dp
    >>> [r.tolist() for r in dp.t.make_split_records(",")(["a, 1", "b,2 "])]
    [['a', '1'], ['b', '2']]
    """
    sep = _check_separator(separator)

    def function(arg: npt.NDArray[Any]) -> npt.NDArray[Any]:
        out = np.empty(len(arg), dtype=object)
        for i, line in enumerate(arg.tolist()):
            out[i] = _split_record(line, sep)
        return out

    return Transformation(
        vector_domain(atom_domain(T=str)),
        symmetric_distance(),
        vector_domain(vector_domain(atom_domain(T=str))),
        symmetric_distance(),
        function,
        lambda d_in: d_in,
    )


def _column_names(col_names: Any, K: object) -> tuple[list[Any], str]:
    if not isinstance(col_names, list | tuple) or not col_names:
        raise InvalidParameter(f"col_names must be a non-empty list, got {col_names!r}")
    key_type = carrier_name(K if K is not None else type(col_names[0]))
    key_domain = atom_domain(T=key_type, nan=False)
    try:
        names = [key_domain._normalize(c) for c in col_names]
    except NotInDomain as e:
        raise InvalidParameter(f"col_names must all be of type K={key_type}: {e}") from None
    if len(set(names)) != len(names):
        raise InvalidParameter(f"col_names must be unique, got {col_names!r}")
    return names, key_type


def _records_to_frame(records: Any, names: list[Any]) -> dict[Any, npt.NDArray[Any]]:
    # each record is padded with "" or truncated to len(names) cells, then transposed
    k = len(names)
    n = len(records)
    cols = [np.empty(n, dtype=object) for _ in names]
    for i, rec in enumerate(records):
        cells = list(rec)[:k]
        cells += [""] * (k - len(cells))
        for j in range(k):
            cols[j][i] = cells[j]
    return dict(zip(names, cols, strict=True))


@constructor
def make_create_dataframe(col_names: Any, K: object = None) -> Transformation[Any, Any, int, int]:
    r"""Make a dataframe from records: column ``col_names[j]`` holds each record's ``j``-th cell.

    A record with fewer cells is padded with ``""``; extra cells are dropped.  Input
    ``vector_domain(vector_domain(atom_domain(T=str)))``, output ``dataframe_domain(K)``, both
    under the symmetric distance (each row is one record).  Stability map:
    :math:`d_{out} = d_{in}`.

    Raises:
        InvalidParameter: if ``col_names`` is empty, has duplicates, or is not all of type
            ``K`` (inferred from the first name when omitted).

    Proof: docs/proofs/make_create_dataframe.md

    >>> import opendp_lite.prelude as dp
    >>> df = dp.t.make_create_dataframe(["name", "age"])([["a", "30"], ["b"]])
    >>> {k: v.tolist() for k, v in df.items()}
    {'name': ['a', 'b'], 'age': ['30', '']}
    """
    names, key_type = _column_names(col_names, K)
    return Transformation(
        vector_domain(vector_domain(atom_domain(T=str))),
        symmetric_distance(),
        dataframe_domain(key_type),
        symmetric_distance(),
        lambda records: _records_to_frame(records, names),
        lambda d_in: d_in,
    )


@constructor
def make_split_dataframe(
    separator: str, col_names: Any, K: object = None
) -> Transformation[str, Any, int, int]:
    r"""Parse delimited text into a dataframe: split lines, split records, create a dataframe.

    Input ``atom_domain(T=str)``, output ``dataframe_domain(K)``, symmetric distance between
    the multisets of lines/rows.  Stability map: :math:`d_{out} = d_{in}`.

    Raises:
        InvalidParameter: as :func:`make_split_records` and :func:`make_create_dataframe`.

    Proof: docs/proofs/make_split_dataframe.md

    >>> import opendp_lite.prelude as dp
    >>> df = dp.t.make_split_dataframe(",", ["x", "y"])("1,a\n2,b\n")
    >>> df["x"].tolist(), df["y"].tolist()
    (['1', '2'], ['a', 'b'])
    """
    sep = _check_separator(separator)
    names, key_type = _column_names(col_names, K)

    def function(text: str) -> dict[Any, npt.NDArray[Any]]:
        records = [_split_record(line, sep) for line in _split_lines(text).tolist()]
        return _records_to_frame(records, names)

    return Transformation(
        atom_domain(T=str),
        symmetric_distance(),
        dataframe_domain(key_type),
        symmetric_distance(),
        function,
        lambda d_in: d_in,
    )


@constructor
def make_select_column(
    key: Any, TOA: object, K: object = None
) -> Transformation[Any, Any, int, int]:
    r"""Select column ``key`` of a dataframe as a vector of ``TOA``.

    Input ``dataframe_domain(K)`` whose members have a column ``key`` of ``TOA`` cells, output
    ``vector_domain(atom_domain(T=TOA))`` (admitting NaN for a float ``TOA``), symmetric
    distance (the column's i-th entry belongs to row i).  Stability map: :math:`d_{out} = d_{in}`.

    A frame whose column ``key`` is missing or holds a cell that is not a ``TOA`` (``None``, a
    string in a numeric column, a bool in a float column, ...) is outside the input domain:
    ``invoke`` refuses it with ``NotInDomain`` before anything runs, so whether a value is
    released never depends on one record.

    Raises:
        InvalidParameter: if ``key`` is not of type ``K``.
        NotInDomain: at invocation, if the frame has no column ``key`` or one of its cells is
            not a ``TOA`` (the message names the column, the position and the value).
        FailedFunction: at invocation inside a chain, if the transformation before it gives
            a column whose dtype is not ``TOA``'s (e.g. the string columns of
            :func:`make_split_dataframe` with ``TOA=int``): this depends on the column's type
            only, never on its values or length.

    Proof: docs/proofs/make_select_column.md

    >>> import opendp_lite.prelude as dp
    >>> select = dp.t.make_select_column("age", TOA=str)
    >>> select({"age": ["30", "41"], "name": ["a", "b"]})
    ['30', '41']
    """
    key_type = carrier_name(K if K is not None else type(key))
    try:
        k = atom_domain(T=key_type, nan=False)._normalize(key)
    except NotInDomain as e:
        raise InvalidParameter(f"key must be of type K={key_type}: {e}") from None
    T = carrier_name(TOA)
    # a float column may hold NaN (missing values): impute or drop them downstream
    out_domain = vector_domain(atom_domain(T=T, nan=True if is_float(T) else None))
    # equal to dataframe_domain(key_type) (so dataframe producers chain in), and its members'
    # column k is checked cell by cell when a chain starting here normalises its input
    in_domain = DataFrameDomain(key_type, columns=((k, out_domain),))
    dtype = np.dtype(carrier_dtype(T))

    def function(df: Mapping[Any, Any]) -> Any:
        # a frame normalised by in_domain already holds column k as a vector of TOA; a frame
        # from an earlier transformation is checked by its column's dtype first, so a
        # string-typed column fails for TOA=int whatever its length (as in OpenDP)
        if k not in df:
            raise FailedFunction(f"the dataframe has no column {k!r}; columns: {list(df)}")
        col = df[k]
        if isinstance(col, np.ndarray) and col.dtype != dtype:
            raise FailedFunction(f"column {k!r} has dtype {col.dtype}, not the dtype of {T}")
        try:
            out: Any = out_domain._normalize(col)
        except NotInDomain as e:
            raise FailedFunction(f"column {k!r} is not a vector of {out_domain!r}: {e}") from None
        # a lazy column (Dask) stays a lazily checked array (np.asarray would compute it)
        return out if backends.of(out).lazy else np.asarray(out)

    return Transformation(
        in_domain, symmetric_distance(), out_domain, symmetric_distance(), function, lambda d: d
    )
