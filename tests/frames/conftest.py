"""Fixtures for the frame tests: the same data as a column or a frame of each library.

Each optional library is skipped cleanly when it is not installed.  Dask runs on its
synchronous scheduler here (no cluster): these tests check conversion, not distribution.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

LIBRARIES = ["pandas", "polars", "pyarrow", "dask"]


def series_maker(lib: str) -> Callable[..., Any]:
    """``make(values, name, dtype=None)``: a column of ``lib`` holding ``values``."""
    if lib == "pandas":
        pd = pytest.importorskip("pandas")
        return lambda values, name="x", dtype=None: pd.Series(values, name=name, dtype=dtype)
    if lib == "polars":
        pl = pytest.importorskip("polars")
        return lambda values, name="x", dtype=None: pl.Series(name, values, dtype=dtype)
    if lib == "pyarrow":
        pa = pytest.importorskip("pyarrow")
        return lambda values, name="x", dtype=None: pa.chunked_array([values], type=dtype)
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")

    def dask_series(values: Any, name: str = "x", dtype: Any = None) -> Any:
        return dd.from_pandas(pd.Series(values, name=name, dtype=dtype), npartitions=2)

    return dask_series


def frame_maker(lib: str) -> Callable[[dict[str, Any]], Any]:
    """``make(columns)``: a data frame of ``lib`` from a dict of lists."""
    if lib == "pandas":
        pd = pytest.importorskip("pandas")
        return pd.DataFrame
    if lib == "polars":
        pl = pytest.importorskip("polars")
        return lambda cols: pl.DataFrame(cols, strict=False)
    if lib == "pyarrow":
        pa = pytest.importorskip("pyarrow")
        return pa.table
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    return lambda cols: dd.from_pandas(pd.DataFrame(cols), npartitions=2)


@pytest.fixture(params=LIBRARIES)
def lib(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "dask":
        dask = pytest.importorskip("dask")
        with dask.config.set(scheduler="synchronous"):
            yield request.param
    else:
        yield request.param


@pytest.fixture
def series(lib: str) -> Callable[..., Any]:
    """A maker of columns of the library under test."""
    return series_maker(lib)


@pytest.fixture
def frame(lib: str) -> Callable[[dict[str, Any]], Any]:
    """A maker of data frames of the library under test."""
    return frame_maker(lib)
