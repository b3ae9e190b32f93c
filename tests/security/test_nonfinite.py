"""Non-finite data: NaN/±inf never yields an un-noised, NaN or infinite release.

Attack family: float noise added to NaN gives NaN and to ±inf gives ±inf, whatever the noise:
the release is then a deterministic function of one record (a NaN or an inf planted in the
data is visible with certainty).  Controls: numpy's Laplace does exactly that.  opendp_lite
refuses NaN-admitting domains for clamping and sums at construction, rejects non-finite data
on invoke *before drawing any randomness* (NaN where the domain excludes it, ±inf always), and
clamps ±inf to the bounds.  A noise mechanism built on a NaN-admitting domain releases NaN as
NaN: there NaN is at infinite distance from every value, so the transformations that feed it
(which refuse NaN) never produce one for one dataset and a number for its neighbour
(tests/measurements/test_noise_nan.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import (
    FailedFunction,
    InvalidParameter,
    NotImplementedForType,
    NotInDomain,
)
from tests.conftest import counting_source

NAN, INF = math.nan, math.inf
SD = dp.symmetric_distance()
F64 = (dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float))
VF = dp.vector_domain(dp.atom_domain(T=float, nan=False))
NAN_ATOM = dp.atom_domain(T=float, nan=True)
NAN_VEC = dp.vector_domain(NAN_ATOM)


def test_naive_numpy_laplace_leaks_nonfinite_records() -> None:
    gen = np.random.default_rng()  # the control only
    assert math.isnan(NAN + gen.laplace(0.0, 1.0))
    assert INF + gen.laplace(0.0, 1.0) == INF
    assert np.isnan(np.sum(np.array([1.0, NAN])) + gen.laplace(0.0, 1.0))


@pytest.mark.parametrize(
    "build",
    [
        lambda: dp.t.make_clamp(NAN_VEC, SD, (0.0, 1.0)),
        lambda: dp.t.make_sum(dp.vector_domain(dp.atom_domain(T=float, nan=True)), SD),
    ],
)
def test_nan_admitting_domain_refused_at_construction(build: Callable[[], Any]) -> None:
    with pytest.raises((InvalidParameter, NotImplementedForType)):
        build()


@pytest.mark.parametrize(
    "build",
    [
        lambda: dp.m.make_report_noisy_max_gumbel(NAN_VEC, dp.linf_distance(T=float), 1.0),
        lambda: dp.m.make_noisy_max(NAN_VEC, dp.linf_distance(T=float), dp.max_divergence(), 1.0),
    ],
)
def test_selection_over_nan_scores_refused(build: Callable[[], Any]) -> None:
    with pytest.raises((InvalidParameter, NotImplementedForType)):
        build()


@pytest.mark.parametrize("bounds", [(0.0, INF), (-INF, 0.0), (NAN, 1.0), (0.0, NAN)], ids=repr)
def test_non_finite_bounds_refused(bounds: tuple[float, float]) -> None:
    with pytest.raises(InvalidParameter):
        dp.atom_domain(bounds=bounds)
    with pytest.raises(InvalidParameter):
        dp.t.make_clamp(VF, SD, bounds)


SCALAR_MEASUREMENTS: list[tuple[str, Callable[[], Any]]] = [
    ("laplace", lambda: dp.m.make_laplace(*F64, 1.0)),
    ("laplace_k0", lambda: dp.m.make_laplace(*F64, 1.0, k=0)),
    ("gaussian", lambda: dp.m.make_gaussian(*F64, 1.0)),
    ("base_laplace", lambda: dp.m.make_base_laplace(*F64, 1.0)),
    # the older names narrow a NaN-admitting domain (the OpenDP guide's snippets use them)
    (
        "base_laplace_nan",
        lambda: dp.m.make_base_laplace(NAN_ATOM, dp.absolute_distance(T=float), 1.0),
    ),
    (
        "base_gaussian_nan",
        lambda: dp.m.make_base_gaussian(NAN_ATOM, dp.absolute_distance(T=float), 1.0),
    ),
]
VECTOR_MEASUREMENTS: list[tuple[str, Callable[[], Any]]] = [
    ("laplace_vec", lambda: dp.m.make_laplace(VF, dp.l1_distance(T=float), 1.0)),
    ("gaussian_vec", lambda: dp.m.make_gaussian(VF, dp.l2_distance(T=float), 1.0)),
    (
        "noisy_max",
        lambda: dp.m.make_noisy_max(VF, dp.linf_distance(T=float), dp.max_divergence(), 1.0),
    ),
    ("gumbel_max", lambda: dp.m.make_report_noisy_max_gumbel(VF, dp.linf_distance(T=float), 1.0)),
]


@pytest.mark.parametrize("value", [NAN, INF, -INF], ids=repr)
@pytest.mark.parametrize("case", SCALAR_MEASUREMENTS, ids=lambda c: c[0])
def test_scalar_nonfinite_rejected_before_randomness(value: float, case: Any) -> None:
    meas = case[1]()
    with counting_source() as calls:
        with pytest.raises(FailedFunction):  # NotInDomain is a FailedFunction
            meas(value)
    assert calls == [], "randomness was drawn before the input was rejected"


@pytest.mark.parametrize("value", [NAN, INF, -INF], ids=repr)
@pytest.mark.parametrize("case", VECTOR_MEASUREMENTS, ids=lambda c: c[0])
def test_vector_nonfinite_rejected_before_randomness(value: float, case: Any) -> None:
    meas = case[1]()
    with counting_source() as calls:
        with pytest.raises(FailedFunction):
            meas(np.array([1.0, value, 2.0]))
    assert calls == [], "randomness was drawn before the input was rejected"


def test_clamped_chain_noises_infinite_records() -> None:
    # ±inf are members of an unbounded f64 domain without NaN; clamping bounds them, and the
    # release is noised, finite, and not a deterministic function of the infinite record.
    chain = (VF, SD) >> dp.t.then_clamp((0.0, 10.0)) >> dp.t.then_sum() >> dp.m.then_laplace(1.0)
    data = np.array([1.0, INF, -INF])
    outs = np.array([chain(data) for _ in range(200)])
    assert np.isfinite(outs).all()
    assert len(np.unique(outs)) > 150  # noised (a continuous-like law), never the raw 11.0 only
    assert abs(float(np.median(outs)) - 11.0) < 1.0  # inf clamped to 10, -inf to 0


def test_nan_in_data_rejected_by_clamp_chain_before_randomness() -> None:
    chain = (VF, SD) >> dp.t.then_clamp((0.0, 10.0)) >> dp.t.then_sum() >> dp.m.then_laplace(1.0)
    with counting_source() as calls:
        with pytest.raises(NotInDomain):
            chain(np.array([1.0, NAN]))
    assert calls == []


def test_impute_then_noise_never_releases_nan() -> None:
    chain = (
        (NAN_VEC, SD)
        >> dp.t.then_impute_constant(0.0)
        >> dp.t.then_clamp((0.0, 10.0))
        >> dp.t.then_sum()
        >> dp.m.then_laplace(1.0)
    )
    outs = [chain(np.array([NAN, 3.0, NAN])) for _ in range(50)]
    assert all(math.isfinite(y) for y in outs) and len(set(outs)) > 40


@pytest.mark.parametrize("case", SCALAR_MEASUREMENTS, ids=lambda c: c[0])
def test_extreme_finite_inputs_give_finite_releases(case: Any) -> None:
    meas = case[1]()
    top = float(np.finfo(np.float64).max)
    for x in (top, -top, 5e-324, -0.0):
        ys = [meas(x) for _ in range(20)]
        assert all(math.isfinite(y) for y in ys)
