"""χ² frequency tests of randomized response against its exact output law.

α = 1e-4 and n fixed up front; each test also rejects a wrong probability (prob shifted by
±0.05, f × 0.7 and × 1.3).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

import opendp_lite.prelude as dp
from opendp_lite.measurements.randomized_response import bitvector_domain
from tests.stat._reference import check_cells

# the categorical law's p = 0.5 control: power 0.99981 at 8000 draws, 0.99998 at 9000
N = 9000


def test_bool_truthful_with_prob() -> None:
    rr = dp.m.make_randomized_response_bool(0.75)
    c = Counter(rr(True) for _ in range(N))
    obs = [c[True], c[False]]
    check_cells(obs, [0.75, 0.25], [[w, 1 - w] for w in (0.7, 0.8)])


def test_bool_false_input() -> None:
    rr = dp.m.make_randomized_response_bool(0.9)
    c = Counter(rr(False) for _ in range(N))
    check_cells([c[False], c[True]], [0.9, 0.1], [[0.85, 0.15]])


def test_categorical_law() -> None:
    cats = ["a", "b", "c", "d"]
    rr = dp.m.make_randomized_response(cats, 0.55)
    c = Counter(rr("b") for _ in range(N))
    obs = [c[x] for x in cats]
    law = [0.15, 0.55, 0.15, 0.15]
    check_cells(obs, law, [[(1 - p) / 3, p, (1 - p) / 3, (1 - p) / 3] for p in (0.5, 0.6)])


def test_categorical_outside_input_is_uniform() -> None:
    rr = dp.m.make_randomized_response([1, 2, 3], 0.9)
    c = Counter(rr(7) for _ in range(N))
    obs = [c[x] for x in (1, 2, 3)]
    check_cells(obs, [1 / 3] * 3, [[0.9, 0.05, 0.05]])


def test_bitvec_flip_rate() -> None:
    f = 0.4
    rr = dp.m.make_randomized_response_bitvec(
        bitvector_domain(max_weight=12), dp.discrete_distance(), f=f
    )
    data = bytes([0b10110000, 0, 0xFF, 0b1])
    bits = np.unpackbits(np.frombuffer(data, dtype=np.uint8))
    flips = 0
    n_vec = 1500
    for _ in range(n_vec):
        out = np.unpackbits(np.frombuffer(rr(data), dtype=np.uint8))
        flips += int(np.sum(out != bits))
    total = n_vec * len(bits)
    obs = [flips, total - flips]
    check_cells(obs, [f / 2, 1 - f / 2], [[f * k / 2, 1 - f * k / 2] for k in (0.7, 1.3)])


def test_debias_recovers_frequencies() -> None:
    f = 0.5
    rr = dp.m.make_randomized_response_bitvec(
        bitvector_domain(max_weight=1), dp.discrete_distance(), f=f
    )
    # 3000 respondents: 2000 hold bit 0, 1000 hold bit 1; 8-bit vectors
    answers = [rr(bytes([1])) for _ in range(2000)] + [rr(bytes([2])) for _ in range(1000)]
    est = dp.m.debias_randomized_response_bitvec(answers, f)
    # each estimate has sd sqrt(n (f/2)(1 - f/2)) / (1 - f) ~ 47; allow 6 sd
    assert abs(est[0] - 2000) < 300 and abs(est[1] - 1000) < 300
    assert all(abs(e) < 300 for e in est[2:])
