"""Truncation in the table API (issue 25): the maps of truncate_per_group/truncate_num_groups
under identifier units, computed by hand, and the refusals of OpenDP #2949's scenarios."""

from __future__ import annotations

import math
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendp_lite.prelude as dp
from opendp_lite.errors import InvalidParameter, NotImplementedForType
from opendp_lite.table import truncation as tr

N = 60
LF = pl.LazyFrame(
    {
        "id": [i % 7 for i in range(N)],
        "g": ["a", "b", "c", "d"] * (N // 4),
        "x": [float(i % 5) for i in range(N)],
    }
)
KEYS = dp.polars.Margin(by=["g"], invariant="keys", max_length=1000)
ALL = dp.polars.Margin(by=[], max_length=1000)


def context(unit: Any, rho: bool = False, data: Any = LF) -> dp.Context:
    return dp.Context.compositor(
        data=data,
        privacy_unit=unit,
        privacy_loss=dp.loss_of(rho=1.0) if rho else dp.loss_of(epsilon=1.0),
        split_evenly_over=1,
        margins=[KEYS, ALL],
    )


def eps(query: Any, d_in: Any = None) -> Any:
    """The query's loss at the context's unit (its noise fixed: scale=1)."""
    m = query.resolve()
    return m.map(query._d_in if d_in is None else d_in)


ID1 = dp.unit_of(contributions=1, identifier="id")
LEN = dp.len(scale=1.0, signed=True)


# -- the maps, by hand ------------------------------------------------------------------------


def test_rows_per_person_bound_an_ungrouped_count() -> None:
    # one identifier holds <= 3 rows: a count moves by <= 3 (scale 1: ε = 3)
    assert eps(context(ID1).query().truncate_per_group(3).select(LEN)) == 3
    # two identifiers: 6; one changed (a removal and an addition): 6
    two = dp.unit_of(contributions=2, identifier="id")
    assert eps(context(two).query().truncate_per_group(3).select(LEN)) == 6
    changed = dp.unit_of(changes=1, identifier="id")
    assert eps(context(changed).query().truncate_per_group(3).select(LEN)) == 6


def test_groups_and_rows_per_group_bound_a_grouped_count() -> None:
    q = (
        context(ID1)
        .query()
        .truncate_per_group(2, by=["g"])
        .truncate_num_groups(3, by=["g"])
        .group_by("g")
        .agg(LEN)
    )
    assert eps(q) == 6  # l1 = 3 groups · 2 rows
    # a total bound below k·m: l1 = min(6, 4)
    q4 = (
        context(ID1)
        .query()
        .truncate_per_group(4)
        .truncate_per_group(2, by=["g"])
        .truncate_num_groups(3, by=["g"])
        .group_by("g")
        .agg(LEN)
    )
    assert eps(q4) == 4
    # rows in all bound the groups too: 2 rows touch at most 2 groups, l1 = 2
    q2 = context(ID1).query().truncate_per_group(2).group_by("g").agg(LEN)
    assert eps(q2) == 2


def test_zcdp_uses_the_l2_norm_of_the_person_bounds() -> None:
    q = (
        context(ID1, rho=True)
        .query()
        .truncate_per_group(2, by=["g"])
        .truncate_num_groups(3, by=["g"])
        .group_by("g")
        .agg(dp.len(scale=1.0, signed=True))
    )
    # l2 = sqrt(3 groups) · 2 rows: ρ = l2² / (2σ²) = 12 / 2
    assert float(eps(q)) == pytest.approx(6.0, rel=1e-12)
    assert float(eps(q)) >= 6.0


def test_a_unit_of_bounds_on_identifiers() -> None:
    unit = dp.unit_of(contributions=[dp.polars.Bound(per_group=2)], identifier="id")
    q = (
        context(unit)
        .query()
        .truncate_per_group(1, by=["g"])
        .truncate_num_groups(1, by=["g"])
        .group_by("g")
        .agg(LEN)
    )
    # 2 identifiers, each one row in one group: l1 = 2 (OpenDP charges l0·l∞ = 4)
    assert eps(q) == 2
    assert eps(q, [dp.polars.Bound(per_group=4)]) == 4  # the map reads its own d_in
    per_group = dp.unit_of(
        contributions=[dp.polars.Bound(by=["g"], per_group=1, num_groups=1)], identifier="id"
    )
    q1 = context(per_group).query().truncate_per_group(2, by=["g"]).group_by("g").agg(LEN)
    assert eps(q1) == 2  # one identifier in one group, 2 rows


def test_row_level_bounds_without_identifier() -> None:
    unit = dp.unit_of(contributions=[dp.polars.Bound(by=["g"], per_group=1, num_groups=2)])
    assert unit[0] == dp.frame_distance(dp.symmetric_distance())
    assert eps(context(unit).query().group_by("g").agg(LEN)) == 2
    assert eps(context(unit).query().select(LEN)) == 2  # 1 row in each of 2 groups
    total = dp.unit_of(contributions=[dp.polars.Bound(per_group=3)])
    assert eps(context(total).query().group_by("g").agg(LEN)) == 3


def test_sums_are_charged_per_person() -> None:
    q = (
        context(ID1)
        .query()
        .truncate_per_group(3)
        .select(dp.col("x").fill_null(0.0).dp.sum((0.0, 4.0), scale=1.0))
    )
    # 3 rows of at most 4 each: l1 = 12 (and the float sum's rounding term, never less)
    assert float(eps(q)) >= 12.0
    assert float(eps(q)) == pytest.approx(12.0, rel=1e-6)


def test_opendp_scale_on_bounded_dp_truncation() -> None:
    q = (
        context(dp.unit_of(changes=1, identifier="id"))
        .query()
        .with_columns(y=pl.lit(10))
        .truncate_per_group(3)
        .select(dp.len(signed=True))
    )
    assert math.isclose(q.summarize()["scale"][0], 6.0, rel_tol=1e-12)


# -- refusals -----------------------------------------------------------------------------------


def test_no_truncation_under_an_identifier_is_refused_naming_the_fix() -> None:
    with pytest.raises(InvalidParameter, match=r"missing truncation.*truncate_per_group"):
        context(ID1).query().select(LEN).resolve()
    q = context(ID1).query().truncate_num_groups(1, by=["g"]).group_by("x").agg(LEN)
    q = q.with_keys({"x": [0.0]})
    with pytest.raises(InvalidParameter, match=r"truncate_num_groups\(num_groups"):
        q.resolve()


def test_truncation_needs_an_identifier_and_checks_its_shape_when_built() -> None:
    rows = context(dp.unit_of(contributions=1)).query()
    with pytest.raises(InvalidParameter, match="truncation is only valid when"):
        rows.truncate_per_group(1)
    q = context(ID1).query()
    with pytest.raises(InvalidParameter, match=r"by=\['g'\]"):
        q.truncate_num_groups(1, by="g")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameter, match="unknown column"):
        q.truncate_per_group(1, by=["nope"])
    with pytest.raises(InvalidParameter, match="positive int"):
        q.truncate_per_group(0)
    with pytest.raises(InvalidParameter, match="keep"):
        q.truncate_per_group(1, keep="random")
    with pytest.raises(InvalidParameter, match="keep"):
        q.truncate_num_groups(1, by=["g"], keep=dp.polars.SortBy("x"))
    with pytest.raises(NotImplementedForType, match="column names only"):
        q.truncate_num_groups(1, by=[pl.col("g").cast(pl.String)])


