"""The Dask backend: chains built for numpy also run on Dask arrays and dataframes.

Dask is optional (``pip install opendp_lite[dask]``); nothing here imports it unless a Dask
collection is actually passed in, so numpy users never pay for it.  Three pieces:

* **Membership, lazily.**  A vector domain checks a Dask array block by block *inside* the task
  graph: :func:`checked_vector` wraps the array in one ``map_blocks`` that runs the numpy
  membership check on each block (the same code as for a numpy vector) and raises
  :class:`~opendp_lite.errors.NotInDomain` on the worker if a block is outside the domain.  The
  check thus costs no extra pass over the data: it is fused with whatever the chain computes,
  and since every aggregate is computed before any noise is drawn, a bad input still fails
  *before* any randomness is used.  A block whose length differs from the array's declared
  chunk length also fails, so metadata cannot misstate the size.
* **Aggregates inside Dask.**  :func:`reduce_blocks` maps a numpy partial (an exact integer
  sum, a vector of counts) over the blocks on the workers and adds the partials up in a tree
  of ``delayed`` tasks; only the total (a Python ``int``, a tuple of them, or a short integer
  vector) comes back to the driver.  Every partial is an exact integer, so the total is the same
  for *every* chunking and *every* reduction tree (integer addition is associative and
  commutative); the maps of the aggregates therefore hold whatever Dask chooses.
* **Honest description.**  :func:`layout` reports what is known about a collection without
  reading its data: the number of partitions and the length if (and only if) the chunk sizes
  are known.  A vector domain's ``size`` is never taken from the data; a declared size is
  verified.

>>> is_dask_array([1.0]), is_dask_dataframe({"a": [1]})
(False, False)
"""

from __future__ import annotations

import importlib
import math
import sys
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import _frames
from .._types import carrier_dtype, is_float, is_int
from ..domains import Backend, register_backend
from ..errors import NotInDomain, OpenDPLiteError
from . import register

__all__ = [
    "DASK",
    "FANIN",
    "DaskBackend",
    "Layout",
    "checked_frame",
    "checked_vector",
    "clip",
    "clip_source",
    "computed",
    "force",
    "is_dask",
    "is_dask_array",
    "is_dask_dataframe",
    "layout",
    "length",
    "map_rows",
    "reduce_blocks",
    "sized",
]

#: Partials added per task of the reduction tree.
FANIN = 16


def is_dask_array(x: object) -> bool:
    """Whether ``x`` is a ``dask.array.Array`` (without importing Dask)."""
    mod = sys.modules.get("dask.array")
    return mod is not None and isinstance(x, mod.Array)


def is_dask_dataframe(x: object) -> bool:
    """Whether ``x`` is a ``dask.dataframe.DataFrame`` (without importing Dask)."""
    mod = sys.modules.get("dask.dataframe")
    return mod is not None and isinstance(x, mod.DataFrame)


def _is_dask_series(x: object) -> bool:
    mod = sys.modules.get("dask.dataframe")
    return mod is not None and isinstance(x, mod.Series)


def is_dask(x: object) -> bool:
    """Whether ``x`` is a Dask array, dataframe or series."""
    return is_dask_array(x) or is_dask_dataframe(x) or _is_dask_series(x)


# ----------------------------------------------------------------------------------------------
# Layout


@dataclass(frozen=True)
class Layout:
    """What a Dask collection's metadata says, read without computing anything.

    ``size`` is ``None`` when the chunk (partition) lengths are unknown, e.g. after a filter
    such as ``drop_null`` or for a dataframe column; ``chunks`` is then ``None`` as well.
    """

    npartitions: int
    size: int | None
    chunks: tuple[int, ...] | None


