"""The numpy backend, the eager default: every function is applied to the values directly.

It owns whatever no registered backend claims: numpy arrays, and duck arrays implementing the
numpy API, which are read in consecutive slices of :data:`BLOCK` values (never whole).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["BLOCK", "NUMPY", "NumpyBackend", "combine"]

#: Values pulled from a lazy (chunked) duck array at a time: 2^20 (8 MB of binary64).
BLOCK = 1 << 20


def combine(total: Any, part: Any) -> Any:
    """The exact sum of two partials: Python ints, tuples of them, or integer vectors."""
    if isinstance(total, tuple):
        return tuple(combine(a, b) for a, b in zip(total, part, strict=True))
    return total + part


class NumpyBackend:
    """Eager numpy: ``fn(x)`` is just ``fn(x)``."""

    name = "numpy"
    label = "numpy arrays"
    lazy = False
    holds_objects = True
    stable_blocks = True

    def owns(self, x: object) -> bool:
        return True

    def length(self, x: Any) -> int:
        return len(x)

    def blocks(self, x: Any) -> Iterator[npt.NDArray[Any]]:
        if isinstance(x, np.ndarray):
            yield x
            return
        n = len(x)
        for i in range(0, n, BLOCK):
            yield np.asarray(x[i : i + BLOCK])

    def reduce_blocks(self, x: Any, fn: Callable[..., Any], *args: Any) -> Any:
        total: Any = None
        for b in self.blocks(x):
            part = fn(b, *args)
            total = part if total is None else combine(total, part)
        if total is None:  # no block at all (an empty duck array)
            return fn(np.empty(0, dtype=getattr(x, "dtype", np.float64)), *args)
        return total

    def map_rows(self, x: Any, fn: Callable[..., Any], dtype: Any, *args: Any) -> Any:
        return fn(x, *args)

    def clip(self, x: Any, lo: Any, hi: Any) -> Any:
        # np.clip dispatches on the array type (numpy, or a lazy array implementing the API)
        return np.clip(x, lo, hi)

    def clip_source(self, x: Any) -> tuple[Any, tuple[Any, Any] | None]:
        return x, None

    def sized(self, x: Any) -> Any:
        return x

    def materialize(self, x: Any) -> Any:
        return x

    def isin(self, col: Any, values: list[Any]) -> Any:
        return np.isin(col, values)


NUMPY = NumpyBackend()
