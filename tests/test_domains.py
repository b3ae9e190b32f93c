"""Domains: the normalisation contract, vectorised membership, options in vectors, dataframes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendp_lite.prelude as dp
from opendp_lite.domains import DataFrameDomain, dataframe_domain
from opendp_lite.errors import InvalidParameter, NotImplementedForType, NotInDomain

V = dp.vector_domain


def test_reprs_match_opendp() -> None:
    odp = pytest.importorskip("opendp.prelude")
    cases = [
        (dp.atom_domain(T=int), odp.atom_domain(T=int)),
        (dp.atom_domain(bounds=(0.0, 1.0)), odp.atom_domain(bounds=(0.0, 1.0), nan=False)),
        (dp.atom_domain(T="f32", nan=True), odp.atom_domain(T="f32", nan=True)),
        (V(dp.atom_domain(T=str), size=3), odp.vector_domain(odp.atom_domain(T=str), size=3)),
        (dp.option_domain(dp.atom_domain(T=int)), odp.option_domain(odp.atom_domain(T=int))),
        (
            dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int)),
            odp.map_domain(odp.atom_domain(T=str), odp.atom_domain(T=int)),
        ),
    ]
    for ours, theirs in cases:
        assert repr(ours) == repr(theirs)
    assert repr(dataframe_domain(str)) == 'DataFrameDomain("String")'


@settings(max_examples=200, deadline=None)
@given(
    x=st.lists(st.integers(-(2**40), 2**40), max_size=20),
    lo=st.integers(-(2**31), 0),
    hi=st.integers(0, 2**31 - 1),
)
def test_vectorised_membership_equals_elementwise(x: list[int], lo: int, hi: int) -> None:
    elem = dp.atom_domain(bounds=(lo, hi), T=int)
    expected = all(elem.member(v) for v in x)
    assert V(elem).member(x) == expected
    assert V(elem).member(np.array(x, dtype=np.int64)) == expected


@settings(max_examples=200, deadline=None)
@given(x=st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=20), nan=st.booleans())
def test_float_vector_membership_equals_elementwise(x: list[float], nan: bool) -> None:
    elem = dp.atom_domain(T=float, nan=nan)
    assert V(elem).member(x) == all(elem.member(v) for v in x)
    e32 = dp.atom_domain(T="f32", nan=nan)
    assert V(e32).member(x) == all(e32.member(v) for v in x)


def test_vector_normalisation_contract() -> None:
    arr = np.array([1.0, 2.0])
    out = V(dp.atom_domain(T=float, nan=False))._normalize(arr)
    assert isinstance(out, np.ndarray) and out.dtype == np.float64 and not out.flags.writeable
    assert arr.flags.writeable  # the caller's array is untouched
    ints = V(dp.atom_domain(T="i64"))._normalize([1, 2])
    assert ints.dtype == np.int64
    strs = V(dp.atom_domain(T=str))._normalize(np.array(["a", "b"]))
    assert strs.dtype == object and strs.tolist() == ["a", "b"]
    assert V(dp.atom_domain(T=float, nan=False)).member(np.array([1, 2], dtype=object))


@pytest.mark.parametrize(
    "bad",
    [
        3,
        "abc",
        [[1, 2]],
        [[]],
        np.zeros((2, 2)),
        [1, True],
        [1.5],
        [1, None],
        ["1"],
        {1: 2},
        [2**31],
    ],
    ids=repr,
)
def test_int_vector_rejects(bad: object) -> None:
    d = V(dp.atom_domain(T=int))
    assert not d.member(bad)
    with pytest.raises(NotInDomain):
        d._normalize(bad)


def test_sizes_and_bool_and_f32() -> None:
    assert not V(dp.atom_domain(T=int), size=2).member([1])
    assert V(dp.atom_domain(T=bool)).member([True, False])
    assert not V(dp.atom_domain(T=bool)).member([1, 0])
    assert not V(dp.atom_domain(T="f32", nan=False)).member([1e39])
    assert not V(dp.atom_domain(T=str)).member(["a", 1])
    with pytest.raises(InvalidParameter):
        V(dp.atom_domain(T=int), size=-1)
    with pytest.raises(InvalidParameter):
        V(dp.atom_domain(T=int), size=True)  # type: ignore[arg-type]


@settings(max_examples=150, deadline=None)
@given(x=st.lists(st.one_of(st.none(), st.integers(-(2**33), 2**33)), max_size=15))
def test_option_vectors(x: list[int | None]) -> None:
    d = V(dp.option_domain(dp.atom_domain(T=int)))
    ok = all(v is None or -(2**31) <= v < 2**31 for v in x)
    assert d.member(x) == ok
    if ok:
        out = d._normalize(x)
        assert out.dtype == object and out.tolist() == x
        assert all(v is None or type(v) is int for v in out)


def test_option_vectors_of_floats_and_strings() -> None:
    f = V(dp.option_domain(dp.atom_domain(T=float, nan=False)))
    assert f._normalize([1, None, 2.5]).tolist() == [1.0, None, 2.5]
    assert not f.member([float("nan"), None])  # NaN is not None, and this atom excludes NaN
    s = V(dp.option_domain(dp.atom_domain(T=str)))
    assert s._normalize(np.array(["a", None], dtype=object)).tolist() == ["a", None]
    assert not s.member(["a", 1])
    assert V(dp.option_domain(dp.atom_domain(T=int))).member([])


def test_atom_domain_bad_parameters() -> None:
    for bounds in ((1, 0), (float("nan"), 1.0), (0.0, float("inf")), (0, 2**40)):
        with pytest.raises(InvalidParameter):
            dp.atom_domain(bounds=bounds, T=int if isinstance(bounds[0], int) else float)
    with pytest.raises(InvalidParameter):
        dp.atom_domain(T=int, nan=True)
    with pytest.raises(NotImplementedForType):
        dp.atom_domain(T=complex)


def test_dataframe_domain() -> None:
    d = dataframe_domain(str)
    assert isinstance(d, DataFrameDomain)
    df = d._normalize({"a": [1, 2], "b": np.array(["x", "y"]), "c": ("p", "q")})
    assert set(df) == {"a", "b", "c"}
    assert all(isinstance(v, np.ndarray) and not v.flags.writeable for v in df.values())
    assert df["b"].dtype == object
    for bad in ({"a": [1], "b": [1, 2]}, {1: [1]}, [1, 2], {"a": 3}, {"a": [[1], [2]]}):
        assert not d.member(bad)
    assert d.member({})
    assert dataframe_domain(int).member({0: [1.5]})


def test_map_and_user_domains() -> None:
    m = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int))
    assert m.member({"a": 1}) and not m.member({"a": 1.5}) and not m.member([("a", 1)])
    evens = dp.user_domain("Evens", lambda x: isinstance(x, int) and x % 2 == 0)
    assert evens == dp.user_domain("Evens", lambda x: False)  # equal by identifier
    assert evens.member(2) and not evens.member(3)


def test_large_vector_membership_is_vectorised() -> None:
    import time

    x = np.random.default_rng(0).random(2_000_000)  # test data only; never for sampling
    d = V(dp.atom_domain(bounds=(0.0, 1.0)))
    t0 = time.perf_counter()
    assert d.member(x)
    assert time.perf_counter() - t0 < 2.0  # a Python loop over 2e6 floats takes far longer
    assert math.isfinite(float(x.sum()))


@pytest.mark.parametrize(
    "dom",
    [
        V(dp.atom_domain(T=float, nan=False)),
        V(dp.atom_domain(T=int)),
        V(dp.atom_domain(T=str)),
        V(dp.option_domain(dp.atom_domain(T=float, nan=False))),
    ],
    ids=repr,
)
@pytest.mark.parametrize("mask", [[False, True], [False, False]])
def test_masked_vector_is_refused(dom: dp.VectorDomain[object], mask: list[bool]) -> None:
    # the data under a mask is arbitrary: a masked array is refused whatever is masked
    data = {"f64": [1.0, 2.0], "i32": [1, 2], "String": ["a", "b"]}.get(
        dom.element_domain.carrier_type, [1.0, 2.0]
    )
    x = np.ma.masked_array(data, mask=mask)
    assert not dom.member(x)
    with pytest.raises(NotInDomain, match="masked"):
        dom._normalize(x)
    assert dom.member(x.filled(data[0]))


def test_masked_dataframe_column_is_refused() -> None:
    frame = {"w": np.ma.masked_array([1.0, 2.0], mask=[False, True]), "n": ["a", "b"]}
    assert not dataframe_domain().member(frame)
    with pytest.raises(NotInDomain, match="column 'w' is a masked array"):
        dataframe_domain()._normalize(frame)


def test_bad_cell_error_names_its_position() -> None:
    for dom, x in [
        (V(dp.atom_domain(T=float, nan=False)), [0.5, None]),
        (V(dp.atom_domain(T=float, nan=False)), [0.5, "1.0"]),
        (V(dp.atom_domain(T=float, nan=False)), [0.5, True]),
        (V(dp.atom_domain(T=int)), [1, [2]]),
        (V(dp.atom_domain(T="bool")), [True, 1]),
    ]:
        with pytest.raises(NotInDomain, match="position 1"):
            dom._normalize(x)


@pytest.mark.parametrize(
    ("atom", "x"),
    [
        (dp.atom_domain(T="f64"), np.array([1.0, -2.5, 0.0])),
        (dp.atom_domain(T="f64"), np.array([1.0, np.inf])),
        (dp.atom_domain(T="f64", nan=True), np.array([1.0, np.nan])),
        (dp.atom_domain(T="f32"), np.array([1.0, 3e38], dtype=np.float32)),
        (dp.atom_domain(T="i32"), np.array([1, -(2**31)], dtype=np.int32)),
        (dp.atom_domain(T="u8"), np.array([0, 255], dtype=np.uint8)),
        (dp.atom_domain(T="bool"), np.array([True, False])),
        (dp.atom_domain(T="f64"), np.zeros(0)),
    ],
)
def test_plain_carrier_array_fast_path_is_the_general_path(atom, x) -> None:
    """A plain 1-d array already of the carrier dtype skips the dispatch; it gives
    the same read-only values as the general path (which a list of the same values takes)."""
    from opendp_lite.domains import _coerce_vector, _plain_vector

    fast = V(atom)._normalize(x)
    assert _plain_vector(atom, x) is not None
    general = _coerce_vector(atom, x.tolist())
    assert fast.dtype == general.dtype and not fast.flags.writeable
    np.testing.assert_array_equal(fast, general)
    assert x.flags.writeable  # the caller's array is untouched (a view is read-only)


@pytest.mark.parametrize(
    ("atom", "x", "match"),
    [
        (dp.atom_domain(T="f64", nan=False), np.array([1.0, np.nan]), "NaN"),
        (dp.atom_domain(T="f32", nan=False), np.array([np.nan], dtype=np.float32), "NaN"),
        (dp.atom_domain(bounds=(0.0, 1.0)), np.array([0.5, 2.0]), "bounds"),
        (dp.atom_domain(T="i8"), np.array([1, 300], dtype=np.int64), "range"),
        (dp.atom_domain(T="f32"), np.array([1e39]), "overflows f32"),
        (dp.atom_domain(T="i32"), np.array([True, False]), None),
    ],
)
def test_plain_arrays_outside_the_domain_are_still_refused(atom, x, match) -> None:
    with pytest.raises(NotInDomain, match=match):
        V(atom)._normalize(x)
    with pytest.raises(NotInDomain, match="size"):
        V(dp.atom_domain(T="f64"), size=3)._normalize(np.zeros(2))


# --- calendar carriers (OpenDP's NaiveDate and NaiveTime) ------------------------------------


def test_naive_date_and_time_carriers_hold_only_their_own_values() -> None:
    import datetime as dt

    from opendp_lite._types import carrier_name

    date_dom = dp.atom_domain(T="NaiveDate")
    time_dom = dp.atom_domain(T="NaiveTime")
    assert carrier_name(dt.date) == "NaiveDate" and carrier_name(dt.time) == "NaiveTime"
    assert dp.atom_domain(T=dt.date) == date_dom and repr(date_dom) == "AtomDomain(T=NaiveDate)"
    assert date_dom.member(dt.date(2000, 1, 1))
    assert not date_dom.member(dt.datetime(2000, 1, 1))  # a datetime is not a NaiveDate
    assert not date_dom.member("2000-01-01")
    assert time_dom.member(dt.time(7, 8, 9))
    assert not time_dom.member(dt.time(7, 8, 9, tzinfo=dt.timezone.utc))  # not naive
    assert not time_dom.member(dt.date(2000, 1, 1))
    assert dp.option_domain(date_dom).member(None)
    assert dp.deserialize(dp.serialize(time_dom)) == time_dom


def test_naive_date_bounds_are_refused_naming_the_fix() -> None:
    import datetime as dt

    with pytest.raises(InvalidParameter, match=r"dt\.year"):
        dp.atom_domain(bounds=(dt.date(2000, 1, 1), dt.date(2001, 1, 1)), T="NaiveDate")


def test_a_vector_of_dates_is_checked_cell_by_cell_and_counts_but_never_casts() -> None:
    import datetime as dt

    from opendp_lite.errors import NotImplementedForType as NotImpl

    dates = dp.vector_domain(dp.atom_domain(T="NaiveDate"))
    assert dates.member([dt.date(2000, 1, 1), dt.date(2001, 1, 1)])
    assert not dates.member([dt.date(2000, 1, 1), dt.datetime(2000, 1, 1)])
    count = dp.t.make_count(dates, dp.symmetric_distance())
    assert count([dt.date(2000, 1, 1)] * 3) == 3
    for cast in (dp.t.make_cast, dp.t.make_cast_default):
        with pytest.raises(NotImpl, match="does not cast NaiveDate"):
            cast(dates, dp.symmetric_distance(), TOA="f64")
