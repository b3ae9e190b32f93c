"""The single source of randomness in opendp_lite: the operating system's CSPRNG.

Every sampler, scalar or vectorised, draws its bits through :func:`fill_bytes`.  Python's
``random``, numpy's generators and gmpy2's random state are never used.  If the OS source
fails, :func:`fill_bytes` raises; there is no fallback.

For reproducible *tests only*, :func:`scripted_randomness` swaps the source for a given
byte stream (or a deterministic SHAKE-256 stream from a seed).  It warns when entered, since
a scripted stream gives no privacy.

>>> len(fill_bytes(16))
16
>>> import warnings
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     with scripted_randomness(seed=b"doc"):
...         a = fill_bytes(8)
...     with scripted_randomness(seed=b"doc"):
...         b = fill_bytes(8)
>>> a == b
True
"""

from __future__ import annotations

import hashlib
import os
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import OpenDPLiteError, OpenDPLiteWarning

__all__ = ["RandomnessError", "fill_bytes", "fill_uint64", "scripted_randomness"]


class RandomnessError(OpenDPLiteError, OSError):
    """The OS randomness source failed; nothing was sampled."""


def _os_source(n: int) -> bytes:
    try:
        out = os.urandom(n)
    except Exception as e:  # any failure of the OS source is fatal: no fallback
        raise RandomnessError(f"the OS CSPRNG failed: {e}") from e
    if len(out) != n:
        raise RandomnessError(f"the OS CSPRNG returned {len(out)} bytes, wanted {n}")
    return out


_source: Callable[[int], bytes] = _os_source
_swap_lock = threading.Lock()


def fill_bytes(n: int) -> bytes:
    """``n`` bytes from the OS CSPRNG (or the scripted test stream, if one is active).

    Raises:
        RandomnessError: if the source fails or returns short.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    out = _source(n)
    if len(out) != n:
        raise RandomnessError(f"randomness source returned {len(out)} bytes, wanted {n}")
    return out


def fill_uint64(n: int) -> npt.NDArray[np.uint64]:
    """``n`` independent uniform 64-bit words, read from :func:`fill_bytes` into numpy."""
    return np.frombuffer(fill_bytes(8 * n), dtype=np.uint64)


class _Shake:
    """A deterministic byte stream: SHAKE-256 of (seed, counter).  Tests only."""

    def __init__(self, seed: bytes) -> None:
        self._seed = seed
        self._counter = 0
        self._buf = b""
        self._pos = 0
        self._lock = threading.Lock()

    def __call__(self, n: int) -> bytes:
        with self._lock:
            if self._pos + n > len(self._buf):
                # keep the unread tail, then append whole blocks (no per-call buffer copies)
                parts = [self._buf[self._pos :]]
                have = len(parts[0])
                while have < n:
                    block = hashlib.shake_256(self._seed + self._counter.to_bytes(8, "little"))
                    parts.append(block.digest(1 << 16))
                    have += 1 << 16
                    self._counter += 1
                self._buf, self._pos = b"".join(parts), 0
            out = self._buf[self._pos : self._pos + n]
            self._pos += n
            return out


@contextmanager
def scripted_randomness(
    source: Callable[[int], bytes] | None = None, *, seed: bytes | None = None
) -> Iterator[Callable[[int], bytes]]:
    """Route :func:`fill_bytes` to ``source`` (or a SHAKE-256 stream of ``seed``), for tests.

    Never use this for a real release: it warns with :class:`OpenDPLiteWarning`.
    """
    global _source
    if (source is None) == (seed is None):
        raise ValueError("give exactly one of source or seed")
    stream: Callable[[int], bytes] = source if source is not None else _Shake(seed or b"")
    warnings.warn(
        "randomness is scripted: releases made now are NOT private (testing only)",
        OpenDPLiteWarning,
        stacklevel=3,
    )
    with _swap_lock:
        previous, _source = _source, stream
    try:
        yield stream
    finally:
        with _swap_lock:
            _source = previous


def _current_source() -> Any:
    """The active source (for tests that check which source is in use)."""
    return _source
