"""The table engines' exact plan against the same library's own (non-private) group-by.

The query of issue 24: per group, the row count, the sum and the mean of a float column,
10^3 groups.  The peer is the library's own group-by (``pandas.groupby``, pyarrow's
``Table.group_by``, Dask's ``groupby(...).agg(...).compute()``, Polars' ``group_by``); the
engine runs the FramePlan the table API hands it (``Length``, ``GridSum`` in units of 2^-39
of the values clipped to [0, 100], ``CountValid`` for the mean's denominator), with the
groups either found in the data (sorted by the total order) or given as public keys.  The
noise is not part of this benchmark (it costs the same per group for every engine).

Each case runs in its own process, so its peak memory is its own: ``peak_mib`` is the rise of
the process's resident set size at its highest over the size it had with the data loaded (on
Linux the high-water mark is reset once the data is built, so the data's construction does
not hide the case's own peak).  Each case
is called once untimed before its timed rounds (imports and first-call setup are not timed,
for the peer and the engine alike); ``median_s`` is the median of the timed rounds, ``cpu_s``
the median of their process CPU time (every thread's), the steadier of the two on a machine
other work shares: ``cpu_ratio_to_native`` compares the work done, ``ratio_to_native`` the
time waited.

    python benchmarks/bench_table_engines.py            # 10^5 rows
    python benchmarks/bench_table_engines.py --large    # 10^7 rows (the issue's size)
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's opendp_lite

P = 39  # 100 < 2^7: 2^46 grid units per value at most (the constructors' limit)
LIBS = ("pandas", "pyarrow", "dask", "polars")


def _data(lib: str, rows: int, groups: int) -> Any:
    import numpy as np

    # deterministic data, no randomness source needed: a fixed permutation-like pattern
    idx = np.arange(rows, dtype=np.int64)
    k = (idx * 7919) % groups
    x = ((idx * 104729) % 10007) / 100.07
    if lib == "pandas":
        import pandas as pd

        return pd.DataFrame({"k": k, "x": x})
    if lib == "pyarrow":
        import pyarrow as pa

        return pa.table({"k": k, "x": x})
    if lib == "dask":
        import dask.dataframe as dd
        import pandas as pd

        return dd.from_pandas(pd.DataFrame({"k": k, "x": x}), npartitions=max(1, rows // 10**6))
    import polars as pl

    return pl.DataFrame({"k": k, "x": x})


def _native(lib: str, data: Any) -> Any:
    if lib == "pandas":
        return data.groupby("k")["x"].agg(["size", "sum", "mean"])
    if lib == "pyarrow":
        return data.group_by("k").aggregate([("x", "count"), ("x", "sum"), ("x", "mean")])
    if lib == "dask":
        return data.groupby("k")["x"].agg(["size", "sum", "mean"]).compute()
    import polars as pl

    return data.group_by("k").agg(
        pl.len(), pl.col("x").sum().alias("sum"), pl.col("x").mean().alias("mean")
    )


def _plan(groups: int, keyed: bool) -> Any:
    from opendp_lite.table import nodes as N

    return N.FramePlan(
        (),
        (
            ("len", N.Length()),
            ("sum", N.GridSum(N.Col("x"), 0.0, 100.0, P)),
            ("count", N.CountValid(N.Col("x"))),
        ),
        by=(N.Col("k"),),
        keys={"k": list(range(groups))} if keyed else None,
    )


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise OSError(field)


def _reset_peak() -> int:
    """The resident set size (KiB) from which the case's peak is measured: on Linux the
    process's high-water mark is reset to it (the data's own construction, with its
    temporaries, is not counted); elsewhere the maximum so far."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return _status_kib("VmRSS")
    except OSError:
        return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def _peak_kib() -> int:
    try:
        return _status_kib("VmHWM")
    except OSError:
        return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def _case(lib: str, mode: str, rows: int, groups: int, rounds: int) -> dict[str, Any]:
    import dask

    dask.config.set(scheduler="threads")
    data = _data(lib, rows, groups)
    gc.collect()
    base = _reset_peak()
    if mode == "native":
        fn: Any = lambda: _native(lib, data)  # noqa: E731
    else:
        from opendp_lite.backends.tables import of_table

        engine = of_table(data)
        if engine is None:
            return {"lib": lib, "mode": mode, "skipped": "no engine owns this frame"}
        plan = _plan(groups, mode == "engine-keys")
        fn = lambda: engine.run(data, plan)  # noqa: E731
    fn()  # one untimed call first, for the peer and the engine alike (imports, first-call setup)
    times, cpu = [], []
    for _ in range(rounds):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    peak = _peak_kib()
    return {
        "lib": lib,
        "mode": mode,
        "rows": rows,
        "groups": groups,
        "median_s": statistics.median(times),
        "min_s": min(times),
        "cpu_s": statistics.median(cpu),
        "peak_mib": round((peak - base) / 1024, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=10**5)
    ap.add_argument("--large", action="store_true", help="10^7 rows")
    ap.add_argument("--groups", type=int, default=10**3)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--libs", default=",".join(LIBS))
    ap.add_argument("--case", help=argparse.SUPPRESS)
    a = ap.parse_args()
    rows = 10**7 if a.large else a.rows
    if a.case:
        lib, mode = a.case.split(":")
        print(json.dumps(_case(lib, mode, rows, a.groups, a.rounds)))
        return
    for lib in a.libs.split(","):
        native = native_cpu = None
        for mode in ("native", "engine", "engine-keys"):
            cmd = [
                sys.executable,
                __file__,
                "--case",
                f"{lib}:{mode}",
                "--rows",
                str(rows),
                "--groups",
                str(a.groups),
                "--rounds",
                str(a.rounds),
            ]
            out = subprocess.run(cmd, capture_output=True, text=True, check=False)  # noqa: S603 - this script itself
            if out.returncode != 0 or not out.stdout.strip():
                print(f"{lib}:{mode} skipped: {out.stderr.strip()[-300:]}", file=sys.stderr)
                continue
            rec = json.loads(out.stdout.strip().splitlines()[-1])
            if mode == "native":
                native, native_cpu = rec.get("median_s"), rec.get("cpu_s")
            elif native and "median_s" in rec:
                rec["ratio_to_native"] = round(rec["median_s"] / native, 2)
                if native_cpu:
                    rec["cpu_ratio_to_native"] = round(rec["cpu_s"] / native_cpu, 2)
            print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
