"""Array backends: numpy, Dask and the others as peers behind one protocol.

The constructors (``transformations``, ``measurements``, ``combinators``) never name a backend:
they ask :func:`of` for the backend that owns a vector (numpy, the eager default, owns whatever
no registered backend claims) and call its methods, each of which the numpy backend implements
by applying the function directly:

* ``length(x)``, ``blocks(x)`` (numpy arrays, one at a time), ``reduce_blocks(x, fn, *args)``
  (``fn`` on each block, the exact integer partials added: the total does not depend on the
  blocking), ``map_rows(x, fn, dtype, *args)`` (a row-by-row numpy function on each block),
  ``clip(x, lo, hi)`` and ``clip_source(x)`` (a clamp an exact aggregate may take over),
  ``sized(x)`` (known length), ``materialize(x)`` (a numpy array), ``isin(col, values)``;
* the capabilities ``lazy`` (the vector is a task graph, not values), ``holds_objects`` (it can
  hold an object array of Python values) and ``stable_blocks`` (a block computed twice has the
  same values: draws made in a row map would not be);
* for data frames, :func:`of_frame` returns the backend owning a lazy frame (or ``None`` for a
  dict of columns), with ``frame_to_dict``, ``reduce_partitions``, ``frame_carrier`` and
  ``filter_frame``.

Membership (a backend's vectors as members of a vector domain) is registered with the domains
(:func:`opendp_lite.domains.register_backend`) by the same module.  Adding a backend is one
module implementing :class:`ArrayBackend` plus one :func:`register` call (see
``backends/chunked.py``, the example, and docs/architecture.md, "Adding a backend").

>>> import numpy as np
>>> of(np.arange(3)).name, of([1, 2]).name
('numpy', 'numpy')
>>> of(np.arange(5)).reduce_blocks(np.arange(5), lambda b: int(b.sum()))
10
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

__all__ = ["BLOCK", "ArrayBackend", "FrameBackend", "of", "of_frame", "register", "registered"]


@runtime_checkable
class ArrayBackend(Protocol):
    """What a constructor may ask of the backend that owns a vector (see the module doc)."""

    name: str
    #: the vector is a task graph: reading it computes it (and runs its lazy checks)
    lazy: bool
    #: it can hold an object array of Python values (option outputs)
    holds_objects: bool
    #: a block computed twice has the same values (so row maps may not draw randomness)
    stable_blocks: bool
    #: the label used in messages ("Dask arrays")
    label: str

    def owns(self, x: object) -> bool: ...
    def length(self, x: Any) -> int: ...
    def blocks(self, x: Any) -> Iterator[npt.NDArray[Any]]: ...
    def reduce_blocks(self, x: Any, fn: Callable[..., Any], *args: Any) -> Any: ...
    def map_rows(self, x: Any, fn: Callable[..., Any], dtype: Any, *args: Any) -> Any: ...
    def clip(self, x: Any, lo: Any, hi: Any) -> Any: ...
    def clip_source(self, x: Any) -> tuple[Any, tuple[Any, Any] | None]: ...
    def sized(self, x: Any) -> Any: ...
    def materialize(self, x: Any) -> Any: ...
    def isin(self, col: Any, values: list[Any]) -> Any: ...


@runtime_checkable
class FrameBackend(Protocol):
    """What a constructor may ask of the backend that owns a lazy data frame."""

    name: str

    def owns_frame(self, x: object) -> bool: ...
    def frame_to_dict(self, frame: Any) -> dict[Any, npt.NDArray[Any]]: ...
    def reduce_partitions(
        self, frame: Any, fn: Callable[..., Any], k: int, *args: Any
    ) -> npt.NDArray[Any]: ...
    def frame_carrier(self, frame: Any, key: Any) -> str | None: ...
    def filter_frame(self, frame: Any, keep: Any) -> Any: ...


_REGISTRY: list[ArrayBackend] = []


def register(backend: ArrayBackend) -> None:
    """Make ``backend`` the owner of the vectors it claims (idempotent by name).

    Registered backends are asked in order; numpy owns whatever none of them claims.
    """
    _REGISTRY[:] = [b for b in _REGISTRY if b.name != backend.name] + [backend]


def registered() -> tuple[str, ...]:
    """The names of the registered backends (numpy, the fallback, is always last)."""
    return (*(b.name for b in _REGISTRY), "numpy")


def of(x: object) -> ArrayBackend:
    """The backend that owns the vector ``x``: the first registered one that claims it, else
    numpy (which applies every function directly)."""
    if type(x) is np.ndarray:  # the common case, without asking every backend
        return NUMPY
    for b in _REGISTRY:
        if b.owns(x):
            return b
    return NUMPY


def of_frame(x: object) -> FrameBackend | None:
    """The backend that owns the lazy data frame ``x``, or ``None`` for an eager frame (a dict
    of columns, read directly)."""
    if isinstance(x, Mapping):
        return None
    for b in _REGISTRY:
        if isinstance(b, FrameBackend) and b.owns_frame(x):
            return b
    return None


from . import chunked, dask  # noqa: E402,F401 - registration on import
from .numpy import BLOCK, NUMPY  # noqa: E402 - the fallback; the others register themselves
