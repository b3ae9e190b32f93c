"""``python -m opendp_lite``: the tour runs every seed and prints the seeds' deterministic
numbers next to ours, each computed by the library; ``docs/make_figures.py`` draws the
documentation's figures of the same experiments.  (Its run
time is measured by ``benchmarks/bench_tour.py``, not asserted here.)"""

from __future__ import annotations

import importlib.util
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from opendp_lite import tour


def test_tour_runs_every_seed(capsys: pytest.CaptureFixture[str]) -> None:
    # the timing lives in benchmarks/bench_tour.py: no wall-clock assertion here
    assert tour.main([]) == 0
    out = capsys.readouterr().out
    for title in ("Seed 000", "Seed 001", "Seed 002", "Seed 003", "Seed 004"):
        assert title in out
    # deterministic headline numbers, printed next to the seed's
    assert "expected sensitivity E[Δf] (cm)" in out and " 11.99 " in out
    assert _row(out, "ε, fair coins") == [f"{math.log(3):.6f}", f"log 3={math.log(3):.6f}"]
    assert _row(out, "ε, first coin 2(1-f), f=7/8") == [
        f"{math.log(7):.6f}",
        f"log(f/(1-f))={math.log(7):.6f}",
    ]
    assert _row(out, "score('Never-married')") == ["10.683", "10.683"]
    assert _row(out, "vector discrete gaussian map(1.414)") == ["0.999698", "0.999698"]
    assert _row(out, "Δf_c of (f_1, f_2), two counts") == ["2", "2"]
    assert _row(out, "f_c(D1) = (adults, readers) of a census") == ["(120, 10)", "(120, 10)"]


def _row(out: str, name: str) -> list[str]:
    """The (opendp_lite, seed) cells of the table row called ``name``."""
    for line in out.splitlines():
        if line.strip().startswith(name):
            return re.split(r"\s{2,}", line.strip()[len(name) :].strip())
    raise AssertionError(f"no row {name!r}")


def test_seed_functions_return_the_deterministic_numbers() -> None:
    numbers = tour.run_seeds()
    assert round(numbers["000"]["expected"], 2) == 11.99
    assert numbers["001"]["epsilon_fc"] == 1.0
    assert math.log(3) <= numbers["002"]["epsilon"] <= math.nextafter(math.log(3), math.inf)
    assert numbers["003"]["score"] == 10.683
    assert numbers["004"]["laplace"] == 0.5


def test_biased_coin_row_runs_a_biased_coin() -> None:
    # the row "first coin 2(1-f), f=3/4" runs a biased coin, not the fair one (2(1 - 3/4) = 1/2)
    numbers = tour.seed_002()
    eps, seed = numbers["epsilon_biased"], numbers["epsilon_biased_seed"]
    assert eps != numbers["epsilon"]  # not the fair coin
    assert seed == math.log(7)  # f = 7/8: log(f/(1-f)), exact in floats
    assert seed <= eps <= math.nextafter(seed, math.inf)  # the exact ε, rounded up once


def test_two_counts_sensitivity_is_computed_from_the_queries() -> None:
    # the Δf_c row is not a constant 2 · Δf but the stability maps of the two real
    # queries (adults, readers) on the notes' census, which also compute f_c(D1) = (120, 10)
    numbers = tour.seed_001()
    assert numbers["delta_fc"] == 2.0 == 2 * numbers["delta_count"]
    assert numbers["epsilon_fc"] == 1.0


def test_seed_000_experiment_runs_through_honest_routes() -> None:
    # a typical sensitivity is not labelled worst-case MaxDivergence via
    # make_local_release(record_distance=Δ): either clamping to a public range of width Δ
    # (worst case, ε derived from the bounds) or the sampled Δ̂ (typed random DP).
    import opendp_lite.prelude as dp
    from opendp_lite.sensitivity import RandomDivergence, sample_sensitivity

    clamped = tour.clamped_local_laplace(11.99, 1.0)
    assert clamped.output_measure == dp.max_divergence()
    assert 1.0 <= clamped.map(1) <= 1.0 + 1e-12
    out = clamped([100.0, 170.0, 250.0])
    assert len(out) == 3
    s = sample_sensitivity(lambda d: d, "l1", tour.heights_mixture(), 1, gamma=0.05)
    rdp = tour.random_dp_local_laplace(s, 1.0)
    assert isinstance(rdp.output_measure, RandomDivergence)
    numbers = tour.seed_000()
    assert numbers["epsilon_clamped"] == clamped.map(1)
    # the unclamped mechanism, which a relabelling would call 1-DP: 150 vs 190 cm lose 40/11.99 > 1
    assert numbers["epsilon_unclamped_150_190"] >= 40 / numbers["expected"] > 3


def test_module_entry_point() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "opendp_lite"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "tour done" in proc.stdout


def _figures() -> Any:
    spec = importlib.util.spec_from_file_location(
        "make_figures", Path(__file__).resolve().parents[1] / "docs" / "make_figures.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_plots_are_written(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    figures = _figures()
    paths = figures.write_figures(tmp_path, quick=True)
    assert sorted(p.name for p in paths) == sorted(figures.FIGURES)
    for p in paths:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_runtime_package_draws_no_figures() -> None:
    """The figure writer is documentation tooling (docs/make_figures.py), not package code."""
    assert not hasattr(tour, "write_figures")
    source = Path(tour.__file__).read_text(encoding="utf-8")
    assert "matplotlib" not in source
