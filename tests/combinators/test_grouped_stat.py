"""The law of each group's release: discrete Laplace on grouped counts, Laplace on grouped
sums, independent across groups.  n is fixed up front, α is the suite's ``ALPHA``; scale × 0.7
and × 1.3 are rejected (also at ``OPENDP_LITE_TEST_ALPHA=1e-9``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from scipy import stats

import opendp_lite.prelude as dp
from tests.conftest import scaled
from tests.stat._reference import (
    assert_fits,
    assert_within,
    check_continuous,
    check_integer_law,
    chi2_pvalue,
    discrete_gaussian_pmf,
    discrete_laplace_pmf,
)

GROUPS = 40
KEYS = [f"k{i}" for i in range(GROUPS)]
TRUE = {k: 3 * i for i, k in enumerate(KEYS)}  # group k_i has 3·i rows
DATA = {
    "g": [k for k in KEYS for _ in range(TRUE[k])],
    "x": [float(i % 7) for i, k in enumerate(KEYS) for _ in range(TRUE[k])],
}


def discrete_laplace_pvalue(z: np.ndarray, scale: float) -> float:
    """χ² of integer noise against 𝓛_ℤ(scale), bins -B..B and two tails."""
    b = int(4 * scale)
    pmf = discrete_laplace_pmf(scale)
    probs = [pmf(k) for k in range(-b, b + 1)]
    tail = (1 - sum(probs)) / 2
    obs = [int(np.sum(z < -b))] + [int(np.sum(z == k)) for k in range(-b, b + 1)]
    obs.append(int(np.sum(z > b)))
    return chi2_pvalue(obs, [tail, *probs, tail])


def assert_uncorrelated(z: np.ndarray) -> None:
    """Neighbouring groups' noises (columns j and j + 1) are uncorrelated at level ALPHA: under
    independence √n·r is about standard normal."""
    r = np.corrcoef(z[:, :-1].ravel(), z[:, 1:].ravel())[0, 1]
    assert_within(float(r), 0.0, 1 / math.sqrt(z[:, 1:].size), "(neighbouring groups' noises)")


def noise_of_counts(releases: int, epsilon: float) -> np.ndarray:
    out = []
    for _ in range(releases):
        r = dp.c.grouped_count(DATA, by="g", epsilon=epsilon, keys=KEYS)
        assert list(r) == KEYS  # labelled, in key order
        out.append([r[k] - TRUE[k] for k in KEYS])
    return np.array(out)


def test_grouped_count_is_discrete_laplace_per_group() -> None:
    z = noise_of_counts(250, epsilon=0.5)  # scale = l1 sensitivity 1 / ε = 2
    check_integer_law(
        z.ravel(), discrete_laplace_pmf(2.0), [discrete_laplace_pmf(2.0 * f) for f in (0.7, 1.3)]
    )
    # each group on its own has the law too (smallest and largest group)
    for j in (0, GROUPS - 1):
        assert_fits(discrete_laplace_pvalue(z[:, j], 2.0))
    assert_uncorrelated(z)  # independent across groups


def test_grouped_sum_is_laplace_per_group() -> None:
    bounds = (0.0, 10.0)
    rows = list(zip(DATA["g"], DATA["x"], strict=True))
    sums = {k: sum(min(max(v, 0.0), 10.0) for g, v in rows if g == k) for k in KEYS}
    part = dp.t.make_partition_by(dp.dataframe_domain(), dp.symmetric_distance(), "g", KEYS)
    scale = (part >> dp.t.then_grouped_sum("x", bounds)).map(1) / 1.0  # ε = 1
    z = []
    for _ in range(250):
        r = dp.c.grouped_sum(DATA, by="g", column="x", bounds=bounds, epsilon=1.0, keys=KEYS)
        z.extend(r[k] - sums[k] for k in KEYS)
    arr = np.array(z)
    wrong = [stats.laplace(scale=scale * f).cdf for f in (0.7, 1.3)]
    check_continuous(arr, stats.laplace(scale=scale).cdf, wrong, symmetric_about=0.0)


@pytest.mark.slow
def test_grouped_count_on_dask_has_the_same_law() -> None:
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    import dask

    ddf = dd.from_pandas(pd.DataFrame(DATA), npartitions=3)
    releases = scaled(400, minimum=100)
    out: list[Any] = []
    with dask.config.set(scheduler="sync"):
        for _ in range(releases):
            r = dp.c.grouped_count(ddf, by="g", epsilon=0.5, keys=KEYS)
            out.extend(r[k] - TRUE[k] for k in KEYS)
    z = np.array(out)
    check_integer_law(
        z, discrete_laplace_pmf(2.0), [discrete_laplace_pmf(2.0 * f) for f in (0.7, 1.3)]
    )


def test_make_grouped_runs_the_inner_law_on_each_group() -> None:
    """A measurement mapped over the groups: each group's release has the inner law, with
    independent noise per group."""
    inner = (
        dp.t.make_select_column("x", TOA=float)
        >> dp.t.then_count()
        >> dp.m.then_gaussian(1.5, MO="ZeroConcentratedDivergence")
    )
    part = dp.t.make_partition_by(dp.dataframe_domain(), dp.symmetric_distance(), "g", KEYS)
    m = part >> dp.c.then_grouped(inner)
    out = np.array([[r[k] - TRUE[k] for k in KEYS] for r in (m(DATA) for _ in range(250))])
    wrong = [discrete_gaussian_pmf(1.5 * f) for f in (0.7, 1.3)]
    check_integer_law(out.ravel(), discrete_gaussian_pmf(1.5), wrong)
    assert_uncorrelated(out)
