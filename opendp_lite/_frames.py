"""Data frames and columns in: pandas, Polars and pyarrow objects read as numpy vectors.

The domains accept a pandas/Polars/pyarrow Series (or pyarrow Array/ChunkedArray) wherever
they accept a vector, and a pandas/Polars DataFrame or pyarrow Table wherever they accept a
dataframe.  This module turns such an object into what the numpy checks already read, through
`narwhals <https://narwhals-dev.github.io/narwhals/>`_, one compatibility layer for the three
libraries (so there is one code path, not one branch per library).  Neither narwhals nor any
frame library is imported unless a frame object is actually passed in: the module only looks
at ``type(x).__module__`` first, so numpy users never pay for it.

* **No more copies than needed.**  A numeric or boolean column without missing values is read
  with ``to_numpy()``, which is zero-copy for pandas numpy-backed columns, Polars numeric
  columns and single-chunk pyarrow arrays (``np.shares_memory`` holds; the vector domain then
  hands the function a read-only *view*, so the caller's frame is never made read-only).
  Only a column with missing values, or a type numpy does not share (strings, categoricals,
  nullable pandas dtypes with NA), is copied.
* **Missing values follow the domain.**  A missing value is ``None``, ``NaN`` (in a float
  column), pandas ``NA`` or Polars ``null``.  For an option domain it becomes ``None``; for a
  float domain with ``nan=True`` it becomes ``NaN``; any other domain refuses it with
  :class:`~opendp_lite.errors.NotInDomain` naming the column, the position and the value.  The
  check runs while the input is normalised, before any function runs and before any
  randomness is drawn.
* **Schemas, never values.**  :func:`schema` reads a frame's column names and dtypes only, so
  the Context API can infer a frame's domain without looking at the data.

The element domain is read by duck typing (``carrier_type``, ``nan``): this module sits with
``_types`` below ``core`` and ``domains``, and the domains call into it.

>>> as_vector([1, 2], None)         # anything that is not a frame library's is passed through
[1, 2]
>>> missing_mode(None)
'refuse'
"""

from __future__ import annotations

import importlib
import math
import sys
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from .errors import NotInDomain

__all__ = [
    "FRAME_LIBRARIES",
    "as_frame",
    "as_vector",
    "carrier_of_dtype",
    "column_names",
    "is_frame",
    "is_series",
    "library_of",
    "missing_mode",
    "partition_values",
    "schema",
    "series_carrier",
]

#: The libraries whose objects are read through narwhals (by top-level module name).
FRAME_LIBRARIES = ("pandas", "polars", "pyarrow")

Missing = Literal["none", "nan", "refuse", "keep"]


def library_of(x: object) -> str | None:
    """``"pandas"``, ``"polars"``, ``"pyarrow"`` or ``"dask"`` for such an object, else None.

    Only the type's module name is read: nothing is imported.

    >>> library_of([1.0]), library_of(np.zeros(2))
    (None, None)
    """
    head = type(x).__module__.partition(".")[0]
    if head in FRAME_LIBRARIES or head == "dask":
        return head
    return None


def _nw() -> Any:
    # typed as Any: narwhals is optional, imported only when a frame object is passed in
    return importlib.import_module("narwhals")


def _as_series(x: object) -> Any | None:
    """``x`` as a narwhals Series if it is an eager pandas/Polars/pyarrow column, else None."""
    lib = library_of(x)
    if lib is None or lib == "dask":
        return None
    if lib == "pyarrow":
        pa = sys.modules["pyarrow"]
        if isinstance(x, pa.Array):
            x = pa.chunked_array([x])  # no copy: the chunk is shared
    nw = _nw()
    s = nw.from_native(x, series_only=True, pass_through=True)
    return s if isinstance(s, nw.Series) else None


def _as_dataframe(x: object) -> Any | None:
    lib = library_of(x)
    if lib is None or lib == "dask":
        return None
    nw = _nw()
    df = nw.from_native(x, eager_only=True, pass_through=True)
    return df if isinstance(df, nw.DataFrame) else None


def is_series(x: object) -> bool:
    """Whether ``x`` is a pandas/Polars Series or a pyarrow (Chunked)Array."""
    return _as_series(x) is not None


