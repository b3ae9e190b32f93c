"""The law of a grouped table release, per group: the noise added to each group's count is
discrete Laplace of the scale the query reports (``summarize``), under pure DP; scale × 0.7 and
× 1.3 are rejected.  One release of many groups gives the sample (the groups' noises are iid),
so the whole path (plan, Polars engine, key join, noise, assembly) is under test."""

from __future__ import annotations

import polars as pl

import opendp_lite.prelude as dp
from tests.conftest import scaled
from tests.stat._reference import check_integer_law, discrete_gaussian_pmf, discrete_laplace_pmf

GROUPS = scaled(30_000, minimum=12_000)


def test_grouped_count_noise_is_discrete_laplace_per_group() -> None:
    # group k has k % 5 rows: known exact counts, empty groups among them (from the keys)
    rows = [k for k in range(GROUPS) for _ in range(k % 5)]
    context = dp.Context.compositor(
        data=pl.LazyFrame({"g": rows}, schema={"g": pl.Int64}),
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=0.5),
        split_evenly_over=1,
    )
    keys = pl.DataFrame({"g": list(range(GROUPS))}, schema={"g": pl.Int64})
    query = context.query().group_by("g").agg(dp.len(signed=True)).with_keys(keys)
    scale = query.summarize()["scale"][0]
    assert scale == 2.0  # sensitivity 1 / ε
    out = query.release().collect()
    assert out["g"].to_list() == list(range(GROUPS))
    z = [v - k % 5 for k, v in zip(out["g"].to_list(), out["len"].to_list(), strict=True)]
    check_integer_law(
        z, discrete_laplace_pmf(scale), [discrete_laplace_pmf(scale * f) for f in (0.7, 1.3)]
    )


def test_grouped_integer_sum_noise_is_discrete_gaussian_per_group_under_zcdp() -> None:
    # group k holds the values 0..(k % 4), each clipped to [0, 3]: known exact sums
    g = [k for k in range(GROUPS) for _ in range(k % 4 + 1)]
    x = [j for k in range(GROUPS) for j in range(k % 4 + 1)]
    context = dp.Context.compositor(
        data=pl.LazyFrame({"g": g, "x": x}, schema={"g": pl.Int64, "x": pl.Int64}),
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(rho=0.5),
        split_evenly_over=1,
        margins=[dp.polars.Margin(max_length=10 * GROUPS)],
    )
    keys = pl.DataFrame({"g": list(range(GROUPS))}, schema={"g": pl.Int64})
    query = context.query().group_by("g").agg(pl.col("x").dp.sum((0, 3))).with_keys(keys)
    summary = query.summarize()
    assert summary["distribution"][0] == "Integer Gaussian"
    scale = summary["scale"][0]
    assert 2.9 < scale < 3.1  # sensitivity 3 (one row of at most 3), rho = 0.5: 3 / sqrt(2·0.5)
    out = query.release().collect()
    assert out["g"].to_list() == list(range(GROUPS))
    truth = [sum(range(k % 4 + 1)) for k in range(GROUPS)]
    z = [v - t for v, t in zip(out["x"].to_list(), truth, strict=True)]
    check_integer_law(
        z, discrete_gaussian_pmf(scale), [discrete_gaussian_pmf(scale * f) for f in (0.7, 1.3)]
    )


def test_noise_of_an_exact_length_is_discrete_gaussian_per_group_under_zcdp() -> None:
    # pl.len().dp.noise(): OpenDP's spelling of a noisy count, Gaussian under zCDP; released
    # unsigned (clamped at 0, as OpenDP), so every group holds 20 to 22 rows: far from 0
    rows = [k for k in range(GROUPS) for _ in range(20 + k % 3)]
    context = dp.Context.compositor(
        data=pl.LazyFrame({"g": rows}, schema={"g": pl.Int64}),
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(rho=0.125),
        split_evenly_over=1,
    )
    keys = pl.DataFrame({"g": list(range(GROUPS))}, schema={"g": pl.Int64})
    query = context.query().group_by("g").agg(pl.len().dp.noise()).with_keys(keys)
    summary = query.summarize()
    assert summary["distribution"][0] == "Integer Gaussian"
    scale = summary["scale"][0]
    assert 1.99 < scale < 2.01  # sensitivity 1, rho = 1/8: 1 / sqrt(2/8)
    out = query.release().collect()
    assert out["g"].to_list() == list(range(GROUPS))
    z = [v - 20 - k % 3 for k, v in zip(out["g"].to_list(), out["len"].to_list(), strict=True)]
    check_integer_law(
        z, discrete_gaussian_pmf(scale), [discrete_gaussian_pmf(scale * f) for f in (0.7, 1.3)]
    )


def test_grouped_float_sum_noise_is_laplace_per_group() -> None:
    # group k holds the floats 0.0..(k % 4): integers, exact on every grid, so the release minus
    # the true sum is the noise alone (Laplace on a grid far finer than its scale)
    from scipy import stats

    from tests.stat._reference import check_continuous

    g = [k for k in range(GROUPS) for _ in range(k % 4 + 1)]
    x = [float(j) for k in range(GROUPS) for j in range(k % 4 + 1)]
    context = dp.Context.compositor(
        data=pl.LazyFrame({"g": g, "x": x}, schema={"g": pl.Int64, "x": pl.Float64}),
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=1,
        margins=[dp.polars.Margin(max_length=10 * GROUPS)],
    )
    keys = pl.DataFrame({"g": list(range(GROUPS))}, schema={"g": pl.Int64})
    query = context.query().group_by("g").agg(pl.col("x").dp.sum((0.0, 3.0))).with_keys(keys)
    summary = query.summarize()
    assert summary["distribution"][0] == "Float Laplace"
    scale = summary["scale"][0]
    assert 3.0 <= scale < 3.01  # sensitivity 3 (and its float rounding term), epsilon 1
    out = query.release().collect()
    assert out["g"].to_list() == list(range(GROUPS))
    truth = [float(sum(range(k % 4 + 1))) for k in range(GROUPS)]
    z = [v - t for v, t in zip(out["x"].to_list(), truth, strict=True)]
    wrong = [stats.laplace(scale=scale * f).cdf for f in (0.7, 1.3)]
    check_continuous(z, stats.laplace(scale=scale).cdf, wrong, symmetric_about=0.0)