def layout(x: Any) -> Layout:
    """The partitioning of a Dask array or dataframe, and its length if known.

    >>> import dask.array as da
    >>> layout(da.zeros(10, chunks=4))
    Layout(npartitions=3, size=10, chunks=(4, 4, 2))
    """
    if is_dask_array(x):
        chunks = x.chunks[0]
        if any(math.isnan(c) for c in chunks):
            return Layout(len(chunks), None, None)
        return Layout(len(chunks), int(sum(chunks)), tuple(int(c) for c in chunks))
    if is_dask_dataframe(x) or _is_dask_series(x):
        return Layout(int(x.npartitions), None, None)
    raise TypeError(f"expected a Dask collection, got {type(x).__name__}")


# ----------------------------------------------------------------------------------------------
# Membership


def _check_block(
    block: npt.NDArray[Any],
    element: Any,
    coerce: Callable[[Any, Any], npt.NDArray[Any]],
    block_info: dict[Any, Any] | None = None,
) -> npt.NDArray[Any]:
    """The numpy membership check of one block, on the worker; returns the normalised block.

    ``element`` is the vector domain's atom domain; the check is the numpy vector check, so a
    Dask vector is a member exactly when the numpy vector of its values is.
    """
    block = _plain(block)
    if block_info is not None and 0 in block_info:
        start, stop = block_info[0]["array-location"][0]
        if not (math.isnan(start) or math.isnan(stop)) and block.shape[0] != stop - start:
            raise NotInDomain(
                f"a block holds {block.shape[0]} values where the array's metadata declares "
                f"{stop - start}"
            )
    T = element.T
    if block.ndim == 1 and block.size and block.dtype == np.dtype(carrier_dtype(T)) and is_float(T):
        # already of the float carrier: NaN and bounds follow from the block's min and max
        # (numpy's min and max propagate NaN), one read of the block and no temporary
        if element.bounds is None:
            if not element.nan and np.isnan(np.min(block)):
                raise NotInDomain(f"NaN is not a member of {element!r}")
            return block
        lo_b, hi_b = element.bounds
        if not (np.min(block) >= lo_b and np.max(block) <= hi_b):  # False for NaN
            if np.isnan(np.min(block)):
                raise NotInDomain(f"NaN is not a member of {element!r}")
            pos = int(np.argmax((block < lo_b) | (block > hi_b)))  # only on the failure path
            raise NotInDomain(
                f"position {pos} of a block: {block[pos].item()!r} is outside the bounds of "
                f"{element!r}"
            )
        return block
    return coerce(element, block)


def _refuse_masked(where: str) -> NotInDomain:
    return NotInDomain(
        f"{where} is a numpy masked array: its masked entries still hold values, which the "
        "aggregates would read; fill or drop them first (np.ma.filled, np.ma.compressed, "
        "or a NaN and make_drop_null / make_impute_constant)"
    )


def _plain(block: Any) -> npt.NDArray[Any]:
    """``block`` as a plain ``numpy.ndarray``: the very buffer that is checked and then read.

    A masked array is refused outright (by its type, never by its values): its reductions
    (``min``, ``max``, ``isnan(...).any()``) skip the masked entries while every kernel that
    writes into a plain output buffer reads them, so checking it would check other data than
    the aggregates use.  Any other ndarray subclass is viewed as a plain ndarray, and a
    non-numpy block (a duck array) is converted, so the check and the kernels see one array.
    """
    if isinstance(block, np.ma.MaskedArray):
        raise _refuse_masked("a block")
    if type(block) is np.ndarray:
        return block
    if isinstance(block, np.ndarray):
        return block.view(np.ndarray)
    try:
        out = np.asarray(block)
    except (TypeError, ValueError) as e:
        raise NotInDomain(f"cannot read a block of type {type(block).__name__}: {e}") from None
    if isinstance(out, np.ma.MaskedArray):  # pragma: no cover - np.asarray returns an ndarray
        raise _refuse_masked("a block")
    return out.view(np.ndarray) if type(out) is not np.ndarray else out


