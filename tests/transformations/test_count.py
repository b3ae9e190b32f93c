"""Counts: values, saturation, categories never read from data, maps vs OpenDP, the law."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendp_lite.prelude as dp
from opendp_lite.errors import InvalidParameter, NotImplementedForType, NotInDomain

SYM = dp.symmetric_distance()
STR_SPACE = dp.vector_domain(dp.atom_domain(T=str)), SYM
INT_SPACE = dp.vector_domain(dp.atom_domain(T=int)), SYM


def test_count_values_types_and_saturation() -> None:
    t = STR_SPACE >> dp.t.then_count()
    assert t(["a", "b"]) == 2 and isinstance(t(["a"]), int)
    assert t.output_domain == dp.atom_domain(T="i32")
    assert t.output_metric == dp.absolute_distance(T="i32")
    t8 = dp.t.make_count(*INT_SPACE, TO="u8")
    assert t8(list(range(300))) == 255  # saturates, never wraps
    assert t8.map(3) == 3
    tf = dp.t.make_count(*INT_SPACE, TO=float)
    assert tf([1, 2, 3]) == 3.0 and isinstance(tf([1]), float)


def test_count_distinct() -> None:
    t = INT_SPACE >> dp.t.then_count_distinct()
    assert t([1, 1, 2, 5, 5]) == 3
    ts = STR_SPACE >> dp.t.then_count_distinct()
    assert ts(["x", "y", "x"]) == 2
    tf = dp.t.make_count_distinct(
        dp.vector_domain(dp.atom_domain(T=float, nan=True)), SYM, TO="i64"
    )
    assert tf([1.0, float("nan"), 1.0, float("nan")]) == 2  # NaNs count once


def test_count_by() -> None:
    t = STR_SPACE >> dp.t.then_count_by()
    assert t(["a", "b", "a"]) == {"a": 2, "b": 1}
    assert t.output_metric == dp.l1_distance(T="i32")
    assert t.map(4) == 4
    ti = INT_SPACE >> dp.t.then_count_by(TV="u8")
    assert ti([7] * 300 + [1]) == {1: 1, 7: 255}


def test_count_by_categories_fixed_categories() -> None:
    t = STR_SPACE >> dp.t.then_count_by_categories(["a", "b"])
    assert t(["a", "c", "a", "b", "z"]).tolist() == [2, 1, 2]
    assert t([]).tolist() == [0, 0, 0]
    assert t(["q", "r"]).tolist() == [0, 0, 2]  # unseen values never become categories
    assert t.output_domain == dp.vector_domain(dp.atom_domain(T="i32"), size=3)
    no_null = STR_SPACE >> dp.t.then_count_by_categories(["a", "b"], null_category=False)
    assert no_null(["a", "c"]).tolist() == [1, 0]
    l2 = STR_SPACE >> dp.t.then_count_by_categories(["a"], MO="L2Distance<int>")
    assert l2.output_metric == dp.l2_distance(T="i32") and l2.map(3) == 3
    nums = INT_SPACE >> dp.t.then_count_by_categories([3, 1, 2], TOA="i64")
    assert nums(np.array([1, 1, 2, 9, 3, 3, 3])).tolist() == [3, 2, 1, 1]


def test_count_bad_inputs() -> None:
    with pytest.raises(InvalidParameter):
        dp.t.make_count_by_categories(*STR_SPACE, categories=["a", "a"])
    with pytest.raises(InvalidParameter):
        dp.t.make_count_by_categories(*STR_SPACE, categories=[1])  # not a str
    with pytest.raises(NotImplementedForType):
        dp.t.make_count_by_categories(*STR_SPACE, categories=["a"], MO="LInfDistance<int>")
    with pytest.raises(NotImplementedForType):
        dp.t.make_count(dp.atom_domain(T=int), SYM)
    with pytest.raises(NotImplementedForType):
        dp.t.make_count(dp.vector_domain(dp.atom_domain(T=int)), dp.change_one_distance())
    with pytest.raises(NotImplementedForType):
        dp.t.make_count(*INT_SPACE, TO=str)
    t = STR_SPACE >> dp.t.then_count()
    with pytest.raises(NotInDomain):
        t("abc")
    with pytest.raises(NotInDomain):
        t([1, 2])


def test_counts_chain_into_an_l1_sensitivity_2_vector() -> None:
    """The seed's two counting queries (adults, readers) as one L1-sensitivity-2 vector."""
    ages = dp.vector_domain(dp.atom_domain(T=int)), SYM
    adults = ages >> dp.t.then_count_by_categories([1], null_category=False)
    records = [(20, True), (15, False), (40, True), (70, False)]
    is_adult = np.array([1 if a >= 18 else 0 for a, _ in records])
    is_reader = np.array([1 if r else 0 for _, r in records])
    readers = ages >> dp.t.then_count_by_categories([1], null_category=False)
    both = np.concatenate([adults(is_adult), readers(is_reader)])
    assert both.tolist() == [3, 2]
    # one person added or removed moves each count by at most 1: L1 map 1 + 1 = 2
    assert adults.map(1) + readers.map(1) == 2


