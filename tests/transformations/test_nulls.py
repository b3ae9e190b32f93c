"""make_is_null, make_drop_null, make_impute_constant, make_impute_uniform_float."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendp_lite.prelude as dp
from opendp_lite.errors import InvalidParameter, NotImplementedForType, NotInDomain
from opendp_lite.samplers.rng import scripted_randomness
from tests.conftest import ALPHA, scaled
from tests.stat._reference import assert_fits
from tests.transformations.test_rowwise import check_stable, neighbours

SD = dp.symmetric_distance()
FNAN = dp.vector_domain(dp.atom_domain(T=float, nan=True))
OPT = dp.vector_domain(dp.option_domain(dp.atom_domain(T=int)))
nan_floats = st.one_of(st.just(float("nan")), st.floats(-100, 100, allow_nan=False))
opt_ints = st.one_of(st.none(), st.integers(-5, 5))
ALL = [
    dp.symmetric_distance(),
    dp.insert_delete_distance(),
    dp.change_one_distance(),
    dp.hamming_distance(),
]


@pytest.mark.parametrize("metric", ALL, ids=repr)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_row_by_row_nulls_are_stable(metric: object, data: st.DataObject) -> None:
    name = type(metric).__name__
    x, y = data.draw(neighbours(nan_floats, name))
    check_stable(dp.t.make_is_null(FNAN, metric), x, y)
    check_stable(dp.t.make_impute_constant(FNAN, metric, 0.0), x, y)
    xo, yo = data.draw(neighbours(opt_ints, name))
    check_stable(dp.t.make_is_null(OPT, metric), xo, yo)
    check_stable(dp.t.make_impute_constant(OPT, metric, 7), xo, yo)


@pytest.mark.parametrize("metric", ALL[:2], ids=repr)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_drop_null_is_stable(metric: object, data: st.DataObject) -> None:
    name = type(metric).__name__
    x, y = data.draw(neighbours(nan_floats, name))
    check_stable(dp.t.make_drop_null(FNAN, metric), x, y)
    xo, yo = data.draw(neighbours(opt_ints, name))
    check_stable(dp.t.make_drop_null(OPT, metric), xo, yo)


def test_values_and_domains() -> None:
    x = [1.0, float("nan"), 3.0]
    assert dp.t.make_is_null(FNAN, SD)(x) == [False, True, False]
    drop = dp.t.make_drop_null(FNAN, SD)
    assert drop(x) == [1.0, 3.0]
    assert drop.output_domain == dp.vector_domain(dp.atom_domain(T=float, nan=False))
    imp = dp.t.make_impute_constant(
        dp.vector_domain(dp.atom_domain(T=float, nan=True), size=3), SD, -1.0
    )
    assert imp(x) == [1.0, -1.0, 3.0]
    assert imp.output_domain == dp.vector_domain(dp.atom_domain(T=float, nan=False), size=3)
    # numpy in, numpy out (of the carrier dtype); a list in gives a list
    o = dp.t.make_drop_null(OPT, SD)(np.array([None, 2, None, -1], dtype=object))
    assert o.dtype == np.int32 and o.tolist() == [2, -1]
    assert dp.t.make_drop_null(OPT, SD)([None, 2, None, -1]) == [2, -1]
    oi = dp.t.make_impute_constant(OPT, SD, 0)(np.array([None, 2], dtype=object))
    assert oi.dtype == np.int32 and oi.tolist() == [0, 2]
    assert dp.t.make_impute_constant(OPT, SD, 0)([None, 2]) == [0, 2]
    s = dp.vector_domain(dp.option_domain(dp.atom_domain(T=str)))
    assert dp.t.make_impute_constant(s, SD, "?")(["a", None]) == ["a", "?"]


def test_nan_inside_options_is_null_too() -> None:
    space = dp.vector_domain(dp.atom_domain(T=str)), SD
    cast = space >> dp.t.then_cast(TOA=float)
    x = ["1", "nan", "x", "9"]
    assert (cast >> dp.t.then_is_null())(x) == [False, True, True, False]
    imputed = cast >> dp.t.then_impute_constant(0.0) >> dp.t.then_clamp((0.0, 5.0))
    assert imputed(x) == [1.0, 0.0, 0.0, 5.0]
    dropped = cast >> dp.t.then_drop_null()
    assert dropped(x) == [1.0, 9.0]
    assert dropped.output_domain == dp.vector_domain(dp.atom_domain(T=float, nan=False))


def test_chain_cast_then_impute() -> None:
    space = dp.vector_domain(dp.atom_domain(T=str)), SD
    chain = space >> dp.t.then_cast(TOA=int) >> dp.t.then_impute_constant(0)
    assert chain(["3", "x", "5"]) == [3, 0, 5]
    chain_f = space >> dp.t.then_cast_inherent(TOA=float) >> dp.t.then_drop_null()
    assert chain_f(["1.5", "x"]) == [1.5]
    assert chain.map(3) == 3


def test_typed_errors() -> None:
    with pytest.raises(NotImplementedForType):
        dp.t.make_is_null(dp.vector_domain(dp.atom_domain(T=int)), SD)
    no_nan = dp.vector_domain(dp.atom_domain(T=float, nan=False))  # accepted, as by OpenDP
    assert dp.t.make_drop_null(no_nan, SD)([1.0, 2.0]) == [1.0, 2.0]
    assert dp.t.make_impute_constant(no_nan, SD, 0.0)([1.5]) == [1.5]
    with pytest.raises(NotImplementedForType):
        dp.t.make_drop_null(FNAN, dp.change_one_distance())  # size changes
    with pytest.raises(InvalidParameter):
        dp.t.make_impute_constant(FNAN, SD, float("nan"))
    with pytest.raises(InvalidParameter):
        dp.t.make_impute_constant(OPT, SD, None)
    with pytest.raises(InvalidParameter):
        dp.t.make_impute_constant(OPT, SD, "a")
    for bounds in ((1.0, 0.0), (0.0, 0.0), (0.0, float("inf")), (float("nan"), 1.0)):
        with pytest.raises(InvalidParameter):
            dp.t.make_impute_uniform_float(FNAN, SD, bounds)
    with pytest.raises(NotImplementedForType):
        dp.t.make_impute_uniform_float(OPT, SD, (0.0, 1.0))
    with pytest.raises(NotInDomain):
        dp.t.make_is_null(FNAN, SD)(1.0)


def test_impute_uniform_keeps_values_and_stays_in_bounds_at_extremes() -> None:
    t = dp.t.make_impute_uniform_float(FNAN, SD, (-1.7e308, 1.7e308))
    out = t([float("nan")] * 1000 + [5.0])
    assert np.all(np.isfinite(out)) and out[-1] == 5.0
    t32 = dp.t.make_impute_uniform_float(
        dp.vector_domain(dp.atom_domain(T="f32", nan=True)), SD, (0.1, 0.2)
    )
    o32 = t32(np.full(1000, np.nan, dtype=np.float32))
    assert o32.dtype == np.float32 and t32.output_domain.member(o32)
    assert float(o32.min()) >= float(np.float32(0.1)) and float(o32.max()) <= float(np.float32(0.2))


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_impute_uniform_is_stable_under_the_shared_draw_coupling(data: st.DataObject) -> None:
    # couple neighbours by replaying the same randomness: rows shared in order get equal draws
    x, y = data.draw(neighbours(nan_floats, "HammingDistance"))
    t = dp.t.make_impute_uniform_float(
        dp.vector_domain(dp.atom_domain(T=float, nan=True)), dp.hamming_distance(), (0.0, 1.0)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with scripted_randomness(seed=b"c"):
            fx = t(x)
        with scripted_randomness(seed=b"c"):
            fy = t(y)
    assert not np.isnan(fx).any() and not np.isnan(fy).any()
    # each row's output depends only on that row (and its draw, if NaN)
    for a, b, ox, oy in zip(x, y, fx, fy, strict=True):
        if not math.isnan(a):
            assert ox == a
        if not math.isnan(b):
            assert oy == b


@pytest.mark.slow
def test_impute_uniform_law_is_uniform_and_wrong_scales_are_rejected() -> None:
    from scipy import stats

    n, alpha = scaled(20_000), ALPHA
    t = dp.t.make_impute_uniform_float(FNAN, SD, (2.0, 5.0))
    draws = t(np.full(n, np.nan))
    u = stats.uniform(loc=2.0, scale=3.0)
    assert_fits(stats.kstest(draws, u.cdf).pvalue)
    for factor in (0.7, 1.3):
        wrong = 2.0 + (draws - 2.0) * factor  # uniform on [2, 2 + 3·factor]
        assert stats.kstest(wrong, u.cdf).pvalue < alpha


def test_matches_opendp() -> None:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    odom = odp.vector_domain(odp.atom_domain(T=float, nan=True))
    x = [1.0, float("nan"), -2.0, float("nan")]
    pairs = [
        (dp.t.make_is_null(FNAN, SD), odp.t.make_is_null(odom, odp.symmetric_distance())),
        (dp.t.make_drop_null(FNAN, SD), odp.t.make_drop_null(odom, odp.symmetric_distance())),
        (
            dp.t.make_impute_constant(FNAN, SD, 9.0),
            odp.t.make_impute_constant(odom, odp.symmetric_distance(), 9.0),
        ),
    ]
    for ours, theirs in pairs:
        assert ours(x) == theirs(x)
        assert [ours.map(d) for d in range(15)] == [theirs.map(d) for d in range(15)]
        assert repr(ours.output_domain) == repr(theirs.output_domain)
    ours_u = dp.t.make_impute_uniform_float(FNAN, SD, (0.0, 1.0))
    theirs_u = odp.t.make_impute_uniform_float(odom, odp.symmetric_distance(), (0.0, 1.0))
    assert [ours_u.map(d) for d in range(15)] == [theirs_u.map(d) for d in range(15)]