def is_frame(x: object) -> bool:
    """Whether ``x`` is a pandas/Polars DataFrame or pyarrow Table (Dask: see ``backends.dask``)."""
    return _as_dataframe(x) is not None


def missing_mode(element: object) -> Missing:
    """What a missing value becomes in a vector of ``element``: ``"none"`` for an option
    domain, ``"nan"`` for a float domain admitting NaN, ``"refuse"`` otherwise."""
    carrier = str(getattr(element, "carrier_type", ""))
    if carrier.startswith("Option<"):
        return "none"
    if carrier in ("f32", "f64") and bool(getattr(element, "nan", False)):
        return "nan"
    return "refuse"


def _where(name: object) -> str:
    return f"column {name!r}, " if name not in (None, "") else ""


def _refuse(name: object, pos: int, value: object, element: object) -> NotInDomain:
    shown = "NaN" if isinstance(value, float) and value != value else repr(value)
    floats = str(getattr(element, "carrier_type", "")) in ("f32", "f64")
    admit = (
        "atom_domain(T=float, nan=True) then chain then_impute_constant(v)"
        if floats
        else "vector_domain(option_domain(...)) then chain then_impute_constant(v) or "
        "then_drop_null()"
    )
    return NotInDomain(
        f"{_where(name)}position {pos}: a missing value ({shown}) is not a member of "
        f"{element!r}; expected no missing values. Fix: drop or fill them before the "
        f"release (pandas: series.dropna() / series.fillna(v); Polars: series.drop_nulls() / "
        f"series.fill_null(v)), or use a domain that admits them: {admit}"
    )


def _cell(s: Any, pos: int) -> object:
    """The native missing value at ``pos`` (``None``, ``nan``, pandas ``NA``...), to name it."""
    raw = s.to_native()
    if hasattr(raw, "iloc"):
        return raw.iloc[pos]  # pandas: by position, not by label
    cell = raw[pos]
    return cell.as_py() if hasattr(cell, "as_py") else cell


def _float_values(values: npt.NDArray[Any], mode: Missing) -> npt.NDArray[Any] | None:
    """A float column's values if they need no mapping (no NaN, or the mode keeps NaN), else
    None (the caller maps or refuses the NaN)."""
    if mode in ("nan", "keep") or values.size == 0:
        return values
    if values.size <= 32:  # short: a Python scan costs less than a numpy reduction's setup
        return None if any(v != v for v in values.tolist()) else values
    if not math.isnan(np.min(values)):  # min propagates NaN: one read, no temporary
        return values
    return None


def _has_missing(x: Any) -> bool:
    """Whether a pandas Series holds a missing value: ``isna()`` of its array (the test
    ``Series.hasnans`` and narwhals' ``null_count`` make, without building a Series)."""
    return bool(x.array.isna().any())


