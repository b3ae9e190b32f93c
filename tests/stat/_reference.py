"""One place for the suite's statistical assertions, their reference laws and their budgets.

Every statistical assertion of the suite goes through :func:`assert_fits` (a correct law must
not be rejected: it fails by chance with probability ``ALPHA``) or :func:`assert_rejects` (a
wrong law must be rejected: it fails by chance with probability ``1 - power``).  The
``check_*`` helpers below run both halves of a usual test (the true law fits, each wrong law
is rejected) for the common test statistics, computing each rejection's power from the sample
size actually drawn.

Two budgets, both checked by ``tests/stat/test_budget.py``:

* **False alarms.**  The fit assertions of each test are counted from its source
  (:func:`count_fits`: helper calls, the module's own functions that make them, times the
  lengths of the enclosing loops), times the test's collected items; over a full run the sum
  of ``ALPHA`` is at most ``RUN_BUDGET``.  A loop of unstated length around a fit assertion
  needs ``@pytest.mark.stat(fits=k)`` on its test.  conftest's ``_statistical_ledger`` fails a
  test that makes more fit assertions than counted, so the count is an upper bound.
* **Power.**  :func:`assert_rejects` takes the power of its test against the wrong law at the
  sample it was given and fails below ``POWER_FLOOR``, whatever the outcome of the test: a
  sample lowered below what the power allows fails at once (also at CI's reduced scale),
  not once in a thousand runs.

Powers are computed, not simulated: exactly for binomial tests; for χ² tests from the
noncentral χ² law with noncentrality ``n·Σ(t−w)²/w`` (the usual large-sample approximation;
likewise for two-sample homogeneity tables); for one-sample KS tests from two lower bounds
that hold for every n, the better one taken (the statistic against the wrong law G is at least
``sup|F−G| − sup|F_n−F|``, with ``sup|F_n−F|`` Kolmogorov-distributed; and at least
``|F_n(x) − G(x)|`` at any x, with ``n·F_n(x)`` binomial); for two-sample KS tests from the
pointwise bound with a normal approximation.

Adopting it: replace ``assert p > ALPHA`` by ``assert_fits(p)`` and ``assert p < ALPHA`` by
``assert_rejects(p, power)``, or call one ``check_*`` for both halves, e.g.
``check_integer_law(z, discrete_laplace_pmf(2.0), [discrete_laplace_pmf(2.0 * f) for f in
(0.7, 1.3)])``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from tests.conftest import ALPHA

#: Each wrong-law control must be rejected with at least this probability at its sample size.
POWER_FLOOR = 0.999
#: The false-alarm budget of one full run of the suite (Σ ALPHA over every fit assertion).
RUN_BUDGET = 1e-3


# -- the ledger: what the current test asserted --------------------------------------------------


@dataclass
class Ledger:
    """The statistical assertions one test made (reset before each test by conftest)."""

    fits: int = 0
    rejects: int = 0
    powers: list[tuple[float, str]] = field(default_factory=list)


LEDGER = Ledger()


def _reset() -> Ledger:
    global LEDGER
    LEDGER = Ledger()
    return LEDGER


def assert_fits(p: float, what: str = "") -> None:
    """Assert that a test of a correct law does not reject it (p-value ``p`` > ``ALPHA``)."""
    LEDGER.fits += 1
    assert p > ALPHA, f"correct law rejected: p = {p:.3g} <= ALPHA = {ALPHA:g} {what}"


def assert_rejects(p: float, power: float, what: str = "") -> None:
    """Assert that a test of a wrong law rejects it (``p`` < ``ALPHA``), and that the test had
    power >= ``POWER_FLOOR`` against that law at the sample used (checked first)."""
    LEDGER.rejects += 1
    LEDGER.powers.append((power, what))
    assert power >= POWER_FLOOR, (
        f"power {power:.6f} < {POWER_FLOOR} against the wrong law {what}: raise the sample size"
    )
    assert p < ALPHA, f"wrong law not rejected: p = {p:.3g} >= ALPHA = {ALPHA:g} {what}"


def z_bound() -> float:
    """The two-sided normal quantile at ``ALPHA`` (for :func:`assert_within`)."""
    return float(stats.norm.isf(ALPHA / 2))


def assert_within(value: float, center: float, sd: float, what: str = "") -> None:
    """A fit assertion on an (asymptotically) normal statistic: ``|value − center| <= z·sd``
    with ``z`` the two-sided ``ALPHA`` quantile."""
    LEDGER.fits += 1
    z = z_bound()
    assert abs(value - center) <= z * sd, (
        f"{value} is {abs(value - center) / sd:.2f} sd from {center} (bound {z:.2f}) {what}"
    )


# -- test statistics and their powers ------------------------------------------------------------


def chi2_power(
    n: int, truth: Sequence[float], wrong: Sequence[float], alpha: float = ALPHA
) -> float:
    """Power of the χ² goodness-of-fit test of ``wrong`` (cell probabilities) on ``n`` draws
    from ``truth`` (same cells): noncentral χ² with λ = n·Σ(t−w)²/w over the cells ``wrong``
    allows, or the chance of a draw in a cell it rules out, whichever is larger."""
    t = np.asarray(truth, dtype=float)
    w = np.asarray(wrong, dtype=float)
    t, w = t / t.sum(), w / w.sum()
    # a draw in a cell the wrong law rules out rejects it outright (infinite statistic)
    impossible = (w <= 1e-300) & (t > 0)
    hit = -float(np.expm1(n * np.log1p(-min(float(t[impossible].sum()), 1.0 - 1e-300))))
    t, w = t[~impossible], w[~impossible]
    lam = n * float(np.sum((t - w) ** 2 / np.maximum(w, 1e-300)))
    df = len(t) - 1
    rest = float(stats.ncx2.sf(stats.chi2.isf(alpha, df), df, lam)) if df > 0 else 0.0
    return max(hit, rest)


def pool_small(
    observed: Sequence[float], expected: Sequence[float], *others: Sequence[float]
) -> tuple[np.ndarray, ...]:
    """Pool the cells expected below 5 (under ``expected``) into one; ``others`` (further
    probability vectors on the same cells) are pooled the same way."""
    obs = np.asarray(observed, dtype=float)
    exp = np.asarray(expected, dtype=float)
    small = exp < 5
    rest = [np.asarray(o, dtype=float) for o in others]
    if small.any():
        obs = np.append(obs[~small], obs[small].sum())
        exp = np.append(exp[~small], exp[small].sum())
        rest = [np.append(o[~small], o[small].sum()) for o in rest]
    return (obs, exp, *rest)


def chi2_pvalue(observed: Sequence[float], probs: Sequence[float]) -> float:
    """χ² goodness-of-fit p-value of counts on given cells (probabilities renormalised)."""
    obs = np.asarray(observed, dtype=float)
    p = np.asarray(probs, dtype=float)
    exp = np.maximum(p / p.sum() * obs.sum(), 1e-300)
    return float(stats.chisquare(obs, exp).pvalue)


def check_cells(
    observed: Sequence[float],
    probs: Sequence[float],
    wrong: Sequence[Sequence[float]] = (),
    what: str = "",
) -> None:
    """χ² test of counts on fixed cells against cell probabilities ``probs``; each ``wrong``
    probability vector (same cells) rejected with its power computed against ``probs``."""
    n = round(float(np.sum(observed)))
    assert_fits(chi2_pvalue(observed, probs), f"(χ² on {len(probs)} cells, n = {n}) {what}")
    for i, w in enumerate(wrong):
        assert_rejects(
            chi2_pvalue(observed, w),
            chi2_power(n, probs, w),
            f"(χ² on {len(w)} cells, n = {n}, wrong #{i}) {what}",
        )


def check_categorical(
    counts: Mapping[Any, int],
    law: Mapping[Any, float],
    wrong: Sequence[Mapping[Any, float]] = (),
    what: str = "",
) -> None:
    """χ² test of ``counts`` (outcome -> count) against ``law`` (outcome -> probability), then
    each ``wrong`` law rejected with its power computed against ``law``.  Cells expected below
    5 under the law being tested are pooled."""
    keys = sorted(set(law) | {k for w in wrong for k in w})
    impossible = set(counts) - set(keys)
    assert not impossible, f"impossible outcomes {impossible}"
    n = sum(counts.values())
    obs = [counts.get(k, 0) for k in keys]
    t = np.array([law.get(k, 0.0) for k in keys])
    t = t / t.sum()
    o, e = pool_small(obs, t * n)
    assert_fits(chi2_pvalue(o, e), f"(χ², n = {n}) {what}")
    for i, wl in enumerate(wrong):
        w = np.array([wl.get(k, 0.0) for k in keys])
        w = w / w.sum()
        o, e, tt = pool_small(obs, w * n, t)
        assert_rejects(chi2_pvalue(o, e), chi2_power(n, tt, e), f"(χ², n = {n}, wrong #{i}) {what}")


def integer_cells(
    lo: int, hi: int, n: int, shape: Callable[[int], float], minimum: float = 5
) -> list[list[int]]:
    """Consecutive integers of [lo, hi] merged until each cell expects >= ``minimum`` of ``n``
    draws under ``shape`` (the remainder joins the last full cell)."""
    groups: list[list[int]] = [[]]
    acc = 0.0
    for z in range(lo, hi + 1):
        groups[-1].append(z)
        acc += n * shape(z)
        if acc >= minimum:
            groups.append([])
            acc = 0.0
    if len(groups) > 1:
        groups[-2].extend(groups.pop())
    return groups


def check_integer_law(
    samples: Sequence[int] | np.ndarray,
    pmf: Callable[[int], float],
    wrong: Sequence[Callable[[int], float]] = (),
    lo: int | None = None,
    hi: int | None = None,
    what: str = "",
) -> None:
    """χ² test of integer ``samples`` against ``pmf``, on cells of consecutive integers that
    each expect >= 5 draws under ``pmf`` (wrong laws are tested on the same cells, so a
    concentrated wrong law still gives a proper statistic); each wrong pmf is rejected with its
    power computed against ``pmf``.  The support is taken as [lo, hi] (default: the sample's
    range widened by 5); mass outside it is negligible by assumption and renormalised away."""
    values = [int(v) for v in samples]
    n = len(values)
    lo = min(values) - 5 if lo is None else lo
    hi = max(values) + 5 if hi is None else hi
    assert lo <= min(values) and max(values) <= hi, "sample outside the modelled support"
    counts = Counter(values)
    groups = integer_cells(lo, hi, n, pmf)
    obs = [sum(counts.get(z, 0) for z in g) for g in groups]

    def cells(f: Callable[[int], float]) -> np.ndarray:
        c = np.array([math.fsum(f(z) for z in g) for g in groups])
        return np.maximum(c / c.sum(), 1e-300)

    t = cells(pmf)
    assert_fits(chi2_pvalue(obs, t), f"(χ² on integers, n = {n}) {what}")
    for i, f in enumerate(wrong):
        w = cells(f)
        assert_rejects(
            chi2_pvalue(obs, w),
            chi2_power(n, t, w),
            f"(χ² on integers, n = {n}, wrong #{i}) {what}",
        )


def homogeneity_power(
    n1: int, n2: int, p: Sequence[float], q: Sequence[float], alpha: float = ALPHA
) -> float:
    """Power of the χ² homogeneity test of two samples (sizes n1, n2) on the same cells when
    they are drawn from ``p`` and ``q``: noncentral χ² with λ = n1·n2/(n1+n2)·Σ(p−q)²/m,
    m = (n1·p + n2·q)/(n1 + n2), df = cells − 1."""
    a = np.asarray(p, dtype=float)
    b = np.asarray(q, dtype=float)
    a, b = a / a.sum(), b / b.sum()
    m = np.maximum((n1 * a + n2 * b) / (n1 + n2), 1e-300)
    lam = n1 * n2 / (n1 + n2) * float(np.sum((a - b) ** 2 / m))
    df = len(a) - 1
    return float(stats.ncx2.sf(stats.chi2.isf(alpha, df), df, lam))


def homogeneity_power_integers(
    n1: int, n2: int, pmf_a: Callable[[int], float], pmf_b: Callable[[int], float], lo: int, hi: int
) -> float:
    """:func:`homogeneity_power` of two integer samples on [lo, hi], on cells of consecutive
    integers that each expect >= 10 pooled draws (the rule of the tests' homogeneity tables)."""

    def pooled(z: int) -> float:
        return (n1 * pmf_a(z) + n2 * pmf_b(z)) / (n1 + n2)

    groups = integer_cells(lo, hi, n1 + n2, pooled, minimum=10)
    p = [math.fsum(pmf_a(z) for z in g) for g in groups]
    q = [math.fsum(pmf_b(z) for z in g) for g in groups]
    return homogeneity_power(n1, n2, p, q)


def binom_pvalue(k: int, n: int, p: float) -> float:
    """Two-sided exact binomial test p-value."""
    return float(stats.binomtest(int(k), int(n), p).pvalue)


def binom_power(n: int, truth: float, wrong: float, alpha: float = ALPHA) -> float:
    """Exact power of the two-sided binomial test of ``wrong`` on ``n`` trials of ``truth``:
    the probability under ``truth`` of the region where the test rejects (found by bisection;
    the p-value grows towards the mode on each side)."""
    mode = int(n * wrong)

    def rejects(k: int) -> bool:
        return binom_pvalue(k, n, wrong) < alpha

    power = 0.0
    # lower region [0, lo]
    if rejects(0):
        a, b = 0, mode  # rejects(a), and the search stays below the mode
        while b - a > 1:
            m = (a + b) // 2
            a, b = (m, b) if rejects(m) else (a, m)
        power += float(stats.binom.cdf(a, n, truth))
    if rejects(n):
        a, b = mode, n  # rejects(b)
        while b - a > 1:
            m = (a + b) // 2
            a, b = (a, m) if rejects(m) else (m, b)
        power += float(stats.binom.sf(b - 1, n, truth))
    return power


def binom_power_one_sided(
    n: int, truth: float, wrong: float, alternative: str, alpha: float = ALPHA
) -> float:
    """Exact power of the one-sided binomial test of ``wrong`` (``alternative`` "greater": the
    true probability is above ``wrong``; "less": below) on ``n`` trials of ``truth``."""
    if alternative == "greater":  # rejects when Pr_wrong[K >= k] < alpha
        k = int(stats.binom.isf(alpha, n, wrong)) + 1
        while k > 0 and stats.binom.sf(k - 2, n, wrong) < alpha:
            k -= 1
        while stats.binom.sf(k - 1, n, wrong) >= alpha:
            k += 1
        return float(stats.binom.sf(k - 1, n, truth))
    k = int(stats.binom.ppf(alpha, n, wrong))  # rejects when Pr_wrong[K <= k] < alpha
    while stats.binom.cdf(k, n, wrong) >= alpha:
        k -= 1
    while stats.binom.cdf(k + 1, n, wrong) < alpha:
        k += 1
    return float(stats.binom.cdf(k, n, truth)) if k >= 0 else 0.0


def check_binomial(
    hits: int, n: int, p: float, wrong: Sequence[float] = (), what: str = ""
) -> None:
    """Exact binomial test of ``hits`` of ``n`` against ``p``; each wrong probability rejected
    with its exact power against ``p``."""
    assert_fits(binom_pvalue(hits, n, p), f"(binomial, n = {n}, p = {p:.6g}) {what}")
    for w in wrong:
        assert_rejects(
            binom_pvalue(hits, n, w),
            binom_power(n, p, w),
            f"(binomial, n = {n}, wrong p = {w:.6g}) {what}",
        )


def ks_distance(points: np.ndarray, cdf_a: Callable[..., Any], cdf_b: Callable[..., Any]) -> float:
    """A lower bound on sup|F_a − F_b|: its maximum over ``points`` (e.g. the sample)."""
    x = np.sort(np.asarray(points, dtype=float))
    return float(np.max(np.abs(np.asarray(cdf_a(x)) - np.asarray(cdf_b(x)))))


def ks_power(n: int, delta: float, alpha: float = ALPHA) -> float:
    """A lower bound on the power of the one-sample KS test of G on n draws from F when
    sup|F − G| >= delta: the test rejects when D_G > c (its critical value), and
    D_G >= delta − D_F with D_F Kolmogorov-distributed."""
    c = float(stats.kstwo.isf(alpha, n))
    if delta <= c:
        return 0.0
    return float(1 - stats.kstwo.sf(delta - c, n))


def ks2_power(n: int, m: int, delta: float, alpha: float = ALPHA) -> float:
    """A lower bound on the power of the two-sample KS test (sizes n, m) when the two laws are
    ``delta`` apart in sup distance: D >= delta − D_a − D_b; the critical value is bounded by
    the asymptotic one (a conservative step for the exact test), and each D_x exceeds half the
    margin with Kolmogorov's probability."""
    c = math.sqrt(-math.log(alpha / 2) / 2) * math.sqrt((n + m) / (n * m))
    margin = delta - c
    if margin <= 0:
        return 0.0
    miss = stats.kstwo.sf(margin / 2, n) + stats.kstwo.sf(margin / 2, m)
    return float(max(0.0, 1 - miss))


def ks_power_pointwise(
    n: int,
    points: np.ndarray,
    cdf: Callable[..., Any],
    wrong: Callable[..., Any],
    alpha: float = ALPHA,
) -> float:
    """A lower bound on the power of the one-sample KS test of ``wrong`` on n draws from ``cdf``:
    at any point x the statistic is at least |F_n(x) − G(x)|, and n·F_n(x) is exactly
    Binomial(n, F(x)); the best of the ``points`` is taken."""
    c = float(stats.kstwo.isf(alpha, n))
    x = np.asarray(points, dtype=float)
    f = np.clip(np.asarray(cdf(x), dtype=float), 0.0, 1.0)
    g = np.asarray(wrong(x), dtype=float)
    below = stats.binom.cdf(np.ceil(n * (g - c)) - 1, n, f)  # F_n(x) < G(x) − c
    above = stats.binom.sf(np.floor(n * (g + c)), n, f)  # F_n(x) > G(x) + c
    return float(np.max(below + above))


def ks2_power_pointwise(
    n: int,
    m: int,
    points: np.ndarray,
    cdf_a: Callable[..., Any],
    cdf_b: Callable[..., Any],
    alpha: float = ALPHA,
) -> float:
    """The power of the two-sample KS test (sizes n, m; laws ``cdf_a``, ``cdf_b``) bounded below
    at the best single point: the statistic is at least |F_n(x) − G_m(x)|, a difference of two
    independent binomial proportions (normal approximation); the critical value is the
    asymptotic one, sqrt((n + m)/(n·m))·K⁻¹(1 − α)."""
    c = float(stats.kstwobign.isf(alpha)) * math.sqrt((n + m) / (n * m))
    x = np.asarray(points, dtype=float)
    f = np.asarray(cdf_a(x), dtype=float)
    g = np.asarray(cdf_b(x), dtype=float)
    sd = np.sqrt(np.maximum(f * (1 - f) / n + g * (1 - g) / m, 1e-300))
    d = f - g
    power = stats.norm.sf((c - d) / sd) + stats.norm.cdf((-c - d) / sd)
    return float(np.max(power))


def check_continuous(
    sample: Sequence[float] | np.ndarray,
    cdf: Callable[..., Any],
    wrong: Sequence[Callable[..., Any]] = (),
    what: str = "",
    symmetric_about: float | None = None,
) -> None:
    """One-sample KS test of ``sample`` against ``cdf``; each wrong cdf rejected with the
    better of the power bounds :func:`ks_power` and :func:`ks_power_pointwise` (both evaluated
    at the sample points).

    ``symmetric_about=c`` (the true and the wrong laws are symmetric about c): the wrong laws
    are tested on the folded sample |x − c| against the folded cdfs G(c + y) − G(c − y).  For a
    change of scale this doubles the KS distance, and the power with it (KS on the raw sample
    of 5000 Laplace draws rejects scale × 1.3 with power 0.977 only)."""
    x = np.asarray(sample, dtype=float)
    n = len(x)
    assert_fits(float(stats.kstest(x, cdf).pvalue), f"(KS, n = {n}) {what}")
    if symmetric_about is not None:
        c = symmetric_about
        x = np.abs(x - c)

        def fold(h: Callable[..., Any]) -> Callable[..., Any]:
            return lambda y: np.asarray(h(c + np.asarray(y))) - np.asarray(h(c - np.asarray(y)))

        cdf, wrong = fold(cdf), [fold(g) for g in wrong]
    for i, g in enumerate(wrong):
        power = max(ks_power(n, ks_distance(x, cdf, g)), ks_power_pointwise(n, x, cdf, g))
        p = float(stats.kstest(x, g).pvalue)
        assert_rejects(p, power, f"(KS, n = {n}, wrong #{i}) {what}")


# -- exact reference laws ------------------------------------------------------------------------


def discrete_laplace_pmf(scale: float) -> Callable[[int], float]:
    """Pr[Z = z] ∝ exp(−|z|/scale) on the integers."""
    a = math.exp(-1 / scale)
    return lambda z: (1 - a) / (1 + a) * a ** abs(z)


def discrete_gaussian_pmf(scale: float, support: int = 3000) -> Callable[[int], float]:
    """Pr[Z = z] ∝ exp(−z²/(2·scale²)) on the integers (normalised over |z| <= ``support``)."""
    norm = math.fsum(math.exp(-(i * i) / (2 * scale * scale)) for i in range(-support, support + 1))
    return lambda z: math.exp(-(z * z) / (2 * scale * scale)) / norm


def geometric_pmf(gamma: float) -> Callable[[int], float]:
    """Pr[G = g] = (1 − e^−γ)·e^−γg on g >= 0."""
    return lambda g: -math.expm1(-gamma) * math.exp(-gamma * g) if g >= 0 else 0.0


def bernoulli_pmf(p: float) -> Callable[[int], float]:
    return lambda b: p if b == 1 else 1 - p if b == 0 else 0.0


def scaled_laws(
    make: Callable[[float], Any], scale: float, factors: Sequence[float] = (0.7, 1.3)
) -> list[Any]:
    """The wrong laws ``make(scale·f)`` for the usual factors."""
    return [make(scale * f) for f in factors]


__all__ = [
    "ALPHA",
    "POWER_FLOOR",
    "RUN_BUDGET",
    "assert_fits",
    "assert_rejects",
    "assert_within",
    "binom_power",
    "binom_power_one_sided",
    "binom_pvalue",
    "check_binomial",
    "check_categorical",
    "check_cells",
    "check_continuous",
    "check_integer_law",
    "chi2_power",
    "chi2_pvalue",
    "discrete_gaussian_pmf",
    "discrete_laplace_pmf",
    "homogeneity_power",
    "homogeneity_power_integers",
    "ks2_power",
    "ks2_power_pointwise",
    "ks_distance",
    "ks_power",
    "ks_power_pointwise",
    "scaled_laws",
    "z_bound",
]


# -- the static count of fit assertions ----------------------------------------------------------

#: The helpers that make one fit assertion per call (each ``check_*`` makes exactly one).
FIT_HELPERS = frozenset(
    {
        "assert_fits",
        "assert_within",
        "check_binomial",
        "check_categorical",
        "check_cells",
        "check_continuous",
        "check_integer_law",
    }
)


class Uncountable(Exception):
    """A fit assertion sits in a loop whose length the source does not state."""


def _loop_length(node: Any) -> int:
    import ast

    it = node.iter
    if isinstance(it, (ast.Tuple, ast.List, ast.Set)):
        return len(it.elts)
    if (
        isinstance(it, ast.Call)
        and isinstance(it.func, ast.Name)
        and it.func.id == "range"
        and all(isinstance(a, ast.Constant) and isinstance(a.value, int) for a in it.args)
    ):
        return len(range(*[a.value for a in it.args]))
    if (
        isinstance(it, ast.Call)
        and isinstance(it.func, ast.Name)
        and it.func.id in ("zip", "enumerate")
    ):
        lengths = [len(a.elts) for a in it.args if isinstance(a, (ast.Tuple, ast.List, ast.Set))]
        if lengths:
            return min(lengths)
    raise Uncountable(f"line {node.lineno}: a loop of unstated length around a fit assertion")


def count_fits(source: str) -> dict[str, int]:
    """An upper bound on the fit assertions each function of a module makes per call (helpers
    of ``FIT_HELPERS``, and the module's own functions that call them, times the lengths of the
    enclosing loops).  A function whose count depends on a loop of unstated length maps to -1
    (its test must declare ``@pytest.mark.stat(fits=k)``)."""
    import ast

    tree = ast.parse(source)
    defs: dict[str, Any] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs.setdefault(node.name, node)
    memo: dict[str, int] = {}

    def weight(name: str, stack: tuple[str, ...]) -> int:
        if name in FIT_HELPERS:
            return 1
        if name not in defs or name in stack:
            return 0
        if name not in memo:
            memo[name] = body(defs[name], (*stack, name))
        if memo[name] < 0:
            raise Uncountable(name)
        return memo[name]

    def walk(node: Any, stack: tuple[str, ...]) -> int:
        total = 0
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue  # counted where it is called
            inner = walk(child, stack)
            if isinstance(child, (ast.For, ast.AsyncFor)) and inner:
                inner *= _loop_length(child)
            elif isinstance(child, ast.While) and inner:
                raise Uncountable(f"line {child.lineno}: a while loop around a fit assertion")
            elif isinstance(child, ast.comprehension) and inner:
                inner *= _loop_length(child)
            if isinstance(child, ast.Call) and isinstance(child.func, ast.Name):
                inner += weight(child.func.id, stack)
            total += inner
        return total

    def body(fn: Any, stack: tuple[str, ...]) -> int:
        try:
            return walk(fn, stack)
        except Uncountable:
            return -1

    counts: dict[str, int] = {}
    for name in defs:
        try:
            counts[name] = weight(name, ())
        except Uncountable:
            counts[name] = -1
    return counts


_COUNTS: dict[str, dict[str, int]] = {}


def declared_fits(path: str, function: str) -> int:
    """The fit assertions one call of ``function`` (a test in the module at ``path``) may make:
    the static count of :func:`count_fits`, -1 if it cannot be counted."""
    if path not in _COUNTS:
        with open(path, encoding="utf-8") as f:
            source = f.read()
        _COUNTS[path] = count_fits(source)
    return _COUNTS[path].get(function, 0)
