"""The ChaCha20 DRBG behind ``fill_bytes``: known answers, key erasure, re-keying, fork and
thread safety, and the switch to the plain OS source."""

from __future__ import annotations

import os
import pickle
import threading
import warnings

import pytest

from opendp_lite.samplers import rng

# RFC 8439 (= RFC 7539) Appendix A.1, test vector #1: key 0^32, nonce 0^12, block counter 0.
RFC8439_A1_TV1 = bytes.fromhex(
    "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
    "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586"
)
# RFC 8439 §2.3.2: key 00 01 .. 1f, nonce 00:00:00:09:00:00:00:4a:00:00:00:00, counter 1.
RFC8439_232 = bytes.fromhex(
    "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
    "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e"
)


def test_keystream_known_answers() -> None:
    assert rng._chacha20_keystream(bytes(32), 64) == RFC8439_A1_TV1
    nonce = (1).to_bytes(4, "little") + bytes.fromhex("000000090000004a00000000")
    assert rng._chacha20_keystream(bytes(range(32)), 64, nonce) == RFC8439_232


def test_generator_known_answer_through_the_serving_path() -> None:
    # key 0: the first 32 keystream bytes become the next key (erased), the rest is output
    g = rng._ChaChaDRBG(seed=bytes(32))
    assert g(16) + g(16) == RFC8439_A1_TV1[32:64]  # served from the buffer, in order
    assert g._key == RFC8439_A1_TV1[:32]  # the seed key is gone (fast key erasure)
    big = rng._ChaChaDRBG(seed=bytes(32))(rng._BLOCK)  # a large request: direct path
    assert big[:32] == RFC8439_A1_TV1[32:64]


def test_rekeys_from_the_os_after_reseed_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    keys: list[bytes] = []

    def counting(n: int) -> bytes:
        keys.append(os.urandom(n))
        return keys[-1]

    monkeypatch.setattr(rng, "_os_source", counting)
    g = rng._ChaChaDRBG()
    g(rng.RESEED_BYTES)
    assert len(keys) == 1
    g(8)  # the key has served RESEED_BYTES: the next generation re-keys
    assert len(keys) == 2 and all(len(k) == 32 for k in keys)


def test_failing_os_source_at_keying_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(n: int) -> bytes:
        raise OSError("no entropy")

    g = rng._ChaChaDRBG()
    monkeypatch.setattr(rng.os, "urandom", fail)
    with pytest.raises(rng.RandomnessError, match="OS CSPRNG failed"):
        g(8)


def test_default_is_the_drbg_and_os_source_can_be_selected() -> None:
    default = rng._default_from_env()  # the DRBG unless OPENDP_LITE_RNG=os
    assert (default is rng._drbg_source) == (os.environ.get("OPENDP_LITE_RNG", "") != "os")
    rng.use_os_source()
    try:
        assert rng._current_source() is rng._os_source and rng.source_name() == "os"
        a, b = rng.fill_bytes(16), rng.fill_bytes(16)
        assert a != b
        rng.use_drbg()
        assert rng._current_source() is rng._drbg_source and rng.source_name() == "chacha20"
        assert rng.fill_bytes(16) != rng.fill_bytes(16)
    finally:
        rng._set_default(default)


def test_source_cannot_change_inside_a_scripted_stream() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with rng.scripted_randomness(seed=b"x"):
            with pytest.raises(RuntimeError):
                rng.use_os_source()
    assert rng._current_source() is rng._default


def test_env_var_selects_the_os_source(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENDP_LITE_RNG", "os")
    assert rng._default_from_env() is rng._os_source
    monkeypatch.setenv("OPENDP_LITE_RNG", "chacha20")
    assert rng._default_from_env() is rng._drbg_source
    monkeypatch.setenv("OPENDP_LITE_RNG", "mt19937")
    with pytest.raises(rng.RandomnessError, match="OPENDP_LITE_RNG"):
        rng._default_from_env()


def _fork_and_read(n: int) -> bytes:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        try:
            os.close(r)
            os.write(w, pickle.dumps(rng.fill_bytes(n)))
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    os.waitpid(pid, 0)
    return pickle.loads(data)  # type: ignore[no-any-return]  # noqa: S301 - our child


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX-only")
def test_forked_child_gets_a_different_stream_than_the_parent() -> None:
    default = rng._current_source()
    rng.use_drbg()
    try:
        # Earlier draws left the buffer anywhere: drain a short remainder so that the parent's
        # next 8 + 64 bytes come from one buffer (otherwise the parent itself moves to a new
        # step and the comparison below fails about 1 run in 60 on OS randomness).
        left = len(rng._drbg._buf) - rng._drbg._pos
        if 0 < left < 72:
            rng.fill_bytes(left)
        rng.fill_bytes(8)  # the parent's buffer holds keystream the child must not serve
        assert len(rng._drbg._buf) - rng._drbg._pos >= 64
        buf_before = bytes(rng._drbg._buf[rng._drbg._pos : rng._drbg._pos + 64])
        child = _fork_and_read(64)
        parent = rng.fill_bytes(64)
    finally:
        rng._set_default(default)
    assert parent == buf_before  # the parent continues its own buffer...
    assert child != parent  # ...and the child re-keyed instead of repeating it


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX-only")
def test_pid_check_rekeys_without_the_at_fork_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    g = rng._ChaChaDRBG(seed=bytes(32))
    g(8)
    monkeypatch.setattr(rng, "_getpid", lambda: -1)  # as if forked behind Python's back
    assert g(24) != RFC8439_A1_TV1[40:64]


def test_threads_never_share_output() -> None:
    outs: list[bytes] = []
    lock = threading.Lock()

    def work() -> None:
        got = [rng.fill_bytes(8) for _ in range(500)]
        with lock:
            outs.extend(got)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(outs)) == len(outs) == 2000