def _meta_check(element: Any, x: Any) -> None:
    """The dtype rules of the numpy vector check, applied to the metadata (an early error)."""
    T = element.T
    kind = np.dtype(x.dtype).kind
    if T == "String":
        if kind not in "OUT":  # objects (checked per block to be str) or numpy strings
            raise NotInDomain(f"inferred element type is {x.dtype}, expected {T}")
        return
    if (T == "bool") != (kind == "b") or kind not in "biuf":
        raise NotInDomain(f"inferred element type is {x.dtype}, expected {T}")
    if is_int(T) and kind not in "iu":
        raise NotInDomain(f"inferred element type is {x.dtype}, expected {T}")


def checked_vector(
    element: Any, size: int | None, x: Any, coerce: Callable[[Any, Any], npt.NDArray[Any]]
) -> Any:
    """``x`` (a Dask array or series) as a lazily checked member of ``vector_domain``.

    Metadata (dimension, dtype kind, declared length) is checked now; the values are checked
    block by block when the result is computed, by the numpy vector check.  If ``size`` is
    declared but the chunk lengths are unknown, only the lengths are computed to verify it.

    Raises:
        NotInDomain: if the metadata already shows that ``x`` is not a member.
    """
    if _is_dask_series(x):
        if not isinstance(x.dtype, np.dtype):  # a nullable pandas dtype: map missing values
            meta = _frames.partition_values(x._meta, element)
            x = x.map_partitions(_frames.partition_values, element, meta=meta)
        with warnings.catch_warnings():  # pandas string columns become object arrays: fine
            warnings.filterwarnings("ignore", message=".*extension dtypes", category=UserWarning)
            x = x.to_dask_array()  # partition lengths stay unknown (not computed)
    if x.ndim != 1:
        raise NotInDomain(f"expected a 1-d vector, got an array of shape {x.shape}")
    if isinstance(getattr(x, "_meta", None), np.ma.MaskedArray):
        raise _refuse_masked("the array (by its metadata)")  # early; blocks are checked too
    _meta_check(element, x)
    if size is not None:
        n = layout(x).size
        if n is None:
            n = length(x)
        if n != size:
            raise NotInDomain(f"expected a vector of size {size}, got length {n}")
    dtype = np.dtype(carrier_dtype(element.T))
    return x.map_blocks(_check_block, element, coerce, dtype=dtype, meta=np.empty(0, dtype=dtype))


def checked_frame(K: str, x: Any, coerce_key: Callable[[str, Any], Any]) -> Any:
    """A Dask dataframe as a member of ``dataframe_domain(K)``: its column names are checked
    now (metadata); its columns are checked when a vector domain reads them."""
    for k in x.columns:
        coerce_key(K, k)
    return x


def force(x: Any) -> None:
    """Compute every block of ``x`` (running the membership checks), keeping nothing."""
    reduce_blocks(x, _nothing)


def force_frame(x: Any, check: Callable[[Any], None]) -> None:
    """Run ``check(partition)`` on every partition (a pandas DataFrame) of the Dask frame ``x``,
    in one ``compute`` that reads each partition once; nothing but the check's refusal (a
    :class:`~opendp_lite.errors.NotInDomain`, for the data owner) reaches the driver."""
    dask: Any = importlib.import_module("dask")
    parts = [dask.delayed(_checked_partition, pure=True)(p, check) for p in x.to_delayed()]
    if parts:
        computed(dask.compute, *parts)


def _checked_partition(partition: Any, check: Callable[[Any], None]) -> int:
    check(partition)
    return 0


def _nothing(block: npt.NDArray[Any]) -> int:
    return 0


# ----------------------------------------------------------------------------------------------
# Row-by-row maps and reductions


def map_rows(x: Any, fn: Callable[..., npt.NDArray[Any]], dtype: Any, *args: Any) -> Any:
    """``fn`` applied to each block of ``x`` (a row-by-row numpy function), lazily."""
    dt = np.dtype(dtype)
    return x.map_blocks(fn, *args, dtype=dt, meta=np.empty(0, dtype=dt))


