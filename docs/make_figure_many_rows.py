"""The figure of the how-to "many rows per person": ``python docs/make_figure_many_rows.py``.

One synthetic table (3000 people, rows per person geometric with mean 5, at most 60; an
income per row), the mean income per row released three ways at each ε, the median absolute
error over ``RUNS`` releases written to ``docs/figures/many_rows_per_person.png``:

* claimed: ``contributions=C`` with C the true largest number of rows of one person (a claim
  the analyst must know to be true; reading it from the data is not DP);
* truncated to a chosen k = 5 (``max_rows_per_id=5``);
* truncated to the k suggested by ``suggest_max_rows_per_id`` at 10% of ε (the mean at 90%).

Documentation tooling (needs matplotlib); the data generator is numpy's, for the example
table only (releases use the library's randomness).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import opendp_lite.prelude as dp
from opendp_lite.helpers import dp_mean, suggest_max_rows_per_id

RUNS = 25
EPSILONS = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0)
BOUNDS = (0.0, 200.0)


def table(people: int = 3000) -> dict[str, np.ndarray]:
    gen = np.random.default_rng(7)
    rows = np.minimum(gen.geometric(0.2, people), 60)
    pid = np.repeat(np.arange(people), rows)
    income = gen.gamma(4.0, 12.0, len(pid)) + 3.0 * rows[pid]  # heavy users spend more
    return {"pid": pid, "income": np.clip(income, *BOUNDS)}


def errors(data: dict[str, np.ndarray]) -> dict[str, list[float]]:
    truth = float(np.mean(data["income"]))
    claim = int(np.bincount(data["pid"]).max())
    unit = dp.unit_of(identifier="pid", contributions=1)
    out: dict[str, list[float]] = {"claimed": [], "k = 5": [], "suggested k": []}
    for eps in EPSILONS:
        runs: dict[str, list[float]] = {name: [] for name in out}
        for _ in range(RUNS):
            claimed = dp_mean(data["income"], bounds=BOUNDS, epsilon=eps, contributions=claim)
            fixed = dp_mean(
                data, BOUNDS, eps, column="income", privacy_unit=unit, max_rows_per_id=5
            )
            k = suggest_max_rows_per_id(data, epsilon=0.1 * eps, identifier="pid")
            suggested = dp_mean(
                data, BOUNDS, 0.9 * eps, column="income", privacy_unit=unit, max_rows_per_id=k
            )
            for name, v in zip(out, (claimed, fixed, suggested), strict=True):
                runs[name].append(abs(v - truth))
        for name in out:
            out[name].append(float(np.median(runs[name])))
    return out


def main(directory: str = "docs/figures") -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    found = errors(table())
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, ys in found.items():
        ax.plot(EPSILONS, ys, marker="o", label=name)
        print(name, [round(y, 3) for y in ys])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("ε")
    ax.set_ylabel(f"median |error| of the mean income ({RUNS} runs)")
    ax.set_title("Many rows per person: a claim vs truncation")
    ax.legend()
    path = Path(directory) / "many_rows_per_person.png"
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return path


if __name__ == "__main__":
    print(main(*sys.argv[1:]))
