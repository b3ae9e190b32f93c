"""Bounded make_geometric on vectors is vectorised: one batch of attempts, not a Python loop
of scalar draws (the law is checked in tests/stat/test_noise_mechanisms.py)."""

from __future__ import annotations

import warnings

import numpy as np

import opendp_lite.prelude as dp
from opendp_lite.samplers import rng


def test_bounded_vector_draws_in_bulk() -> None:
    dp.enable_features("contrib")
    domain = dp.vector_domain(dp.atom_domain(T="i32"))
    meas = dp.m.make_geometric(domain, dp.l1_distance(T="i32"), 2.0, (0, 100))
    calls = [0]
    source = rng._current_source()

    def counted(n: int) -> bytes:
        calls[0] += 1
        return source(n)

    x = np.full(5000, 50, dtype=np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with rng.scripted_randomness(counted):
            y = meas(x)
    assert y.dtype == np.int32 and len(y) == 5000
    assert calls[0] <= 20  # before: one fill_bytes call (or more) per element
    assert y.min() >= 0 and y.max() <= 100 and len(np.unique(y)) > 5


def test_bounded_vector_clamps_out_of_bound_inputs_first() -> None:
    dp.enable_features("contrib")
    domain = dp.vector_domain(dp.atom_domain(T="i64"))
    meas = dp.m.make_geometric(domain, dp.l1_distance(T="i64"), 0.0, (-5, 5))
    y = meas(np.array([-100, 0, 3, 100], dtype=np.int64))
    assert y.tolist() == [-5, 0, 3, 5] and y.dtype == np.int64
