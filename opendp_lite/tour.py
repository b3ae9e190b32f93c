"""The guided tour run by ``python -m opendp_lite``: each step runs a seed document's example
through opendp_lite and prints its headline numbers next to the seed's own.

Random numbers differ from run to run (and from the seeds' runs); deterministic ones (ε, ρ,
the closed-form sensitivity) match exactly.  The documentation's figures of the same
experiments are drawn by ``python docs/make_figures.py [DIR]`` (documentation tooling, outside
the package).
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["main", "run_seeds"]

Row = tuple[str, str, str]


def _table(title: str, rows: Sequence[Row]) -> None:
    print(f"\n== {title} ==")
    width = max(len(r[0]) for r in rows)
    w1 = max(14, *(len(r[1]) for r in rows))
    w2 = max(14, *(len(r[2]) for r in rows))
    print(f"  {'':{width}}  {'opendp_lite':>{w1}}  {'seed':>{w2}}")
    for name, ours, seed in rows:
        print(f"  {name:{width}}  {ours:>{w1}}  {seed:>{w2}}")


def _chaining() -> None:
    from . import prelude as dp

    print("== Chaining and privacy maps ==")
    dp.enable_features("honest-but-curious")
    space = dp.atom_domain(T=int), dp.absolute_distance(T=int)
    double = dp.t.make_user_transformation(*space, *space, lambda x: 2 * x, lambda d: 2 * d)
    chain = double >> double
    print(f"  (double >> double)(5)   = {chain(5)}")
    print(f"  (double >> double).map(1) = {chain.map(1)}   (stability maps compose)")
    fspace: tuple[Any, Any] = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    identity = dp.t.make_user_transformation(*fspace, *fspace, lambda x: x, lambda d: d)
    try:
        double >> identity  # the runtime refuses it (mypy does too, with precise types)
    except dp.OpenDPLiteError as e:
        print(f"  a mismatched chain is refused: {type(e).__name__}")
    dp.disable_features("honest-but-curious")


# ----------------------------------------------------------------------------------------------
# Seed 000: typical sensitivity and the sensitivity sampler (shfl Laplace tutorial)


def heights_mixture() -> Any:
    """The seed's height model: ½ N(178, 7²) + ½ N(162, 6.5²)."""
    from .sensitivity import GaussianMixture

    return GaussianMixture([[178.0, 7.0], [162.0, 6.5]], [0.5, 0.5])


HEIGHT_CENTRE = 170.0
"""The centre of the public clamping range: the height model's mean (178 + 162)/2, a property
of the public model, not of anyone's data."""


def clamped_local_laplace(width: float, epsilon: float) -> Any:
    """Each person clamps their height to the public range HEIGHT_CENTRE ± width/2 and adds
    Lap(width/ε) to it: worst-case ``MaxDivergence``, ε per person derived from the bounds."""
    from . import prelude as dp
    from .combinators.local import make_local_release

    bounds = (HEIGHT_CENTRE - width / 2, HEIGHT_CENTRE + width / 2)
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.hamming_distance()
    clamp = dp.t.make_clamp(*space, bounds=bounds)
    clamped: Any = clamp.output_domain  # vector_domain(atom_domain(bounds=bounds, T=f64))
    lap = dp.m.make_laplace(
        clamped.element_domain,
        dp.absolute_distance(T=float),
        scale=(bounds[1] - bounds[0]) / epsilon,
    )
    return clamp >> make_local_release(clamped, dp.hamming_distance(), lap)


def random_dp_local_laplace(sensitivity: Any, epsilon: float) -> Any:
    """Each person adds Lap(Δ̂/ε) to their height, Δ̂ a sampled sensitivity (n = 1): the
    guarantee is *random* DP, typed ``RandomMaxDivergence(gamma)``."""
    from . import prelude as dp
    from .combinators.local import make_local_release
    from .sensitivity import make_random_dp

    lap = dp.m.make_laplace(
        dp.atom_domain(T=float, nan=False),
        dp.absolute_distance(T=float),
        sensitivity.sensitivity / epsilon,
    )
    per_node = make_random_dp(
        dp.atom_domain(T=float, nan=False), dp.discrete_distance(), lambda x: x, sensitivity, lap
    )
    return make_local_release(
        dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.hamming_distance(), per_node
    )


def release_error(release: Any, people: int = 500) -> float:
    """The seed's experiment: people N(170, 1) release their heights through ``release``;
    the analyst's error |true − released mean|."""
    from .sensitivity import Normal

    heights = Normal(170.0, 1.0).sample(people)
    return abs(float(np.mean(heights)) - float(np.mean(release(heights))))


