"""Truncation in the table engines, then a grouped sum: each engine vs its own plain head(k).

``python benchmarks/bench_table_truncate.py [--large]``: N rows from N/10 people (default
10^6 rows; ``--large``: 10^7 rows, 10^6 people), each row in one of 10^3 groups; the engine
runs the plan ``truncate_per_group(5, keep="sample")`` then the exact per-group integer sum
(``TruncateRows`` + ``IntSum`` by ``g``: what a table query compiles to, before the noise).
The baseline is the same library's ``group_by(person).head(k)`` then ``group_by(g).sum()``
(no randomness: the first k rows in the frame's order, which is not a DP truncation).
With ``--opendp-python PATH`` (an interpreter with OpenDP 0.16 and Polars 1.36.1, e.g. a venv
made with ``pip install "opendp[polars]==0.16.*" "polars==1.36.1"``), the whole release
(``unit_of(identifier="pid")``, ``truncate_per_group(k)``, a noisy sum per group with public
keys, ``release().collect()``) is also timed through OpenDP 0.16 and through opendp_lite (this
interpreter), each in a fresh subprocess running the same script, one JSON line with both.
Prints one JSON line per engine (median of ``--repeat`` wall-clock seconds, one untimed call
first) with the ratio to the baseline, and the peak traced memory of one call (tracemalloc:
Python and numpy allocations; Polars' and Arrow's own are not traced).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
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
    ap.add_argument("--partitions", type=int, default=4, help="Dask partitions")
    ap.add_argument("--opendp-python", default=None, help="interpreter with OpenDP 0.16")
    args = ap.parse_args()
    _DASK["partitions"] = args.partitions
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
            **({"partitions": _DASK["partitions"]} if name == "dask" else {}),
            "opendp_lite_s": round(t_ours, 4),
            "plain_head_k_s": round(t_plain, 4),
            "ratio": round(t_ours / t_plain, 2),
            "peak_traced_mib": round(_peak_mib(ours), 1),
            "plain_peak_traced_mib": round(_peak_mib(plain), 1),
        }
        print(json.dumps(row), flush=True)
    if args.opendp_python:
        print(json.dumps(_releases(args.opendp_python, n, k, args.repeat)), flush=True)


# The same release through either library (argv: module, rows, k, repeat); prints its median.
_RELEASE = """
import json, statistics, sys, time
import numpy as np, polars as pl
mod, n, k, repeat = sys.argv[1], *map(int, sys.argv[2:5])
if mod == "opendp":
    import opendp.prelude as dp
    dp.enable_features("contrib")
else:
    import opendp_lite.prelude as dp
data = np.arange(n, dtype=np.int64)
lf = pl.LazyFrame({"pid": (data * 7919) % (n // 10), "g": (data * 104729) % 1000,
                   "x": (data * 31) % 101})
keys = pl.DataFrame({"g": np.arange(1000, dtype=np.int64)})
ctx = dp.Context.compositor(
    data=lf, privacy_unit=dp.unit_of(contributions=1, identifier="pid"),
    privacy_loss=dp.loss_of(epsilon=float(repeat + 1)), split_evenly_over=repeat + 1,
    margins=[dp.polars.Margin(by=["g"], max_length=n)])
def release():
    q = (ctx.query().truncate_per_group(k).group_by("g")
         .agg(pl.col("x").dp.sum((0, 100))).with_keys(keys))
    return q.release().collect()
out = release()
times = []
for _ in range(repeat):
    t0 = time.perf_counter(); release(); times.append(time.perf_counter() - t0)
print(json.dumps({"median_s": statistics.median(times), "polars": pl.__version__,
                  "shape": list(out.shape)}))
"""


def _releases(opendp_python: str, n: int, k: int, repeat: int) -> dict[str, Any]:
    """The whole release through OpenDP 0.16 (``opendp_python``) and opendp_lite (this
    interpreter), each in its own process, as one JSON row with their ratio."""
    row: dict[str, Any] = {"rows": n, "k": k, "keep": "sample", "query": "release"}
    for label, python, mod in (
        ("opendp_0_16", opendp_python, "opendp"),
        ("opendp_lite", sys.executable, "lite"),
    ):
        run = subprocess.run(  # noqa: S603 (the interpreter the user named; a fixed script)
            [python, "-c", _RELEASE, mod, str(n), str(k), str(repeat)],
            capture_output=True,
            text=True,
            check=False,
        )
        if run.returncode != 0:
            row[f"{label}_error"] = run.stderr.strip().splitlines()[-1:]
            continue
        out = json.loads(run.stdout.strip().splitlines()[-1])
        row[f"{label}_s"] = round(out["median_s"], 4)
        row[f"{label}_polars"] = out["polars"]
    if "opendp_0_16_s" in row and "opendp_lite_s" in row:
        row["opendp_over_lite"] = round(row["opendp_0_16_s"] / row["opendp_lite_s"], 2)
    return row


_DASK = {"partitions": 4}  # --partitions


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

    ddf = dd.from_pandas(pdf, npartitions=_DASK["partitions"])

    # Dask's own head per person: a shuffle by person, then each partition's groupby().head
    def plain() -> Any:
        by_person = ddf.shuffle("pid")
        kept = by_person.map_partitions(lambda d: d.groupby("pid").head(k), meta=ddf._meta)
        return kept.groupby("g")["x"].sum().compute()

    return ddf, plain


if __name__ == "__main__":
    main()
