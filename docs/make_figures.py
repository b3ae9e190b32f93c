"""Regenerate the documentation's figures: ``python docs/make_figures.py [DIR]``.

The figures illustrate the seed documents' examples (``docs/seeds/``) with the tour's
experiments (:mod:`opendp_lite.tour`); the committed figures are in ``docs/figures``.  This is
documentation tooling, not part of the runtime package (it needs matplotlib:
``pip install "opendp_lite[docs]"``).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

from opendp_lite.tour import (
    height_error,
    heights_mixture,
    random_dp_local_laplace,
    release_error,
    rr_experiment,
)

#: the tabular-data pages' figures (``docs/tabular/``), drawn by :func:`write_tabular_figures`
TABULAR_FIGURES = (
    "tabular_counts_by_year.png",
    "tabular_accuracy_vs_epsilon.png",
)

FIGURES = (
    "seed000_heights.png",
    "seed000_error_vs_epsilon.png",
    "seed001_laplace_pdf.png",
    "seed002_randomized_response.png",
    "seed004_laplace_grid.png",
)


def write_figures(directory: str | Path, *, quick: bool = False) -> list[Path]:
    """Write the documentation's figures into ``directory``; returns their paths.

    ``quick`` uses fewer points and runs (for tests); the committed figures use the default.

    Raises:
        ImportError: if matplotlib is not installed.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import opendp_lite.prelude as dp

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = []

    def save(fig: Any, name: str) -> None:
        path = out / name
        fig.tight_layout()
        fig.savefig(path, dpi=90)
        plt.close(fig)
        paths.append(path)

    # seed 000: the height distribution
    mixture = heights_mixture()
    x = np.linspace(100, 220, 600)
    pdf_m = np.exp(-0.5 * ((x - 178) / 7) ** 2) / (7 * math.sqrt(2 * math.pi))
    pdf_f = np.exp(-0.5 * ((x - 162) / 6.5) ** 2) / (6.5 * math.sqrt(2 * math.pi))
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(x, pdf_m, label="Male")
    ax.plot(x, pdf_f, label="Female")
    ax.plot(x, 0.5 * (pdf_m + pdf_f), label="General")
    ax.hist(mixture.sample(4000 if quick else 40_000), bins=80, density=True, alpha=0.3,
            label="GaussianMixture.sample")  # fmt: skip
    ax.set_xlabel("height (cm)")
    ax.set_title("Height distribution")
    ax.legend(loc="upper left")
    save(fig, FIGURES[0])

    # seed 000: error vs epsilon, through the two honest routes
    from opendp_lite.sensitivity import sample_sensitivity

    expected = mixture.expected_abs_difference()
    sigma = math.sqrt(0.5 * (7**2 + 6.5**2) + 0.25 * 16**2)
    epsilons = np.geomspace(0.05, 20, 8 if quick else 24)
    runs = 1 if quick else 8
    fig, ax = plt.subplots(figsize=(7, 4))
    for label, width in [("E[Δf]", expected), ("E[Δf] + σ", expected + sigma),
                         ("E[Δf] + 2σ", expected + 2 * sigma)]:  # fmt: skip
        errs = [np.mean([height_error(width, e) for _ in range(runs)]) for e in epsilons]
        ax.plot(epsilons, errs, marker="o", ms=3, label=f"clamped, width {label}: ε-DP")
    sampled = sample_sensitivity(lambda d: d, "l1", mixture, 1, gamma=0.05)
    errs = [
        np.mean([release_error(random_dp_local_laplace(sampled, e)) for _ in range(runs)])
        for e in epsilons
    ]
    ax.plot(epsilons, errs, ls="--", marker="x", ms=3,
            label=f"sampled Δ̂ = {sampled.sensitivity:.1f}: random DP (γ = 0.05)")  # fmt: skip
    ax.set_xlabel("ε")
    ax.set_ylabel("error (cm)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_title("Mean-height error, 500 people, local Laplace noise")
    ax.legend(title="Each person's release", fontsize=8)
    save(fig, FIGURES[1])

    # seed 001: the Laplace pdf for several b, with opendp_lite draws
    x = np.linspace(-10, 10, 1000)
    fig, ax = plt.subplots(figsize=(7, 4))
    for b in [1.0, 2.0, 3.0, 4.0]:
        (line,) = ax.plot(x, np.exp(-np.abs(x) / b) / (2 * b), label=f"b = {b:g}")
        lap = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=float, nan=False)),
                                dp.l1_distance(T=float), b)  # fmt: skip
        draws = lap(np.zeros(2000 if quick else 20_000))
        ax.hist(draws, bins=np.linspace(-10, 10, 81).tolist(), density=True, histtype="step",
                color=line.get_color(), alpha=0.6)  # fmt: skip
    ax.set_title("Lap(0, b): density and make_laplace draws")
    ax.grid(True)
    ax.legend()
    save(fig, FIGURES[2])

    # seed 002: p̂ and Δp vs epsilon for N = 100, 500, 2000
    epsilons = np.linspace(0.001, 10, 8 if quick else 26)
    runs = 2 if quick else 10
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for n in (100, 500, 2000):
        res = [rr_experiment(float(e), 0.2, n, runs) for e in epsilons]
        axes[0].plot(epsilons, [r[0] for r in res], label=f"N = {n}")
        axes[1].plot(epsilons, [r[1] for r in res], label=f"N = {n}")
    axes[0].axhline(0.2, color="grey", lw=0.8, ls="--")
    axes[0].set(xlabel="ε", ylabel="p̂", xlim=(0, 10), ylim=(0, 1))
    axes[1].set(xlabel="ε", ylabel="Δp", xlim=(0, 10), ylim=(0.01, 100), yscale="log")
    axes[1].legend(title="Number of samples", loc="upper right")
    fig.suptitle("Two-coin randomized response: estimate and uncertainty (true p = 0.2)")
    save(fig, FIGURES[3])

    # seed 004: make_base_laplace on the 2^k grid
    fig, axes = plt.subplots(1, 3, figsize=(10, 3))
    n = 2000 if quick else 10_000
    for axis, k in zip(axes, [1, 0, -1], strict=True):
        lap = dp.m.make_base_laplace(dp.vector_domain(dp.atom_domain(T=float, nan=False), size=n),
                                     dp.l1_distance(T=float), scale=1.0, k=k)  # fmt: skip
        support, counts = np.unique(lap(np.zeros(n)), return_counts=True)
        axis.bar(support, counts / n, width=0.8 * 2.0**k)
        axis.set_xticks([-2, 0, 2])
        axis.set_xlim(-6, 6)
        axis.set_title(f"k = {k}; gap = {2.0**k:g}")
    axes[0].set_ylabel("density")
    fig.suptitle("make_base_laplace for different choices of k")
    save(fig, FIGURES[4])
    return paths


