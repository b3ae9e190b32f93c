"""χ² tests of the ALP sketch against its exact law.  α = 1e-4 and n fixed up front.

* the released bits away from the data are Bernoulli(1/(α + 2)); flip rates × 0.7 and × 1.3
  are rejected;
* the randomized rounding is ⌊y⌋ + Bernoulli(y − ⌊y⌋);
* end to end: the answer for a key whose m hash positions are distinct has the exact law
  computed below by enumerating the rounding and the 2^m flip patterns; the same law with the
  rounding at scale × 0.7 and × 1.3 (or a wrong flip rate) is rejected.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

import opendp_lite.prelude as dp
from opendp_lite.measurements.alp import estimate_unary
from opendp_lite.samplers.bernoulli import sample_flips, sample_round
from tests.stat._reference import check_cells

DOM = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int))
L1 = dp.l1_distance(T=int)


def test_flip_rate() -> None:
    n = 200_000
    for denominator in (3, 6, 11):
        ones = int(sample_flips(n, denominator).sum())
        p = 1 / denominator
        check_cells([ones, n - ones], [p, 1 - p], [[p * k, 1 - p * k] for k in (0.7, 1.3)])


def test_randomized_rounding() -> None:
    n = 20_000
    y = Fraction(13, 4)  # 3 w.p. 3/4, 4 w.p. 1/4
    c = Counter(sample_round(y) for _ in range(n))
    assert set(c) <= {3, 4}
    check_cells([c[3], c[4]], [0.75, 0.25], [[0.6, 0.4]])


def answer_law(y: Fraction, m: int, p: Fraction) -> dict[Fraction, Fraction]:
    """Exact law of the unscaled answer (mean argmax index) for one key with scaled value y
    whose m positions are distinct: K = ⌊y⌋ + Bernoulli(frac y), bits 1_{j < K} xor flips."""
    fl = math.floor(y)
    law: dict[Fraction, Fraction] = {}
    for k, pk in ((fl, 1 - (y - fl)), (fl + 1, y - fl)):
        if pk == 0:
            continue
        k = min(k, m)
        for flips in itertools.product((0, 1), repeat=m):
            weight = pk
            for f in flips:
                weight *= p if f else 1 - p
            bits = np.array([(j < k) ^ bool(f) for j, f in enumerate(flips)], dtype=bool)
            est = estimate_unary(bits)
            law[est] = law.get(est, Fraction(0)) + weight
    return law


def binned(counts: Counter[Fraction], laws: Sequence[dict[Fraction, Fraction]], n: int) -> Any:
    """Observed counts and each law's probabilities on the bins of the first law with expected
    count >= 5, the other outcomes pooled into one last bin (dropped if the first law gives it
    probability 0, which the observations must then respect)."""
    keep = sorted(v for v, pr in laws[0].items() if pr * n >= 5)
    obs = [counts[v] for v in keep]
    tables = []
    for law in laws:
        rest = sum((pr for v, pr in law.items() if v not in keep), Fraction(0))
        tables.append([float(law.get(v, 0)) for v in keep] + [float(rest)])
    if tables[0][-1] == 0:
        assert sum(obs) == n, "an outcome the exact law rules out was observed"
        return obs, [t[:-1] for t in tables]
    return [*obs, n - sum(obs)], tables


def test_answer_law_end_to_end() -> None:
    n = 6000
    scale, alpha, beta, value = 2.0, 4, 8, 5  # c = 1/2: m = 4, y = 5/2 (K = 2 or 3)
    for _ in range(100):
        meas = dp.m.make_alp_queryable(DOM, L1, scale, 10, beta, alpha=alpha)
        pos = meas.function.hashers.positions("x", meas.function.hashers.size)
        if len(set(pos.tolist())) == len(pos):
            break
    else:  # pragma: no cover - probability ~1e-160
        raise AssertionError("no hash family with distinct positions in 100 draws")
    m = meas.function.hashers.size
    assert (m, meas.function.size) == (4, 256)

    counts: Counter[Fraction] = Counter()
    for _ in range(n):
        answer = meas({"x": value, "y": 0})("x")  # "y" sets no bit
        unscaled = Fraction(answer * scale / alpha).limit_denominator(m + 1)
        counts[unscaled] += 1

    p = Fraction(1, alpha + 2)
    c = Fraction(scale) / alpha
    true = answer_law(value * c, m, p)
    wrong = [answer_law(value * c * Fraction(f), m, p) for f in ("0.7", "1.3")]
    wrong.append(answer_law(value * c, m, p * Fraction(13, 10)))  # flip rate × 1.3
    obs, (truth, *alts) = binned(counts, [true, *wrong], n)
    assert sum(true.values()) == 1
    check_cells(obs, truth, alts)


def test_released_bits_away_from_the_data() -> None:
    """White box: bits no key touches are exactly Bernoulli(1/(α + 2))."""
    meas = dp.m.make_alp_queryable(DOM, L1, 1.0, 100, 10, alpha=4)  # 2^7 bits
    touched = set(meas.function.hashers.positions("a", meas.function.hashers.size).tolist())
    free = np.array([i for i in range(meas.function.size) if i not in touched])
    ones = total = 0
    for _ in range(2000):
        z = meas.function.project({"a": 10})
        ones += int(z[free].sum())
        total += len(free)
    p = 1 / 6
    check_cells([ones, total - ones], [p, 1 - p], [[p * k, 1 - p * k] for k in (0.7, 1.3)])
