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
    neg: int, J: int, m: int, lazy: int, k: int, T: str
) -> None:
    with warnings.catch_warnings():
        with _quiet(b"tail"):
            got = fast._float_out(neg, m, lazy, J, k, T)  # the draw (neg, m, lazy), rounded
        with _quiet(b"tail"):
            tail = sample_uniform_bits(lazy)
    mag = (m << lazy) | tail
    want = fast._round_out(J - mag if neg else J + mag, k, T)
    assert got == want and str(got) == str(want)  # same float, same sign of zero


# ---------------------------------------------------------------------------------------
# Issue 16: the lazy ends are rounded by a division-free test (|Y| >= 2^54), and the scalar
# path reads x directly; both must be the exact rounding of the completed value.


def _ends(Y: int, neg: int, lazy: int, k: int) -> tuple[float, float]:
    """The two ends the division-based test rounds: (Y·2^lazy, Y·2^lazy ± (2^lazy − 1))."""
    E = Y << lazy
    E2 = E - ((1 << lazy) - 1) if neg else E + ((1 << lazy) - 1)
    return fast._round_out(E, k, "f64"), fast._round_out(E2, k, "f64")


def _random_Y(g, bits: int) -> int:
    return int.from_bytes(g(bits // 8 + 1), "little") >> (8 * (bits // 8 + 1) - bits) | (
        1 << (bits - 1)
    )


@pytest.mark.parametrize(("lazy", "k"), [(1002, -1074), (5, -1074), (40, -1074), (1100, -1074)])
def test_division_free_rounding_agrees_with_the_ends(lazy: int, k: int) -> None:
    """Whenever the cheap test certifies a float, both ends round to it (so every tail does);
    when both ends agree on a non-zero float in its range, the cheap test certifies it too."""
    e = lazy + k
    stream = rng._Shake(b"ends")
    certified = 0
    cases = 0
    for bits in [*range(50, 70), 80, 120, 400, 1000, 1022, 1023, 1030]:
        for _ in range(12):
            for neg in (0, 1):
                for sign in (1, -1):
                    Y = sign * _random_Y(stream, bits)
                    got = fast._round_lazy_f64(Y, neg, e)
                    a, b = _ends(Y, neg, lazy, k)
                    cases += 1
                    if got is not None:
                        certified += 1
                        assert got == a == b, (Y, neg, e)
                    elif 55 <= Y.bit_length() <= 1022 and Y.bit_length() + e <= 1023:
                        assert a != b, (Y, neg, e)  # refused only when the tail matters
    assert certified > cases // 3


@pytest.mark.parametrize(
    ("Y", "neg"),
    [
        ((1 << 54) + 2, 0),  # a tie at f = 0 (rounds to even, down); f > 0 rounds up
        (-((1 << 54) + 2), 1),
        ((1 << 54) + 6, 1),  # a tie at f = 0 (rounds to even, up); f > 0 rounds down
        ((1 << 54) + 1, 0),
        ((1 << 53) + 3, 0),  # below 2^54: not certified by the cheap test
    ],
)
def test_division_free_rounding_edges(Y: int, neg: int) -> None:
    got = fast._round_lazy_f64(Y, neg, -72)
    a, b = _ends(Y, neg, 1002, -1074)
    if got is None:
        assert a != b or Y.bit_length() < 55
    else:
        assert got == a == b


@pytest.mark.parametrize("neg", [0, 1])
@pytest.mark.parametrize(
    "x",
    [0.0, 50.0, -50.0, 1e-300, 2.0**-1074, 0.1, 2.0**52 + 1, -(2.0**1000), 1.7e308, 2.0**-19],
)
@pytest.mark.parametrize("m", [0, 1, (1 << 70) + 12345, (1 << 84) - 1, 3 << 60])
def test_scalar_float_from_x_is_the_exact_rounding(
    monkeypatch: pytest.MonkeyPatch, neg: int, x: float, m: int
) -> None:
    """``_scalar_float_x`` (the path the scalar and small-vector releases take) returns the
    exactly rounded J ± (m·2^lazy + tail) for the tail the same stream would reveal."""
    k, lazy = -1074, 1002
    p = fast._plan_for(1.0, k, "laplace")
    monkeypatch.setattr(fast.scalar, "_scalar_draw", lambda p, pool=None: (neg, m, lazy))
    with warnings.catch_warnings():
        with _quiet(b"tail-x"):
            got = fast._scalar_float_x(p, x, k, "f64")
        with _quiet(b"tail-x"):
            tail = sample_uniform_bits(lazy)
    J = fast._grid_index(x, k, "f64")
    mag = (m << lazy) | tail
    want = fast._round_out(J - mag if neg else J + mag, k, "f64")
    assert got == want and str(got) == str(want)