def _native_values(x: Any, mode: Missing, scan: bool = True) -> npt.NDArray[Any] | None:
    """The values of a pandas/Polars Series or pyarrow Array read without narwhals, in the
    common cases where that gives exactly what :func:`_series_values` gives (the same native
    ``to_numpy`` call, zero-copy where it was), else None.

    Handled: numpy-backed pandas columns of a bool, integer or float32/64 dtype (they cannot
    hold a missing value other than NaN), pandas ``object`` and string columns without missing
    values (``isna().any()``, the test narwhals' ``null_count`` makes), nullable
    pandas integer and boolean columns (without NA, or with NA read as ``None`` for an option
    domain: ``to_numpy(dtype=object, na_value=None)`` gives the same Python values), Polars
    and pyarrow float columns without NaN or null and integer or bool columns without null.
    A column with a missing value takes the narwhals path, which maps or refuses it (naming
    it).  This skips narwhals' fixed cost per call (~30-100 us), which dominates for short
    columns.  With ``scan=False`` a float column's NaN are not looked for (the caller's own
    check finds them).
    """
    lib = library_of(x)
    values: npt.NDArray[Any]
    if lib == "pandas":
        pd = sys.modules["pandas"]
        if type(x) is not pd.Series:
            return None
        dt = x.dtype
        if isinstance(dt, np.dtype):  # numpy-backed: decided by kind (cheap attribute tests)
            if dt.kind in "biu":
                ints: npt.NDArray[Any] = x.to_numpy()
                return ints
            if dt.kind == "f" and dt.itemsize in (4, 8):
                values = x.to_numpy()
                return _float_values(values, mode) if scan else values
            if dt.kind != "O":
                return None
            # str objects (pandas' to_numpy of a string column is an object array)
            return None if _has_missing(x) else x.to_numpy()
        if isinstance(dt, pd.StringDtype):
            return None if _has_missing(x) else x.to_numpy()
        api = pd.api.types
        if isinstance(dt, pd.CategoricalDtype) or not (
            api.is_integer_dtype(dt) or api.is_bool_dtype(dt)
        ):
            return None  # other extension dtypes (Float64, category...): narwhals
        # nullable integers and booleans: pandas NA is their only missing value
        if not _has_missing(x):
            present: npt.NDArray[Any] = x.to_numpy()
            return present
        if mode == "none":
            options: npt.NDArray[Any] = x.to_numpy(dtype=object, na_value=None)
            return options
        return None  # refused (naming it) or mapped to NaN by the narwhals path
    if lib == "polars":
        pl = sys.modules["polars"]
        if type(x) is not pl.Series or x.null_count() != 0:
            return None
        if x.dtype.is_float():
            values = x.to_numpy()
            if values.dtype.kind != "f":
                return None
            return _float_values(values, mode) if scan else values
        if x.dtype.is_integer() or x.dtype == pl.Boolean:
            pl_ints: npt.NDArray[Any] = x.to_numpy()
            return pl_ints
        return None
    if lib == "pyarrow":
        pa = sys.modules["pyarrow"]
        if not isinstance(x, pa.Array) or x.null_count != 0:
            return None
        t = x.type
        if pa.types.is_floating(t) and not pa.types.is_float16(t):
            values = x.to_numpy(zero_copy_only=False)
            return _float_values(values, mode) if scan else values
        if pa.types.is_integer(t) or pa.types.is_boolean(t):
            pa_ints: npt.NDArray[Any] = x.to_numpy(zero_copy_only=False)
            return pa_ints
        return None
    return None


def _series_values(s: Any, element: object, mode: Missing) -> npt.NDArray[Any]:
    """The values of the narwhals Series ``s`` as a 1-d numpy array, missing values mapped."""
    name = s.name
    values: npt.NDArray[Any]
    if s.dtype.is_float():
        values = s.to_numpy()  # zero-copy for numpy-backed and single-chunk columns
        if values.dtype.kind != "f":  # pragma: no cover - a float column is read as floats
            values = values.astype(np.float64)
        if _float_values(values, mode) is not None:
            return values
        nan = np.isnan(values)
        if mode == "refuse":
            pos = int(np.argmax(nan))
            value = _cell(s, pos)
            raise _refuse(name, pos, float("nan") if value is None else value, element)
        out = values.astype(object)
        out[nan] = None
        return out
    if s.null_count() == 0:
        values = s.to_numpy()
        # numpy strings (Polars Utf8) are read as str objects, as the String carrier holds them
        return values.astype(object) if values.dtype.kind == "U" else values
    missing = np.asarray(s.is_null().to_numpy(), dtype=np.bool_)
    if mode == "refuse":
        pos = int(np.argmax(missing))
        raise _refuse(name, pos, _cell(s, pos), element)
    present = s.drop_nulls().to_numpy()
    if mode == "nan":
        out = np.full(len(missing), np.nan)
        out[~missing] = present.astype(np.float64)
        return out
    out = np.empty(len(missing), dtype=object)
    out[~missing] = present.tolist() if present.dtype != object else present
    out[missing] = None
    return out


