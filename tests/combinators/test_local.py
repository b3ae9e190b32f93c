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
    OpenDPLiteWarning,
)
from opendp_lite.measurements.two_coin import (
    debias_two_coin,
    make_randomized_response_coins,
    two_coin_uncertainty,
)
from opendp_lite.sensitivity import GaussianMixture, make_random_dp, sample_sensitivity
from tests.stat._reference import (
    assert_fits,
    assert_within,
    check_binomial,
    check_categorical,
    z_bound,
)

scipy_stats = pytest.importorskip("scipy.stats")


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
    assert len(out) == 4 and all(type(v) is bool for v in out)


def _exact_release_probability(x: list[bool], y: list[bool]) -> float:
    """Pr[local release of x = y] for fair two-coin randomized response (3/4 truthful)."""
    return math.prod(0.75 if a == b else 0.25 for a, b in zip(x, y, strict=True))


def test_change_one_distance_is_refused_because_the_release_is_positional() -> None:
    # change-one distance is between *unordered* datasets, so a
    # reordering is at distance 0, but the release is positional.  [T, F] and [F, T] have
    # exact loss ln(Pr[(T,F) | (T,F)] / Pr[(T,F) | (F,T)]) = 2 ln 3 > 0, which no map can meet
    # with map(0) = 0.
    rr = make_randomized_response_coins()
    x, x_swapped = [True, False], [False, True]
    loss = math.log(_exact_release_probability(x, x) / _exact_release_probability(x_swapped, x))
    assert loss == pytest.approx(2 * math.log(3))
    sized = dp.vector_domain(dp.atom_domain(T=bool), size=2)
    bounded = dp.t.make_metric_bounded(sized, dp.symmetric_distance())
    assert bounded.map(0) == 0 and bounded(x_swapped) == x_swapped
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
    outs = [tuple(chain([True, False])) for _ in range(n)]
    outs_swapped = [tuple(chain([False, True])) for _ in range(n)]
    cells = [(True, True), (True, False), (False, True), (False, False)]
    table = np.array([[outs.count(c) for c in cells], [outs_swapped.count(c) for c in cells]])
    assert_fits(scipy_stats.chi2_contingency(table).pvalue)
    # ... and each ordered output is (T,F) or (F,T) with Pr 1/2 · (9/16 + 1/16) = 5/16
    # the unshuffled law ((T,F) with Pr 9/16) is rejected
    law = dict(zip(cells, [3 / 16, 5 / 16, 5 / 16, 3 / 16], strict=True))
    unshuffled = dict(zip(cells, [3 / 16, 9 / 16, 1 / 16, 3 / 16], strict=True))
    check_categorical(dict(zip(cells, table[0].tolist(), strict=True)), law, [unshuffled])


def test_federated_flow_recovers_the_proportion() -> None:
    n = 20_000
    truth = np.zeros(n, dtype=bool)
    truth[: n // 5] = True
    local = make_local_release(BOOLS, dp.hamming_distance(), make_randomized_response_coins())
    released = local(truth)
    r = float(released.mean())
    z = z_bound()
    assert_within(debias_two_coin(r), 0.2, two_coin_uncertainty(r, n) / 2)
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
    assert_fits(scipy_stats.chi2_contingency(table).pvalue)
    expected = np.outer([0.75, 0.25], [0.75, 0.25]).ravel() * n
    assert_fits(scipy_stats.chisquare(table.ravel(), expected).pvalue)


def test_laplace_on_bounded_records_uses_the_domain_width() -> None:
    elem = dp.atom_domain(bounds=(0.0, 10.0))
    lap = dp.m.make_laplace(elem, dp.absolute_distance(T=float), scale=5.0)
    local = make_local_release(dp.vector_domain(elem), dp.hamming_distance(), lap)
    assert local.map(1) == lap.map(10.0)
    assert local.map(2) >= 2 * lap.map(10.0)
    unbounded = dp.m.make_laplace(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), 1.0
    )
    with pytest.raises(NotImplementedForType, match="record_distance"):
        make_local_release(
            dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.hamming_distance(), unbounded
        )


def test_asserted_record_distance_needs_honest_but_curious() -> None:
    # with nothing bounding a record, record_distance is a bare claim
    unbounded = dp.m.make_laplace(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), 1.0
    )
    floats = dp.vector_domain(dp.atom_domain(T=float, nan=False))
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
    # even with the feature, a value the bounds contradict is refused, naming both
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
    lap = dp.m.make_laplace(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), s.sensitivity
    )
    per_node = make_random_dp(
        dp.atom_domain(T=float, nan=False), dp.discrete_distance(), lambda x: x, s, lap
    )
    local = make_local_release(
        dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.hamming_distance(), per_node
    )
    assert local.output_measure == per_node.output_measure
    assert local.map(1) == lap.map(s.sensitivity) == pytest.approx(1.0)
    with pytest.raises(FailedMap):
        local.map(2)
    assert len(local([170.0, 165.0])) == 2


