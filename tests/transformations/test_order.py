"""make_unordered, make_ordered_random, make_metric_bounded, make_metric_unbounded."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendp_lite.prelude as dp
from opendp_lite.errors import NotImplementedForType
from tests.transformations.test_rowwise import (
    change_one,
    check_stable,
    hamming,
    insert_delete,
    neighbours,
    symmetric,
)

V = dp.vector_domain(dp.atom_domain(T=int))
ints = st.integers(0, 4)


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_unordered_is_stable(data: st.DataObject) -> None:
    x, y = data.draw(neighbours(ints, "InsertDeleteDistance"))
    check_stable(dp.t.make_unordered(V, dp.insert_delete_distance()), x, y)
    a, b = data.draw(neighbours(ints, "HammingDistance"))
    sized = dp.vector_domain(dp.atom_domain(T=int), size=len(a))
    check_stable(dp.t.make_unordered(sized, dp.hamming_distance()), a, b)


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_metric_unbounded_is_stable(data: st.DataObject) -> None:
    a, b = data.draw(neighbours(ints, "ChangeOneDistance"))
    sized = dp.vector_domain(dp.atom_domain(T=int), size=len(a))
    check_stable(dp.t.make_metric_unbounded(sized, dp.change_one_distance()), a, b)
    a, b = data.draw(neighbours(ints, "HammingDistance"))
    sized = dp.vector_domain(dp.atom_domain(T=int), size=len(a))
    check_stable(dp.t.make_metric_unbounded(sized, dp.hamming_distance()), a, b)


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_metric_bounded_is_stable(data: st.DataObject) -> None:
    a, b = data.draw(neighbours(ints, "ChangeOneDistance"))
    sized = dp.vector_domain(dp.atom_domain(T=int), size=len(a))
    t = dp.t.make_metric_bounded(sized, dp.symmetric_distance())
    assert change_one(t(a), t(b)) <= t.map(symmetric(a, b))


def test_opendp_insert_delete_to_hamming_is_unsound_and_refused() -> None:
    x, y = [1, 2, 3, 4], [2, 3, 4, 1]
    assert insert_delete(x, y) == 2 and hamming(x, y) == 4  # ⌊2/2⌋ = 1 < 4
    sized = dp.vector_domain(dp.atom_domain(T=int), size=4)
    with pytest.raises(NotImplementedForType):
        dp.t.make_metric_bounded(sized, dp.insert_delete_distance())
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    theirs = odp.t.make_metric_bounded(
        odp.vector_domain(odp.atom_domain(T=int), size=4), odp.insert_delete_distance()
    )
    assert theirs.map(2) < hamming(theirs(x), theirs(y))  # OpenDP 0.16 under-reports


def test_ordered_random_is_a_permutation_and_all_orders_occur() -> None:
    t = dp.t.make_ordered_random(V, dp.symmetric_distance())
    seen = Counter(tuple(t([1, 2, 3])) for _ in range(300))
    assert len(seen) == 6 and all(sorted(p) == [1, 2, 3] for p in seen)
    c = dp.t.make_ordered_random(
        dp.vector_domain(dp.atom_domain(T=int), size=3), dp.change_one_distance()
    )
    assert c.output_metric == dp.hamming_distance() and sorted(c([3, 1, 2])) == [1, 2, 3]


def test_typed_errors() -> None:
    with pytest.raises(NotImplementedForType):
        dp.t.make_unordered(V, dp.symmetric_distance())
    with pytest.raises(NotImplementedForType):
        dp.t.make_ordered_random(V, dp.insert_delete_distance())
    with pytest.raises(NotImplementedForType):
        dp.t.make_metric_bounded(V, dp.symmetric_distance())  # unsized
    with pytest.raises(NotImplementedForType):
        dp.t.make_metric_unbounded(V, dp.symmetric_distance())
    with pytest.raises(NotImplementedForType):
        dp.t.make_unordered(dp.atom_domain(T=int), dp.insert_delete_distance())


def test_maps_match_opendp() -> None:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    sized, osized = (
        dp.vector_domain(dp.atom_domain(T=int), size=3),
        odp.vector_domain(odp.atom_domain(T=int), size=3),
    )
    cases = [
        (
            dp.t.make_unordered(V, dp.insert_delete_distance()),
            odp.t.make_unordered(
                odp.vector_domain(odp.atom_domain(T=int)), odp.insert_delete_distance()
            ),
        ),
        (
            dp.t.make_unordered(sized, dp.hamming_distance()),
            odp.t.make_unordered(osized, odp.hamming_distance()),
        ),
        (
            dp.t.make_ordered_random(V, dp.symmetric_distance()),
            odp.t.make_ordered_random(
                odp.vector_domain(odp.atom_domain(T=int)), odp.symmetric_distance()
            ),
        ),
        (
            dp.t.make_ordered_random(sized, dp.change_one_distance()),
            odp.t.make_ordered_random(osized, odp.change_one_distance()),
        ),
        (
            dp.t.make_metric_bounded(sized, dp.symmetric_distance()),
            odp.t.make_metric_bounded(osized, odp.symmetric_distance()),
        ),
        (
            dp.t.make_metric_unbounded(sized, dp.change_one_distance()),
            odp.t.make_metric_unbounded(osized, odp.change_one_distance()),
        ),
        (
            dp.t.make_metric_unbounded(sized, dp.hamming_distance()),
            odp.t.make_metric_unbounded(osized, odp.hamming_distance()),
        ),
    ]
    for ours, theirs in cases:
        assert [ours.map(d) for d in range(25)] == [theirs.map(d) for d in range(25)]
        assert repr(ours.output_metric) == repr(theirs.output_metric)
        assert repr(ours.output_domain) == repr(theirs.output_domain)
