"""Mutation check for the proof pins: a fixed set of map-breaking edits, each of which must
flag at least one proof (``python -m tools.proofs check`` would fail until it is restamped).

Usage::

    python -m tools.mutations            apply every edit in memory and run the pin check on it
                                         (about a second per edit); exit 1 if an edit's anchor
                                         is gone, if fewer than 95% of the edits flag a proof,
                                         or if an edit that flags none does not name the test
                                         that catches it instead
    python -m tools.mutations --list     list the edits
    python -m tools.mutations --tests    also run each edit's targeted tests in a temporary
                                         copy of the repository (slow: minutes per edit) and
                                         report the kill rate by tests
    python -m tools.mutations --tests ID...   the same, for the named edits only

Each edit replaces one *anchor* (a piece of source text that must occur exactly once in its
file) by broken text: a map that understates the loss, a law that is no longer the proved one,
a domain check that lets more in.  An anchor that no longer matches is reported as an error
(the edit must be updated with the code), never skipped.  The pin check runs
:func:`tools.proofs.status` with the edited text substituted in memory (nothing is written).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tools import proofs
from tools.pins import ROOT


@dataclass(frozen=True)
class Mutation:
    id: str
    family: str
    path: str  # repo-relative
    anchor: str
    replacement: str
    what: str
    #: for an edit no proof pins (code outside every constructor, e.g. a convenience function
    #: with no proof of its own): the test that catches it instead
    test: str | None = None

    def unit(self) -> str:
        """The qualname of the innermost pinnable unit the anchor lies in (a doc: its path)."""
        if not self.path.endswith(".py"):
            return self.path
        text = (ROOT / self.path).read_text(encoding="utf-8")
        line = text[: text.index(self.anchor)].count("\n") + 1
        spans = [
            (u.end_lineno - u.lineno, q)
            for q, u in proofs.index().units.items()
            if u.path == self.path and u.lineno <= line <= u.end_lineno
        ]
        return min(spans)[1] if spans else f"{self.path}:{line}"

    @property
    def in_helper(self) -> bool:
        """Whether the edited code is package code outside every ``make_*`` function's body."""
        return self.path.endswith(".py") and not self.unit().rsplit(".", 1)[1].startswith("make_")


P = "opendp_lite/"
NOISE = P + "measurements/noise.py"
SUM = P + "transformations/sum.py"
AGG = P + "transformations/_aggregate.py"
COUNT = P + "transformations/count.py"
COMP = P + "combinators/composition.py"
CONV = P + "combinators/conversions.py"
THR = P + "measurements/threshold.py"
NMAX = P + "measurements/noisy_max.py"
PART = P + "transformations/partition.py"
GROUP = P + "combinators/grouped.py"
AMP = P + "combinators/amplification.py"
MOM = P + "transformations/moments.py"
RR = P + "measurements/randomized_response.py"
ARITH = P + "_arith.py"
SAMP = P + "samplers/"

