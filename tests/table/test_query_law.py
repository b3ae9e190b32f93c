"""The law of a grouped table release, per group: the noise added to each group's aggregate
(``dp.len``, ``.dp.sum`` of integers and floats, ``.dp.null_count``, ``.dp.n_unique``,
``.dp.noise()`` of an exact ``len``/``count``/clipped ``sum``) is the law the query reports
(``summarize``: distribution and scale), Laplace under pure DP and Gaussian under zCDP; a
``.dp.mean`` is the quotient of its noisy sum and noisy length (both scales tested); a
``.dp.quantile``/``.dp.median`` picks each candidate with the exact probability of its
selection mechanism at the reported scale.  Scale × 0.7 and × 1.3 are rejected each time.
One release of many groups gives the sample (the groups' noises are iid), so the whole path
(plan, Polars engine, key join, noise, assembly) is under test."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
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


def _grouped(
    frame: dict[str, list[Any]], schema: dict[str, Any], loss: Any, max_length: bool = False
) -> Any:
    """A context over ``frame`` (one privacy unit, the whole budget on one query)."""
    margins = [dp.polars.Margin(max_length=100 * GROUPS)] if max_length else []
    return dp.Context.compositor(
        data=pl.LazyFrame(frame, schema=schema),
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=loss,
        split_evenly_over=1,
        margins=margins,
    )


def _keys(groups: int) -> pl.DataFrame:
    return pl.DataFrame({"g": list(range(groups))}, schema={"g": pl.Int64})


def test_noise_of_an_exact_count_is_discrete_laplace_per_group_under_pure_dp() -> None:
    # pl.col("x").count().dp.noise(): the non-null count, Laplace under pure DP; group k holds
    # 20 + k % 3 values and k % 2 nulls (not counted); released unsigned, far from 0
    g = [k for k in range(GROUPS) for _ in range(20 + k % 3 + k % 2)]
    x = [
        float(j) if j < 20 + k % 3 else None
        for k in range(GROUPS)
        for j in range(20 + k % 3 + k % 2)
    ]
    context = _grouped({"g": g, "x": x}, {"g": pl.Int64, "x": pl.Float64}, dp.loss_of(epsilon=0.5))
    query = (
        context.query().group_by("g").agg(pl.col("x").count().dp.noise()).with_keys(_keys(GROUPS))
    )
    summary = query.summarize()
    assert summary["distribution"][0] == "Integer Laplace"
    scale = summary["scale"][0]
    assert scale == 2.0  # sensitivity 1 / ε
    out = query.release().collect()
    assert out["g"].to_list() == list(range(GROUPS))
    z = [v - 20 - k % 3 for k, v in zip(out["g"].to_list(), out["x"].to_list(), strict=True)]
    check_integer_law(
        z, discrete_laplace_pmf(scale), [discrete_laplace_pmf(scale * f) for f in (0.7, 1.3)]
    )


def test_noise_of_an_exact_clipped_sum_is_discrete_gaussian_per_group_under_zcdp() -> None:
    # pl.col("x").clip(0, 3).sum().dp.noise(): the bounds are the clip's; group k holds the
    # values 0..(k % 4 + 2), the ones above 3 clipped to 3: known exact sums
    g = [k for k in range(GROUPS) for _ in range(k % 4 + 3)]
    x = [j for k in range(GROUPS) for j in range(k % 4 + 3)]
    context = _grouped(
        {"g": g, "x": x}, {"g": pl.Int64, "x": pl.Int64}, dp.loss_of(rho=0.5), max_length=True
    )
    expr = pl.col("x").clip(0, 3).sum().dp.noise()
    query = context.query().group_by("g").agg(expr).with_keys(_keys(GROUPS))
    summary = query.summarize()
    assert summary["distribution"][0] == "Integer Gaussian"
    scale = summary["scale"][0]
    assert 2.99 < scale < 3.01  # sensitivity 3, rho = 0.5: 3 / sqrt(2·0.5)
    out = query.release().collect()
    assert out["g"].to_list() == list(range(GROUPS))
    truth = [sum(min(j, 3) for j in range(k % 4 + 3)) for k in range(GROUPS)]
    z = [v - t for v, t in zip(out["x"].to_list(), truth, strict=True)]
    check_integer_law(
        z, discrete_gaussian_pmf(scale), [discrete_gaussian_pmf(scale * f) for f in (0.7, 1.3)]
    )


def test_null_count_noise_is_discrete_laplace_per_group() -> None:
    # group k holds k % 5 nulls among 3 values: .dp.null_count counts the nulls alone
    g = [k for k in range(GROUPS) for _ in range(3 + k % 5)]
    x = [1 if j < 3 else None for k in range(GROUPS) for j in range(3 + k % 5)]
    context = _grouped({"g": g, "x": x}, {"g": pl.Int64, "x": pl.Int64}, dp.loss_of(epsilon=0.5))
    expr = pl.col("x").dp.null_count(signed=True)
    query = context.query().group_by("g").agg(expr).with_keys(_keys(GROUPS))
    summary = query.summarize()
    assert summary["aggregate"][0] == "Null Count"
    assert summary["distribution"][0] == "Integer Laplace"
    scale = summary["scale"][0]
    assert scale == 2.0
    out = query.release().collect()
    assert out["g"].to_list() == list(range(GROUPS))
    z = [v - k % 5 for k, v in zip(out["g"].to_list(), out["x"].to_list(), strict=True)]
    check_integer_law(
        z, discrete_laplace_pmf(scale), [discrete_laplace_pmf(scale * f) for f in (0.7, 1.3)]
    )


def test_n_unique_noise_is_discrete_gaussian_per_group_under_zcdp() -> None:
    # group k holds k % 4 + 1 distinct values, each twice (and a null, counted as a value, as
    # Polars' n_unique counts it): the exact count is k % 4 + 2
    g = [k for k in range(GROUPS) for _ in range(2 * (k % 4 + 1) + 1)]
    x = [v for k in range(GROUPS) for v in [*(j // 2 for j in range(2 * (k % 4 + 1))), None]]
    context = _grouped({"g": g, "x": x}, {"g": pl.Int64, "x": pl.Int64}, dp.loss_of(rho=0.125))
    expr = pl.col("x").dp.n_unique(signed=True)
    query = context.query().group_by("g").agg(expr).with_keys(_keys(GROUPS))
    summary = query.summarize()
    assert summary["aggregate"][0] == "N Unique"
    assert summary["distribution"][0] == "Integer Gaussian"
    scale = summary["scale"][0]
    assert 1.99 < scale < 2.01  # sensitivity 1, rho = 1/8
    out = query.release().collect()
    assert out["g"].to_list() == list(range(GROUPS))
    z = [v - k % 4 - 2 for k, v in zip(out["g"].to_list(), out["x"].to_list(), strict=True)]
    check_integer_law(
        z, discrete_gaussian_pmf(scale), [discrete_gaussian_pmf(scale * f) for f in (0.7, 1.3)]
    )


MEAN_ROWS = 16


def _mean_cdf(n_rows: int, sum_scale: float, len_scale: float) -> Any:
    """The cdf of Q = (S + Z₁)/(N + Z₂), S = N = ``n_rows``, Z₁ ~ Laplace(sum_scale) and Z₂ ~
    discrete Laplace(len_scale) independent, as the engine divides (Float64): for a denominator
    m > 0, Pr[Q <= t] = Pr[S + Z₁ <= t·m]; for m < 0, Pr[S + Z₁ >= t·m]; for m = 0, Q = ±inf by
    the sign of S + Z₁.  The denominators with Pr[Z₂ = m − N] < 10⁻¹⁸ are left out."""
    pmf = discrete_laplace_pmf(len_scale)
    span = int(len_scale * 42) + 1  # Pr[|Z₂| > span] < 10⁻¹⁸
    ms = np.array([m for m in range(n_rows - span, n_rows + span + 1) if m != 0], dtype=float)
    w = np.array([pmf(int(m) - n_rows) for m in ms])
    w0 = pmf(-n_rows)
    neg = ms < 0

    def lap_cdf(y: Any) -> Any:  # Laplace(n_rows, sum_scale), without overflow
        u = (y - n_rows) / sum_scale
        half = 0.5 * np.exp(-np.abs(u))
        return np.where(u < 0, half, 1.0 - half)

    def exact(t: Any) -> Any:
        flat = np.asarray(t, dtype=float).reshape(-1, 1)
        with np.errstate(invalid="ignore"):
            c = lap_cdf(np.where(np.isfinite(flat), flat * ms[None, :], flat * np.sign(ms)))
        c = np.where(neg[None, :], 1.0 - c, c)
        out = np.sum(w[None, :] * c, axis=1)
        # m = 0: Q = -inf (S + Z₁ < 0) is <= every t; Q = +inf only at t = +inf
        p0 = float(lap_cdf(np.array(0.0)))
        return out + w0 * (p0 + (flat[:, 0] == np.inf) * (1.0 - p0))

    # where the sample lies (|Q − 1| < 2), the cdf is interpolated on a grid of step 10⁻³
    # (its error, about 10⁻⁶, is far below the KS distances at stake); elsewhere exact
    grid = np.linspace(-1.0, 3.0, 4001)
    on_grid = exact(grid)

    def cdf(t: Any) -> Any:
        t = np.asarray(t, dtype=float)
        flat = t.ravel()
        inside = (flat >= grid[0]) & (flat <= grid[-1])
        out = np.empty_like(flat)
        out[inside] = np.interp(flat[inside], grid, on_grid)
        if not inside.all():
            out[~inside] = exact(flat[~inside])
        return out.reshape(t.shape)

    return cdf


def test_grouped_mean_is_noisy_sum_over_noisy_length_per_group() -> None:
    # .dp.mean((0, 1)) of a column of ones: two items, the float sum (Laplace) and the length
    # (discrete Laplace), released as their quotient; the law of the quotient is the mixture
    # _mean_cdf at the two summarized scales.  Wrong laws: both scales × 0.7 and × 1.3, and the
    # length's scale alone × 0.5 and × 2 (the denominator's noise is tested too)
    from tests.stat._reference import check_continuous

    g = [k for k in range(GROUPS) for _ in range(MEAN_ROWS)]
    x = [1.0] * len(g)
    context = _grouped(
        {"g": g, "x": x}, {"g": pl.Int64, "x": pl.Float64}, dp.loss_of(epsilon=0.5), True
    )
    query = context.query().group_by("g").agg(pl.col("x").dp.mean((0.0, 1.0)))
    query = query.with_keys(_keys(GROUPS))
    summary = query.summarize()
    assert summary["aggregate"].to_list() == ["Sum", "Length"]
    assert summary["distribution"].to_list() == ["Float Laplace", "Integer Laplace"]
    sum_scale, len_scale = summary["scale"].to_list()
    assert 4.0 <= sum_scale < 4.01 and len_scale == 4.0  # ε = 1/s + 1/s: s = 4
    out = query.release().collect()
    assert out["g"].to_list() == list(range(GROUPS))
    z = out["x"].to_numpy()
    wrong = [_mean_cdf(MEAN_ROWS, sum_scale * f, len_scale * f) for f in (0.7, 1.3)]
    wrong += [_mean_cdf(MEAN_ROWS, sum_scale, len_scale * f) for f in (0.5, 2.0)]
    check_continuous(z, _mean_cdf(MEAN_ROWS, sum_scale, len_scale), wrong)


QGROUPS = scaled(10_000, minimum=5_000)
# each group holds 0..9: the candidates' counts #{x < c} and #{x > c}
QDATA = list(range(10))
QCANDIDATES = [1, 3, 4, 5, 6, 8]


def _scores(alpha_num: int, alpha_den: int) -> list[int]:
    """make_quantile_score_candidates' score |(den − num)·#{x < c} − num·#{x > c}|."""
    return [
        abs(
            (alpha_den - alpha_num) * sum(x < c for x in QDATA)
            - alpha_num * sum(x > c for x in QDATA)
        )
        for c in QCANDIDATES
    ]


