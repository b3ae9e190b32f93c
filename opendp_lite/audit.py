r"""An empirical privacy auditor: a statistical **lower bound** on a measurement's ε.

Import it as ``import opendp_lite.audit as audit`` (it is not part of the prelude).  Given a
measurement ``M``, two neighbouring inputs ``x``, ``x′`` and a sample budget ``n``, it returns
``ε_lb`` such that, with probability at least ``confidence`` over the audit's own samples,
``ε_lb ≤`` the true privacy loss of ``M`` on that pair.  If ``ε_lb`` exceeds what
``M.map(d_in)`` claims, the claim is false (at that confidence).

Method: a threshold-set audit with Clopper–Pearson intervals, as in Jagielski, Ullman & Oprea
(NeurIPS 2020, "Auditing differentially private machine learning") and Nasr et al. (IEEE S&P
2021, "Adversary instantiation"), with the event chosen by a search over output events in the
spirit of DP-Sniper (Bichsel et al., IEEE S&P 2021):

1. draw ``n`` releases of ``M(x)`` and ``n`` of ``M(x′)``;
2. on the first half of each, search the events
   ``S ∈ {f(y) ≤ t, f(y) ≥ t, f(y) = t}`` over thresholds ``t`` and features ``f`` (the release
   itself; for float releases also its *granularity*, the exponent of its lowest set bit,
   which exposes porous or precision-dependent noise: Mironov 2012, Haney et al. 2022) and
   keep the event and direction with the largest empirical bound;
3. on the held-out halves, bound ``p = Pr[M(x) ∈ S]`` from below and ``q = Pr[M(x′) ∈ S]``
   from above with one-sided Clopper–Pearson intervals at level ``α/2`` each
   (``α = 1 − confidence``);
4. report ``ε_lb = ln((p̲ − δ) / q̄)`` (or 0).  By the hockey-stick characterisation of
   (ε, δ)-DP, ``p ≤ e^ε q + δ`` for every event, and both bounds hold jointly with
   probability ``≥ 1 − α``; since ``S`` was chosen without looking at the held-out half, one
   test on it needs no multiple-comparison correction.

The auditor draws no randomness of its own (the halves are fixed slices of i.i.d. samples).
Releases must be scalars (numbers, bools, strings or other hashables); audit a vector
mechanism through a post-processing ``meas >> f`` to a scalar, which can only lower its ε.

>>> import opendp_lite.prelude as dp
>>> import opendp_lite.audit as audit
>>> from opendp_lite.samplers.uniform import sample_uniform_below
>>> dp.enable_features("honest-but-curious")
>>> # randomized response on a bit, truthful with probability 3/4: ε = ln 3
>>> rr = dp.m.make_user_measurement(
...     dp.atom_domain(T=bool), dp.discrete_distance(), dp.max_divergence(),
...     lambda b: b if sample_uniform_below(4) < 3 else not b, lambda d: 1.0987 * d)
>>> res = audit.audit(rr, True, False, d_in=1, samples=20_000)
>>> 0.9 < res.epsilon_lower < 1.2  # near ln 3 = 1.0986... (a 95% lower bound, so mostly below)
True
>>> liar = dp.m.make_user_measurement(*rr.input_space, rr.output_measure, rr.function,
...     lambda d: 0.5 * d)  # claims ε = 0.5: too little
>>> audit.audit(liar, True, False, d_in=1, samples=20_000).violated
True
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from . import _arith
from ._validate import check_int
from .core import Measurement
from .errors import InvalidParameter, NotImplementedForType, OpenDPLiteError
from .measures import Approximate, MaxDivergence, ZeroConcentratedDivergence

__all__ = [
    "AuditResult",
    "PrivacyViolation",
    "assert_not_violated",
    "audit",
    "clopper_pearson",
]

Floats = npt.NDArray[np.float64]
Draw = Callable[[Any, int], Sequence[Any] | npt.NDArray[Any]]


class PrivacyViolation(OpenDPLiteError, AssertionError):
    """The audited lower bound on ε exceeds the measurement's claim; ``result`` has the figures."""

    def __init__(self, result: AuditResult) -> None:
        self.result = result
        super().__init__(
            f"privacy claim violated at {result.confidence:.4g} confidence: audited "
            f"ε ≥ {result.epsilon_lower:.6g} > claimed ε = {result.claimed_epsilon!r} "
            f"(δ = {result.delta!r}); event {result.event}, held-out hits "
            f"{result.hits[0]}/{result.n_test} vs {result.hits[1]}/{result.n_test}"
        )