MUTATIONS: list[Mutation] = [
    # -- the three audit edits (issue 22) -------------------------------------------------------
    Mutation(
        "audit-float-sum-relax",
        "sums",
        SUM,
        "return ar.up(d_in * sens + plan.relax)",
        "return ar.up(d_in * sens)",
        "_float_sum: unsized map drops the float rounding term",
    ),
    Mutation(
        "audit-int-sum-quarter",
        "sums",
        SUM,
        "            return (d_in // 2) * width\n",
        "            return (d_in // 4) * width\n",
        "_int_sum: sized map floor(d/4)·(U−L)",
    ),
    Mutation(
        "audit-rounding-penalty-0",
        "noise",
        NOISE,
        "    per = q(2) ** k - q(2) ** _k_min(sp.T)\n",
        "    return q(0)\n",
        "noise._rounding_penalty returns 0",
    ),
    # -- noise ----------------------------------------------------------------------------------
    Mutation(
        "laplace-half",
        "noise",
        NOISE,
        "_round_up(d / s, QO)",
        "_round_up(d / s / 2, QO)",
        "noise._laplace: ε halved",
    ),
    Mutation(
        "gaussian-quarter",
        "noise",
        NOISE,
        "d * d / (2 * s * s)",
        "d * d / (4 * s * s)",
        "noise._gaussian: ρ halved",
    ),
    Mutation(
        "round-up-f32-down",
        "noise",
        NOISE,
        "v = np.nextafter(v, np.float32(np.inf))",
        "v = np.nextafter(v, np.float32(-np.inf))",
        "noise._round_up: f32 rounded down",
    ),
    Mutation(
        "penalty-per-coordinate",
        "noise",
        NOISE,
        "        return per * n\n",
        "        return per\n",
        "noise._rounding_penalty: L1 penalty not multiplied by n",
    ),
    Mutation(
        "k-below-min",
        "noise",
        NOISE,
        "if not kmin <= k <= _K_MAX[sp.T]:",
        "if not kmin - 5 <= k <= _K_MAX[sp.T]:",
        "noise._k: accepts k below k_min",
    ),
    # -- sums -----------------------------------------------------------------------------------
    Mutation(
        "plan-relax-half",
        "sums",
        SUM,
        "else 2 * rounding_error(c, T, tiny)",
        "else rounding_error(c, T, tiny)",
        "FloatSumPlan.__init__: relaxation halved",
    ),
    Mutation(
        "int-sum-mag-hi",
        "sums",
        SUM,
        "    mag = max(abs(lo), abs(hi))\n    if mode",
        "    mag = hi\n    if mode",
        "_int_sum: sensitivity max(|L|,|U|) -> U",
    ),
    Mutation(
        "plan-c-int",
        "sums",
        SUM,
        "self.c_int = limit * max(abs(self.k_lo), abs(self.k_hi))",
        "self.c_int = limit * abs(self.k_hi)",
        "FloatSumPlan.__init__: saturation bound",
    ),
    Mutation(
        "float-sum-sized-width",
        "sums",
        SUM,
        "width = plan.scaled(plan.k_hi - plan.k_lo)",
        "width = plan.scaled(plan.k_hi)",
        "_float_sum: sized width U instead of U−L",
    ),
    Mutation(
        "rounding-error-f64",
        "sums",
        AGG,
        "e64 = ar.q(magnitude) * two**-53 + sub64",
        "e64 = ar.q(magnitude) * two**-54 + sub64",
        "_aggregate.rounding_error: f64 term halved",
    ),
    Mutation(
        "rounding-error-f32",
        "sums",
        AGG,
        "(ar.q(magnitude) + e64) * two**-24 + sub32",
        "(ar.q(magnitude) + e64) * two**-25 + sub32",
        "_aggregate.rounding_error: f32 term halved",
    ),
    Mutation(
        "int-range-wide",
        "sums",
        AGG,
        "    return int_bounds(T)\n",
        "    return int_bounds(T)[0], int_bounds(T)[1] * 2\n",
        "_aggregate.int_range: saturation above the carrier",
    ),
    Mutation(
        "float-max-wide",
        "sums",
        AGG,
        'np.float32 if T == "f32" else np.float64).max)',
        'np.float32 if T == "f32" else np.float64).max) * 4',
        "_aggregate.float_max: overflow check weakened",
    ),
    Mutation(
        "exact-int-sum-shift",
        "sums",
        AGG,
        "return (_sum_narrow(hi) << 32) + _sum_narrow(lo)",
        "return (_sum_narrow(hi) << 31) + _sum_narrow(lo)",
        "_aggregate._exact_int_sum_np: wrong 64-bit split",
    ),
    # -- counts ---------------------------------------------------------------------------------
    Mutation(
        "count-no-saturation",
        "counts",
        COUNT,
        "    return lambda n: min(n, top)\n",
        "    return lambda n: n\n",
        "count._saturating: no saturation",
    ),
    Mutation(
        "count-identity-half",
        "counts",
        COUNT,
        "    return lambda d_in: d_in\n",
        "    return lambda d_in: d_in // 2\n",
        "count._identity_map: d_in // 2",
    ),
    Mutation(
        "count-by-triple",
        "counts",
        COUNT,
        "lambda d_in: (d_in, one(d_in), one(d_in))",
        "lambda d_in: (d_in // 2, one(d_in), one(d_in))",
        "count._triple_map: l0 halved",
    ),
    Mutation(
        "count-max-wide",
        "counts",
        COUNT,
        "else int_bounds(T)[1]",
        "else int_bounds(T)[1] * 2",
        "count._count_max above the carrier",
    ),
    # -- composition ----------------------------------------------------------------------------
    Mutation(
        "compose-max",
        "composition",
        COMP,
        "        return _arith.add_up(0, *losses)\n",
        "        return max(losses)\n",
        "composition: pure losses maxed, not added",
    ),
    Mutation(
        "compose-delta-max",
        "composition",
        COMP,
        "min(1.0, _arith.add_up(0, *(loss[1] for loss in losses)))",
        "min(1.0, max(loss[1] for loss in losses))",
        "composition: δ maxed, not added",
    ),
    Mutation(
        "odometer-eps-max",
        "composition",
        COMP,
        "            self.eps += _arith.q(loss[0])\n",
        "            self.eps = max(self.eps, _arith.q(loss[0]))\n",
        "composition odometer: ε not accumulated",
    ),
    Mutation(
        "compose-renyi-max",
        "composition",
        COMP,
        "_arith.add_up(0, *(curve(alpha) for curve in curves))",
        "max(curve(alpha) for curve in curves)",
        "composition: Rényi curves maxed",
    ),
    # -- conversions ----------------------------------------------------------------------------
    Mutation(
        "pure-to-zcdp-quarter",
        "conversions",
        CONV,
        "return _arith.up(eps * eps / 2)",
        "return _arith.up(eps * eps / 4)",
        "conversions: ρ = ε²/4",
    ),
    Mutation(
        "zcdp-log-term",
        "conversions",
        CONV,
        "log_term = _arith.q(_arith.log_up(1 - 1 / a))",
        "log_term = _arith.q(_arith.log_up(1 - 1 / a)) - 1",
        "conversions: δ(ε) too small",
    ),
    Mutation(
        "zcdp-exponent",
        "conversions",
        CONV,
        "exponent = (a - 1) * (a * r - e) + a * log_term",
        "exponent = (a - 1) * (a * r - e) + 2 * a * log_term",
        "conversions: exponent",
    ),
    Mutation(
        "fix-delta-full",
        "conversions",
        CONV,
        "_arith.down(_arith.q(delta) - _arith.q(delta_0))",
        "_arith.down(_arith.q(delta))",
        "conversions: fix_delta ignores δ₀",
    ),
    # -- thresholds -----------------------------------------------------------------------------
    Mutation(
        "laplace-tail",
        "thresholds",
        THR,
        "num = exp_up(q(-m) / q(scale))",
        "num = exp_up(q(-m - 1) / q(scale))",
        "threshold.laplace_tail_up: tail understated",
    ),
    Mutation(
        "gaussian-tail",
        "thresholds",
        THR,
        "* s2 / (width + 2 * k)",
        "* s2 / (2 * (width + 2 * k))",
        "threshold.gaussian_tail_up: tail halved",
    ),
    Mutation(
        "threshold-eps-l1",
        "thresholds",
        THR,
        "eps = up(min(q(l1) + q(l0) * pen, q(l0) * (linf_eff + pen)) / q(s))",
        "eps = up(min(q(l1), q(l0) * (linf_eff + pen)) / q(s))",
        "make_laplace_threshold: penalty dropped from the l1 branch",
    ),
    # -- selection ------------------------------------------------------------------------------
    Mutation(
        "noisy-max-k",
        "selection",
        NMAX,
        "else up(k * eps)",
        "else up(eps)",
        "noisy_max: ε not multiplied by k",
    ),
    Mutation(
        "noisy-max-factor",
        "selection",
        NMAX,
        "eps = q(d_in) * factor / s",
        "eps = q(d_in) / s",
        "noisy_max: monotonicity factor",
    ),
    Mutation(
        "exponential-c",
        "selection",
        P + "measurements/exponential.py",
        "return up(q(c) * q(delta_u) * q(d_in) / s_q)",
        "return up(q(delta_u) * q(d_in) / s_q)",
        "make_exponential: factor c dropped",
    ),
    Mutation(
        "quantile-eps-2",
        "selection",
        P + "measurements/quantile.py",
        "eps = 2 * q(delta) / q(s)",
        "eps = q(delta) / q(s)",
        "private quantile: ε halved",
    ),
    Mutation(
        "quantile-per-unit",
        "selection",
        P + "measurements/quantile.py",
        "per_unit = q(1) if sized else max(a, 1 - a)",
        "per_unit = q(1) if sized else min(a, 1 - a)",
        "private quantile: per-record score change",
    ),
    Mutation(
        "score-candidates-per",
        "selection",
        P + "transformations/quantile.py",
        "            return d_in * per\n",
        "            return d_in\n",
        "quantile score candidates: unsized map",
    ),
    # -- partition / grouped --------------------------------------------------------------------
    Mutation(
        "partition-linf",
        "partition",
        PART,
        "return d_in * l0, d_in * l1, d_in * li",
        "return d_in * l0, d_in * l1, li",
        "partition: l∞ not multiplied by d_in",
    ),
    Mutation(
        "partition-reach",
        "partition",
        PART,
        "return ar.q(min(l1, l0 * li))",
        "return ar.q(min(l1, l0))",
        "partition._reach: L1",
    ),
    Mutation(
        "grouped-eps",
        "partition",
        GROUP,
        "return ar.mul_up(g, eps), min(1.0, ar.mul_up(g, delta))",
        "return eps, min(1.0, ar.mul_up(g, delta))",
        "grouped: ε not multiplied by groups",
    ),
    Mutation(
        "grouped-pure",
        "partition",
        GROUP,
        "return min(ar.mul_up(g, inner.map(li)), ar.mul_up(l1, inner.map(1)))",
        "return inner.map(li)",
        "grouped: pure map",
    ),
    Mutation(
        "grouped-scale",
        "partition",
        GROUP,
        "scale = ar.div_up(t.map(1), eps)",
        "scale = ar.div_up(t.map(1), 2 * eps)",
        "grouped._laplace_per_group (grouped_count/sum/mean, no proof): scale halved",
        test="tests/combinators/test_grouped_stat.py::test_grouped_count_is_discrete_laplace_per_group",
    ),
    # -- sampling amplification -----------------------------------------------------------------
    Mutation(
        "amplify-eps",
        "amplification",
        AMP,
        "_arith.log1p_up(hit * _arith.q(growth))",
        "_arith.log1p_up(hit * hit * _arith.q(growth))",
        "amplification: ε amplified by hit²",
    ),
    Mutation(
        "amplify-delta",
        "amplification",
        AMP,
        "_arith.up(hit * _arith.q(delta))",
        "_arith.up(hit * hit * _arith.q(delta))",
        "amplification: δ amplified by hit²",
    ),
    # -- moments, randomized response, other maps -----------------------------------------------
    Mutation(
        "mean-width",
        "moments",
        MOM,
        "return ar.up((d_in // 2) * width / n + relax)",
        "return ar.up((d_in // 2) * width / (2 * n) + relax)",
        "moments: mean map halved",
    ),
    Mutation(
        "variance-sens",
        "moments",
        MOM,
        "sens = width * width * (n - 1) / n / denom",
        "sens = width * width * (n - 2) / n / denom",
        "moments: variance sensitivity",
    ),
    Mutation(
        "rr-k",
        "randomized_response",
        RR,
        "epsilon = _log_ratio_up(p * (k - 1), 1 - p)",
        "epsilon = _log_ratio_up(p, 1 - p)",
        "make_randomized_response: ε without k − 1",
    ),
    Mutation(
        "rr-log-ratio",
        "randomized_response",
        RR,
        "return log1p_up(q(num) / q(den) - 1)",
        "return log1p_up(q(num) / q(den) - 2)",
        "randomized_response._log_ratio_up understated",
    ),
    Mutation(
        "rr-bitvec-weight",
        "randomized_response",
        RR,
        "epsilon = mul_up(2 * max_weight, per_bit)",
        "epsilon = mul_up(max_weight, per_bit)",
        "make_randomized_response_bitvec: factor 2",
    ),
    Mutation(
        "resize-map",
        "resize",
        P + "transformations/resize.py",
        "lambda d_in: 2 * d_in",
        "lambda d_in: d_in",
        "make_resize: map d_in, not 2·d_in",
    ),
    Mutation(
        "lipschitz-relax",
        "lipschitz",
        P + "transformations/lipschitz.py",
        "return ar.up(qc * ar.q(d_in) + relax)",
        "return ar.up(qc * ar.q(d_in))",
        "make_lipschitz_float_mul: rounding dropped",
    ),
    Mutation(
        "sparse-vector-threshold",
        "selection",
        P + "measurements/sparse_vector.py",
        "return up(q(delta) / q(b_t) + q(factor * c * delta) / q(b_q))",
        "return up(q(factor * c * delta) / q(b_q))",
        "make_sparse_vector: threshold term",
    ),
    # -- samplers (the law) ---------------------------------------------------------------------
    Mutation(
        "dlap-zero-twice",
        "samplers",
        SAMP + "discrete_laplace.py",
        "if negative and y == 0:",
        "if False:",
        "sample_discrete_laplace: 0 drawn twice as often",
    ),
    Mutation(
        "dgauss-accept",
        "samplers",
        SAMP + "discrete_gaussian.py",
        "if sample_bernoulli_exp(d * d / two_sigma2):",
        "if sample_bernoulli_exp(d * d / sigma2):",
        "sample_discrete_gaussian: acceptance probability",
    ),
    Mutation(
        "bernoulli-exp-parity",
        "samplers",
        SAMP + "bernoulli.py",
        "return k % 2 == 1",
        "return k % 2 == 0",
        "bernoulli._bernoulli_exp_le1: parity",
    ),
    Mutation(
        "bernoulli-le",
        "samplers",
        SAMP + "bernoulli.py",
        "return bool(u < digit)",
        "return bool(u <= digit)",
        "sample_bernoulli: U <= p",
    ),
    Mutation(
        "sample-round-floor",
        "samplers",
        SAMP + "bernoulli.py",
        "return floor + int(sample_bernoulli(y - floor))",
        "return floor",
        "sample_round: always rounds down",
    ),
    Mutation(
        "fast-plan-gauss",
        "samplers",
        SAMP + "fast/plan.py",
        "T, center, two_sigma2 = t, s * s / t, 2 * s * s",
        "T, center, two_sigma2 = t, s * s / t, s * s",
        "fast.plan._plan: Gaussian variance halved",
    ),
    # -- _arith ---------------------------------------------------------------------------------
    Mutation(
        "arith-up-down",
        "_arith",
        ARITH,
        "    return _round(_UP, x)\n",
        "    return _round(_DOWN, x)\n",
        "_arith.up rounds down",
    ),
    Mutation(
        "arith-add-up",
        "_arith",
        ARITH,
        "return up(sum((q(x) for x in xs), gmpy2.mpq(0)))",
        "return down(sum((q(x) for x in xs), gmpy2.mpq(0)))",
        "_arith.add_up rounds down",
    ),
    Mutation(
        "arith-div-up",
        "_arith",
        ARITH,
        "    return up(q(a) / q(b))\n",
        "    return down(q(a) / q(b))\n",
        "_arith.div_up rounds down",
    ),
    Mutation(
        "arith-nearest",
        "_arith",
        ARITH,
        "_UP.round = gmpy2.RoundUp",
        "_UP.round = gmpy2.RoundToNearest",
        "_arith._UP rounds to nearest",
    ),
    # -- proofs the constructors' proofs cite ---------------------------------------------------
    Mutation(
        "lemma-row-by-row",
        "docs",
        "docs/proofs/lemmas/row-by-row.md",
        "turns each added (removed) record",
        "turns each added record",
        "lemma row-by-row: argument weakened",
    ),
    Mutation(
        "sampler-proof",
        "docs",
        "docs/proofs/samplers.md",
        "so `Pr[True] = p` exactly",
        "so `Pr[True] ≈ p`",
        "samplers.md: Bernoulli claim",
    ),
]