def _gumbel_min_law(scores: list[int], scale: float) -> dict[int, float]:
    """The exponential mechanism: Pr[c_i] ∝ exp(−s_i/scale)."""
    w = np.exp(-(np.array(scores) - min(scores)) / scale)
    return {c: float(p) for c, p in zip(QCANDIDATES, w / w.sum(), strict=True)}


def _exponential_min_law(scores: list[int], scale: float) -> dict[int, float]:
    """Report-noisy-max of V_i = −s_i + E_i with E_i ~ Exp(scale) iid (permute-and-flip's law):
    Pr[c_i] = ∫ f_i(v)·Π_{j≠i} Pr[V_j < v] dv, f_i(v) = exp(−(v + s_i)/scale)/scale on
    v >= −s_i, by quadrature (the probabilities sum to 1 within 10⁻⁹, checked)."""
    from scipy import integrate

    def below(j: int, v: float) -> float:  # Pr[V_j < v]
        return 0.0 if v <= -scores[j] else 1.0 - math.exp(-(v + scores[j]) / scale)

    probs = []
    for i, s in enumerate(scores):

        def density(v: float, i: int = i, s: int = s) -> float:
            rest = math.prod(below(j, v) for j in range(len(scores)) if j != i)
            return math.exp(-(v + s) / scale) / scale * rest

        top = -min(scores) + 80 * scale  # the mass beyond is below e^-80
        kinks = sorted({float(-v) for v in scores if -s < -v < top})
        value, _ = integrate.quad(density, -s, top, points=kinks or None, limit=200)
        probs.append(value)
    assert abs(sum(probs) - 1) < 1e-9, sum(probs)
    return {c: p for c, p in zip(QCANDIDATES, probs, strict=True)}


