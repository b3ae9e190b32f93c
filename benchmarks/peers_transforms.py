"""Peer matrix for the transformations of issue 16: histograms, casts, clamp + sum, quantile.

Each case is timed against its peers in the same process, interleaved (ours, then each peer,
for ``ROUNDS`` rounds), and reported as medians with the ratio ``peer_s / ours_s`` (> 1: we
are faster).  Peers: numpy (the plain computation without any DP bookkeeping), OpenDP 0.16
(the same transformation or measurement) and diffprivlib (its ``tools``; where a peer has
only a DP release, we time our DP release of the same statistic).  Each library gets its
natural input, prepared outside the timing: a numpy array for us, numpy and diffprivlib, a
Python list for OpenDP (which copies its input into Rust).

Cases (``case`` field):

* ``count_by_categories``: 10 integer categories 0..9 (values 0..11, so some are "other"),
  i64 data; peers ``np.bincount``, ``np.unique``, OpenDP ``make_count_by_categories``.
* ``count_by``: the same data, every distinct value; peers ``np.unique(return_counts)``,
  OpenDP ``make_count_by`` (hash counting in Rust).
* ``str_count_by_categories``: the same data as 12 strings, 10 of them categories; peers
  pandas ``value_counts`` (a Series of its inferred string dtype) and OpenDP
  ``make_count_by_categories``.
* ``histogram_dp``: ``count_by_categories >> laplace`` vs diffprivlib ``tools.histogram``.
* ``cast_chain``: strings of integers, ``cast_default(int) >> clamp >> sum >> laplace``
  (5 steps with the input space) vs OpenDP's same chain, and numpy ``astype(int64)``,
  clip, sum.
* ``clamp_sum``: float64, ``clamp((0, 1)) >> sum`` vs ``np.clip(x, 0, 1).sum()`` and OpenDP
  ``clamp >> sum``; ``peak_ours_mib``/``peak_peer_mib`` are tracemalloc peaks of one call.
* ``clamp_sum_dp``: ``clamp >> sum >> laplace`` vs diffprivlib ``tools.sum``.
* ``quantile``: private median over 101 candidates (exponential-noise selection) vs OpenDP
  ``make_private_quantile``, diffprivlib ``tools.quantile`` and ``np.quantile``.

Sizes 1, 10, 10^3, 10^6 (and 10^7 with ``--large``).  One JSON line per (case, size, peer)
on stdout, also written to ``benchmarks/results/peers_transforms.jsonl``.

diffprivlib 0.6.6 does not import with scikit-learn 1.9 (its ``models`` package reads
``sklearn.tree._tree.DOUBLE``, which scikit-learn removed); only ``diffprivlib.tools`` is used
here, so ``diffprivlib.models`` is replaced by an empty module before the import.

    python benchmarks/peers_transforms.py [--large] [--rounds 5]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
import tracemalloc
import types
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "benchmarks" / "results" / "peers_transforms.jsonl"

import opendp_lite.prelude as dl  # noqa: E402

try:
    import opendp.prelude as odp

    odp.enable_features("contrib")
except ImportError:  # pragma: no cover - the dev extras install it
    odp = None

try:
    sys.modules.setdefault("diffprivlib.models", types.ModuleType("diffprivlib.models"))
    from diffprivlib import tools as dpl
except ImportError:  # pragma: no cover
    dpl = None

try:
    import pandas as pd
except ImportError:  # pragma: no cover - the frames extra installs it
    pd = None

CATS = list(range(10))


def _calls(fn: Callable[[], Any], n: int, target: float = 5e-3) -> int:
    """How many calls make one timed sample of at least ``target`` seconds (small sizes; the
    fastest of three calibration calls, so a load spike does not leave one call per sample)."""
    if n >= 10**5:
        return 1
    once = []
    for _ in range(3):
        t = time.perf_counter()
        fn()
        once.append(time.perf_counter() - t)
    return max(1, min(20_000, int(target / max(min(once), 1e-7))))


def _median_times(fns: dict[str, Callable[[], Any]], n: int, rounds: int) -> dict[str, float]:
    """Per-call median seconds of each function, timed interleaved round by round."""
    reps = {k: _calls(f, n) for k, f in fns.items()}
    samples: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            r = reps[k]
            t = time.perf_counter()
            for _ in range(r):
                f()
            samples[k].append((time.perf_counter() - t) / r)
    return {k: statistics.median(v) for k, v in samples.items()}


def _peak_mib(fn: Callable[[], Any]) -> float:
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def _rows(
    case: str,
    n: int,
    ours: Callable[[], Any],
    peers: dict[str, Callable[[], Any]],
    rounds: int,
    memory: bool = False,
) -> list[dict[str, Any]]:
    times = _median_times({"ours": ours, **peers}, n, rounds)
    peak_ours = _peak_mib(ours) if memory else None
    out = []
    for peer in peers:
        row: dict[str, Any] = {
            "bench": "peers_transforms",
            "case": case,
            "n": n,
            "ours_s": times["ours"],
            "peer": peer,
            "peer_s": times[peer],
            "ratio_peer_over_ours": round(times[peer] / times["ours"], 3),
            "rounds": rounds,
        }
        if memory:  # tracemalloc sees numpy's and Python's allocations, not Rust's (OpenDP)
            row["peak_ours_mib"] = round(peak_ours or 0.0, 2)
            if peer != "opendp":
                row["peak_peer_mib"] = round(_peak_mib(peers[peer]), 2)
        out.append(row)
    return out


def _opendp(build: Callable[[], Any]) -> Any:
    if odp is None:
        return None
    try:
        return build()
    except Exception as e:  # report and skip a peer that cannot be built
        print(f"# OpenDP peer skipped: {e}", file=sys.stderr)
        return None


def cases(n: int, rounds: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(n)
    rows: list[dict[str, Any]] = []
    sym = dl.symmetric_distance()

    # -- histograms ---------------------------------------------------------------------------
    x = rng.integers(0, 12, n)
    xl = x.tolist()
    ispace = dl.vector_domain(dl.atom_domain(T="i64")), sym
    by_cat = ispace >> dl.t.then_count_by_categories(CATS, TOA="i64")
    by = ispace >> dl.t.then_count_by(TV="i64")
    o_space = _opendp(
        lambda: (odp.vector_domain(odp.atom_domain(T="i64")), odp.symmetric_distance())
    )
    peers: dict[str, Callable[[], Any]] = {
        "numpy.bincount": lambda: np.bincount(x, minlength=12),
        "numpy.unique": lambda: np.unique(x, return_counts=True),
    }
    o_cat = _opendp(lambda: o_space >> odp.t.then_count_by_categories(CATS, TOA="i64"))
    if o_cat is not None:
        peers["opendp"] = lambda: o_cat(xl)
    assert by_cat(x).tolist()[:10] == np.bincount(x, minlength=12)[:10].tolist()
    rows += _rows("count_by_categories", n, lambda: by_cat(x), peers, rounds)
    peers = {"numpy.unique": lambda: np.unique(x, return_counts=True)}
    o_by = _opendp(lambda: o_space >> odp.t.then_count_by(TV="i64"))
    if o_by is not None:
        peers["opendp"] = lambda: o_by(xl)
    rows += _rows("count_by", n, lambda: by(x), peers, rounds)
    if dpl is not None:
        hist_dp = by_cat >> dl.m.then_laplace(1.0)
        peers = {
            "diffprivlib": lambda: dpl.histogram(x, bins=12, range=(0, 12), epsilon=1.0),
        }
        rows += _rows("histogram_dp", n, lambda: hist_dp(x), peers, rounds)

    # -- a string histogram (known categories) -------------------------------------------------
    scats = [f"cat{i}" for i in range(10)]
    sx = [scats[v] if v < 10 else f"other{v}" for v in x.tolist()]
    sspace0 = dl.vector_domain(dl.atom_domain(T=str)), sym
    s_by_cat = sspace0 >> dl.t.then_count_by_categories(scats, TOA="i64")
    peers = {}
    if pd is not None:
        s_series = pd.Series(sx)  # pandas infers its string dtype (Arrow-backed in pandas 3)
        peers["pandas.value_counts"] = lambda: s_series.value_counts()
    o_scat = _opendp(
        lambda: (odp.vector_domain(odp.atom_domain(T=str)), odp.symmetric_distance())
        >> odp.t.then_count_by_categories(scats, TOA="i64")
    )
    if o_scat is not None:
        peers["opendp"] = lambda: o_scat(sx)
    rows += _rows("str_count_by_categories", n, lambda: s_by_cat(sx), peers, rounds)

    # -- cast chain on strings ----------------------------------------------------------------
    strs = [str(v) for v in rng.integers(0, 150, n).tolist()]
    sarr = np.asarray(strs)
    sspace = dl.vector_domain(dl.atom_domain(T=str)), sym
    chain = (
        sspace
        >> dl.t.then_cast_default(int)
        >> dl.t.then_clamp((0, 100))
        >> dl.t.then_sum()
        >> dl.m.then_laplace(100.0)
    )
    peers = {"numpy": lambda: int(np.clip(sarr.astype(np.int64), 0, 100).sum())}
    o_chain = _opendp(
        lambda: (
            (odp.vector_domain(odp.atom_domain(T=str)), odp.symmetric_distance())
            >> odp.t.then_cast_default(int)
            >> odp.t.then_clamp((0, 100))
            >> odp.t.then_sum()
            >> odp.m.then_laplace(100.0)
        )
    )
    if o_chain is not None:
        peers["opendp"] = lambda: o_chain(strs)
    rows += _rows("cast_chain", n, lambda: chain(strs), peers, rounds)

    # -- clamp + sum --------------------------------------------------------------------------
    xf = rng.uniform(-0.5, 1.5, n)
    xfl = xf.tolist()
    fspace = dl.vector_domain(dl.atom_domain(T=float, nan=False)), sym
    clamp_sum = fspace >> dl.t.then_clamp((0.0, 1.0)) >> dl.t.then_sum()
    peers = {"numpy": lambda: float(np.clip(xf, 0.0, 1.0).sum())}
    o_sum = _opendp(
        lambda: (
            (odp.vector_domain(odp.atom_domain(T=float, nan=False)), odp.symmetric_distance())
            >> odp.t.then_clamp((0.0, 1.0))
            >> odp.t.then_sum()
        )
    )
    if o_sum is not None:
        peers["opendp"] = lambda: o_sum(xfl)
    rows += _rows("clamp_sum", n, lambda: clamp_sum(xf), peers, rounds, memory=True)
    if dpl is not None:
        sum_dp = clamp_sum >> dl.m.then_laplace(1.0)
        peers = {"diffprivlib": lambda: dpl.sum(xf, epsilon=1.0, bounds=(0.0, 1.0))}
        rows += _rows("clamp_sum_dp", n, lambda: sum_dp(xf), peers, rounds, memory=True)

    # -- quantile -----------------------------------------------------------------------------
    xq = rng.uniform(0.0, 100.0, n)
    xql = xq.tolist()
    cands = [float(c) for c in range(101)]
    median = dl.m.make_private_quantile(*fspace, dl.max_divergence(), cands, 0.5, 1.0)
    peers = {"numpy.quantile": lambda: np.quantile(xq, 0.5)}
    o_q = _opendp(
        lambda: odp.m.make_private_quantile(
            odp.vector_domain(odp.atom_domain(T=float, nan=False)),
            odp.symmetric_distance(),
            odp.max_divergence(),
            cands,
            0.5,
            1.0,
        )
    )
    if o_q is not None:
        peers["opendp"] = lambda: o_q(xql)
    if dpl is not None:
        peers["diffprivlib"] = lambda: dpl.quantile(xq, 0.5, epsilon=1.0, bounds=(0.0, 100.0))
    rows += _rows("quantile", n, lambda: median(xq), peers, rounds)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--large", action="store_true", help="also n = 10^7")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (median)")
    ap.add_argument("--no-save", action="store_true", help="do not write benchmarks/results")
    ap.add_argument("--sizes", help="comma-separated sizes instead of 1,10,1000,10^6[,10^7]")
    args = ap.parse_args()
    sizes = [1, 10, 10**3, 10**6] + ([10**7] if args.large else [])
    if args.sizes:
        sizes = [int(float(v)) for v in args.sizes.split(",")]
    warnings.simplefilter("ignore")  # diffprivlib's privacy-leak warnings, OpenDP's notices
    rows = []
    load = os.getloadavg()
    for n in sizes:
        for row in cases(n, args.rounds):
            row["load"] = [round(v, 2) for v in load]
            print(json.dumps(row), flush=True)
            rows.append(row)
    if not args.no_save:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        with RESULTS.open("w") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
