"""Seed 001 (Navarro-Arribas, the Laplace mechanism): the Laplace law, counting queries have
Δ = 1, a pair of counts has Δ = 2, and the vector Laplace mechanism is Δ/b-DP."""

from __future__ import annotations

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite.sensitivity import L1Norm
from tests.stat._reference import check_continuous

scipy_stats = pytest.importorskip("scipy.stats")


def test_l1_norm_example() -> None:
    assert L1Norm().compute([2, 3, -4, 6], [0, 0, 0, 0]) == 15


def test_counting_query_has_sensitivity_one() -> None:
    count = dp.t.make_count(dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance())
    assert count.map(1) == 1
    ages = [17, 18, 45, 70, 12]
    adults = dp.t.make_count(dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance())
    assert adults([a for a in ages if a >= 18]) == 3


def _f_c() -> dp.Transformation:  # type: ignore[type-arg]
    """f_c(D) = (#adults, #read the Quijote) on records (age, read) encoded as age·2 + read."""
    dp.enable_features("honest-but-curious")

    def f(records: np.ndarray) -> np.ndarray:
        ages, read = records // 2, records % 2
        return np.array([float((ages >= 18).sum()), float(read.sum())])

    return dp.t.make_user_transformation(
        dp.vector_domain(dp.atom_domain(T=int)),
        dp.symmetric_distance(),
        dp.vector_domain(dp.atom_domain(T=float, nan=False)),
        dp.l1_distance(T=float),
        f,
        lambda d: 2.0 * d,  # each count moves by at most 1 per record: Δf_c = 1 + 1 = 2
    )


def test_pair_of_counts_has_sensitivity_two_and_laplace_b2_is_1_dp() -> None:
    f_c = _f_c()
    assert f_c.map(1) == 2.0
    meas = f_c >> dp.m.then_laplace(scale=2.0)  # M_L(D, f_c, 1): N_i ~ Lap(0, Δf/ε) = Lap(0, 2)
    assert meas.map(1) == 1.0
    d1 = [2 * 40 + 1] * 10 + [2 * 10] * 110  # 120 people, 10 adults read it
    assert f_c(d1) == [10.0, 10.0]
    out = meas(d1)
    assert len(out) == 2


def test_composing_two_counts_gives_the_same_epsilon() -> None:
    space = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    one = space >> dp.t.then_count() >> dp.m.then_laplace(scale=2.0)
    both = dp.c.make_basic_composition([one, one])
    assert one.map(1) == 0.5
    assert both.map(1) == 1.0


@pytest.mark.parametrize("b", [1.0, 2.0, 4.0])
def test_laplace_law_and_rejects_wrong_scale(b: float) -> None:
    n = 20_000
    lap = dp.m.make_laplace(
        dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float), b
    )
    x = lap(np.zeros(n))
    wrong = [scipy_stats.laplace(0, f * b).cdf for f in (0.7, 1.3)]
    check_continuous(x, scipy_stats.laplace(0, b).cdf, wrong, symmetric_about=0.0)
    assert np.var(x) == pytest.approx(2 * b * b, rel=0.1)  # variance 2b²


def test_density_ratio_is_bounded_by_e_to_the_epsilon() -> None:
    b, delta = 2.0, 1.0  # f(D1) - f(D2) = 1, b = Δ/ε with Δ = 1: ε = 0.5
    s = np.linspace(-20, 20, 2001)
    ratio = scipy_stats.laplace(120, b).pdf(s + 120) / scipy_stats.laplace(121, b).pdf(s + 120)
    eps = dp.m.make_laplace(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), b
    ).map(delta)
    assert eps == 0.5
    assert np.all(ratio <= np.exp(eps) * (1 + 1e-12))
    assert ratio.max() == pytest.approx(np.exp(eps))
