"""Reading frame columns: a pandas/Polars/pyarrow column through the vector domain, against
the manual route a user took before (``series.to_numpy()`` then the same domain check).

Prints one JSON line per case and writes them to ``benchmarks/results/peers_frames.jsonl``.
``copied`` says whether the normalised vector owns new memory (False = zero-copy).
Run: ``python benchmarks/peers_frames.py [--large]``.
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

import opendp_lite.prelude as dp

warnings.simplefilter("ignore")


def _loops(f: Any, target: float = 0.01) -> int:
    """Calls per timing so that one timing lasts about ``target`` seconds (a single call of a
    few microseconds is below the timer's and the machine's noise)."""
    f()  # warm-up
    t0 = time.perf_counter()
    f()
    return max(1, min(10_000, int(target / max(time.perf_counter() - t0, 1e-7))))


def _interleaved(ours: Any, peer: Any, rounds: int = 7) -> tuple[float, float]:
    """Median seconds per call of ``ours`` and ``peer``, timed alternately in the same loop."""
    times: tuple[list[float], list[float]] = ([], [])
    fns = ((ours, times[0], _loops(ours)), (peer, times[1], _loops(peer)))
    for _ in range(rounds):
        for f, out, loops in fns:
            t0 = time.perf_counter()
            for _ in range(loops):
                f()
            out.append((time.perf_counter() - t0) / loops)
    return float(np.median(times[0])), float(np.median(times[1]))


def _to_options(s: Any) -> Any:
    return s.astype(object).where(s.notna(), None).to_numpy()


def _cases(n: int) -> list[tuple[str, Any, Any, Any]]:
    import pandas as pd
    import polars as pl
    import pyarrow as pa

    x = np.arange(n, dtype=np.float64) % 97.0
    f64 = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    opt = dp.vector_domain(dp.option_domain(dp.atom_domain(T="i64")))
    nullable = pd.Series(np.arange(n) % 50, dtype="Int64")
    if n > 1:
        nullable[1] = pd.NA
    words = pd.Series(np.array(["a", "b", "c"], dtype=object)[np.arange(n) % 3])
    strs = dp.vector_domain(dp.atom_domain(T=str))
    return [
        ("pandas-f64", f64, pd.Series(x), lambda s: s.to_numpy()),
        ("polars-f64", f64, pl.Series("x", x), lambda s: s.to_numpy()),
        ("pyarrow-f64", f64, pa.array(x), lambda s: s.to_numpy()),
        (
            "pandas-Int64-NA-option",
            opt,
            nullable,
            lambda s: s.astype(object).where(s.notna(), None).to_numpy(),
        ),
        ("pandas-str", strs, words, lambda s: s.to_numpy()),
    ]


def main() -> None:
    sizes = [1, 10, 10**3, 10**6] + ([10**7] if "--large" in sys.argv else [])
    out = Path(__file__).parent / "results" / "peers_frames.jsonl"
    lines = []
    for n in sizes:
        for case, domain, col, manual in _cases(n):
            ours, peer = _interleaved(
                lambda d=domain, c=col: d._normalize(c),
                lambda d=domain, c=col, m=manual: d._normalize(m(c)),
            )
            normalised = domain._normalize(col)
            native = manual(col)
            copied = not np.shares_memory(normalised, native) if native.dtype != object else True
            line = {
                "bench": "frames_convert",
                "case": case,
                "n": n,
                "ours_s": ours,
                "peer": "to_numpy+check",
                "peer_s": peer,
                "ratio_peer_over_ours": peer / ours if ours else None,
                "copied": bool(copied),
            }
            print(json.dumps(line), flush=True)
            lines.append(json.dumps(line))
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
