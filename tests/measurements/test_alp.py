"""make_alp_queryable: map (exact, and against OpenDP 0.16), parameters, estimator, queryable."""

from __future__ import annotations

import copy
import math
import pickle
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import (
    InvalidParameter,
    MetricMismatch,
    NotImplementedForType,
    NotInDomain,
    QueryableError,
)
from opendp_lite.measurements.alp import Hashers, estimate_unary, pre_hash
from opendp_lite.measurements.threshold import l01inf_distance
from opendp_lite.samplers import rng

DOM = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int))
L1 = dp.l1_distance(T=int)
L01 = l01inf_distance(dp.absolute_distance(T=int))

SCALES = [1e-3, 0.1, 0.3, 0.5, 1.0, 1.3, 2.7, 10.0, 123.456]
D_INS = [0, 1, 2, 3, 7, 100, 12345]
ALPHAS = [1, 2, 4, 9]


def alp(**kw: Any) -> Any:
    args: dict[str, Any] = {"scale": 1.0, "total_limit": 20, "value_limit": 10} | kw
    return dp.m.make_alp_queryable(DOM, L1, **args)


# ----------------------------------------------------------------------------------------------
# the privacy map


@pytest.mark.parametrize("scale", SCALES)
def test_map_is_least_float_above_l1_times_scale(scale: float) -> None:
    for alpha in ALPHAS:
        m = alp(scale=scale, alpha=alpha)
        for d in D_INS:
            eps = m.map(d)
            exact = d * Fraction(scale)
            assert Fraction(eps) >= exact
            if exact:
                assert Fraction(math.nextafter(eps, 0.0)) < exact  # at most one ulp above


def test_map_reads_the_l1_component_of_l01inf() -> None:
    m = dp.m.make_alp_queryable(DOM, L01, 1.3, 20, 10)
    assert m.map((0, 0, 0)) == 0.0
    assert m.map((2, 7, 7)) == alp(scale=1.3).map(7)
    assert m.map((5, 7, 1)) == alp(scale=1.3).map(7)
    assert m.check((1, 1, 1), 1.3) and not m.check((1, 2, 2), 2.5)


def test_check_boundary() -> None:
    m = alp(scale=0.5)
    assert m.check(4, 2.0)
    assert not m.check(4, 1.9999999)
    assert not m.check(5, 2.0)


