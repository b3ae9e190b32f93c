"""Private selection vs peers: noisy max, top-10 and the exponential mechanism.

    python benchmarks/peers_select.py            # n = 1, 10, 10^3, 10^6
    python benchmarks/peers_select.py --large    # and 10^7
    python benchmarks/peers_select.py --sizes 1000 100000 --rounds 3 --ours-path /tmp/old

Every case times opendp_lite and its peer in the same run, interleaved (ours, peer, ours, …),
``--rounds`` rounds (default 5), and reports medians.  One JSON line per case on stdout and in
``benchmarks/results/peers_select.jsonl`` (``--out`` to change; ``--ours-path`` imports
opendp_lite from another checkout, e.g. an older commit, to measure "before").

Cases (integer scores in [0, 1000), scale 10, i.e. ε = 0.2 per unit of L∞ distance):

* ``noisy_max``: ``make_noisy_max`` under ``max_divergence()`` (exponential noise) vs OpenDP
  0.16 ``make_noisy_max`` (same measure, same scale).
* ``noisy_max_zcdp``: under ``zero_concentrated_divergence()`` (Gumbel noise) vs OpenDP's.
* ``top10``: ``make_noisy_top_k(k=min(10, n))`` under ``max_divergence()`` vs OpenDP's.
* ``exponential``: ``make_exponential`` over ``range(n)`` with a scoring function that looks up
  a precomputed utility list, ε = 1, Δu = 1, vs diffprivlib's ``Exponential`` (constructed and
  ``randomise``-d once per release, as its utility depends on the data) when importable, and vs
  OpenDP ``make_noisy_max`` under zCDP (the same Gumbel/softmax law) otherwise.

Inputs are built once, outside the timed region, in each library's preferred form: a numpy
array for opendp_lite, a Python list for OpenDP and diffprivlib.
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

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def _timed(fn: Callable[[], Any], min_time: float) -> float:
    """Seconds per call of ``fn``, looping until ``min_time`` has elapsed."""
    loops, t0 = 0, time.perf_counter()
    while True:
        fn()
        loops += 1
        dt = time.perf_counter() - t0
        if dt >= min_time:
            return dt / loops


def interleaved(
    ours: Callable[[], Any], peer: Callable[[], Any], rounds: int, min_time: float
) -> tuple[float, float]:
    ours()
    peer()  # warm up
    a, b = [], []
    for _ in range(rounds):
        a.append(_timed(ours, min_time))
        b.append(_timed(peer, min_time))
    return statistics.median(a), statistics.median(b)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--large", action="store_true", help="also n = 10^7")
    ap.add_argument("--sizes", type=int, nargs="*", help="override the sizes")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--min-time", type=float, default=0.05)
    ap.add_argument("--cases", nargs="*", help="a subset of the case names")
    ap.add_argument("--ours-path", help="import opendp_lite from this checkout instead")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "peers_select.jsonl"))
    args = ap.parse_args()
    sys.path.insert(0, args.ours_path or str(ROOT))
    warnings.simplefilter("ignore")

    import opendp.prelude as odp

    import opendp_lite.prelude as dp

    odp.enable_features("contrib")
    dp.enable_features("honest-but-curious")
    try:
        import diffprivlib
        from diffprivlib.mechanisms import Exponential as DplExponential

        dpl_version: str | None = diffprivlib.__version__
    except Exception:  # any import failure means "not available"
        DplExponential, dpl_version = None, None

    sizes = args.sizes or [1, 10, 1000, 10**6] + ([10**7] if args.large else [])
    lines: list[dict[str, Any]] = []
    env = {
        "bench": "peers_select",
        "case": "env",
        "python": platform.python_version(),
        "numpy": np.__version__,
        "opendp": getattr(odp, "__version__", None) or _version("opendp"),
        "diffprivlib": dpl_version,
        "ours_path": args.ours_path or str(ROOT),
        "cpus": os.cpu_count(),
        "load": [round(v, 2) for v in os.getloadavg()],
        "rounds": args.rounds,
    }
    print(json.dumps(env), flush=True)
    lines.append(env)

    for n in sizes:
        cases = _cases(n, dp, odp, DplExponential)
        for name, ours, peer, theirs in cases:
            if args.cases and name not in args.cases:
                continue
            a, b = interleaved(ours, theirs, args.rounds, args.min_time)
            line = {
                "bench": "peers_select",
                "case": name,
                "n": n,
                "ours_s": a,
                "peer": peer,
                "peer_s": b,
                "ratio_peer_over_ours": round(b / a, 3),
            }
            print(json.dumps(line), flush=True)
            lines.append(line)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")


Case = tuple[str, Callable[[], Any], str, Callable[[], Any]]


def _cases(n: int, dp: Any, odp: Any, DplExponential: Any) -> list[Case]:
    """The (name, ours, peer name, peer) closures for ``n`` candidates; inputs built here."""
    space = dp.vector_domain(dp.atom_domain(T=int)), dp.linf_distance(T=int)
    ospace = odp.vector_domain(odp.atom_domain(T=int)), odp.linf_distance(T=int)
    scale = 10.0
    x = np.random.default_rng(n).integers(0, 1000, n).astype(np.int32)
    xl = x.tolist()
    k = min(10, n)
    cases: list[Case] = []
    m_max = dp.m.make_noisy_max(*space, dp.max_divergence(), scale=scale)
    o_max = odp.m.make_noisy_max(*ospace, odp.max_divergence(), scale=scale)
    cases.append(("noisy_max", lambda: m_max(x), "opendp make_noisy_max", lambda: o_max(xl)))
    m_z = dp.m.make_noisy_max(*space, dp.zero_concentrated_divergence(), scale=scale)
    o_z = odp.m.make_noisy_max(*ospace, odp.zero_concentrated_divergence(), scale=scale)
    cases.append(
        ("noisy_max_zcdp", lambda: m_z(x), "opendp make_noisy_max (zCDP)", lambda: o_z(xl))
    )
    m_top = dp.m.make_noisy_top_k(*space, dp.max_divergence(), k=k, scale=scale)
    o_top = odp.m.make_noisy_top_k(*ospace, odp.max_divergence(), k=k, scale=scale)
    cases.append(("top10", lambda: m_top(x), "opendp make_noisy_top_k", lambda: o_top(xl)))
    util = [float(v) for v in xl]
    cand = range(n)
    em = dp.m.make_exponential(
        dp.vector_domain(dp.atom_domain(T=int)),
        dp.symmetric_distance(),
        cand,
        lambda _data, r: util[r],
        sensitivity=1,
        epsilon=1.0,
    )
    data = np.zeros(1, dtype=np.int32)
    if DplExponential is not None:

        def dpl() -> Any:
            return DplExponential(epsilon=1.0, sensitivity=1.0, utility=util).randomise()

        cases.append(("exponential", lambda: em(data), "diffprivlib Exponential", dpl))
    o_em = odp.m.make_noisy_max(*ospace, odp.zero_concentrated_divergence(), scale=2.0)
    cases.append(
        ("exponential", lambda: em(data), "opendp make_noisy_max (zCDP)", lambda: o_em(xl))
    )
    return cases


def _version(dist: str) -> str | None:
    from importlib.metadata import version

    try:
        return version(dist)
    except Exception:
        return None


if __name__ == "__main__":
    main()
