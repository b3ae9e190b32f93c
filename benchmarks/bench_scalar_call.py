"""Per-call fixed cost of scalar noise measurements vs python-dp and diffprivlib (issue 16).

One release of one value through the public measurement (``make_laplace``/``make_gaussian`` on
an atom domain), timed in loops of ``CALLS`` calls, interleaved with the peers in the same
round; median over ``--rounds`` rounds.  Also one call of the same mechanism on a vector of
1 and of 10 values, reported as a number of scalar calls (``vector_call_in_scalar_calls``).
One JSON line per (case, peer), also appended to
nothing (a quick before/after tool: ``peers_noise.py`` holds the recorded matrix).

    python benchmarks/bench_scalar_call.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import opendp_lite.prelude as dl  # noqa: E402

CALLS = 2000
VECTOR_SIZES = (1, 10)


def _peers(case: str) -> dict[str, Callable[[], Any]]:
    out: dict[str, Callable[[], Any]] = {}
    try:
        sys.modules.setdefault("diffprivlib.models", types.ModuleType("diffprivlib.models"))
        from diffprivlib import mechanisms as dpl

        m1: Any = {
            "float_laplace": lambda: dpl.Laplace(epsilon=1.0, sensitivity=1.0),
            "float_gaussian": lambda: dpl.GaussianAnalytic(
                epsilon=1.0, delta=1e-5, sensitivity=1.0
            ),
            "int_laplace": lambda: dpl.Geometric(epsilon=1.0, sensitivity=1),
        }[case]()
        out["diffprivlib"] = lambda: m1.randomise(0)
    except Exception:  # noqa: S110 (peer not importable: skipped)
        pass
    try:
        from pydp.algorithms import numerical_mechanisms as pydp

        if case == "float_laplace":
            m2: Any = pydp.LaplaceMechanism(epsilon=1.0, sensitivity=1.0)
            out["python-dp"] = lambda: m2.add_noise(0.0)
        elif case == "float_gaussian":
            m3: Any = pydp.GaussianMechanism(epsilon=1.0, delta=1e-5, sensitivity=1.0)
            out["python-dp"] = lambda: m3.add_noise(0.0)
    except Exception:  # noqa: S110
        pass
    return out


def _ours_vector(case: str, n: int) -> Callable[[], Any]:
    """One call of the same mechanism on a vector of n values (the small-vector path)."""
    if case == "int_laplace":
        mv = dl.m.make_laplace(dl.vector_domain(dl.atom_domain(T=int)), dl.l1_distance(T=int), 1.0)
        xi = np.full(n, 50, dtype=np.int32)  # T=int is i32, as in OpenDP
        return lambda: mv(xi)
    dom = dl.vector_domain(dl.atom_domain(T=float, nan=False))
    if case == "float_laplace":
        mf = dl.m.make_laplace(dom, dl.l1_distance(T=float), 1.0)
    else:
        mf = dl.m.make_gaussian(dom, dl.l2_distance(T=float), 1.0)
    xf = np.full(n, 50.0)
    return lambda: mf(xf)


def _ours(case: str) -> Callable[[], Any]:
    if case == "int_laplace":
        m = dl.m.make_laplace(dl.atom_domain(T=int), dl.absolute_distance(T=int), 1.0)
        return lambda: m(50)
    space = dl.atom_domain(T=float, nan=False), dl.absolute_distance(T=float)
    if case == "float_laplace":
        mf = dl.m.make_laplace(*space, 1.0)
    else:
        mf = dl.m.make_gaussian(*space, 1.0)
    return lambda: mf(50.0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument(
        "--clock",
        choices=["wall", "cpu"],
        default="wall",
        help="wall clock, or this thread's CPU time (robust to other processes' load)",
    )
    args = ap.parse_args()
    clock = {"wall": time.perf_counter, "cpu": time.thread_time}[args.clock]
    for case in ("float_laplace", "float_gaussian", "int_laplace"):
        fns = {
            "ours": _ours(case),
            **_peers(case),
            **{f"ours_vector_{n}": _ours_vector(case, n) for n in VECTOR_SIZES},
        }
        samples: dict[str, list[float]] = {k: [] for k in fns}
        for _ in range(args.rounds):
            for k, f in fns.items():
                t = clock()
                for _ in range(CALLS):
                    f()
                samples[k].append((clock() - t) / CALLS)
        med = {k: statistics.median(v) for k, v in samples.items()}
        for n in VECTOR_SIZES:  # the issue-16 yardstick: a vector call in scalar calls
            v = med[f"ours_vector_{n}"]
            row_v = {
                "bench": "bench_scalar_call",
                "case": case,
                "vector_n": n,
                "vector_us": round(v * 1e6, 2),
                "scalar_us": round(med["ours"] * 1e6, 2),
                "vector_call_in_scalar_calls": round(v / med["ours"], 2),
                "clock": args.clock,
            }
            print(json.dumps(row_v), flush=True)
        for peer in fns:
            if peer == "ours" or peer.startswith("ours_vector"):
                continue
            row = {
                "bench": "bench_scalar_call",
                "case": case,
                "ours_us": round(med["ours"] * 1e6, 2),
                "peer": peer,
                "peer_us": round(med[peer] * 1e6, 2),
                "ratio_peer_over_ours": round(med[peer] / med["ours"], 3),
                "clock": args.clock,
            }
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