def height_error(sensitivity: float, epsilon: float, people: int = 500) -> float:
    """The seed's error at (Δ, ε), through the worst-case route: clamp to a public range of
    width Δ, then Lap(Δ/ε) per person."""
    return release_error(clamped_local_laplace(sensitivity, epsilon), people)


def seed_000() -> dict[str, float]:
    """Expected sensitivity 11.99 cm; sampled sensitivity and its mean; the two honest routes
    for the error experiment (clamping: worst-case ε; sampled Δ̂: random DP)."""
    from . import prelude as dp
    from .sensitivity import L1SensitivityNorm, SensitivitySampler

    mixture = heights_mixture()
    expected = mixture.expected_abs_difference()
    s = SensitivitySampler().sample_sensitivity(
        lambda d: d, L1SensitivityNorm(), mixture, n_data_size=1, gamma=0.05
    )
    random_dp = random_dp_local_laplace(s, 1.0)
    clamped = clamped_local_laplace(expected, 1.0)
    unclamped = dp.m.make_laplace(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), expected
    )
    error = float(np.mean([release_error(clamped) for _ in range(5)]))
    _table(
        "Seed 000 - typical sensitivity, sensitivity sampling (Rubinstein & Alda 2017)",
        [
            ("expected sensitivity E[Δf] (cm)", f"{expected:.2f}", "11.99"),
            ("sampled sensitivity Δ̂ (gamma=0.05)", f"{s.sensitivity:.2f}", "47.38"),
            ("mean sampled sensitivity (cm)", f"{s.mean:.2f}", "11.89"),
            ("samples m, order statistic k", f"{s.m}, {s.k}", "-"),
            ("per-node Lap(Δ̂) release measure", repr(random_dp.output_measure), "-"),
            ("  ... its epsilon per node", f"{random_dp.map(1):.4f}", "-"),
            ("clamped to 170 ± E[Δf]/2, Lap(E[Δf])", repr(clamped.output_measure), "-"),
            ("  ... its epsilon per node", f"{clamped.map(1):.4f}", "-"),
            ("unclamped Lap(E[Δf]): ε, 150 vs 190 cm", f"{unclamped.map(40.0):.4f}", "(1)"),
            ("mean-height error, ε=1, clamped (cm)", f"{error:.3f}", "(plot)"),
        ],
    )
    return {
        "expected": expected,
        "sensitivity": s.sensitivity,
        "mean": s.mean,
        "error": error,
        "epsilon_clamped": clamped.map(1),
        "epsilon_random_dp": random_dp.map(1),
        "epsilon_unclamped_150_190": unclamped.map(40.0),
    }


# ----------------------------------------------------------------------------------------------
# Seed 001: the Laplace mechanism, counting queries and Δ = 2 (lecture notes)


SEED_001_CENSUS = "40,1\n" * 10 + "40,0\n" * 110 + "12,0\n" * 5
"""The notes' census D₁ as CSV rows (age, read the Quijote): 120 adults, 10 readers."""


def seed_001() -> dict[str, float]:
    """Δ = 1 for a count, Δ = 2 for two counts, Lap(0, 2) on f_c is 1-DP."""
    from . import prelude as dp

    space = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    count = space >> dp.t.then_count()
    # f_c = (f_1, f_2) on the census: "how many adults", "how many have read the Quijote"
    frame = dp.t.make_split_dataframe(",", ["age", "read"])
    adults = (
        frame
        >> dp.t.make_select_column("age", TOA=str)
        >> dp.t.then_cast_default(TOA=int)
        >> dp.t.then_find_bin([18])  # bin 1: age >= 18
        >> dp.t.then_count_by_categories([1], null_category=False)
    )
    readers = (
        frame
        >> dp.t.make_select_column("read", TOA=str)
        >> dp.t.then_count_by_categories(["1"], null_category=False)
    )
    # the L1 norm of a concatenation is the sum of its parts' L1 norms
    delta_fc = adults.map(1) + readers.map(1)
    both = dp.c.make_basic_composition(
        [adults >> dp.m.then_laplace(scale=2.0), readers >> dp.m.then_laplace(scale=2.0)]
    )
    f_c = (int(adults(SEED_001_CENSUS)[0]), int(readers(SEED_001_CENSUS)[0]))
    lap = dp.m.make_laplace(
        dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float), 2.0
    )
    draws = lap(np.zeros(20_000))
    _table(
        "Seed 001 - the Laplace mechanism (counting queries)",
        [
            ("Δf of a count", f"{count.map(1)}", "1"),
            ("f_c(D1) = (adults, readers) of a census", f"{f_c}", "(120, 10)"),
            ("Δf_c of (f_1, f_2), two counts", f"{delta_fc}", "2"),
            ("ε of f_c + Lap(0, 2)² (composed)", f"{both.map(1)}", "1"),
            ("variance of Lap(0, 2) draws", f"{np.var(draws):.2f}", "8 (2b²)"),
        ],
    )
    return {
        "delta_count": float(count.map(1)),
        "delta_fc": float(delta_fc),
        "epsilon_fc": float(both.map(1)),
    }


