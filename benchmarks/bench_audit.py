"""Audit every built-in mechanism and every broken control with opendp_lite.audit.

One JSON line per case: claimed ε, audited lower bound (95% confidence), samples per input,
the chosen event, sampling time and the auditor's own time.  Peers: no peer library ships an
auditor; for the cost of the samples, OpenDP 0.16's Laplace and numpy's are timed on the same
number of releases in the same run.

    python benchmarks/bench_audit.py [--samples 200000] [--big 1000000] \
        > benchmarks/results/bench_audit.jsonl
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

import opendp_lite.audit as audit
import opendp_lite.prelude as dp
from opendp_lite.measurements.threshold import l01inf_distance

F64 = (dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float))
I64 = (dp.atom_domain(T=int), dp.absolute_distance(T=int))
VI = dp.vector_domain(dp.atom_domain(T=int))
VF = dp.vector_domain(dp.atom_domain(T=float, nan=False))


def builtins() -> Iterator[tuple[str, Any, Any, Any, Any, dict[str, Any]]]:
    dp.enable_features("honest-but-curious")  # the exponential mechanism's scorer is user code
    m = dp.m
    yield "laplace_f64(scale=1)", m.make_laplace(*F64, 1.0), 0.0, 1.0, 1.0, {}
    yield "laplace_f64(scale=1,k=-2)", m.make_laplace(*F64, 1.0, k=-2), 0.1, 1.1, 1.0, {}
    yield "laplace_i64(scale=2)", m.make_laplace(*I64, 2.0), 0, 1, 1, {}
    yield "geometric(scale=1,bounds=(0,3))", m.make_geometric(*I64, 1.0, (0, 3)), 0, 1, 1, {}
    yield "gaussian_f64(scale=1)", m.make_gaussian(*F64, 1.0), 0.0, 1.0, 1.0, {"delta": 1e-6}
    yield "gaussian_i64(scale=1)", m.make_gaussian(*I64, 1.0), 0, 1, 1, {"delta": 1e-6}
    vec = m.make_laplace(VF, dp.l1_distance(T=float), 1.0) >> (lambda v: float(v[0]))
    yield "laplace_vec>>first", vec, [0.0, 5.0], [1.0, 5.0], 1.0, {}
    yield (
        "randomized_response_bool(0.75)",
        m.make_randomized_response_bool(0.75),
        True,
        False,
        1,
        {},
    )
    rr = m.make_randomized_response(["a", "b", "c"], 0.6)
    yield "randomized_response(3 cats,0.6)", rr, "a", "b", 1, {}
    yield "randomized_response_coins", m.make_randomized_response_coins(), True, False, 1, {}
    nm = m.make_noisy_max(VI, dp.linf_distance(T=int), dp.max_divergence(), 2.0)
    yield "noisy_max(scale=2)", nm, [1, 0, 0], [0, 0, 0], 1, {}
    gm = m.make_report_noisy_max_gumbel(VI, dp.linf_distance(T=int), 2.0)
    yield "report_noisy_max_gumbel(scale=2)", gm, [1, 0, 0], [0, 0, 0], 1, {}
    chain = (
        (dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance())
        >> dp.t.then_clamp((0.0, 10.0))
        >> dp.t.then_sum()
        >> dp.m.then_laplace(20.0)
    )
    yield "clamp>>sum>>laplace(scale=20)", chain, [0.0] * 4, [0.0] * 4 + [10.0], 1, {}
    yield (
        "canonical_noise(d_in=1,eps=1)",
        m.make_canonical_noise(*F64, 1.0, (1.0, 0.0)),
        0.0,
        1.0,
        1.0,
        {},
    )
    sd = dp.symmetric_distance()
    cands = [0.0, 0.25, 0.5, 0.75, 1.0]
    pq = m.make_private_quantile(VF, sd, dp.max_divergence(), cands, alpha=0.5, scale=2.0)
    data = [0.1, 0.2, 0.4, 0.6, 0.9]
    yield "private_quantile(median,scale=2)", pq, data, [*data, 0.95], 1, {}
    ex = m.make_exponential(VI, sd, range(5), _closeness, sensitivity=1, scale=2.0)
    yield "exponential(median score,scale=2)", ex, [0, 1, 2, 3, 4], [0, 1, 2, 3, 4, 4], 1, {}
    svt = m.make_sparse_vector(VI, sd, 1, 1, threshold=3, threshold_scale=2.0, query_scale=4.0)
    yield "sparse_vector>>one_query", svt >> (lambda q: q(_total())), [1, 1, 1], [1] * 4, 1, {}
    lt = m.make_laplace_threshold(
        dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int)),
        l01inf_distance(dp.absolute_distance(T=int)),
        scale=1.0,
        threshold=5,
    ) >> (lambda c: c.get("a", -1))
    yield "laplace_threshold>>count_a", lt, {"a": 6, "b": 20}, {"b": 20}, (1, 6, 6), {}


def _closeness(data: Any, c: int) -> float:
    return -abs(sum(1 for v in data if v <= c) - len(data) // 2)


def _total() -> Any:
    dp.enable_features("honest-but-curious")
    return dp.t.make_user_transformation(
        VI, dp.symmetric_distance(), dp.atom_domain(T=int), dp.absolute_distance(T=int),
        lambda v: int(v.sum()), lambda d: d,
    )  # fmt: skip


def broken() -> Iterator[tuple[str, Any, Any, Any, Any]]:
    dp.enable_features("honest-but-curious")
    mk = dp.m.make_user_measurement
    lap1 = dp.m.make_laplace(*F64, 1.0)
    half = dp.m.make_laplace(*F64, 0.5).function
    yield "BROKEN scale halved", mk(*F64, dp.max_divergence(), half, lap1.map), 0.0, 1.0, 1.0
    shrunk = dp.m.make_laplace(*F64, 0.7).function
    yield "BROKEN scale x0.7", mk(*F64, dp.max_divergence(), shrunk, lap1.map), 0.0, 1.0, 1.0
    gen = np.random.default_rng()  # the naive control (never in the package)
    naive = mk(*F64, dp.max_divergence(), lambda x: float(x + gen.laplace(0, 1.0)), lambda d: d)
    yield "BROKEN naive numpy float laplace", naive, 0.0, 1.0, 1.0
    understated = dp.t.make_user_transformation(
        dp.vector_domain(dp.atom_domain(bounds=(0.0, 10.0))),
        dp.symmetric_distance(),
        *F64,
        lambda v: float(np.sum(v)),
        lambda d: float(d),
    ) >> dp.m.make_laplace(*F64, 2.0)
    yield "BROKEN sum, sensitivity 1 (true 10)", understated, [0.0] * 4, [0.0] * 4 + [10.0], 1


def row(name: str, r: audit.AuditResult, **extra: Any) -> str:
    return json.dumps(
        {
            "case": name,
            "claimed_epsilon": r.claimed_epsilon,
            "delta": r.delta,
            "audited_epsilon_lower": round(r.epsilon_lower, 6),
            "confidence": r.confidence,
            "violated": r.violated,
            "samples_per_input": r.samples,
            "event": r.event,
            "sample_seconds": round(r.sample_seconds, 3),
            "audit_seconds": round(r.seconds - r.sample_seconds, 3),
            "total_seconds": round(r.seconds, 3),
            **extra,
        },
        ensure_ascii=False,
    )


def peers(n: int) -> Iterator[str]:
    t = time.perf_counter()
    np.random.default_rng().laplace(0.0, 1.0, size=2 * n)
    yield json.dumps({"case": "peer numpy laplace sampling", "samples_per_input": n,
                      "sample_seconds": round(time.perf_counter() - t, 3)})  # fmt: skip
    try:
        import opendp.prelude as odp
    except ImportError:  # pragma: no cover
        return
    odp.enable_features("contrib")
    lap = odp.m.make_laplace(
        odp.atom_domain(T=float, nan=False), odp.absolute_distance(T=float), 1.0
    )
    t = time.perf_counter()
    for _ in range(2 * n):
        lap(0.0)
    seconds = round(time.perf_counter() - t, 3)
    yield json.dumps({"case": "peer opendp 0.16 make_laplace sampling (scalar loop)",
                      "samples_per_input": n, "sample_seconds": seconds})  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=200_000)
    ap.add_argument("--big", type=int, default=1_000_000, help="samples for the 10^6 run")
    ap.add_argument("--match", default="", help="only cases whose name contains this")
    args = ap.parse_args()
    print(json.dumps({"case": "env", "python": sys.version.split()[0],
                      "machine": platform.machine(), "numpy": np.__version__}))  # fmt: skip
    for name, meas, x, xp, d_in, kw in builtins():
        if args.match not in name:
            continue
        r = audit.audit(meas, x, xp, d_in, samples=args.samples, confidence=0.95, **kw)
        print(row(name, r), flush=True)
    for name, meas, x, xp, d_in in broken():
        if args.match not in name:
            continue
        r = audit.audit(meas, x, xp, d_in, samples=args.samples, confidence=0.95)
        print(row(name, r), flush=True)
    if args.big:
        meas = dp.m.make_laplace(*F64, 1.0)
        r = audit.audit(meas, 0.0, 1.0, 1.0, samples=args.big, confidence=0.95)
        print(row("laplace_f64(scale=1) at 10^6", r), flush=True)
        for line in peers(args.big):
            print(line, flush=True)


if __name__ == "__main__":
    main()
