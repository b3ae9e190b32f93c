"""Neighbouring-dataset helpers for the part-A transformation tests, and tests of
``opendp_lite.transformations._rowwise`` (exact uniform permutations, metric checks).

The helpers compute the *actual* distance between two datasets under each dataset metric, so
property tests can check ``metric_out(f(x), f(x')) <= map(metric_in(x, x'))`` on random
neighbours.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import strategies as st

from opendp_lite.errors import InvalidParameter, NotImplementedForType
from opendp_lite.samplers.rng import scripted_randomness
from opendp_lite.samplers.uniform import sample_uniform_below
from opendp_lite.transformations._rowwise import check_metric, uniform_permutation, uniform_prefix
from tests.conftest import ALPHA
from tests.stat._reference import assert_fits, chi2_pvalue

NAN_KEY = ("<nan>",)


def key(v: Any) -> Any:
    """A hashable, equality-faithful key for one record (NaN equals NaN as a *record*)."""
    if isinstance(v, np.ndarray):
        return tuple(key(x) for x in v.tolist())
    if isinstance(v, (list, tuple)):
        return tuple(key(x) for x in v)
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return NAN_KEY
    if isinstance(v, bool):
        return ("bool", v)
    return v


def records(x: Any) -> list[Any]:
    if isinstance(x, dict):  # a dataframe: its records are its rows
        cols = list(x)
        n = len(x[cols[0]]) if cols else 0
        return [tuple(key(x[c][i]) for c in cols) for i in range(n)]
    return [key(v) for v in list(x)]


def symmetric(a: Any, b: Any) -> int:
    ca, cb = Counter(records(a)), Counter(records(b))
    return sum(((ca - cb) + (cb - ca)).values())


def insert_delete(a: Any, b: Any) -> int:
    ra, rb = records(a), records(b)
    # |a| + |b| − 2·LCS(a, b)
    prev = [0] * (len(rb) + 1)
    for x in ra:
        cur = [0]
        for j, y in enumerate(rb):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return len(ra) + len(rb) - 2 * prev[-1]


def hamming(a: Any, b: Any) -> int:
    ra, rb = records(a), records(b)
    assert len(ra) == len(rb)
    return sum(x != y for x, y in zip(ra, rb, strict=True))


def change_one(a: Any, b: Any) -> int:
    assert len(records(a)) == len(records(b))
    return symmetric(a, b) // 2


DISTANCE: dict[str, Callable[[Any, Any], int]] = {
    "SymmetricDistance": symmetric,
    "InsertDeleteDistance": insert_delete,
    "ChangeOneDistance": change_one,
    "HammingDistance": hamming,
}


def distance(metric: object, a: Any, b: Any) -> int:
    return DISTANCE[type(metric).__name__](a, b)


@st.composite
def neighbours(
    draw: st.DrawFn, elements: st.SearchStrategy[Any], metric: str, max_size: int = 12
) -> tuple[list[Any], list[Any]]:
    """A dataset and a neighbour made by a few edits of the kind ``metric`` counts."""
    x = draw(st.lists(elements, max_size=max_size))
    y = list(x)
    edits = draw(st.integers(0, 4))
    for _ in range(edits):
        if metric in ("SymmetricDistance", "InsertDeleteDistance"):
            if y and draw(st.booleans()):
                del y[draw(st.integers(0, len(y) - 1))]
            else:
                y.insert(draw(st.integers(0, len(y))), draw(elements))
        elif y:
            y[draw(st.integers(0, len(y) - 1))] = draw(elements)
    if metric in ("SymmetricDistance", "ChangeOneDistance"):
        y = draw(st.permutations(y))  # order carries no meaning: any order is a neighbour
    return x, list(y)


def check_stable(trans: Any, x: Sequence[Any], y: Sequence[Any]) -> None:
    """Assert ``d_out(f(x), f(y)) <= map(d_in(x, y))`` for a deterministic transformation."""
    d_in = distance(trans.input_metric, x, y)
    fx, fy = trans(x), trans(y)
    assert distance(trans.output_metric, fx, fy) <= trans.map(d_in)
    assert trans.output_domain.member(fx) and trans.output_domain.member(fy)


# -- tests of _rowwise ---------------------------------------------------------------------


def _perm_counts(n_draws: int, sampler: Callable[[], Sequence[int]]) -> Counter[tuple[int, ...]]:
    return Counter(tuple(int(i) for i in sampler()) for _ in range(n_draws))


def _chi2_uniform_pvalue(counts: Counter[tuple[int, ...]], k: int, n: int) -> float:
    """The χ² test's p-value of uniformity over ``k`` outcomes (unseen count 0)."""
    observed = list(counts.values()) + [0] * (k - len(counts))
    assert sum(observed) == n
    return chi2_pvalue(observed, [1.0] * k)


