"""An example backend: :class:`Chunked`, a vector held as a list of numpy chunks.

It is the whole of what a new backend needs, in one module: a vector type, an
:class:`~opendp_lite.backends.ArrayBackend` whose blocks are the chunks, and two registrations
(with the constructors' dispatcher, :func:`~opendp_lite.backends.register`, and with the
domains, :func:`~opendp_lite.domains.register_backend`, so its vectors are members).  Every
constructor then accepts it unchanged: counts, exact sums and clamps run chunk by chunk and
give numpy's answers, since every partial is an exact integer.  A real one (pyarrow
``ChunkedArray``, CuPy, cuDF) differs only in how a chunk is read.

>>> import opendp_lite.prelude as dp
>>> space = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
>>> x = Chunked([np.array([1, 2]), np.array([3, 4, 5])])
>>> (space >> dp.t.then_count())(x), (space >> dp.t.then_clamp((0, 3)) >> dp.t.then_sum())(x)
(5, 12)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..domains import Backend, register_backend
from ..errors import NotInDomain
from . import register
from .numpy import combine

__all__ = ["CHUNKED", "Chunked", "ChunkedBackend"]


class Chunked:
    """A 1-d vector stored as consecutive numpy chunks (never concatenated by the backend)."""

    def __init__(self, chunks: Sequence[Any]) -> None:
        self.chunks = tuple(np.asarray(c) for c in chunks)
        for c in self.chunks:
            if c.ndim != 1:
                raise ValueError("every chunk must be 1-d")

    def __len__(self) -> int:
        return sum(c.shape[0] for c in self.chunks)

    def __array__(self, dtype: Any = None, copy: Any = None) -> npt.NDArray[Any]:
        # the escape hatch of numpy-API code outside the constructors (e.g. printing)
        out = np.concatenate(self.chunks) if self.chunks else np.empty(0)
        return out if dtype is None else out.astype(dtype)

    def __repr__(self) -> str:
        return f"Chunked({[c.tolist() for c in self.chunks]!r})"


class ChunkedBackend:
    """:class:`Chunked` vectors: every function runs chunk by chunk, eagerly."""

    name = "chunked"
    label = "chunked vectors"
    lazy = False
    holds_objects = True
    stable_blocks = True

    def owns(self, x: object) -> bool:
        return isinstance(x, Chunked)

    def length(self, x: Any) -> int:
        return len(x)

    def blocks(self, x: Any) -> Iterator[npt.NDArray[Any]]:
        yield from x.chunks

    def reduce_blocks(self, x: Any, fn: Callable[..., Any], *args: Any) -> Any:
        total: Any = None
        for b in x.chunks:
            part = fn(b, *args)
            total = part if total is None else combine(total, part)
        return fn(np.empty(0), *args) if total is None else total

    def map_rows(self, x: Any, fn: Callable[..., Any], dtype: Any, *args: Any) -> Any:
        return Chunked([np.asarray(fn(c, *args), dtype=dtype) for c in x.chunks])

    def clip(self, x: Any, lo: Any, hi: Any) -> Any:
        return Chunked([np.clip(c, lo, hi) for c in x.chunks])

    def clip_source(self, x: Any) -> tuple[Any, tuple[Any, Any] | None]:
        return x, None

    def sized(self, x: Any) -> Any:
        return x

    def materialize(self, x: Any) -> Any:
        return np.asarray(x)

    def isin(self, col: Any, values: list[Any]) -> Any:
        return self.map_rows(col, np.isin, np.bool_, values)


def _checked(
    element: Any, size: int | None, x: Chunked, coerce: Callable[[Any, Any], npt.NDArray[Any]]
) -> Chunked:
    """Each chunk through the numpy vector check (so a member exactly when numpy's is)."""
    if size is not None and len(x) != size:
        raise NotInDomain(f"expected a vector of size {size}, got length {len(x)}")
    out = Chunked([coerce(element, c) for c in x.chunks])
    for c in out.chunks:
        c.flags.writeable = False
    return out


def _no_frame(*args: Any) -> Any:  # pragma: no cover - this backend has no frames
    raise NotImplementedError("chunked vectors have no data frames")


CHUNKED = ChunkedBackend()
register(CHUNKED)
register_backend(
    Backend(
        name="chunked",
        owns_vector=CHUNKED.owns,
        checked_vector=_checked,
        force=lambda x: None,  # checked eagerly: nothing left to compute
        owns_frame=lambda x: False,
        checked_frame=_no_frame,
        force_frame=_no_frame,
    )
)
