"""Counts: values, saturation, categories never read from data, maps vs OpenDP, the law."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendp_lite.prelude as dp
from opendp_lite._types import carrier_dtype
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
    assert t.output_metric == dp.l01inf_distance(dp.absolute_distance(T="i32"))
    assert t.map(4) == (4, 4, 4)
    ti = INT_SPACE >> dp.t.then_count_by(TV="u8")
    assert ti([7] * 300 + [1]) == {1: 1, 7: 255}


def test_count_by_categories_fixed_categories() -> None:
    t = STR_SPACE >> dp.t.then_count_by_categories(["a", "b"])
    assert t(["a", "c", "a", "b", "z"]) == [2, 1, 2]
    assert t([]) == [0, 0, 0]
    assert t(["q", "r"]) == [0, 0, 2]  # unseen values never become categories
    assert t.output_domain == dp.vector_domain(dp.atom_domain(T="i32"), size=3)
    no_null = STR_SPACE >> dp.t.then_count_by_categories(["a", "b"], null_category=False)
    assert no_null(["a", "c"]) == [1, 0]
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
        assert ours.map(d) == theirs.map(d)  # make_count_by: the triple (d, d, d) in both
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
    elif which == "by":  # (l0, l1, l∞): each part bounded by its own
        diffs = [abs(a.get(k, 0) - b.get(k, 0)) for k in set(a) | set(b)]
        l0, l1, linf = t.map(d)
        assert sum(v != 0 for v in diffs) <= l0 and max(diffs, default=0) <= linf
        assert _l1(a, b) <= l1
        assert t.check(d, t.map(d))
        return
    else:
        dist = _l1(a, b)
    assert dist <= t.map(d)
    assert t.check(d, t.map(d)) and t.map(d) <= t.map(d + 1)


# ----------------------------------------------------------------------------------------------
# Linear-time counting on numpy: the same counts as a reference, without sorting

_CARRIERS = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64", "bool", "String"]


def _reference_categories(data: list[Any], cats: list[Any], null: bool) -> list[int]:
    """The definition: the records equal (``==``) to each category, then all the others."""
    counts = [sum(1 for v in data if v == c) for c in cats]
    return [*counts, len(data) - sum(counts)] if null else counts


def _reference_by(data: list[Any]) -> dict[Any, int]:
    out: dict[Any, int] = {}
    for v in data:
        out[v] = out.get(v, 0) + 1
    return out


def _random_case(rng: np.random.Generator, T: str) -> tuple[Any, list[Any], list[Any]]:
    """A random vector of carrier ``T`` and random distinct categories of that carrier.

    The values and categories mix a small cluster (so that categories are hit), the extremes
    of the carrier (so that shifts and caps meet their limits) and, for floats, NaN, ±0 and ±∞.
    """
    n = int(rng.choice([0, 1, 2, 7, 100, 1000]))
    if T == "String":
        pool: list[Any] = ["", "a", "b", "ab", "é", "a\x00", "10", "B"]
        data = [pool[i] for i in rng.integers(0, len(pool), n)]
        cats = list(dict.fromkeys(pool[i] for i in rng.integers(0, len(pool), 5)))
        return dp.vector_domain(dp.atom_domain(T=str)), data, cats
    if T == "bool":
        data = [bool(v) for v in rng.integers(0, 2, n)]
        cats = [[True], [False], [False, True], [True, False], []][int(rng.integers(0, 5))]
        return dp.vector_domain(dp.atom_domain(T=bool)), data, list(cats)
    dtype = np.dtype(carrier_dtype(T))
    if T.startswith("f"):
        specials = [np.nan, 0.0, -0.0, np.inf, -np.inf, float(np.finfo(dtype).max)]
        base = rng.integers(-5, 6, n).astype(dtype) / dtype.type(2)
        data_arr = np.where(rng.random(n) < 0.1, rng.choice(specials, n), base).astype(dtype)
        n_cats = int(rng.choice([0, 1, 3, 40]))  # 40 > 32: the sorted-search path
        cand = np.concatenate([np.arange(-3, 3.5, 0.5), specials[1:], [0.25, 1e30]])
        cand = cand.astype(dtype)
        picked = rng.choice(cand, min(n_cats, len(cand)), replace=False).tolist()
        cats = list(dict.fromkeys(0.0 if v == 0 else v for v in picked))  # -0.0 == 0.0
        if rng.random() < 0.3:
            cats.append(float("nan"))
        dom = dp.vector_domain(dp.atom_domain(T=T, nan=True))
        return dom, data_arr.tolist(), cats
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    centre = int(rng.choice([0, lo, hi, lo + 3, hi - 3, max(lo, -(2**40))]))
    width = int(rng.choice([3, 100, 1 << 17]))  # 1 << 17 > 2^16: not the bincount path
    clusters = rng.integers(-width, width + 1, n)
    vals = [min(max(centre + int(d), lo), hi) for d in clusters]
    extremes = [lo, hi, lo + 1, hi - 1, 0]
    data = [extremes[int(rng.integers(0, 5))] if rng.random() < 0.1 else v for v in vals]
    n_cats = int(rng.choice([0, 1, 4, 40]))
    cats_raw = [min(max(centre + int(d), lo), hi) for d in rng.integers(-width, width + 1, n_cats)]
    if rng.random() < 0.5:
        cats_raw += [lo, hi]
    cats = list(dict.fromkeys(cats_raw))
    return dp.vector_domain(dp.atom_domain(T=T, nan=False)), data, cats


@pytest.mark.parametrize("T", _CARRIERS)
@pytest.mark.parametrize("step", [1 << 17, 5])  # 5: every vector is counted in many pieces
def test_count_by_categories_matches_reference(
    T: str, step: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import opendp_lite.transformations.count as count_mod

    monkeypatch.setattr(count_mod, "_STEP", step, raising=False)
    rng = np.random.default_rng([2026, _CARRIERS.index(T), step])
    for _ in range(60):
        dom, data, cats = _random_case(rng, T)
        null = bool(rng.random() < 0.7)
        t = dp.t.make_count_by_categories(dom, SYM, cats, null_category=null, TOA="i64")
        arr = np.asarray(data, dtype=carrier_dtype(T)) if data else data
        # (a list of u64 values above and below 2^63 reads as float64: numpy's inference)
        for x in (arr,) if T == "u64" else (data, arr):
            out = t(x)  # a list for a list, numpy for numpy
            assert isinstance(out, list) == isinstance(x, list), (T, x)
            got = out if isinstance(out, list) else out.tolist()
            assert got == _reference_categories(data, cats, null), (T, data, cats)


@pytest.mark.parametrize("T", _CARRIERS)
def test_count_by_and_distinct_match_reference(T: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import opendp_lite.transformations.count as count_mod

    monkeypatch.setattr(count_mod, "_STEP", 7, raising=False)
    rng = np.random.default_rng([2027, _CARRIERS.index(T)])
    for _ in range(60):
        dom, data, _ = _random_case(rng, T)
        x = np.asarray(data, dtype=carrier_dtype(T)) if T == "u64" else data
        by = dp.t.make_count_by(dom, SYM, TV="i64")(x)
        ref = _reference_by(data)
        if T.startswith("f"):  # NaN != NaN: the reference keeps each NaN apart, numpy one
            nans = sum(1 for v in data if v != v)
            ref = {k: c for k, c in ref.items() if k == k}
            got_nan = {k: c for k, c in by.items() if k != k}
            assert list(got_nan.values()) == ([nans] if nans else [])
            by = {k: c for k, c in by.items() if k == k}
        assert by == ref
        if T not in ("String",):  # numeric keys come sorted, as numpy.unique gives them
            assert list(by) == sorted(by)
        assert all(type(k) is type(next(iter(ref))) for k in by) if ref else True
        distinct = dp.t.make_count_distinct(dom, SYM, TO="i64")(x)
        assert distinct == len(ref) + (1 if T.startswith("f") and any(v != v for v in data) else 0)


def test_counting_never_sorts_integer_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """Histograms of integers are counted in linear time: numpy's sort is never called."""
    x = np.random.default_rng(1).integers(-50, 50, 10_000)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("sorted the data")

    for name in ("unique", "sort", "argsort"):
        monkeypatch.setattr(np, name, refuse)
    space = dp.vector_domain(dp.atom_domain(T="i64")), SYM
    cats = (space >> dp.t.then_count_by_categories([-3, 0, 7]))(x)
    assert cats.tolist() == [int((x == c).sum()) for c in (-3, 0, 7)] + [
        len(x) - int(np.isin(x, [-3, 0, 7]).sum())
    ]
    assert (space >> dp.t.then_count_by())(x) == _reference_by(x.tolist())
    assert (space >> dp.t.then_count_distinct())(x) == len(set(x.tolist()))