# 3! = 6 outcomes, ~3300 expected per cell: the 0.7 control's non-centrality is about 250,
# rejected at ALPHA = 1e-9 with margin (at 6000 draws, about 75: short at 1e-9)
ALPHA_N = 20_000


def test_uniform_permutation_is_uniform_and_a_biased_law_is_rejected() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with scripted_randomness(seed=b"perm-uniform"):
            good = _perm_counts(ALPHA_N, lambda: uniform_permutation(3))
            assert set(good) == {
                (0, 1, 2),
                (0, 2, 1),
                (1, 0, 2),
                (1, 2, 0),
                (2, 0, 1),
                (2, 1, 0),
            }
            assert_fits(_chi2_uniform_pvalue(good, 6, ALPHA_N))

            # wrong laws: the identity is 1.3× (resp. 0.7×) as likely as it should be
            def biased(weight: float) -> Callable[[], Sequence[int]]:
                def draw() -> Sequence[int]:
                    perm = uniform_permutation(3).tolist()
                    u = sample_uniform_below(1000) / 1000  # the same law as perm(1000)[0]/1000
                    if weight > 1 and perm != [0, 1, 2] and u < (weight - 1) / 5:
                        return [0, 1, 2]
                    if weight < 1 and perm == [0, 1, 2] and u < 1 - weight:
                        return uniform_permutation(3).tolist()
                    return perm

                return draw

            for w in (1.3, 0.7):
                assert _chi2_uniform_pvalue(_perm_counts(ALPHA_N, biased(w)), 6, ALPHA_N) < ALPHA


def test_uniform_permutation_edge_cases() -> None:
    assert uniform_permutation(0).tolist() == []
    assert uniform_permutation(1).tolist() == [0]
    big = uniform_permutation(10_000)
    assert sorted(big.tolist()) == list(range(10_000))
    with pytest.raises(InvalidParameter):
        uniform_permutation(-1)


def test_uniform_permutation_rejects_colliding_keys() -> None:
    # a scripted stream whose first 2 words collide forces one rejection, then succeeds
    stream = iter([b"\x00" * 16, bytes(range(16))])

    def source(n: int) -> bytes:
        return next(stream)[:n]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with scripted_randomness(source):
            assert sorted(uniform_permutation(2).tolist()) == [0, 1]


def test_check_metric_names_the_constructor() -> None:
    import opendp_lite.prelude as dp

    with pytest.raises(NotImplementedForType, match="make_x"):
        check_metric("make_x", dp.absolute_distance(T=int), (type(dp.symmetric_distance()),))


def test_distance_helpers() -> None:
    assert symmetric([1, 2, 2], [2, 1]) == 1
    assert insert_delete([1, 2, 3, 4], [2, 3, 4, 1]) == 2
    assert hamming([1, 2, 3, 4], [2, 3, 4, 1]) == 4
    assert change_one([1, 2], [2, 3]) == 1
    assert symmetric([float("nan")], [float("nan")]) == 0


def test_uniform_prefix_is_uniform_over_ordered_subsets_and_a_biased_law_is_rejected() -> None:
    n_draws = 24_000  # 4·3 = 12 ordered pairs, ~2000 expected per cell, α = ALPHA
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with scripted_randomness(seed=b"prefix-uniform"):
            good = _perm_counts(n_draws, lambda: uniform_prefix(4, 2))
            assert len(good) == 12 and all(a != b for a, b in good)
            assert_fits(_chi2_uniform_pvalue(good, 12, n_draws))
            for w in (1.3, 0.7):  # the pair (0, 1) w× as likely as it should be
                bad = Counter(good)
                bad[(0, 1)] = int(bad[(0, 1)] * w)
                total = sum(bad.values())
                assert _chi2_uniform_pvalue(bad, 12, total) < ALPHA


def test_uniform_prefix_edges_and_rejection() -> None:
    assert uniform_prefix(5, 0).tolist() == []
    assert sorted(uniform_prefix(5, 5).tolist()) == [0, 1, 2, 3, 4]
    big = uniform_prefix(100_000, 1000)
    assert len(set(big.tolist())) == 1000
    with pytest.raises(InvalidParameter):
        uniform_prefix(3, 4)
    # first draw: all keys equal (rejected: the boundary ties); then distinct keys
    stream = iter([b"\x00" * 24, bytes(range(24))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with scripted_randomness(lambda n: next(stream)[:n]):
            out = uniform_prefix(3, 1).tolist()
    assert len(out) == 1 and 0 <= out[0] < 3
