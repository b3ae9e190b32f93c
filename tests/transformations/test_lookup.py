"""make_identity, make_is_equal, make_find, make_find_bin, make_index."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendp_lite.prelude as dp
from opendp_lite.errors import InvalidParameter, NotImplementedForType, NotInDomain
from tests.transformations.test_rowwise import check_stable, neighbours

SD = dp.symmetric_distance()
ALL = [
    dp.symmetric_distance(),
    dp.insert_delete_distance(),
    dp.change_one_distance(),
    dp.hamming_distance(),
]
VI = dp.vector_domain(dp.atom_domain(T=int))
VS = dp.vector_domain(dp.atom_domain(T=str))
VF = dp.vector_domain(dp.atom_domain(T=float, nan=True))
VU = dp.vector_domain(dp.atom_domain(T="usize"))


@pytest.mark.parametrize("metric", ALL, ids=repr)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_lookups_are_stable(metric: object, data: st.DataObject) -> None:
    name = type(metric).__name__
    x, y = data.draw(neighbours(st.integers(-3, 12), name))
    check_stable(dp.t.make_find_bin(VI, metric, [0, 5, 10]), x, y)
    check_stable(dp.t.make_find(VI, metric, [3, 1, 7]), x, y)
    check_stable(dp.t.make_is_equal(VI, metric, 3), x, y)
    check_stable(dp.t.make_identity(VI, metric), x, y)
    u, v = data.draw(neighbours(st.integers(0, 5), name))
    check_stable(dp.t.make_index(VU, metric, ["a", "b", "c"], "z"), u, v)
    s, w = data.draw(neighbours(st.sampled_from(["a", "b", "c", "zz"]), name))
    check_stable(dp.t.make_find(VS, metric, ["b", "a"]), s, w)


@settings(max_examples=200, deadline=None)
@given(
    x=st.lists(st.one_of(st.just(float("nan")), st.floats(-20, 20)), max_size=15),
    edges=st.lists(st.floats(-20, 20, allow_nan=False), unique=True, max_size=5).map(sorted),
)
def test_find_bin_counts_edges_at_or_below(x: list[float], edges: list[float]) -> None:
    out = dp.t.make_find_bin(VF, SD, edges)(x)
    expected = [len(edges) if v != v else sum(e <= v for e in edges) for v in x]
    assert out == expected


@settings(max_examples=200, deadline=None)
@given(
    x=st.lists(st.integers(-5, 5), max_size=15),
    cats=st.lists(st.integers(-5, 5), unique=True, max_size=6),
)
def test_find_is_the_index_or_none(x: list[int], cats: list[int]) -> None:
    out = dp.t.make_find(VI, SD, cats)(x)
    assert out == [cats.index(v) if v in cats else None for v in x]


def test_index_and_is_equal_values() -> None:
    t = dp.t.make_index(VU, SD, [10, 20], -1)
    assert t(np.array([0, 1, 2, 2**63], dtype=np.uint64)).tolist() == [10, 20, -1, -1]
    assert t.output_domain == dp.vector_domain(dp.atom_domain(T=int))
    e = dp.t.make_is_equal(VF, SD, 1.0)
    assert e([1.0, float("nan"), 2.0]) == [True, False, False]
    assert dp.t.make_is_equal(VS, SD, "a")(["a", "b"]) == [True, False]
    assert dp.t.make_identity(dp.atom_domain(T=int), dp.absolute_distance(T=int)).map(3) == 3


def test_find_then_impute_then_index_round_trip() -> None:
    cats = ["x", "y"]
    chain = (
        (VS, SD)
        >> dp.t.then_find(cats)
        >> dp.t.then_impute_constant(len(cats))
        >> dp.t.then_index(cats, "other")
    )
    assert chain(["y", "q", "x"]) == ["y", "other", "x"]
    assert chain.map(4) == 4


def test_typed_errors() -> None:
    for edges in ([1, 0], [0, 0], [float("nan")], "abc"):
        with pytest.raises(InvalidParameter):
            dp.t.make_find_bin(VF, SD, edges)
    with pytest.raises(InvalidParameter):
        dp.t.make_find_bin(VI, SD, [0.5])
    with pytest.raises(NotImplementedForType):
        dp.t.make_find_bin(VS, SD, ["a"])
    with pytest.raises(InvalidParameter):
        dp.t.make_find(VS, SD, ["a", "a"])
    with pytest.raises(InvalidParameter):
        dp.t.make_find(VS, SD, [1])
    with pytest.raises(InvalidParameter):
        dp.t.make_is_equal(VS, SD, 1)
    with pytest.raises(NotImplementedForType):
        dp.t.make_index(VI, SD, ["a"], "b")
    with pytest.raises(InvalidParameter):
        dp.t.make_index(VU, SD, ["a", 1], "b")
    with pytest.raises(NotInDomain):
        dp.t.make_index(VU, SD, ["a"], "b")([-1])


def test_matches_opendp() -> None:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    osd = odp.symmetric_distance()
    ofl = odp.vector_domain(odp.atom_domain(T=float, nan=True))
    x = [-5.0, 0.0, float("nan"), 10.0, 9.99, 20.0]
    pairs = [
        (dp.t.make_find_bin(VF, SD, [0.0, 10.0]), odp.t.make_find_bin(ofl, osd, [0.0, 10.0]), x),
        (
            dp.t.make_index(VU, SD, ["a", "b"], "z"),
            odp.t.make_index(odp.vector_domain(odp.atom_domain(T="usize")), osd, ["a", "b"], "z"),
            [0, 1, 2, 9],
        ),
        (
            dp.t.make_is_equal(VS, SD, "a"),
            odp.t.make_is_equal(odp.vector_domain(odp.atom_domain(T=str)), osd, "a"),
            ["a", "b", ""],
        ),
    ]
    for ours, theirs, data in pairs:
        assert ours(data) == theirs(data)
        assert [ours.map(d) for d in range(15)] == [theirs.map(d) for d in range(15)]
        assert repr(ours.output_domain) == repr(theirs.output_domain)
    ours_f = dp.t.make_find(VS, SD, ["a", "b"])
    theirs_f = odp.t.make_find(odp.vector_domain(odp.atom_domain(T=str)), osd, ["a", "b"])
    assert [ours_f.map(d) for d in range(15)] == [theirs_f.map(d) for d in range(15)]
    assert repr(ours_f.output_domain) == repr(theirs_f.output_domain)


def test_row_by_row_maps_match_opendp_under_both_unordered_and_ordered_metrics() -> None:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    oV, oA = odp.vector_domain, odp.atom_domain
    for ours_m, theirs_m in (
        (dp.symmetric_distance(), odp.symmetric_distance()),
        (dp.insert_delete_distance(), odp.insert_delete_distance()),
    ):
        cases = [
            (
                dp.t.make_clamp(VI, ours_m, (0, 1)),
                odp.t.make_clamp(oV(oA(T=int)), theirs_m, (0, 1)),
            ),
            (
                dp.t.make_cast_default(VS, ours_m, TOA=int),
                odp.t.make_cast_default(oV(oA(T=str)), theirs_m, TOA=int),
            ),
            (dp.t.make_is_equal(VI, ours_m, 1), odp.t.make_is_equal(oV(oA(T=int)), theirs_m, 1)),
            (
                dp.t.make_find_bin(VI, ours_m, [1]),
                odp.t.make_find_bin(oV(oA(T=int)), theirs_m, [1]),
            ),
            (
                dp.t.make_impute_constant(VF, ours_m, 0.0),
                odp.t.make_impute_constant(oV(oA(T=float)), theirs_m, 0.0),
            ),
            (dp.t.make_drop_null(VF, ours_m), odp.t.make_drop_null(oV(oA(T=float)), theirs_m)),
            (dp.t.make_is_null(VF, ours_m), odp.t.make_is_null(oV(oA(T=float)), theirs_m)),
            (
                dp.t.make_index(VU, ours_m, ["a"], "b"),
                odp.t.make_index(oV(oA(T="usize")), theirs_m, ["a"], "b"),
            ),
        ]
        for ours, theirs in cases:
            assert [ours.map(d) for d in range(20)] == [theirs.map(d) for d in range(20)]
            assert repr(ours.output_metric) == repr(theirs.output_metric)
