"""opendp_lite._order: one order on cell values, a function of each value alone, the same
whatever dtype the column was given."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opendp_lite._order import group_codes, group_key, group_ranks, label, tie_key, tie_ranks
from opendp_lite.errors import NotInDomain


def _obj(values: list[Any]) -> np.ndarray[Any, Any]:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def test_numbers_are_ordered_by_value_across_types() -> None:
    values = [2.5, Fraction(1, 3), Decimal("0.25"), True, -1, np.int8(3), np.float32(0.5), 10**30]
    got = sorted(values, key=group_key)
    exact = [Fraction(v.item() if isinstance(v, np.generic) else v) for v in got]
    assert exact == sorted(exact)
    assert group_key(1) == group_key(1.0) == group_key(True) == group_key(Fraction(1))
    assert group_key(2**53 + 1) != group_key(2.0**53)  # exact, not through float64
    assert group_key(None) == group_key(math.nan) == group_key(np.datetime64("NaT"))


def test_the_classes_come_in_one_order_whatever_else_is_there() -> None:
    values = [None, (1, "a"), b"x", "b", 3, math.nan, "a", -math.inf, (0, "z")]
    order = [label(v) for v in sorted(values, key=group_key)]
    assert order[:4] == [-math.inf, 3, "a", "b"]
    assert order[4:7] == [b"x", (0, "z"), (1, "a")]
    assert all(v is None or v != v for v in order[7:])  # missing values last
    # the relative order of two values never depends on a third
    for third in (None, "s", 2.5, b"b", (1,)):
        assert sorted([1, 2.5, third], key=group_key).index(1) < sorted(
            [1, 2.5, third], key=group_key
        ).index(2.5)


def test_tie_keys_tell_equal_values_apart() -> None:
    assert tie_key(False) < tie_key(0) < tie_key(-0.0) < tie_key(0.0) < tie_key(Fraction(0))
    assert tie_key(Decimal("1.0")) != tie_key(Decimal("1.00"))
    assert tie_key(None) < tie_key(math.nan)
    assert tie_key(1) < tie_key(0.5 + 1) < tie_key("a")  # a refinement of the group order


def test_labels_do_not_depend_on_the_dtype() -> None:
    cols = [np.array([3, 1, 2, 1]), np.array([3.0, 1.0, 2.0, 1.0]), _obj([3, True, 2.0, 1])]
    for col in cols:
        codes, labels = group_codes(col)
        assert codes.tolist() == [2, 0, 1, 0]
        assert labels == [1, 2, 3] and all(type(v) is int for v in labels)
    codes, labels = group_codes(_obj([2.5, None, "a", math.nan]))
    assert codes.tolist() == [0, -1, 1, -1] and labels == [2.5, "a"]


_floats = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0.0, -0.0, math.nan])


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(_floats, min_size=1, max_size=12), st.sampled_from([None, "s", 7]))
def test_float_and_object_columns_rank_floats_alike(xs: list[float], other: Any) -> None:
    # the same floats ranked in a float64 column and in an object column that also holds
    # another person's value: the same relative order, by value and then by tie key
    f = np.array(xs, dtype=np.float64)
    o = _obj([*xs, other])
    for ranks in (group_ranks, tie_ranks):
        rf, ro = ranks(f), ranks(o)
        assert rf is not None and ro is not None
        n = len(xs)
        pairs_f = [(rf[i] < rf[j], rf[i] == rf[j]) for i in range(n) for j in range(n)]
        pairs_o = [(ro[i] < ro[j], ro[i] == ro[j]) for i in range(n) for j in range(n)]
        assert pairs_f == pairs_o


def test_unhashable_cells_are_refused() -> None:
    for col in (_obj([[1], 2]), _obj([(1, [2]), "a"]), _obj([{1: 2}, None])):
        for fn in (group_codes, group_ranks, tie_ranks):
            with pytest.raises(NotInDomain, match="unhashable"):
                fn(col)
