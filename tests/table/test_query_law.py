"""The law of a grouped table release, per group: the noise added to each group's count is
discrete Laplace of the scale the query reports (``summarize``), under pure DP; scale × 0.7 and
× 1.3 are rejected.  One release of many groups gives the sample (the groups' noises are iid),
so the whole path (plan, Polars engine, key join, noise, assembly) is under test."""

from __future__ import annotations

import polars as pl

import opendp_lite.prelude as dp
from tests.conftest import scaled
from tests.stat._reference import check_integer_law, discrete_laplace_pmf

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
