"""χ² test of the sparse vector's answer law, including that one threshold noise is shared.

α = 1e-4 and n fixed.  The outcome of one run is the index of the first positive answer to a
fixed sequence of queries (or "none").  The exact law sums over the discrete Laplace threshold
noise ρ; the test must reject the laws with both scales × 0.7 / × 1.3, and the law in which ρ
is redrawn for every query (which is not Lyu–Su–Li Algorithm 1).
"""

from __future__ import annotations

import math
from collections import Counter

import pytest

import opendp_lite.prelude as dp
from opendp_lite.transformations.user import make_user_transformation
from tests.stat._reference import check_cells, discrete_laplace_pmf

N = 6000
VALUES = [-4, -1, 1, 3]
THRESHOLD = 0.5
B_T, B_Q = 2.0, 1.5
SPACE = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
Z = range(-300, 301)


def dlap_pmf(b: float) -> dict[int, float]:
    pmf = discrete_laplace_pmf(b)
    return {z: pmf(z) for z in Z}


def tail(pmf: dict[int, float], x: float) -> float:
    """Pr[ν >= x]."""
    m = math.ceil(x)
    return sum(p for v, p in pmf.items() if v >= m)


def law(b_t: float, b_q: float, shared: bool = True) -> list[float]:
    rho, nu = dlap_pmf(b_t), dlap_pmf(b_q)
    if not shared:
        ups = [sum(rho[z] * tail(nu, THRESHOLD + z - q) for z in Z) for q in VALUES]
        out, none = [], 1.0
        for p in ups:
            out.append(none * p)
            none *= 1 - p
        return [*out, none]
    out = [0.0] * (len(VALUES) + 1)
    for z, pz in rho.items():
        if pz < 1e-300:
            continue
        none = 1.0
        for i, q in enumerate(VALUES):
            p = tail(nu, THRESHOLD + z - q)
            out[i] += pz * none * p
            none *= 1 - p
        out[-1] += pz * none
    return out


@pytest.fixture(autouse=True)
def _trust() -> None:
    dp.enable_features("honest-but-curious")


def first_positive_counts(n: int) -> list[int]:
    queries = [
        make_user_transformation(
            *SPACE,
            dp.atom_domain(T=int),
            dp.absolute_distance(T=int),
            lambda x, v=v: v,
            lambda d: d,
        )
        for v in VALUES
    ]
    svt = dp.m.make_sparse_vector(
        *SPACE,
        d_in=1,
        query_sensitivity=1,
        threshold=THRESHOLD,
        threshold_scale=B_T,
        query_scale=B_Q,
    )
    counts: Counter[int] = Counter()
    for _ in range(n):
        qbl = svt([1, 2, 3])
        outcome = len(VALUES)
        for i, qy in enumerate(queries):
            if qbl(qy):
                outcome = i
                break
        counts[outcome] += 1
    return [counts[i] for i in range(len(VALUES) + 1)]


def test_reference_law_sums_to_one() -> None:
    assert abs(sum(law(B_T, B_Q)) - 1) < 1e-12
    assert abs(sum(law(B_T, B_Q, shared=False)) - 1) < 1e-12


def test_first_positive_law() -> None:
    counts = first_positive_counts(N)
    wrong = [law(B_T * f, B_Q * f) for f in (0.7, 1.3)] + [law(B_T, B_Q, shared=False)]
    check_cells(counts, law(B_T, B_Q), wrong)
