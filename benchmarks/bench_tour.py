"""Time the guided tour (``python -m opendp_lite``): ``python benchmarks/bench_tour.py``.

Prints one JSON line per case (median of >= 5 rounds) and appends them to
``benchmarks/results/bench_tour.jsonl``.  There is no peer: the tour is opendp_lite's own
walk through the seed documents.  (This replaces a wall-clock assertion that used to live in
``tests/test_tour.py``.)
"""

from __future__ import annotations

import contextlib
import io
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from opendp_lite import tour

ROUNDS = 5


def _time(fn: object) -> float:
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        fn()  # type: ignore[operator]
    return time.perf_counter() - start


def main() -> None:
    cases = {"tour.main": lambda: tour.main([]), **{f"seed_{k}": v for k, v in tour.SEEDS.items()}}
    lines = []
    for name, fn in cases.items():
        times = [_time(fn) for _ in range(ROUNDS)]
        line = {
            "bench": "tour",
            "case": name,
            "n": 1,
            "rounds": ROUNDS,
            "ours_s": statistics.median(times),
            "ours_max_s": max(times),
            "peer": None,
            "peer_s": None,
            "ratio_peer_over_ours": None,
        }
        print(json.dumps(line), flush=True)
        lines.append(line)
    out = Path(__file__).resolve().parent / "results" / "bench_tour.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
