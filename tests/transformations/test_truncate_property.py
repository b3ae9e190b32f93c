"""Property: adding or removing one individual moves each pre-noise statistic of a truncated
chain within its map (count, clamped sum, the (sum, count) pair of a mean, counts per group),
with identifiers of mixed Python types, missing identifiers and group keys, and an
individual spread over many groups."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import opendp_lite.prelude as dp
from opendp_lite._order import group_key

IDS = st.one_of(
    st.integers(-3, 3),
    st.sampled_from([1.0, 2.5, True, False, None, float("nan"), "a", "b", (1, "x")]),
)
ROW = st.tuples(IDS, st.floats(-5, 15, allow_nan=False), st.sampled_from(["g1", "g2", "g3", None]))
KEEPS = st.sampled_from(["first", "last", "x", ["g", "x"]])
DF = dp.dataframe_domain()
LO, HI = 0.0, 10.0


def _frame(rows: list[tuple[Any, float, Any]]) -> dict[str, Any]:
    return {
        "id": np.array([r[0] for r in rows] + [0], dtype=object)[:-1],  # keep tuples whole
        "x": np.array([r[1] for r in rows], dtype=float),
        "g": np.array([r[2] for r in rows], dtype=object),
    }


def _stats(out: dict[str, Any]) -> tuple[int, float, list[int]]:
    x = np.clip(np.asarray(out["x"], dtype=float), LO, HI)
    groups = [sum(1 for g in out["g"].tolist() if g == k) for k in ("g1", "g2", "g3")]
    return len(x), float(x.sum()), groups


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(ROW, max_size=25),
    extra=st.lists(
        st.tuples(st.floats(-5, 15, allow_nan=False), st.sampled_from(["g1", "g2", "g3", None])),
        min_size=1,
        max_size=8,
    ),
    who=IDS,
    k=st.integers(1, 3),
    keep=KEEPS,
    perm_seed=st.integers(0, 2**32 - 1),
)
def test_one_individual_moves_each_statistic_within_the_map(
    rows: list[tuple[Any, float, Any]],
    extra: list[tuple[float, Any]],
    who: Any,
    k: int,
    keep: Any,
    perm_seed: int,
) -> None:
    # x' lacks individual `who` (every row whose id == who, by group key); x has it, with
    # its rows spread over many groups, inserted at shuffled positions
    me = group_key(who)
    without = [r for r in rows if group_key(r[0]) != me]
    mine = [(who, v, g) for v, g in extra]
    with_me = without + mine
    order = np.random.default_rng(perm_seed).permutation(len(with_me))  # test data only
    with_me = [with_me[i] for i in order]
    t = dp.t.make_truncate_per_id(DF, dp.symmetric_id_distance("id"), k=k, keep=keep)
    d_out = t.map(1)
    assert d_out == k
    n1, s1, g1 = _stats(t(_frame(with_me)))
    n0, s0, g0 = _stats(t(_frame(without)))
    # count: k·d; clamped sum: k·d·max(|L|, |U|); per group: the l1 of the changes is k·d
    assert 0 <= n1 - n0 <= d_out
    assert abs(s1 - s0) <= d_out * HI + 1e-9
    assert sum(abs(a - b) for a, b in zip(g1, g0, strict=True)) <= d_out
    # the mean's pre-noise pair moves within (k·U, k) as the composed map assumes
    assert abs(s1 - s0) <= k * HI + 1e-9 and abs(n1 - n0) <= k
    # sample: the same count exactly (min(k, |block|) rows of each block), sums within map
    ts = dp.t.make_truncate_per_id(DF, dp.symmetric_id_distance("id"), k=k)
    n1s, _, _ = _stats(ts(_frame(with_me)))
    n0s, _, _ = _stats(ts(_frame(without)))
    assert n1s - n0s == min(k, len(mine)) and n1s == n1 and n0s == n0
    # groups first, then rows: each group keeps at most k rows of the individual, in at most
    # 2 groups: the row count moves by at most k (2 groups, k rows in all)
    tg = dp.t.make_truncate_num_groups(
        DF, dp.symmetric_id_distance("id"), by="g", k=2, keep="first"
    )
    both = tg >> t
    assert both.map(1) == k
    n1g, _, gg1 = _stats(both(_frame(with_me)))
    n0g, _, gg0 = _stats(both(_frame(without)))
    assert 0 <= n1g - n0g <= k
    assert sum(abs(a - b) for a, b in zip(gg1, gg0, strict=True)) <= k
    cut = tg(_frame(with_me))
    mine_kept = [g for i, g in zip(cut["id"].tolist(), cut["g"].tolist(), strict=True)]
    assert (
        len(
            {
                group_key(g)
                for i, g in zip(cut["id"].tolist(), mine_kept, strict=True)
                if group_key(i) == me
            }
        )
        <= 2
    )


@settings(max_examples=40, deadline=None)
@given(rows=st.lists(ROW, max_size=25), extra=st.integers(1, 6), who=IDS)
def test_counts_per_id_move_by_one_entry(
    rows: list[tuple[Any, float, Any]], extra: int, who: Any
) -> None:
    me = group_key(who)
    without = [r for r in rows if group_key(r[0]) != me]
    with_me = without + [(who, 1.0, "g1")] * extra
    t = dp.t.make_count_per_id(DF, dp.symmetric_id_distance("id"))
    a = sorted(t(_frame(with_me)))
    b = sorted(t(_frame(without)))
    assert len(a) == len(b) + 1 and extra in a
    a.remove(extra)
    assert a == b
