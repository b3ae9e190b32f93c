"""make_partition_by: groups, keys, maps, and the per-individual bounds (l0, l∞) enforced."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import DomainMismatch, FailedFunction, InvalidParameter, MetricMismatch

FRAME = dp.dataframe_domain()
SYM = dp.symmetric_distance()


def groups(parts: Any, col: str) -> dict[Any, list[Any]]:
    return {k: sorted(v[col].tolist()) for k, v in parts.items()}


def test_public_keys_drop_others_and_keep_empty_groups() -> None:
    t = dp.t.make_partition_by(FRAME, SYM, by="r", keys=["n", "s", "w"])
    parts = t({"r": ["n", "e", "s", "n", "x"], "v": [1, 2, 3, 4, 5]})
    assert list(parts) == ["n", "s", "w"]
    assert groups(parts, "v") == {"n": [1, 4], "s": [3], "w": []}


def test_several_by_columns_give_tuple_labels() -> None:
    keys = [("a", 1), ("a", 2), ("b", 1)]
    t = dp.t.make_partition_by(FRAME, SYM, by=["c", "d"], keys=keys)
    parts = t({"c": ["a", "a", "b", "b", "a"], "d": [1, 2, 1, 2, 1], "v": [10, 20, 30, 40, 50]})
    assert groups(parts, "v") == {("a", 1): [10, 50], ("a", 2): [20], ("b", 1): [30]}


def test_private_keys_are_the_sorted_keys_present() -> None:
    t = dp.t.make_partition_by(FRAME, SYM, by="g")
    parts = t({"g": [3, 1, 3, 2], "v": [1.0, 2.0, 3.0, 4.0]})
    assert list(parts) == [1, 2, 3]
    assert groups(parts, "v") == {1: [2.0], 2: [4.0], 3: [1.0, 3.0]}
    t2 = dp.t.make_partition_by(FRAME, SYM, by=["g", "h"])
    p2 = t2({"g": [1, 1, 0], "h": ["b", "a", "b"]})
    assert list(p2) == [(0, "b"), (1, "a"), (1, "b")]


def test_numeric_keys_match_exactly() -> None:
    t = dp.t.make_partition_by(FRAME, SYM, by="g", keys=[1.5, 2.0])
    parts = t({"g": [1.5, 2.0, float("nan"), 1.25, 2.0]})
    assert {k: len(v["g"]) for k, v in parts.items()} == {1.5: 1, 2.0: 2}
    # integer keys over a wide range (the search path, not the table)
    t = dp.t.make_partition_by(FRAME, SYM, by="g", keys=[-(10**12), 0, 10**12])
    parts = t({"g": np.array([10**12, 5, -(10**12), 10**12])})
    assert {k: len(v["g"]) for k, v in parts.items()} == {-(10**12): 1, 0: 0, 10**12: 2}


def test_string_keys_do_not_match_other_types() -> None:
    t = dp.t.make_partition_by(FRAME, SYM, by="g", keys=["1", "2"])
    parts = t({"g": ["1", 1, "2", 2.0]})
    assert {k: len(v["g"]) for k, v in parts.items()} == {"1": 1, "2": 1}


@pytest.mark.parametrize("d", [0, 1, 3, 17])
def test_symmetric_map(d: int) -> None:
    t = dp.t.make_partition_by(FRAME, SYM, by="g", keys=[1])
    assert t.map(d) == (d, d, d)


@pytest.mark.parametrize(("d", "k", "m"), [(1, 1, 1), (1, 3, 2), (2, 3, 5), (4, 1, 7)])
def test_id_map(d: int, k: int, m: int) -> None:
    t = dp.t.make_partition_by(
        FRAME,
        dp.symmetric_id_distance("id"),
        by="g",
        max_partitions=k,
        max_contributions_per_partition=m,
    )
    assert t.map(d) == (d * k, d * k * m, d * m)


def test_refusals() -> None:
    with pytest.raises(InvalidParameter, match="need an identifier"):
        dp.t.make_partition_by(FRAME, SYM, by="g", max_partitions=2)
    with pytest.raises(InvalidParameter, match="must be given"):
        dp.t.make_partition_by(FRAME, dp.symmetric_id_distance("id"), by="g", max_partitions=2)
    with pytest.raises(InvalidParameter, match="positive int"):
        dp.t.make_partition_by(
            FRAME,
            dp.symmetric_id_distance("id"),
            by="g",
            max_partitions=0,
            max_contributions_per_partition=1,
        )
    with pytest.raises(InvalidParameter, match="identifier"):
        dp.t.make_partition_by(
            FRAME,
            dp.symmetric_id_distance("id"),
            by="id",
            max_partitions=1,
            max_contributions_per_partition=1,
        )
    with pytest.raises(InvalidParameter, match="distinct"):
        dp.t.make_partition_by(FRAME, SYM, by="g", keys=[1, 1])
    with pytest.raises(InvalidParameter, match="tuples"):
        dp.t.make_partition_by(FRAME, SYM, by=["g", "h"], keys=[1, 2])
    with pytest.raises(InvalidParameter, match="at least one"):
        dp.t.make_partition_by(FRAME, SYM, by=[], keys=[1])
    with pytest.raises(MetricMismatch):
        dp.t.make_partition_by(FRAME, dp.insert_delete_distance(), by="g", keys=[1])
    with pytest.raises(DomainMismatch):
        dp.t.make_partition_by(dp.vector_domain(dp.atom_domain(T=int)), SYM, by="g", keys=[1])
    t = dp.t.make_partition_by(FRAME, SYM, by="g", keys=[1])
    with pytest.raises(FailedFunction, match="no column 'g'"):
        t({"h": [1, 2]})


# -- one individual in several groups: the bounds are enforced --------------------------------

ID = dp.symmetric_id_distance("id")


def count_by_id(k: int, m: int, keys: list[Any] | None) -> Any:
    part = dp.t.make_partition_by(
        FRAME, ID, by="g", keys=keys, max_partitions=k, max_contributions_per_partition=m
    )
    return part


# individual "u" has 7 rows in 3 groups (A: 3, B: 3, C: 1); "v" has one row in A
CRAFTED = {
    "id": ["u", "u", "u", "u", "u", "u", "u", "v"],
    "g": ["A", "B", "A", "C", "B", "A", "B", "A"],
    "x": [5.0, 1.0, 3.0, 2.0, 9.0, 4.0, 7.0, 6.0],
}


def test_individual_truncated_to_k_groups_and_m_rows() -> None:
    part = count_by_id(2, 2, ["A", "B", "C"])
    counts = (part >> dp.t.then_grouped_count())(CRAFTED)
    # u keeps its first 2 groups (A, B: key order) and 2 rows in each; C is dropped for u
    assert counts == [3, 2, 0]
    parts = part(CRAFTED)
    # within a group, u keeps its smallest rows in the canonical order of the columns
    assert groups(parts, "x") == {"A": [3.0, 4.0, 6.0], "B": [1.0, 7.0], "C": []}
    sums = (part >> dp.t.then_grouped_sum("x", (0.0, 10.0)))(CRAFTED)
    assert sums == [13.0, 8.0, 0.0]


def test_total_contribution_bound() -> None:
    part = dp.t.make_partition_by(
        FRAME,
        ID,
        by="g",
        keys=["A", "B", "C"],
        max_partitions=3,
        max_contributions_per_partition=2,
        max_contributions=3,
    )
    # u: A keeps 2 (3.0, 4.0), then B 1 (its smallest, 1.0): 3 rows in all; v: A 6.0
    assert groups(part(CRAFTED), "x") == {"A": [3.0, 4.0, 6.0], "B": [1.0], "C": []}
    assert part.map(1) == (3, 3, 2)
    assert part.map(2) == (6, 6, 4)
    tight = dp.t.make_partition_by(
        FRAME, ID, by="g", max_partitions=3, max_contributions_per_partition=2, max_contributions=1
    )
    assert tight.map(1) == (1, 1, 1)
    with pytest.raises(InvalidParameter, match="identifier"):
        dp.t.make_partition_by(FRAME, SYM, by="g", max_contributions=2)


def test_truncation_uses_only_kept_keys() -> None:
    # rows outside the public keys do not use up one of the individual's groups
    part = count_by_id(1, 5, ["B", "C"])
    assert (part >> dp.t.then_grouped_count())(CRAFTED) == [3, 0]
    # private keys: groups emptied by the truncation are not groups
    part = count_by_id(1, 1, None)
    parts = part(CRAFTED)
    assert list(parts) == ["A"]
    assert groups(parts, "x") == {"A": [3.0, 6.0]}


def test_truncation_is_a_function_of_the_multiset() -> None:
    part = count_by_id(2, 1, None)
    ref = groups(part(CRAFTED), "x")
    n = len(CRAFTED["id"])
    for perm in itertools.islice(itertools.permutations(range(n)), 0, 40320, 997):
        shuffled = {c: [v[i] for i in perm] for c, v in CRAFTED.items()}
        assert groups(part(shuffled), "x") == ref


@pytest.mark.parametrize(("k", "m"), [(1, 1), (2, 1), (2, 2), (3, 3)])
def test_adding_one_individual_moves_counts_within_the_map(k: int, m: int) -> None:
    base = {"id": ["v", "w", "w"], "g": ["A", "B", "C"], "x": [1.0, 2.0, 3.0]}
    plus = {c: base[c] + CRAFTED[c][:7] for c in base}  # u's 7 rows added
    part = count_by_id(k, m, ["A", "B", "C"])
    t = part >> dp.t.then_grouped_count()
    diff = np.abs(np.asarray(t(plus)) - np.asarray(t(base)))
    l0, l1, linf = part.map(1)
    assert int(np.count_nonzero(diff)) <= l0
    assert int(diff.sum()) <= l1
    assert int(diff.max()) <= linf
    # and the bound is reached: u has >= m rows in each of its first k groups (k <= 2 here)
    if k <= 2:
        assert int(diff.sum()) == l1 and int(diff.max()) == linf
    assert t.map(1) == l1  # the count vector's l1 sensitivity is the map


# -- key matching edge cases -----------------------------------------------------------------


def test_private_keys_drop_nan_rows_without_mixing_groups() -> None:
    t = dp.t.make_partition_by(FRAME, SYM, by=["g", "h"])
    parts = t({"g": [1.0, float("nan"), 1.0, 2.0], "h": ["a", "a", "b", "a"], "v": [1, 2, 3, 4]})
    assert list(parts) == [(1.0, "a"), (1.0, "b"), (2.0, "a")]
    assert groups(parts, "v") == {(1.0, "a"): [1], (1.0, "b"): [3], (2.0, "a"): [4]}
    t1 = dp.t.make_partition_by(FRAME, SYM, by="g")
    p1 = t1({"g": [float("nan"), 2.0, 2.0]})
    assert list(p1) == [2.0] and len(p1[2.0]["g"]) == 2


def test_many_key_columns_do_not_overflow() -> None:
    # 5 columns of 2^16 distinct key values: a mixed-radix code needs 2^80 and wraps in int64,
    # so (0, 1, 1, 1, 1) and (1, 1, 1, 1, 1) would share a code
    keys = [(i,) * 5 for i in range(1 << 16)]
    rows = np.array([(1, 1, 1, 1, 1), (0, 1, 1, 1, 1), (7, 7, 7, 7, 7)], dtype=np.int64)
    cols = {c: rows[:, j] for j, c in enumerate("vwxyz")}
    t = dp.t.make_partition_by(FRAME, SYM, by=list("vwxyz"), keys=keys)
    counts = (t >> dp.t.then_grouped_count())(cols)
    assert counts[1] == 1 and counts[7] == 1 and counts.sum() == 2
    tp = dp.t.make_partition_by(FRAME, SYM, by=list("vwxyz"))
    assert list(tp(cols)) == sorted(map(tuple, rows.tolist()))


def test_uint64_keys_compare_exactly() -> None:
    col = np.array([2**64 - 1, 2**63, 5], dtype=np.uint64)
    t = dp.t.make_partition_by(FRAME, SYM, by="g", keys=[-1, 0, 5])
    assert {k: len(v["g"]) for k, v in t({"g": col}).items()} == {-1: 0, 0: 0, 5: 1}
    t = dp.t.make_partition_by(FRAME, SYM, by="g", keys=[2**63, 2**63 + 1])
    assert {k: len(v["g"]) for k, v in t({"g": col}).items()} == {2**63: 1, 2**63 + 1: 0}


def test_object_columns_of_numpy_scalars_match_python_keys() -> None:
    col = np.array([np.int64(1), 2, np.float64(2.0), True, "1", None], dtype=object)
    t = dp.t.make_partition_by(FRAME, SYM, by="g", keys=[1, 2])
    # keys match as dict keys do (np.int64(1), True are the key 1; 2.0 is the key 2), as they
    # do in an int or float column: the groups do not depend on the dtype numpy inferred
    assert {k: len(v["g"]) for k, v in t({"g": col}).items()} == {1: 2, 2: 2}
    assert {k: len(v["g"]) for k, v in t({"g": np.array([1, 2, 2, 1])}).items()} == {1: 2, 2: 2}


def test_ints_beyond_2_53_match_float_keys_exactly() -> None:
    # as an object column (and a dict) matches them: 2^53 + 1 is not the float 2^53
    t = dp.t.make_partition_by(FRAME, SYM, by="g", keys=[2.0**53, 0.5])
    for col in (np.array([2**53 + 1, 2**53, 3]), np.array([2**53 + 1, 2**53, 3], dtype=object)):
        assert {k: len(v["g"]) for k, v in t({"g": col}).items()} == {2.0**53: 1, 0.5: 0}