@dataclass(frozen=True)
class AuditResult:
    """The outcome of an audit.

    ``epsilon_lower`` is the lower bound on ε at ``delta``, valid with probability at least
    ``confidence``; ``claimed_epsilon`` is what the measurement's map claims at ``delta``.
    ``event`` describes the chosen output event, ``hits`` its held-out counts under
    ``(x, x′)`` (the numerator side first) out of ``n_test`` each, ``p_lower``/``q_upper`` the
    Clopper–Pearson bounds.  ``samples`` is the number of releases drawn per input.
    """

    epsilon_lower: float
    claimed_epsilon: float
    delta: float
    confidence: float
    samples: int
    event: str
    hits: tuple[int, int]
    n_test: int
    p_lower: float
    q_upper: float
    sample_seconds: float
    seconds: float

    @property
    def violated(self) -> bool:
        """Whether the audited lower bound exceeds the claimed ε."""
        return self.epsilon_lower > self.claimed_epsilon


# ----------------------------------------------------------------------------------------------
# Clopper–Pearson intervals, from the regularised incomplete beta function (no scipy needed)


def _betacf(a: float, b: float, x: float) -> float:
    # Continued fraction of the incomplete beta function, evaluated by the modified Lentz
    # method; it converges in O(sqrt(max(a, b))) terms for x < (a + 1) / (a + b + 2).
    tiny, eps = 1e-300, 1e-15
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 100_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < eps:
            return h
    raise ArithmeticError(f"incomplete beta continued fraction did not converge: {a}, {b}, {x}")


def _betainc(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b) for a, b > 0, x in [0, 1]."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_bt = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    bt = math.exp(log_bt)
    if x < (a + 1.0) / (a + b + 2.0):
        return bt * _betacf(a, b, x) / a
    return 1.0 - bt * _betacf(b, a, 1.0 - x) / b


def _solve_increasing(fn: Callable[[float], float], target: float, lower_side: bool) -> float:
    # Bisection for fn(p) = target on [0, 1]; returns the bracket end on the conservative side.
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if fn(mid) < target:
            lo = mid
        else:
            hi = mid
    return lo if lower_side else hi


def clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    """One-sided Clopper–Pearson bounds, each at level ``alpha``, for ``k`` successes in ``n``.

    Returns ``(lower, upper)`` with ``Pr[p < lower] ≤ alpha`` and ``Pr[p > upper] ≤ alpha``.
    ``lower`` solves ``Pr[Bin(n, p) ≥ k] = alpha`` (``= I_p(k, n−k+1)``), ``upper`` solves
    ``Pr[Bin(n, p) ≤ k] = alpha``; both are rounded outward by the bisection.

    >>> lo, hi = clopper_pearson(0, 100, 0.05)
    >>> lo, round(hi, 4)
    (0.0, 0.0295)

    Raises:
        InvalidParameter: unless ``0 <= k <= n``, ``n >= 1`` and ``0 < alpha < 1``.
    """
    if not (isinstance(n, int) and isinstance(k, int) and n >= 1 and 0 <= k <= n):
        raise InvalidParameter(f"need integers 0 <= k <= n and n >= 1, got k={k!r}, n={n!r}")
    if not 0.0 < alpha < 1.0:
        raise InvalidParameter(f"alpha must be in (0, 1), got {alpha!r}")
    lower = 0.0 if k == 0 else _solve_increasing(lambda p: _betainc(k, n - k + 1, p), alpha, True)
    upper = (
        1.0
        if k == n
        else _solve_increasing(lambda p: _betainc(k + 1, n - k, p), 1.0 - alpha, False)
    )
    # widen by 1e-9 (relative) to cover the float error of the incomplete beta (~1e-11)
    return lower * (1.0 - 1e-9), min(1.0, upper * (1.0 + 1e-9))


