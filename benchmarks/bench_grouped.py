"""Grouped DP sum and count vs the same non-private group-by, on pandas, Polars and Dask.

``n`` rows, ``1000`` groups (integer keys, public), values uniform on [0, 100).  Each engine's
DP release (``dp.c.grouped_sum`` / ``dp.c.grouped_count``: partition by the public keys,
exact per-group grid sums or counts, Laplace noise, a labelled dict) is timed next to the
engine's own non-private group-by on the same frame, interleaved, ``--rounds`` times
(default 5); the median of each is reported with ``ratio`` = median(DP) / median(plain)
and ``ratio_paired`` = the median of the per-round ratios.  Target: ratio <= 3.

* pandas: ``df.groupby("g")["x"].sum()`` / ``df.groupby("g").size()``;
* Polars: ``df.group_by("g").agg(pl.col("x").sum())`` / ``.agg(pl.len())`` (skipped if Polars
  is not installed);
* Dask: ``ddf.groupby("g")["x"].sum().compute()`` / ``ddf.groupby("g").size().compute()`` on a
  persisted dataframe of 8 partitions, default (threaded) scheduler for both; the DP release
  reduces exact per-partition partials on the workers.

One JSON line per case on stdout and in ``benchmarks/results/bench_grouped.jsonl``.

    python benchmarks/bench_grouped.py            # 10^6 rows
    python benchmarks/bench_grouped.py --large    # 10^7 rows
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "benchmarks" / "results"

import opendp_lite.prelude as dp  # noqa: E402 - after the path set-up

GROUPS = 1000
KEYS = list(range(GROUPS))
BOUNDS = (0.0, 100.0)
EPS = 1.0


def _time(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _case(
    engine: str, agg: str, n: int, ours: Callable[[], Any], peer: Callable[[], Any], rounds: int
) -> dict[str, Any]:
    ours(), peer()  # warm-up (imports, caches)
    o, p = [], []
    for _ in range(rounds):
        o.append(_time(ours))
        p.append(_time(peer))
    ours_s, peer_s = statistics.median(o), statistics.median(p)
    return {
        "bench": "grouped",
        "case": f"{engine}-{agg}",
        "n": n,
        "groups": GROUPS,
        "ours_s": round(ours_s, 5),
        "peer": f"{engine} group-by {agg} (non-private)",
        "peer_s": round(peer_s, 5),
        "ratio": round(ours_s / peer_s, 3),
        "ratio_paired": round(statistics.median(a / b for a, b in zip(o, p, strict=True)), 3),
        "ratio_peer_over_ours": round(peer_s / ours_s, 3),
        "ours_runs": [round(v, 5) for v in o],
        "peer_runs": [round(v, 5) for v in p],
        "load": [round(v, 2) for v in os.getloadavg()],
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--large", action="store_true", help="10^7 rows (default 10^6)")
    ap.add_argument("--n", type=int, default=None)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--engines", default="pandas,polars,dask")
    args = ap.parse_args()
    n = args.n or (10**7 if args.large else 10**6)
    warnings.simplefilter("ignore")

    gen = np.random.default_rng(0)  # benchmark data only (not a DP draw)
    g = gen.integers(0, GROUPS, n)
    x = gen.random(n) * 100.0
    out: list[dict[str, Any]] = []
    engines = args.engines.split(",")

    def run(engine: str, frame: Any, plain_sum: Any, plain_count: Any) -> None:
        def dp_sum() -> Any:
            return dp.c.grouped_sum(
                frame, by="g", column="x", bounds=BOUNDS, epsilon=EPS, keys=KEYS
            )

        def dp_count() -> Any:
            return dp.c.grouped_count(frame, by="g", epsilon=EPS, keys=KEYS)

        for agg, ours, peer in (("sum", dp_sum, plain_sum), ("count", dp_count, plain_count)):
            rec = _case(engine, agg, n, ours, peer, args.rounds)
            print(json.dumps(rec), flush=True)
            out.append(rec)

    if "pandas" in engines:
        import pandas as pd

        df = pd.DataFrame({"g": g, "x": x})
        run(
            "pandas",
            df,
            lambda: df.groupby("g")["x"].sum(),
            lambda: df.groupby("g").size(),
        )
    if "polars" in engines:
        try:
            import polars as pl
        except ImportError:
            print(json.dumps({"bench": "grouped", "case": "polars", "skipped": "no polars"}))
        else:
            pf = pl.DataFrame({"g": g, "x": x})
            run(
                "polars",
                pf,
                lambda: pf.group_by("g").agg(pl.col("x").sum()),
                lambda: pf.group_by("g").agg(pl.len()),
            )
    if "dask" in engines:
        import dask.dataframe as dd
        import pandas as pd

        ddf = dd.from_pandas(pd.DataFrame({"g": g, "x": x}), npartitions=8).persist()
        run(
            "dask",
            ddf,
            lambda: ddf.groupby("g")["x"].sum().compute(),
            lambda: ddf.groupby("g").size().compute(),
        )

    RESULTS.mkdir(parents=True, exist_ok=True)
    suffix = "" if n == 10**6 else f"_n{n}"
    with open(RESULTS / f"bench_grouped{suffix}.jsonl", "w") as f:
        for rec in out:
            f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
