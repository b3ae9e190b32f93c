"""Metrics: OpenDP reprs and distance types, and distance validation by each metric."""

from __future__ import annotations

import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import FailedMap, NotImplementedForType

DATASET = [
    dp.symmetric_distance(),
    dp.insert_delete_distance(),
    dp.change_one_distance(),
    dp.hamming_distance(),
    dp.discrete_distance(),
]


def test_reprs_and_distance_types_match_opendp() -> None:
    odp = pytest.importorskip("opendp.prelude")
    pairs = [
        (dp.symmetric_distance(), odp.symmetric_distance()),
        (dp.insert_delete_distance(), odp.insert_delete_distance()),
        (dp.change_one_distance(), odp.change_one_distance()),
        (dp.hamming_distance(), odp.hamming_distance()),
        (dp.discrete_distance(), odp.discrete_distance()),
        (dp.absolute_distance(T=int), odp.absolute_distance(T=int)),
        (dp.absolute_distance(T="f32"), odp.absolute_distance(T="f32")),
        (dp.l1_distance(T=float), odp.l1_distance(T=float)),
        (dp.l2_distance(T=float), odp.l2_distance(T=float)),
        (dp.linf_distance(T=float), odp.linf_distance(T=float)),
        (dp.linf_distance(T=int, monotonic=True), odp.linf_distance(T=int, monotonic=True)),
    ]
    for ours, theirs in pairs:
        assert repr(ours) == repr(theirs)
        assert ours.distance_type == theirs.distance_type


def test_structural_equality() -> None:
    assert dp.l1_distance(T=int) == dp.l1_distance(T="i32") != dp.l1_distance(T="i64")
    assert dp.linf_distance(T=float) != dp.linf_distance(T=float, monotonic=True)
    assert dp.symmetric_distance() != dp.insert_delete_distance()
    assert dp.user_distance("A") == dp.user_distance("A") != dp.user_distance("B")


@pytest.mark.parametrize("metric", DATASET, ids=repr)
def test_dataset_distances_are_non_negative_integers(metric: object) -> None:
    check = metric._check_distance  # type: ignore[attr-defined]
    assert check(3) == 3 and check(2.0) == 2
    for bad in (-1, 1.5, float("nan"), float("inf"), "1", None, True):
        with pytest.raises(FailedMap):
            check(bad)


def test_sensitivity_distances() -> None:
    f = dp.l2_distance(T=float)._check_distance
    assert f(0.5) == 0.5
    for bad in (-0.1, float("nan"), float("inf"), "x"):
        with pytest.raises(FailedMap):
            f(bad)
    i = dp.l1_distance(T=int)._check_distance
    with pytest.raises(FailedMap):
        i(0.5)


def test_non_numeric_distance_types_refused() -> None:
    for make in (dp.absolute_distance, dp.l1_distance, dp.l2_distance, dp.linf_distance):
        for T in (str, bool):
            with pytest.raises(NotImplementedForType):
                make(T=T)
    with pytest.raises(NotImplementedForType):
        dp.l1_distance(T=complex)