# ----------------------------------------------------------------------------------------------
# What the measurement claims


def _claimed(
    meas: Measurement[Any, Any, Any, Any], d_in: Any, delta: float | None
) -> tuple[float, float]:
    """The (ε, δ) that ``meas`` claims for inputs ``d_in`` apart, rounded up."""
    measure = meas.output_measure
    loss = meas.map(d_in)
    if isinstance(measure, MaxDivergence):
        return float(loss), 0.0
    if isinstance(measure, ZeroConcentratedDivergence):
        return _zcdp_epsilon(float(loss), delta), float(delta or _DEFAULT_ZCDP_DELTA)
    if isinstance(measure, Approximate):
        inner_loss, inner_delta = loss
        if isinstance(measure.inner, MaxDivergence):
            return float(inner_loss), float(inner_delta)
        if isinstance(measure.inner, ZeroConcentratedDivergence):
            d = float(delta or _DEFAULT_ZCDP_DELTA)
            return _zcdp_epsilon(float(inner_loss), d), _arith.add_up(d, inner_delta)
    raise NotImplementedForType(
        f"the auditor supports max_divergence, zero_concentrated_divergence and their "
        f"approximate(...) forms, got {measure!r}"
    )


_DEFAULT_ZCDP_DELTA = 1e-6


def _zcdp_epsilon(rho: float, delta: float | None) -> float:
    """ρ-zCDP implies (ρ + 2·sqrt(ρ·ln(1/δ)), δ)-DP (Bun & Steinke 2016, Prop. 1.3); rounded up."""
    d = _arith.q(delta if delta is not None else _DEFAULT_ZCDP_DELTA)
    if rho == 0.0:
        return 0.0
    log_inv = _arith.log_up(_arith.q(1) / d)
    return _arith.add_up(rho, _arith.mul_up(2, _arith.sqrt_up(_arith.mul_up(rho, log_inv))))


# ----------------------------------------------------------------------------------------------
# Features of the releases


def _granularity(y: Floats) -> Floats:
    """The exponent of the lowest set bit of each finite float (0 ↦ +2000, non-finite ↦ +3000)."""
    out = np.full(y.shape, 3000.0)
    fin = np.isfinite(y)
    yf = y[fin]
    mant, expo = np.frexp(yf)  # yf = mant · 2^expo, 0.5 <= |mant| < 1
    m_int = np.ldexp(np.abs(mant), 53).astype(np.int64)  # exact 53-bit integer mantissa
    low = m_int & -m_int
    _, low_exp = np.frexp(low.astype(np.float64))
    g = (expo - 53 + low_exp - 1).astype(np.float64)
    g[yf == 0] = 2000.0
    out[fin] = g
    return out


