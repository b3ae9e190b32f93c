"""Private quantile: maps against OpenDP 0.16 on a grid, exact scores, typed errors."""

from __future__ import annotations

import hashlib
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import InvalidParameter, MetricMismatch, NotImplementedForType
from opendp_lite.measurements.quantile import _scores
from opendp_lite.samplers.rng import scripted_randomness

CANDS = [0.0, 10.0, 20.0, 30.0]


def _opendp() -> Any:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    return odp


@pytest.mark.parametrize("size", [None, 100])
@pytest.mark.parametrize("metric", ["symmetric", "insert_delete"])
@pytest.mark.parametrize("measure", ["max", "zcdp"])
@pytest.mark.parametrize("alpha", [0.0, 0.1, 0.25, 0.3, 0.5, 0.9, 1.0])
def test_map_matches_opendp(size: int | None, metric: str, measure: str, alpha: float) -> None:
    odp = _opendp()

    def build(lib: Any) -> Any:
        m = lib.symmetric_distance() if metric == "symmetric" else lib.insert_delete_distance()
        meas = lib.max_divergence() if measure == "max" else lib.zero_concentrated_divergence()
        atom = lib.atom_domain(T=float, nan=False)
        return [
            lib.m.make_private_quantile(
                lib.vector_domain(atom, size=size),
                m,
                meas,
                candidates=CANDS,
                alpha=alpha,
                scale=scale,
            )
            for scale in (0.5, 2.0, 7.3)
        ]

    for ours, theirs in zip(build(dp), build(odp), strict=True):
        for d in (0, 1, 2, 3, 6):
            assert ours.map(d) == pytest.approx(theirs.map(d), rel=1e-9, abs=1e-300)


def test_map_is_an_upper_bound() -> None:
    space = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    m = dp.m.make_private_quantile(*space, dp.max_divergence(), [1, 2], alpha=0.3, scale=3.0)
    assert Fraction(m.map(1)) >= 2 * (1 - Fraction(0.3)) / 3
    z = dp.m.make_private_quantile(
        *space, dp.zero_concentrated_divergence(), [1, 2], alpha=0.3, scale=3.0
    )
    assert Fraction(z.map(1)) >= (2 * (1 - Fraction(0.3)) / 3) ** 2 / 8


def _den_scores(data: Any, cands: list[Any], a: Fraction) -> list[Fraction]:
    keys = np.asarray(cands, dtype=np.asarray(data).dtype)
    return [Fraction(v, a.denominator) for v in _scores(data, keys, a.numerator, a.denominator)]


def test_scores_are_exact() -> None:
    data = np.arange(31, dtype=np.int32)
    assert _den_scores(data, [0, 10, 20, 30], Fraction(1, 2)) == [15, 5, 5, 15]
    for a in (Fraction(0.3), Fraction(1, 3), Fraction(0), Fraction(1), Fraction(2**-60)):
        # 0.3 and 2^-60 have denominators 2^54 and 2^60: the Python-integer path
        ref = [abs((1 - a) * lo - a * (30 - lo)) for lo in (10, 20)]
        assert _den_scores(data, [10, 20], a) == ref
    # ties with the candidate count on neither side
    assert _den_scores(np.array([5, 5, 5]), [5], Fraction(1, 2)) == [0]


def test_selection_sees_the_exact_scores_over_scale(monkeypatch: pytest.MonkeyPatch) -> None:
    """The selection gets integer scores (no rational per candidate) whose ratios
    to the scale it gets are exactly s(c)/scale, the ratios the law depends on."""
    import opendp_lite.measurements.quantile as quantile_mod

    seen: list[tuple[Any, float, int, str, bool]] = []
    real = quantile_mod.noisy_top_k

    def spy(scores: Any, scale: float, k: int, noise: Any, negate: bool = False) -> list[int]:
        seen.append((scores, scale, k, noise, negate))
        return real(scores, scale, k, noise, negate=negate)

    monkeypatch.setattr(quantile_mod, "noisy_top_k", spy)
    rng = np.random.default_rng(7)
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    for measure, noise in (
        (dp.max_divergence(), "exponential"),
        (dp.zero_concentrated_divergence(), "gumbel"),
    ):
        for alpha, scale in ((0.5, 1.0), (0.1, 3.0), (0.9, 0.25), (1 / 3, 2.0)):
            # n = 100: den·n < 2^62 for 0.1 (den 2^55), so the scores are int64
            data = rng.uniform(0.0, 30.0, 100)
            m = space >> dp.m.then_private_quantile(measure, CANDS, alpha, scale)
            m(data)
            scores, got_scale, k, got_noise, negate = seen.pop()
            assert (k, got_noise, negate) == (1, noise, True)  # the least noisy score
            assert isinstance(scores, np.ndarray) and scores.dtype == np.int64
            a = Fraction(alpha)
            for v, c in zip(scores.tolist(), CANDS, strict=True):
                lo, hi = int((data < c).sum()), int((data > c).sum())
                assert Fraction(v) / Fraction(got_scale) == abs((1 - a) * lo - a * hi) / Fraction(
                    scale
                )


def _oracle(seed: int) -> Any:
    """Deterministic bits appended to U_j at refinement ``level`` (as in test_noisy_max)."""

    def more(j: int, level: int) -> int:
        digest = hashlib.sha256(f"{seed}/{j}/{level}".encode()).digest()
        return int.from_bytes(digest[:4], "little")

    return more