def test_count_by_categories_saturates_in_the_output_type() -> None:
    x = np.array([1] * 300 + [2] * 3 + [9], dtype=np.int64)
    space = dp.vector_domain(dp.atom_domain(T="i64")), SYM
    for TOA, expect in (("u8", [255, 3, 1]), ("i8", [127, 3, 1]), ("f32", [300.0, 3.0, 1.0])):
        out = (space >> dp.t.then_count_by_categories([1, 2], TOA=TOA))(x)
        assert out.tolist() == expect and out.dtype == np.dtype(carrier_dtype(TOA)), TOA


@pytest.mark.parametrize("how", ["count_by_categories", "count", "count_by"])
def test_float32_counts_saturate_where_f32_stops_being_exact(how: str) -> None:
    """Neighbours with 2^24 + 1 and 2^24 + 2 records stay within map(1) = 1 in f32.

    Cast to f32, 2^24 + 1 rounds down to 2^24 while 2^24 + 2 is exact: a distance of 2 for
    neighbours at distance 1. Float counts saturate at 2^24 (f32)
    and 2^53 (f64), as OpenDP's counts saturate at the carrier's largest consecutive integer.
    """
    space = dp.vector_domain(dp.atom_domain(T="i64")), dp.symmetric_distance()
    if how == "count_by_categories":
        t = dp.t.make_count_by_categories(*space, categories=[1], TOA="f32")
    elif how == "count":
        t = dp.t.make_count(*space, TO="f32")
    else:
        t = dp.t.make_count_by(*space, TV="f32")
    x = np.ones(2**24 + 1, dtype=np.int64)
    x_prime = np.ones(2**24 + 2, dtype=np.int64)

    def first(out: object) -> float:
        if isinstance(out, dict):
            return float(out[1])
        return float(np.asarray(out, dtype=np.float64).ravel()[0])

    bound = t.map(1)
    linf = bound[2] if isinstance(bound, tuple) else bound  # count_by: (l0, l1, l∞)
    assert abs(first(t(x_prime)) - first(t(x))) <= linf
    assert first(t(x)) == 2**24