@pytest.mark.parametrize(
    "make",
    ["make_count", "make_count_distinct", "make_count_by_categories", "make_count_by"],
)
def test_count_maps_equal_opendp(make: str) -> None:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    kwargs = {"categories": ["a", "b"]} if make == "make_count_by_categories" else {}
    ours = getattr(dp.t, make)(*STR_SPACE, **kwargs)
    theirs = getattr(odp.t, make)(
        odp.vector_domain(odp.atom_domain(T=str)), odp.symmetric_distance(), **kwargs
    )
    for d in range(5):
        t_d = theirs.map(d)
        assert ours.map(d) == (t_d[0] if isinstance(t_d, tuple) else t_d)
    data = ["a", "c", "a", "b", "z"]
    out = ours(data)
    expect = theirs(data)
    assert (out.tolist() if hasattr(out, "tolist") else out) == expect


def _l1(a: object, b: object) -> int:
    if isinstance(a, dict) and isinstance(b, dict):
        return sum(abs(a.get(k, 0) - b.get(k, 0)) for k in set(a) | set(b))
    return int(np.abs(np.asarray(a, dtype=np.int64) - np.asarray(b, dtype=np.int64)).sum())


@settings(max_examples=200, deadline=None)
@given(
    x=st.lists(st.integers(0, 6), max_size=30),
    removed=st.integers(0, 30),
    added=st.lists(st.integers(0, 6), max_size=6),
    which=st.sampled_from(["count", "distinct", "by", "cats", "cats_l2"]),
)
def test_count_stability_law(x: list[int], removed: int, added: list[int], which: str) -> None:
    removed = min(removed, len(x))
    x2 = x[removed:] + added
    d = removed + len(added)
    t = {
        "count": lambda: dp.t.make_count(*INT_SPACE),
        "distinct": lambda: dp.t.make_count_distinct(*INT_SPACE),
        "by": lambda: dp.t.make_count_by(*INT_SPACE),
        "cats": lambda: dp.t.make_count_by_categories(*INT_SPACE, categories=[0, 2, 4]),
        "cats_l2": lambda: dp.t.make_count_by_categories(
            *INT_SPACE, categories=[1, 2], MO="L2Distance<int>"
        ),
    }[which]()
    a, b = t(x), t(x2)
    if which == "cats_l2":
        dist = float(np.linalg.norm(np.asarray(a, float) - np.asarray(b, float)))
    elif which in ("count", "distinct"):
        dist = abs(a - b)
    else:
        dist = _l1(a, b)
    assert dist <= t.map(d)
    assert t.check(d, t.map(d)) and t.map(d) <= t.map(d + 1)