def _quantile_release(loss: Any, expr: Any) -> tuple[float, list[int]]:
    g = [k for k in range(QGROUPS) for _ in QDATA]
    x = QDATA * QGROUPS
    context = _grouped({"g": g, "x": x}, {"g": pl.Int64, "x": pl.Int64}, loss)
    query = context.query().group_by("g").agg(expr).with_keys(_keys(QGROUPS))
    scale = float(query.summarize()["scale"][0])
    out = query.release().collect()
    assert out["g"].to_list() == list(range(QGROUPS))
    assert out["x"].dtype == pl.Int64
    return scale, out["x"].to_list()


def test_grouped_median_selects_by_exponential_noise_under_pure_dp() -> None:
    # .dp.median under pure DP: report-noisy-min of the scores with Exp(scale) noise in each
    # group; the frequencies of the candidates over the groups against the exact law
    from collections import Counter

    from tests.stat._reference import check_categorical

    scale, picks = _quantile_release(dp.loss_of(epsilon=1.0), pl.col("x").dp.median(QCANDIDATES))
    assert scale == 2.0  # ε = 2·Δ/scale with Δ = 1 (the score moves by 1 per row)
    scores = _scores(1, 2)
    assert scores == [7, 3, 1, 1, 3, 7]
    law = _exponential_min_law(scores, scale)
    wrong = [_exponential_min_law(scores, scale * f) for f in (0.7, 1.3)]
    check_categorical(Counter(picks), law, wrong)