def write_tabular_figures(
    directory: str | Path, data: str | Path | None = None, *, quick: bool = False
) -> list[Path]:
    """Write the tabular-data pages' figures (``TABULAR_FIGURES``) into ``directory``.

    ``data`` is a CSV with the France LFS file's columns (default: ``dp.examples``'s file,
    which must be present).  The true values drawn next to the releases are read directly
    from the file, as only the data owner can; they are there to show the size of the noise.

    Raises:
        ImportError: if matplotlib or Polars is not installed.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import polars as pl

    import opendp_lite.prelude as dp

    dp.enable_features("contrib")
    path = Path(data) if data is not None else dp.examples.get_france_lfs_path()
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = []

    def save(fig: Any, name: str) -> None:
        target = out / name
        fig.tight_layout()
        fig.savefig(target, dpi=90)
        plt.close(fig)
        paths.append(target)

    def context(epsilon: float) -> Any:
        return dp.Context.compositor(
            data=pl.scan_csv(path, ignore_errors=True),
            privacy_unit=dp.unit_of(contributions=36),
            privacy_loss=dp.loss_of(epsilon=epsilon),
            split_evenly_over=1,
            margins=[dp.polars.Margin(max_length=150_000 * 36)],
        )

    true = pl.read_csv(path, ignore_errors=True)

    # per-year counts with known keys: releases, their 95% interval, the true counts
    years = pl.DataFrame({"YEAR": list(range(2005, 2014))})
    query = context(1.0).query().group_by("YEAR").agg(dp.len(signed=False)).with_keys(years)
    accuracy = query.summarize(alpha=0.05)["accuracy"][0]
    released = query.release().collect().sort("YEAR")
    exact = true.group_by("YEAR").len().sort("YEAR")
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.errorbar(released["YEAR"], released["len"], yerr=accuracy, fmt="o", capsize=4,
                label="DP release (ε = 1), 95% interval")  # fmt: skip
    ax.plot(exact["YEAR"], exact["len"], "x", color="black", label="true count")
    ax.set_xlabel("YEAR")
    ax.set_ylabel("rows")
    ax.set_title("Rows per survey year (privacy unit: 36 rows)")
    ax.legend(loc="lower right")
    save(fig, TABULAR_FIGURES[0])

    # accuracy of a count and of a mean's sum against ε, with the errors of actual releases
    epsilons = [0.1, 0.3, 1.0, 3.0] if quick else [0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0]
    runs = 3 if quick else 20
    n_true = true.height
    fig, ax = plt.subplots(figsize=(7, 4))
    predicted, observed = [], []
    for epsilon in epsilons:
        query = context(epsilon).query().select(dp.len(signed=True))
        predicted.append(query.summarize(alpha=0.05)["accuracy"][0])
        errors = []
        for _ in range(runs):
            release = context(epsilon).query().select(dp.len(signed=True)).release()
            errors.append(abs(release.collect().item() - n_true))
        observed.append(errors)
        ax.plot([epsilon] * runs, errors, ".", color="tab:blue", alpha=0.4)
    ax.plot(epsilons, predicted, "-", color="tab:red", label="summarize(alpha=0.05) accuracy")
    ax.plot([], [], ".", color="tab:blue", label=f"|release − true|, {runs} releases per ε")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("ε")
    ax.set_ylabel("absolute error of the row count")
    ax.set_title("A DP row count: predicted 95% accuracy and observed errors")
    ax.legend(loc="upper right")
    save(fig, TABULAR_FIGURES[1])
    return paths


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("figures")
    for path in write_figures(target):
        print(f"wrote {path}")
    try:
        tabular = write_tabular_figures(target)
    except Exception as e:  # the France LFS file or Polars may be missing: say so, keep the rest
        print(f"tabular figures skipped: {type(e).__name__}: {e}")
    else:
        for path in tabular:
            print(f"wrote {path}")
