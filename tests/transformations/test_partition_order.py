"""make_partition_by under symmetric_id_distance: the rows kept for an individual, its group
indices and its tie-breaks depend on its own rows only.

The order is opendp_lite._order's: a fixed function of each value, numbers by value whatever
their Python type or the dtype the column was given."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import opendp_lite.prelude as dp
from opendp_lite._order import label
from opendp_lite.errors import NotInDomain

FRAME = dp.dataframe_domain()
ID = dp.symmetric_id_distance("id")


def id_partition(keys: Any = None, k: int = 1, m: int = 1, c: int | None = None) -> Any:
    return dp.t.make_partition_by(
        FRAME,
        ID,
        by="g",
        keys=keys,
        max_partitions=k,
        max_contributions_per_partition=m,
        max_contributions=c,
    )


def sizes(parts: Any) -> dict[Any, int]:
    return {key: len(sub["id"]) for key, sub in parts.items()}


# -- the scenario: 200 individuals in groups 1 and 2.5, one more with key None ---------


def _two_groups(extra: list[tuple[Any, Any]]) -> dict[str, list[Any]]:
    rows = [(i, g) for i in range(200) for g in (1, 2.5)] + extra
    return {"id": [r[0] for r in rows], "g": [r[1] for r in rows]}


def test_a_none_key_elsewhere_does_not_reorder_the_groups() -> None:
    part = id_partition()  # private keys, one group per individual: its smallest key
    base = _two_groups([])
    plus = _two_groups([(200, None)])  # the column is now of objects: 1 is an int, 2.5 a float
    assert sizes(part(base)) == {1: 200}
    # was {None: 1, 2.5: 200}: floats sorted before ints; a missing key is in no group
    assert sizes(part(plus)) == {1: 200}
    # the release: key 1 is released on both sides (it never was on the neighbour)
    count = dp.t.make_select_column("id", TOA=int) >> dp.t.then_count() >> dp.m.then_laplace(1.0)
    release = part >> dp.c.then_grouped(count, threshold=50, threshold_scale=1.0)
    assert set(release(base)) == {1} and set(release(plus)) == {1}


def test_a_none_tag_elsewhere_does_not_move_a_public_key_sum() -> None:
    # each individual has two rows in group "a" and keeps one: the smaller by (tag, x)
    rows = [(i, "a", t, x) for i in range(200) for t, x in ((1, 1.0), (2.5, 0.0))]

    def frame(extra: list[tuple[Any, ...]]) -> dict[str, list[Any]]:
        r = rows + extra
        return {c: [row[j] for row in r] for j, c in enumerate(("id", "g", "tag", "x"))}

    t = id_partition(keys=["a"]) >> dp.t.then_grouped_sum("x", (0.0, 10.0))
    base, plus = t(frame([])), t(frame([(200, "a", None, 0.0)]))
    assert base == [200.0]
    assert abs(plus[0] - base[0]) <= t.map(1)  # was 200 against a map of 10.0024


def test_keys_and_ids_equal_by_value_are_one_group_and_one_individual() -> None:
    # an int column, a float column and an object column holding the same numbers give the
    # same groups, labels and truncation
    for g in ([1, 2, 2, 3], [1.0, 2.0, 2.0, 3.0], [1, 2.0, np.int64(2), True + 2]):
        parts = id_partition(k=2, m=1)({"id": [7, 7.0, 7, 7], "g": g})
        assert sizes(parts) == {1: 1, 2: 1}
        assert all(type(key) is int for key in parts)


@pytest.mark.parametrize(
    "bad",
    [
        {"id": [[1], "u"], "g": ["a", "b"]},
        {"id": [1, 2], "g": ["a", ["b"]]},
        {"id": [1, 2], "g": ["a", "b"], "x": [{"v": 1}, 2.0]},
        {"id": [1, 2], "g": ["a", "b"], "x": [(1, [2]), "s"]},
    ],
)
def test_an_unhashable_cell_is_not_in_the_domain(bad: dict[str, list[Any]]) -> None:
    for keys in (None, ["a", "b"]):
        with pytest.raises(NotInDomain, match="unhashable") as e:
            id_partition(keys=keys)(bad)
        assert "[" not in str(e.value) and "{" not in str(e.value)  # no cell in the message


# -- the property: adding one individual never changes another individual's kept rows --------

_NUMS = [0, 1, 2, 2.5, -0.0, 1.0, 3, -1.5]
_MIXED = [*_NUMS, None, "a", "b", True, math.nan]


def _canon(v: Any) -> Any:
    """A value up to ==, so that 1 read as 1.0 (the column became a float column) or None read
    as NaN (pandas) compare equal."""
    if v is None or (isinstance(v, float | np.floating) and v != v):
        return ("missing",)
    return ("v", label(v))


def kept(parts: Any) -> dict[Any, Counter[tuple[Any, ...]]]:
    out: dict[Any, Counter[tuple[Any, ...]]] = {}
    for key, sub in parts.items():
        cols = [np.asarray(sub[c]).tolist() for c in ("id", "g", "x")]
        for i, g, x in zip(*cols, strict=True):
            out.setdefault(label(i), Counter())[(label(key), _canon(g), _canon(x))] += 1
    return out


def _rows(draw: Any, ident: int, pool_g: list[Any], pool_x: list[Any]) -> list[tuple[Any, ...]]:
    n = draw(st.integers(1, 4))
    return [(ident, draw(st.sampled_from(pool_g)), draw(st.sampled_from(pool_x))) for _ in range(n)]


@st.composite
def tables(draw: Any, pool_g: list[Any], pool_x: list[Any]) -> tuple[Any, Any, Any]:
    people = draw(st.integers(1, 5))
    base = [r for i in range(people) for r in _rows(draw, i, pool_g, pool_x)]
    newcomer = _rows(draw, people, pool_g, pool_x)
    where = draw(st.integers(0, len(base)))  # the newcomer's rows anywhere in the table
    plus = base[:where] + newcomer + base[where:]
    bounds = (draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.sampled_from([None, 2])))
    return base, plus, bounds


def _dict(rows: list[tuple[Any, ...]]) -> dict[str, list[Any]]:
    return {c: [r[j] for r in rows] for j, c in enumerate(("id", "g", "x"))}


def _numpy(rows: list[tuple[Any, ...]]) -> dict[str, Any]:
    # numpy arrays as numpy infers them (an object array where a string would turn numbers
    # into text, as the dataframe domain does for lists)
    out = {}
    for c, v in _dict(rows).items():
        out[c] = np.array(v, dtype=object) if any(isinstance(e, str) for e in v) else np.array(v)
    return out


def _pandas(rows: list[tuple[Any, ...]]) -> Any:
    pd = pytest.importorskip("pandas")
    return pd.DataFrame(_dict(rows))


def _polars(rows: list[tuple[Any, ...]]) -> Any:
    pl = pytest.importorskip("polars")
    return pl.DataFrame(_dict(rows), strict=False)


def _dask(rows: list[tuple[Any, ...]]) -> Any:
    dd = pytest.importorskip("dask.dataframe")
    return dd.from_pandas(_pandas(rows), npartitions=2)


def _check(base: Any, plus: Any, bounds: tuple[int, int, int | None], make: Any) -> None:
    k, m, c = bounds
    for keys in (None, [1, 2.5, "a", 0]):
        part = id_partition(keys=keys, k=k, m=m, c=c)
        before, after = kept(part(make(base))), kept(part(make(plus)))
        newcomer = max(r[0] for r in plus)
        after.pop(newcomer, None)
        assert after == before


SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)


@SETTINGS
@given(tables(_MIXED, _MIXED))
def test_adding_an_individual_keeps_the_others_rows_dict(case: Any) -> None:
    _check(*case, _dict)


@SETTINGS
@given(tables(_MIXED, _MIXED))
def test_adding_an_individual_keeps_the_others_rows_numpy(case: Any) -> None:
    _check(*case, _numpy)


@SETTINGS
@given(tables(_MIXED, _MIXED))
def test_adding_an_individual_keeps_the_others_rows_pandas(case: Any) -> None:
    _check(*case, _pandas)


@SETTINGS
@given(tables([*_NUMS, None], [*_NUMS, None, math.nan]))
def test_adding_an_individual_keeps_the_others_rows_polars(case: Any) -> None:
    # Polars columns have one type: ints become floats, and a null joins, when one is added
    _check(*case, _polars)


@settings(max_examples=15, deadline=None, derandomize=True)
@given(tables(_MIXED, _MIXED))
def test_adding_an_individual_keeps_the_others_rows_dask(case: Any) -> None:
    dask = pytest.importorskip("dask")
    # Dask's dataframe.convert-string (on by default) turns every object column into text, so
    # one string or bool elsewhere would make another's 0 the string "0": a change of the
    # individual's own values before make_partition_by sees them
    with dask.config.set({"dataframe.convert-string": False}):
        _check(*case, _dask)
