"""A private grouped release through the table API, against Polars' own group-by and OpenDP.

The query of issue 24: per group, the noisy row count, sum and mean of a float column in
[0, 100], 10^3 groups, written once in OpenDP's Polars API and run unchanged but for the
import:

* ``native``: Polars' own (non-private) ``group_by(...).agg(len, sum, mean)``;
* ``lite``: ``opendp_lite.prelude`` on the Polars this environment has (2.x here);
* ``opendp``: OpenDP 0.16, whose Polars API needs Polars 1.36.1, run by the interpreter of a
  separate environment (``--opendp-python``, default ``/work/venv136/bin/python``; skipped
  with a note if it is missing).

Two modes: ``keys`` (a margin declares the keys public, ``invariant="keys"``) and
``threshold`` (keys released by a noisy-count threshold under approximate DP).  Each case runs
in its own process and times the whole release: the context, the query and
``release().collect()``.  ``peak_mib`` is the rise of the process's maximum resident set size
over its size with the data loaded.  One JSON line per case, then one per mode with the
ratios.

    python benchmarks/bench_table_release.py            # 10^6 rows
    python benchmarks/bench_table_release.py --large    # 10^7 rows (the issue's size)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
IMPLS = ("native", "lite", "opendp")
MODES = ("keys", "threshold")


def _data(rows: int, groups: int) -> Any:
    import numpy as np
    import polars as pl

    idx = np.arange(rows, dtype=np.int64)  # deterministic data: no randomness source needed
    return pl.DataFrame({"k": (idx * 7919) % groups, "x": ((idx * 104729) % 10007) / 100.07})


def _library(impl: str) -> Any:
    """The DP library of ``impl`` (imported before any timing), or None for native Polars."""
    if impl == "native":
        return None
    if impl == "lite":
        sys.path.insert(0, str(ROOT))
        import opendp_lite.prelude as dp
    else:
        import opendp.prelude as dp  # type: ignore[no-redef]
    dp.enable_features("contrib")
    return dp


def _release(dp: Any, mode: str, data: Any, rows: int, groups: int) -> Any:
    import polars as pl

    if dp is None:
        return data.group_by("k").agg(
            pl.len(), pl.col("x").sum().alias("sum"), pl.col("x").mean().alias("mean")
        )
    keyed = mode == "keys"
    margin = dp.polars.Margin(
        by=["k"], max_length=rows, max_groups=groups, invariant="keys" if keyed else None
    )
    context = dp.Context.compositor(
        data=data.lazy(),
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0, delta=1e-7),
        split_evenly_over=1,
        margins=[margin, dp.polars.Margin(by=[], max_length=rows)],
    )
    x = pl.col("x").fill_null(0.0)
    query = (
        context.query()
        .group_by("k")
        .agg(dp.len(), x.dp.sum((0.0, 100.0)).alias("sum"), x.dp.mean((0.0, 100.0)).alias("mean"))
    )
    return query.release().collect()


def _case(impl: str, mode: str, rows: int, groups: int, rounds: int) -> None:
    warnings.simplefilter("ignore")
    data = _data(rows, groups)
    dp = _library(impl)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        out = _release(dp, mode, data, rows, groups)
        times.append(time.perf_counter() - t0)
    peak = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024
    print(
        json.dumps(
            {
                "impl": impl,
                "mode": mode,
                "rows": rows,
                "groups": groups,
                "median_s": round(statistics.median(times), 4),
                "min_s": round(min(times), 4),
                "released_groups": out.height,
                "peak_mib": round(peak, 1),
            }
        )
    )


def main() -> None:
    a = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    a.add_argument("--large", action="store_true", help="10^7 rows (default 10^6)")
    a.add_argument("--rows", type=int, default=None)
    a.add_argument("--groups", type=int, default=1000)
    a.add_argument("--rounds", type=int, default=3)
    a.add_argument("--opendp-python", default="/work/venv136/bin/python")
    a.add_argument("--case", default=None, help=argparse.SUPPRESS)
    args = a.parse_args()
    rows = args.rows or (10**7 if args.large else 10**6)
    if args.case:
        impl, mode = args.case.split(":")
        _case(impl, mode, rows, args.groups, args.rounds)
        return
    found: dict[tuple[str, str], float] = {}
    for mode in MODES:
        for impl in IMPLS:
            python = args.opendp_python if impl == "opendp" else sys.executable
            if impl == "opendp" and not os.path.exists(python):
                print(f"opendp:{mode} skipped: no interpreter at {python}", file=sys.stderr)
                continue
            cmd = [python, __file__, "--case", f"{impl}:{mode}", "--rows", str(rows)]
            cmd += ["--groups", str(args.groups), "--rounds", str(args.rounds)]
            done = subprocess.run(cmd, capture_output=True, text=True, check=False)  # noqa: S603
            if done.returncode != 0 or not done.stdout.strip():
                print(f"{impl}:{mode} failed: {done.stderr.strip()[-400:]}", file=sys.stderr)
                continue
            line = done.stdout.strip().splitlines()[-1]
            print(line, flush=True)
            found[(impl, mode)] = json.loads(line)["median_s"]
        lite, native, odp = (found.get((i, mode)) for i in ("lite", "native", "opendp"))
        ratios: dict[str, Any] = {"mode": mode, "rows": rows}
        if lite and native:
            ratios["lite_over_native"] = round(lite / native, 2)
        if lite and odp:
            ratios["opendp_over_lite"] = round(odp / lite, 2)
        print(json.dumps(ratios), flush=True)


if __name__ == "__main__":
    main()
