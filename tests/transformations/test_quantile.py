"""Quantile scores, CDF and quantiles from counts: values vs OpenDP 0.16, the law, errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendp_lite.prelude as dp
from opendp_lite.errors import FailedFunction, InvalidParameter, NotImplementedForType

SYM = dp.symmetric_distance()
CANDS = [0.0, 1.0, 2.0, 3.0]


def space(size: int | None = None, T: object = float) -> tuple[object, object]:
    return dp.vector_domain(dp.atom_domain(T=T, nan=False), size=size), SYM


def test_scores_and_maps() -> None:
    t = space() >> dp.t.then_quantile_score_candidates(CANDS, alpha=0.5)
    assert t([0.5, 1.5, 1.5, 2.5, 2.7, 0.1]) == [6, 2, 2, 6]
    assert t.output_domain == dp.vector_domain(dp.atom_domain(T="u64"), size=4)
    assert t.output_metric == dp.linf_distance(T="u64")
    assert [t.map(d) for d in (0, 1, 3)] == [0, 1, 3]
    t3 = space() >> dp.t.then_quantile_score_candidates(CANDS, alpha=0.3)
    assert t3.map(1) == 7  # alpha = 3/10: max(3, 7)
    third = space() >> dp.t.then_quantile_score_candidates(CANDS, alpha=1 / 3)
    assert third.map(1) == 2  # 1/3 is represented exactly
    sized = space(6) >> dp.t.then_quantile_score_candidates(CANDS, alpha=0.3)
    assert [sized.map(d) for d in (1, 2, 4)] == [0, 10, 20]
    ints = space(T=int) >> dp.t.then_quantile_score_candidates([0, 5, 10], alpha=0.5)
    assert ints([1, 2, 7, 12]) == [4, 0, 2]


@pytest.mark.parametrize("alpha", [0.5, 0.25, 0.3, 0.9])
def test_scores_proportional_to_opendp(alpha: float) -> None:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 4, 50).tolist()
    ours = dp.t.make_quantile_score_candidates(*space(), CANDS, alpha)
    theirs = odp.t.make_quantile_score_candidates(
        odp.vector_domain(odp.atom_domain(T=float, nan=False)),
        odp.symmetric_distance(),
        CANDS,
        alpha,
    )
    # both are den·|(1−α)·lt − α·gt| for some den: the ratio score/map is the same
    a, b = ours(x), theirs(x)
    for sa, sb in zip(a, b, strict=True):
        assert sa * theirs.map(1) == sb * ours.map(1)


@settings(max_examples=200, deadline=None)
@given(
    x=st.lists(st.floats(-2.0, 5.0), max_size=25),
    removed=st.integers(0, 25),
    added=st.lists(st.floats(-2.0, 5.0), max_size=5),
    alpha=st.floats(0.0, 1.0),
)
def test_score_stability_law(
    x: list[float], removed: int, added: list[float], alpha: float
) -> None:
    removed = min(removed, len(x))
    x2 = x[removed:] + added
    d = removed + len(added)
    t = dp.t.make_quantile_score_candidates(*space(), CANDS, alpha)
    diff = np.abs(np.asarray(t(x), np.int64) - np.asarray(t(x2), np.int64)).max()
    assert diff <= t.map(d)


@settings(max_examples=100, deadline=None)
@given(data=st.data(), alpha=st.floats(0.0, 1.0))
def test_sized_score_stability_law(data: st.DataObject, alpha: float) -> None:
    x = data.draw(st.lists(st.floats(-2.0, 5.0), min_size=1, max_size=20))
    k = data.draw(st.integers(0, len(x)))
    x2 = list(x)
    for i in range(k):
        x2[i] = data.draw(st.floats(-2.0, 5.0))
    t = dp.t.make_quantile_score_candidates(*space(len(x)), CANDS, alpha)
    diff = np.abs(np.asarray(t(x), np.int64) - np.asarray(t(x2), np.int64)).max()
    assert diff <= t.map(2 * k)


def test_cdf_and_quantiles_match_opendp() -> None:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    rng = np.random.default_rng(9)
    for _ in range(30):
        k = int(rng.integers(1, 8))
        counts = rng.random(k).tolist()
        edges = np.cumsum(rng.random(k + 1)).tolist()
        alphas = sorted(rng.random(4).tolist())
        for interp in ("linear", "nearest"):
            ours = dp.t.make_quantiles_from_counts(edges, alphas, interp)(counts)
            theirs = odp.t.make_quantiles_from_counts(edges, alphas, interp)(counts)
            assert np.allclose(ours, theirs, rtol=1e-12)
        assert np.allclose(dp.t.make_cdf()(counts), odp.t.make_cdf()(counts), rtol=1e-12)


def test_quantiles_from_counts_values_and_errors() -> None:
    f = dp.t.make_quantiles_from_counts([0.0, 1.0, 2.0, 3.0, 4.0], [0.0, 0.25, 0.5, 1.0])
    assert f([1.0, 2.0, 3.0, 4.0]) == pytest.approx([0.0, 1.75, 2 + 2 / 3, 4.0])
    assert f([-5.0, 1.0, 0.0, 1.0]) == pytest.approx([0.0, 1.5, 2.0, 4.0])  # negatives as 0
    fi = dp.t.make_quantiles_from_counts([0, 10, 20], [0.5], TA=int)
    assert fi([1.0, 1.0]) == [10]
    with pytest.raises(InvalidParameter):
        dp.t.make_quantiles_from_counts([1.0, 0.0], [0.5])
    with pytest.raises(InvalidParameter):
        dp.t.make_quantiles_from_counts([0.0, 1.0], [0.7, 0.2])
    with pytest.raises(InvalidParameter):
        dp.t.make_quantiles_from_counts([0.0, 1.0], [0.5], interpolation="cubic")
    with pytest.raises(FailedFunction):
        f([1.0, 2.0])  # wrong number of counts
    with pytest.raises(FailedFunction):
        f([0.0, 0.0, 0.0, 0.0])
    with pytest.raises(FailedFunction):
        dp.t.make_cdf()([0.0, -1.0])
    with pytest.raises(NotImplementedForType):
        dp.t.make_cdf(TA=int)


def test_score_errors() -> None:
    with pytest.raises(InvalidParameter):
        dp.t.make_quantile_score_candidates(*space(), [1.0, 0.0], 0.5)
    with pytest.raises(InvalidParameter):
        dp.t.make_quantile_score_candidates(*space(), CANDS, 1.5)
    with pytest.raises(InvalidParameter):
        dp.t.make_quantile_score_candidates(*space(T=int), [0.5], 0.5)
    with pytest.raises(NotImplementedForType):
        dp.t.make_quantile_score_candidates(
            dp.vector_domain(dp.atom_domain(T=float, nan=True)), SYM, CANDS, 0.5
        )
    with pytest.raises(NotImplementedForType):
        dp.t.make_quantile_score_candidates(*space(T=str), ["a"], 0.5)