# ----------------------------------------------------------------------------------------------
# Every constructor that accepts an *unordered* dataset metric
# (symmetric / change-one: a reordering is at distance 0) must not reveal the order.  Each case
# builds the constructor on adversarial data x and a permutation of it, and checks the sound
# behaviour: the outputs agree within map(0) (transformations into a sensitivity metric), the
# output is a reordering under the same unordered metric (row-wise maps), the same randomness
# gives the same release (measurements), or the constructor refuses.

INTS = dp.vector_domain(dp.atom_domain(T=int))
INTS_5 = dp.vector_domain(dp.atom_domain(bounds=(-10, 10)), size=5)
X_INT, X_INT_PERM = [3, -2, 7, 7, 0], [7, 0, 3, 7, -2]
FLOATS_5 = dp.vector_domain(dp.atom_domain(bounds=(-1e16, 1e16)), size=5)
FLOATS = dp.vector_domain(dp.atom_domain(bounds=(-1e16, 1e16)))
# float rounding is order-dependent on this data: a naive left-to-right sum gives 0.5 or 2.5
X_FLT, X_FLT_PERM = [1e16, 1.0, -1e16, 1.0, 0.5], [1.0, 1e16, 0.5, -1e16, 1.0]
SYM = dp.symmetric_distance()

_AGGREGATES: list[tuple[str, object, object, list[object], list[object]]] = [
    ("make_count", dp.t.make_count, INTS, X_INT, X_INT_PERM),
    ("make_count_distinct", dp.t.make_count_distinct, INTS, X_INT, X_INT_PERM),
    (
        "make_count_by_categories",
        lambda d, m: dp.t.make_count_by_categories(d, m, [7, 0, 5]),
        INTS,
        X_INT,
        X_INT_PERM,
    ),
    ("make_sum (int, sized)", dp.t.make_sum, INTS_5, X_INT, X_INT_PERM),
    (
        "make_sum (int, unsized)",
        dp.t.make_sum,
        dp.vector_domain(dp.atom_domain(bounds=(-10, 10))),
        X_INT,
        X_INT_PERM,
    ),
    ("make_sum (float, sized)", dp.t.make_sum, FLOATS_5, X_FLT, X_FLT_PERM),
    ("make_sum (float, unsized)", dp.t.make_sum, FLOATS, X_FLT, X_FLT_PERM),
    ("make_mean", dp.t.make_mean, FLOATS_5, X_FLT, X_FLT_PERM),
    ("make_variance", dp.t.make_variance, FLOATS_5, X_FLT, X_FLT_PERM),
    (
        "make_sum_of_squared_deviations",
        dp.t.make_sum_of_squared_deviations,
        FLOATS_5,
        X_FLT,
        X_FLT_PERM,
    ),
    (
        "make_quantile_score_candidates",
        lambda d, m: dp.t.make_quantile_score_candidates(d, m, [-2, 0, 3, 7], 0.5),
        INTS,
        X_INT,
        X_INT_PERM,
    ),
]


@pytest.mark.parametrize(
    ("name", "make", "domain", "x", "x_perm"), _AGGREGATES, ids=[c[0] for c in _AGGREGATES]
)
def test_aggregates_of_unordered_data_move_at_most_map_0_under_reordering(
    name: str, make: object, domain: object, x: list[object], x_perm: list[object]
) -> None:
    assert sorted(x) == sorted(x_perm) and x != x_perm  # a reordering: symmetric distance 0
    t = make(domain, SYM)  # type: ignore[operator]
    a, b = t(x), t(x_perm)
    if isinstance(a, dict):
        assert a == b
        return
    moved = float(np.sum(np.abs(np.asarray(a, dtype=float) - np.asarray(b, dtype=float))))
    assert moved <= float(t.map(0)), f"{name}: a reordering moved the output by {moved}"


_ROWWISE: list[tuple[str, object]] = [
    ("make_clamp", lambda d, m: dp.t.make_clamp(d, m, (-1, 5))),
    ("make_is_equal", lambda d, m: dp.t.make_is_equal(d, m, 7)),
    ("make_find_bin", lambda d, m: dp.t.make_find_bin(d, m, [0, 5])),
    ("make_cast_default", lambda d, m: dp.t.make_cast_default(d, m, TOA=float)),
    ("make_metric_bounded", dp.t.make_metric_bounded),
    ("make_unordered", None),
]


