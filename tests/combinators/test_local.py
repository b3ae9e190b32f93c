"""Local / federated release: per-record independence, the local-model map, refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite.combinators.local import make_local_release, then_local_release
from opendp_lite.errors import DomainMismatch, FailedMap, NotImplementedForType
from opendp_lite.measurements.two_coin import (
    debias_two_coin,
    make_randomized_response_coins,
    two_coin_uncertainty,
)
from opendp_lite.sensitivity import GaussianMixture, make_random_dp, sample_sensitivity

scipy_stats = pytest.importorskip("scipy.stats")

ALPHA = 1e-3
BOOLS = dp.vector_domain(dp.atom_domain(T=bool))


def test_map_is_records_changed_times_the_inner_epsilon() -> None:
    rr = make_randomized_response_coins()
    local = make_local_release(BOOLS, dp.hamming_distance(), rr)
    assert local.map(0) == 0.0
    assert local.map(1) == rr.map(1)
    assert local.map(3) >= 3 * math.log(3)
    assert local.map(3) == pytest.approx(3 * math.log(3))
    assert local.output_measure == dp.max_divergence()


def test_partial_and_change_one_metric() -> None:
    rr = make_randomized_response_coins()
    local = (dp.vector_domain(dp.atom_domain(T=bool), size=4), dp.change_one_distance()) >> (
        then_local_release(rr)
    )
    out = local([True, False, True, False])
    assert out.shape == (4,) and out.dtype == np.bool_


def test_federated_flow_recovers_the_proportion() -> None:
    n = 20_000
    truth = np.zeros(n, dtype=bool)
    truth[: n // 5] = True
    local = make_local_release(BOOLS, dp.hamming_distance(), make_randomized_response_coins())
    released = local(truth)
    r = float(released.mean())
    z = scipy_stats.norm.isf(ALPHA / 2)
    assert abs(debias_two_coin(r) - 0.2) < z * two_coin_uncertainty(r, n) / 2
    assert abs(r - 0.2) > z * two_coin_uncertainty(r, n) / 2  # the raw share is biased


def test_records_are_privatised_independently() -> None:
    # two copies of the same truthful value: under independence the pair law is the product
    n = 20_000
    local = make_local_release(BOOLS, dp.hamming_distance(), make_randomized_response_coins())
    pairs = np.array([local([True, True]) for _ in range(n)])
    table = np.array(
        [
            [np.sum(pairs[:, 0] & pairs[:, 1]), np.sum(pairs[:, 0] & ~pairs[:, 1])],
            [np.sum(~pairs[:, 0] & pairs[:, 1]), np.sum(~pairs[:, 0] & ~pairs[:, 1])],
        ]
    )
    assert scipy_stats.chi2_contingency(table).pvalue > ALPHA
    expected = np.outer([0.75, 0.25], [0.75, 0.25]).ravel() * n
    assert scipy_stats.chisquare(table.ravel(), expected).pvalue > ALPHA


def test_laplace_on_bounded_records_uses_the_domain_width() -> None:
    elem = dp.atom_domain(bounds=(0.0, 10.0))
    lap = dp.m.make_laplace(elem, dp.absolute_distance(T=float), scale=5.0)
    local = make_local_release(dp.vector_domain(elem), dp.hamming_distance(), lap)
    assert local.map(1) == lap.map(10.0)
    assert local.map(2) >= 2 * lap.map(10.0)
    unbounded = dp.m.make_laplace(dp.atom_domain(T=float), dp.absolute_distance(T=float), 1.0)
    with pytest.raises(NotImplementedForType, match="record_distance"):
        make_local_release(
            dp.vector_domain(dp.atom_domain(T=float)), dp.hamming_distance(), unbounded
        )
    given = make_local_release(
        dp.vector_domain(dp.atom_domain(T=float)), dp.hamming_distance(), unbounded, 2.0
    )
    assert given.map(1) == unbounded.map(2.0)


def test_refusals() -> None:
    rr = make_randomized_response_coins()
    with pytest.raises(DomainMismatch):
        make_local_release(dp.vector_domain(dp.atom_domain(T=int)), dp.hamming_distance(), rr)
    with pytest.raises(NotImplementedForType):
        make_local_release(BOOLS, dp.symmetric_distance(), rr)


def test_random_dp_per_record_covers_one_record() -> None:
    s = sample_sensitivity(
        lambda d: d[0],
        "l1",
        GaussianMixture([[178.0, 7.0], [162.0, 6.5]], [0.5, 0.5]),
        1,
        gamma=0.05,
    )
    lap = dp.m.make_laplace(dp.atom_domain(T=float), dp.absolute_distance(T=float), s.sensitivity)
    per_node = make_random_dp(dp.atom_domain(T=float), dp.discrete_distance(), lambda x: x, s, lap)
    local = make_local_release(
        dp.vector_domain(dp.atom_domain(T=float)), dp.hamming_distance(), per_node
    )
    assert local.output_measure == per_node.output_measure
    assert local.map(1) == lap.map(s.sensitivity) == pytest.approx(1.0)
    with pytest.raises(FailedMap):
        local.map(2)
    assert local([170.0, 165.0]).shape == (2,)
