"""make_truncate_per_id, make_truncate_num_groups, make_count_per_id: maps, refusals, which
rows are kept (a function of the individual's own rows), and the uniformity of keep="sample"."""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite._order import group_key
from opendp_lite.errors import DomainMismatch, FailedFunction, InvalidParameter, MetricMismatch
from tests.stat._reference import check_cells

DF = dp.dataframe_domain()
SID = dp.symmetric_id_distance("id")
CID = dp.change_one_id_distance("id")


def _rows(frame: dict[Any, Any]) -> Counter[tuple[Any, ...]]:
    cols = list(frame)
    return Counter(
        tuple(group_key(v) for v in vals)
        for vals in zip(*(np.asarray(frame[c]).tolist() for c in cols), strict=True)
    )


def test_maps_are_k_d_and_2_k_d() -> None:
    assert dp.t.make_truncate_per_id(DF, SID, k=5).map(3) == 15
    assert dp.t.make_truncate_per_id(DF, CID, k=5).map(3) == 30
    assert dp.t.make_truncate_per_id(DF, SID, k=5).output_metric == dp.symmetric_distance()
    assert dp.t.make_count_per_id(DF, SID).map(2) == 2
    assert dp.t.make_count_per_id(DF, CID).map(2) == 4
    assert dp.t.make_truncate_num_groups(DF, CID, by="g", k=2).map(3) == 3
    assert dp.t.make_truncate_num_groups(DF, CID, by="g", k=2).output_metric == CID


def test_refusals_name_the_fix() -> None:
    with pytest.raises(MetricMismatch):
        dp.t.make_truncate_per_id(DF, dp.symmetric_distance(), k=2)
    with pytest.raises(DomainMismatch):
        dp.t.make_truncate_per_id(dp.vector_domain(dp.atom_domain(T=int)), SID, k=2)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(InvalidParameter):
            dp.t.make_truncate_per_id(DF, SID, k=bad)
    with pytest.raises(InvalidParameter, match="keep must be"):
        dp.t.make_truncate_per_id(DF, SID, k=2, keep=None)
    with pytest.raises(InvalidParameter, match="identifier"):
        dp.t.make_truncate_num_groups(DF, SID, by=["id"], k=1)
    with pytest.raises(InvalidParameter, match="keep must be"):
        dp.t.make_truncate_num_groups(DF, SID, by="g", k=1, keep="x")
    t = dp.t.make_truncate_per_id(DF, SID, k=1, keep="x")
    with pytest.raises(FailedFunction, match="'x'"):
        t({"id": [1, 2], "y": [3, 4]})
    with pytest.raises(FailedFunction, match="identifier"):
        dp.t.make_truncate_per_id(DF, dp.symmetric_id_distance("who"), k=1)({"id": [1]})


def test_first_last_and_a_sort_column() -> None:
    frame = {"id": [1, 1, 1, 2, 2], "x": [3.0, 1.0, 2.0, 9.0, 8.0], "y": [0, 5, 4, 1, 2]}
    first = dp.t.make_truncate_per_id(DF, SID, k=2, keep="first")(frame)
    last = dp.t.make_truncate_per_id(DF, SID, k=2, keep="last")(frame)
    by_y = dp.t.make_truncate_per_id(DF, SID, k=1, keep="y")(frame)
    assert sorted(zip(first["id"].tolist(), first["x"].tolist(), strict=True)) == [
        (1, 1.0),
        (1, 2.0),
        (2, 8.0),
        (2, 9.0),
    ]
    assert sorted(zip(last["id"].tolist(), last["x"].tolist(), strict=True)) == [
        (1, 2.0),
        (1, 3.0),
        (2, 8.0),
        (2, 9.0),
    ]
    assert sorted(zip(by_y["id"].tolist(), by_y["x"].tolist(), strict=True)) == [(1, 3.0), (2, 9.0)]


def test_ids_match_by_equality_and_missing_ids_are_one_individual() -> None:
    """1, 1.0 and True are one individual; None and NaN are one; mixed Python types work."""
    frame = {
        "id": np.array([1, 1.0, True, "1", None, float("nan"), (1, 2), (1, 2)], dtype=object),
        "x": [5, 4, 3, 2, 1, 0, 7, 6],
    }
    out = dp.t.make_truncate_per_id(DF, SID, k=1, keep="first")(frame)
    # "first" orders by every column, the identifier too: True < 1 < 1.0, None < NaN
    assert sorted(out["x"].tolist()) == [1, 2, 3, 6]
    counts = dp.t.make_count_per_id(DF, SID)(frame)
    assert sorted(counts) == [1, 2, 2, 3]


