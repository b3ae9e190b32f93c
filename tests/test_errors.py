"""Errors that say the fix: each typical mistake's message names the offending value (or
position), what was expected, and the call that fixes it."""

from __future__ import annotations

import pickle
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import (
    DomainMismatch,
    FeatureNotEnabled,
    InvalidParameter,
    MeasureMismatch,
    MetricMismatch,
    NotImplementedForType,
    NotInDomain,
    OpenDPLiteError,
    with_fix,
)

SYM = dp.symmetric_distance()


def _vec(T: Any, **kw: Any) -> Any:
    kw.setdefault("nan", False)  # the NaN-free numbers these mistakes are made on
    return dp.vector_domain(dp.atom_domain(T=T, **kw))


def _pd() -> Any:
    return pytest.importorskip("pandas")


# (mistake, the call, error type, value/position, expectation, fix) -- each a regex
MISTAKES: list[tuple[str, Callable[[], Any], type, str, str, str]] = [
    (
        "Series of the wrong dtype",
        lambda: dp.t.make_count(_vec(int), SYM)(_pd().Series(["a", "b"])),
        NotInDomain,
        r"position 0.*'a'",
        r"expected i32",
        r"Fix: convert the data .*atom_domain\(T=",
    ),
    (
        "a mean on an unsized domain",
        lambda: dp.t.make_mean(dp.vector_domain(dp.atom_domain(bounds=(0.0, 1.0))), SYM),
        InvalidParameter,
        r"make_mean",
        r"known dataset size",
        r"then_resize\(size=n",
    ),
    (
        "a sum without bounds",
        lambda: dp.t.make_sum(_vec(float), SYM),
        InvalidParameter,
        r"VectorDomain\(AtomDomain\(T=f64\)\)",
        r"needs bounded elements",
        r"make_clamp",
    ),
    (
        "a scalar mechanism under a dataset metric",
        lambda: dp.m.make_laplace(dp.atom_domain(T=float, nan=False), SYM, 1.0),
        NotImplementedForType,
        r"got SymmetricDistance\(\)",
        r"needs absolute_distance",
        r"Fix: .*then_count\(\), then_sum\(\)",
    ),
    (
        "a vector mechanism under a scalar metric",
        lambda: dp.m.make_laplace(_vec(float), dp.absolute_distance(T=float), 1.0),
        NotImplementedForType,
        r"got AbsoluteDistance\(f64\)",
        r"needs l1_distance",
        r"Fix: .*input_metric=l1_distance",
    ),
    (
        "a feature not enabled",
        lambda: dp.m.make_user_measurement(
            _vec(float), SYM, dp.max_divergence(), lambda x: 0, lambda d: d
        ),
        FeatureNotEnabled,
        r"honest-but-curious",
        r"requires the feature",
        r"enable_features\(\"honest-but-curious\"\)",  # as OpenDP spells it
    ),
    (
        "NaN in numpy data",
        lambda: dp.t.make_count(_vec(float), SYM)(np.array([0.1, np.nan])),
        NotInDomain,
        r"position 1: NaN",
        r"not a member of AtomDomain\(T=f64\)",
        r"nan=True.*then_impute_constant",
    ),
    (
        "NaN in a pandas column",
        lambda: dp.t.make_count(_vec(float), SYM)(_pd().Series([0.1, None], name="w")),
        NotInDomain,
        r"column 'w', position 1: a missing value \(NaN\)",
        r"expected no missing values",
        r"fillna\(v\).*then_impute_constant",
    ),
    (
        "a null in a Polars integer column",
        lambda: dp.t.make_count(_vec("i64"), SYM)(
            pytest.importorskip("polars").Series("n", [1, None])
        ),
        NotInDomain,
        r"column 'n', position 1: a missing value \(None\)",
        r"AtomDomain\(T=i64\)",
        r"fill_null\(v\).*option_domain",
    ),
    (
        "a value outside the bounds",
        lambda: dp.t.make_count(dp.vector_domain(dp.atom_domain(bounds=(0, 10))), SYM)([1, 20]),
        NotInDomain,
        r"position 1: 20 is",
        r"outside the bounds of AtomDomain\(bounds=\[0, 10\].*expected 0 <= x <= 10",
        r"Fix: clamp first: .*atom_domain\(T='i32'\) without bounds.*then_clamp\(\(0, 10\)\)",
    ),
    (
        "a float outside the bounds in a numpy array",
        lambda: dp.t.make_count(dp.vector_domain(dp.atom_domain(bounds=(0.0, 10.0))), SYM)(
            np.array([1.0, 2.0, -3.5, 11.0])
        ),
        NotInDomain,
        r"position 2: -3\.5 is",  # the first offending element, not the last
        r"expected 0\.0 <= x <= 10\.0",
        r"then_clamp\(\(0\.0, 10\.0\)\)",
    ),
    (
        "a pandas value outside the bounds",
        lambda: dp.t.make_count(dp.vector_domain(dp.atom_domain(bounds=(18, 90))), SYM)(
            _pd().Series([30, 41, 17, 95], dtype="int32")
        ),
        NotInDomain,
        r"position 2: 17 is",
        r"expected 18 <= x <= 90",
        r"then_clamp\(\(18, 90\)\)",
    ),
    (
        "an integer outside the range of i32",
        lambda: dp.t.make_count(_vec("i32"), SYM)(np.array([1, 2**40, -(2**40)], dtype=np.int64)),
        NotInDomain,
        r"position 1: 1099511627776 is",
        r"outside the range of i32: expected -2147483648 <= x <= 2147483647",
        r"Fix: declare a type that holds it, atom_domain\(T='i64'\)",
    ),
    (
        "an unsigned 64-bit integer outside the range of i64",
        lambda: dp.t.make_count(_vec("i64"), SYM)(np.array([0, 2**63 + 1], dtype=np.uint64)),
        NotInDomain,
        r"position 1: 9223372036854775809 is",
        r"outside the range of i64",
        r"atom_domain\(T='u64'\)",
    ),
    (
        "a negative integer for an unsigned type",
        lambda: dp.t.make_count(_vec("u32"), SYM)(np.array([3, -4], dtype=np.int64)),
        NotInDomain,
        r"position 1: -4 is",
        r"expected 0 <= x <= 4294967295",
        r"atom_domain\(T='i64'\)",
    ),
    (
        "a float that overflows f32",
        lambda: dp.t.make_count(_vec("f32"), SYM)(np.array([1.0, 2.0, 1e39])),
        NotInDomain,
        r"position 2: 1e\+39 overflows f32",
        r"expected \|x\| <= 3\.40282",
        r'atom_domain\(T="f64"\).*then_cast_default\(TOA="f32"\)',
    ),
    (
        "NaN in a bounded domain",
        lambda: dp.t.make_count(dp.vector_domain(dp.atom_domain(bounds=(0.0, 1.0))), SYM)(
            np.array([0.5, np.nan])
        ),
        NotInDomain,
        r"position 1: NaN",
        r"not a member of AtomDomain\(bounds=\[0\.0, 1\.0\]",
        r"then_drop_null\(\) or then_impute_constant\(v\), then then_clamp\(bounds\)",
    ),
    (
        "data of the wrong size",
        lambda: dp.t.make_count(dp.vector_domain(dp.atom_domain(T=int), size=3), SYM)([1, 2]),
        NotInDomain,
        r"got length 2",
        r"size 3",
        r"then_resize\(size=n, constant=v\)",
    ),
    (
        "a scalar where a vector is expected",
        lambda: dp.t.make_count(_vec(int), SYM)(5),
        NotInDomain,
        r"inferred type is int",
        r"expected Vec<i32>",
        r"pass a list, a 1-d numpy array",
    ),
    (
        "a float array for an integer domain",
        lambda: dp.t.make_count(_vec(int), SYM)(np.array([1.0, 2.5])),
        NotInDomain,
        r"float64",
        r"expected i32",
        r"then_cast_default\(TOA=",
    ),
    (
        "a bool in a float vector",
        lambda: dp.t.make_count(_vec(float), SYM)([1.0, True]),
        NotInDomain,
        r"position 1: True",
        r"AtomDomain\(T=f64\)",
        r"Fix: remove or convert that value",
    ),
    (
        "a null in a pandas integer column of a frame",
        lambda: dp.t.make_select_column("n", TOA="i64")(
            _pd().DataFrame({"n": _pd().Series([1, None], dtype="Int64")})
        ),
        NotInDomain,
        r"column 'n': position 1: .*got None",
        r"expected i64",
        r"Fix: a missing value: drop or fill it",
    ),
    (
        "a missing column",
        lambda: dp.t.make_select_column("x", TOA=float)({"a": [1.0]}),
        NotInDomain,
        r"no column 'x'",
        r"columns: \['a'\]",
        r"Fix: pass the name of one of the columns",
    ),
    (
        "a DataFrame where a vector is expected",
        lambda: dp.t.make_count(_vec(int), SYM)(_pd().DataFrame({"a": [1]})),
        NotInDomain,
        r"DataFrame with columns \['a'\]",
        r"expected a vector",
        r"df\['a'\].*make_select_column",
    ),
    (
        "a count on a whole frame",
        lambda: dp.t.make_count(dp.dataframe_domain(), SYM),
        NotImplementedForType,
        r"DataFrameDomain",
        r"needs a vector input_domain",
        r"\.select\(name\).*make_select_column",
    ),
    (
        "chaining an unsized vector into a sized aggregate",
        lambda: (
            dp.t.make_clamp(_vec(float), SYM, (0.0, 1.0))
            >> dp.t.make_sum(dp.vector_domain(dp.atom_domain(bounds=(0.0, 1.0)), size=10), SYM)
        ),
        DomainMismatch,
        r"output domain: VectorDomain\(AtomDomain\(bounds=\[0.0, 1.0\], T=f64\)\)",
        r"input domain:  VectorDomain\(.*size=10\)",
        r"then_resize\(size=10, constant=v\)",
    ),
    (
        "chaining integers into a float aggregate",
        lambda: (
            dp.t.make_clamp(_vec(int), SYM, (0, 1))
            >> dp.t.make_sum(dp.vector_domain(dp.atom_domain(bounds=(0.0, 1.0))), SYM)
        ),
        DomainMismatch,
        r"T=i32",
        r"T=f64",
        r"then_cast_default\(TOA='f64'\)",
    ),
    (
        "chaining unordered data into an ordered metric",
        lambda: (
            dp.t.make_clamp(_vec(float), SYM, (0.0, 1.0))
            >> dp.t.make_sum(
                dp.vector_domain(dp.atom_domain(bounds=(0.0, 1.0))), dp.insert_delete_distance()
            )
        ),
        MetricMismatch,
        r"output metric: SymmetricDistance\(\)",
        r"input metric:  InsertDeleteDistance\(\)",
        r"then_ordered_random\(\)",
    ),
    (
        "composing pure DP with zCDP",
        lambda: dp.c.make_composition(
            [
                dp.m.make_laplace(
                    dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), 1.0
                ),
                dp.m.make_gaussian(
                    dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), 1.0
                ),
            ]
        ),
        MeasureMismatch,
        r"MaxDivergence\b",
        r"ZeroConcentratedDivergence\b",
        r"make_pureDP_to_zCDP",
    ),
    (
        "a masked array",
        lambda: dp.t.make_count(_vec(float), SYM)(np.ma.masked_array([1.0], mask=[True])),
        NotInDomain,
        r"masked array",
        r"is not a vector",
        r"x\.compressed\(\), or x\.filled\(value\)",
    ),
]


