"""Precision-based attacks (Haney et al. 2022): the residual law must not depend on magnitude.

Attack family: in a naive float mechanism the release ``fl(x + n)`` is rounded to the
precision of ``x``'s binade, so the *residual* ``release − x`` is coarse when ``|x|`` is large
and fine when it is small; its precision reveals the input.  In opendp_lite at a coarse ``k``
the residual ``release − round_k(x)`` is exactly ``2^k·Z`` with ``Z`` discrete Laplace of
scale ``scale/2^k``, whatever ``x``: we check that law by χ² at every magnitude (and that the
test rejects scale × 0.7 and × 1.3), and that the numpy control fails it.

At the default ``k`` the release is the exact noisy value rounded to the nearest float: its
precision depends on the *output* only (post-processing).  Conditioned on an output window,
the precision histogram of ``M(0)`` and ``M(0.1)`` is the same law; numpy's is not.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite.audit import _granularity
from opendp_lite.samplers import rng
from tests.conftest import ALPHA
from tests.stat._reference import assert_fits, chi2_pvalue, discrete_laplace_pmf

stats = pytest.importorskip("scipy.stats")

F64 = (dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float))

N = 6000
K = -2
SCALE = 1.0
MAGNITUDES = [0.3, 1e6 + 0.3, 2.0**40 + 0.3]


def _round_k(x: float, k: int) -> Fraction:
    """x rounded to the nearest multiple of 2^k (ties away from zero are irrelevant here)."""
    g = Fraction(2) ** k
    return round(Fraction(x) / g) * g


def _residual_units(ys: list[float], x: float, k: int) -> np.ndarray:
    g = Fraction(2) ** k
    r = [(Fraction(y) - _round_k(x, k)) / g for y in ys]
    assert all(v.denominator == 1 for v in r), "a residual is off the grid 2^k"
    return np.array([int(v) for v in r])


def _gof_pvalue(units: np.ndarray, scale: float) -> float:
    """χ² goodness of fit of integer samples to the discrete Laplace(scale), tails pooled."""
    edge = 12
    z = np.arange(-edge, edge + 1)
    pmf = discrete_laplace_pmf(scale)(z)  # type: ignore[arg-type]
    tail = (1 - pmf.sum()) / 2
    clipped = np.clip(units, -edge - 1, edge + 1) + edge + 1
    observed = np.bincount(clipped, minlength=2 * edge + 3)
    return chi2_pvalue(observed, np.concatenate([[tail], pmf, [tail]]))


@contextmanager
def seeded(seed: bytes) -> Iterator[None]:
    """A fixed stream, so that a test at level α = 1e-3 is deterministic in CI."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with rng.scripted_randomness(seed=seed):
            yield


@pytest.fixture(scope="module")
def residuals() -> dict[float, np.ndarray]:
    meas = dp.m.make_laplace(*F64, scale=SCALE, k=K)
    with seeded(b"precision-residuals"):
        return {x: _residual_units([meas(x) for _ in range(N)], x, K) for x in MAGNITUDES}


@pytest.mark.parametrize("x", MAGNITUDES)
def test_residual_law_is_discrete_laplace_at_every_magnitude(
    residuals: dict[float, np.ndarray], x: float
) -> None:
    assert_fits(_gof_pvalue(residuals[x], SCALE / 2.0**K))


@pytest.mark.parametrize("factor", [0.7, 1.3])
def test_residual_test_rejects_a_wrong_scale(
    residuals: dict[float, np.ndarray], factor: float
) -> None:
    pooled = np.concatenate(list(residuals.values()))
    assert _gof_pvalue(pooled, factor * SCALE / 2.0**K) < ALPHA


def test_residual_law_homogeneous_across_magnitudes(residuals: dict[float, np.ndarray]) -> None:
    edge = 12
    table = [
        np.bincount(np.clip(r, -edge - 1, edge + 1) + edge + 1, minlength=2 * edge + 3)
        for r in residuals.values()
    ]
    table = np.array(table)
    table = table[:, table.sum(axis=0) > 0]
    assert_fits(stats.chi2_contingency(table).pvalue)


def test_naive_numpy_residual_precision_depends_on_magnitude() -> None:
    gen = np.random.default_rng()  # the control only
    n = 2000
    precision = {}
    for x in (0.3, 2.0**40 + 0.3):
        ys = x + gen.laplace(0.0, SCALE, n)
        res = np.array([float(Fraction(float(y)) - Fraction(x)) for y in ys])
        precision[x] = _granularity(res)
    # near 2^40 every residual is a multiple of 2^-13 (ulp below 2^40); near 0.3 almost none
    assert (precision[2.0**40 + 0.3] >= -13).all()
    assert np.mean(precision[0.3] >= -13) < 0.01
    # and so the naive residual is never on the 2^k grid law checked above
    assert np.mean(precision[0.3] >= K) < 0.01


def _window_precision(ys: np.ndarray) -> np.ndarray:
    w = ys[(ys > 0) & (ys < 0.05)]
    return np.clip(-_granularity(w), 52, 62).astype(np.int64) - 52


def _homogeneity_pvalue(a: np.ndarray, b: np.ndarray) -> float:
    table = np.array([np.bincount(a, minlength=11), np.bincount(b, minlength=11)])
    table = table[:, table.sum(axis=0) > 0]
    return float(stats.chi2_contingency(table).pvalue)


def _draw(meas: Any, x: float, n: int) -> np.ndarray:
    return np.array([meas(x) for _ in range(n)])


def test_default_k_output_precision_depends_on_output_only() -> None:
    meas = dp.m.make_laplace(*F64, scale=SCALE)
    with seeded(b"precision-default-k"):
        a = _window_precision(_draw(meas, 0.0, 20_000))
        b = _window_precision(_draw(meas, 0.1, 20_000))
    assert len(a) > 200 and len(b) > 200
    assert_fits(_homogeneity_pvalue(a, b))


def test_naive_numpy_output_precision_reveals_input() -> None:
    gen = np.random.default_rng()  # the control only
    a = _window_precision(0.0 + gen.laplace(0.0, SCALE, 20_000))
    b = _window_precision(0.1 + gen.laplace(0.0, SCALE, 20_000))
    assert _homogeneity_pvalue(a, b) < ALPHA
