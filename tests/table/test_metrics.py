"""``dp.frame_distance``: OpenDP 0.16's repr and equality, its inner metrics, its distances."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import FailedMap, InvalidParameter


def test_frame_distance_repr_equality_type() -> None:
    metric = dp.frame_distance(dp.symmetric_distance())
    assert repr(metric) == "FrameDistance(SymmetricDistance())"
    assert metric.inner_metric == dp.symmetric_distance()
    assert metric.type == "FrameDistance<SymmetricDistance>"
    assert metric == dp.frame_distance(dp.symmetric_distance())
    assert metric != dp.frame_distance(dp.insert_delete_distance())
    assert repr(dp.frame_distance(dp.symmetric_id_distance("id"))) == (
        "FrameDistance(SymmetricIdDistance('id'))"
    )


def test_frame_distance_refuses_other_inner_metrics() -> None:
    with pytest.raises(InvalidParameter, match="symmetric_distance"):
        dp.frame_distance(dp.absolute_distance(T=float))


def test_distances_are_bounds_or_row_counts() -> None:
    metric = dp.frame_distance(dp.symmetric_distance())
    bound = SimpleNamespace(by=["A"], per_group=10, num_groups=None)
    assert metric._check_distance([bound]) == [bound]
    assert metric._check_distance(3) == 3
    with pytest.raises(FailedMap):
        metric._check_distance(-1)
    with pytest.raises(FailedMap, match=r"dp\.polars\.Bound"):
        metric._check_distance(["not a bound"])
    with pytest.raises(FailedMap):
        metric._check_distance([SimpleNamespace(by=[], per_group=-2, num_groups=None)])


def test_identity_carries_bounds_over() -> None:
    # as OpenDP's test_frame_distance: d_out = d_in for a list of bounds
    metric = dp.frame_distance(dp.symmetric_distance())
    ident = dp.t.make_identity(dp.atom_domain(T=int), metric)
    d_in = [SimpleNamespace(by=["A"], per_group=10, num_groups=None)]
    assert ident.map(d_in) == d_in


def test_serialization_round_trip() -> None:
    metric = dp.frame_distance(dp.insert_delete_distance())
    text = dp.serialize(metric)
    assert dp.deserialize(text) == metric
    forged = text.replace(
        '"insert_delete_distance", "args": []', '"absolute_distance", "args": ["f64"]'
    )
    with pytest.raises(Exception, match="frame_distance needs"):
        dp.deserialize(forged)