#: the share of edits the proof pins alone must catch
THRESHOLD = 0.95


class AnchorError(Exception):
    """An edit's anchor does not occur exactly once in its file."""


def apply(m: Mutation) -> str:
    """The text of ``m.path`` with the edit applied."""
    text = (ROOT / m.path).read_text(encoding="utf-8")
    n = text.count(m.anchor)
    if n != 1:
        raise AnchorError(f"{m.id}: its anchor occurs {n} times in {m.path}: {m.anchor!r}")
    return text.replace(m.anchor, m.replacement)


def flagged_by(m: Mutation) -> list[str]:
    """The proofs the pin check flags once ``m`` is applied (in memory)."""
    new = apply(m)
    if m.path.endswith(".py"):
        compile(new, m.path, "exec")
    with proofs.overridden({m.path: new}):
        return [name for name in sorted(proofs._constructors()) if not proofs.status(name).ok]


#: tests that exercise each family's maps and laws (besides tests/laws)
TESTS: dict[str, list[str]] = {
    "noise": ["tests/measurements/test_noise.py"],
    "sums": ["tests/transformations/test_sum.py", "tests/transformations/test_aggregate_lazy.py"],
    "counts": ["tests/transformations/test_count.py"],
    "composition": ["tests/combinators/test_composition.py"],
    "conversions": ["tests/combinators/test_conversions.py"],
    "thresholds": ["tests/measurements/test_threshold.py"],
    "selection": [
        "tests/measurements/test_noisy_max.py",
        "tests/measurements/test_exponential.py",
        "tests/measurements/test_quantile.py",
        "tests/measurements/test_sparse_vector.py",
        "tests/transformations/test_quantile.py",
    ],
    "partition": [
        "tests/transformations/test_partition.py",
        "tests/transformations/test_partition_aggregates.py",
        "tests/transformations/test_partition_order.py",
        "tests/combinators/test_grouped.py",
        "tests/combinators/test_grouped_stat.py",
    ],
    "amplification": ["tests/combinators/test_amplification.py"],
    "moments": ["tests/transformations/test_moments.py"],
    "randomized_response": ["tests/measurements/test_randomized_response.py"],
    "resize": ["tests/transformations/test_resize.py"],
    "lipschitz": ["tests/transformations/test_lipschitz.py"],
    "samplers": ["tests/samplers/test_scalar_samplers.py"],
    "_arith": ["tests/test_arith.py"],
    "docs": [],
}


