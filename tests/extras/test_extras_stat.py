"""Statistical tests of the extras' noisy releases: the noise has the stated law (KS test at a
fixed α on a fixed number of samples), and a scale off by ×0.7 or ×1.3 is rejected.

α is the suite's ``ALPHA``.  The wrong laws are rejected on the folded noise |z| (KS distance
0.096 between Laplace(b) and Laplace(1.3b) folded, against 0.048 unfolded), and
``check_continuous`` checks each rejection's power at the sample drawn."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import opendp_lite.prelude as dp
from opendp_lite.extras.sklearn.decomposition import make_private_pca
from tests.conftest import scaled
from tests.stat._reference import check_continuous

SYM = dp.symmetric_distance()


def _check_laplace(noise: np.ndarray, scale: float) -> None:
    wrong = [stats.laplace(0.0, scale * f).cdf for f in (0.7, 1.3)]
    check_continuous(noise, stats.laplace(0.0, scale).cdf, wrong, symmetric_about=0.0)


@pytest.mark.slow
def test_private_np_mean_noise_is_laplace_of_the_stated_scale() -> None:
    n_rows, scale = 8, 0.5
    dom = dp.numpy.array2_domain(size=n_rows, num_columns=2, T=float)
    meas = dp.numpy.make_private_np_mean(dom, SYM, scale, norm=1.0, p=1)
    x = np.array([[0.25, -0.5]] * n_rows)  # in the L1 ball: the exact mean is (0.25, -0.5)
    samples = scaled(3000, minimum=2000)  # two coordinates each: N >= 4000
    noise = np.concatenate([meas(x) - np.array([0.25, -0.5]) for _ in range(samples)])
    _check_laplace(noise, scale)


@pytest.mark.slow
def test_pca_sscp_noise_is_laplace_of_the_calibrated_scale() -> None:
    """With one column, a known origin and rows of norm R, the released S² is the exact SSCP
    n·R² plus one Laplace draw of scale sensitivity/ε = 2·(d+1)R²/2 / ε at d_in = 2."""
    n, R, eps = 200, 1.0, 1.0
    dom = dp.numpy.array2_domain(norm=R, p=2, size=n, num_columns=1, T=float)
    pca = make_private_pca(dom, SYM, unit_epsilon=eps)
    x = np.full((n, 1), R)
    samples = scaled(5000, minimum=4000)
    noise = np.array([pca(x).S[0] ** 2 - n * R**2 for _ in range(samples)])
    _check_laplace(noise, 2 * R**2 / eps)