def test_kept_rows_depend_only_on_the_individuals_own_rows() -> None:
    """Round-3 attack shape: another individual's rows (interleaving in value, order and
    dtype: a float or None turns the column's dtype) never change whose rows are kept."""
    alone = {"id": [7, 7, 7, 7], "x": [4, 1, 3, 2]}
    others = {"id": [8, 8, None, 9.5], "x": [2.5, None, 0, 1]}
    both = {c: np.array(alone[c] + others[c], dtype=object) for c in alone}
    for keep in ("first", "last", "x"):
        t = dp.t.make_truncate_per_id(DF, SID, k=2, keep=keep)
        a, b = t(alone), t(both)
        mine = [x for i, x in zip(b["id"].tolist(), b["x"].tolist(), strict=True) if i == 7]
        assert sorted(a["x"].tolist()) == sorted(mine), keep
        # a permutation of the rows is the same dataset: the same rows are kept
        perm = [5, 2, 7, 0, 3, 6, 1, 4]
        shuffled = {c: v[perm] for c, v in both.items()}
        assert _rows(t(shuffled)) == _rows(b), keep


def test_sample_keeps_min_k_rows_of_each_individual_from_its_own_rows() -> None:
    ids = np.repeat(np.arange(50), np.arange(1, 51))
    frame = {"id": ids, "x": np.arange(len(ids))}
    out = dp.t.make_truncate_per_id(DF, SID, k=4)(frame)
    got = Counter(out["id"].tolist())
    assert got == {i: min(4, i + 1) for i in range(50)}
    assert all(ids[x] == i for i, x in zip(out["id"].tolist(), out["x"].tolist(), strict=True))


# 20 000 individuals of 4 rows, k = 2: C(4, 2) = 6 equally likely subsets, ~3300 each; the
# wrong laws (one subset 1.3x or 0.7x as likely) have non-centrality ~ 100 or more.
N_PEOPLE = 20_000


def test_sample_is_a_uniform_subset_and_a_biased_law_is_rejected() -> None:
    ids = np.repeat(np.arange(N_PEOPLE), 4)
    frame = {"id": ids, "x": np.tile(np.arange(4), N_PEOPLE)}
    out = dp.t.make_truncate_per_id(DF, SID, k=2)(frame)
    kept: dict[int, list[int]] = {}
    for i, x in zip(out["id"].tolist(), out["x"].tolist(), strict=True):
        kept.setdefault(i, []).append(x)
    subsets = list(itertools.combinations(range(4), 2))
    counts = Counter(tuple(sorted(v)) for v in kept.values())
    assert set(counts) <= set(subsets) and sum(counts.values()) == N_PEOPLE
    observed = [counts.get(s, 0) for s in subsets]
    uniform = [1.0] * 6
    check_cells(observed, uniform, wrong=[[1.3] + [1.0] * 5, [0.7] + [1.0] * 5])


def test_sample_order_within_an_individual_is_uniform_for_ties_too() -> None:
    """An individual's keys that tie are redrawn: with 2-bit keys ties are frequent (3 rows:
    P(distinct) = 3/8), and the order stays uniform; codes of 40 bits take the unpacked
    path."""
    from opendp_lite._truncation import sample_order as _sample_order

    for code in (5, 2**40):
        pid = np.array([code] * 3 + [0] * 3, dtype=np.int64)
        firsts: Counter[int] = Counter()
        for _ in range(3000):
            order = _sample_order(pid, key_bits=2)
            assert sorted(order[3:].tolist()) == [0, 1, 2]
            firsts[int(order[3])] += 1  # the first row of the individual coded `code`
        check_cells([firsts.get(i, 0) for i in range(3)], [1.0] * 3, wrong=[[1.5, 1.0, 1.0]])


def test_num_groups_keeps_k_groups_of_each_individual() -> None:
    frame = {
        "id": [1, 1, 1, 1, 2, 2, None, None],
        "g": ["b", "a", "c", "a", "z", "z", "q", None],
        "x": list(range(8)),
    }
    first = dp.t.make_truncate_num_groups(DF, SID, by="g", k=2, keep="first")(frame)
    assert sorted(zip(first["id"].tolist(), first["g"].tolist(), strict=True), key=str) == sorted(
        [(1, "a"), (1, "a"), (1, "b"), (2, "z"), (2, "z"), (None, "q"), (None, None)], key=str
    )
    last = dp.t.make_truncate_num_groups(DF, SID, by="g", k=1, keep="last")(frame)
    assert sorted(last["x"].tolist()) == [2, 4, 5, 7]  # 'c'; 'z' twice; None last
    sample = dp.t.make_truncate_num_groups(DF, SID, by="g", k=1)(frame)
    per: dict[Any, set[Any]] = {}
    for i, g in zip(sample["id"].tolist(), sample["g"].tolist(), strict=True):
        per.setdefault(i, set()).add(g)
    assert all(len(v) == 1 for v in per.values()) and len(per) == 3