@pytest.mark.parametrize("metric", [dp.symmetric_distance(), dp.change_one_distance()])
@pytest.mark.parametrize(("name", "make"), _ROWWISE, ids=[c[0] for c in _ROWWISE])
def test_row_wise_maps_keep_the_unordered_metric(name: str, make: object, metric: object) -> None:
    # a row-wise map of a reordering is a reordering of the output, under the same unordered
    # metric (or another unordered one): distance 0 is kept, nothing positional is claimed
    domain = dp.vector_domain(dp.atom_domain(T=int), size=5)
    if make is None:  # make_unordered takes ordered metrics only: unordered input is refused
        with pytest.raises(NotImplementedForType):
            dp.t.make_unordered(domain, metric)
        return
    try:
        t = make(domain, metric)  # type: ignore[operator]
    except NotImplementedForType:
        assert name == "make_metric_bounded" and isinstance(metric, dp.ChangeOneDistance)
        return
    assert isinstance(t.output_metric, (dp.SymmetricDistance, dp.ChangeOneDistance))
    assert t.map(0) == 0
    a, b = t(X_INT), t(X_INT_PERM)
    assert sorted(a) == sorted(b)


def test_private_quantile_depends_on_the_multiset_only() -> None:
    # the same randomness on x and on a reordering of x gives the same release
    from opendp_lite.samplers import rng

    m = dp.m.make_private_quantile(
        INTS, SYM, dp.max_divergence(), candidates=[-2, 0, 3, 7], alpha=0.5, scale=1.0
    )
    for seed in range(20):
        with pytest.warns(OpenDPLiteWarning), rng.scripted_randomness(seed=bytes([seed])):
            a = m(X_INT)
        with pytest.warns(OpenDPLiteWarning), rng.scripted_randomness(seed=bytes([seed])):
            b = m(X_INT_PERM)
        assert a == b


def test_order_conversions_from_unordered_data_shuffle() -> None:
    # make_ordered_random and make_resize (to an ordered metric) give unordered data an order
    # only through a uniform shuffle: the law of the output order is the same for x and a
    # reordering of x
    # n: the exact binomial test of p = 0.45 / 0.55 at ALPHA has power 0.99800 at 6000 draws
    # (a chance miss about one run in 500), 0.99998 at 8000
    n = 8000
    for build in (
        lambda: dp.t.make_ordered_random(dp.vector_domain(dp.atom_domain(T=int)), SYM),
        lambda: dp.t.make_resize(
            dp.vector_domain(dp.atom_domain(T=int)),
            SYM,
            size=2,
            constant=0,
            MO=dp.insert_delete_distance(),
        ),
    ):
        t = build()
        assert isinstance(t.output_metric, dp.InsertDeleteDistance)
        first = [int(t([1, 2])[0]) for _ in range(n)]
        first_perm = [int(t([2, 1])[0]) for _ in range(n)]
        table = np.array(
            [[first.count(1), first.count(2)], [first_perm.count(1), first_perm.count(2)]]
        )
        assert_fits(scipy_stats.chi2_contingency(table).pvalue)
        check_binomial(first.count(1), n, 0.5, wrong=(0.45, 0.55))  # a biased order is rejected


def test_random_dp_on_unordered_data_shuffles_before_a_positional_query() -> None:
    # make_random_dp accepted change_one_distance with any query; with the query d[0],
    # [0, 10] and [10, 0] (distance 0, map(0) = 0) were released as Lap(0) vs Lap(10).
    # Now the records are put in a uniformly random order first: both laws are
    # ½ Lap(0, 1) + ½ Lap(10, 1).
    from opendp_lite.sensitivity import Normal

    s = sample_sensitivity(lambda d: float(d[0]), "l1", Normal(0.0, 1.0), 2, gamma=0.05)
    lap = dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), 1.0)
    sized = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=2)
    meas = make_random_dp(sized, dp.change_one_distance(), lambda d: float(d[0]), s, lap)
    assert meas.map(0) == 0.0
    n = 4000
    a = np.array([meas([0.0, 10.0]) for _ in range(n)])
    b = np.array([meas([10.0, 0.0]) for _ in range(n)])
    assert_fits(scipy_stats.ks_2samp(a, b).pvalue)
    assert abs(float(np.mean(a > 5)) - 0.5) < 0.05
    # on ordered data (Hamming) nothing is shuffled, and the two vectors are 2 positions apart
    ordered = make_random_dp(sized, dp.hamming_distance(), lambda d: float(d[0]), s, lap)
    c = np.array([ordered([0.0, 10.0]) for _ in range(n)])
    assert float(np.mean(c > 5)) < 0.01
