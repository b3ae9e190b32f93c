"""make_resize: exact size, padding, truncation to a uniform subset, 2·d_in stability."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendp_lite.prelude as dp
from opendp_lite.errors import InvalidParameter, NotImplementedForType, NotInDomain
from tests.conftest import ALPHA
from tests.stat._reference import assert_fits, chi2_power
from tests.transformations.test_rowwise import check_stable, neighbours, symmetric

V = dp.vector_domain(dp.atom_domain(T=int))
ints = st.integers(0, 5)


@pytest.mark.parametrize("MO", ["SymmetricDistance", "InsertDeleteDistance"])
@settings(max_examples=80, deadline=None)
@given(data=st.data(), size=st.integers(1, 8))
def test_insert_delete_input_is_deterministic_and_stable(
    MO: str, data: st.DataObject, size: int
) -> None:
    t = dp.t.make_resize(V, dp.insert_delete_distance(), size, -1, MO=MO)
    x, y = data.draw(neighbours(ints, "InsertDeleteDistance"))
    check_stable(t, x, y)
    assert len(t(x)) == size


@settings(max_examples=60, deadline=None)
@given(x=st.lists(ints, max_size=12), size=st.integers(1, 8))
def test_symmetric_input_output_is_subset_or_padded(x: list[int], size: int) -> None:
    t = dp.t.make_resize(V, dp.symmetric_distance(), size, -1)
    out = t(x)
    assert len(out) == size
    if len(x) >= size:
        assert not Counter(out) - Counter(x)  # a sub-multiset of the input
    else:
        assert Counter(out) == Counter(x) + Counter({-1: size - len(x)})


@settings(max_examples=60, deadline=None)
@given(data=st.data(), size=st.integers(1, 8))
def test_symmetric_input_padding_regime_is_stable(data: st.DataObject, size: int) -> None:
    # when both neighbours are no longer than size the output multiset is deterministic
    x, y = data.draw(neighbours(ints, "SymmetricDistance", max_size=size))
    x, y = x[:size], y[:size]
    t = dp.t.make_resize(V, dp.symmetric_distance(), size, -1)
    assert symmetric(t(x), t(y)) <= t.map(symmetric(x, y))


def _chi2_power(n: int, shift: float, alpha: float) -> float:
    """Power of Pearson's test at level ``alpha`` (6 cells, df 5) against the tables below:
    ``n`` uniform draws with one cell shifted by ``shift * n / 6`` (the noncentral chi-square
    approximation of the shifted multinomial)."""
    c = int(shift * n / 6)
    total = n + c
    p = [(n / 6 + c) / total] + [(n / 6) / total] * 5
    return chi2_power(total, p, [1 / 6] * 6, alpha)


def test_truncation_subset_is_uniform() -> None:
    from scipy import stats

    # n is chosen so that both wrong laws are rejected with power >= 0.9999 at the suite level
    # (at n = 3000, alpha = 1e-3 the x1.3 control was rejected with power 0.967 only)
    n, alpha = 10_000, ALPHA
    assert min(_chi2_power(n, 0.3, alpha), _chi2_power(n, -0.3, alpha)) >= 0.9999
    t = dp.t.make_resize(V, dp.symmetric_distance(), 2, 0)
    counts = Counter(tuple(sorted(t([1, 2, 3, 4]))) for _ in range(n))
    assert len(counts) == 6  # all C(4, 2) subsets
    assert_fits(stats.chisquare(list(counts.values())).pvalue)
    # wrong laws: one subset (1, 2) kept 1.3 or 0.7 times as often as the others
    for shift in (0.3, -0.3):
        wrong = Counter(counts)
        wrong[(1, 2)] += int(shift * n / 6)
        assert stats.chisquare(list(wrong.values())).pvalue < alpha, shift


def test_values_and_domains() -> None:
    t = dp.t.make_resize(
        dp.vector_domain(dp.atom_domain(T=str)), dp.insert_delete_distance(), 3, "?"
    )
    assert t(["a"]) == ["a", "?", "?"]
    assert t(["a", "b", "c", "d"]) == ["a", "b", "c"]
    f = dp.t.make_resize(
        dp.vector_domain(dp.atom_domain(bounds=(0.0, 1.0))), dp.symmetric_distance(), 4, 0.5
    )
    assert f.output_domain == dp.vector_domain(dp.atom_domain(bounds=(0.0, 1.0)), size=4)
    assert f(np.array([0.1])).dtype == np.float64


def test_typed_errors() -> None:
    sd = dp.symmetric_distance()
    for size in (0, -1, 1.5, True, "3"):
        with pytest.raises(InvalidParameter):
            dp.t.make_resize(V, sd, size, 0)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameter):  # constant outside the element domain
        dp.t.make_resize(dp.vector_domain(dp.atom_domain(bounds=(0, 9))), sd, 3, 10)
    with pytest.raises(InvalidParameter):
        dp.t.make_resize(V, sd, 3, 0.5)
    with pytest.raises(NotImplementedForType):
        dp.t.make_resize(V, dp.change_one_distance(), 3, 0)
    with pytest.raises(NotImplementedForType):
        dp.t.make_resize(V, sd, 3, 0, MO="HammingDistance")
    with pytest.raises(NotInDomain):
        dp.t.make_resize(V, sd, 3, 0)(5)


def test_matches_opendp() -> None:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    for m, om in (
        (dp.symmetric_distance(), odp.symmetric_distance()),
        (dp.insert_delete_distance(), odp.insert_delete_distance()),
    ):
        for MO in ("SymmetricDistance", "InsertDeleteDistance"):
            ours = dp.t.make_resize(V, m, 3, 0, MO=MO)
            theirs = odp.t.make_resize(odp.vector_domain(odp.atom_domain(T=int)), om, 3, 0, MO=MO)
            assert [ours.map(d) for d in range(25)] == [theirs.map(d) for d in range(25)]
            assert repr(ours.output_domain) == repr(theirs.output_domain)
            assert repr(ours.output_metric) == repr(theirs.output_metric)
            if isinstance(m, type(dp.insert_delete_distance())):
                # OpenDP shuffles here too; we keep the order (both 2-stable, see the proof)
                for x in ([1, 2, 3, 4, 5], [5, 4, 3], [7]):
                    assert len(ours(x)) == len(theirs(x)) == 3
                assert sorted(ours([5, 4, 3])) == sorted(theirs([5, 4, 3]))
