"""χ²: the same chain gives identically distributed releases on numpy and on Dask input.

A DP histogram of K = 200 bins is released R = 20 times from each input (a LocalCluster for
Dask), so each side yields K·R = 4000 noise values (release − exact counts), independent
across bins and releases.  At a coarse grid the noise is integer-valued in grid units with the
exact law DL(t) (discrete Laplace, P(z) = tanh(1/2t)·e^{−|z|/t}), t = scale/2^k = 8.

α = ``ALPHA`` (tests/conftest.py) throughout; each rejection's power is checked at its n.
Each side must fit DL(8) (goodness of fit), the two sides must agree
(two-sample χ² on the same bins), and the Dask sample must *reject* DL(8·0.7) and DL(8·1.3).
The random streams are scripted (fixed seeds, different for each side), so the test is
deterministic.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

import opendp_lite.prelude as dp
from opendp_lite.samplers import rng
from tests.stat._reference import assert_fits, assert_rejects, chi2_power, discrete_laplace_pmf

da = pytest.importorskip("dask.array")
stats = pytest.importorskip("scipy.stats")


K = 200  # bins of the histogram: noise values per release
R = 20  # releases per input
N = 30_000
T = 8.0  # the noise scale in grid units
CUTS = np.arange(-24, 25, 4)  # χ² cells on the integer noise: (-inf, -24), [-24, -20), ...


def _dl_cells(t: float) -> npt.NDArray[np.float64]:
    """The exact probabilities of the χ² cells under DL(t) (tails summed far out)."""
    z = np.arange(-4000, 4001)
    p = discrete_laplace_pmf(t)(z)  # type: ignore[arg-type]
    return np.bincount(np.searchsorted(CUTS, z, side="right"), weights=p, minlength=len(CUTS) + 1)


def _cells(noise: npt.NDArray[Any]) -> npt.NDArray[np.int64]:
    return np.bincount(np.searchsorted(CUTS, noise, side="right"), minlength=len(CUTS) + 1)


def _noise(meas: Any, exact: npt.NDArray[Any], data: Any, seed: bytes, grid: float) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with rng.scripted_randomness(seed=seed):
            out = [np.asarray(meas(data), dtype=np.float64) for _ in range(R)]
    z = (np.concatenate(out) - np.tile(exact.astype(np.float64), R)) / grid
    assert np.array_equal(z, np.round(z))  # on the grid, as the law says
    return z.astype(np.int64)


@pytest.mark.parametrize(("TOA", "scale", "k"), [("i64", T, None), ("f64", T / 4, -2)])
def test_same_law_on_numpy_and_dask(client: Any, TOA: str, scale: float, k: int | None) -> None:
    x = np.random.default_rng(31).uniform(0.0, 1.0, N)
    xd = da.from_array(x, chunks=4_000)
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    hist = (
        space
        >> dp.t.then_find_bin([i / K for i in range(1, K)])
        >> dp.t.then_count_by_categories(list(range(K)), null_category=False, TOA=TOA)
    )
    exact = hist(x)
    assert np.array_equal(hist(xd), exact)
    meas = hist >> dp.m.then_laplace(scale, k=k)
    grid = 1.0 if k is None else 2.0**k
    z_np = _noise(meas, exact, x, b"numpy-side", grid)
    z_dask = _noise(meas, exact, xd, b"dask-side", grid)
    p = _dl_cells(T)
    for z in (z_np, z_dask):
        assert_fits(stats.chisquare(_cells(z), p * len(z)).pvalue)
    table = np.stack([_cells(z_np), _cells(z_dask)])
    assert_fits(stats.chi2_contingency(table).pvalue)
    for wrong in (0.7, 1.3):
        w = _dl_cells(T * wrong)
        p_wrong = stats.chisquare(_cells(z_dask), w * len(z_dask)).pvalue
        assert_rejects(p_wrong, chi2_power(len(z_dask), p, w), f"(DL({T} x {wrong}))")