def _grouped_after(*steps: Any) -> Any:
    q = context(ID1).query().truncate_per_group(2, by=["g"]).truncate_num_groups(2, by=["g"])
    for name, args in steps:
        q = getattr(q, name)(*args)
    return q.group_by("g").agg(LEN).with_keys({"g": ["a", "b", "c", "d"]})


def test_2949_redefining_the_grouping_column_drops_the_bound() -> None:
    q = _grouped_after(("with_columns", [pl.lit("a").alias("g")]))
    with pytest.raises(InvalidParameter, match=r"step 3 \(with_columns\) redefined.*\['g'\]"):
        q.resolve()


def test_2949_aliasing_onto_the_grouping_column_drops_the_bound() -> None:
    q = _grouped_after(("with_columns", [pl.col("x").cast(pl.String).alias("g")]))
    with pytest.raises(InvalidParameter, match="no longer holds"):
        q.resolve()
    # an alias of g to a new name carries no bound over h: only the bound on all of a
    # person's rows (2 groups of g · 2 rows = 4) carries over, which holds whatever the groups
    h = context(ID1).query().truncate_per_group(2, by=["g"]).truncate_num_groups(2, by=["g"])
    h = h.with_columns(h=pl.col("g")).group_by("h").agg(LEN).with_keys({"h": ["a"]})
    assert eps(h) == 4
    only_g = context(ID1).query().truncate_per_group(2, by=["g"])
    only_g = only_g.with_columns(h=pl.col("g")).group_by("h").agg(LEN).with_keys({"h": ["a"]})
    with pytest.raises(InvalidParameter, match="num_groups"):
        only_g.resolve()


