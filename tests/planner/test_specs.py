"""Statistic specs: value types, checked fields, the dict round trip, and the errors' fixes."""

from __future__ import annotations

import pytest

from opendp_lite.errors import InvalidParameter
from opendp_lite.planner import Count, GroupedCount, GroupedSum, Mean, Quantile, Rows, Sum, within
from opendp_lite.planner.specs import spec_from_dict

SPECS = [
    Count("n", within(10.0), rows=Rows("age", "in", [1, 2])),
    Sum("s", within(100.0, level=0.9), column="x", bounds=(-5, 10)),
    Mean("m", within(0.1, relative=True, lower_bound=3.0), column="x", bounds=(0, 10), min_rows=50),
    GroupedCount("g", within(5.0), by="k", keys=("a", "b"), exhaustive=True),
    GroupedSum("gs", within(5.0), by="k", column="x", bounds=(0, 1), max_groups=9, release_size=40),
    Quantile("q", within(3.0), column="x", q=0.25, candidates=(0, 1, 2)),
]


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.kind)
def test_dict_round_trip(spec):
    assert spec_from_dict(spec.to_dict()) == spec
    assert hash(spec) == hash(spec_from_dict(spec.to_dict()))


def test_relative_target_needs_a_public_lower_bound():
    with pytest.raises(InvalidParameter, match="public lower bound"):
        within(0.02, relative=True).absolute("count 'n'")
    assert within(0.02, relative=True, lower_bound=500.0).absolute("n") == pytest.approx(10.0)


def test_bad_fields_are_refused_with_their_fix():
    with pytest.raises(InvalidParameter, match="floats for an f64 column"):
        Sum("s", within(1.0), column="x", bounds=(0.0, float("inf")))
    with pytest.raises(InvalidParameter, match="lo <= hi"):
        Sum("s", within(1.0), column="x", bounds=(2.0, 1.5))
    with pytest.raises(InvalidParameter, match="max_rows"):
        Sum("s", within(1.0), column="x", bounds=(0.0, 1.5), max_rows=0)
    assert Sum("s", within(1.0), column="x", bounds=(0, 1.5)).bounds == (0.0, 1.5)
    assert Sum("s", within(1.0), column="x", bounds=(0, 1.5)).is_float
    with pytest.raises(InvalidParameter, match="max_groups"):
        GroupedSum("gs", within(1.0), by="k", column="x", bounds=(0, 1))
    with pytest.raises(InvalidParameter, match="level"):
        within(1.0, level=1.0)
    with pytest.raises(InvalidParameter, match="half_width"):
        within(0.0)
    with pytest.raises(InvalidParameter, match="exhaustive"):
        GroupedCount("g", within(1.0), by="k", max_groups=3, release_size=9, exhaustive=True)
    with pytest.raises(InvalidParameter, match="unknown fields"):
        spec_from_dict({**SPECS[0].to_dict(), "scale": 0.0})
    with pytest.raises(InvalidParameter, match="unknown statistic kind"):
        spec_from_dict({"kind": "variance"})


def test_groups_count_for_simultaneous_targets():
    assert SPECS[3].groups == 2
    assert SPECS[4].groups == 9
    assert GroupedCount("g", within(5.0), by="k", keys=("a", "b"), simultaneous=False).groups == 1
