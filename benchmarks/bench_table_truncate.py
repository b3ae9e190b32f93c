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

OpenDP 0.16 (``--opendp-python``, default ``/work/venv136/bin/python``: a Python with OpenDP
0.16 on Polars 1.36.1; ``--opendp-python ''`` skips it) runs the same query in a subprocess on
the same data: ``dp.unit_of(contributions=1, identifier=pl.col("pid"))``,
``truncate_per_group(k)``, ``group_by("g").agg(pl.col("x").dp.sum((0, 100)))`` with the 10^3
keys public (``with_keys``). Its line gives the median wall-clock seconds of the release's
``collect()`` (truncation, sum and noise; one untimed release first), the seconds of
``release()`` itself (building and invoking the measurement, before the collect), and the ratio
of the collect to opendp_lite's Polars engine in this run; an ``error`` field if it fails.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
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
    ap.add_argument("--opendp-python", default="/work/venv136/bin/python")
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
    ours_s: dict[str, float] = {}
    for name in args.engines.split(","):
        frame, plain = _frames(name, pid, g, x, k)
        engine = of_table(frame)
        assert engine is not None

        def ours(frame: Any = frame, engine: Any = engine) -> Any:
            return engine.run(frame, plan)

        t_ours = _median(ours, args.repeat)
        t_plain = _median(plain, args.repeat)
        ours_s[name] = t_ours
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
    if args.opendp_python:
        row = {**base, "engine": "opendp-0.16", **_opendp(args.opendp_python, n, k, args.repeat)}
        if "opendp_collect_s" in row and "polars" in ours_s:
            row["opendp_lite_polars_s"] = round(ours_s["polars"], 4)
            row["ratio_opendp_to_opendp_lite_polars"] = round(
                row["opendp_collect_s"] / ours_s["polars"], 2
            )
        print(json.dumps(row), flush=True)


# Run by OpenDP's Python (argv: rows, k, repeat); prints one JSON object.
_OPENDP = """
import json, statistics, sys, time
import numpy as np
import polars as pl
import importlib.metadata
import opendp.prelude as dp

dp.enable_features("contrib")
n, k, repeat = (int(a) for a in sys.argv[1:4])
people, groups = n // 10, 1000
data = np.arange(n, dtype=np.int64)
lf = pl.LazyFrame(
    {"pid": (data * 7919) % people, "g": (data * 104729) % groups, "x": (data * 31) % 101}
)
keys = pl.LazyFrame({"g": np.arange(groups, dtype=np.int64)})
context = dp.Context.compositor(
    data=lf,
    privacy_unit=dp.unit_of(contributions=1, identifier=pl.col("pid")),
    privacy_loss=dp.loss_of(epsilon=1.0),
    split_evenly_over=repeat + 1,
    margins=[dp.polars.Margin(by=[], max_length=n)],
)
collect, release = [], []
for _ in range(repeat + 1):
    query = (
        context.query()
        .truncate_per_group(k)
        .group_by("g")
        .agg(pl.col("x").dp.sum((0, 100)))
        .with_keys(keys)
    )
    t0 = time.perf_counter()
    once = query.release()
    t1 = time.perf_counter()
    out = once.collect()
    t2 = time.perf_counter()
    assert out.height == groups
    release.append(t1 - t0)
    collect.append(t2 - t1)
print(json.dumps({
    "opendp_version": importlib.metadata.version("opendp"),
    "polars_version": pl.__version__,
    "opendp_collect_s": round(statistics.median(collect[1:]), 4),
    "opendp_release_s": round(statistics.median(release[1:]), 4),
}))
"""


def _opendp(python: str, n: int, k: int, repeat: int) -> dict[str, Any]:
    """OpenDP 0.16's run of the query (see the module's docstring), or an ``error``."""
    try:
        done = subprocess.run(  # noqa: S603 - the given Python and our own code
            [python, "-c", _OPENDP, str(n), str(k), str(repeat)],
            capture_output=True,
            text=True,
            timeout=3600,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"error": f"{type(e).__name__}: {e}"}
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        return {"error": tail[0][:500]}
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


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