def _features(
    a: Sequence[Any] | npt.NDArray[Any], b: Sequence[Any] | npt.NDArray[Any]
) -> list[tuple[str, Floats, Floats, bool]]:
    """Features of both samples: (name, f(a), f(b), categorical)."""
    arr_a, arr_b = np.asarray(a), np.asarray(b)
    if arr_a.ndim != 1 or arr_b.ndim != 1:
        raise NotImplementedForType(
            "the auditor needs scalar releases; post-process the measurement to a scalar "
            f"(meas >> f) first, got releases of shape {arr_a.shape[1:] or arr_b.shape[1:]}"
        )
    kind = {arr_a.dtype.kind, arr_b.dtype.kind}
    if kind <= {"b"}:
        return [("value", arr_a.astype(np.float64), arr_b.astype(np.float64), True)]
    if kind <= {"i", "u", "b"}:
        return [("value", arr_a.astype(np.float64), arr_b.astype(np.float64), False)]
    if kind <= {"f", "i", "u", "b"}:
        fa, fb = arr_a.astype(np.float64), arr_b.astype(np.float64)
        va, vb = np.where(np.isnan(fa), np.inf, fa), np.where(np.isnan(fb), np.inf, fb)
        feats = [
            ("value", va, vb, False),
            ("granularity", _granularity(fa), _granularity(fb), True),
        ]
        if not (np.isfinite(fa).all() and np.isfinite(fb).all()):
            feats.append(("nonfinite", _nonfinite_code(fa), _nonfinite_code(fb), True))
        return feats
    # anything else hashable: categories, compared only by equality
    codes: dict[Any, float] = {}
    ca = np.array([codes.setdefault(v, float(len(codes))) for v in arr_a.tolist()])
    cb = np.array([codes.setdefault(v, float(len(codes))) for v in arr_b.tolist()])
    return [("category", ca, cb, True)]


def _nonfinite_code(y: Floats) -> Floats:
    return np.select([np.isnan(y), y == np.inf, y == -np.inf], [3.0, 1.0, 2.0], 0.0)


# ----------------------------------------------------------------------------------------------
# Event search (first half) and test (held-out half)


_MAX_POINT_EVENTS = 512