def test_2949_casting_the_identifier_drops_the_bound() -> None:
    q = context(ID1).query().truncate_per_group(2).with_columns(pl.col("id").cast(pl.String))
    with pytest.raises(InvalidParameter, match=r"step 2 \(with_columns\).*\['id'\]"):
        q.select(LEN).resolve()


def test_2949_redefining_the_identifier_drops_the_bound_and_refuses_a_new_truncation() -> None:
    q = context(ID1).query().truncate_per_group(2).with_columns(id=pl.lit(0))
    with pytest.raises(InvalidParameter, match="no longer holds"):
        q.select(LEN).resolve()
    with pytest.raises(InvalidParameter, match="earlier step redefined"):
        context(ID1).query().with_columns(id=pl.lit(0)).truncate_per_group(2)


def test_2949_filter_keeps_the_bounds() -> None:
    """Decision: a filter only removes rows, row by row, so every count the facts bound (an
    identifier's rows, in all or in a group, and its groups) can only go down."""
    q = _grouped_after(("filter", [pl.col("x") > 1.0]))
    assert eps(q) == 4
    dropped_id = context(ID1).query().truncate_per_group(2).select("x", "g").select(LEN)
    assert eps(dropped_id) == 2  # dropping the identifier keeps its rows the person's


def test_2949_redefining_a_measured_column_drops_its_clip() -> None:
    q = (
        context(ID1)
        .query()
        .truncate_per_group(2)
        .with_columns(pl.col("x").clip(0.0, 1.0))
        .with_columns(x=pl.col("x") * 100)
    )
    with pytest.raises(InvalidParameter, match="needs bounds"):
        q.select(pl.col("x").fill_null(0.0).sum().dp.noise()).resolve()


def test_2949_a_join_on_a_key_set_before_the_aggregation_is_refused() -> None:
    q = context(ID1).query().truncate_per_group(2)
    with pytest.raises(NotImplementedForType, match="join"):
        q.join(pl.LazyFrame({"g": ["a"]}), on="g", how="inner")


def test_facts_follow_column_versions() -> None:
    unit = tr.unit_kind(ID1[0])
    assert unit is not None
    schema = {"id": "Int64", "g": "String"}
    from opendp_lite.table import nodes as n

    trunc = n.TruncateGroups((n.Col("id"),), (n.Col("g"),), 2)
    keep = n.Select((n.Col("id"), n.Col("g")))
    assert len(tr.facts_after(schema, (trunc, keep), unit).facts) == 1
    redefine = n.WithColumns((n.Alias(n.Col("id"), "g"),))
    pf = tr.facts_after(schema, (trunc, redefine), unit)
    assert pf.facts == () and "step 2" in pf.dropped[0]