def as_vector(x: object, element: object, scan: bool = True) -> object:
    """``x`` as a numpy vector of ``element`` if it is a frame library's column, else ``x``.

    A DataFrame passed where a vector is expected is refused with the call that selects a
    column.  ``scan=False``: when ``element`` refuses NaN, a float column without nulls is
    returned without looking for them (for a caller whose own check refuses them, and calls
    again with ``scan=True`` to name the column in its refusal).

    Raises:
        NotInDomain: for a missing value that ``element`` does not admit (naming the column,
            the position and the value), or for a whole data frame.
    """
    if library_of(x) is None:
        return x
    mode = missing_mode(element)
    fast = _native_values(x, mode, scan or mode != "refuse")  # a mapped NaN needs the scan
    if fast is not None:
        return fast
    s = _as_series(x)
    if s is None:
        df = _as_dataframe(x)
        if df is not None:
            cols = list(df.columns)
            raise NotInDomain(
                f"got a {type(x).__name__} with columns {cols}, expected a vector "
                f"(Vec<{getattr(element, 'carrier_type', '?')}>). Fix: pass one column, "
                f"df[{cols[0] if cols else 'name'!r}], or start the chain with "
                "dp.t.make_select_column(name, TOA=...) on a dataframe_domain()"
            )
        return x
    return _series_values(s, element, mode)


def partition_values(part: Any, element: object) -> Any:
    """A Dask partition (a pandas Series) with its missing values mapped for ``element``.

    Run on the workers, one partition at a time (``map_partitions``), so a Dask column with a
    nullable pandas dtype (``Int64``, ``boolean``, ``string``, ``category``) reaches the numpy
    check as a numpy-typed partition; positions in messages are within the partition.
    """
    pd = sys.modules["pandas"]
    mode = missing_mode(element)
    values = _series_values(_nw().from_native(part, series_only=True), element, mode)
    if mode == "none":
        values = values.astype(object)
    elif mode == "nan":
        values = values.astype(np.float64)
    return pd.Series(values, index=part.index, name=part.name, copy=False)


def as_frame(x: object) -> object:
    """``x`` as a ``dict`` of numpy columns if it is a pandas/Polars DataFrame or pyarrow
    Table, else ``x`` unchanged.

    Columns without missing values are shared where the library allows; a float column keeps
    its missing values as NaN, any other column holds ``None`` for them, so the column's
    vector domain (for example the one declared by ``make_select_column``) decides.
    """
    if library_of(x) is None:
        return x
    df = _as_dataframe(x)
    if df is None:
        return x
    return {name: _series_values(df.get_column(name), None, "keep") for name in df.columns}


def carrier_of_dtype(dtype: Any) -> str | None:
    """The carrier name for a narwhals dtype: ``"i64"``, ``"f64"``, ``"bool"``, ``"String"``...

    None for a dtype with no carrier (dates, lists, structs ...).
    """
    nw = _nw()
    table = {
        nw.Float64: "f64",
        nw.Float32: "f32",
        nw.Int8: "i8",
        nw.Int16: "i16",
        nw.Int32: "i32",
        nw.Int64: "i64",
        nw.UInt8: "u8",
        nw.UInt16: "u16",
        nw.UInt32: "u32",
        nw.UInt64: "u64",
        nw.Boolean: "bool",
        nw.String: "String",
        nw.Categorical: "String",
        nw.Enum: "String",
    }
    for k, v in table.items():
        if dtype == k:
            return v
    return None


def schema(x: object) -> dict[Any, str | None] | None:
    """A frame's column names and carrier types, read from its schema only (never its values).

    None if ``x`` is not a pandas/Polars DataFrame, pyarrow Table or Dask DataFrame.  For a
    pandas ``object`` column (whose type pandas does not record) the carrier is ``"String"``.
    A Dask DataFrame's schema is read from its metadata (an empty pandas frame).
    """
    lib = library_of(x)
    if lib is None:
        return None
    if lib == "dask":
        meta = getattr(x, "_meta", None)
        if meta is None or library_of(meta) != "pandas" or not hasattr(meta, "columns"):
            return None
        x = meta  # zero rows: the schema, nothing else
    df = _as_dataframe(x)
    if df is None:
        return None
    return {name: carrier_of_dtype(dtype) for name, dtype in df.schema.items()}


def series_carrier(x: object) -> str | None:
    """The carrier type of a column (pandas/Polars/pyarrow/Dask series), from its dtype only."""
    lib = library_of(x)
    if lib is None:
        return None
    if lib == "dask":
        meta = getattr(x, "_meta", None)
        if meta is None or library_of(meta) != "pandas":
            return None
        x = meta
    s = _as_series(x)
    return None if s is None else carrier_of_dtype(s.dtype)


def column_names(x: object) -> list[Any]:
    """The column names of a frame (from its schema)."""
    s = schema(x)
    return [] if s is None else list(s)