def _counts(
    sa: Floats, sb: Floats, t: Floats, op: str
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Counts of {f ≤ t}, {f ≥ t} or {f = t} in the sorted samples ``sa``, ``sb``."""
    out = []
    for s in (sa, sb):
        left = np.searchsorted(s, t, side="left")
        right = np.searchsorted(s, t, side="right")
        out.append({"le": right, "ge": len(s) - left, "eq": right - left}[op].astype(np.int64))
    return out[0], out[1]


def _wilson(c: npt.NDArray[np.int64], n: int, z: float) -> tuple[Floats, Floats]:
    cf = c.astype(np.float64)
    centre = (cf + z * z / 2) / (n + z * z)
    half = z / (n + z * z) * np.sqrt(cf * (n - cf) / n + z * z / 4)
    return np.maximum(centre - half, 0.0), np.minimum(centre + half, 1.0)


def _thresholds(fa: Floats, fb: Floats, categorical: bool) -> Floats:
    pooled = np.sort(np.concatenate([fa, fb]))
    distinct = np.unique(pooled)
    if categorical or len(distinct) <= _MAX_POINT_EVENTS:
        return distinct
    # dense in both tails, where the likelihood ratio of additive noise is extreme
    ranks = np.unique(np.geomspace(1, len(pooled), 600).astype(np.int64))
    return np.unique(np.concatenate([pooled[ranks - 1], pooled[len(pooled) - ranks]]))


@dataclass(frozen=True)
class _Event:
    feature: str
    op: str
    t: float
    swap: bool  # True: the numerator side is x′
    score: float

    def describe(self) -> str:
        sym = {"le": "<=", "ge": ">=", "eq": "=="}[self.op]
        side = "M(x′) over M(x)" if self.swap else "M(x) over M(x′)"
        return f"{self.feature}(y) {sym} {self.t!r} [{side}]"


def _select(
    feats: list[tuple[str, Floats, Floats, bool]], h: int, delta: float, alpha: float
) -> _Event:
    """The event with the best Wilson-bound likelihood ratio on the selection half.

    The Wilson bounds use a Bonferroni level α/(2K) over the K candidate events, so that the
    maximum over many noisy tail events (the winner's curse) does not pick a small event that
    fails to replicate on the held-out half.  Selection only affects power: the held-out test
    is valid whatever event is chosen.
    """
    plans = []
    for name, fa, fb, categorical in feats:
        sa, sb = np.sort(fa[:h]), np.sort(fb[:h])
        t = _thresholds(sa, sb, categorical)
        ops = ("eq", "le", "ge") if len(t) <= _MAX_POINT_EVENTS else ("le", "ge")
        plans.append((name, sa, sb, t, ops))
    k = max(1, sum(2 * len(t) * len(ops) for _, _, _, t, ops in plans))
    z = statistics.NormalDist().inv_cdf(1.0 - alpha / (2 * k))
    best = _Event("value", "le", math.inf, False, -math.inf)
    for name, sa, sb, t, ops in plans:
        for op in ops:
            ca, cb = _counts(sa, sb, t, op)
            lo_a, hi_a = _wilson(ca, h, z)
            lo_b, hi_b = _wilson(cb, h, z)
            with np.errstate(divide="ignore", invalid="ignore"):
                s_ab = np.log(np.maximum(lo_a - delta, 0.0)) - np.log(hi_b)
                s_ba = np.log(np.maximum(lo_b - delta, 0.0)) - np.log(hi_a)
            for swap, sc in ((False, s_ab), (True, s_ba)):
                i = int(np.argmax(sc))
                if sc[i] > best.score:
                    best = _Event(name, op, float(t[i]), swap, float(sc[i]))
    return best


def _hits(f: Floats, ev: _Event) -> int:
    if ev.op == "le":
        return int(np.count_nonzero(f <= ev.t))
    if ev.op == "ge":
        return int(np.count_nonzero(f >= ev.t))
    return int(np.count_nonzero(f == ev.t))


def _default_draw(meas: Measurement[Any, Any, Any, Any]) -> Draw:
    """n independent releases of ``meas`` on ``x``: one batch when the release function offers
    ``sample_many(x, n)`` (the scalar noise mechanisms do; same law as n calls), else n calls."""

    def draw(x: Any, n: int) -> Any:
        fn = meas.function
        norm = meas.input_domain._normalize(x)
        many = getattr(fn, "sample_many", None)
        if many is not None:
            return many(norm, n)
        return [fn(norm) for _ in range(n)]

    return draw


def audit(
    measurement: Measurement[Any, Any, Any, Any],
    x: Any,
    x_prime: Any,
    d_in: Any,
    *,
    samples: int = 100_000,
    confidence: float = 0.95,
    delta: float | None = None,
    draw: Draw | None = None,
    selection_fraction: float = 0.5,
) -> AuditResult:
    r"""Audit ``measurement`` on the neighbours ``x``, ``x_prime``: a lower bound on its ε.

    With probability at least ``confidence`` over the audit's samples,
    ``result.epsilon_lower ≤ ε_true(δ)``, the smallest ε for which the pair satisfies
    ``Pr[M(x) ∈ S] ≤ e^ε Pr[M(x′) ∈ S] + δ`` (and symmetrically) for every event ``S``.
    ``result.claimed_epsilon`` is the claim of ``measurement.map(d_in)`` at that δ: the map's
    own δ for ``approximate(max_divergence())``; for zCDP ρ the conversion
    ``ρ + 2√(ρ ln(1/δ))`` at ``delta`` (default 1e-6).

    Args:
        measurement: a measurement with scalar releases.
        x, x_prime: neighbouring inputs, ``d_in`` apart (not checked: the caller states it).
        samples: releases drawn per input (half choose the event, half test it).
        confidence: the probability that the bound holds, in (0, 1).
        delta: the δ at which to bound ε (zCDP measures only; default 1e-6).
        draw: ``draw(input, n)`` returning ``n`` i.i.d. releases of ``measurement(input)``,
            for a vectorised sampler; by default the measurement is invoked ``n`` times.
        selection_fraction: the share of samples used to choose the event.

    Raises:
        InvalidParameter: for ``samples < 4``, ``confidence`` outside (0, 1), a bad ``delta``
            or ``selection_fraction``, or a ``draw`` returning the wrong number of releases.
        NotImplementedForType: for an unsupported output measure or non-scalar releases.
        NotInDomain: if ``x`` or ``x_prime`` is not in the input domain (before any draw).
        FailedMap: if ``d_in`` is not a valid distance.
    """
    started = time.perf_counter()
    samples = check_int("samples", samples, min=4)
    if not (isinstance(confidence, float | int) and 0.0 < confidence < 1.0):
        raise InvalidParameter(f"confidence must be in (0, 1), got {confidence!r}")
    if delta is not None and not (isinstance(delta, float | int) and 0.0 < delta < 1.0):
        raise InvalidParameter(f"delta must be in (0, 1), got {delta!r}")
    if not (isinstance(selection_fraction, float) and 0.0 < selection_fraction < 1.0):
        raise InvalidParameter(f"selection_fraction must be in (0, 1), got {selection_fraction!r}")
    claimed_eps, claimed_delta = _claimed(measurement, d_in, delta)
    measurement.input_domain._normalize(x)
    measurement.input_domain._normalize(x_prime)
    draw_fn = draw if draw is not None else _default_draw(measurement)

    t0 = time.perf_counter()
    ya, yb = draw_fn(x, samples), draw_fn(x_prime, samples)
    sample_seconds = time.perf_counter() - t0
    if len(ya) != samples or len(yb) != samples:
        raise InvalidParameter(f"draw returned {len(ya)} and {len(yb)} releases, wanted {samples}")

    alpha = 1.0 - float(confidence)
    h = min(max(int(samples * selection_fraction), 1), samples - 1)
    feats = _features(ya, yb)
    ev = _select(feats, h, claimed_delta, alpha)
    fa, fb = next((fa, fb) for name, fa, fb, _ in feats if name == ev.feature)
    num, den = (fb, fa) if ev.swap else (fa, fb)
    n_test = samples - h
    hits = (_hits(num[h:], ev), _hits(den[h:], ev))
    p_lower, _ = clopper_pearson(hits[0], n_test, alpha / 2)
    _, q_upper = clopper_pearson(hits[1], n_test, alpha / 2)
    eps_lb = 0.0
    if p_lower - claimed_delta > 0.0:
        eps_lb = max(0.0, _arith.log_down(_arith.q(p_lower - claimed_delta) / _arith.q(q_upper)))
    return AuditResult(
        epsilon_lower=eps_lb,
        claimed_epsilon=claimed_eps,
        delta=claimed_delta,
        confidence=float(confidence),
        samples=samples,
        event=ev.describe(),
        hits=hits,
        n_test=n_test,
        p_lower=p_lower,
        q_upper=q_upper,
        sample_seconds=sample_seconds,
        seconds=time.perf_counter() - started,
    )


def assert_not_violated(
    measurement: Measurement[Any, Any, Any, Any],
    x: Any,
    x_prime: Any,
    d_in: Any,
    *,
    samples: int = 100_000,
    confidence: float = 0.999,
    delta: float | None = None,
    draw: Draw | None = None,
) -> AuditResult:
    """A pytest helper: audit ``measurement`` and raise if its privacy claim is refuted.

    A sound measurement raises with probability at most ``1 − confidence``.  Returns the
    :class:`AuditResult` so a test can also check the figures.

    >>> import opendp_lite.prelude as dp
    >>> from opendp_lite.audit import assert_not_violated
    >>> dp.enable_features("honest-but-curious")
    >>> const = dp.m.make_user_measurement(dp.atom_domain(T=int), dp.absolute_distance(T=int),
    ...     dp.max_divergence(), lambda x: 0, lambda d: 0.0)
    >>> assert_not_violated(const, 0, 1, d_in=1, samples=1000).epsilon_lower
    0.0

    Raises:
        PrivacyViolation: (an ``AssertionError``) if the audited lower bound exceeds the
            claimed ε; plus everything :func:`audit` raises.
    """
    result = audit(
        measurement,
        x,
        x_prime,
        d_in,
        samples=samples,
        confidence=confidence,
        delta=delta,
        draw=draw,
    )
    if result.violated:
        raise PrivacyViolation(result)
    return result
