"""Noise mechanisms vs peers, interleaved in one run: OpenDP 0.16, numpy, diffprivlib, python-dp.

    python benchmarks/peers_noise.py            # n = 1, 10, 10^3, 10^6
    python benchmarks/peers_noise.py --large    # and 10^7

One JSON line per (case, mode, n, peer) on stdout and in
``benchmarks/results/peers_noise.jsonl``.  ``ours_s`` is one opendp_lite call through the public
measurement (``dp.m.make_laplace`` …): mode ``vector`` is one call on a vector of n values,
mode ``scalar`` is n calls on one value each.  ``peer_s`` is the peer doing the same work in
the same round (rounds are interleaved: ours, then each peer; median of ``ROUNDS`` rounds).
``ratio_peer_over_ours`` > 1 means we are faster.  ``bytes`` is the randomness one of our
calls draws (counted through ``rng.fill_bytes``) and ``urandom_s`` the time ``os.urandom``
takes for the same requests (the plain-OS-source limit), ``ours_over_urandom`` their ratio.

Peers: ``opendp`` (0.16, the same mechanism, vector or atom domain; timed on at most
``OPENDP_MAX_N`` elements and scaled linearly: ``peer_n`` says how many), ``numpy`` (an
insecure ``Generator``: a speed reference only, not private), ``diffprivlib`` and ``python-dp``
(scalar APIs, so a Python loop; only n ≤ 10^3), each when importable; at n ≥ 10^6 also
``ours_os_source``: ours with ``rng.use_os_source()`` (the plain ``os.urandom`` source).

A ``binade`` block measures the vector float Laplace time against the data's magnitude
(threat model, timing channel): x = 0 and values at binade boundaries.
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
sys.path.insert(0, str(ROOT))

import opendp_lite.prelude as dp  # noqa: E402
from opendp_lite.samplers import fast, rng  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
ROUNDS = 7
OPENDP_MAX_N = 10_000
LOOP_MAX_N = 1_000  # scalar-API peers (and our scalar mode) only up to here
TARGET_S = 0.01  # each timing loops until about this long
#: the timer: wall clock, or with ``--clock cpu`` this thread's CPU time (on a machine loaded
#: by other processes, time spent descheduled then counts for nobody; every peer here runs
#: in this process, so the comparison stays like for like)
CLOCK: Callable[[], float] = time.perf_counter
SKIPPED: dict[str, str] = {}  # peers that could not be imported, and why


def _loops(fn: Callable[[], Any]) -> int:
    fn()  # warm-up: a cold first call (plan cache, lazy imports) would leave too few loops
    t = CLOCK()
    fn()
    dt = CLOCK() - t
    return max(1, min(10_000, int(TARGET_S / max(dt, 1e-7))))


def interleaved(fns: dict[str, Callable[[], Any]]) -> dict[str, float]:
    """Median seconds per call of each fn, timed round-robin over ROUNDS rounds."""
    loops = {k: _loops(f) for k, f in fns.items()}
    runs: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(ROUNDS):
        for k, f in fns.items():
            t = CLOCK()
            for _ in range(loops[k]):
                f()
            runs[k].append((CLOCK() - t) / loops[k])
    return {k: statistics.median(v) for k, v in runs.items()}


def requests_of(fn: Callable[[], Any]) -> list[int]:
    """The sizes of the fill_bytes requests one call of ``fn`` makes."""
    sizes: list[int] = []
    source = rng._current_source()

    def counted(n: int) -> bytes:
        sizes.append(n)
        return source(n)  # type: ignore[no-any-return]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with rng.scripted_randomness(counted):
            fn()
    return sizes


def urandom_time(sizes: list[int]) -> float:
    def go() -> None:
        for s in sizes:
            os.urandom(s)

    return interleaved({"u": go})["u"]


# ------------------------------------------------------------------ the cases


def _odp() -> Any:
    try:
        import opendp.prelude as odp
    except ImportError:
        return None
    odp.enable_features("contrib")
    return odp


def build(case: str, vector: bool) -> tuple[Callable[[Any], Any], Any, Any]:
    """(our measurement, its domain kind, the OpenDP measurement or None) for ``case``."""
    odp = _odp()
    dp.enable_features("contrib")
    is_float = case.startswith("float")
    T = "f64" if is_float else "i32"
    atom = dp.atom_domain(T=T, nan=False) if is_float else dp.atom_domain(T=T)
    dom = dp.vector_domain(atom) if vector else atom
    l1 = dp.l1_distance(T=T) if vector else dp.absolute_distance(T=T)
    l2 = dp.l2_distance(T=T) if vector else dp.absolute_distance(T=T)
    o_dom = o_l1 = o_l2 = None
    if odp is not None:
        o_atom = odp.atom_domain(T=T, nan=False) if is_float else odp.atom_domain(T=T)
        o_dom = odp.vector_domain(o_atom) if vector else o_atom
        o_l1 = odp.l1_distance(T=T) if vector else odp.absolute_distance(T=T)
        o_l2 = odp.l2_distance(T=T) if vector else odp.absolute_distance(T=T)
    if case in ("float_laplace", "int_laplace"):
        ours = dp.m.make_laplace(dom, l1, 1.0)
        peer = odp.m.make_laplace(o_dom, o_l1, 1.0) if odp else None
    elif case in ("float_gaussian", "int_gaussian_s1", "int_gaussian_s1e-3"):
        s = 1e-3 if case.endswith("1e-3") else 1.0
        ours = dp.m.make_gaussian(dom, l2, s)
        peer = odp.m.make_gaussian(o_dom, o_l2, s) if odp else None
    elif case == "bounded_geometric":
        ours = dp.m.make_geometric(dom, l1, 1.0, (0, 100))
        peer = odp.m.make_geometric(o_dom, o_l1, 1.0, bounds=(0, 100)) if odp else None
    else:
        raise ValueError(case)
    return ours, T, peer


def numpy_peer(case: str, n: int, vector: bool) -> Callable[[], Any]:
    g = np.random.default_rng()  # insecure speed reference only; never used by opendp_lite
    p = 1 - np.exp(-1.0)
    draws: dict[str, Callable[[int], Any]] = {
        "float_laplace": lambda m: g.laplace(0.0, 1.0, m),
        "float_gaussian": lambda m: g.normal(0.0, 1.0, m),
        "int_laplace": lambda m: g.geometric(p, m) - g.geometric(p, m),
        "int_gaussian_s1": lambda m: np.rint(g.normal(0.0, 1.0, m)).astype(np.int64),
        "int_gaussian_s1e-3": lambda m: np.rint(g.normal(0.0, 1e-3, m)).astype(np.int64),
        "bounded_geometric": lambda m: np.clip(50 + g.geometric(p, m) - g.geometric(p, m), 0, 100),
    }
    d = draws[case]
    if vector:
        return lambda: d(n)
    return lambda: [d(1) for _ in range(n)]


def loop_peers(case: str, n: int) -> dict[str, Callable[[], Any]]:
    """diffprivlib and python-dp (scalar APIs: a Python loop of n calls), when importable."""
    out: dict[str, Callable[[], Any]] = {}
    if n > LOOP_MAX_N or case.startswith("int_gaussian") or case == "bounded_geometric":
        return out
    try:
        from diffprivlib import mechanisms as dpl

        if case == "float_laplace":
            m1: Any = dpl.Laplace(epsilon=1.0, sensitivity=1.0)
        elif case == "float_gaussian":
            m1 = dpl.GaussianAnalytic(epsilon=1.0, delta=1e-5, sensitivity=1.0)
        else:
            m1 = dpl.Geometric(epsilon=1.0, sensitivity=1)
        out["diffprivlib"] = lambda: [m1.randomise(0) for _ in range(n)]
    except Exception as e:  # not installable here: skipped, and said so in the meta line
        SKIPPED["diffprivlib"] = repr(e)
    try:
        from pydp.algorithms import numerical_mechanisms as pydp

        if case == "float_laplace":
            m2: Any = pydp.LaplaceMechanism(epsilon=1.0, sensitivity=1.0)
        elif case == "float_gaussian":
            m2 = pydp.GaussianMechanism(epsilon=1.0, delta=1e-5, sensitivity=1.0)
        else:
            m2 = None
        if m2 is not None:
            out["python-dp"] = lambda: [m2.add_noise(0.0) for _ in range(n)]
    except Exception as e:
        SKIPPED["python-dp"] = repr(e)
    return out


CASES = [
    "float_laplace",
    "float_gaussian",
    "int_laplace",
    "int_gaussian_s1",
    "int_gaussian_s1e-3",
    "bounded_geometric",
]


def run_case(case: str, mode: str, n: int, emit: Callable[[dict[str, Any]], None]) -> None:
    vector = mode == "vector"
    ours_m, T, peer_m = build(case, vector)
    if vector:
        x: Any = np.full(n, 50, dtype=np.float64 if T == "f64" else np.int32)
        ours = lambda: ours_m(x)  # noqa: E731
    else:
        v = 50.0 if T == "f64" else 50
        ours = lambda: [ours_m(v) for _ in range(n)]  # noqa: E731
    fns: dict[str, Callable[[], Any]] = {"ours": ours, "numpy": numpy_peer(case, n, vector)}
    scale_up = {"numpy": 1.0}
    if peer_m is not None:
        m = min(n, OPENDP_MAX_N)
        if vector:
            xo = [50.0] * m if T == "f64" else [50] * m
            fns["opendp"] = lambda: peer_m(xo)
        else:
            vo = 50.0 if T == "f64" else 50
            fns["opendp"] = lambda: [peer_m(vo) for _ in range(m)]
        scale_up["opendp"] = n / m
    for name, f in loop_peers(case, n).items():
        fns[name] = f
        scale_up[name] = 1.0
    if vector and n >= 10**6:  # ours again, on the plain OS source (the DRBG's gain)

        def on_os() -> Any:
            rng.use_os_source()
            try:
                return ours()
            finally:
                rng.use_drbg()

        fns["ours_os_source"] = on_os
        scale_up["ours_os_source"] = 1.0
    times = interleaved(fns)
    sizes = requests_of(ours)
    u = urandom_time(sizes)
    for peer, t in times.items():
        if peer == "ours":
            continue
        peer_s = t * scale_up[peer]
        emit(
            {
                "bench": "peers_noise",
                "case": case,
                "mode": mode,
                "n": n,
                "ours_s": times["ours"],
                "peer": peer,
                "peer_s": peer_s,
                "peer_n": round(n / scale_up[peer]),
                "ratio_peer_over_ours": round(peer_s / times["ours"], 3),
                "bytes": sum(sizes),
                "urandom_s": u,
                "ours_over_urandom": round(times["ours"] / u, 3),
            }
        )


def run_binade(emit: Callable[[dict[str, Any]], None], n: int = 100_000) -> None:
    """Vector float Laplace (scale 1, default k) time vs the data's magnitude."""
    xs = {
        "0": 0.0,
        "1e6": 1e6,
        "2^52-0.5": 2.0**52 - 0.5,
        "2^52": 2.0**52,
        "2^52+0.5 (=2^52 in f64)": 2.0**52 + 0.5,
        "2^53": 2.0**53,
        "2^51+0.25": 2.0**51 + 0.25,
    }
    fns = {}
    for label, v in xs.items():
        arr = np.full(n, v)
        fns[label] = lambda arr=arr: fast.float_noise(arr, 1.0, -1074, "laplace", "f64")
    times = interleaved(fns)
    for label, v in xs.items():
        fast.reset_fallback_counts()
        fns[label]()
        exact = fast.fallback_counts()["exact_lanes"] / n
        emit(
            {
                "bench": "peers_noise_binade",
                "case": "float_laplace_vector_x",
                "x": label,
                "n": n,
                "ours_s": times[label],
                "peer": "x=0",
                "peer_s": times["0"],
                "ratio_peer_over_ours": round(times["0"] / times[label], 3),
                "exact_lane_fraction": round(exact, 4),
                "x_value": v,
            }
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--large", action="store_true", help="also n = 10^7")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument(
        "--sizes",
        default="",
        help="comma-separated sizes to re-run (e.g. 1,10,1000); the other rows of the results "
        "file are kept, and the binade block is skipped",
    )
    ap.add_argument("--rounds", type=int, default=ROUNDS, help="interleaved rounds (median)")
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall", help="the timer")
    args = ap.parse_args()
    ap_clock = {"wall": time.perf_counter, "cpu": time.thread_time}[args.clock]
    globals()["ROUNDS"] = args.rounds  # read by interleaved()
    globals()["CLOCK"] = ap_clock
    sizes = [1, 10, 1000, 10**6] + ([10**7] if args.large else [])
    if args.sizes:
        sizes = [int(v) for v in args.sizes.split(",")]
    RESULTS.mkdir(parents=True, exist_ok=True)
    out_path = RESULTS / "peers_noise.jsonl"
    lines: list[str] = []

    def emit(row: dict[str, Any]) -> None:
        line = json.dumps(row)
        print(line, flush=True)
        lines.append(line)

    load0 = os.getloadavg()
    # warm-up, discarded: the run's first timings were up to 2x slow (imports, caches, clock
    # ramp-up), which showed as a gap on whichever case came first
    for case in args.cases.split(","):
        run_case(case, "vector", 1, lambda row: None)
    for case in args.cases.split(","):
        for n in sizes:
            run_case(case, "vector", n, emit)
            if n <= LOOP_MAX_N:
                run_case(case, "scalar", n, emit)
    if not args.sizes:
        run_binade(emit)
    emit(
        {
            "meta": {
                "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "machine": f"{platform.machine()} {os.cpu_count()} cpu, Python "
                f"{platform.python_version()}, numpy {np.__version__}",
                "rng": rng.source_name(),
                "skipped_peers": SKIPPED,
                "sizes": sizes,
                "rounds": args.rounds,
                "clock": args.clock,
                "load_before": " ".join(f"{v:.2f}" for v in load0),
                "load_after": " ".join(f"{v:.2f}" for v in os.getloadavg()),
            }
        }
    )
    if args.sizes and out_path.exists():  # keep the rows this run did not redo
        redone = {(r["case"], r["mode"], r["n"]) for r in map(json.loads, lines) if "case" in r}
        kept = []
        for line in out_path.read_text().splitlines():
            r = json.loads(line)
            # an earlier run's meta line stays: it describes the rows kept from that run
            if r.get("bench") == "peers_noise" and (r["case"], r["mode"], r["n"]) in redone:
                continue
            kept.append(line)
        lines = kept + lines
    out_path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