@pytest.mark.parametrize("zcdp", [False, True])
@pytest.mark.parametrize("band", [0.0, 2.0])
def test_selection_is_the_certified_race_on_the_same_bits(
    zcdp: bool, band: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The quantile selects by the certified race of samplers/selection.py, and its
    release equals the exact race over every candidate (noisy_top_k_reference) on the exact
    integer scores den·s(c) with scale·den, reading the same bits; band = 2 widens every float
    interval so that the exact race decides (almost) every call."""
    from opendp_lite.samplers import selection

    noise = "gumbel" if zcdp else "exponential"
    measure = dp.zero_concentrated_divergence() if zcdp else dp.max_divergence()
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    rng = np.random.default_rng(3)
    calls = exact = 0
    for trial in range(24):
        cands = [float(c) for c in range(101)] if trial % 2 else CANDS  # vector / small path
        alpha = (0.5, 0.1, 0.9, 1 / 3)[trial % 4]
        scale = (1.0, 0.3, 5.0)[trial % 3]
        data = rng.uniform(0.0, float(cands[-1]), int(rng.integers(1, 40)))
        m = dp.m.make_private_quantile(*space, measure, cands, alpha, scale)
        more = _oracle(trial)
        monkeypatch.setattr(selection, "_os_more", more)
        seed = f"{trial}".encode()
        selection.reset_fallback_counts()
        with selection.certification_margin(band), scripted_randomness(seed=seed):
            out = m(data)
        counts = selection.fallback_counts()
        assert counts["calls"] == 1  # the race decided this release
        exact += counts["exact_races"]
        a = Fraction(alpha)
        scores = np.array(
            [
                int(
                    abs((1 - a) * int((data < c).sum()) - a * int((data > c).sum())) * a.denominator
                )
                for c in cands
            ],
            dtype=np.int64,
        )
        with scripted_randomness(seed=seed):
            ref = selection.noisy_top_k_reference(
                scores, scale * a.denominator, 1, noise, more, negate=True
            )
        assert out == cands[ref[0]], (trial, alpha, scale)
        calls += 1
    if band > 0:
        assert exact >= 0.9 * calls


def test_reference_path_for_scale_zero_and_huge_scores() -> None:
    """Where the race does not apply (scale 0; scale·den beyond float64; scores beyond int64)
    the exact rational samplers decide, and the release is still the exact quantile."""
    from opendp_lite.samplers import selection

    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    data = np.array([1.0, 19.0, 20.0, 21.0, 29.0] * 100)  # n = 500: 0.7·2^54·n >= 2^62
    cands = [0.0, 10.0, 19.0, 20.0, 30.0]
    for alpha, scale, want in ((0.5, 0.0, 20.0), (2.0**-1074, 0.01, 0.0), (0.3, 1e-3, 19.0)):
        for measure in (dp.max_divergence(), dp.zero_concentrated_divergence()):
            m = dp.m.make_private_quantile(*space, measure, cands, alpha, scale)
            selection.reset_fallback_counts()
            assert m(data) == want
            assert selection.fallback_counts()["calls"] == 0


def test_releases_the_median_with_little_noise() -> None:
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    m = space >> dp.m.then_private_quantile(dp.max_divergence(), CANDS, alpha=0.5, scale=0.01)
    assert m([1.0, 19.0, 20.0, 21.0, 29.0]) == 20.0
    g = space >> dp.m.then_private_quantile(dp.zero_concentrated_divergence(), CANDS, 0.5, 0.01)
    assert g([1.0, 19.0, 20.0, 21.0, 29.0]) == 20.0


def test_typed_errors() -> None:
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    mk = dp.m.make_private_quantile
    with pytest.raises(InvalidParameter, match="empty"):
        mk(*space, dp.max_divergence(), [], alpha=0.5, scale=1.0)
    with pytest.raises(InvalidParameter, match="increasing"):
        mk(*space, dp.max_divergence(), [2.0, 1.0], alpha=0.5, scale=1.0)
    with pytest.raises(InvalidParameter, match="candidates"):
        mk(*space, dp.max_divergence(), ["a"], alpha=0.5, scale=1.0)
    for alpha in (-0.1, 1.5, float("nan")):
        with pytest.raises(InvalidParameter, match="alpha"):
            mk(*space, dp.max_divergence(), [1.0], alpha=alpha, scale=1.0)
    with pytest.raises(InvalidParameter, match="scale"):
        mk(*space, dp.max_divergence(), [1.0], alpha=0.5, scale=-1.0)
    with pytest.raises(MetricMismatch):
        mk(space[0], dp.change_one_distance(), dp.max_divergence(), [1.0], alpha=0.5, scale=1.0)
    with pytest.raises(NotImplementedForType):
        mk(
            dp.atom_domain(T=float, nan=False),
            dp.symmetric_distance(),
            dp.max_divergence(),
            [1.0],
            0.5,
            1.0,
        )
    with pytest.raises(NotImplementedForType):
        mk(*space, dp.approximate(dp.max_divergence()), [1.0], alpha=0.5, scale=1.0)  # type: ignore[arg-type]


def test_a_tiny_alpha_on_empty_data_releases_a_candidate() -> None:
    """α = 2^-100 has den = 2^100: with n = 0 the int64 guard once passed and numpy overflowed
    multiplying by den − num (found by the chaining law on a fresh example)."""
    space = dp.vector_domain(dp.atom_domain(bounds=(0.0, 10.0))), dp.symmetric_distance()
    m = dp.m.make_private_quantile(*space, dp.max_divergence(), [0.0, 5.0, 10.0], 2.0**-100, 1.0)
    assert m([]) in (0.0, 5.0, 10.0)
