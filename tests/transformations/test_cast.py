"""make_cast, make_cast_default, make_cast_inherent: OpenDP parity on parsing and rounding,
1-stability on random neighbours, typed errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendp_lite.prelude as dp
from opendp_lite.errors import NotImplementedForType, NotInDomain
from tests.transformations.test_rowwise import check_stable, neighbours

SD = dp.symmetric_distance()
STR = dp.vector_domain(dp.atom_domain(T=str))
numberish = st.text(alphabet="0123456789+-.eEinfatyINF _x", max_size=8)


def same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b and type(a) is type(b)


@pytest.fixture(scope="module")
def odp():  # type: ignore[no-untyped-def]
    mod = pytest.importorskip("opendp.prelude")
    mod.enable_features("contrib")
    return mod


@settings(max_examples=150, deadline=None)
@given(x=st.lists(numberish, max_size=10))
def test_string_parsing_matches_opendp(odp, x: list[str]) -> None:  # type: ignore[no-untyped-def]
    for TOA in (int, float, "i64", "u32", bool):
        ours = dp.t.make_cast_default(STR, SD, TOA=TOA)(x)
        theirs = odp.t.make_cast_default(
            odp.vector_domain(odp.atom_domain(T=str)), odp.symmetric_distance(), TOA=TOA
        )(x)
        assert all(same(a, b) for a, b in zip(ours, theirs, strict=True)), (TOA, x, ours, theirs)
    ours_f = dp.t.make_cast_inherent(STR, SD, TOA=float)(x)
    theirs_f = odp.t.make_cast_inherent(
        odp.vector_domain(odp.atom_domain(T=str)), odp.symmetric_distance(), TOA=float
    )(x)
    assert all(same(a, b) for a, b in zip(ours_f, theirs_f, strict=True))


@settings(max_examples=200, deadline=None)
@given(x=st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=10))
def test_float_to_int_truncation_matches_opendp(odp, x: list[float]) -> None:  # type: ignore[no-untyped-def]
    dom = dp.vector_domain(dp.atom_domain(T=float, nan=True))
    odom = odp.vector_domain(odp.atom_domain(T=float, nan=True))
    for TOA in (int, "i64", "u32"):
        ours = dp.t.make_cast_default(dom, SD, TOA=TOA)(x)
        theirs = odp.t.make_cast_default(odom, odp.symmetric_distance(), TOA=TOA)(x)
        assert ours == theirs, (TOA, x)


@settings(max_examples=100, deadline=None)
@given(x=st.lists(st.integers(-(2**63), 2**63 - 1), max_size=10))
def test_int_to_int_and_bool_matches_opendp(odp, x: list[int]) -> None:  # type: ignore[no-untyped-def]
    dom = dp.vector_domain(dp.atom_domain(T="i64"))
    odom = odp.vector_domain(odp.atom_domain(T="i64"))
    for TOA in ("i32", "u64", "u32", bool, float):
        ours = dp.t.make_cast_default(dom, SD, TOA=TOA)(x)
        theirs = odp.t.make_cast_default(odom, odp.symmetric_distance(), TOA=TOA)(x)
        assert ours == theirs, (TOA, x)


def test_maps_and_domains_match_opendp(odp) -> None:  # type: ignore[no-untyped-def]
    for make, omake in (
        (dp.t.make_cast, odp.t.make_cast),
        (dp.t.make_cast_default, odp.t.make_cast_default),
        (dp.t.make_cast_inherent, odp.t.make_cast_inherent),
    ):
        ours = make(STR, SD, TOA=float)
        theirs = omake(
            odp.vector_domain(odp.atom_domain(T=str)), odp.symmetric_distance(), TOA=float
        )
        assert [ours.map(d) for d in range(20)] == [theirs.map(d) for d in range(20)]
        assert repr(ours.output_domain) == repr(theirs.output_domain)


def test_cast_gives_none_for_failures() -> None:
    out = dp.t.make_cast(STR, SD, TOA=int)(["1", " 2", "3.0", "", "+4", "-0", "99999999999"])
    assert out == [1, None, None, None, 4, 0, None]
    assert dp.t.make_cast(STR, SD, TOA=int).output_domain == dp.vector_domain(
        dp.option_domain(dp.atom_domain(T=int))
    )
    f = dp.t.make_cast(dp.vector_domain(dp.atom_domain(T=float, nan=True)), SD, TOA="i8")
    assert f([127.9, 128.0, -128.5, -129.0, float("nan"), float("-inf")]) == [
        127,
        None,
        -128,
        None,
        None,
        None,
    ]


def test_to_string() -> None:
    t = dp.t.make_cast_default(dp.vector_domain(dp.atom_domain(T=float, nan=True)), SD, TOA=str)
    assert t([1.0, 1.5, 1e20, float("nan"), -float("inf"), 0.1]) == [
        "1",
        "1.5",
        "100000000000000000000",
        "NaN",
        "-inf",
        "0.1",
    ]
    b = dp.t.make_cast_default(dp.vector_domain(dp.atom_domain(T=bool)), SD, TOA=str)
    assert b([True, False]) == ["true", "false"]


@pytest.mark.parametrize(
    "metric",
    [
        dp.symmetric_distance(),
        dp.insert_delete_distance(),
        dp.change_one_distance(),
        dp.hamming_distance(),
    ],
    ids=repr,
)
@settings(max_examples=50, deadline=None)
@given(data=st.data())
def test_stable_on_random_neighbours(metric: object, data: st.DataObject) -> None:
    x, y = data.draw(neighbours(numberish, type(metric).__name__))
    for make in (dp.t.make_cast, dp.t.make_cast_default):
        check_stable(make(STR, metric, TOA=int), x, y)
    check_stable(dp.t.make_cast_inherent(STR, metric, TOA=float), x, y)


def test_typed_errors() -> None:
    with pytest.raises(NotImplementedForType):
        dp.t.make_cast_inherent(STR, SD, TOA=int)
    with pytest.raises(NotImplementedForType):
        dp.t.make_cast(STR, dp.absolute_distance(T=int), TOA=int)
    with pytest.raises(NotImplementedForType):
        dp.t.make_cast(dp.atom_domain(T=str), SD, TOA=int)
    with pytest.raises(NotImplementedForType):
        dp.t.make_cast(STR, SD, TOA=complex)
    t = dp.t.make_cast(STR, SD, TOA=int)
    with pytest.raises(NotInDomain):
        t("1")  # a scalar where a vector is expected
    with pytest.raises(NotInDomain):
        t([1, 2])  # ints where strings are expected


def test_input_is_not_mutated_and_output_is_numpy() -> None:
    arr = np.array([1.5, -2.5])
    out = dp.t.make_cast_default(dp.vector_domain(dp.atom_domain(T=float, nan=False)), SD, TOA=int)(
        arr
    )
    assert isinstance(out, np.ndarray) and out.dtype == np.int32
    assert arr.tolist() == [1.5, -2.5]


TRICKY = [
    "1e5",
    "inf",
    "-Infinity",
    "NaN",
    "nan",
    ".5",
    "5.",
    "+.5e-3",
    "1_0",
    " 1",
    "1 ",
    "e5",
    "0x10",
    "+",
    "-",
    ".",
    "1e400",
    "-0",
    "infinityx",
    "1.5E+2",
    "18446744073709551615",
    "-2147483648",
    "2147483648",
    "",
    "true",
    "false",
    "0",
    "1",
]


def test_tricky_strings_match_opendp(odp) -> None:  # type: ignore[no-untyped-def]
    odom = odp.vector_domain(odp.atom_domain(T=str))
    for TOA in (int, float, "i64", "u64", "f32", bool):
        ours = dp.t.make_cast_default(STR, SD, TOA=TOA)(TRICKY)
        theirs = odp.t.make_cast_default(odom, odp.symmetric_distance(), TOA=TOA)(TRICKY)
        assert all(same(a, b) for a, b in zip(ours, theirs, strict=True)), (TOA, ours, theirs)


@st.composite
def near_f32_midpoints(draw: st.DrawFn) -> str:
    """A decimal string within a hair of the midpoint between two adjacent f32 values."""
    from fractions import Fraction

    bits = draw(st.integers(0, 0x7F7FFFFE))
    lo = np.array([bits], dtype=np.uint32).view(np.float32)[0]
    hi = np.nextafter(lo, np.float32(np.inf))
    mid = (Fraction(float(lo)) + Fraction(float(hi))) / 2
    nudge = draw(st.sampled_from([-1, 0, 1])) * mid / 10**30
    v = mid + nudge
    digits = 40
    # a decimal with enough digits to land on the chosen side of the midpoint
    scaled = v * 10**digits
    return f"{scaled.numerator // scaled.denominator}e-{digits}"


@settings(max_examples=150, deadline=None)
@given(x=st.lists(near_f32_midpoints(), min_size=1, max_size=5))
def test_f32_parsing_has_no_double_rounding(odp, x: list[str]) -> None:  # type: ignore[no-untyped-def]
    ours = dp.t.make_cast_default(STR, SD, TOA="f32")(x)
    odom = odp.vector_domain(odp.atom_domain(T=str))
    theirs = odp.t.make_cast_default(odom, odp.symmetric_distance(), TOA="f32")(x)
    assert ours == theirs, x


@settings(max_examples=100, deadline=None)
@given(x=st.lists(st.floats(width=32, allow_nan=False), max_size=6))
def test_f32_to_string_matches_opendp(odp, x: list[float]) -> None:  # type: ignore[no-untyped-def]
    ours = dp.t.make_cast_default(
        dp.vector_domain(dp.atom_domain(T="f32", nan=False)), SD, TOA=str
    )(x)
    odom = odp.vector_domain(odp.atom_domain(T="f32", nan=False))
    theirs = odp.t.make_cast_default(odom, odp.symmetric_distance(), TOA=str)(x)
    assert ours == theirs


@settings(max_examples=100, deadline=None)
@given(x=st.lists(st.floats(allow_nan=False), max_size=6))
def test_f64_to_string_matches_opendp(odp, x: list[float]) -> None:  # type: ignore[no-untyped-def]
    ours = dp.t.make_cast_default(
        dp.vector_domain(dp.atom_domain(T=float, nan=False)), SD, TOA=str
    )(x)
    odom = odp.vector_domain(odp.atom_domain(T=float, nan=False))
    theirs = odp.t.make_cast_default(odom, odp.symmetric_distance(), TOA=str)(x)
    assert ours == theirs


@pytest.mark.parametrize("TOA", ["i8", "i32", "u64", "f32", "f64", "bool", "String"])
def test_string_casts_read_the_carrier_range_once_per_vector(
    TOA: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cast of n strings looks the carrier's range up a constant number of times
    (not once per element), with the same results as a cast of each string alone."""
    words = ["1", "-3", "+7", "128", "-129", "255", "2147483648", "1e3", "nan", "", " 1", "x"]
    x = [words[i % len(words)] for i in range(1000)]
    cast = dp.t.make_cast_default(STR, SD, TOA=TOA)
    one_by_one = [cast([v])[0] for v in x]
    calls = []
    real = np.iinfo

    def counted(t: object) -> object:
        calls.append(t)
        return real(t)  # type: ignore[call-overload]

    monkeypatch.setattr(np, "iinfo", counted)
    out = cast(x)
    assert len(calls) <= 2
    assert all(same(a, b) for a, b in zip(out, one_by_one, strict=True))


@pytest.mark.parametrize("x", [562949953421312.2, -562949953421312.2])
def test_f64_to_string_halfway_between_two_shortest_decimals_matches_opendp(odp, x: float) -> None:  # type: ignore[no-untyped-def]
    """x is exactly ...312.25: ".2" and ".3" both round-trip and are equally close; OpenDP
    (Rust's Display) writes the one of greater magnitude."""
    ours = dp.t.make_cast_default(
        dp.vector_domain(dp.atom_domain(T=float, nan=False)), SD, TOA=str
    )([x])
    odom = odp.vector_domain(odp.atom_domain(T=float, nan=False))
    assert ours == odp.t.make_cast_default(odom, odp.symmetric_distance(), TOA=str)([x])
