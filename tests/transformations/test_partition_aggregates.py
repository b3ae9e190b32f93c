"""make_grouped_count / make_grouped_sum: values vs hand computation, maps, refusals, Dask."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import InvalidParameter, NotInDomain
from opendp_lite.samplers import rng

FRAME = dp.dataframe_domain()
SYM = dp.symmetric_distance()


def part(keys: Any = ("a", "b", "c"), by: str = "g") -> Any:
    return dp.t.make_partition_by(FRAME, SYM, by=by, keys=list(keys))


def test_count_and_sum_match_hand_values() -> None:
    data = {"g": ["a", "c", "a", "z", "c", "a"], "x": [1.0, -5.0, 2.5, 100.0, 50.0, 0.25]}
    assert (part() >> dp.t.then_grouped_count())(data) == [3, 0, 2]
    s = (part() >> dp.t.then_grouped_sum("x", (-1.0, 10.0)))(data)
    assert s == [3.75, 0.0, 9.0]  # c: clamp(-5) + clamp(50) = -1 + 10


def test_sum_is_exact_where_numpy_is_not() -> None:
    # 0.1 is not a grid value: each is truncated to the grid 2^-p, then summed exactly
    n = 1_000_003
    x = np.full(n, 0.1)
    g = np.zeros(n, dtype=np.int64)
    out = (part([0]) >> dp.t.then_grouped_sum("x", (0.0, 1.0)))({"g": g, "x": x})
    p = 46
    k = math.trunc(Fraction(0.1) * 2**p)
    assert out[0] == float(Fraction(n * k, 2**p))
    # large magnitudes of both signs cancel exactly
    x = np.array([1e6, -1e6, 0.5, 3.0, -3.0] * 1000)
    out = (part([0]) >> dp.t.then_grouped_sum("x", (-1e6, 1e6)))(
        {"g": np.zeros(len(x), dtype=np.int64), "x": x}
    )
    assert out[0] == 500.0


def test_sum_chunks_agree_with_python_ints() -> None:
    # more rows than one bincount chunk, random groups: the exact per-group grid totals
    n = (1 << 20) + 12345
    i = np.arange(n)
    g = (i * 7919) % 13
    x = ((i * 104729) % 20001 - 10000) / 3.0
    t = part(range(12)) >> dp.t.then_grouped_sum("x", (-2000.0, 3000.0))  # group 12 dropped
    out = t({"g": g, "x": x})
    p = 46 - math.frexp(3000.0)[1]
    xc = np.clip(x, -2000.0, 3000.0)
    ks = np.trunc(xc * 2.0**p).astype(np.int64)
    assert len(out) == 12
    for j in range(12):
        total = sum(int(v) for v in ks[g == j])  # Python ints: exact
        assert out[j] == float(Fraction(total, 2**p))


def test_count_maps() -> None:
    t1 = part() >> dp.t.then_grouped_count()
    t2 = part() >> dp.t.then_grouped_count(norm=2)
    assert [t1.map(d) for d in (0, 1, 5)] == [0, 1, 5]
    assert [t2.map(d) for d in (0, 1, 5)] == [0.0, 1.0, 5.0]
    c = dp.t.make_grouped_count(part().output_domain, part().output_metric)
    c2 = dp.t.make_grouped_count(part().output_domain, part().output_metric, norm=2)
    # (l0, l1, l∞) = (3, 6, 4): l1 norm min(6, 3·4) = 6; l2 norm √min(6·4, 3·16) = √24
    assert c.map((3, 6, 4)) == 6
    root = c2.map((3, 6, 4))  # the least float >= √24
    assert Fraction(root) ** 2 >= 24 > Fraction(math.nextafter(root, 0)) ** 2
    # l∞ larger than l1 is capped by l1; l0 larger than l1 is capped by l1
    assert c.map((5, 2, 9)) == 2
    assert c2.map((5, 2, 9)) == 2.0


def _relax(bound: float) -> Fraction:
    p = 46 - math.frexp(bound)[1]
    K = math.trunc(Fraction(bound) * 2**p)
    c = Fraction(2**40 * K, 2**p)
    return 2 * (c * Fraction(1, 2**53))


def test_sum_maps_are_the_docstring_formula() -> None:
    s1 = dp.t.make_grouped_sum(part().output_domain, part().output_metric, "x", (0.0, 10.0))
    s2 = dp.t.make_grouped_sum(part().output_domain, part().output_metric, "x", (0.0, 10.0), 2)
    r = _relax(10.0)
    m_prime = Fraction(10)  # 10 is on the grid
    for d in [(1, 1, 1), (3, 6, 4), (2, 8, 8)]:
        l0, l1, li = d
        li = min(li, l1)
        g = min(l0, l1)
        exact1 = min(l1, l0 * li) * m_prime + g * r
        # the least float >= the exact rational
        assert Fraction(s1.map(d)) >= exact1 > Fraction(math.nextafter(s1.map(d), 0))
        exact2 = math.sqrt(min(l1 * li, l0 * li * li)) * 10 + math.sqrt(g) * float(r)
        assert s2.map(d) >= exact2
        assert s2.map(d) <= exact2 * (1 + 1e-14)


def test_private_keys_refused_by_vectors() -> None:
    p = dp.t.make_partition_by(FRAME, SYM, by="g")
    with pytest.raises(InvalidParameter, match="private"):
        p >> dp.t.then_grouped_count()
    with pytest.raises(InvalidParameter, match="private"):
        p >> dp.t.then_grouped_sum("x", (0.0, 1.0))


def test_bad_parameters() -> None:
    with pytest.raises(InvalidParameter, match="norm"):
        part() >> dp.t.then_grouped_count(norm=3)
    with pytest.raises(InvalidParameter):
        part() >> dp.t.then_grouped_sum("x", (1.0, 0.0))
    with pytest.raises(InvalidParameter):
        part() >> dp.t.then_grouped_sum("x", (0.0, math.inf))
    with pytest.raises(InvalidParameter, match="size_limit"):
        part() >> dp.t.then_grouped_sum("x", (0.0, 1.0), size_limit=0)


def _no_randomness(n: int) -> bytes:
    raise AssertionError("randomness drawn before the input was checked")


def test_refused_before_noise() -> None:
    m = part() >> dp.t.then_grouped_sum("x", (0.0, 10.0)) >> dp.m.then_laplace(1.0)
    with rng.scripted_randomness(_no_randomness), pytest.raises(NotInDomain):
        m({"g": ["a", "b"], "y": [1.0, 2.0]})


@pytest.mark.parametrize(
    ("x", "sums"),
    [
        ([1.0, float("nan"), 4.0], [1.0, 4.0, 0.0]),
        (["1.0", 2.0, None], [0.0, 2.0, 0.0]),
        ([True, 3, 10**400], [0.0, 13.0, 0.0]),
    ],
)
def test_a_cell_that_is_not_a_number_is_missing(x: list[Any], sums: list[float]) -> None:
    """A NaN (or a string, None, a bool) adds clamp(0), even in a row whose key is dropped: a
    refusal would let one cell decide whether the release raised."""
    t = part() >> dp.t.then_grouped_sum("x", (0.0, 10.0))
    assert t({"g": ["a", "b", "b"], "x": x}) == sums


# -- Dask: the same exact aggregates, partials reduced on the workers -------------------------


@pytest.mark.parametrize("npartitions", [1, 3, 7])
def test_dask_equals_numpy(npartitions: int) -> None:
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    import dask

    n = 20_000
    i = np.arange(n)
    df = pd.DataFrame(
        {"g": np.array(["a", "b", "c", "d"])[(i * 31) % 4], "x": ((i * 7) % 1001) * 1.37 - 100}
    )
    ddf = dd.from_pandas(df, npartitions=npartitions)
    frame = {c: df[c].to_numpy() for c in df.columns}
    for t in (
        part() >> dp.t.then_grouped_count(),
        part() >> dp.t.then_grouped_sum("x", (0.0, 1000.0)),
    ):
        with dask.config.set(scheduler="sync"):
            lazy = t(ddf)
        assert np.array_equal(lazy, t(frame))


def test_dask_refused_before_noise() -> None:
    # a missing column (a NaN cell is a missing value, not refused)
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    import dask

    df = pd.DataFrame({"g": ["a", "b", "a", "c"], "y": [1.0, 2.0, float("nan"), 4.0]})
    m = part() >> dp.t.then_grouped_sum("x", (0.0, 10.0)) >> dp.m.then_laplace(1.0)
    with (
        dask.config.set(scheduler="sync"),
        rng.scripted_randomness(_no_randomness),
        pytest.raises(NotInDomain),
    ):
        m(dd.from_pandas(df, npartitions=2))
