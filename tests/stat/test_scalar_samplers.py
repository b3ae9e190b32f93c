"""χ² tests of the exact scalar samplers against their exact pmfs.

Fixed up front: significance ALPHA and sample size N.  Each test also checks that the same
sample *rejects* the law with the parameter scaled by 0.7 and by 1.3, so the test has power.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from fractions import Fraction

import pytest

from opendp_lite.samplers.bernoulli import sample_bernoulli, sample_bernoulli_exp
from opendp_lite.samplers.discrete_gaussian import sample_discrete_gaussian
from opendp_lite.samplers.discrete_laplace import sample_discrete_laplace
from opendp_lite.samplers.geometric import sample_geometric
from tests.conftest import ALPHA, scaled

scipy_stats = pytest.importorskip("scipy.stats")


N = 20_000
WRONG = (0.7, 1.3)


def chi2_pvalue(
    samples: Sequence[int],
    pmf: Callable[[int], float],
    lo: int,
    hi: int,
    cells_from: Callable[[int], float] | None = None,
) -> float:
    """χ² p-value of integer ``samples`` against ``pmf`` (support within [lo, hi]).

    Cells are consecutive integers merged until each expects >= 5 draws under
    ``cells_from`` (default ``pmf``).  Wrong laws are tested on the cells of the true law,
    so a concentrated wrong law still yields a proper (large) statistic.
    """
    n = len(samples)
    counts = Counter(samples)
    assert lo <= min(samples) and max(samples) <= hi, "sample outside the modelled support"
    shape = cells_from or pmf
    groups: list[list[int]] = [[]]
    acc = 0.0
    for z in range(lo, hi + 1):
        groups[-1].append(z)
        acc += n * shape(z)
        if acc >= 5:
            groups.append([])
            acc = 0.0
    if len(groups) > 1:
        groups[-2].extend(groups.pop())  # the remainder joins the last full cell
    exp = [math.fsum(n * pmf(z) for z in g) for g in groups]
    obs = [sum(counts.get(z, 0) for z in g) for g in groups]
    total = sum(exp)
    exp = [max(e * n / total, 1e-300) for e in exp]  # the tails beyond [lo, hi] are negligible
    return float(scipy_stats.chisquare(obs, exp).pvalue)


def dl_pmf(scale: float) -> Callable[[int], float]:
    a = math.exp(-1 / scale)
    return lambda z: (1 - a) / (1 + a) * a ** abs(z)


def dg_pmf(scale: float) -> Callable[[int], float]:
    norm = math.fsum(math.exp(-(i * i) / (2 * scale * scale)) for i in range(-2000, 2001))
    return lambda z: math.exp(-(z * z) / (2 * scale * scale)) / norm


def geo_pmf(gamma: float) -> Callable[[int], float]:
    return lambda g: -math.expm1(-gamma) * math.exp(-gamma * g) if g >= 0 else 0.0


def bern_pmf(p: float) -> Callable[[int], float]:
    return lambda b: p if b == 1 else 1 - p if b == 0 else 0.0


def check(samples: list[int], make_pmf: Callable[[float], Callable[[int], float]], param: float):
    lo, hi = min(samples) - 5, max(samples) + 5
    assert chi2_pvalue(samples, make_pmf(param), lo, hi) > ALPHA
    for f in WRONG:
        p = chi2_pvalue(samples, make_pmf(param * f), lo, hi, cells_from=make_pmf(param))
        assert p < ALPHA, f"{f}x not rejected"


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
