"""Randomized response: maps (exact lower bound, OpenDP 0.16 parity), domains, typed errors."""

from __future__ import annotations

import math

import gmpy2
import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import (
    FailedMap,
    InvalidParameter,
    MetricMismatch,
    NotImplementedForType,
    NotInDomain,
)
from opendp_lite.measurements.randomized_response import bitvector_domain

PROBS = [0.5, 0.5000001, 0.6, 0.75, 0.9, 0.99, 0.999999]


def exact_log(num: gmpy2.mpq, den: gmpy2.mpq) -> gmpy2.mpfr:
    with gmpy2.context(precision=300):
        return gmpy2.log(gmpy2.mpfr(num) / gmpy2.mpfr(den))


def test_seed_prob_three_quarters_is_log_3_never_less() -> None:
    eps = dp.m.make_randomized_response_bool(0.75).map(1)
    with gmpy2.context(precision=300):
        assert gmpy2.mpfr(eps) >= gmpy2.log(3)
    assert eps == math.log(3) or eps == math.nextafter(math.log(3), math.inf)


@pytest.mark.parametrize("prob", PROBS)
def test_bool_map_is_an_upper_bound_within_two_ulps(prob: float) -> None:
    # the ratio p/(1 - p) is rounded up to a float, then its log is rounded up: <= 2 ulps
    eps = dp.m.make_randomized_response_bool(prob).map(1)
    p = gmpy2.mpq(prob)
    exact = exact_log(p, 1 - p)
    assert gmpy2.mpfr(eps) >= exact
    assert eps <= math.nextafter(math.nextafter(float(exact), math.inf), math.inf) or eps == 0.0


@pytest.mark.parametrize("k", [2, 3, 10])
@pytest.mark.parametrize("prob", [0.5, 0.75, 0.9, 0.99])
def test_categorical_map_is_an_upper_bound(k: int, prob: float) -> None:
    if prob < 1 / k:
        pytest.skip("prob below 1/k")
    eps = dp.m.make_randomized_response(list(range(k)), prob).map(1)
    p = gmpy2.mpq(prob)
    assert gmpy2.mpfr(eps) >= exact_log(p * (k - 1), 1 - p)


def test_distance_zero_and_many() -> None:
    rr = dp.m.make_randomized_response_bool(0.75)
    assert rr.map(0) == 0.0
    assert rr.map(5) == rr.map(1)
    assert rr.check(1, rr.map(1)) and not rr.check(1, 1.0)


def test_prob_one_is_an_infinite_loss() -> None:
    rr = dp.m.make_randomized_response_bool(1.0)
    assert rr(True) is True and rr(False) is False
    with pytest.raises(FailedMap):
        rr.map(1)


@pytest.mark.parametrize("prob", [0.49, -0.1, 1.01, float("nan"), float("inf"), "0.7", True])
def test_bool_bad_prob(prob: object) -> None:
    with pytest.raises(InvalidParameter, match="prob"):
        dp.m.make_randomized_response_bool(prob)  # type: ignore[arg-type]


def test_constant_time_refused() -> None:
    with pytest.raises(InvalidParameter, match="constant_time"):
        dp.m.make_randomized_response_bool(0.75, constant_time=True)


def test_categorical_errors() -> None:
    with pytest.raises(InvalidParameter, match="at least two"):
        dp.m.make_randomized_response(["a"], 0.9)
    with pytest.raises(InvalidParameter, match="distinct"):
        dp.m.make_randomized_response(["a", "a"], 0.9)
    with pytest.raises(InvalidParameter, match="prob"):
        dp.m.make_randomized_response(["a", "b", "c"], 0.3)
    with pytest.raises(InvalidParameter, match="type"):
        dp.m.make_randomized_response(["a", 1], 0.9)
    with pytest.raises(NotImplementedForType):
        dp.m.make_randomized_response([object(), object()], 0.9)


def test_categorical_domain_and_not_in_domain() -> None:
    rr = dp.m.make_randomized_response(["a", "b"], 0.9)
    assert rr.input_domain == dp.atom_domain(T=str)
    with pytest.raises(NotInDomain):
        rr(3)
    assert dp.m.make_randomized_response([1, 2], 0.9, T="i64").input_domain.T == "i64"


