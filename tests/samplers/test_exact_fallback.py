"""The certified paths of ``samplers.fast`` and their exact fallbacks compute the same function
of the same bits (docs/proofs/lemmas/fast-exact-path.md): driving (nearly) every decision into
the exact path with a widened certification band, on the same scripted stream, gives the very
same output, value by value.  A fallback that resampled an undecided lane, decided it from
other bits, or rounded differently would change some output."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from opendp_lite.samplers import fast, rng

pytestmark = pytest.mark.filterwarnings("ignore::opendp_lite.errors.OpenDPLiteWarning")

#: (name, call): vector paths, covering each attempt layout and output step.
VECTOR: list[tuple[str, Callable[[], Any]]] = [
    # wide layout, a > 64 (R's tail unrevealed), TwoSum rounding certificate
    (
        "f64-laplace-default-k",
        lambda: fast.float_noise(np.zeros(600), 1.0, -1074, "laplace", "f64"),
    ),
    # Gaussian, wide layout, the merged test 2' and its exact continuation
    (
        "f64-gaussian-default-k",
        lambda: fast.float_noise(np.zeros(600), 1.0, -1074, "gaussian", "f64"),
    ),
    # f32 output rounding (the two ends stepped outwards, then cast)
    (
        "f32-gaussian",
        lambda: fast.float_noise(np.ones(600, np.float32), 2.0, -149, "gaussian", "f32"),
    ),
    # coarse grid: exact zeros, packed layout (a <= 15)
    ("f64-laplace-coarse", lambda: fast.float_noise(np.full(600, 0.3), 1.0, -2, "laplace", "f64")),
    # integers: wide layout with a = 0 (Gaussian, V in W's slot), packed layout (Laplace)
    ("i32-gaussian", lambda: fast.int_noise(np.zeros(600, np.int32), 10, "gaussian", "i32")),
    ("i64-laplace", lambda: fast.int_noise(np.zeros(600, np.int64), 1000, "laplace", "i64")),
    # shared layout (Gaussian, 0 < a <= 32); wide layout with 15 < a <= 64 (Laplace)
    (
        "i64-gaussian-shared",
        lambda: fast.int_noise(np.zeros(600, np.int64), 1000, "gaussian", "i64"),
    ),
    ("i64-laplace-wide", lambda: fast.int_noise(np.zeros(600, np.int64), 2**30, "laplace", "i64")),
    ("discrete-laplace-batch", lambda: fast.discrete_laplace_batch(600, 10**6)),
    ("discrete-gaussian-batch", lambda: fast.discrete_gaussian_batch(600, 3)),
]


def _run(call: Callable[[], Any], band: float, seed: bytes) -> tuple[list[Any], dict[str, int]]:
    fast.reset_fallback_counts()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with fast.certification_margin(band), rng.scripted_randomness(seed=seed):
            out = np.asarray(call())
    values = [(v, math.copysign(1.0, v)) if isinstance(v, float) else v for v in out.tolist()]
    return values, dict(fast.fallback_counts())


@pytest.mark.parametrize(("name", "call"), VECTOR, ids=[n for n, _ in VECTOR])
def test_vector_fallback_gives_the_certified_values_on_the_same_bits(
    name: str, call: Callable[[], Any]
) -> None:
    fast_out, fast_counts = _run(call, 0.0, b"fallback")
    exact_out, exact_counts = _run(call, 0.9, b"fallback")
    # the widened band really sent (nearly) every lane to the exact path ...
    assert exact_counts["exact_lanes"] >= 0.9 * exact_counts["attempts"], exact_counts
    assert fast_counts["exact_lanes"] <= 0.1 * fast_counts["attempts"], fast_counts
    # ... which read the same attempts and gave the same value for each (sign of zero too)
    assert exact_counts["attempts"] == fast_counts["attempts"]
    assert exact_out == fast_out


SCALAR: list[tuple[str, Callable[[], Any]]] = [
    ("f64-laplace", lambda: fast.float_noise_scalar(1.0, 1.5, -1074, "laplace", "f64")),
    ("f64-gaussian", lambda: fast.float_noise_scalar(1.0, 1.5, -1074, "gaussian", "f64")),
    ("f64-gaussian-coarse", lambda: fast.float_noise_scalar(0.3, 1.0, -2, "gaussian", "f64")),
    ("i32-gaussian", lambda: fast.int_noise_scalar(1, 3, "gaussian", "i32")),
    ("i64-laplace", lambda: fast.int_noise_scalar(1, 10**6, "laplace", "i64")),
]


@pytest.mark.parametrize(("name", "call"), SCALAR, ids=[n for n, _ in SCALAR])
def test_scalar_fallback_gives_the_certified_value_on_the_same_bits(
    name: str, call: Callable[[], Any]
) -> None:
    """The scalar attempt (lazy R): when the certified run accepts its first attempt, the
    exact run on the same bytes accepts the same attempt with the same value.  (The exact run
    may then reveal R's unrevealed tail from fresh bytes, which moves any later attempt to
    other bytes, so only first attempts are compared.)"""
    compared = 0
    for seed in range(40):
        reads: dict[float, list[int]] = {}
        values: dict[float, Any] = {}
        for band in (0.0, 0.9):
            stream = rng._Shake(b"scalar-fallback-%d" % seed)
            sizes: list[int] = []

            def source(n: int, sizes: list[int] = sizes, stream: Any = stream) -> bytes:
                sizes.append(n)
                return bytes(stream(n))

            fast.reset_fallback_counts()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with fast.certification_margin(band), rng.scripted_randomness(source=source):
                    v = call()
            values[band] = (v, math.copysign(1.0, v)) if isinstance(v, float) else v
            reads[band] = sizes
            if band:
                assert fast.fallback_counts()["exact_lanes"] >= 1
        if len(reads[0.0]) == 1:  # the certified run accepted its first attempt
            assert reads[0.9][0] == reads[0.0][0]
            assert values[0.9] == values[0.0], seed
            compared += 1
    assert compared >= 10  # most first attempts are accepted: the comparison really ran