@pytest.mark.parametrize(
    ("call", "error", "value", "expected", "fix"),
    [pytest.param(*m[1:], id=m[0]) for m in MISTAKES],
)
def test_a_mistake_names_the_value_the_expectation_and_the_fix(
    call: Callable[[], Any], error: type, value: str, expected: str, fix: str
) -> None:
    with pytest.raises(error) as info:
        call()
    message = str(info.value)
    assert isinstance(info.value, OpenDPLiteError)
    for part in (value, expected, fix):
        assert re.search(part, message, re.DOTALL), f"{part!r} not in {message!r}"


def test_there_are_about_twenty_mistakes() -> None:
    assert len(MISTAKES) >= 20


def test_a_message_that_gives_a_fix_is_kept() -> None:
    message = "NaN is not a member of X. Fix: do this"
    assert with_fix(message) == message


def test_errors_with_fixes_pickle_without_repeating_the_fix() -> None:
    error = NotInDomain("expected a vector of size 3, got length 2")
    again = pickle.loads(pickle.dumps(error))  # noqa: S301 - our own bytes
    assert str(again) == str(error) and str(error).count("Fix:") == 1
    mismatch = DomainMismatch(_vec(float), _vec(int))
    again_m = pickle.loads(pickle.dumps(mismatch))  # noqa: S301 - our own bytes
    assert str(again_m) == str(mismatch) and again_m.left == mismatch.left
