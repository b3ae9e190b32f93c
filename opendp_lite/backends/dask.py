"""The Dask backend: the protocol of :mod:`opendp_lite.backends` over ``opendp_lite._dask``.

The task-graph machinery (lazy membership checks, exact reductions in a tree of ``delayed``
tasks, the fused clamp) lives in ``opendp_lite._dask``, which also registers Dask vectors and
frames with the domains; this module is the constructors' view of it.  Dask is imported only
when a Dask collection is passed in.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import _dask, _frames
from . import register

__all__ = ["DASK", "DaskBackend"]


def _add(a: npt.NDArray[Any], b: npt.NDArray[Any]) -> npt.NDArray[Any]:
    out: npt.NDArray[Any] = np.add(a, b)
    return out


class DaskBackend:
    """Dask arrays, series and dataframes: every function runs on the workers."""

    name = "dask"
    label = "Dask arrays"
    lazy = True
    holds_objects = False  # an option vector is an object array of Python values
    stable_blocks = False  # a recomputed block (after a worker failure) is computed again

    def owns(self, x: object) -> bool:
        return _dask.is_dask(x)

    def length(self, x: Any) -> int:
        # counted on the workers: the lengths may be unknown, and counting runs the checks
        return _dask.length(x)

    def blocks(self, x: Any) -> Iterator[npt.NDArray[Any]]:
        # chunk by chunk: works whether or not the chunk lengths are known (after a filter
        # they are not, and len() would raise) and whatever they are, empty chunks included
        for i in range(x.numblocks[0]):
            yield _dask.computed(np.asarray, x.blocks[i])

    def reduce_blocks(self, x: Any, fn: Callable[..., Any], *args: Any) -> Any:
        return _dask.reduce_blocks(x, fn, *args)

    def map_rows(self, x: Any, fn: Callable[..., Any], dtype: Any, *args: Any) -> Any:
        return _dask.map_rows(x, fn, dtype, *args)

    def clip(self, x: Any, lo: Any, hi: Any) -> Any:
        return _dask.clip(x, lo, hi)  # lazily; an exact aggregate may fuse it

    def clip_source(self, x: Any) -> tuple[Any, tuple[Any, Any] | None]:
        return _dask.clip_source(x)

    def sized(self, x: Any) -> Any:
        return _dask.sized(x)  # len() needs known Dask chunk lengths (threat model: finding 9)

    def materialize(self, x: Any) -> Any:
        return np.asarray(x)

    def isin(self, col: Any, values: list[Any]) -> Any:
        return col.isin(values)

    # -- frames

    def owns_frame(self, x: object) -> bool:
        return _dask.is_dask_dataframe(x)

    def frame_to_dict(self, frame: Any) -> dict[Any, npt.NDArray[Any]]:
        pdf = frame.compute()
        return {c: pdf[c].to_numpy() for c in pdf.columns}

    def reduce_partitions(
        self, frame: Any, fn: Callable[..., Any], k: int, *args: Any
    ) -> npt.NDArray[Any]:
        """Per-partition partials (vectors of exact integers) added pairwise on the workers."""
        dask: Any = importlib.import_module("dask")
        delayed, compute = dask.delayed, dask.compute
        level = [delayed(fn)(part, *args) for part in frame.to_delayed()]
        if not level:
            return np.zeros(k, dtype=object)
        while len(level) > 1:
            nxt = [delayed(_add)(a, b) for a, b in zip(level[::2], level[1::2], strict=False)]
            level = nxt + ([level[-1]] if len(level) % 2 else [])
        return np.asarray(compute(level[0])[0])

    def frame_carrier(self, frame: Any, key: Any) -> str | None:
        carrier: str | None = (_frames.schema(frame) or {}).get(key)
        return carrier

    def filter_frame(self, frame: Any, keep: Any) -> Any:
        return frame[keep]


DASK = DaskBackend()
register(DASK)
