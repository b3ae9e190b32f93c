"""The noise mechanisms on a float domain that admits NaN (``atom_domain(T=float)``).

NaN is at infinite distance from every value under ``absolute_distance``, ``l1_distance`` and
``l2_distance``, so no pair of inputs within a finite ``d_in`` holds one, and a NaN may be
released as NaN (docs/proofs/lemmas/nan-inputs.md).  These tests check that ``make_laplace``,
``make_gaussian`` and ``make_noise`` build on such a domain with the same map, release NaN as
NaN, and release on finite inputs exactly what they release on the NaN-free domain (the same
bits give the same outputs, and the law passes the KS test at ``ALPHA``); ±inf is still refused
before any randomness, and the transformations whose stability needs numbers still refuse the
domain.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import InvalidParameter, NotImplementedForType, NotInDomain
from opendp_lite.samplers import rng
from tests.conftest import counting_source
from tests.stat._reference import check_continuous

NAN, INF = math.nan, math.inf
TS = ["f64", "f32"]


def _T(T: str) -> Any:
    return float if T == "f64" else T


def _atom(T: str, nan: bool) -> Any:
    return dp.atom_domain(T=_T(T), nan=nan)


#: (name, build(atom domain, T) -> measurement, vector?)
BUILDS: list[tuple[str, Callable[[Any, str], Any], bool]] = [
    ("laplace", lambda a, T: dp.m.make_laplace(a, dp.absolute_distance(T=_T(T)), 2.0), False),
    ("gaussian", lambda a, T: dp.m.make_gaussian(a, dp.absolute_distance(T=_T(T)), 2.0), False),
    (
        "laplace_vec",
        lambda a, T: dp.m.make_laplace(dp.vector_domain(a), dp.l1_distance(T=_T(T)), 2.0),
        True,
    ),
    (
        "gaussian_vec",
        lambda a, T: dp.m.make_gaussian(dp.vector_domain(a), dp.l2_distance(T=_T(T)), 2.0),
        True,
    ),
    (
        "laplace_vec_k0",
        lambda a, T: dp.m.make_laplace(
            dp.vector_domain(a, size=4), dp.l1_distance(T=_T(T)), 2.0, k=0
        ),
        True,
    ),
    (
        "noise_laplace",
        lambda a, T: dp.m.make_noise(a, dp.absolute_distance(T=_T(T)), dp.max_divergence(), 2.0),
        False,
    ),
    (
        "noise_gaussian_vec",
        lambda a, T: dp.m.make_noise(
            dp.vector_domain(a), dp.l2_distance(T=_T(T)), dp.zero_concentrated_divergence(), 2.0
        ),
        True,
    ),
]
CASES = [(n, b, v, T) for n, b, v in BUILDS for T in TS]
IDS = [f"{n}-{T}" for n, _, _, T in CASES]


@pytest.mark.parametrize(("name", "build", "vector", "T"), CASES, ids=IDS)
def test_builds_on_nan_admitting_domain_with_the_same_map(
    name: str, build: Any, vector: bool, T: str
) -> None:
    meas = build(_atom(T, True), T)
    plain = build(_atom(T, False), T)
    elem = meas.input_domain.element_domain if vector else meas.input_domain
    assert elem == _atom(T, True)  # the domain as given: not narrowed
    for d in (0.0, 1.0, 3.5):
        assert meas.map(d) == plain.map(d)


@pytest.mark.parametrize(("name", "build", "vector", "T"), CASES, ids=IDS)
def test_nan_in_nan_out(name: str, build: Any, vector: bool, T: str) -> None:
    meas = build(_atom(T, True), T)
    if not vector:
        y = meas(NAN)
        assert type(y) is float and math.isnan(y)
        assert math.isfinite(meas(1.0))
        return
    dtype = np.float64 if T == "f64" else np.float32
    x = np.array([1.0, NAN, -2.0, NAN], dtype=dtype)
    y = meas(x)
    assert y.dtype == dtype and y.shape == (4,)
    assert np.array_equal(np.isnan(y), np.isnan(x))
    assert np.isfinite(y[~np.isnan(x)]).all()
    listed = meas([NAN, 1.0, 2.0, 3.0])  # a list in gives a list out
    assert math.isnan(listed[0]) and all(math.isfinite(v) for v in listed[1:])


def _scripted(f: Callable[[], Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scripted randomness warns (not private)
        with rng.scripted_randomness(seed=b"test_noise_nan"):
            return f()


@pytest.mark.parametrize(("name", "build", "vector", "T"), CASES, ids=IDS)
def test_same_release_as_the_nan_free_domain_on_the_same_bits(
    name: str, build: Any, vector: bool, T: str
) -> None:
    # A NaN coordinate is noised as 0 and released as NaN: on the same random bits, every other
    # coordinate is exactly what the NaN-free mechanism releases (the same code path, the same
    # law); a scalar NaN consumes the draw of a 0.
    meas, plain = build(_atom(T, True), T), build(_atom(T, False), T)
    if not vector:
        xs = [0.5, NAN, -3.0, 1e30, NAN, 7.25]
        got = _scripted(lambda: [meas(x) for x in xs])
        want = _scripted(lambda: [plain(0.0 if math.isnan(x) else x) for x in xs])
        for x, g, w in zip(xs, got, want, strict=True):
            assert math.isnan(g) if math.isnan(x) else g == w
        return
    dtype = np.float64 if T == "f64" else np.float32
    n = 4 if name.endswith("k0") else 3000  # the small path and the vectorised one
    x = np.resize(np.array([2.5, NAN, -1.0, NAN, 0.0], dtype=dtype), n)
    got = _scripted(lambda: meas(x))
    want = _scripted(lambda: plain(np.where(np.isnan(x), dtype(0), x)))
    mask = np.isnan(x)
    assert np.isnan(got[mask]).all()
    assert np.array_equal(got[~mask], want[~mask])


@pytest.mark.parametrize(("dist", "T"), [("laplace", "f64"), ("gaussian", "f32")])
def test_finite_coordinates_have_the_continuous_law(dist: str, T: str) -> None:
    stats = pytest.importorskip("scipy.stats")
    law = stats.laplace if dist == "laplace" else stats.norm
    make = dp.m.make_laplace if dist == "laplace" else dp.m.make_gaussian
    metric = dp.l1_distance if dist == "laplace" else dp.l2_distance
    # n finite coordinates, fixed up front: in 20 runs on OS randomness the larger p-value of the
    # x0.7 and x1.3 laws was at most 1.4e-9 at n = 5000 and 1.9e-19 at n = 10000 (Laplace)
    scale, n = 0.75, 10_000
    meas = make(dp.vector_domain(_atom(T, True)), metric(T=_T(T)), scale)
    x = np.full(2 * n, 10.0, dtype=np.float64 if T == "f64" else np.float32)
    x[1::2] = np.nan
    y = meas(x)
    assert np.isnan(y[1::2]).all()
    z = y[0::2].astype(np.float64) - 10.0
    check_continuous(
        z,
        lambda v: law.cdf(v, 0.0, scale),
        wrong=[lambda v, w=w: law.cdf(v, 0.0, scale * w) for w in (0.7, 1.3)],
        what=f"{dist} {T} on a NaN-admitting domain",
        symmetric_about=0.0,
    )


@pytest.mark.parametrize("value", [INF, -INF], ids=repr)
@pytest.mark.parametrize(("name", "build", "vector", "T"), CASES, ids=IDS)
def test_infinity_still_refused_before_randomness(
    name: str, build: Any, vector: bool, T: str, value: float
) -> None:
    meas = build(_atom(T, True), T)
    arg: Any = [NAN, value, 1.0, 2.0] if vector else value
    with counting_source() as calls, pytest.raises(NotInDomain):
        meas(arg)
    assert calls == []


def test_sample_many_releases_nan_for_nan() -> None:
    meas = dp.m.make_laplace(_atom("f64", True), dp.absolute_distance(T=float), 1.0)
    many = meas.function.sample_many
    assert np.isnan(many(NAN, 5)).all()
    assert np.isfinite(many(1.0, 5)).all()


def test_chain_from_a_nan_admitting_space() -> None:
    space = dp.vector_domain(dp.atom_domain(T=float)), dp.l1_distance(T=float)
    meas = space >> dp.m.then_laplace(1.0)
    assert meas.map(2.0) == 2.0
    assert np.isnan(meas(np.array([NAN, 1.0]))[0])


def test_canonical_noise_on_a_nan_admitting_domain() -> None:
    space = dp.atom_domain(T=float), dp.absolute_distance(T=float)
    plain_space = dp.atom_domain(T=float, nan=False), space[1]
    meas = dp.m.make_canonical_noise(*space, d_in=1.0, d_out=(1.0, 1e-6))
    plain = dp.m.make_canonical_noise(*plain_space, d_in=1.0, d_out=(1.0, 1e-6))
    assert meas.input_domain == space[0] and meas.map(0.5) == plain.map(0.5)
    assert math.isnan(meas(NAN))
    xs = [0.25, -4.0, 1e6]
    assert _scripted(lambda: [meas(x) for x in xs]) == _scripted(lambda: [plain(x) for x in xs])


#: transformations whose stability needs numbers: each still refuses a NaN-admitting domain
REFUSING: list[tuple[str, Callable[[], Any]]] = [
    (
        "clamp",
        lambda: dp.t.make_clamp(
            dp.vector_domain(dp.atom_domain(T=float)), dp.symmetric_distance(), (0.0, 1.0)
        ),
    ),
    (
        "sum",
        lambda: dp.t.make_sum(dp.vector_domain(dp.atom_domain(T=float)), dp.symmetric_distance()),
    ),
    (
        "lipschitz_float_mul",
        lambda: dp.t.make_lipschitz_float_mul(
            dp.atom_domain(T=float), dp.absolute_distance(T=float), 2.0, (0.0, 1.0)
        ),
    ),
    (
        "quantile_score_candidates",
        lambda: dp.t.make_quantile_score_candidates(
            dp.vector_domain(dp.atom_domain(T=float)), dp.symmetric_distance(), [0.0, 1.0], 0.5
        ),
    ),
    (
        "mean",
        lambda: dp.t.make_mean(
            dp.vector_domain(dp.atom_domain(T=float), size=3), dp.symmetric_distance()
        ),
    ),
]


@pytest.mark.parametrize("build", [b for _, b in REFUSING], ids=[n for n, _ in REFUSING])
def test_transformations_needing_numbers_still_refuse(build: Callable[[], Any]) -> None:
    with pytest.raises((InvalidParameter, NotImplementedForType), match=r"NaN|bound"):
        build()
