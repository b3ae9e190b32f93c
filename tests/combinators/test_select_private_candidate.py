"""Private candidate selection: map, errors, and the exact law of the stopping rule (χ²).

The scored child releases score 1 with probability 1/3 (exact Bernoulli), else 0; with
threshold 1 and stop probability γ, the outcome "success at round r" has probability
(2/3·(1−γ))^(r−1)·1/3 and "stopped after round r" (2/3·(1−γ))^(r−1)·2/3·γ.  α = 1e-4 and n are
fixed up front; the same sample must reject the law for γ×0.7 and γ×1.3.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import FailedFunction, InvalidParameter, NotImplementedForType
from opendp_lite.samplers.bernoulli import sample_bernoulli
from tests.conftest import scaled
from tests.stat._reference import check_cells

SPACE = (dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float))

ROUNDS = 6  # categories: success or stop at rounds 1..ROUNDS, and "longer"


@pytest.fixture(autouse=True)
def _hbc() -> None:
    dp.enable_features("honest-but-curious")


def counting_child(rounds: list[int]) -> Any:
    def function(x: float) -> tuple[int, str]:
        rounds[-1] += 1
        return (1 if sample_bernoulli(Fraction(1, 3)) else 0), "candidate"

    return dp.m.make_user_measurement(*SPACE, dp.max_divergence(), function, lambda d: 0.5 * d)


def expected_probabilities(gamma: float) -> np.ndarray:
    cont = Fraction(2, 3) * (1 - Fraction(gamma))
    probs = []
    for r in range(1, ROUNDS + 1):
        reach = cont ** (r - 1)
        probs += [reach * Fraction(1, 3), reach * Fraction(2, 3) * Fraction(gamma)]
    probs.append(1 - sum(probs))
    return np.array([float(p) for p in probs])


@pytest.mark.slow
@pytest.mark.parametrize("gamma", [0.25, 0.5])
def test_stopping_law_is_exact(gamma: float) -> None:
    n = scaled(20_000, minimum=4_000)
    rounds: list[int] = []
    select = dp.c.make_select_private_candidate(counting_child(rounds), gamma, 1.0)
    counts = np.zeros(2 * ROUNDS + 1)
    for _ in range(n):
        rounds.append(0)
        out = select(0.0)
        r = rounds[-1]
        if r > ROUNDS:
            counts[-1] += 1
        else:
            counts[2 * (r - 1) + (0 if out is not None else 1)] += 1
    wrong = [expected_probabilities(gamma * f) for f in (0.7, 1.3)]
    check_cells(counts, expected_probabilities(gamma), wrong)


def test_map_doubles_and_rounds_up() -> None:
    for eps in [0.5, 0.1, 1 / 3, 1e308]:
        child = dp.m.make_user_measurement(
            *SPACE, dp.max_divergence(), lambda x: (x, None), lambda d, e=eps: e
        )
        select = dp.c.make_select_private_candidate(child, 0.5, 0.0)
        if eps > 1e300:
            with pytest.raises(ValueError):
                select.map(1.0)  # 2ε overflows to inf: not a valid loss
        else:
            assert select.map(1.0) == 2 * eps  # doubling a float is exact


def test_matches_opendp_map() -> None:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib", "honest-but-curious")
    space = odp.atom_domain(T=float, nan=False), odp.absolute_distance(T=float)
    for eps in [0.1, 0.5, 2.0]:
        theirs = odp.c.make_select_private_candidate(
            odp.m.make_user_measurement(
                *space,
                odp.max_divergence(),
                lambda x: (x, "c"),
                lambda d, e=eps: e * d,
                TO="(f64, ExtrinsicObject)",
            ),
            stop_probability=0.5,
            threshold=0.0,
        )
        ours = dp.c.make_select_private_candidate(
            dp.m.make_user_measurement(
                *SPACE, dp.max_divergence(), lambda x: (x, "c"), lambda d, e=eps: e * d
            ),
            stop_probability=0.5,
            threshold=0.0,
        )
        for d_in in [0.5, 1.0, 3.0]:
            assert ours.map(d_in) == theirs.map(d_in)


def test_errors() -> None:
    child = dp.m.make_user_measurement(
        *SPACE, dp.max_divergence(), lambda x: (x, None), lambda d: d
    )
    for bad in [-0.1, 1.0, math.nan]:
        with pytest.raises(InvalidParameter):
            dp.c.make_select_private_candidate(child, bad, 0.0)
    for bad_threshold in [math.nan, math.inf]:
        with pytest.raises(InvalidParameter):
            dp.c.make_select_private_candidate(child, 0.5, bad_threshold)
    zcdp = dp.m.make_user_measurement(
        *SPACE, dp.zero_concentrated_divergence(), lambda x: (x, None), lambda d: d
    )
    with pytest.raises(NotImplementedForType):
        dp.c.make_select_private_candidate(zcdp, 0.5, 0.0)
    malformed = dp.m.make_user_measurement(*SPACE, dp.max_divergence(), lambda x: x, lambda d: d)
    with pytest.raises(FailedFunction):
        dp.c.make_select_private_candidate(malformed, 0.5, 0.0)(1.0)
