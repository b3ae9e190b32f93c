"""Time the exact scalar reference samplers against OpenDP 0.16 in the same process.

OpenDP 0.16 exposes no sampler functions to Python, so its samplers are timed through the
thinnest measurement that calls them (``make_laplace``/``make_gaussian`` on an atom domain,
and on a vector domain for per-element cost).  Ours are timed both as bare samplers and
through the same measurements.  One JSON line per case; times in microseconds per sample.

    python benchmarks/bench_samplers.py [--quick]
"""

from __future__ import annotations

import json
import platform
import sys
import time
from collections.abc import Callable
from fractions import Fraction

import numpy as np

import opendp_lite.prelude as lite
from opendp_lite.samplers.bernoulli import sample_bernoulli, sample_bernoulli_exp
from opendp_lite.samplers.discrete_gaussian import sample_discrete_gaussian
from opendp_lite.samplers.discrete_laplace import sample_discrete_laplace
from opendp_lite.samplers.noise_ref import float_noise_ref


def per_call_us(fn: Callable[[], object], budget_s: float) -> tuple[float, int]:
    """Mean microseconds per call of ``fn``, calling it for about ``budget_s`` seconds."""
    fn()  # warm up
    n, start = 0, time.perf_counter()
    while True:
        for _ in range(50):
            fn()
        n += 50
        elapsed = time.perf_counter() - start
        if elapsed >= budget_s:
            return 1e6 * elapsed / n, n


def main(argv: list[str]) -> None:
    budget = 0.3 if "--quick" in argv else 1.5
    vec_n = 1_000
    try:
        import opendp.prelude as odp

        odp.enable_features("contrib")
    except ImportError:  # pragma: no cover - the peer is a dev dependency
        odp = None

    def emit(case: str, ours: Callable[[], object], theirs: Callable[[], object] | None,
             per: int = 1) -> None:  # fmt: skip
        o_us, o_n = per_call_us(ours, budget)
        row: dict[str, object] = {
            "case": case,
            "ours_us_per_sample": round(o_us / per, 3),
            "ours_calls": o_n,
        }
        if theirs is not None:
            t_us, t_n = per_call_us(theirs, budget)
            row["opendp_us_per_sample"] = round(t_us / per, 3)
            row["opendp_calls"] = t_n
            row["ours_over_opendp"] = round(o_us / t_us, 2)
        row["python"] = platform.python_version()
        print(json.dumps(row), flush=True)

    def o_meas(make: str, T: str, scale: float, vector: bool = False):
        if odp is None:
            return None
        atom = odp.atom_domain(T=T, nan=False) if T.startswith("f") else odp.atom_domain(T=T)
        if vector:
            metric = odp.l1_distance if make == "make_laplace" else odp.l2_distance
            return getattr(odp.m, make)(odp.vector_domain(atom), metric(T=T), scale=scale)
        return getattr(odp.m, make)(atom, odp.absolute_distance(T=T), scale=scale)

    def l_meas(make: str, T: str, scale: float, vector: bool = False):
        atom = lite.atom_domain(T=T, nan=False)
        if vector:
            metric = lite.l1_distance if make == "make_laplace" else lite.l2_distance
            return getattr(lite.m, make)(lite.vector_domain(atom), metric(T=T), scale=scale)
        return getattr(lite.m, make)(atom, lite.absolute_distance(T=T), scale=scale)

    emit("bernoulli(1/3)", lambda: sample_bernoulli(Fraction(1, 3)), None)
    emit("bernoulli_exp(1.7)", lambda: sample_bernoulli_exp(Fraction(17, 10)), None)

    for scale in (1.0, 100.0):
        o = o_meas("make_laplace", "i64", scale)
        emit(
            f"discrete_laplace(scale={scale}) sampler vs opendp make_laplace(i64) invoke",
            lambda s=scale: sample_discrete_laplace(s),
            (lambda o=o: o(0)) if o is not None else None,
        )
        o = o_meas("make_gaussian", "i64", scale)
        emit(
            f"discrete_gaussian(scale={scale}) sampler vs opendp make_gaussian(i64) invoke",
            lambda s=scale: sample_discrete_gaussian(s),
            (lambda o=o: o(0)) if o is not None else None,
        )

    for make, dist in (("make_laplace", "laplace"), ("make_gaussian", "gaussian")):
        o = o_meas(make, "f64", 1.0)
        emit(
            f"float_noise_ref({dist}, k=-1074) vs opendp {make}(f64) invoke",
            lambda d=dist: float_noise_ref(0.0, 1.0, -1074, d, "f64"),  # type: ignore[arg-type]
            (lambda o=o: o(0.0)) if o is not None else None,
        )
        lm = l_meas(make, "f64", 1.0)
        emit(f"{make}(f64) invoke, both libraries", lambda m=lm: m(0.0),
             (lambda o=o: o(0.0)) if o is not None else None)  # fmt: skip
        for T in ("i32", "f64"):
            lm = l_meas(make, T, 1.0, vector=True)
            o = o_meas(make, T, 1.0, vector=True)
            x = np.zeros(vec_n, dtype=np.int32 if T == "i32" else np.float64)
            xl = x.tolist()
            emit(
                f"{make}(Vec<{T}>, n={vec_n}) invoke, per element",
                lambda m=lm, x=x: m(x),
                (lambda o=o, xl=xl: o(xl)) if o is not None else None,
                per=vec_n,
            )


if __name__ == "__main__":
    main(sys.argv[1:])