# ----------------------------------------------------------------------------------------------
# Seed 002: two-coin randomized response (shfl)


def rr_experiment(epsilon: float, p: float, size: int, runs: int) -> tuple[float, float]:
    """The seed's run_n_experiments: mean p̂ and mean Δp over ``runs`` federated releases."""
    from . import prelude as dp
    from .measurements.two_coin import (
        coins_from_epsilon,
        debias_two_coin,
        make_randomized_response_coins,
        two_coin_uncertainty,
    )

    a, b = coins_from_epsilon(epsilon)
    local = dp.c.make_local_release(
        dp.vector_domain(dp.atom_domain(T=bool)),
        dp.hamming_distance(),
        make_randomized_response_coins(a, b),
    )
    truth = np.zeros(size, dtype=bool)
    truth[: round(p * size)] = True
    est, unc = [], []
    for _ in range(runs):
        r = float(np.mean(local(truth)))
        est.append(debias_two_coin(r, a, b))
        unc.append(two_coin_uncertainty(r, size, a, b))
    return float(np.mean(est)), float(np.mean(unc))


def seed_002() -> dict[str, float]:
    """ε = log 3; true mean 0.2061, DP mean ≈ 0.353, corrected ≈ 0.206."""
    from . import prelude as dp
    from .measurements.two_coin import debias_two_coin, make_randomized_response_coins

    rr = make_randomized_response_coins()
    array = np.zeros(10_000, dtype=bool)
    array[:2061] = True
    local = dp.c.make_local_release(
        dp.vector_domain(dp.atom_domain(T=bool)), dp.hamming_distance(), rr
    )
    result = local(array)
    f = 0.875  # a biased first coin: a = 2(1 - f) = 1/4, exact (f = 3/4 is the fair coin)
    biased = make_randomized_response_coins(2 * (1 - f), 0.5)
    seed_biased = math.log(f / (1 - f))
    p_hat, dp_unc = rr_experiment(2.0, 0.2, 2000, 10)
    _table(
        "Seed 002 - two-coin randomized response",
        [
            ("ε, fair coins", f"{rr.map(1):.6f}", f"log 3={math.log(3):.6f}"),
            (
                "ε, first coin 2(1-f), f=7/8",
                f"{biased.map(1):.6f}",
                f"log(f/(1-f))={seed_biased:.6f}",
            ),
            ("true mean", f"{array.mean():.4f}", "0.2061"),
            ("DP query mean", f"{result.mean():.4f}", "0.3492"),
            ("expected DP mean", f"{array.mean() * 0.5 + 0.25:.5f}", "0.35305"),
            ("corrected mean p̂", f"{debias_two_coin(float(result.mean())):.4f}", "0.1984"),
            ("p̂ at ε=2, N=2000 (p=0.2)", f"{p_hat:.3f}", "(plot)"),
            ("Δp at ε=2, N=2000", f"{dp_unc:.4f}", "(plot)"),
        ],
    )
    return {
        "epsilon": rr.map(1),
        "epsilon_biased": biased.map(1),
        "epsilon_biased_seed": seed_biased,
        "dp_mean": float(result.mean()),
    }


# ----------------------------------------------------------------------------------------------
# Seed 003: the exponential mechanism and report noisy max (Programming DP)


