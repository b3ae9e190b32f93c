"""Sums: exactness, overflow, saturation, maps against OpenDP 0.16, and the stability law."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendp_lite.prelude as dp
from opendp_lite._types import carrier_dtype
from opendp_lite.errors import InvalidParameter, NotImplementedForType, NotInDomain

SYM = dp.symmetric_distance()


def vec(bounds, size=None, T=None):
    return dp.vector_domain(dp.atom_domain(bounds=bounds, T=T), size=size)


# ----------------------------------------------------------------------------------------------
# integers: exact, checked, saturating


@pytest.mark.parametrize("T", ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"])
def test_int_sum_near_carrier_range_never_wraps(T: str) -> None:
    info = np.iinfo(carrier_dtype(T))
    hi = int(info.max)
    lo = int(info.min)
    t = dp.t.make_sum(vec((lo, hi), T=T), SYM)
    x = np.array([hi] * 5 + [lo] * 2, dtype=info.dtype)
    # numpy's own sum wraps for the 64-bit carriers; ours saturates the exact parts
    pos, neg = 5 * hi, 2 * lo
    expected = min(pos, hi) + max(neg, lo)
    assert t(x) == expected
    assert isinstance(t(x), int)


def test_int64_sum_exact_where_numpy_wraps() -> None:
    big = 2**62
    t = dp.t.make_sized_bounded_int_checked_sum(1, (0, big), T="i64")
    assert t([big]) == big
    x = np.array([big, big, big], dtype=np.int64)
    assert int(np.sum(x)) != 3 * big  # numpy wraps silently
    mono = dp.t.make_bounded_int_monotonic_sum((0, big), T="i64")
    assert mono(x) == 2**63 - 1  # saturates instead


def test_checked_sum_refuses_possible_overflow() -> None:
    with pytest.raises(InvalidParameter, match="overflow"):
        dp.t.make_sized_bounded_int_checked_sum(4, (0, 2**30))
    assert dp.t.make_sized_bounded_int_checked_sum(3, (0, 2**29)).map(2) == 2**29
    with pytest.raises(InvalidParameter, match="overflow"):
        dp.t.make_sized_bounded_int_checked_sum(2, (-(2**30) - 1, 0))


def test_make_sum_int_modes_match_opendp_semantics() -> None:
    # mixed signs, unsized: split sum saturates each part (OpenDP 0.16 returns -1 here)
    t = dp.t.make_sum(vec((-(2**30), 2**30)), SYM)
    assert t([2**30] * 4 + [-(2**30)] * 3) == -1
    assert t.map(1) == 2**30
    # one sign, unsized: monotonic saturation
    t = dp.t.make_sum(vec((0, 2**30)), SYM)
    assert t([2**30] * 4) == 2**31 - 1
    # sized and safe: exact checked sum
    t = dp.t.make_sum(vec((-5, 10), size=3), SYM)
    assert t([-5, 10, 10]) == 15
    assert [t.map(d) for d in (1, 2, 3, 4)] == [0, 15, 15, 30]


def test_monotonic_refuses_mixed_signs() -> None:
    with pytest.raises(InvalidParameter, match="one sign"):
        dp.t.make_bounded_int_monotonic_sum((-1, 1))


def test_split_sum_is_order_free_and_ordered_sum_uses_insert_delete() -> None:
    t = dp.t.make_bounded_int_ordered_sum((-3, 5))
    assert t.input_metric == dp.insert_delete_distance()
    assert t([5, -3, 1]) == t([1, 5, -3]) == 3
    assert dp.t.make_sized_bounded_int_ordered_sum(4, (-3, 5)).map(3) == 8


# ----------------------------------------------------------------------------------------------
# floats: values, construction errors


def test_float_sum_accuracy_within_grid_quantisation() -> None:
    rng = np.random.default_rng(7)
    x = rng.random(100_000)
    t = dp.t.make_sum(vec((0.0, 1.0)), SYM)
    exact = sum(Fraction(v) for v in x.tolist())
    # truncation to the 2^-45 grid loses at most 2^-45 per value, plus one final rounding
    assert abs(Fraction(t(x)) - exact) <= Fraction(len(x), 2**45) + Fraction(t(x)) / 2**52


def test_float_sum_f32_carrier() -> None:
    t = dp.t.make_sum(vec((0.0, 1.0), T="f32"), SYM)
    assert t.output_domain == dp.atom_domain(T="f32", nan=False)
    out = t(np.array([0.5, 0.25], dtype=np.float32))
    assert out == 0.75
    assert 1.0 < t.map(1) < 1.2  # relaxation 2·e_f32(2^20) ≈ 0.125


def test_float_sum_refuses_overflowing_bounds() -> None:
    with pytest.raises(InvalidParameter, match="overflow"):
        dp.t.make_bounded_float_checked_sum(2**20, (0.0, 1e303))
    with pytest.raises(InvalidParameter, match="overflow"):
        dp.t.make_sized_bounded_float_checked_sum(10**6, (-1e303, 0.0))
    # make_sum lowers its default size limit instead, and stays finite
    t = dp.t.make_sum(vec((0.0, 1e300)), SYM)
    assert np.isfinite(t.map(1))
    assert t([1e300] * 3) == pytest.approx(3e300)


def test_float_sum_saturates_beyond_size_limit() -> None:
    t = dp.t.make_bounded_float_checked_sum(4, (0.0, 1.0))
    assert t([1.0] * 10) == 4.0
    assert t([0.5] * 10) == 4.0
    assert t([0.5] * 3) == 1.5


# ----------------------------------------------------------------------------------------------
# the size limit of unsized float sums


def test_unsized_f64_sum_limit_is_2_to_40_rows_and_charged_in_the_map() -> None:
    # the limit is read off the public map: r = 2·e_f64(limit·M') = 2^-52·limit·M' exactly
    # (bounds (0, 10): M' = 10, the grid keeps 10 exactly); the limit is not 2^25
    t = dp.t.make_sum(vec((0.0, 10.0)), SYM)
    assert Fraction(t.map(1)) == 10 + Fraction(10 * 2**40, 2**52)  # 10.00244140625
    assert t.map(1) == 10.00244140625
    # the saturation point of the function's clamp: 2^40 records at the bound
    from opendp_lite.transformations import sum as sum_mod

    plan = sum_mod.FloatSumPlan("t", "f64", 0.0, 10.0, sum_mod._DEFAULT_LIMIT["f64"])
    assert plan.limit == 2**40
    assert plan.scaled(plan.c_int) == 10 * 2**40


def test_unsized_float_sum_limit_boundary(monkeypatch: pytest.MonkeyPatch) -> None:
    # the real limit logic (make_sum -> default_size_limit -> FloatSumPlan.total) at a limit
    # small enough to test below, at and above it; the same on Dask in
    # tests/backends/test_dask_sum_limit.py
    from opendp_lite.transformations import sum as sum_mod

    monkeypatch.setitem(sum_mod._DEFAULT_LIMIT, "f64", 1000)
    monkeypatch.setitem(sum_mod._DEFAULT_LIMIT, "f32", 1000)
    for T in ("f64", "f32"):
        with pytest.warns(sum_mod.SizeLimitWarning, match="saturates at ±1000"):
            t = dp.t.make_sum(vec((-2.0, 10.0), T=T), SYM)
        dt = carrier_dtype(T)
        assert t(np.full(999, 10.0, dtype=dt)) == 9990.0
        assert t(np.full(1000, 10.0, dtype=dt)) == 10000.0
        assert t(np.full(1001, 10.0, dtype=dt)) == 10000.0  # saturated, as the warning said
        assert t(np.full(1001, -2.0, dtype=dt)) == -2002.0  # |total| below limit·M' = 10000
        assert t(np.full(5001, -2.0, dtype=dt)) == -10000.0
        assert Fraction(t.map(1)) > 10 + Fraction(2 * 1000 * 10, 2**54)  # r charged for 1000


def test_unsized_float_sum_warns_only_below_realistic_limit() -> None:
    import warnings

    from opendp_lite.transformations.sum import SizeLimitWarning

    with warnings.catch_warnings():
        warnings.simplefilter("error", SizeLimitWarning)
        dp.t.make_sum(vec((0.0, 10.0)), SYM)  # f64: 2^40 rows, no warning
        dp.t.make_sum(vec((0.0, 10.0), size=10**9), SYM)  # sized: never saturates
        dp.t.make_sum(vec((0, 10)), SYM)  # integers: saturate only at the carrier's range
    # f32 cannot afford a 2^40-row limit (its rounding term would be 2^17·M'): it keeps 2^20
    # rows and says so when built, from the type and bounds only (never from the data)
    with pytest.warns(SizeLimitWarning, match=r"f32 sum saturates at ±1048576"):
        t = dp.t.make_sum(vec((0.0, 10.0), T="f32"), SYM)
    assert t.map(1) < 10 * 1.126  # 2·e_f32(2^20·10) ≈ 10/8
    # f64 bounds so large that the limit must be lowered below 2^40 warn as well
    with pytest.warns(SizeLimitWarning, match="f64 sum saturates"):
        dp.t.make_sum(vec((0.0, 1e300)), SYM)


def test_bad_inputs_raise_typed_errors() -> None:
    with pytest.raises(InvalidParameter):
        dp.t.make_sum(dp.vector_domain(dp.atom_domain(T=float, nan=False)), SYM)  # unbounded
    with pytest.raises(NotImplementedForType):
        dp.t.make_sum(dp.atom_domain(bounds=(0.0, 1.0)), SYM)  # not a vector
    with pytest.raises(NotImplementedForType):
        dp.t.make_sum(vec((0.0, 1.0)), dp.change_one_distance())
    with pytest.raises(InvalidParameter):
        dp.t.make_bounded_float_checked_sum(0, (0.0, 1.0))
    with pytest.raises(InvalidParameter):
        dp.t.make_bounded_float_checked_sum(10, (1.0, 0.0))  # reversed
    with pytest.raises(InvalidParameter):
        dp.t.make_bounded_float_checked_sum(10, (float("nan"), 1.0))
    with pytest.raises(InvalidParameter):
        dp.t.make_sized_bounded_int_checked_sum(-1, (0, 1))
    with pytest.raises(NotImplementedForType):
        dp.t.make_bounded_float_checked_sum(10, (0.0, 1.0), S="Kahan<f64>")
    t = dp.t.make_sum(vec((0.0, 1.0)), SYM)
    with pytest.raises(NotInDomain):
        t([0.5, 2.0])  # outside the bounds
    with pytest.raises(NotInDomain):
        t(0.5)  # a float where a vector is expected


def test_partial_chains_with_clamp() -> None:
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), SYM
    meas = space >> dp.t.then_clamp((0.0, 10.0)) >> dp.t.then_sum()
    assert meas([-1.0, 5.0, 12.0]) == 15.0
    assert meas.map(1) == dp.t.make_sum(vec((0.0, 10.0)), SYM).map(1)


# ----------------------------------------------------------------------------------------------
# maps against OpenDP 0.16


BOUNDS = [(0.0, 1.0), (-1.0, 1.0), (-3.0, 10.0), (-1e-3, 2.5e6), (0.0, 1e-300)]


@pytest.mark.parametrize("bounds", BOUNDS)
@pytest.mark.parametrize("size", [None, 1, 10, 1000, 2**20])
def test_float_sum_map_vs_opendp(bounds: tuple[float, float], size: int | None) -> None:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    ours = dp.t.make_sum(vec(bounds, size=size), SYM)
    theirs = odp.t.make_sum(
        odp.vector_domain(odp.atom_domain(bounds=bounds), size=size), odp.symmetric_distance()
    )
    lo, hi = (Fraction(b) for b in bounds)
    m = max(-lo, hi)
    for d in (1, 2, 3, 10):
        ideal = (d // 2) * (hi - lo) if size is not None else d * m
        mine, theirs_d = ours.map(d), theirs.map(d)
        if size is not None:
            # never above OpenDP (ours covers one rounding, theirs a whole float summation)
            assert mine <= theirs_d, (d, mine, theirs_d)
        else:
            # unsized: ours pays 2^-12·M' for a 2^40-row limit; OpenDP keeps 2^20 records
            # (and silently drops the rest), so its relaxation is smaller
            assert Fraction(mine) <= ideal + m * Fraction(1, 2**12) * (1 + Fraction(1, 2**40))
        # and close to the ideal d·M: the grid can only shrink the bounds, by < 2^-45·M
        assert Fraction(mine) >= ideal * (1 - Fraction(1, 2**44)), (d, mine, ideal)
        assert ours.check(d, mine)


@pytest.mark.parametrize("bounds", [(0, 10), (-5, 10), (-(2**20), 2**20)])
@pytest.mark.parametrize("size", [None, 10])
def test_int_sum_map_equals_opendp(bounds: tuple[int, int], size: int | None) -> None:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    ours = dp.t.make_sum(vec(bounds, size=size), SYM)
    theirs = odp.t.make_sum(
        odp.vector_domain(odp.atom_domain(bounds=bounds), size=size), odp.symmetric_distance()
    )
    assert [ours.map(d) for d in range(6)] == [theirs.map(d) for d in range(6)]


@pytest.mark.parametrize("n", [1, 2, 16, 1000, 2**20])
def test_explicit_float_sums_below_opendp(n: int) -> None:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    for name in ("make_bounded_float_checked_sum", "make_bounded_float_ordered_sum"):
        ours = getattr(dp.t, name)(n, (-2.0, 3.0))
        theirs = getattr(odp.t, name)(n, (-2.0, 3.0))
        for d in (1, 5):
            assert 3 * d <= ours.map(d) <= theirs.map(d)
    for name in ("make_sized_bounded_float_checked_sum", "make_sized_bounded_float_ordered_sum"):
        ours = getattr(dp.t, name)(n, (-2.0, 3.0))
        theirs = getattr(odp.t, name)(n, (-2.0, 3.0))
        for d in (2, 6):
            assert 5 * (d // 2) <= ours.map(d) <= theirs.map(d)


# ----------------------------------------------------------------------------------------------
# the stability law on random neighbours, in exact arithmetic


def _float_values(lo: float, hi: float) -> st.SearchStrategy[float]:
    # mix the bounds, tiny (sub-ulp) values and generic values: the adversarial mixture
    tiny = st.floats(-1e-12, 1e-12).map(lambda v: min(max(v, lo), hi))
    return st.one_of(st.sampled_from([lo, hi]), tiny, st.floats(lo, hi))


@settings(max_examples=150, deadline=None)
@given(
    data=st.data(),
    bounds=st.sampled_from([(0.0, 1.0), (-1.0, 1.0), (-7.5, 1e6), (-1e-3, 0.0)]),
)
def test_unsized_float_sum_law(data: st.DataObject, bounds: tuple[float, float]) -> None:
    lo, hi = bounds
    vals = _float_values(lo, hi)
    x = data.draw(st.lists(vals, max_size=30))
    removed = data.draw(st.integers(0, len(x)))
    added = data.draw(st.lists(vals, max_size=5))
    x2 = x[removed:] + added
    x2 = data.draw(st.permutations(x2))
    d = removed + len(added)
    limit = data.draw(st.sampled_from([None, 64, 2**20]))
    t = (
        dp.t.make_sum(vec(bounds), SYM)
        if limit is None
        else dp.t.make_bounded_float_checked_sum(limit, bounds)
    )
    assert abs(Fraction(t(x)) - Fraction(t(x2))) <= Fraction(t.map(d))
    assert t.check(d, t.map(d))
    assert t.map(d) <= t.map(d + 1)


@settings(max_examples=150, deadline=None)
@given(data=st.data(), bounds=st.sampled_from([(0.0, 1.0), (-2.0, 3.0), (-1e6, 1e-9)]))
def test_sized_float_sum_law(data: st.DataObject, bounds: tuple[float, float]) -> None:
    lo, hi = bounds
    vals = _float_values(lo, hi)
    x = data.draw(st.lists(vals, min_size=1, max_size=30))
    k = data.draw(st.integers(0, len(x)))
    idx = data.draw(st.permutations(range(len(x))))[:k]
    x2 = list(x)
    for i in idx:
        x2[i] = data.draw(vals)
    d = 2 * k
    t = dp.t.make_sum(vec(bounds, size=len(x)), SYM)
    assert abs(Fraction(t(x)) - Fraction(t(x2))) <= Fraction(t.map(d))
    assert t.map(d) <= t.map(d + 1)


@settings(max_examples=150, deadline=None)
@given(data=st.data(), T=st.sampled_from(["i8", "i32", "u8", "i64", "u64"]))
def test_int_sum_law(data: st.DataObject, T: str) -> None:
    info = np.iinfo(carrier_dtype(T))
    lo = data.draw(st.integers(int(info.min), int(info.max)))
    hi = data.draw(st.integers(lo, int(info.max)))
    vals = st.integers(lo, hi)
    x = data.draw(st.lists(vals, max_size=20))
    removed = data.draw(st.integers(0, len(x)))
    added = data.draw(st.lists(vals, max_size=4))
    x2 = x[removed:] + added
    d = removed + len(added)
    t = dp.t.make_sum(vec((lo, hi), T=T), SYM)
    a, b = t(np.array(x, dtype=info.dtype)), t(np.array(x2, dtype=info.dtype))
    assert info.min <= a <= info.max
    assert abs(a - b) <= t.map(d)
