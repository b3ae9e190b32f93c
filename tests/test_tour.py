"""``python -m opendp_lite``: the tour runs every seed in under 30 s and prints the seeds'
deterministic numbers; ``--plots`` writes the figures."""

from __future__ import annotations

import math
import subprocess
import sys
import time
from pathlib import Path

import pytest

from opendp_lite import tour


def test_tour_runs_every_seed_quickly(capsys: pytest.CaptureFixture[str]) -> None:
    start = time.perf_counter()
    assert tour.main([]) == 0
    assert time.perf_counter() - start < 30
    out = capsys.readouterr().out
    for title in ("Seed 000", "Seed 001", "Seed 002", "Seed 003", "Seed 004"):
        assert title in out
    # deterministic headline numbers, printed next to the seed's
    assert "expected sensitivity E[Δf] (cm)" in out and " 11.99 " in out
    assert f"{math.log(3):.6f}  log 3={math.log(3):.6f}" in out
    assert "score('Never-married')" in out and "10.683" in out
    assert "0.999698        0.999698" in out


def test_seed_functions_return_the_deterministic_numbers() -> None:
    numbers = tour.run_seeds()
    assert round(numbers["000"]["expected"], 2) == 11.99
    assert numbers["001"]["epsilon_fc"] == 1.0
    assert math.log(3) <= numbers["002"]["epsilon"] <= math.nextafter(math.log(3), math.inf)
    assert numbers["003"]["score"] == 10.683
    assert numbers["004"]["laplace"] == 0.5


def test_module_entry_point() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "opendp_lite"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "tour done" in proc.stdout


def test_plots_are_written(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    paths = tour.write_figures(tmp_path, quick=True)
    assert sorted(p.name for p in paths) == sorted(tour.FIGURES)
    for p in paths:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plots_flag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    written: list[Path] = []

    def fake(directory: str | Path, *, quick: bool = False) -> list[Path]:
        written.append(Path(directory))
        return []

    monkeypatch.setattr(tour, "write_figures", fake)
    monkeypatch.setattr(tour, "run_seeds", lambda: {})
    assert tour.main(["--plots", str(tmp_path)]) == 0
    assert written == [tmp_path]