def test_grouped_quantile_selects_by_gumbel_noise_under_zcdp() -> None:
    # .dp.quantile(0.25) under zCDP: the exponential mechanism (Gumbel noise) on the scores
    from collections import Counter

    from tests.stat._reference import check_categorical

    expr = pl.col("x").dp.quantile(0.25, QCANDIDATES)
    scale, picks = _quantile_release(dp.loss_of(rho=0.5), expr)
    assert scale == 3.0  # ρ = (2·Δ/scale)²/8 with Δ = max(1, 3) = 3
    scores = _scores(1, 4)
    assert scores == [5, 3, 7, 11, 15, 23]  # |3·#{x < c} − #{x > c}|
    law = _gumbel_min_law(scores, scale)
    wrong = [_gumbel_min_law(scores, scale * f) for f in (0.7, 1.3)]
    check_categorical(Counter(picks), law, wrong)


# -- found while writing the node proofs (docs/proofs/table/cast.md, replace.md) ---------------
# The proofs of Cast and Replace (strict, no default) rest on "no row can make the plan fail":
# a value that does not convert becomes null.  The Polars engine does so; the Arrow engine
# (pandas, pyarrow, Dask) fails the whole release on such a value, so whether a release raises
# depends on one record.  Not fixed here (the engines are another branch's): strict xfails.


