"""b-ary trees: layout and L1 map as OpenDP 0.16, a correct L2 map, consistency, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendp_lite.prelude as dp
from opendp_lite.errors import FailedFunction, InvalidParameter, NotImplementedForType

INTS = dp.vector_domain(dp.atom_domain(T=int))


def tree(leaf_count: int, b: int, metric: object = None) -> object:
    return dp.t.make_b_ary_tree(INTS, metric or dp.l1_distance(T=int), leaf_count, b)


def test_layout() -> None:
    t = tree(5, 2)
    assert t([1, 2, 3, 4, 5]) == [15, 10, 5, 3, 7, 5, 0, 1, 2, 3, 4, 5]
    assert t([1, 2, 3]) == [6, 6, 0, 3, 3, 0, 0, 1, 2, 3]
    assert tree(4, 2)([1, 2, 3, 4, 5, 6]) == [10, 3, 7, 1, 2, 3, 4]
    assert tree(1, 3)([7]) == [7]
    assert [t.map(d) for d in (0, 1, 3)] == [0, 4, 12]


@pytest.mark.parametrize("b", [2, 3, 4])
@pytest.mark.parametrize("leaves", [1, 2, 5, 9, 16, 17])
def test_matches_opendp(b: int, leaves: int) -> None:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    rng = np.random.default_rng(b * 100 + leaves)
    x = rng.integers(0, 20, leaves).tolist()
    ours = tree(leaves, b)
    theirs = odp.t.make_b_ary_tree(
        odp.vector_domain(odp.atom_domain(T=int)), odp.l1_distance(T=int), leaves, b
    )
    assert ours(x) == theirs(x)
    assert [ours.map(d) for d in range(4)] == [theirs.map(d) for d in range(4)]
    if leaves == b ** round(math.log(leaves, b)):  # complete trees: same consistent leaves
        noisy = (np.array(theirs(x)) + rng.integers(-3, 4, len(theirs(x)))).tolist()
        ours_c = dp.t.make_consistent_b_ary_tree(b)(noisy)
        theirs_c = odp.t.make_consistent_b_ary_tree(b)(noisy)
        assert np.allclose(ours_c, theirs_c, rtol=1e-12)


def test_l2_map_covers_the_all_ones_example_opendp_misses() -> None:
    t = tree(9, 3, dp.l2_distance(T=int))
    x = np.zeros(9, dtype=np.int32)
    x2 = np.ones(9, dtype=np.int32)  # L2 distance 3
    out = float(np.linalg.norm(t(x2).astype(float) - t(x).astype(float)))
    assert out == pytest.approx(math.sqrt(117))
    assert out <= t.map(3) == 11
    assert t.map(1) == 2  # ceil(sqrt(3 levels))


@settings(max_examples=200, deadline=None)
@given(
    data=st.data(),
    b=st.integers(2, 4),
    leaves=st.integers(1, 20),
    l2=st.booleans(),
)
def test_stability_law(data: st.DataObject, b: int, leaves: int, l2: bool) -> None:
    metric = dp.l2_distance(T=int) if l2 else dp.l1_distance(T=int)
    t = tree(leaves, b, metric)
    x = data.draw(st.lists(st.integers(0, 50), min_size=leaves, max_size=leaves))
    v = data.draw(st.lists(st.integers(-3, 3), min_size=leaves, max_size=leaves))
    x2 = [a + c for a, c in zip(x, v, strict=True)]
    diff = np.asarray(t(x2), np.int64) - np.asarray(t(x), np.int64)
    if l2:
        d_in = math.isqrt(sum(c * c for c in v) - 1) + 1 if any(v) else 0
        assert math.sqrt(float((diff.astype(float) ** 2).sum())) <= t.map(d_in)
    else:
        d_in = sum(abs(c) for c in v)
        assert int(np.abs(diff).sum()) <= t.map(d_in)
    assert t.map(d_in) <= t.map(d_in + 1)


def test_consistency_properties() -> None:
    f = dp.t.make_consistent_b_ary_tree(branching_factor=2)
    # an already consistent tree is returned unchanged
    assert f([10, 3, 7, 1, 2, 3, 4]).tolist() == pytest.approx([1, 2, 3, 4])
    out = f([10, 4, 7, 1, 2, 3, 4]).tolist()
    assert out == pytest.approx([1.238095, 2.238095, 2.904762, 3.904762], abs=1e-6)
    # incomplete last level: missing leaves read as zero observations
    assert len(f([15, 10, 5, 3, 7, 5, 0, 1, 2, 3, 4, 5])) == 5
    with pytest.raises(FailedFunction):
        f([])
    with pytest.raises(InvalidParameter):
        dp.t.make_consistent_b_ary_tree(1)
    with pytest.raises(NotImplementedForType):
        dp.t.make_consistent_b_ary_tree(2, TOA=int)


def test_errors() -> None:
    with pytest.raises(InvalidParameter):
        tree(0, 2)
    with pytest.raises(InvalidParameter):
        tree(4, 1)
    with pytest.raises(NotImplementedForType):
        dp.t.make_b_ary_tree(
            dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float), 4, 2
        )
    with pytest.raises(NotImplementedForType):
        dp.t.make_b_ary_tree(INTS, dp.symmetric_distance(), 4, 2)


def test_wide_counts_saturate_exactly() -> None:
    big = np.iinfo(np.int64).max
    t = dp.t.make_b_ary_tree(
        dp.vector_domain(dp.atom_domain(T="i64")), dp.l1_distance(T="i64"), 2, 2
    )
    assert t(np.array([big, big], dtype=np.int64)).tolist() == [big, big, big]