def test_map_matches_opendp_on_a_grid() -> None:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    space = (
        odp.map_domain(odp.atom_domain(T=str), odp.atom_domain(T=odp.i32)),
        odp.l01inf_distance(odp.absolute_distance(T=odp.i32)),
    )
    lite_space = (
        dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T="i32")),
        l01inf_distance(dp.absolute_distance(T="i32")),
    )
    compared = 0
    for scale in SCALES:
        for alpha in ALPHAS:
            theirs = odp.m.make_alp_queryable(*space, scale, 20, 10, 50, alpha)
            ours = dp.m.make_alp_queryable(*lite_space, scale, 20, 10, 50, alpha)
            for d in D_INS:
                for l0 in (1, 3):
                    triple = (l0, d, max(1, d // l0))
                    a, b = ours.map(triple), theirs.map(triple)
                    assert a >= b
                    assert abs(a - b) <= 1e-9 * max(1.0, b)
                    compared += 1
    assert compared == len(SCALES) * len(ALPHAS) * len(D_INS) * 2


def test_opendp_accepts_the_same_metric_and_rejects_l1() -> None:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    dom = odp.map_domain(odp.atom_domain(T=str), odp.atom_domain(T=odp.i32))
    with pytest.raises(Exception, match="L01InfDistance"):
        odp.m.make_alp_queryable(dom, odp.l1_distance(T=odp.i32), 1.0, 20, 10)


# ----------------------------------------------------------------------------------------------
# parameters and spaces


@pytest.mark.parametrize(
    "kw",
    [
        {"scale": 0.0},
        {"scale": -1.0},
        {"scale": math.inf},
        {"scale": math.nan},
        {"scale": "1"},
        {"scale": True},
        {"alpha": 0},
        {"alpha": -4},
        {"alpha": 1.5},
        {"alpha": True},
        {"alpha": 2**32},
        {"total_limit": 0},
        {"total_limit": -5},
        {"total_limit": 2.5},
        {"size_factor": 0},
        {"size_factor": 2**32},
        {"value_limit": 0},
        {"value_limit": -1},
        {"value_limit": "10"},
        {"value_limit": 2**40},  # above the i32 carrier
        {"scale": 1e6, "value_limit": 10**6},  # 2.5e11 hash functions
        {"scale": 1e3, "total_limit": 10**9},  # 2^44 bits
    ],
)
def test_bad_parameters_are_refused(kw: dict[str, Any]) -> None:
    with pytest.raises(InvalidParameter) as err:
        alp(**kw)
    name = next(iter(kw))
    assert name in str(err.value) or "alpha" in str(err.value)


def test_value_limit_comes_from_the_domain_bounds() -> None:
    dom = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(bounds=(0, 20), T=int))
    m = dp.m.make_alp_queryable(dom, L1, scale=1.0, total_limit=10)
    assert m.function.hashers.size == math.ceil(20 * Fraction(1, 4))
    with pytest.raises(InvalidParameter, match="value_limit"):
        dp.m.make_alp_queryable(DOM, L1, scale=1.0, total_limit=10)


def test_sizes_follow_the_formulas() -> None:
    # c = 1.3/4; m = ceil(8c) = 3; floor(50·10·c) = 162 -> 2^8 bits
    m = dp.m.make_alp_queryable(DOM, L1, 1.3, 10, 8)
    assert m.function.hashers.size == 3 and m.function.size == 256
    # floor(1·1·c) = 0 -> a single bit
    tiny = dp.m.make_alp_queryable(DOM, L1, 1.0, 1, 4, size_factor=1)
    assert tiny.function.size == 1 and tiny.function.hashers.size == 1
    assert tiny({"a": 3})("a") in (0.0, 4.0)


@pytest.mark.parametrize(
    ("domain", "metric", "error"),
    [
        (
            dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=float, nan=False)),
            L1,
            NotImplementedForType,
        ),
        (dp.vector_domain(dp.atom_domain(T=int)), L1, NotImplementedForType),
        (
            dp.map_domain(dp.atom_domain(T=float, nan=False), dp.atom_domain(T=int)),
            L1,
            NotImplementedForType,
        ),
        (DOM, dp.l2_distance(T=int), MetricMismatch),
        (DOM, dp.l1_distance(T=float), MetricMismatch),
        (DOM, dp.symmetric_distance(), MetricMismatch),
        (DOM, l01inf_distance(dp.absolute_distance(T=float)), MetricMismatch),
    ],
)
def test_unsupported_spaces(domain: Any, metric: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        dp.m.make_alp_queryable(domain, metric, 1.0, 10, 10)


def test_then_partial_equals_make() -> None:
    chained = (DOM, L1) >> dp.m.then_alp_queryable(0.7, 30, 12, 20, 3)
    direct = dp.m.make_alp_queryable(DOM, L1, 0.7, 30, 12, 20, 3)
    assert chained.map(5) == direct.map(5)
    assert chained.function.size == direct.function.size
    assert chained.function.hashers.size == direct.function.hashers.size


# ----------------------------------------------------------------------------------------------
# the function and the queryable


def test_input_outside_the_domain_draws_nothing() -> None:
    m = alp()
    calls: list[int] = []

    def source(n: int) -> bytes:
        calls.append(n)
        return bytes(n)

    with pytest.warns(Warning), rng.scripted_randomness(source):
        with pytest.raises(NotInDomain):
            m({"a": 1.5})
        with pytest.raises(NotInDomain):
            m({3: 1})
    assert calls == []


def test_query_key_outside_the_key_domain() -> None:
    sketch = alp()({"a": 3})
    with pytest.raises(NotInDomain):
        sketch(3)


def test_queryable_cannot_be_copied_or_pickled() -> None:
    sketch = alp()({"a": 3})
    with pytest.raises(QueryableError):
        copy.copy(sketch)
    with pytest.raises(QueryableError):
        copy.deepcopy(sketch)
    with pytest.raises(QueryableError):
        pickle.dumps(sketch)


def test_answers_are_deterministic_per_sketch_and_bounded() -> None:
    m = alp(scale=2.0, value_limit=10)  # m = 5 hash functions, estimates in [0, 5]·4/2
    sketch = m({"a": 10, "b": 1000, "c": -7})
    for key in ("a", "b", "c", "never-seen"):
        first = sketch(key)
        assert sketch(key) == first
        assert 0.0 <= first <= 10.0
        assert Fraction(first * 2 / 4).limit_denominator(6) * 4 / 2 == pytest.approx(first)


def test_scripted_randomness_reproduces_the_release() -> None:
    """Every random draw goes through samplers.rng: the same stream gives the same release."""
    outs = []
    for _ in range(2):
        with pytest.warns(Warning), rng.scripted_randomness(seed=b"alp"):
            m = alp(scale=1.0, total_limit=200, value_limit=40)
            sketch = m({f"k{i}": i for i in range(40)})
        outs.append([sketch(f"k{i}") for i in range(60)])
    assert outs[0] == outs[1]
    with pytest.warns(Warning), rng.scripted_randomness(seed=b"other"):
        m = alp(scale=1.0, total_limit=200, value_limit=40)
        sketch = m({f"k{i}": i for i in range(40)})
    assert [sketch(f"k{i}") for i in range(60)] != outs[0]


def test_accuracy_on_a_larger_instance() -> None:
    """At scale 1, α = 4 with ample space most estimates land within 3α/scale of the truth."""
    m = alp(scale=1.0, total_limit=2000, value_limit=100)
    data = {f"k{i}": (7 * i) % 100 for i in range(100)}
    sketch = m(data)
    errors = np.array([sketch(k) - v for k, v in data.items()])
    assert np.mean(np.abs(errors) <= 12) >= 0.8
    assert np.mean([sketch(f"absent{i}") for i in range(100)]) < 8


# ----------------------------------------------------------------------------------------------
# estimator and hashing


@pytest.mark.parametrize(
    ("bits", "expected"),
    [
        ([1, 0, 1, 1, 0, 0], Fraction(4)),  # sums 0 1 0 1 2 1 0: peak at 4
        ([0, 0, 1], Fraction(0)),  # 0 −1 −2 −1: peak at 0
        ([1, 0, 1, 0], Fraction(2)),  # 0 1 0 1 0: peaks at 1 and 3
        ([1, 1, 0, 1, 0, 1, 0], Fraction(4)),  # 0 1 2 1 2 1 2 1: peaks at 2, 4, 6
        ([1, 0, 0, 1, 1, 0], Fraction(3)),  # 0 1 0 −1 0 1 0: peaks at 1 and 5
        ([0, 1, 0, 1, 0, 0, 1, 1], Fraction(7, 2)),  # peaks (height 0) at 0, 2, 4 and 8
        ([], Fraction(0)),
    ],
)
def test_estimate_unary(bits: list[int], expected: Fraction) -> None:
    assert estimate_unary(np.array(bits, dtype=bool)) == expected


def test_hashers_range_and_oddness() -> None:
    h = Hashers(64, 10)
    assert np.all(h.a % 2 == 1)
    for key in ("a", "b", 7, True):
        pos = h.positions(key, 64)
        assert pos.shape == (64,) and np.all(pos < 2**10)
        assert np.array_equal(pos, h.positions(key, 64))
    spread = {int(Hashers(1, 10).positions(f"key{i}", 1)[0]) for i in range(500)}
    assert len(spread) > 300
    assert np.all(Hashers(5, 0).positions("a", 5) == 0)


def test_pre_hash_tags_types() -> None:
    assert len({pre_hash(1), pre_hash(True), pre_hash("1"), pre_hash(-1), pre_hash(-2)}) == 5
