"""The single randomness entry point: OS bytes, scripted streams for tests, loud failures."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from opendp_lite.errors import OpenDPLiteWarning
from opendp_lite.samplers import rng


def test_fill_bytes_reads_fresh_os_bytes() -> None:
    a, b = rng.fill_bytes(32), rng.fill_bytes(32)
    assert len(a) == 32 and a != b
    assert rng._current_source() is rng._default


def test_fill_uint64_shape_and_dtype() -> None:
    words = rng.fill_uint64(1000)
    assert words.dtype == np.uint64 and words.shape == (1000,)
    # 1000 uniform words: the top bit is set about half the time (binomial, 6 sigma)
    assert abs(int((words >> np.uint64(63)).sum()) - 500) < 6 * 16


def test_scripted_stream_is_reproducible_and_warns() -> None:
    with pytest.warns(OpenDPLiteWarning, match="NOT private"):
        with rng.scripted_randomness(seed=b"s"):
            a = rng.fill_bytes(100)
    with pytest.warns(OpenDPLiteWarning):
        with rng.scripted_randomness(seed=b"s"):
            b = rng.fill_bytes(100)
    assert a == b
    assert rng._current_source() is rng._default  # restored


def test_a_failing_source_raises_and_a_short_one_too() -> None:
    def broken(n: int) -> bytes:
        raise OSError("entropy pool on fire")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with rng.scripted_randomness(lambda n: bytes(n - 1) if n else b""):
            with pytest.raises(rng.RandomnessError):
                rng.fill_bytes(8)
        with rng.scripted_randomness(broken):
            with pytest.raises(OSError, match="on fire"):
                rng.fill_bytes(8)


def test_os_failure_is_a_typed_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(n: int) -> bytes:
        raise NotImplementedError("no urandom here")

    monkeypatch.setattr(rng.os, "urandom", fail)
    rng._drbg.forget()  # the DRBG must take a fresh key from the OS now
    with pytest.raises(rng.RandomnessError, match="OS CSPRNG failed"):
        rng.fill_bytes(4)


def test_exactly_one_of_source_or_seed() -> None:
    with pytest.raises(ValueError):
        with rng.scripted_randomness():
            pass
