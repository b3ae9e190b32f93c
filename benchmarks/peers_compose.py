"""Interactive composition: per-query cost of a privacy filter and an odometer, vs OpenDP 0.16.

The query is the scalar Laplace mechanism (scale 1, d_in 1: ε = 1 per query) on one float, in
both libraries.  Cases:

* ``privacy_filter``: the cost of query #n on a privacy filter over a pure-DP odometer (budget
  large enough for every query): the budget check (the pending loss) plus the release.
* ``odometer_query_and_loss``: the cost of query #n on an odometer followed by
  ``privacy_loss(d_in)``, the way an odometer is watched.

Query #1 is timed on ``FRESH`` new queryables per round; query #n > 1 as the median of the
``WINDOW`` queries n, n+1, ... of one queryable that has answered n - 1 queries (untimed).
Each round runs opendp_lite then OpenDP (interleaved); the figure is the median over
``ROUNDS`` rounds.  OpenDP's per-query cost grows with n (about 5 µs per past query here), so
its deep cases take minutes: by default it is timed up to query #1000; ``--large`` adds #10^4
for OpenDP (about 4 minutes per round) and ``n`` up to 10^5 for both.

    python benchmarks/peers_compose.py            # n = 1, 10^3, 10^4, 10^5 (OpenDP to 10^3)
    python benchmarks/peers_compose.py --large    # OpenDP to 10^4 too
    python benchmarks/peers_compose.py --max-n 2000 --no-write   # e.g. on an older checkout

One JSON line per case on stdout and in ``benchmarks/results/peers_compose.jsonl``:
``ours_s`` / ``peer_s`` are seconds per query, ``ratio_peer_over_ours`` their ratio (> 1:
opendp_lite is faster); ``peer_s`` is null where the peer was not timed at that n.
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import opendp_lite.prelude as lite  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
ROUNDS = 5
WINDOW = 20
FRESH = 20
BUDGET = 1e9


def _lite_factory(case: str) -> tuple[Callable[[], Any], Callable[[Any], None]]:
    space = lite.atom_domain(T=float, nan=False), lite.absolute_distance(T=float)
    lap = lite.m.make_laplace(*space, scale=1.0)
    odometer = lite.c.make_fully_adaptive_composition(*space, lite.max_divergence())
    if case == "privacy_filter":
        flt = lite.c.make_privacy_filter(odometer, d_in=1.0, d_out=BUDGET)
        return (lambda: flt(0.0)), (lambda q: q(lap))

    def query_and_loss(q: Any) -> None:
        q(lap)
        q.privacy_loss(1.0)

    return (lambda: odometer(0.0)), query_and_loss


def _opendp_factory(case: str) -> tuple[Callable[[], Any], Callable[[Any], None]] | None:
    try:
        import opendp.prelude as odp
    except ImportError:  # pragma: no cover - the peer is a dev dependency
        return None
    odp.enable_features("contrib")
    space = odp.atom_domain(T=float, nan=False), odp.absolute_distance(T=float)
    lap = odp.m.make_laplace(*space, scale=1.0)
    odometer = odp.c.make_fully_adaptive_composition(*space, odp.max_divergence())
    if case == "privacy_filter":
        flt = odp.c.make_privacy_filter(odometer, d_in=1.0, d_out=BUDGET)
        return (lambda: flt(0.0)), (lambda q: q(lap))

    def query_and_loss(q: Any) -> None:
        q(lap)
        q.privacy_loss(1.0)

    return (lambda: odometer(0.0)), query_and_loss


def _one_round(
    factory: tuple[Callable[[], Any], Callable[[Any], None]], checkpoints: list[int]
) -> dict[int, float]:
    """Seconds per query at each checkpoint n (query #n), for one round."""
    make, step = factory
    out: dict[int, float] = {}
    if 1 in checkpoints:
        firsts = []
        for _ in range(FRESH):
            q = make()
            t = time.perf_counter()
            step(q)
            firsts.append(time.perf_counter() - t)
        out[1] = statistics.median(firsts)
    deep = sorted(n for n in checkpoints if n > 1)
    if deep:
        q = make()
        done = 0
        for n in deep:
            while done < n - 1:  # untimed: bring the history to n - 1 queries
                step(q)
                done += 1
            times = []
            for _ in range(WINDOW):
                t = time.perf_counter()
                step(q)
                times.append(time.perf_counter() - t)
                done += 1
            out[n] = statistics.median(times)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--large", action="store_true", help="OpenDP to query #10^4 too")
    parser.add_argument("--max-n", type=int, default=100_000, help="deepest query timed")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--no-write", action="store_true", help="do not write the results")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    checkpoints = [n for n in (1, 1_000, 10_000, 100_000) if n <= args.max_n]
    peer_max = 10_000 if args.large else 1_000
    peer_checkpoints = [n for n in checkpoints if n <= peer_max]
    lines = []
    for case in ("privacy_filter", "odometer_query_and_loss"):
        ours: dict[int, list[float]] = {n: [] for n in checkpoints}
        peer: dict[int, list[float]] = {n: [] for n in peer_checkpoints}
        peer_factory = _opendp_factory(case)
        for _ in range(args.rounds):  # interleaved: ours, then the peer, each round
            for n, s in _one_round(_lite_factory(case), checkpoints).items():
                ours[n].append(s)
            if peer_factory is not None:
                for n, s in _one_round(peer_factory, peer_checkpoints).items():
                    peer[n].append(s)
        for n in checkpoints:
            ours_s = statistics.median(ours[n])
            peer_s = statistics.median(peer[n]) if peer.get(n) else None
            line = {
                "bench": "peers_compose",
                "case": case,
                "n": n,
                "ours_s": ours_s,
                "peer": "opendp-0.16",
                "peer_s": peer_s,
                "ratio_peer_over_ours": round(peer_s / ours_s, 3) if peer_s else None,
                "rounds": args.rounds,
                "window": 1 if n == 1 else WINDOW,
                "loadavg_1m": round(os.getloadavg()[0], 2),
                "python": platform.python_version(),
            }
            print(json.dumps(line), flush=True)
            lines.append(line)
    if not args.no_write:
        RESULTS.mkdir(parents=True, exist_ok=True)
        with open(RESULTS / "peers_compose.jsonl", "w") as f:
            for line in lines:
                f.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
