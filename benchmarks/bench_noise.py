"""Noise throughput: opendp_lite's certified vectorised samplers vs OpenDP 0.16 vs numpy.

All three run in the same process and the same run, so every figure is also a ratio.  One JSON
line per case on stdout (and in ``benchmarks/results/bench_noise.jsonl``), then a readable
table (``benchmarks/results/bench_noise.md``).

    python benchmarks/bench_noise.py            # sizes 10^3, 10^5, 10^6
    python benchmarks/bench_noise.py --large    # and 10^7
    python benchmarks/bench_noise.py --quick    # 10^3 and 10^5 only, fewer repeats

Fields: ``ns_per_sample`` (median over ``repeats`` runs) for opendp_lite, ``opendp_ns``,
``numpy_ns``; ``speedup_vs_opendp`` = opendp_ns / ns_per_sample (throughput ratio);
``x_numpy_time`` = ns_per_sample / numpy_ns; ``peak_mem_bytes`` = the peak of memory
allocated during one opendp_lite call (tracemalloc, which sees numpy's buffers) and
``peak_mem_x_input`` = that over the input's bytes.  OpenDP is timed on at most
``OPENDP_MAX_N`` elements (its cost per sample is flat in n; ``opendp_n`` says how many).

numpy's peers are *insecure* (Mersenne/PCG, float inversion): ``Generator.laplace`` /
``normal`` for the float cases, geometric − geometric (discrete Laplace) and ``rint(normal)``
(discrete Gaussian, approximate) for the integer cases.  They are speed references only.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import tracemalloc
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from opendp_lite.samplers import fast  # noqa: E402

OPENDP_MAX_N = 20_000
RESULTS = ROOT / "benchmarks" / "results"


def median_time(fn: Callable[[], Any], repeats: int, min_time: float = 0.05) -> float:
    """Median over ``repeats`` runs of the seconds per call (each run loops to ≥ min_time)."""
    fn()  # warm up (plans, caches)
    loops = 1
    while True:
        t = time.perf_counter()
        for _ in range(loops):
            fn()
        dt = time.perf_counter() - t
        if dt >= min_time or loops >= 1 << 16:
            break
        loops *= 4
    runs = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(loops):
            fn()
        runs.append((time.perf_counter() - t) / loops)
    return statistics.median(runs)


def peak_alloc(fn: Callable[[], Any]) -> int:
    """Peak bytes allocated (over the start) during one call of ``fn``."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak - base


def opendp_measurement(kind: str, dist: str, T: str, scale: float) -> Callable[[Any], Any] | None:
    try:
        import opendp.prelude as odp
    except ImportError:
        return None
    odp.enable_features("contrib")
    if kind == "float":
        atom = odp.atom_domain(T=T, nan=False)
    else:
        atom = odp.atom_domain(T="i32")
    dom = odp.vector_domain(atom)
    if dist == "laplace":
        return odp.m.make_laplace(dom, odp.l1_distance(T=atom.carrier_type), scale=scale)
    return odp.m.make_gaussian(dom, odp.l2_distance(T=atom.carrier_type), scale=scale)


def numpy_peer(kind: str, dist: str, T: str, scale: float, n: int) -> Callable[[], Any]:
    g = np.random.default_rng()  # the insecure peer only; never used by opendp_lite
    if kind == "float":
        dtype = np.float64 if T == "f64" else np.float32
        if dist == "laplace":
            return lambda: g.laplace(0.0, scale, n).astype(dtype, copy=False)
        return lambda: g.normal(0.0, scale, n).astype(dtype, copy=False)
    if dist == "laplace":
        p = 1 - np.exp(-1 / scale)
        return lambda: g.geometric(p, n) - g.geometric(p, n)
    return lambda: np.rint(g.normal(0.0, scale, n)).astype(np.int64)