# -- a property: one person more moves each exact count within the map ------------------------


_IDS = st.one_of(st.integers(0, 4), st.sampled_from(["a", "b", "1"]), st.none())
_GROUPS = st.sampled_from(["x", "y", "z", None])
_ROWS = st.lists(st.tuples(_IDS, _GROUPS), max_size=25)
#: truncation plans: (("rows"|"groups", k, by), ...)
_PLANS = st.sampled_from(
    [
        (("rows", 2, ()),),
        (("rows", 3, ("g",)), ("groups", 2, ("g",))),
        (("rows", 4, ()), ("rows", 1, ("g",)), ("groups", 3, ("g",))),
        (("groups", 1, ("g",)), ("rows", 2, ())),
        (("rows", 1, ("g",)), ("groups", 2, ("g",)), ("rows", 1, ())),
    ]
)


def _key(v: Any) -> tuple[str, str]:
    return (type(v).__name__, repr(v))


def _reference(rows: list[tuple[Any, Any]], plan: tuple[Any, ...]) -> list[tuple[Any, Any]]:
    """A truncation whose choice depends on each person's own rows only (its first rows, or
    groups, in a fixed order of the values): what the maps must bound for any such choice."""
    for kind, k, by in plan:
        out = []
        people: dict[Any, list[tuple[Any, Any]]] = {}
        for r in rows:
            people.setdefault(_key(r[0]), []).append(r)
        for own in people.values():
            own = sorted(own, key=lambda r: _key(r[1]))
            if kind == "rows":
                seen: dict[Any, int] = {}
                for r in own:
                    cell = _key(r[1]) if by else ()
                    if seen.get(cell, 0) < k:
                        seen[cell] = seen.get(cell, 0) + 1
                        out.append(r)
            else:
                kept = sorted({_key(r[1]) for r in own})[:k]
                out.extend(r for r in own if _key(r[1]) in kept)
        rows = out
    return rows


def _counts(rows: list[tuple[Any, Any]], grouped: bool) -> dict[Any, int]:
    out: dict[Any, int] = {}
    for _, g in rows:
        cell = _key(g) if grouped else ()
        out[cell] = out.get(cell, 0) + 1
    return out


@settings(max_examples=150, deadline=None)
@given(_ROWS, _ROWS, _PLANS, st.booleans(), st.booleans())
def test_adding_one_person_moves_the_counts_within_the_map(
    others: list[tuple[Any, Any]],
    own: list[tuple[Any, Any]],
    plan: tuple[Any, ...],
    grouped: bool,
    changes: bool,
) -> None:
    person = "new"  # an identifier none of the others has (theirs are ints, short str, None)
    mine = [(person, g) for _, g in own]
    schema = pl.LazyFrame(schema={"id": pl.String, "g": pl.String})
    unit = dp.unit_of(changes=1, identifier="id") if changes else ID1
    q = context(unit, data=schema).query()
    for kind, k, by in plan:
        q = (
            q.truncate_per_group(k, by=list(by) or None)
            if kind == "rows"
            else q.truncate_num_groups(k, by=list(by))
        )
    q = q.group_by("g").agg(LEN).with_keys({"g": ["x"]}) if grouped else q.select(LEN)
    tp = q._plan()
    person_bounds, d = q._person(tp, 1)
    from opendp_lite.table.analysis import _part

    l0, l1, linf = _part(person_bounds).map(d)
    # a neighbour: the person's rows added (or, under changes, replaced by others of theirs)
    before = _counts(
        _reference(others + ([] if not changes else [(person, "x")] * 3), plan), grouped
    )
    after = _counts(_reference(others + mine, plan), grouped)
    diff = {c: abs(before.get(c, 0) - after.get(c, 0)) for c in set(before) | set(after)}
    moved = [v for v in diff.values() if v]
    assert len(moved) <= l0
    assert sum(moved) <= l1
    assert max(moved, default=0) <= linf
