"""The planner against the two routes analysts take today, on a census-like workload.

Workload: 12 statistics over a generated census-like table (age, income, region, sex):
counts, sums and means over overlapping rows, a grouped sum over 50 regions whose keys are
released from the data (threshold; under approximate DP, the key release's noisy counts are
the per-region counts; under pure DP and zCDP, which have no δ for a threshold, the 50 keys
are public), and two quantiles.  For each measure (approx, pure, zcdp) the script prints one
JSON line with the total ε (or ρ) of

* the plan (shared work, least total loss meeting every target);
* "per query": each statistic calibrated alone to its target, no reuse, losses added;
* "even split": the total split evenly over the 12 statistics (OpenDP's route: an even split,
  then a binary search per query for the scale that fits its share); the total that meets
  every target is 12 × the largest share one statistic needs (δ split evenly too).  Each
  statistic's need is its single-statistic plan without reuse, the value a per-query binary
  search over ε converges to (its accuracy is monotone in ε);

and the ratios ``even_split_over_plan`` and ``per_query_over_plan``.  With ``--release`` it
also runs the plan once on the generated table and checks the spent loss.  The lines are
also written to ``benchmarks/results/bench_planner.jsonl``.

Run: ``python benchmarks/bench_planner.py [--release]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "benchmarks" / "results"

from opendp_lite.planner import (  # noqa: E402 - after the path set-up
    Count,
    GroupedCount,
    GroupedSum,
    Mean,
    Plan,
    Quantile,
    Rows,
    Sum,
    solve,
    within,
)

N = 20_000
REGIONS = [f"r{i:02d}" for i in range(50)]


def census(n: int = N) -> dict[str, np.ndarray]:
    """A synthetic census-like table (seeded numpy generator: data only, never noise)."""
    gen = np.random.default_rng(2026)
    age = gen.integers(0, 95, n)
    income = np.where(age >= 18, gen.lognormal(10.3, 0.7, n).astype(np.int64), 0)
    region = np.array(REGIONS)[gen.integers(0, len(REGIONS), n)]
    sex = np.array(["F", "M"])[gen.integers(0, 2, n)]
    return {"age": age, "income": np.minimum(income, 10**6), "region": region, "sex": sex}


def workload(measure: str) -> list:
    adults = Rows("age", ">=", 18)
    seniors = Rows("age", ">=", 65)
    public_keys = measure != "approx"  # released keys need δ
    specs = [
        Count("people", within(40.0)),
        Count("adults", within(30.0), rows=adults),
        Count("seniors", within(30.0), rows=seniors),
        GroupedCount("by_sex", within(60.0), by="sex", keys=("F", "M"), exhaustive=True),
        Sum("income_total", within(2_000_000.0), column="income", bounds=(0, 200_000), rows=adults),
        Mean(
            "mean_income",
            within(0.02, relative=True, lower_bound=10_000.0),
            column="income",
            bounds=(0, 200_000),
            rows=adults,
            min_rows=10_000,
        ),
        Mean("mean_age", within(0.5), column="age", bounds=(0, 100), min_rows=15_000),
        Mean(
            "mean_age_seniors",
            within(1.0),
            column="age",
            bounds=(0, 100),
            rows=seniors,
            min_rows=2_000,
        ),
        Sum(
            "senior_income", within(1_000_000.0), column="income", bounds=(0, 200_000), rows=seniors
        ),
        Quantile(
            "median_income",
            within(0.02, relative=True, lower_bound=10_000.0),
            column="income",
            q=0.5,
            candidates=tuple(range(0, 200_001, 1000)),
            rows=adults,
        ),
        Quantile("p90_age", within(300.0), column="age", q=0.9, candidates=tuple(range(0, 101))),
    ]
    if public_keys:
        specs.append(
            GroupedSum(
                "income_by_region",
                within(200_000.0),
                by="region",
                column="income",
                bounds=(0, 200_000),
                keys=tuple(REGIONS),
                rows=adults,
            )
        )
    else:
        specs.append(
            GroupedSum(
                "income_by_region",
                within(400_000.0),
                by="region",
                column="income",
                bounds=(0, 200_000),
                max_groups=60,
                release_size=150,
                rows=adults,
            )
        )
    return specs


def routes(specs: list, measure: str, delta: float | None) -> dict:
    t0 = time.perf_counter()
    plan = Plan.minimize(specs, measure, delta)
    t_plan = time.perf_counter() - t0
    alone = [solve([s], measure, delta, reuse=False).total for s in specs]
    per_query = float(sum(alone))
    n = len(specs)
    # even split: every statistic gets total/n of ε (and δ/n); the least total that meets every
    # target is n × the largest share any statistic needs at δ/n
    shares = [
        solve([s], measure, None if delta is None else delta / n, reuse=False).total for s in specs
    ]
    even = n * max(shares)
    return {
        "plan_total": plan.total,
        "per_query_total": per_query,
        "even_split_total": even,
        "even_split_over_plan": even / plan.total,
        "per_query_over_plan": per_query / plan.total,
        "solve_seconds": round(t_plan, 3),
        "plan": plan,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--release", action="store_true", help="also run the plan on the table")
    args = ap.parse_args(argv)
    data = census() if args.release else None
    lines = []
    for measure, delta in (("approx", 1e-7), ("pure", None), ("zcdp", None)):
        specs = workload(measure)
        r = routes(specs, measure, delta)
        plan = r.pop("plan")
        line = {"workload": f"census-12-{measure}", "statistics": len(specs), **r}
        if data is not None:
            out = plan.release(data)
            spent = out.spent[0] if measure == "approx" else out.spent
            line["released_spent"] = spent
            line["spent_within_plan"] = bool(spent <= plan.total)
        print(json.dumps(line))
        lines.append(json.dumps(line))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench_planner.jsonl").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
