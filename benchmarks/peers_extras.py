"""The numpy extras: opendp_lite against OpenDP 0.16's ``opendp.extras.numpy`` and plain numpy.

Cases, on an ``n × 5`` float64 array of standard normal rows (fixed seed):

* ``np_clamp``: clamp each row to the L2 ball of radius 1;
* ``np_sum``: column sums of rows already in the ball (opendp_lite: exact grid sums);
* ``np_sscp``: XᵀX of rows already in the ball (opendp_lite: exact 40-bit grid).

Peers: OpenDP 0.16's constructors (``make_np_clamp``, ``make_np_sum``, ``make_np_sscp``) and
numpy (``x / max(1, ‖x‖)``, ``x.sum(0)``, ``x.T @ x``).  Each round times ours, then the peers
(interleaved), ``ROUNDS`` rounds, medians.  Sizes 1, 10, 10^3, 10^6 (10^7 with ``--large``).

    python benchmarks/peers_extras.py [--large] [--no-write]

One JSON line per case and peer on stdout and in ``benchmarks/results/peers_extras.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import platform
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

import opendp_lite.prelude as lite  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
ROUNDS = 5
D = 5


def _ours(case: str) -> Callable[[np.ndarray], Any]:
    sym = lite.symmetric_distance()
    if case == "np_clamp":
        return lite.numpy.make_np_clamp(
            lite.numpy.array2_domain(num_columns=D, T=float), sym, 1.0, 2
        )
    dom = lite.numpy.array2_domain(norm=1.0, p=2, num_columns=D, T=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        make = lite.numpy.make_np_sum if case == "np_sum" else lite.numpy.make_np_sscp
        return make(dom, sym)


def _opendp(case: str) -> Callable[[np.ndarray], Any] | None:
    try:
        import opendp.prelude as dp
        from opendp.extras.numpy._make_np_sscp import make_np_sscp
        from opendp.extras.numpy._make_np_sum import make_np_sum
    except ImportError:
        return None
    dp.enable_features("contrib", "idealized-numerics")
    sym = dp.symmetric_distance()
    if case == "np_clamp":
        return dp.numpy.make_np_clamp(dp.numpy.array2_domain(num_columns=D, T=float), sym, 1.0, 2)
    dom = dp.numpy.array2_domain(norm=1.0, p=2, num_columns=D, nan=False, T=float)
    return (make_np_sum if case == "np_sum" else make_np_sscp)(dom, sym)


def _numpy(case: str) -> Callable[[np.ndarray], Any]:
    if case == "np_clamp":
        return lambda x: x / np.maximum(1.0, np.linalg.norm(x, axis=1, keepdims=True))
    if case == "np_sum":
        return lambda x: x.sum(axis=0)
    return lambda x: x.T @ x


def _time(fn: Callable[[np.ndarray], Any], x: np.ndarray) -> float:
    t = time.perf_counter()
    fn(x)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--large", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    sizes = [1, 10, 1000, 10**6] + ([10**7] if args.large else [])
    gen = np.random.default_rng(0)  # data only
    lines = []
    for case in ("np_clamp", "np_sum", "np_sscp"):
        ours = _ours(case)
        peers = {"opendp": _opendp(case), "numpy": _numpy(case)}
        for n in sizes:
            x = gen.normal(size=(n, D))
            if case != "np_clamp":
                x = _numpy("np_clamp")(x) * (1 - 2.0**-20)
            times: dict[str, list[float]] = {"ours": [], **{k: [] for k in peers}}
            for _ in range(ROUNDS):
                times["ours"].append(_time(ours, x))
                for name, fn in peers.items():
                    if fn is not None:
                        times[name].append(_time(fn, x))
            ours_s = statistics.median(times["ours"])
            for name, fn in peers.items():
                peer_s = statistics.median(times[name]) if fn is not None else None
                line = {
                    "bench": "peers_extras",
                    "case": case,
                    "n": n,
                    "ours_s": ours_s,
                    "peer": name,
                    "peer_s": peer_s,
                    "ratio_peer_over_ours": None if peer_s is None else peer_s / ours_s,
                    "python": platform.python_version(),
                }
                print(json.dumps(line), flush=True)
                lines.append(line)
    if not args.no_write:
        RESULTS.mkdir(parents=True, exist_ok=True)
        with open(RESULTS / "peers_extras.jsonl", "w", encoding="utf-8") as f:
            for line in lines:
                f.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
