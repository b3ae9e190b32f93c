"""χ² tests of the exact scalar samplers against their exact pmfs.

Fixed up front: significance ALPHA and sample size N.  Each test also checks that the same
sample *rejects* the law with the parameter scaled by 0.7 and by 1.3, so the test has power.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import pytest

from opendp_lite.samplers.bernoulli import sample_bernoulli, sample_bernoulli_exp
from opendp_lite.samplers.discrete_gaussian import sample_discrete_gaussian
from opendp_lite.samplers.discrete_laplace import sample_discrete_laplace
from opendp_lite.samplers.geometric import sample_geometric
from tests.conftest import scaled
from tests.stat._reference import (
    bernoulli_pmf as bern_pmf,
)
from tests.stat._reference import (
    check_integer_law,
)
from tests.stat._reference import (
    discrete_gaussian_pmf as dg_pmf,
)
from tests.stat._reference import (
    discrete_laplace_pmf as dl_pmf,
)
from tests.stat._reference import (
    geometric_pmf as geo_pmf,
)

scipy_stats = pytest.importorskip("scipy.stats")


N = 20_000
WRONG = (0.7, 1.3)


def check(samples: list[int], make_pmf: Callable[[float], Callable[[int], float]], param: float):
    wrong = [make_pmf(param * f) for f in WRONG]
    check_integer_law(samples, make_pmf(param), wrong, what=f"parameter {param}")


@pytest.mark.parametrize("p", [Fraction(1, 3), 0.1, Fraction(5, 8)])
def test_bernoulli(p) -> None:
    samples = [int(sample_bernoulli(p)) for _ in range(N)]
    check(samples, bern_pmf, float(p))


@pytest.mark.parametrize("gamma", [Fraction(1, 2), Fraction(17, 10), 3.0])
def test_bernoulli_exp(gamma) -> None:
    samples = [int(sample_bernoulli_exp(gamma)) for _ in range(N)]
    check(samples, lambda g: bern_pmf(math.exp(-g)), float(gamma))


@pytest.mark.parametrize("gamma", [Fraction(2, 5), Fraction(3, 7), 2.0])
def test_geometric(gamma) -> None:
    samples = [sample_geometric(gamma) for _ in range(N)]
    check(samples, geo_pmf, float(gamma))


@pytest.mark.parametrize("scale", [0.8, Fraction(5, 2), 3.0])
def test_discrete_laplace(scale) -> None:
    samples = [sample_discrete_laplace(scale) for _ in range(N)]
    check(samples, dl_pmf, float(scale))


@pytest.mark.parametrize("scale", [0.7, 2.0, Fraction(11, 2)])
def test_discrete_gaussian(scale) -> None:
    samples = [sample_discrete_gaussian(scale) for _ in range(N)]
    check(samples, dg_pmf, float(scale))


@pytest.mark.slow
@pytest.mark.parametrize("scale", [0.3, 1.0, 7.25, 40.0])
def test_discrete_laplace_large_sample(scale) -> None:
    samples = [sample_discrete_laplace(scale) for _ in range(scaled(200_000))]
    check(samples, dl_pmf, scale)


@pytest.mark.slow
@pytest.mark.parametrize("scale", [0.3, 1.0, 7.25, 40.0])
def test_discrete_gaussian_large_sample(scale) -> None:
    samples = [sample_discrete_gaussian(scale) for _ in range(scaled(200_000))]
    check(samples, dg_pmf, scale)