def test_frames_of_every_library() -> None:
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    pa = pytest.importorskip("pyarrow")
    data = {"id": [1, 1, 1, 2, 3, 3], "x": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]}
    t = dp.t.make_truncate_per_id(DF, SID, k=1, keep="first")
    for frame in (data, pd.DataFrame(data), pl.DataFrame(data), pa.table(data)):
        assert sorted(t(frame)["x"].tolist()) == [1.0, 4.0, 5.0]


def test_context_over_a_frame_truncates_before_row_queries() -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"id": [1, 1, 1, 2, 3, 3] * 50, "x": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0] * 50})
    ctx = dp.Context.compositor(
        data=df,
        privacy_unit=dp.unit_of(contributions=1, identifier="id"),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=2,
    )
    with pytest.raises(MetricMismatch):  # a row count needs the truncation first
        ctx.query().count().laplace().release()
    assert ctx.remaining_privacy_loss() == [0.5, 0.5]
    q = ctx.query().truncate_per_id(k=2).count().laplace()
    assert q.param() == 4.0  # sensitivity k·d = 2 at ε = 0.5
    assert isinstance(q.release(), int)


def test_a_dask_frame_is_truncated_on_the_driver() -> None:
    """Documented cost: the frame is computed onto the driver before truncation."""
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    pdf = pd.DataFrame({"id": [1, 1, 1, 2, 3, 3] * 10, "x": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0] * 10})
    t = dp.t.make_truncate_per_id(DF, SID, k=1, keep="first")
    assert sorted(t(dd.from_pandas(pdf, npartitions=3))["x"].tolist()) == [1.0, 4.0, 5.0]


def test_the_identifier_metrics_survive_a_serialization_round_trip() -> None:
    import opendp_lite.prelude as dp

    for metric in (dp.symmetric_id_distance("pid"), dp.change_one_id_distance("pid")):
        assert dp.deserialize(dp.serialize(metric)) == metric


# --- the stability property on random frames --------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_IDS = st.one_of(
    st.integers(-2, 3),
    st.sampled_from([1.0, 2.5, float("nan"), -0.0]),
    st.booleans(),
    st.sampled_from(["a", "1", ""]),
    st.none(),
    st.tuples(st.integers(0, 1), st.sampled_from(["x", "y"])),
)
_GROUPS = st.sampled_from(["g1", "g2", "g3", None])
_ROW = st.tuples(_IDS, _GROUPS, st.integers(0, 9))


def _objects(values: list[Any]) -> Any:
    out = np.empty(len(values), dtype=object)  # np.array would read a tuple as a row
    out[:] = values
    return out


def _frame(rows: list[tuple[Any, Any, int]]) -> dict[str, Any]:
    return {
        "id": _objects([r[0] for r in rows]),
        "g": _objects([r[1] for r in rows]),
        "x": np.array([r[2] for r in rows], dtype=np.int64),
    }


def _distance(a: dict[str, Any], b: dict[str, Any]) -> int:
    ra, rb = _rows(a), _rows(b)
    return sum(((ra - rb) + (rb - ra)).values())


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_ROW, max_size=20),
    st.lists(st.tuples(_GROUPS, st.integers(0, 9)), min_size=1, max_size=10),
    st.lists(st.tuples(_GROUPS, st.integers(0, 9)), min_size=0, max_size=10),
    st.integers(1, 3),
    st.integers(1, 3),
    st.sampled_from(["first", "last", "x"]),
)
def test_one_person_more_or_changed_moves_the_truncated_data_within_the_map(
    others: list[tuple[Any, Any, int]],
    mine: list[tuple[Any, int]],
    changed: list[tuple[Any, int]],
    k: int,
    groups: int,
    keep: str,
) -> None:
    """Ids of mixed Python types (1 == 1.0 == True; None with NaN), nulls in the id and the
    groups, one person over many groups: adding the person (symmetric_id_distance 1), or
    changing all of the person's rows (change_one_id_distance 1), moves the truncated multiset
    of rows by at most the chain's map, ``k`` or ``2k`` (make_truncate_num_groups keeps the
    identifier distance)."""
    person = ("new person", 0)  # equal to no id of the others (theirs are 2-tuples of int, str)
    plus = [(person, g, x) for g, x in mine]
    swap = [(person, g, x) for g, x in changed]
    for metric, before, after in (
        (SID, others, others + plus),
        (CID, others + swap, others + plus),
    ):
        by_group = "last" if keep == "last" else "first"  # a sort column is for rows only
        chain = dp.t.make_truncate_num_groups(DF, metric, by="g", k=groups, keep=by_group) >> (
            dp.t.make_truncate_per_id(DF, metric, k=k, keep=keep)
        )
        moved = _distance(chain(_frame(before)), chain(_frame(after)))
        assert moved <= chain.map(1), (metric, moved)
