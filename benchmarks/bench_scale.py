"""Scale-out: a DP mean and a DP histogram over ``n`` float64 values on a Dask LocalCluster.

The data are generated chunk by chunk by Dask (``da.random.random``, uniform on [0, 1)) on
2 worker processes (1 thread each), so they are never held in memory at once.  Each DP
release is timed next to its plain Dask peer on *the same* array in the same run:

* ``mean``: ``clamp((0, 1)) >> mean >> laplace`` (known size ``n``) vs ``x.mean()``;
* ``histogram``: ``find_bin(edges) >> count_by_categories(0..k) >> geometric`` vs
  ``da.bincount(da.digitize(x, edges))``.

One JSON line per case on stdout (and in ``benchmarks/results/bench_scale.jsonl``), then a
table in ``benchmarks/results/bench_scale.md``.  Fields: ``wall_s`` (DP release, membership
checks included), ``plain_s`` (plain Dask), ``ratio`` = the median over the interleaved
runs of DP time / the adjacent plain time (target <= 1.5; robust to the load of a shared
machine), ``ratio_of_min`` = wall_s / plain_s (each the minimum over ``--repeats``
interleaved runs, all listed in ``*_runs``),
``driver_peak_rss_mib`` (peak RSS of this process, which also hosts the scheduler; target
<= 1024) and ``worker_peak_rss_mib`` (the largest worker's peak), both reset before each case
(Linux ``clear_refs``), ``load`` (``os.getloadavg`` before and after: the machine is shared).

    python benchmarks/bench_scale.py --n 100000000        # 10^8
    python benchmarks/bench_scale.py                      # 10^9 (several minutes)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "benchmarks" / "results"


def _status(field: str) -> int:
    """A ``/proc/self/status`` field in bytes (Linux)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    return 0


