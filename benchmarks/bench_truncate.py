"""Person-level truncation, then a grouped sum: opendp_lite vs the engines' plain head(k).

``python benchmarks/bench_truncate.py [--full]``: N rows from N/10 people (default 10^6 rows;
``--full``: 10^7 rows, 10^6 people), each row in one of 10^3 groups; truncate to k = 5 rows
per person with ``keep="sample"`` (``dp.t.make_truncate_per_id``), then the per-group sums of
the kept rows (``make_partition_by`` with public keys and ``make_grouped_sum``, exact).  The
baselines are pandas' and Polars' ``group_by(person).head(k)`` followed by ``group_by(g).sum()``
(no randomness: the first k rows in the frame's order, which is not a DP truncation).
Prints one JSON line per run (best of ``--repeat`` wall-clock seconds).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import opendp_lite.prelude as dp


def _best(fn: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", action="store_true", help="10^7 rows, 10^6 people")
    ap.add_argument("--rows", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--k", type=int, default=5)
    args = ap.parse_args()
    n = args.rows or (10**7 if args.full else 10**6)
    people, groups, k = n // 10, 1000, args.k
    gen = np.random.default_rng(0)  # benchmark data only (not a release)
    frame = {
        "pid": gen.integers(0, people, n),
        "g": gen.integers(0, groups, n),
        "x": gen.uniform(0.0, 100.0, n),
    }
    domain = dp.dataframe_domain()
    trunc = dp.t.make_truncate_per_id(domain, dp.symmetric_id_distance("pid"), k=k)
    keys = list(range(groups))
    parts = dp.t.make_partition_by(domain, dp.symmetric_distance(), by="g", keys=keys)
    gsum = dp.t.make_grouped_sum(
        parts.output_domain, parts.output_metric, column="x", bounds=(0.0, 100.0)
    )
    chain = trunc >> parts >> gsum
    base = {"rows": n, "people": people, "groups": groups, "k": k}

    def report(name: str, seconds: float) -> None:
        print(json.dumps({**base, "run": name, "seconds": round(seconds, 4)}), flush=True)

    report("opendp_lite truncate only", _best(lambda: trunc(frame), args.repeat))
    report("opendp_lite truncate+grouped sum", _best(lambda: chain(frame), args.repeat))
    try:
        import pandas as pd

        pdf = pd.DataFrame(frame)
        report(
            "pandas head(k)+sum",
            _best(
                lambda: pdf.groupby("pid", sort=False).head(k).groupby("g")["x"].sum(),
                args.repeat,
            ),
        )
    except ImportError:
        pass
    try:
        import polars as pl

        plf = pl.DataFrame(frame)
        report(
            "polars head(k)+sum",
            _best(
                lambda: plf.group_by("pid").head(k).group_by("g").agg(pl.col("x").sum()),
                args.repeat,
            ),
        )
    except ImportError:
        pass


if __name__ == "__main__":
    main()
