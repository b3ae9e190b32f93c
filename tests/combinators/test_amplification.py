"""Population amplification: exact hit probability, conservative rounding, OpenDP agreement."""

from __future__ import annotations

from fractions import Fraction
from math import comb
from typing import Any

import gmpy2
import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import FeatureNotEnabled, InvalidParameter, NotImplementedForType


def sized(n: int) -> Any:
    return dp.vector_domain(dp.atom_domain(T=float, nan=False), size=n), dp.symmetric_distance()


def mean(n: int, measure: Any, loss: Any) -> Any:
    return dp.m.make_user_measurement(*sized(n), measure, lambda x: float(sum(x)), loss)


@pytest.fixture(autouse=True)
def _hbc() -> None:
    dp.enable_features("honest-but-curious")


def hit(k: int, n: int, N: int) -> Fraction:
    """Pr[a uniform n-subset of N records holds one of k given records], exactly."""
    return 1 - Fraction(comb(N - k, n), comb(N, n)) if N - k >= n else Fraction(1)


def precise() -> Any:
    """A 200-bit MPFR context: its results are far closer to the exact values than a float."""
    return gmpy2.context(gmpy2.get_context(), precision=200)


def amplified(eps: float, q: Fraction) -> Any:
    """ln(1 + q(e^ε − 1)) at 200 bits."""
    with precise():
        return gmpy2.log1p(gmpy2.mpq(q.numerator, q.denominator) * gmpy2.expm1(eps))


def reference_epsilon(eps: float, d: int, n: int, N: int) -> Any:
    """The documented map for ε(d) = eps·d under the symmetric distance, at 200 bits:
    k = ⌈d/2⌉ substitutions, min(coupling bound, group-privacy bound)."""
    k = -(-d // 2)
    if k == 0:
        return gmpy2.mpfr(0)
    coupling = amplified(eps * 2 * min(k, n), hit(k, n, N))
    with precise():
        group = k * amplified(eps * 2, Fraction(n, N))
    return min(coupling, group)


@pytest.mark.parametrize(("n", "N"), [(10, 100), (10, 10), (3, 1000), (50, 51)])
@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 5.0])
@pytest.mark.parametrize("d", [1, 2, 3, 4, 6])
def test_amplified_epsilon(n: int, N: int, eps: float, d: int) -> None:
    amp = dp.c.make_population_amplification(
        mean(n, dp.max_divergence(), lambda d, e=eps: e * d), N
    )
    got = amp.map(d)
    want = reference_epsilon(eps, d, n, N)
    assert got >= want  # never below the documented bound (computed at 200 bits)
    assert got <= want * (1 + 1e-12) + 1e-300  # and tight
    assert got <= eps * 2 * -(-d // 2)  # amplification never hurts


def test_one_substitution_is_charged_the_one_record_bound() -> None:
    """On a sized domain one substituted record is d_in = 2 under the symmetric
    distance; the docstring's example is charged ln(1 + 0.1(e − 1)) = 0.1586 (OpenDP 0.16's
    value), not 0.2837 (the hit probability of two records with ε(2))."""
    amp = dp.c.make_population_amplification(
        mean(10, dp.max_divergence(), lambda d: 0.5 * d), population_size=100
    )
    want = amplified(1.0, Fraction(1, 10))
    for d in (1, 2):  # d_in = 1 cannot occur between same-size populations: read as 2
        got = amp.map(d)
        assert want <= got <= want * (1 + 1e-15)
    assert amp.map(3) == amp.map(4) <= 2 * amp.map(2) * (1 + 1e-15)  # group privacy


@pytest.mark.parametrize(("n", "N"), [(1, 2), (3, 8), (10, 100), (10, 11)])
@pytest.mark.parametrize("eps", [0.3, 1.0, 4.0])
def test_map_bounds_the_exact_loss_of_a_tight_mechanism(n: int, N: int, eps: float) -> None:
    """Randomized response on "the sample holds a 1", ε-DP at every sample distance >= 1.

    Against an all-zero population, a population with k ones has exact loss
    ln(1 + q_k(e^ε − 1)) (Pr[output 1] is 1/(1+e^ε) against (1 + q_k(e^ε − 1))/(1+e^ε)).
    The map must not be below it for any k; OpenDP 0.16's q = n/N for every k is.
    """
    inner = dp.m.make_user_measurement(
        *sized(n), dp.max_divergence(), lambda x: 0, lambda d, e=eps: e if d else 0.0
    )
    amp = dp.c.make_population_amplification(inner, N)
    for k in range(1, N + 1):
        true_loss = amplified(eps, hit(k, n, N))
        assert amp.map(2 * k) >= true_loss
        if k == 1:
            assert amp.map(2) <= true_loss * (1 + 1e-15)  # tight at one substitution


def _count_loss(pop_ones: int, other_ones: int, n: int, N: int, r: Fraction) -> Any:
    """The exact max divergence (both directions) between the releases of two populations of
    N bits (with pop_ones / other_ones ones): the count of ones in a uniform n-subset plus
    two-sided geometric noise Pr[Z = z] ∝ r^|z|.  Outside [0, n] the ratio is constant."""

    def law(ones: int) -> list[Fraction]:
        h = [Fraction(comb(ones, c) * comb(N - ones, n - c), comb(N, n)) for c in range(n + 1)]
        return [sum(h[c] * r ** abs(o - c) for c in range(n + 1)) for o in range(-1, n + 2)]

    p, p2 = law(pop_ones), law(other_ones)
    worst = max(max(a / b, b / a) for a, b in zip(p, p2, strict=True))
    with precise():
        return gmpy2.log(gmpy2.mpq(worst.numerator, worst.denominator))


@pytest.mark.parametrize(("n", "N"), [(2, 5), (3, 7), (4, 6)])
@pytest.mark.parametrize("r", [Fraction(1, 2), Fraction(1, 8)])
def test_map_bounds_the_brute_force_loss_of_a_noisy_count(n: int, N: int, r: Fraction) -> None:
    """Every pair of bit populations at k substitutions, every output: map(2k) >= true loss."""
    with precise():
        eps = float(gmpy2.log(gmpy2.mpq(r.denominator, r.numerator))) * (1 + 1e-15)
    inner = dp.m.make_user_measurement(  # a count's sensitivity is ⌊d/2⌋ on sized data
        *sized(n), dp.max_divergence(), lambda x: 0, lambda d, e=eps: e * (d // 2)
    )
    amp = dp.c.make_population_amplification(inner, N)
    for k in range(1, N + 1):
        true_loss = max(
            _count_loss(a, a - k, n, N, r) for a in range(k, N + 1)
        )  # k ones turned to zeros (the other direction is the same pair read backwards)
        assert amp.map(2 * k) >= true_loss, k


@pytest.mark.parametrize("eps", [0.2, 1.0, 3.0])
def test_change_one_and_hamming_count_one_substitution_as_one(eps: float) -> None:
    for metric in (dp.change_one_distance(), dp.hamming_distance()):
        space = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=10), metric
        inner = dp.m.make_user_measurement(
            *space, dp.max_divergence(), lambda x: 0, lambda d, e=eps: e * d
        )
        amp = dp.c.make_population_amplification(inner, 40)
        want = amplified(eps, Fraction(1, 4))
        assert want <= amp.map(1) <= want * (1 + 1e-15)
        assert amp.map(2) >= amplified(2 * eps, hit(2, 10, 40)) or amp.map(2) >= 2 * want


def test_discrete_distance_is_not_amplified() -> None:
    """Under the discrete distance two populations may differ in every record, so the sample
    always holds a changed one: the loss is the inner loss (it was ln(1 + (n/N)(e^ε − 1)))."""
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=2), dp.discrete_distance()
    inner = dp.m.make_user_measurement(
        *space, dp.max_divergence(), lambda x: 0, lambda d: 1.0 if d else 0.0
    )
    amp = dp.c.make_population_amplification(inner, 1000)
    assert amp.map(1) == 1.0
    assert amp.map(0) == 0.0