def bench_case(kind: str, dist: str, T: str, scale: float, n: int, repeats: int) -> dict[str, Any]:
    if kind == "float":
        dtype = np.float64 if T == "f64" else np.float32
        k = -1074 if T == "f64" else -149
        x = np.zeros(n, dtype=dtype)

        def ours() -> Any:
            return fast.float_noise(x, scale, k, dist, T)  # type: ignore[arg-type]

        name = f"float_{dist}_{T}_default_k"
    else:
        x = np.zeros(n, dtype=np.int32)

        def ours() -> Any:
            return fast.int_noise(x, scale, dist, "i32")  # type: ignore[arg-type]

        name = f"int_discrete_{dist}_scale_{scale:g}"
    fast.reset_fallback_counts()
    t_ours = median_time(ours, repeats)
    counts = fast.fallback_counts()
    mem = peak_alloc(ours)
    t_np = median_time(numpy_peer(kind, dist, T, scale, n), repeats)
    m = opendp_measurement(kind, dist, T, scale)
    t_odp, n_odp = None, min(n, OPENDP_MAX_N)
    if m is not None:
        data = [0.0] * n_odp if kind == "float" else [0] * n_odp
        t_odp = median_time(lambda: m(data), max(3, repeats // 2), min_time=0.0) / n_odp
    ns = t_ours / n * 1e9
    rec: dict[str, Any] = {
        "case": name,
        "n": n,
        "ns_per_sample": round(ns, 2),
        "opendp_ns": None if t_odp is None else round(t_odp * 1e9, 1),
        "opendp_n": n_odp,
        "numpy_ns": round(t_np / n * 1e9, 2),
        "speedup_vs_opendp": None if t_odp is None else round(t_odp * 1e9 / ns, 1),
        "x_numpy_time": round(ns / (t_np / n * 1e9), 2),
        "peak_mem_bytes": mem,
        "peak_mem_x_input": round(mem / x.nbytes, 2),
        "exact_lane_fraction": counts["exact_lanes"] / max(1, counts["attempts"]),
        "repeats": repeats,
    }
    return rec


def bench_scalar(repeats: int) -> list[dict[str, Any]]:
    """The one-value release: ``meas(1.0)`` for a scalar float Laplace mechanism."""
    import opendp_lite.prelude as dp
    from opendp_lite.samplers import batch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            dp.enable_features("contrib")
        except Exception:  # noqa: S110  (older preludes have no feature flags)
            pass
    meas = dp.m.make_laplace(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=1.0
    )
    out = []
    t_odp = None
    try:
        import opendp.prelude as odp

        odp.enable_features("contrib")
        om = odp.m.make_laplace(
            odp.atom_domain(T=float, nan=False), odp.absolute_distance(T=float), scale=1.0
        )
        t_odp = median_time(lambda: om(1.0), repeats)
    except ImportError:
        pass
    g = np.random.default_rng()
    t_np = median_time(lambda: g.laplace(1.0, 1.0), repeats)
    wired = batch.float_noise_scalar is fast.float_noise_scalar

    def raw() -> float:
        return fast.float_noise_scalar(1.0, 1.0, -1074, "laplace", "f64")

    cases: list[tuple[str, Callable[[], Any]]] = [
        ("scalar_fast_float_noise_scalar", raw),
        (f"scalar_meas_call_{'wired' if wired else 'as_dispatched_now'}", lambda: meas(1.0)),
    ]
    if not wired:
        saved = batch.float_noise_scalar
        batch.float_noise_scalar = fast.float_noise_scalar
        try:
            t = median_time(lambda: meas(1.0), repeats)
        finally:
            batch.float_noise_scalar = saved
        out.append(("scalar_meas_call_with_batch_wired_to_fast", t))
    for name, fn in cases:
        out.insert(
            len(out) if name.startswith("scalar_fast") else 0, (name, median_time(fn, repeats))
        )
    recs = []
    for name, t in out:
        recs.append(
            {
                "case": name,
                "n": 1,
                "ns_per_sample": round(t * 1e9, 1),
                "opendp_ns": None if t_odp is None else round(t_odp * 1e9, 1),
                "opendp_n": 1,
                "numpy_ns": round(t_np * 1e9, 1),
                "speedup_vs_opendp": None if t_odp is None else round(t_odp / t, 1),
                "x_numpy_time": round(t / t_np, 1),
                "peak_mem_bytes": None,
                "peak_mem_x_input": None,
                "repeats": repeats,
            }
        )
    return recs


_RSS_CODE = """
import numpy as np
from opendp_lite.samplers import batch, fast
import opendp_lite.prelude as dp

def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    raise RuntimeError(key)

x = np.zeros({n}); x[:] = 1.0
if "{how}" == "mechanism":
    batch.float_noise = fast.float_noise  # as the lead will wire it
    try:
        dp.enable_features("contrib")
    except Exception:
        pass
    meas = dp.m.make_laplace(
        dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float), scale=1.0
    )
    run = lambda v: meas(v)
else:
    run = lambda v: fast.float_noise(v, 1.0, -1074, "laplace", "f64")
run(x[:1000])
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # reset the peak-RSS mark (VmHWM) to the current RSS
before = status("VmRSS:")
y = run(x)
print(status("VmHWM:") - before)
"""


def rss_delta(n: int, how: str) -> dict[str, Any]:
    """Peak-RSS growth of a fresh process noising an n-element f64 vector (Laplace, k=−1074).

    ``how`` is "sampler" (``fast.float_noise``) or "mechanism" (``make_laplace`` on a
    vector domain, with ``samplers.batch.float_noise`` pointed at ``fast.float_noise``).
    """
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    res = subprocess.run(  # noqa: S603  (our own interpreter, fixed code)
        [sys.executable, "-W", "ignore", "-c", _RSS_CODE.format(n=n, how=how)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    delta = int(res.stdout.strip().splitlines()[-1])
    return {
        "case": f"memory_float_laplace_f64_{how}_peak_rss",
        "n": n,
        "rss_growth_bytes": delta,
        "input_bytes": 8 * n,
        "rss_growth_x_input": round(delta / (8 * n), 2),
    }


def table(recs: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    lines = [
        "# bench_noise: opendp_lite (certified exact, OS CSPRNG) vs OpenDP 0.16 vs numpy",
        "",
        f"Run {meta['date']} on {meta['machine']}; load average before/after: "
        f"{meta['load_before']} / {meta['load_after']} (2 cores shared with other work).",
        "Times are medians; OpenDP is timed on ≤ 20 000 elements (flat per-sample cost).",
        "",
        "| case | n | opendp_lite ns/sample | OpenDP ns/sample | numpy ns/sample "
        "| speedup vs OpenDP | × numpy time | peak mem / input | exact-path lanes |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in recs:
        if "ns_per_sample" not in r:
            continue
        frac = r.get("exact_lane_fraction")
        lines.append(
            f"| {r['case']} | {r['n']:,} | {r['ns_per_sample']:,} | {r['opendp_ns'] or '–'} "
            f"| {r['numpy_ns']} | {r['speedup_vs_opendp'] or '–'} | {r['x_numpy_time']} "
            f"| {r['peak_mem_x_input'] if r['peak_mem_x_input'] is not None else '–'} "
            f"| {'–' if frac is None else f'{frac:.1e}'} |"
        )
    for r in recs:
        if r["case"].startswith("memory"):
            lines.append("")
            lines.append(
                f"Memory ({r['case']}): noising {r['n']:,} f64 values grew peak RSS by "
                f"{r['rss_growth_bytes'] / 1e6:.1f} MB = {r['rss_growth_x_input']}× the input's "
                "bytes (the output array itself is 1×)."
            )
    return "\n".join(lines) + "\n"


def targets(recs: list[dict[str, Any]]) -> str:
    """The issue's targets at n = 10^6 (scalar: one call; memory: the largest n measured)."""
    by = {(r["case"], r.get("n")): r for r in recs}
    rows = []

    def check(label: str, value: float | None, goal: float, higher: bool, unit: str) -> None:
        if value is None:
            rows.append(f"| {label} | – | {goal:g}{unit} | not measured |")
            return
        ok = value >= goal if higher else value <= goal
        gap = "met" if ok else f"short by {abs(goal - value) / goal:.0%}"
        rows.append(
            f"| {label} | {value:g}{unit} | {'≥' if higher else '≤'} {goal:g}{unit} | {gap} |"
        )

    n = 10**6
    lap = by.get(("float_laplace_f64_default_k", n), {})
    check("float Laplace f64, speedup vs OpenDP", lap.get("speedup_vs_opendp"), 100, True, "×")
    check("float Laplace f64, time vs numpy laplace", lap.get("x_numpy_time"), 10, False, "×")
    check("  (stretch) time vs numpy laplace", lap.get("x_numpy_time"), 5, False, "×")
    gau = by.get(("float_gaussian_f64_default_k", n), {})
    check("float Gaussian f64, speedup vs OpenDP", gau.get("speedup_vs_opendp"), 100, True, "×")
    for d in ("laplace", "gaussian"):
        for sc in ("1", "10", "1000"):
            r = by.get((f"int_discrete_{d}_scale_{sc}", n), {})
            check(
                f"integer discrete {d} scale {sc}, speedup",
                r.get("speedup_vs_opendp"),
                50,
                True,
                "×",
            )
    sc_rec = by.get(("scalar_meas_call_with_batch_wired_to_fast", 1)) or by.get(
        ("scalar_meas_call_wired", 1), {}
    )
    us = sc_rec.get("ns_per_sample")
    check(
        "scalar float Laplace meas(1.0)",
        None if us is None else round(us / 1000, 2),
        10,
        False,
        " µs",
    )
    mems = [r for r in recs if r["case"] == "memory_float_laplace_f64_mechanism_peak_rss"]
    if mems:
        m = max(mems, key=lambda r: r["n"])
        check(
            f"make_laplace peak RSS growth, n={m['n']:.0e}",
            m["rss_growth_x_input"],
            4,
            False,
            "× input",
        )
    head = [
        "",
        "## Targets (issue 4)",
        "",
        "| target | measured | goal | verdict |",
        "|---|---:|---:|---|",
    ]
    return "\n".join(head + rows) + "\n"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--large", action="store_true", help="also n = 10^7")
    ap.add_argument("--quick", action="store_true", help="n ≤ 10^5, 3 repeats")
    ap.add_argument("--no-write", action="store_true", help="do not write benchmarks/results/")
    ap.add_argument("--render", metavar="JSONL", help="only re-render the table from a .jsonl")
    args = ap.parse_args(argv)
    if args.render:
        lines = [json.loads(x) for x in Path(args.render).read_text().splitlines() if x.strip()]
        meta_r = next(x["meta"] for x in lines if "meta" in x)
        recs_r = [x for x in lines if "meta" not in x]
        (RESULTS / "bench_noise.md").write_text(table(recs_r, meta_r) + targets(recs_r))
        return 0
    sizes = [10**3, 10**5] if args.quick else [10**3, 10**5, 10**6]
    if args.large:
        sizes.append(10**7)
    repeats = 3 if args.quick else 5
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()} {os.cpu_count()} cpu, "
        f"Python {platform.python_version()}, numpy {np.__version__}",
        "load_before": " ".join(f"{v:.2f}" for v in os.getloadavg()),
    }  # fmt: skip
    cases = [("float", d, T, 1.0) for T in ("f64", "f32") for d in ("laplace", "gaussian")]
    cases += [("int", d, "i32", float(s)) for d in ("laplace", "gaussian") for s in (1, 10, 1000)]
    recs: list[dict[str, Any]] = []
    for kind, dist, T, scale in cases:
        for n in sizes:
            rec = bench_case(kind, dist, T, scale, n, repeats if n < 10**7 else 3)
            print(json.dumps(rec), flush=True)
            recs.append(rec)
    for rec in bench_scalar(repeats):
        print(json.dumps(rec), flush=True)
        recs.append(rec)
    for how in ("sampler", "mechanism"):
        mem = rss_delta(10**7 if args.large else 10**6, how)
        print(json.dumps(mem), flush=True)
        recs.append(mem)
    meta["load_after"] = " ".join(f"{v:.2f}" for v in os.getloadavg())
    print(json.dumps({"meta": meta}), flush=True)
    if not args.no_write:
        RESULTS.mkdir(parents=True, exist_ok=True)
        with open(RESULTS / "bench_noise.jsonl", "w") as f:
            for rec in [*recs, {"meta": meta}]:
                f.write(json.dumps(rec) + "\n")
        (RESULTS / "bench_noise.md").write_text(table(recs, meta) + targets(recs))
        print(table(recs, meta) + targets(recs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