def killed_by_tests(m: Mutation, workdir: Path, timeout: float) -> bool | None:
    """Whether the targeted tests fail with ``m`` applied in ``workdir`` (a copy of the repo);
    ``None`` if there are no tests to run (a docs edit)."""
    targets = ["tests/laws", *TESTS[m.family]]
    if m.family == "docs":
        return None
    original = (workdir / m.path).read_text(encoding="utf-8")
    (workdir / m.path).write_text(apply(m), encoding="utf-8")
    try:
        env = dict(os.environ, OPENDP_LITE_SLOW_SCALE="0.2", PYTHONDONTWRITEBYTECODE="1")
        cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *targets]
        try:
            r = subprocess.run(  # noqa: S603 - our own interpreter and tests
                cmd, cwd=workdir, env=env, capture_output=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            return False
        return r.returncode != 0
    finally:
        (workdir / m.path).write_text(original, encoding="utf-8")


def _copy_repo() -> Path:
    dest = Path(tempfile.mkdtemp(prefix="mutations-"))
    for name in ("opendp_lite", "tests", "tools", "docs", "pyproject.toml", "conftest.py"):
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif src.is_file():
            shutil.copy2(src, dest / name)
    return dest


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    if argv and argv[0] == "--list":
        for m in MUTATIONS:
            print(f"{m.id:28} {m.family:20} {m.unit()}: {m.what}")
        return 0
    run_tests = bool(argv) and argv[0] == "--tests"
    ids = argv[1:] if run_tests else argv
    unknown = [i for i in ids if i not in {m.id for m in MUTATIONS}]
    if unknown:
        print(f"tools.mutations: unknown edit(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    chosen = [m for m in MUTATIONS if not ids or m.id in ids]
    errors: list[str] = []
    survivors: set[str] = set()
    by_pins = 0
    by_tests = 0
    tested = 0
    workdir = _copy_repo() if run_tests else None
    try:
        for m in chosen:
            try:
                flagged = flagged_by(m)
            except (AnchorError, SyntaxError) as e:
                errors.append(str(e))
                print(f"ERROR    {m.id}: {e}")
                continue
            by_pins += bool(flagged)
            if not flagged:
                survivors.add(m.id)
            line = f"{'caught' if flagged else 'SURVIVED':8} {m.id:28} {len(flagged):3} proofs"
            if workdir is not None:
                t0 = time.monotonic()
                k = killed_by_tests(m, workdir, timeout=900)
                if k is not None:
                    tested += 1
                    by_tests += k
                line += f" | tests: {'-' if k is None else 'killed' if k else 'SURVIVED'}"
                line += f" ({time.monotonic() - t0:.0f}s)"
            if m.test and not flagged:
                line += f" (caught by {m.test})"
            print(line + f"  [{m.what}]", flush=True)
    finally:
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)
    n = len(chosen)
    helpers = sum(m.in_helper for m in chosen)
    families = sorted({m.family for m in chosen})
    print(
        f"\n{n} edits ({helpers} in helpers, {len(families)} families: {', '.join(families)}); "
        f"caught by the proof pins: {by_pins}/{n - len(errors)}"
        + (f"; killed by tests: {by_tests}/{tested}" if workdir is not None else "")
        + (f"; {len(errors)} edit(s) no longer apply" if errors else "")
    )
    undeclared = [m.id for m in chosen if m.id in survivors and m.test is None]
    declared = [m.id for m in chosen if m.id not in survivors and m.test is not None]
    for i in undeclared:
        print(f"FAIL: {i} flags no proof: pin the code it edits or name the test that catches it")
    for i in declared:
        print(f"FAIL: {i} names a catching test but flags a proof now: drop its test=")
    rate = by_pins / n if n else 1.0
    if rate < THRESHOLD:
        print(f"FAIL: the pins catch {rate:.1%} of the edits, below {THRESHOLD:.0%}")
    return 0 if not errors and not undeclared and not declared and rate >= THRESHOLD else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
