"""Truncation in the table engines, then a grouped sum: each engine vs its own plain head(k).

``python benchmarks/bench_table_truncate.py [--large]``: N rows from N/10 people (default
10^6 rows; ``--large``: 10^7 rows, 10^6 people), each row in one of 10^3 groups; the engine
runs the plan ``truncate_per_group(5, keep="sample")`` then the exact per-group integer sum
(``TruncateRows`` + ``IntSum`` by ``g``: what a table query compiles to, before the noise).
The baseline is the same library's ``group_by(person).head(k)`` then ``group_by(g).sum()``
(no randomness: the first k rows in the frame's order, which is not a DP truncation).
Prints one JSON line per engine (median of ``--repeat`` wall-clock seconds, one untimed call
first) with the ratio to the baseline, and the peak traced memory of one call (tracemalloc:
Python and numpy allocations; Polars' and Arrow's own are not traced).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

from opendp_lite.backends.tables import of_table
from opendp_lite.table import nodes as N


def _median(fn: Callable[[], Any], repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _peak_mib(fn: Callable[[], Any]) -> float:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--large", action="store_true", help="10^7 rows, 10^6 people")
    ap.add_argument("--rows", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--engines", default="polars,pandas,dask")
    args = ap.parse_args()
    n = args.rows or (10**7 if args.large else 10**6)
    people, groups, k = n // 10, 1000, args.k
    data = np.arange(n, dtype=np.int64)  # benchmark data only: fixed permutations, no release
    pid = (data * 7919) % people
    g = (data * 104729) % groups
    x = (data * 31) % 101
    plan = N.FramePlan(
        (N.TruncateRows((N.Col("pid"),), (), k, "sample"),),
        (("s", N.IntSum(N.Col("x"), 0, 100)),),
        by=(N.Col("g"),),
    )
    base = {"rows": n, "people": people, "groups": groups, "k": k, "keep": "sample"}
    for name in args.engines.split(","):
        frame, plain = _frames(name, pid, g, x, k)
        engine = of_table(frame)
        assert engine is not None

        def ours(frame: Any = frame, engine: Any = engine) -> Any:
            return engine.run(frame, plan)

        t_ours = _median(ours, args.repeat)
        t_plain = _median(plain, args.repeat)
        row = {
            **base,
            "engine": name,
            "opendp_lite_s": round(t_ours, 4),
            "plain_head_k_s": round(t_plain, 4),
            "ratio": round(t_ours / t_plain, 2),
            "peak_traced_mib": round(_peak_mib(ours), 1),
            "plain_peak_traced_mib": round(_peak_mib(plain), 1),
        }
        print(json.dumps(row), flush=True)


def _frames(
    name: str, pid: np.ndarray[Any, Any], g: np.ndarray[Any, Any], x: np.ndarray[Any, Any], k: int
) -> tuple[Any, Callable[[], Any]]:
    if name == "polars":
        import polars as pl

        df = pl.DataFrame({"pid": pid, "g": g, "x": x})
        return df, lambda: df.group_by("pid").head(k).group_by("g").agg(pl.col("x").sum())
    import pandas as pd

    pdf = pd.DataFrame({"pid": pid, "g": g, "x": x})
    if name == "pandas":
        return pdf, lambda: pdf.groupby("pid").head(k).groupby("g")["x"].sum()
    import dask.dataframe as dd

    ddf = dd.from_pandas(pdf, npartitions=4)

    # Dask's own head per person: a shuffle by person, then each partition's groupby().head
    def plain() -> Any:
        by_person = ddf.shuffle("pid")
        kept = by_person.map_partitions(lambda d: d.groupby("pid").head(k), meta=ddf._meta)
        return kept.groupby("g")["x"].sum().compute()

    return ddf, plain


if __name__ == "__main__":
    main()
