"""Local / federated release: per-record independence, the local-model map, refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite.combinators.local import make_local_release, then_local_release
from opendp_lite.errors import (
    DomainMismatch,
    FailedMap,
    FeatureNotEnabled,
    InvalidParameter,
    NotImplementedForType,
)
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


def test_partial_on_hamming_distance() -> None:
    rr = make_randomized_response_coins()
    local = (dp.vector_domain(dp.atom_domain(T=bool), size=4), dp.hamming_distance()) >> (
        then_local_release(rr)
    )
    out = local([True, False, True, False])
    assert out.shape == (4,) and out.dtype == np.bool_


def _exact_release_probability(x: list[bool], y: list[bool]) -> float:
    """Pr[local release of x = y] for fair two-coin randomized response (3/4 truthful)."""
    return math.prod(0.75 if a == b else 0.25 for a, b in zip(x, y, strict=True))


def test_change_one_distance_is_refused_because_the_release_is_positional() -> None:
    # finding 2 (issue 12): change-one distance is between *unordered* datasets, so a
    # reordering is at distance 0, but the release is positional.  [T, F] and [F, T] have
    # exact loss ln(Pr[(T,F) | (T,F)] / Pr[(T,F) | (F,T)]) = 2 ln 3 > 0, which no map can meet
    # with map(0) = 0.
    rr = make_randomized_response_coins()
    x, x_swapped = [True, False], [False, True]
    loss = math.log(_exact_release_probability(x, x) / _exact_release_probability(x_swapped, x))
    assert loss == pytest.approx(2 * math.log(3))
    sized = dp.vector_domain(dp.atom_domain(T=bool), size=2)
    bounded = dp.t.make_metric_bounded(sized, dp.symmetric_distance())
    assert bounded.map(0) == 0 and bounded(x_swapped).tolist() == x_swapped
    with pytest.raises(NotImplementedForType, match="make_ordered_random"):
        bounded >> then_local_release(rr)
    with pytest.raises(NotImplementedForType, match="unordered"):
        make_local_release(sized, dp.change_one_distance(), rr)


def test_unordered_data_is_released_locally_after_a_random_order() -> None:
    # the sound route for unordered data: shuffle (change-one -> Hamming, stability 1)
    rr = make_randomized_response_coins()
    sized = dp.vector_domain(dp.atom_domain(T=bool), size=2)
    chain = (
        dp.t.make_metric_bounded(sized, dp.symmetric_distance())
        >> dp.t.then_ordered_random()
        >> then_local_release(rr)
    )
    assert chain.map(2) == rr.map(1)  # 2 edits = 1 change = 1 position after the shuffle
    # the shuffled release's law depends on the multiset only: [T, F] and [F, T] alike
    n = 20_000
    outs = [tuple(chain([True, False]).tolist()) for _ in range(n)]
    outs_swapped = [tuple(chain([False, True]).tolist()) for _ in range(n)]
    cells = [(True, True), (True, False), (False, True), (False, False)]
    table = np.array([[outs.count(c) for c in cells], [outs_swapped.count(c) for c in cells]])
    assert scipy_stats.chi2_contingency(table).pvalue > ALPHA
    # ... and each ordered output is (T,F) or (F,T) with Pr 1/2 · (9/16 + 1/16) = 5/16
    expected = np.array([3 / 16, 5 / 16, 5 / 16, 3 / 16]) * n
    assert scipy_stats.chisquare(table[0], expected).pvalue > ALPHA
    # the unshuffled law ((T,F) with Pr 9/16) is rejected
    wrong = np.array([3 / 16, 9 / 16, 1 / 16, 3 / 16]) * n
    assert scipy_stats.chisquare(table[0], wrong).pvalue < ALPHA


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


def test_asserted_record_distance_needs_honest_but_curious() -> None:
    # finding 6 (issue 12): with nothing bounding a record, record_distance is a bare claim
    unbounded = dp.m.make_laplace(dp.atom_domain(T=float), dp.absolute_distance(T=float), 1.0)
    floats = dp.vector_domain(dp.atom_domain(T=float))
    with pytest.raises(FeatureNotEnabled, match=r"record_distance=2\.0.*honest-but-curious"):
        make_local_release(floats, dp.hamming_distance(), unbounded, 2.0)
    dp.enable_features("honest-but-curious")
    given = make_local_release(floats, dp.hamming_distance(), unbounded, 2.0)
    assert given.map(1) == unbounded.map(2.0)


@pytest.mark.parametrize(
    ("elem", "metric", "claimed", "derived"),
    [
        (dp.atom_domain(bounds=(0.0, 10.0)), dp.absolute_distance(T=float), 2.0, "10.0"),
        (dp.atom_domain(bounds=(-3, 4)), dp.absolute_distance(T=int), 6, "7"),
        (dp.atom_domain(T=bool), dp.discrete_distance(), 0.5, "1"),
    ],
)
def test_record_distance_contradicting_the_domain_is_refused(
    elem: object, metric: object, claimed: float, derived: str
) -> None:
    # finding 6: even with the feature, a value the bounds contradict is refused, naming both
    dp.enable_features("honest-but-curious")
    if isinstance(metric, dp.DiscreteDistance):
        inner = make_randomized_response_coins()
    else:
        inner = dp.m.make_laplace(elem, metric, scale=1.0)
    vec = dp.vector_domain(elem)
    with pytest.raises(InvalidParameter) as info:
        make_local_release(vec, dp.hamming_distance(), inner, claimed)
    assert f"record_distance={claimed!r}" in str(info.value)
    assert f"by {derived}" in str(info.value) and f">= {derived}" in str(info.value)
    # the derived distance is what the release uses; a larger (looser) value is accepted
    exact = make_local_release(vec, dp.hamming_distance(), inner)
    assert exact.map(1) == inner.map(float(derived) if "." in derived else int(derived))
    looser = make_local_release(vec, dp.hamming_distance(), inner, 2 * float(derived))
    assert looser.map(1) >= exact.map(1)


def test_record_distance_below_the_bounds_no_longer_understates_epsilon() -> None:
    # the attack: bounds (0, 10), Laplace(scale=1) and record_distance=1 claimed ε = 1; the
    # true per-record loss is 10.  The claim is refused without the feature as well.
    elem = dp.atom_domain(bounds=(0.0, 10.0))
    lap = dp.m.make_laplace(elem, dp.absolute_distance(T=float), scale=1.0)
    with pytest.raises(InvalidParameter, match="contradicts the element domain"):
        make_local_release(dp.vector_domain(elem), dp.hamming_distance(), lap, 1.0)
    local = make_local_release(dp.vector_domain(elem), dp.hamming_distance(), lap)
    assert local.map(1) >= 10.0


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