def seed_003() -> dict[str, float]:
    """Score 10.683; 200 exponential-mechanism draws; 200 report-noisy-max draws."""
    from . import prelude as dp
    from .data import ADULT_MARITAL_COUNTS, load_adult_marital

    data = load_adult_marital()
    options = list(ADULT_MARITAL_COUNTS)
    space = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()

    def score(x: npt.NDArray[Any], option: str) -> float:
        return float((x == option).sum()) / 1000

    was_enabled = True
    try:
        dp.assert_features("honest-but-curious")
    except dp.OpenDPLiteError:
        was_enabled = False
        dp.enable_features("honest-but-curious")  # the scoring function is user code
    try:
        em = dp.m.make_exponential(*space, options, score, sensitivity=1, epsilon=1.0)
    finally:
        if not was_enabled:
            dp.disable_features("honest-but-curious")
    counts = space >> dp.t.then_count_by_categories(options, null_category=False)
    exact = counts(data)
    em_draws = [em(data) for _ in range(200)]
    noisy = dp.m.make_laplace(counts.output_domain, counts.output_metric, scale=1000.0)
    rnm = [options[int(np.argmax(noisy(exact)))] for _ in range(200)]
    w = np.exp(np.array(exact, dtype=float) / 2000)
    em_top = round(float(200 * w[0] / w.sum()))
    _table(
        "Seed 003 - exponential mechanism, report noisy max (adult marital status)",
        [
            ("score('Never-married')", f"{score(data, 'Never-married')}", "10.683"),
            ("EM ε (Δu=1, ε=1)", f"{em.map(1)}", "1"),
            ("EM: expected Married-civ-spouse /200", f"{em_top}", "-"),
            ("EM: Married-civ-spouse /200", f"{em_draws.count('Married-civ-spouse')}", "179"),
            ("EM: Never-married /200", f"{em_draws.count('Never-married')}", "21"),
            ("RNM: Married-civ-spouse /200", f"{rnm.count('Married-civ-spouse')}", "192"),
            ("RNM: Never-married /200", f"{rnm.count('Never-married')}", "8"),
        ],
    )
    return {"score": score(data, "Never-married"), "rnm_top": float(rnm.count(options[0]))}


# ----------------------------------------------------------------------------------------------
# Seed 004: additive noise mechanisms (OpenDP user guide)


def seed_004() -> dict[str, float]:
    """ε 0.5, ρ 0.125, ε 1.0, ρ 0.5, vector ε 1.0, ρ 0.999698, and the 2^k penalty table."""
    from . import prelude as dp

    m = dp.m
    flt = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    itg = dp.atom_domain(T=int), dp.absolute_distance(T=int)
    vec_l1 = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float)
    vec_l2 = dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=float)
    cases: list[tuple[str, Any, Any, str]] = [
        ("make_base_laplace(scale=2).map(1)", m.make_base_laplace(*flt, scale=2.0), 1.0, "0.5"),
        ("make_gaussian(scale=2).map(1)", m.make_gaussian(*flt, scale=2.0), 1.0, "0.125"),
        ("discrete laplace(1).map(1)", m.make_base_discrete_laplace(*itg, scale=1.0), 1, "1.0"),
        ("discrete gaussian(1).map(1)", m.make_base_discrete_gaussian(*itg, scale=1.0), 1, "0.5"),
        ("vector laplace(1), L1, map(1)", m.make_base_laplace(*vec_l1, scale=1.0), 1.0, "1.0"),
        ("vector discrete gaussian map(1.414)",
         m.make_base_discrete_gaussian(*vec_l2, scale=1.0), 1.414, "0.999698"),
    ]  # fmt: skip
    rows: list[Row] = [(name, f"{meas.map(d)}", seed) for name, meas, d, seed in cases]
    seed_penalty = ["0", "4.940656e-324", "7.888609e-31", "0.5", "1.0", "2.0"]
    for k, seed in zip([-1074, -1073, -100, -1, 0, 1], seed_penalty, strict=True):
        pen = m.make_base_laplace(*flt, scale=1.0, k=k).map(0.0)
        rows.append((f"ε penalty, k = {k}", f"{pen:.6g}", seed))
    _table("Seed 004 - additive noise mechanisms (OpenDP user guide)", rows)
    return {"laplace": m.make_base_laplace(*flt, scale=2.0).map(1.0)}


SEEDS: dict[str, Callable[[], dict[str, float]]] = {
    "000": seed_000,
    "001": seed_001,
    "002": seed_002,
    "003": seed_003,
    "004": seed_004,
}


def run_seeds() -> dict[str, dict[str, float]]:
    """Run every seed's example, printing its table; returns the headline numbers."""
    return {name: fn() for name, fn in SEEDS.items()}


def main(argv: Sequence[str] = ()) -> int:
    """Run the tour; returns a process exit code."""
    parser = argparse.ArgumentParser(prog="python -m opendp_lite", description=__doc__)
    parser.parse_args(list(argv))
    start = time.perf_counter()
    _chaining()
    run_seeds()
    print(f"\ntour done in {time.perf_counter() - start:.1f} s")
    return 0