def clip(x: Any, lo: Any, hi: Any) -> Any:
    """``np.clip(x, lo, hi)`` on a Dask array, lazily, remembering its source.

    An exact aggregate that receives the result can instead clamp each cache-sized piece of
    the *source* blocks itself (:func:`clip_source`), which saves writing a clamped copy of
    every block; any other consumer computes the clamped array as usual.
    """
    out = x.map_blocks(np.clip, lo, hi, dtype=x.dtype, meta=np.empty(0, dtype=x.dtype))
    out._opendp_clip = (x, (lo, hi))
    return out


def clip_source(x: Any) -> tuple[Any, tuple[Any, Any] | None]:
    """``(source, (lo, hi))`` if ``x`` was made by :func:`clip`, else ``(x, None)``."""
    src = getattr(x, "_opendp_clip", None)
    if src is None:
        return x, None
    return src[0], src[1]


def _combine(*parts: Any) -> Any:
    """The exact sum of partials: Python ints, tuples of them, or integer vectors."""
    first = parts[0]
    if isinstance(first, tuple):
        return tuple(_combine(*col) for col in zip(*parts, strict=True))
    if isinstance(first, np.ndarray):
        # integer vectors of counts: each entry is at most the number of values (< 2^63)
        total = np.zeros_like(first)
        for p in parts:
            total += p
        return total
    return sum(parts[1:], first)


def _partial(block: npt.NDArray[Any], fn: Callable[..., Any], *args: Any) -> npt.NDArray[Any]:
    out = np.empty(1, dtype=object)  # a 1-element holder, so Dask treats it as a block
    out[0] = fn(block, *args)
    return out


def _combine_held(*held: npt.NDArray[Any]) -> npt.NDArray[Any]:
    out = np.empty(1, dtype=object)
    out[0] = _combine(*(h[0] for h in held))
    return out


def reduce_blocks(x: Any, fn: Callable[..., Any], *args: Any) -> Any:
    """``Σ_blocks fn(block, *args)``, computed in Dask; only the total reaches the driver.

    ``fn`` runs as one more blockwise step, so Dask fuses it with the steps that produce each
    block (generation, membership check, clamp, ...) into one task per block: the block never
    leaves its worker.  The partials are then added in a tree of fan-in :data:`FANIN`.  They
    must be exact integers (or tuples / integer vectors of them) so that the total does not
    depend on the chunking or on the shape of the reduction tree.
    """
    # typed as Any: dask's own annotations are partial, and it is imported only when used
    dask: Any = importlib.import_module("dask")
    nblocks = x.numblocks[0]
    if nblocks == 0:
        return fn(np.empty(0, dtype=x.dtype), *args)
    held = x.map_blocks(
        _partial,
        fn,
        *args,
        chunks=((1,) * nblocks,),
        dtype=object,
        meta=np.empty(0, dtype=object),
    )
    parts = list(held.to_delayed().ravel())
    while len(parts) > 1:
        parts = [
            dask.delayed(_combine_held, pure=True)(*parts[i : i + FANIN])
            for i in range(0, len(parts), FANIN)
        ]
    (total,) = computed(dask.compute, parts[0])
    return total[0]


