"""Coverage: over repeated releases each stated interval covers the truth at its level, and a
planner whose scales are 30% too small (intervals from 0.7× the noise scale) is rejected.

Sample size fixed up front: 2,000 releases (``scaled(2000, minimum=2000)``) of one plan on
one fixed frame.  Each
statistic's misses K are tested one-sided against its level, with the p-value
Pr[Bin(n, α) >= K] given to ``assert_fits`` (the interval may be conservative, never
optimistic).  The wrong planner is tested on the count
and the sum, whose intervals are tight (a two-sided tail bound of one discrete Laplace), with
the exact power of the one-sided binomial test at the wrong planner's true miss rate.
Float columns: a sum, a mean and a grouped sum of an f64 column (one missing cell, values
beyond the bounds) are released on the 2^k grid; the float sum is also tested against the
narrow planner (its interval is one grid-Laplace tail plus rounding terms below 1e-6).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from opendp_lite.planner import (
    Count,
    GroupedCount,
    GroupedSum,
    Mean,
    Plan,
    Quantile,
    Rows,
    Sum,
    within,
)
from opendp_lite.planner.floats import K_MIN
from opendp_lite.planner.solver import noise_accuracy, value_accuracy
from tests.conftest import scaled
from tests.stat import _reference as ref

LEVEL = 0.9
ALPHA_T = 1 - LEVEL


def _frame() -> pd.DataFrame:
    n = 400
    i = np.arange(n)
    w = (i * 0.37) % 100 + 1 / 3  # off the grid; above 80 is clamped
    w[7] = np.nan  # missing: adds clamp(0) = 0
    return pd.DataFrame(
        {"inc": (i * 37) % 1000, "g": np.array(["a", "b", "c"])[i % 3], "w": w.astype(np.float64)}
    )


FB = (0.0, 80.0)


SPECS = [
    Count("n", within(12.0, level=LEVEL), rows=Rows("g", "==", "a")),  # not the mean's count
    Sum("s", within(3000.0, level=LEVEL), column="inc", bounds=(0, 1000)),
    Mean("m", within(25.0, level=LEVEL), column="inc", bounds=(0, 1000), min_rows=300),
    GroupedCount("gc", within(15.0, level=LEVEL), by="g", keys=("a", "b", "c")),
    Quantile(
        "med", within(60.0, level=LEVEL), column="inc", q=0.5, candidates=tuple(range(0, 1001, 50))
    ),
    Sum("fs", within(300.0, level=LEVEL), column="w", bounds=FB, max_rows=1000),
    Mean("fm", within(2.0, level=LEVEL), column="w", bounds=FB, min_rows=300),
    GroupedSum(
        "fg", within(250.0, level=LEVEL), by="g", keys=("a", "b", "c"), column="w", bounds=FB
    ),
]


def _score(x: np.ndarray, c: int, q: float) -> float:
    return abs((1 - q) * np.sum(x < c) - q * np.sum(x > c))


def _dl_tail(m: int, s: float) -> float:
    """Pr[|Z| >= m] for Z ~ 𝓛_ℤ(s), m >= 1."""
    return 2 * math.exp(-m / s) / (1 + math.exp(-1 / s))


def _misses_ok(k: int, n: int, alpha: float, what: str) -> None:
    ref.assert_fits(float(stats.binom.sf(k - 1, n, alpha)), f"(coverage of {what}: {k}/{n})")


@pytest.mark.slow
@pytest.mark.stat(fits=8)
def test_each_interval_covers_at_its_level_and_a_narrow_planner_is_rejected():
    n = scaled(2000, minimum=2000)  # the 0.7x rejections need 2,000 releases for power 0.999
    data = _frame()
    x = data["inc"].to_numpy()
    truth = {"n": int(np.sum(data["g"].to_numpy() == "a")), "s": int(x.sum()), "m": float(x.mean())}
    truth_g = {k: int(np.sum(data["g"].to_numpy() == k)) for k in ("a", "b", "c")}
    w = np.clip(np.nan_to_num(data["w"].to_numpy(), nan=0.0), *FB)
    truth.update({"fs": float(w.sum()), "fm": float(w.mean())})
    truth_fg = {k: float(w[data["g"].to_numpy() == k].sum()) for k in ("a", "b", "c")}
    best = min(_score(x, c, 0.5) for c in SPECS[4].candidates)
    plan = Plan.minimize(SPECS, "pure")
    units = {st.spec.name: [plan.solution.units[k] for k in st.units] for st in plan.solution.stats}
    wrong = {
        name: noise_accuracy(units[name][0].scale * 0.7, ALPHA_T, "pure") for name in ("n", "s")
    }
    wrong["fs"] = value_accuracy(SPECS[5], units["fs"][0].scale * 0.7, ALPHA_T, "pure")
    miss = dict.fromkeys(("n", "s", "m", "gc", "med", "fs", "fm", "fg"), 0)
    miss_wrong = dict.fromkeys(("n", "s", "fs"), 0)
    for _ in range(n):
        out = plan.release(data)
        for name in ("n", "s", "m", "fs", "fm"):
            est = out[name]
            if not abs(est.value - truth[name]) <= est.half_width:
                miss[name] += 1
        for name in ("n", "s", "fs"):
            if abs(out[name].value - truth[name]) >= wrong[name]:
                miss_wrong[name] += 1
        gc = out["gc"]
        if any(abs(gc.value[k] - truth_g[k]) > gc.half_width for k in truth_g):
            miss["gc"] += 1
        fg = out["fg"]
        if any(abs(fg.value[k] - truth_fg[k]) > fg.half_width for k in truth_fg):
            miss["fg"] += 1
        if _score(x, out["med"].value, 0.5) - best > out["med"].half_width:
            miss["med"] += 1
    for name, k in miss.items():
        _misses_ok(k, n, ALPHA_T, name)
    for name in ("n", "s", "fs"):
        s = units[name][0].scale
        if name == "fs":  # grid Laplace: Pr[|2^k Z| >= a] >= e^{-(a + 2^k)/s}; rounding < 1e-6
            true_rate = math.exp(-(wrong[name] + 1e-6 + 2.0**K_MIN) / s)
        else:
            true_rate = _dl_tail(math.ceil(wrong[name]), s)
        assert true_rate > 1.5 * ALPHA_T  # the narrow planner's real miss rate
        ref.assert_rejects(
            float(stats.binom.sf(miss_wrong[name] - 1, n, ALPHA_T)),
            ref.binom_power_one_sided(n, true_rate, ALPHA_T, "greater"),
            f"(scales × 0.7 for {name}: {miss_wrong[name]}/{n})",
        )
