"""The scalar path reveals R's low bits lazily: few bytes per draw, and the rounding it
certifies over the unrevealed tail is the exact rounding of the completed value."""

from __future__ import annotations

import warnings

import pytest

from opendp_lite.samplers import fast, rng
from opendp_lite.samplers.uniform import sample_uniform_bits


def _bytes_per_draw(call, reps: int = 400) -> float:
    total = [0]
    source = rng._current_source()

    def counted(n: int) -> bytes:
        total[0] += n
        return source(n)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with rng.scripted_randomness(counted):
            for _ in range(reps):
                call()
    return total[0] / reps


@pytest.mark.parametrize(("dist", "limit"), [("laplace", 24), ("gaussian", 48)])
def test_scalar_default_k_reads_few_bytes(dist: str, limit: int) -> None:
    # before: all of R (134 bytes at k = -1074, scale 1) per attempt: 142 / 197 bytes per draw
    per = _bytes_per_draw(lambda: fast.float_noise_scalar(0.0, 1.0, -1074, dist, "f64"))
    assert per <= limit


def _quiet(seed: bytes):
    warnings.simplefilter("ignore")
    return rng.scripted_randomness(seed=seed)


@pytest.mark.parametrize("neg", [0, 1])
@pytest.mark.parametrize(
    ("J", "m", "lazy", "k", "T"),
    [
        (0, 0, 40, -1074, "f64"),  # straddles 0: the tail decides
        (5, 0, 40, -1074, "f64"),
        (1 << 60, 3, 40, -1074, "f64"),  # far from 0: certified without the tail
        (-(1 << 45), 1 << 4, 30, -149, "f32"),
        (7, 1, 10, -149, "f32"),
        ((1 << 1100) - 3, 1 << 30, 50, -1074, "f64"),  # saturates to max
    ],
    ids=["zero", "five", "far", "f32-negative", "f32-small", "saturates"],
)
def test_lazy_rounding_is_the_exact_rounding(
    monkeypatch: pytest.MonkeyPatch, neg: int, J: int, m: int, lazy: int, k: int, T: str
) -> None:
    p = fast._plan_for(1.0, k, "laplace")
    monkeypatch.setattr(fast, "_scalar_draw", lambda p, pool=None: (neg, m, lazy))
    with warnings.catch_warnings():
        with _quiet(b"tail"):
            got = fast._scalar_float(p, J, k, T)
        with _quiet(b"tail"):
            tail = sample_uniform_bits(lazy)
    mag = (m << lazy) | tail
    want = fast._round_out(J - mag if neg else J + mag, k, T)
    assert got == want and str(got) == str(want)  # same float, same sign of zero