def computed(compute: Callable[..., Any], *args: Any) -> Any:
    """``compute(*args)``, where Dask's own failure to compute the blocks of the input is
    :class:`~opendp_lite.errors.NotInDomain` (raised before any randomness, carrying no value).

    Dask raises an untyped ``ValueError``, ``IndexError`` or ``KeyError`` when a collection's
    graph disagrees with its chunks: e.g. an elementwise operation on a length-1 array with an
    empty chunk (``x = da.from_array(np.array([-6]), chunks=((0, 1),))``: ``x >= x.min()``
    pairs the empty block with the value, ``(x + 1).compute()`` has two values, so
    ``x[x >= x.min()].compute()`` fails in Dask itself: 2024.12.1, 2026.7.1 and 2026.8.0
    tried).  No numpy answer can be read from such a graph: the input is refused.  Our own
    typed errors pass through.
    """
    failed = ""
    try:
        return compute(*args)
    except OpenDPLiteError:
        raise
    except (ValueError, IndexError, KeyError) as e:
        failed = type(e).__name__  # raised below, outside this handler: no chained message
    raise NotInDomain(
        f"Dask could not compute the blocks of the input (it raised {failed}): the "
        "collection's graph disagrees with its chunks, as after an elementwise operation on "
        "a length-1 Dask array with an empty chunk, which Dask computes wrongly by itself "
        "(x.compute() fails too); rechunk the source so that no chunk is empty "
        "(x.rechunk(...)) before filtering, or pass the numpy values"
    )


def sized(x: Any) -> Any:
    """``x`` with known chunk lengths, for a function that needs ``len``/positions.

    A Dask array whose chunk lengths are unknown (after a filter such as ``drop_null``, or a
    dataframe column) gets them computed: one pass on the workers that returns only the
    lengths (and runs the membership checks), so ``len(x)``, permutations and padding then
    give the numpy answer instead of Dask's untyped ``ValueError``.  Empty chunks are fine.
    Anything else is returned unchanged.

    >>> import dask.array as da
    >>> z = da.arange(10, chunks=5)
    >>> len(sized(z[z > 6]))
    3
    """
    if is_dask_array(x) and any(math.isnan(c) for c in x.chunks[0]):
        return computed(x.copy().compute_chunk_sizes)  # a copy: never mutate the caller's
    return x


def length(x: Any) -> int:
    """The number of values in ``x``, counted in Dask (runs the membership checks)."""
    n: int = reduce_blocks(x, _len)
    return n


def _len(block: npt.NDArray[Any]) -> int:
    return int(block.shape[0])


register_backend(
    Backend(
        name="dask",
        owns_vector=is_dask,
        checked_vector=checked_vector,
        force=force,
        force_frame=force_frame,
        owns_frame=is_dask_dataframe,
        checked_frame=checked_frame,
    )
)


# ----------------------------------------------------------------------------------------------
# The constructors' view (opendp_lite.backends.ArrayBackend, FrameBackend)


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
        return is_dask(x)

    def length(self, x: Any) -> int:
        # counted on the workers: the lengths may be unknown, and counting runs the checks
        return length(x)

    def blocks(self, x: Any) -> Iterator[npt.NDArray[Any]]:
        # chunk by chunk: works whether or not the chunk lengths are known (after a filter
        # they are not, and len() would raise) and whatever they are, empty chunks included
        for i in range(x.numblocks[0]):
            yield computed(np.asarray, x.blocks[i])

    def reduce_blocks(self, x: Any, fn: Callable[..., Any], *args: Any) -> Any:
        return reduce_blocks(x, fn, *args)

    def map_rows(self, x: Any, fn: Callable[..., Any], dtype: Any, *args: Any) -> Any:
        return map_rows(x, fn, dtype, *args)

    def clip(self, x: Any, lo: Any, hi: Any) -> Any:
        return clip(x, lo, hi)  # lazily; an exact aggregate may fuse it

    def clip_source(self, x: Any) -> tuple[Any, tuple[Any, Any] | None]:
        return clip_source(x)

    def sized(self, x: Any) -> Any:
        return sized(x)  # len() needs known Dask chunk lengths (threat model: finding 9)

    def materialize(self, x: Any) -> Any:
        return np.asarray(x)

    def isin(self, col: Any, values: list[Any]) -> Any:
        return col.isin(values)

    # -- frames

    def owns_frame(self, x: object) -> bool:
        return is_dask_dataframe(x)

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