def test_amplified_delta_is_rounded_up() -> None:
    amplified = dp.c.make_population_amplification(
        mean(10, dp.approximate(dp.max_divergence()), lambda d: (0.5 * d, 1e-6)), 30
    )
    eps, delta = amplified.map(1)
    assert Fraction(delta) >= Fraction(1, 3) * Fraction(1e-6)
    assert eps < 0.5


def test_amplification_errors() -> None:
    m = mean(10, dp.max_divergence(), lambda d: 0.5 * d)
    with pytest.raises(InvalidParameter):
        dp.c.make_population_amplification(m, 9)
    with pytest.raises(InvalidParameter):
        dp.c.make_population_amplification(m, 100.0)  # type: ignore[arg-type]
    with pytest.raises(NotImplementedForType):
        dp.c.make_population_amplification(
            mean(10, dp.zero_concentrated_divergence(), lambda d: d), 100
        )
    unsized = dp.m.make_user_measurement(
        dp.vector_domain(dp.atom_domain(T=float, nan=False)),
        dp.symmetric_distance(),
        dp.max_divergence(),
        lambda x: 0.0,
        lambda d: d,
    )
    with pytest.raises(NotImplementedForType):
        dp.c.make_population_amplification(unsized, 100)
    dp.disable_features("honest-but-curious")
    with pytest.raises(FeatureNotEnabled):
        dp.c.make_population_amplification(m, 100)


def test_amplification_matches_opendp_at_one_substitution() -> None:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib", "honest-but-curious")
    space = (
        odp.vector_domain(odp.atom_domain(T=float, nan=False), size=10),
        odp.symmetric_distance(),
    )
    for N in [10, 11, 100, 10_000]:
        for eps in [0.01, 0.5, 1.0, 3.0]:
            theirs = odp.c.make_population_amplification(
                odp.m.make_user_measurement(
                    *space, odp.max_divergence(), lambda x: 0.0, lambda d, e=eps: e * d
                ),
                N,
            ).map(2)
            ours = dp.c.make_population_amplification(
                mean(10, dp.max_divergence(), lambda d, e=eps: e * d), N
            ).map(2)
            assert abs(ours - theirs) <= 1e-9 * max(1.0, theirs)
