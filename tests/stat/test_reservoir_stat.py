"""The law of repeated scalar releases, which take their noise from the plan's reservoir of
attempts drawn ahead by the vector path (``samplers.fast``, proof §2 "Reservoir").

α = ``ALPHA`` and every n are fixed up front.  Each test checks releases through the public
measurement against the continuous law (KS at the default grid k = −1074, where the discrete
law is the continuous one up to 2^-1074) and rejects the same sample against scale × 0.7 and
× 1.3; the independence test rejects a control whose releases repeat.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import opendp_lite.prelude as dp
from opendp_lite.samplers import fast
from tests.stat._reference import assert_fits, assert_rejects, check_continuous, z_bound

WRONG = (0.7, 1.3)
N = 6000


def _mech(dist: str, scale: float, vector: bool = False):  # type: ignore[no-untyped-def]
    atom = dp.atom_domain(T=float, nan=False)
    if vector:
        dom, met = dp.vector_domain(atom), (dp.l1_distance if dist == "laplace" else dp.l2_distance)
        make = dp.m.make_laplace if dist == "laplace" else dp.m.make_gaussian
        return make(dom, met(T=float), scale)
    make = dp.m.make_laplace if dist == "laplace" else dp.m.make_gaussian
    return make(atom, dp.absolute_distance(T=float), scale)


def _law(dist: str):  # type: ignore[no-untyped-def]
    return stats.laplace if dist == "laplace" else stats.norm


def _assert_ks(y: np.ndarray, dist: str, loc: float, scale: float) -> None:
    law = _law(dist)
    wrong = [law(loc=loc, scale=scale * f).cdf for f in WRONG]
    check_continuous(y, law(loc=loc, scale=scale).cdf, wrong, symmetric_about=loc)


@pytest.mark.parametrize("dist", ["laplace", "gaussian"])
def test_repeated_scalar_releases_have_the_law(dist: str) -> None:
    m = _mech(dist, 1.75)
    y = np.array([m(2.5) for _ in range(N)])
    p = fast._plan_for(1.75, -1074, dist)
    assert p is not None and p.reservoir.size == fast._RES_MAX  # the reservoir served them
    _assert_ks(y, dist, 2.5, 1.75)


@pytest.mark.parametrize("dist", ["laplace", "gaussian"])
def test_small_vectors_and_scalars_sharing_a_reservoir_have_the_law(dist: str) -> None:
    s, v = _mech(dist, 0.625), _mech(dist, 0.625, vector=True)
    parts: list[np.ndarray] = []
    for _ in range(N // 8):
        parts.append(v(np.full(5, -1.0)))  # five lanes of one small vector
        parts.append(np.array([s(-1.0) for _ in range(3)]))  # then three scalar releases
    _assert_ks(np.concatenate(parts), dist, -1.0, 0.625)


@pytest.mark.parametrize("dist", ["laplace", "gaussian"])
def test_consecutive_releases_are_independent(dist: str) -> None:
    m = _mech(dist, 3.0)
    y = np.array([m(0.0) for _ in range(N)])
    # Spearman's rank correlation of each release with the next (and of |y|, which would show
    # a shared magnitude); independent releases: both p-values uniform
    for a, b in ((y[:-1], y[1:]), (np.abs(y[:-1]), np.abs(y[1:]))):
        assert_fits(stats.spearmanr(a, b).pvalue)
    # control: releases handed out twice (each draw used for two consecutive releases)
    twice = np.repeat(y[: N // 2], 2)
    # every other pair is equal, the rest independent: rank correlation about 1/2, so the
    # statistic sqrt(n)·r is about sqrt(n)/2 = 39 sd from 0 (normal approximation)
    n = len(twice) - 1
    power = float(stats.norm.sf(z_bound() - 0.5 * math.sqrt(n - 1)))
    assert_rejects(stats.spearmanr(twice[:-1], twice[1:]).pvalue, power, "(releases used twice)")