def test_bool_not_in_domain() -> None:
    with pytest.raises(NotInDomain):
        dp.m.make_randomized_response_bool(0.75)(1)  # type: ignore[arg-type]


def test_bitvec_domain_and_errors() -> None:
    space = bitvector_domain(max_weight=2), dp.discrete_distance()
    rr = dp.m.make_randomized_response_bitvec(*space, f=0.5)
    with pytest.raises(NotInDomain):
        rr(bytes([0b111]))
    with pytest.raises(NotInDomain):
        rr([1, 2])  # type: ignore[arg-type]
    with pytest.raises(NotImplementedForType):
        dp.m.make_randomized_response_bitvec(bitvector_domain(), dp.discrete_distance(), f=0.5)
    with pytest.raises(MetricMismatch):
        dp.m.make_randomized_response_bitvec(bitvector_domain(2), dp.symmetric_distance(), f=0.5)
    for f in (0.0, 1.5, -1.0):
        with pytest.raises(InvalidParameter, match="f must"):
            dp.m.make_randomized_response_bitvec(*space, f=f)
    with pytest.raises(InvalidParameter):
        bitvector_domain(-1)
    partial = space >> dp.m.then_randomized_response_bitvec(f=0.5)
    assert partial.map(1) == rr.map(1)


def test_debias_errors() -> None:
    with pytest.raises(InvalidParameter):
        dp.m.debias_randomized_response_bitvec([], 0.5)
    with pytest.raises(InvalidParameter):
        dp.m.debias_randomized_response_bitvec([b"\x00", b"\x00\x00"], 0.5)
    with pytest.raises(InvalidParameter):
        dp.m.debias_randomized_response_bitvec([b"\x00"], 1.0)


# -- OpenDP 0.16 parity ----------------------------------------------------------------------------


def _opendp() -> object:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    return odp


@pytest.mark.parametrize("prob", [*PROBS, 1.0])
def test_bool_map_matches_opendp(prob: float) -> None:
    odp = _opendp()
    theirs = odp.m.make_randomized_response_bool(prob).map(1)  # type: ignore[attr-defined]
    ours = dp.m.make_randomized_response_bool(prob)
    if math.isinf(theirs):
        with pytest.raises(FailedMap):
            ours.map(1)
        return
    assert ours.map(1) >= theirs - 1e-15 and ours.map(1) <= theirs * (1 + 1e-15) + 1e-300


@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize("prob", [0.5, 0.6, 0.75, 0.9, 0.99])
def test_categorical_map_matches_opendp(k: int, prob: float) -> None:
    odp = _opendp()
    theirs = odp.m.make_randomized_response(list(range(k)), prob).map(1)  # type: ignore[attr-defined]
    ours = dp.m.make_randomized_response(list(range(k)), prob).map(1)
    assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("m", [1, 4, 10])
@pytest.mark.parametrize("f", [0.05, 0.5, 0.95, 1.0])
def test_bitvec_map_matches_opendp(m: int, f: float) -> None:
    odp = _opendp()
    theirs = odp.m.make_randomized_response_bitvec(  # type: ignore[attr-defined]
        odp.bitvector_domain(max_weight=m),
        odp.discrete_distance(),
        f=f,  # type: ignore[attr-defined]
    ).map(1)
    ours = dp.m.make_randomized_response_bitvec(
        bitvector_domain(max_weight=m), dp.discrete_distance(), f=f
    ).map(1)
    assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-15)
    fq = gmpy2.mpq(f)
    with gmpy2.context(precision=300):
        assert gmpy2.mpfr(ours) >= 2 * m * exact_log(2 - fq, fq)


def test_debias_matches_opendp() -> None:
    odp = _opendp()
    answers = [bytes([0b10000001, 3]), bytes([0b11000000, 1]), bytes([0, 0])]
    theirs = odp.m.debias_randomized_response_bitvec(answers, 0.3)  # type: ignore[attr-defined]
    assert dp.m.debias_randomized_response_bitvec(answers, 0.3) == pytest.approx(theirs)
