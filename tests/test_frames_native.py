"""The native column reads of ``_frames`` (no narwhals round trip for common column
types) give exactly what the narwhals path gives: same values, same Python/numpy types, same
dtype, zero-copy where it was, and every missing value still goes to the narwhals path that
maps it or refuses it by name."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite import _frames
from opendp_lite.errors import NotInDomain

pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")
pa = pytest.importorskip("pyarrow")

MODES = ("none", "nan", "refuse", "keep")


def _columns() -> list[Any]:
    cols: list[Any] = []
    for dt in ["Int64", "Int8", "UInt32", "boolean", "int64[pyarrow]", "bool[pyarrow]"]:
        vals: list[Any] = [True, None, False] if "bool" in dt else [1, None, 3]
        cols += [pd.Series(vals, dtype=dt), pd.Series([v for v in vals if v is not None], dtype=dt)]
    cols += [
        pd.Series([1.0, np.nan]),
        pd.Series([1.0, 2.0]),
        pd.Series([1.0, 2.0], dtype=np.float32),
        pd.Series([1, 2]),
        pd.Series([True, False]),
        pd.Series(["a", None]),
        pd.Series(["a", "b"]),
        pd.Series(["a", "b"], dtype="string"),
        pd.Series(["a", 1], dtype=object),
        pd.Series([1.0, None], dtype="Float64"),
        pd.Series(["x", "y"], dtype="category"),
        pl.Series([1.0, None]),
        pl.Series([1.0, math.nan]),
        pl.Series([1.0, 2.0]),
        pl.Series([1, 2]),
        pl.Series([1, None]),
        pl.Series([True, False]),
        pl.Series(["a", "b"]),
        pa.array([1.0, 2.0]),
        pa.array([1.0, math.nan]),
        pa.array([1, None]),
        pa.array([1, 2], type=pa.int8()),
        pa.array([True, False]),
        pa.array(["a", "b"]),
    ]
    return cols


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    for u, v in zip(a, b, strict=True):
        if type(u) is not type(v):
            return False
        if not (u is v or u == v or (u != u and v != v)):
            return False
    return True


@pytest.mark.parametrize("mode", MODES)
def test_native_read_equals_the_narwhals_read(mode: str) -> None:
    taken = 0
    for col in _columns():
        fast = _frames._native_values(col, mode)  # type: ignore[arg-type]
        if fast is None:
            continue
        taken += 1
        slow = _frames._series_values(_frames._as_series(col), None, mode)  # type: ignore[arg-type]
        assert _same(fast, slow), (col, mode, fast, slow)
    assert taken >= 12  # the fast path is actually taken for the common types


def test_native_read_shares_memory_and_refuses_missing_by_name() -> None:
    f64 = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    x = np.arange(6.0)
    for col in (pd.Series(x), pl.Series("x", x), pa.array(x)):
        assert np.shares_memory(f64._normalize(col), col.to_numpy())
    with pytest.raises(NotInDomain, match=r"column 'w', position 1: a missing value"):
        f64._normalize(pd.Series([1.0, math.nan], name="w"))
    with pytest.raises(NotInDomain, match=r"column 'w', position 1: a missing value"):
        f64._normalize(pl.Series("w", [1.0, None]))
    strs = dp.vector_domain(dp.atom_domain(T=str))
    with pytest.raises(NotInDomain, match=r"position 0: a missing value"):
        strs._normalize(pd.Series([None, "a"], dtype="string", name="s"))
    ints = dp.vector_domain(dp.atom_domain(T="i64"))
    with pytest.raises(NotInDomain, match=r"column 'n', position 2: a missing value"):
        ints._normalize(pd.Series([1, 2, None], dtype="Int64", name="n"))
    for missing in (
        pd.Series(["a", None], dtype=object),
        pd.Series(["a", math.nan], dtype=object),
        pd.Series([1.0] * 40 + [math.nan]),  # long: the numpy scan
        pd.Series([1.0, math.nan]),  # short: the Python scan
        pl.Series([1.0] * 40 + [math.nan]),
        pa.array([1.0, None]),
    ):
        assert _frames._native_values(missing, "refuse") is None
    opt = dp.vector_domain(dp.option_domain(dp.atom_domain(T="i64")))
    assert opt._normalize(pd.Series([1, None, 3], dtype="Int64")).tolist() == [1, None, 3]