def _pandas_release(frame: dict[str, list[Any]], expr: Any) -> list[dict[str, Any]]:
    import pandas as pd

    context = dp.Context.compositor(
        data=pd.DataFrame(frame),
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=1,
        margins=[dp.polars.Margin(max_length=100)],
    )
    query = context.query().with_columns(expr.alias("y"))
    release = query.select(pl.col("y").dp.null_count(signed=True)).release()
    out: list[dict[str, Any]] = release.collect().to_dicts()
    return out


def test_arrow_engine_cast_of_an_out_of_range_string_is_null_not_a_failure() -> None:
    out = _pandas_release({"s": ["1", "2", "300"]}, pl.col("s").cast(pl.Int8))
    assert len(out) == 1


def test_arrow_engine_replace_strict_of_an_unmatched_value_is_null_not_a_failure() -> None:
    out = _pandas_release(
        {"s": ["a", "b", "zz"]}, pl.col("s").replace_strict(["a", "b"], ["x", "y"])
    )
    assert len(out) == 1


def test_quantile_counts_drop_nan_of_a_float_expression_on_every_engine() -> None:
    import pandas as pd

    from opendp_lite.backends.tables import of_table
    from opendp_lite.table import nodes as n

    frame = {"a": [0, 0, 0, 1, 2], "b": [0, 0, 0, 1, 1]}  # a / b: NaN, NaN, NaN, 1.0, 2.0
    ratio = n.Binary("/", n.Col("a"), n.Col("b"))
    plan = n.FramePlan(steps=(), aggregates=(("q", n.QuantileCounts(ratio, (1.5,))),))
    answers = []
    for data in (pl.LazyFrame(frame), pd.DataFrame(frame)):
        engine = of_table(data)
        assert engine is not None
        answers.append(engine.run(data, plan).values["q"])
    assert answers[1] == [([1], [1])]  # the Arrow engine: NaN dropped
    assert answers[0] == answers[1]


def test_grouped_sum_noise_on_a_pandas_frame_is_discrete_laplace_per_group() -> None:
    # the Arrow engine's path (pandas): the same law as on Polars; group k holds 0..(k % 4)
    # clipped to [0, 2] and a null (skipped)
    import pandas as pd

    g = [k for k in range(GROUPS) for _ in range(k % 4 + 2)]
    x = [float(j) if j <= k % 4 else None for k in range(GROUPS) for j in range(k % 4 + 2)]
    frame = pd.DataFrame({"g": g, "x": pd.array(x, dtype="Int64")})
    context = dp.Context.compositor(
        data=frame,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=1,
        margins=[dp.polars.Margin(max_length=10 * GROUPS)],
    )
    query = context.query().group_by("g").agg(pl.col("x").dp.sum((0, 2))).with_keys(_keys(GROUPS))
    summary = query.summarize()
    assert summary["distribution"][0] == "Integer Laplace"
    scale = summary["scale"][0]
    assert scale == 2.0  # sensitivity 2, ε = 1
    out = query.release().collect()
    assert out["g"].to_list() == list(range(GROUPS))
    truth = [sum(min(j, 2) for j in range(k % 4 + 1)) for k in range(GROUPS)]
    z = [v - t for v, t in zip(out["x"].to_list(), truth, strict=True)]
    check_integer_law(
        z, discrete_laplace_pmf(scale), [discrete_laplace_pmf(scale * f) for f in (0.7, 1.3)]
    )
