"""make_grouped (a measurement mapped over the groups) and the analyst helpers."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import (
    DomainMismatch,
    InvalidParameter,
    MetricMismatch,
    NotImplementedForType,
    NotInDomain,
)
from opendp_lite.samplers import rng

FRAME = dp.dataframe_domain()
SYM = dp.symmetric_distance()
DATA = {"g": ["a", "a", "b", "z", "a"], "x": [1.0, 2.0, 3.0, 4.0, 5.0]}


def part(keys: Any = ("a", "b", "c")) -> Any:
    return dp.t.make_partition_by(FRAME, SYM, by="g", keys=None if keys is None else list(keys))


def count(scale: float) -> Any:
    return dp.t.make_select_column("x", TOA=float) >> dp.t.then_count() >> dp.m.then_laplace(scale)


def grouped(inner: Any, keys: Any = ("a", "b", "c"), **kw: Any) -> Any:
    p = part(keys)
    return dp.c.make_grouped(p.output_domain, p.output_metric, inner, **kw)


def test_every_declared_key_is_released_exactly_with_tiny_noise() -> None:
    m = part() >> dp.c.then_grouped(count(1e-12))
    assert m(DATA) == {"a": 3, "b": 1, "c": 0}


def test_pure_map() -> None:
    m = grouped(count(2.0))  # ε(d) = d/2
    # (l0, l1, l∞) = (2, 3, 2): g = 2, min(2·ε(2), 3·ε(1)) = min(2, 1.5)
    assert m.map((2, 3, 2)) == 1.5
    assert m.map((1, 1, 1)) == 0.5
    assert m.map((0, 0, 0)) == 0.0
    # a generic (non-linear) inner map: the exponential-like quantile is still bounded by g·ε(l∞)
    assert m.map((4, 4, 1)) == 2.0


def test_zcdp_map() -> None:
    inner = (
        dp.t.make_select_column("x", TOA=float)
        >> dp.t.then_count()
        >> dp.m.then_gaussian(2.0, MO="ZeroConcentratedDivergence")
    )
    m = grouped(inner)
    rho = lambda d: Fraction(d * d, 8)  # noqa: E731 - ρ(d) = d²/(2·2²)
    # (2, 3, 2): min(2·ρ(2), 3·2·ρ(1)) = min(1, 0.75)
    assert m.map((2, 3, 2)) == float(min(2 * rho(2), 3 * 2 * rho(1)))
    # (3, 3, 1): min(3·ρ(1), 3·1·ρ(1))
    assert m.map((3, 3, 1)) == float(3 * rho(1))


def test_approximate_map() -> None:
    inner = dp.c.make_approximate(count(4.0))
    m = grouped(inner)
    assert m.map((3, 5, 2)) == (1.5, 0.0)  # g = 3, ε(2) = 0.5


def test_group_privacy_term_used_only_with_the_inner_map() -> None:
    # l1 = 1 with l0 = 5: only one group can change
    m = grouped(count(1.0))
    assert m.map((5, 1, 1)) == 1.0


def test_refused_before_noise_if_any_group_is_bad() -> None:
    inner = (
        dp.t.make_select_column("x", TOA=float)
        >> dp.t.then_drop_null()
        >> dp.t.then_clamp((0.0, 1.0))
        >> dp.t.then_sum()
        >> dp.m.then_laplace(1.0)
    )
    m = part() >> dp.c.then_grouped(inner)
    bad = {"g": ["a", "b", "c"], "x": [0.5, 0.5, "oops"]}  # the last group holds a string

    def no_randomness(n: int) -> bytes:
        raise AssertionError("randomness drawn before every group was checked")

    with rng.scripted_randomness(no_randomness), pytest.raises(NotInDomain):
        m(bad)


def test_space_refusals() -> None:
    with pytest.raises(DomainMismatch):
        dp.c.make_grouped(FRAME, part().output_metric, count(1.0))
    with pytest.raises(MetricMismatch):
        dp.c.make_grouped(part().output_domain, SYM, count(1.0))
    vec = dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), 1.0)
    with pytest.raises(DomainMismatch):
        grouped(vec)
    with pytest.raises(InvalidParameter, match="public"):
        grouped(count(1.0), threshold=5, threshold_scale=1.0)
    with pytest.raises(InvalidParameter, match="private"):
        grouped(count(1.0), keys=None)
    zcdp = (
        dp.t.make_select_column("x", TOA=float)
        >> dp.t.then_count()
        >> dp.m.then_gaussian(1.0, MO="ZeroConcentratedDivergence")
    )
    with pytest.raises(NotImplementedForType):
        grouped(zcdp, keys=None, threshold=5, threshold_scale=1.0)


# -- private keys: released by a threshold on the group sizes --------------------------------


def test_private_keys_threshold_releases_large_groups_only() -> None:
    n_big = 200
    data = {"g": ["big"] * n_big + ["small"] * 2, "x": [1.0] * (n_big + 2)}
    m = part(None) >> dp.c.then_grouped(count(1e-9), threshold=50, threshold_scale=1.0)
    for _ in range(20):
        out = m(data)
        assert out == {"big": n_big}


def test_private_keys_map_is_threshold_plus_groups() -> None:
    m = grouped(count(2.0), keys=None, threshold=20, threshold_scale=1.0)
    thr = dp.m.make_laplace_threshold(
        dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T="i64")),
        dp.l01inf_distance(dp.absolute_distance(T="i64")),
        1.0,
        20,
    )
    for d in [(1, 1, 1), (2, 3, 2)]:
        eps_t, delta_t = thr.map(d)
        eps, delta = m.map(d)
        g = min(d[0], d[1])
        eps_g = min(g * Fraction(min(d[2], d[1]), 2), Fraction(d[1], 2))
        assert Fraction(eps) >= Fraction(eps_t) + eps_g
        assert eps <= (eps_t + float(eps_g)) * (1 + 1e-15)
        assert delta == delta_t
        assert delta > 0


# -- quantile and histogram per group, by mapping existing measurements ----------------------


def test_quantile_and_histogram_per_group() -> None:
    n = 300
    x = np.concatenate([np.full(n, 2.0), np.full(n, 8.0)])
    data = {"g": ["lo"] * n + ["hi"] * n, "x": x}
    p = part(["lo", "hi"])
    quant = dp.m.make_private_quantile(
        dp.vector_domain(dp.atom_domain(T=float, nan=False)),
        SYM,
        dp.max_divergence(),
        candidates=[0.0, 2.0, 4.0, 6.0, 8.0, 10.0],
        alpha=0.5,
        scale=0.01,
    )
    median = dp.t.make_select_column("x", TOA=float) >> dp.t.then_drop_null() >> quant
    m = p >> dp.c.then_grouped(median)
    assert m(data) == {"lo": 2.0, "hi": 8.0}
    hist = (
        dp.t.make_select_column("x", TOA=float)
        >> dp.t.then_count_by_categories([2.0, 8.0], null_category=False)
        >> dp.m.then_laplace(1e-9)
    )
    h = (p >> dp.c.then_grouped(hist))(data)
    assert {k: v.tolist() for k, v in h.items()} == {"lo": [n, 0], "hi": [0, n]}


# -- the analyst's helpers ------------------------------------------------------------------


def test_helpers_on_dicts_pandas_polars() -> None:
    frames: list[Any] = [DATA]
    pd = pytest.importorskip("pandas")
    frames.append(pd.DataFrame(DATA))
    try:
        import polars as pl

        frames.append(pl.DataFrame(DATA))
    except ImportError:  # pragma: no cover - polars is optional
        pass
    for df in frames:
        c = dp.c.grouped_count(df, by="g", epsilon=1e9, keys=["a", "b", "c"])
        assert c == {"a": 3, "b": 1, "c": 0}
        s = dp.c.grouped_sum(df, by="g", column="x", bounds=(0.0, 4.0), epsilon=1e9, keys=["a"])
        assert list(s) == ["a"] and abs(s["a"] - 7.0) < 1e-6
        mean = dp.c.grouped_mean(
            df, by="g", column="x", bounds=(0.0, 10.0), epsilon=1e9, keys=["b"]
        )
        assert abs(mean["b"] - 3.0) < 1e-6


def test_helpers_with_identifier_truncate() -> None:
    df = {"id": [1, 1, 1, 2], "g": ["a", "b", "a", "a"], "x": [1.0, 1.0, 1.0, 1.0]}
    c = dp.c.grouped_count(df, by="g", epsilon=1e9, keys=["a", "b"], identifier="id")
    assert c == {"a": 2, "b": 0}  # id 1 keeps one group (a) and one row there
    c = dp.c.grouped_count(
        df,
        by="g",
        epsilon=1e9,
        keys=["a", "b"],
        identifier="id",
        max_partitions=2,
        max_contributions_per_partition=2,
    )
    assert c == {"a": 3, "b": 1}
    c = dp.c.grouped_count(
        df,
        by="g",
        epsilon=1e9,
        keys=["a", "b"],
        identifier="id",
        max_partitions=2,
        max_contributions_per_partition=2,
        max_contributions=2,
    )
    assert c == {"a": 3, "b": 0}  # id 1 keeps its first 2 rows: both in a (first group)


def test_helpers_refuse_bad_epsilon() -> None:
    for eps in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(InvalidParameter):
            dp.c.grouped_count(DATA, by="g", epsilon=eps, keys=["a"])
    with pytest.raises(InvalidParameter, match="DataFrame"):
        dp.c.grouped_count([1, 2], by="g", epsilon=1.0, keys=["a"])


def test_chain_with_identifier_charges_each_group_an_individual_reaches() -> None:
    part = dp.t.make_partition_by(
        FRAME,
        dp.symmetric_id_distance("id"),
        by="g",
        keys=["a", "b", "c"],
        max_partitions=2,
        max_contributions_per_partition=3,
    )
    m = part >> dp.c.then_grouped(count(1.0))  # ε(d) = d
    # one individual: (l0, l1, l∞) = (2, 6, 3): min(2·ε(3), 6·ε(1)) = 6
    assert part.map(1) == (2, 6, 3)
    assert m.map(1) == 6.0
    # the vector path charges the same through the l1 sensitivity of the counts
    v = part >> dp.t.then_grouped_count() >> dp.m.then_laplace(1.0)
    assert v.map(1) == 6.0
