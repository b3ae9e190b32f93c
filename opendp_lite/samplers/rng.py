"""The single source of randomness in opendp_lite: a ChaCha20 DRBG keyed from the OS CSPRNG.

Every sampler, scalar or vectorised, draws its bits through :func:`fill_bytes`.  Python's
``random``, numpy's generators and gmpy2's random state are never used.

By default the bytes come from a user-space ChaCha20 generator (OpenSSL's, through the
``cryptography`` package) keyed with 32 bytes of ``os.urandom``, with *fast key erasure*
(every block of output first replaces the key with 32 fresh keystream bytes, so a later
memory compromise does not reveal earlier output), re-keyed from the OS after every
:data:`RESEED_BYTES` bytes and in every forked child (``os.register_at_fork`` and a pid
check), and serialised by a lock.  ``OPENDP_LITE_RNG=os`` in the environment, or
:func:`use_os_source`, selects the plain OS source instead (:func:`use_drbg` switches back).
The security argument is in ``docs/threat-model.md`` ("User-space DRBG").  If the OS source
fails (when keying, or always with the plain source), :func:`fill_bytes` raises; there is
no fallback.

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
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms

from ..errors import OpenDPLiteError, OpenDPLiteWarning

__all__ = [
    "EPOCH",
    "RESEED_BYTES",
    "RandomnessError",
    "bump_epoch",
    "fill_bytes",
    "fill_uint64",
    "scripted_randomness",
    "source_name",
    "use_drbg",
    "use_os_source",
]


class RandomnessError(OpenDPLiteError, OSError):
    """The OS randomness source failed; nothing was sampled."""

    #: inside an interactive release its message is withheld (it counts bytes asked for,
    #: which may follow the data's size), its class is kept (core.invoke_private)
    withheld_keeps_class = True


def _os_source(n: int) -> bytes:
    try:
        out = os.urandom(n)
    except Exception as e:  # any failure of the OS source is fatal: no fallback
        raise RandomnessError(f"the OS CSPRNG failed: {e}") from e
    if len(out) != n:
        raise RandomnessError(f"the OS CSPRNG returned {len(out)} bytes, wanted {n}")
    return out


#: Output bytes after which the DRBG takes a fresh 32-byte key from the OS.
RESEED_BYTES = 1 << 20
_BLOCK = 1 << 12  # keystream bytes generated per key (fast key erasure) for small requests
_ZEROS = memoryview(bytes(RESEED_BYTES))  # plaintext of the keystream (read-only, shared)


def _chacha20_keystream(key: bytes, n: int, nonce: bytes = bytes(16)) -> bytes:
    """``n`` bytes of the ChaCha20 keystream (RFC 8439) of ``key``.

    ``nonce`` is OpenSSL's 16-byte IV: the 32-bit initial block counter (little-endian)
    followed by the 96-bit RFC 8439 nonce.  The DRBG uses counter 0 and nonce 0 with a key
    that is never used twice.
    """
    enc = Cipher(algorithms.ChaCha20(key, nonce), mode=None).encryptor()
    return enc.update(bytes(n))


class _ChaChaDRBG:
    """ChaCha20 with fast key erasure, re-keyed from the OS; thread- and fork-safe.

    Each generation step runs ChaCha20 under the current key K and splits the keystream
    into (K', out): K' (32 bytes) replaces K at once and ``out`` is served.  Small requests
    are served in order from a buffer ``out`` of :data:`_BLOCK` bytes (dropped at the next
    refill); larger ones get their own step.  ``seed`` fixes the first key (known-answer
    tests only); otherwise keys come from :func:`_os_source`, which raises
    :class:`RandomnessError` on failure.
    """

    def __init__(self, seed: bytes | None = None) -> None:
        if seed is not None and len(seed) != 32:
            raise ValueError(f"seed must be 32 bytes, got {len(seed)}")
        self._lock = threading.Lock()
        self._seed = seed
        self._key: bytes | None = None
        self._buf = b""
        self._pos = 0
        self._since_key = 0
        self._pid = os.getpid()

    def forget(self) -> None:
        """Drop the key and the buffer (the next request re-keys from the OS)."""
        self._key, self._buf, self._pos, self._since_key = None, b"", 0, 0

    def _rekey(self) -> bytes:
        key = self._seed if self._seed is not None else _os_source(32)
        self._key, self._seed, self._since_key, self._pid = key, None, 0, os.getpid()
        return key

    def _generate(self, n: int) -> bytes:
        """``n`` fresh output bytes (one key-erasure step per at most RESEED_BYTES)."""
        parts: list[bytes] = []
        while n > 0:
            key = self._key
            if key is None or self._since_key >= RESEED_BYTES:
                key = self._rekey()
            take = min(n, RESEED_BYTES)  # so one key yields < 2·RESEED_BYTES bytes
            # the keystream's first 32 bytes become K', the next ``take`` are served: two
            # updates of one context give that same stream without copying it (or zeros) anew
            enc = Cipher(algorithms.ChaCha20(key, bytes(16)), mode=None).encryptor()
            self._key = enc.update(_ZEROS[:32])
            self._since_key += take
            parts.append(enc.update(_ZEROS[:take]))
            n -= take
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def __call__(self, n: int) -> bytes:
        with self._lock:
            if self._pid != _getpid():  # forked without the at-fork hook (e.g. from C)
                self.forget()
                self._rekey()
            pos = self._pos
            end = pos + n
            if end <= len(self._buf):
                self._pos = end
                return self._buf[pos:end]
            if n >= _BLOCK // 4:
                return self._generate(n)
            self._buf, self._pos = self._generate(_BLOCK), n
            return self._buf[:n]


_getpid = os.getpid
_drbg = _ChaChaDRBG()
_drbg_source: Callable[[int], bytes] = _drbg

#: The randomness *epoch*: bumped whenever bytes drawn before may no longer be used, i.e. when
#: the source changes (:func:`use_os_source`, :func:`use_drbg`, entering or leaving
#: :func:`scripted_randomness`) and in every forked child.  Anything that holds randomness
#: drawn ahead (the samplers' reservoirs of pre-drawn noise) keeps the epoch it was drawn in
#: and discards it when the epoch has moved on.  A one-element list, so a check is one index.
EPOCH: list[int] = [0]


def bump_epoch() -> None:
    """Invalidate everything drawn ahead of use (see :data:`EPOCH`)."""
    EPOCH[0] += 1


def _after_fork_in_child() -> None:
    # the child must never continue the parent's stream: drop key and buffer, re-key lazily
    _drbg.forget()
    _drbg._lock = threading.Lock()  # a lock held by another thread at fork time is dead
    bump_epoch()  # nor noise the parent drew ahead (the parent may release it too)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _default_from_env() -> Callable[[int], bytes]:
    choice = os.environ.get("OPENDP_LITE_RNG", "chacha20").strip().lower()
    if choice == "os":
        return _os_source
    if choice in ("", "chacha20", "drbg"):
        return _drbg_source
    raise RandomnessError(f"OPENDP_LITE_RNG must be 'os' or 'chacha20', got {choice!r}")


_default: Callable[[int], bytes] = _default_from_env()
_source: Callable[[int], bytes] = _default
_swap_lock = threading.Lock()


def _set_default(src: Callable[[int], bytes]) -> None:
    global _default, _source
    with _swap_lock:
        if _source is not _default:
            raise RuntimeError("cannot change the randomness source inside scripted_randomness")
        _default = _source = src
        bump_epoch()


def use_os_source() -> None:
    """Draw every byte from ``os.urandom`` directly (slower; no user-space generator)."""
    _set_default(_os_source)


def use_drbg() -> None:
    """Draw bytes from the ChaCha20 DRBG keyed from the OS (the default)."""
    _set_default(_drbg_source)


def source_name() -> str:
    """``"chacha20"``, ``"os"`` or ``"scripted"``: which source :func:`fill_bytes` reads."""
    return "chacha20" if _source is _drbg_source else "os" if _source is _os_source else "scripted"


def fill_bytes(n: int) -> bytes:
    """``n`` bytes from the DRBG or the OS CSPRNG (or the scripted test stream, if active).

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
        bump_epoch()  # noise drawn ahead from the real source is not used in the script
    try:
        yield stream
    finally:
        with _swap_lock:
            _source = previous
            bump_epoch()  # and noise drawn from the script never outlives it


def _current_source() -> Any:
    """The active source (for tests that check which source is in use)."""
    return _source