def _reset_peak() -> int:
    """Reset this process's peak-RSS mark (VmHWM) to its current RSS; return the RSS."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:  # not Linux, or not permitted: the peak is then since process start
        pass
    return _status("VmRSS:")


def _peak() -> int:
    return _status("VmHWM:")


def _timed(fn: Any, client: Any) -> tuple[float, Any, int, int]:
    """Run ``fn`` once; (seconds, result, driver peak RSS, largest worker peak RSS)."""
    _reset_peak()
    client.run(_reset_peak)
    t = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t
    worker_peaks = client.run(_peak)
    return dt, out, _peak(), max(worker_peaks.values())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10**9, help="number of float64 values")
    ap.add_argument("--chunk", type=int, default=1 << 21, help="values per Dask chunk")
    ap.add_argument("--bins", type=int, default=10, help="histogram bins on [0, 1)")
    ap.add_argument("--repeats", type=int, default=2, help="interleaved runs; the min is kept")
    ap.add_argument(
        "--malloc",
        choices=["default", "tuned", "both"],
        default="both",
        help="worker malloc: Dask's default (trim at 64 KiB) or tuned (keep freed memory)",
    )
    ap.add_argument("--cases", default="mean,histogram", help="comma-separated subset")
    ap.add_argument("--no-save", action="store_true", help="do not write benchmarks/results")
    args = ap.parse_args()
    rows = []
    for malloc in ("default", "tuned") if args.malloc == "both" else (args.malloc,):
        rows += run(args, malloc)
    if not args.no_save:
        _save(rows)


def run(args: argparse.Namespace, malloc: str) -> list[dict[str, Any]]:
    """Both cases on a fresh 2-worker LocalCluster whose workers use ``malloc``."""
    import dask
    import dask.array as da
    from distributed import Client, LocalCluster

    import opendp_lite.prelude as dp

    n, k = args.n, args.bins
    load_before = os.getloadavg()
    environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ"))
    if malloc == "tuned":
        # keep freed heap memory for reuse instead of returning it to the OS after every
        # chunk: on this (virtualised) machine a page fault costs ~10 ns per float64 value,
        # so fresh allocations dominate; chunks of 16 MiB stay below the mmap threshold
        environ.update(MALLOC_TRIM_THRESHOLD_=2**30, MALLOC_MMAP_THRESHOLD_=2**25)
    saved = dict(os.environ)
    # the nanny lets this process's environment override the config: set both
    os.environ.update({k: str(v) for k, v in environ.items()})
    try:
        with dask.config.set({"distributed.nanny.pre-spawn-environ": environ}):
            cluster = LocalCluster(
                n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
            )
    finally:
        os.environ.clear()
        os.environ.update(saved)
    client = Client(cluster)
    x = da.random.default_rng(2026).random(n, chunks=args.chunk)  # lazy: generated per chunk

    space = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=n), dp.symmetric_distance()
    dp_mean = space >> dp.t.then_clamp((0.0, 1.0)) >> dp.t.then_mean() >> dp.m.then_laplace(1e-6)
    edges = [i / k for i in range(1, k)]  # k bins: [0, 1/k), ..., [(k-1)/k, 1)
    dp_hist = (
        space
        >> dp.t.then_find_bin(edges)
        >> dp.t.then_count_by_categories(list(range(k)), null_category=False, TOA="i64")
        >> dp.m.then_geometric(100.0)
    )
    cases = [
        ("mean", lambda: dp_mean(x), lambda: float(x.mean().compute()), dp_mean.map(2)),
        (
            "histogram",
            lambda: dp_hist(x),
            lambda: da.bincount(da.digitize(x, np.asarray(edges)), minlength=k).compute(),
            dp_hist.map(2),
        ),
    ]
    # warm up the workers (imports, first allocations) on a small array, untimed
    small = x[: args.chunk]
    small_space = (
        dp.vector_domain(dp.atom_domain(T=float, nan=False), size=small.shape[0]),
        space[1],
    )
    (small_space >> dp.t.then_clamp((0.0, 1.0)) >> dp.t.then_mean())(small)
    (small_space >> dp.t.then_find_bin(edges) >> dp.t.then_count_by_categories([0, 1]))(small)
    small.mean().compute()
    rows = []
    for name, dp_fn, plain_fn, eps in cases:
        if name not in args.cases.split(","):
            continue
        plain_runs, dp_runs = [], []
        for _ in range(args.repeats):  # interleaved, so both see the same background load
            plain_runs.append(_timed(plain_fn, client))
            dp_runs.append(_timed(dp_fn, client))
        plain_s, plain_out = min(r[0] for r in plain_runs), plain_runs[0][1]
        wall_s, dp_out = min(r[0] for r in dp_runs), dp_runs[0][1]
        plain_drv, plain_wrk = max(r[2] for r in plain_runs), max(r[3] for r in plain_runs)
        drv, wrk = max(r[2] for r in dp_runs), max(r[3] for r in dp_runs)
        paired = [r[0] / p[0] for r, p in zip(dp_runs, plain_runs, strict=True)]
        if name == "mean":
            err = abs(float(dp_out) - float(plain_out))
        else:
            err = float(np.max(np.abs(np.asarray(dp_out, dtype=float) - plain_out)))
        row = {
            "case": name,
            "malloc": malloc,
            "n": n,
            "chunk": args.chunk,
            "npartitions": x.numblocks[0],
            "wall_s": round(wall_s, 3),
            "plain_s": round(plain_s, 3),
            "ratio": round(statistics.median(paired), 3),
            "ratio_of_min": round(wall_s / plain_s, 3),
            "wall_s_runs": [round(r[0], 3) for r in dp_runs],
            "plain_s_runs": [round(r[0], 3) for r in plain_runs],
            "driver_peak_rss_mib": round(drv / 2**20, 1),
            "worker_peak_rss_mib": round(wrk / 2**20, 1),
            "plain_driver_peak_rss_mib": round(plain_drv / 2**20, 1),
            "plain_worker_peak_rss_mib": round(plain_wrk / 2**20, 1),
            "epsilon_d_in_2": eps,
            "abs_diff_vs_plain": err,
            "workers": 2,
            "threads_per_worker": 1,
            "load": [round(v, 2) for v in load_before] + [round(v, 2) for v in os.getloadavg()],
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    client.close()
    cluster.close()
    return rows


def _save(rows: list[dict[str, Any]]) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    with open(RESULTS / "bench_scale.jsonl", "a") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    lines = [
        "# bench_scale: DP releases on a Dask LocalCluster (2 workers x 1 thread)",
        "",
        "Generated by `benchmarks/bench_scale.py`; every run appends to `bench_scale.jsonl`.",
        "`ratio` = median over interleaved runs of DP wall time / the adjacent plain Dask wall",
        "time, on the same data in the same run (target <= 1.5); `DP s`, `plain s` are minima;",
        "driver RSS target <= 1024 MiB.  `load` = 1/5/15-min load averages",
        "before and after the run (2 cores shared with other jobs).",
        "",
        "`malloc`: `default` is Dask's worker setting (MALLOC_TRIM_THRESHOLD_=64 KiB: freed memory",
        "goes back to the OS, so each new chunk-sized array page-faults); `tuned` keeps it",
        "(MALLOC_TRIM_THRESHOLD_=1 GiB, MALLOC_MMAP_THRESHOLD_=32 MiB).",
        "DP and plain always run on the same cluster.",
        "",
        "| case | malloc | n | chunks | DP s | plain s | ratio | driver peak MiB "
        "| worker peak MiB | load |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    with open(RESULTS / "bench_scale.jsonl") as f:
        for line in f:
            r = json.loads(line)
            lines.append(
                f"| {r['case']} | {r.get('malloc', 'default')} | {r['n']:.0e} | "
                f"{r['npartitions']} | {r['wall_s']} | "
                f"{r['plain_s']} | {r['ratio']} | {r['driver_peak_rss_mib']} | "
                f"{r['worker_peak_rss_mib']} | {' / '.join(map(str, r['load'][:3]))} |"
            )
    (RESULTS / "bench_scale.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=UserWarning)
        main()
