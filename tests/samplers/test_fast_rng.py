"""``samplers.fast`` draws only from ``rng.fill_bytes``: scripted streams reproduce outputs,
a raising source raises, and no other source (os.urandom, numpy generators) is touched."""

from __future__ import annotations

import os

import numpy as np
import pytest

from opendp_lite.samplers import fast, rng

CALLS = [
    lambda: fast.float_noise(np.zeros(800), 1.0, -1074, "laplace", "f64"),
    lambda: fast.float_noise(np.ones(800, np.float32), 2.0, -149, "gaussian", "f32"),
    lambda: fast.float_noise(np.full(800, 0.3), 1.0, -2, "laplace", "f64"),
    lambda: fast.int_noise(np.zeros(800, np.int32), 10, "gaussian", "i32"),
    lambda: fast.discrete_laplace_batch(800, 1000),
    lambda: np.array([fast.float_noise_scalar(1.0, 1.0, -1074, "laplace", "f64")]),
    lambda: np.array([fast.int_noise_scalar(1, 3, "gaussian", "i32")]),
]


pytestmark = pytest.mark.filterwarnings("ignore::opendp_lite.errors.OpenDPLiteWarning")


class Boom(Exception):
    pass


@pytest.fixture
def no_other_source(monkeypatch):
    """Any randomness not routed through the scripted stream fails loudly."""

    def refuse(*_a, **_k):
        raise AssertionError("a randomness source other than rng.fill_bytes was used")

    monkeypatch.setattr(os, "urandom", refuse)
    monkeypatch.setattr(np.random, "default_rng", refuse)
    monkeypatch.setattr(np.random, "random", refuse)


def scripted(**kw):
    return rng.scripted_randomness(**kw)


@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize("band", [0.0, 0.9])
def test_identical_streams_identical_outputs(no_other_source, call, band):
    with fast.certification_margin(band):
        with scripted(seed=b"same"):
            a = call()
        with scripted(seed=b"same"):
            b = call()
        with scripted(seed=b"other"):
            c = call()
    assert a.tolist() == b.tolist()
    if len(a) > 1:
        assert a.tolist() != c.tolist()


@pytest.mark.parametrize("call", CALLS)
def test_raising_source_raises(call):
    def source(n: int) -> bytes:
        raise Boom

    with scripted(source=source), pytest.raises(Boom):
        call()


def test_bytes_come_from_the_source():
    drawn = []
    stream = rng._Shake(b"count")

    def source(n: int) -> bytes:
        drawn.append(n)
        return stream(n)

    with scripted(source=source):
        fast.float_noise(np.zeros(1000), 1.0, -1074, "laplace", "f64")
    assert sum(drawn) >= 16 * 1000  # two 64-bit words per attempt


def test_bad_input_raises_before_any_randomness():
    def source(n: int) -> bytes:
        raise Boom

    with scripted(source=source):
        with pytest.raises(ValueError, match="finite"):
            fast.float_noise(np.array([0.0, np.nan]), 1.0, -1074, "laplace", "f64")
        with pytest.raises(ValueError, match="scale"):
            fast.int_noise(np.zeros(3, np.int32), -1, "laplace", "i32")
        with pytest.raises(ValueError, match="finite"):
            fast.float_noise_scalar(float("inf"), 1.0, -1074, "laplace", "f64")
