"""Cost of one vector noise release as n grows across the small-vector limit (issue 23).

A vector call of n values runs the scalar attempt per lane up to ``fast.SMALL_LIMIT[T]`` and
the numpy vector path beyond; each limit should sit where the two cost the same, so that the
cost per call grows with n without a step.  For each carrier (f64, f32, i64) and n this times
``make_laplace`` on a vector domain (CPU clock, loops of calls, median over ``--rounds``
rounds), both paths forced (``small`` and ``vector``) and the default dispatch, next to numpy's
seeded Laplace plus the add (a peer that is neither exact nor cryptographic, for scale).

One JSON line per (T, n); a last line per T gives the largest step between neighbouring n of
the default route (``max_step``: t(n_next)/t(n) over consecutive sizes).

    python benchmarks/bench_small_vectors.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import opendp_lite.prelude as dp  # noqa: E402
from opendp_lite.samplers import batch, fast  # noqa: E402

SIZES = (1, 4, 8, 12, 16, 24, 32, 48, 64, 80, 96, 128, 160, 192, 256, 384)


def _time(fn: Callable[[], Any], rounds: int, target: float = 0.02) -> float:
    fn()
    calls = 1
    while True:  # calls per loop so that one loop takes about `target` CPU seconds
        t0 = time.process_time()
        for _ in range(calls):
            fn()
        if time.process_time() - t0 >= target / 4 or calls > 100_000:
            break
        calls *= 4
    out = []
    for _ in range(rounds):
        t0 = time.process_time()
        for _ in range(calls):
            fn()
        out.append((time.process_time() - t0) / calls)
    return statistics.median(out)


def _forced(limit: dict[str, int]) -> None:
    fast.SMALL_LIMIT.update(limit)
    fast.SMALL = batch.SMALL = max(fast.SMALL_LIMIT.values())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    default = dict(fast.SMALL_LIMIT)
    gen = np.random.default_rng()  # the peer's generator (benchmarks only; never the package)
    for T in ("f64", "f32", "i64"):
        key = "int" if T == "i64" else T
        dtype = {"f64": np.float64, "f32": np.float32, "i64": np.int64}[T]
        rows = []
        for n in SIZES:
            x = (np.arange(n) + 0.5).astype(dtype) if T != "i64" else np.arange(n, dtype=dtype)
            row: dict[str, Any] = {"bench": "small_vectors", "T": T, "n": n}
            for route, lim in (("small", 10**6), ("vector", 0), ("default", default[key])):
                _forced({**default, key: lim})
                m = dp.m.make_laplace(
                    dp.vector_domain(dp.atom_domain(T=T, nan=False)), dp.l1_distance(T=T), 1.0
                )
                row[f"{route}_us"] = round(_time(lambda m=m, x=x: m(x), args.rounds) * 1e6, 2)
            _forced(default)
            row["numpy_us"] = round(
                _time(lambda x=x, n=n: x + gen.laplace(0.0, 1.0, n), args.rounds) * 1e6, 2
            )
            row["limit"] = default[key]
            row["ratio_numpy_over_default"] = round(row["numpy_us"] / row["default_us"], 3)
            rows.append(row)
            print(json.dumps(row), flush=True)
        steps = [b["default_us"] / a["default_us"] for a, b in itertools.pairwise(rows)]
        worst = max(range(len(steps)), key=steps.__getitem__)
        print(json.dumps({
            "bench": "small_vectors_summary", "T": T, "limit": default[key],
            "max_step": round(steps[worst], 3),
            "max_step_between": [rows[worst]["n"], rows[worst + 1]["n"]],
        }), flush=True)


if __name__ == "__main__":
    main()
