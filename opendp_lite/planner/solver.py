"""The planner's solver: from statistics with accuracy targets to noise scales and a total loss.

A workload is turned into *units*, the noisy releases that are actually run: a count, a sum,
grouped counts or sums, a key release (threshold), a quantile.  With ``reuse=True`` units are
shared: every count and mean over the same rows uses one noisy count, a mean and a sum over
the same column and bounds one noisy sum, and a key release's noisy counts are the grouped
counts over the released keys (docs/proofs/planner.md).

Each unit's loss is a closed form of its scale (Δ/s for Laplace under ε-DP, Δ²/(2s²) for
Gaussian under ρ-zCDP, 2Δ/s and (2Δ/s)²/8 for the quantile's selection), and the total is
their sum (sequential composition).  A target bounds a unit's scale from above, so the least
total loss takes each unit at the largest scale its targets allow (the scale is found by
inverting the accuracy function of :mod:`opendp_lite.accuracy` and then checked against it).
Means couple a count and a sum; the count's scale is searched (one dimension per shared
count) and each sum takes the largest scale the mean then allows.

>>> from opendp_lite.planner.specs import Count, Rows, within
>>> plan = solve([Count("n", within(30.0))], measure="pure")
>>> round(plan.total, 4), plan.stats[0].achieved <= 30.0
(0.1015, True)
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from .. import _arith as ar
from ..accuracy import (
    accuracy_to_discrete_gaussian_scale,
    accuracy_to_discrete_laplacian_scale,
    discrete_gaussian_scale_to_accuracy,
    discrete_laplacian_scale_to_accuracy,
    gaussian_scale_to_accuracy,
)
from ..errors import InvalidParameter, NotImplementedForType
from .floats import FloatGrid, grid_noise_accuracy, grid_noise_max_scale
from .specs import Count, GroupedCount, GroupedSum, Mean, Quantile, Rows, Spec, Sum

__all__ = [
    "MEASURES",
    "Infeasible",
    "Solution",
    "StatResult",
    "Unit",
    "explain",
    "solve",
    "solve_budget",
]

#: the measures a plan is solved under: "pure" (ε-DP), "zcdp" (ρ-zCDP), "approx" ((ε, δ)-DP)
MEASURES = ("pure", "zcdp", "approx")


class Infeasible(InvalidParameter):
    """No plan meets the targets (within the budget); the message names the binding target
    and what would make it feasible."""

    def __init__(
        self, message: str, binding: str | None = None, needs: dict[str, Any] | None = None
    ):
        super().__init__(message)
        self.binding = binding
        self.needs = needs or {}


@dataclass
class Unit:
    """One noisy release of the plan: what it computes and its noise scale (data-free)."""

    key: tuple[Any, ...]
    kind: str  # count, sum, gcount, gsum, keys, quantile
    rows: Rows
    column: Any = None
    bounds: tuple[Any, Any] | None = None
    by: Any = None
    keys: tuple[Any, ...] | None = None
    q: float | None = None
    candidates: tuple[Any, ...] | None = None
    scale: float = math.inf
    threshold: int | None = None
    delta: float = 0.0
    release_size: int | None = None
    release_alpha: float | None = None
    keys_unit: tuple[Any, ...] | None = None  # the key release a unit over released keys uses

    @property
    def sensitivity(self) -> float:
        """Δ: how much one added or removed row moves the released vector (L1 = L2 here:
        one row is in one group)."""
        if self.kind in ("count", "gcount", "keys"):
            return 1.0
        if self.kind == "quantile":
            q = float(self.q or 0.0)
            return max(q, 1.0 - q)
        assert self.bounds is not None  # noqa: S101 - sums always carry bounds
        if self.kind == "gsum":  # the grouped sum's own stability map (its float relaxation)
            return _grouped_sum_stability(self.column, self.bounds)
        if isinstance(self.bounds[0], float):  # the float sum's own map (grid and rounding)
            return _float_sum_stability(self.bounds)
        return float(max(abs(self.bounds[0]), abs(self.bounds[1])))

    def describe(self) -> str:
        rows = "" if self.rows.everything else f" where {self.rows}"
        if self.kind == "count":
            return f"count{rows}"
        if self.kind == "sum":
            return f"sum({self.column}, {self.bounds}){rows}"
        if self.kind == "gcount":
            return f"count by {self.by}{rows}"
        if self.kind == "gsum":
            return f"sum({self.column}, {self.bounds}) by {self.by}{rows}"
        if self.kind == "keys":
            return f"keys of {self.by} (noisy counts){rows}"
        return f"quantile({self.column}, q={self.q}){rows}"


@lru_cache(maxsize=256)
def _grouped_sum_stability(column: Any, bounds: tuple[int, int]) -> float:
    """make_grouped_sum's map at one row (it sums on the float grid and pays its relaxation)."""
    from ..domains import dataframe_domain
    from ..metrics import symmetric_distance
    from ..transformations import make_grouped_sum, make_partition_by

    part = make_partition_by(dataframe_domain(), symmetric_distance(), "_key", ["_k"])
    t = part >> make_grouped_sum(part.output_domain, part.output_metric, column, bounds)
    return float(t.map(1))


@lru_cache(maxsize=256)
def _float_sum_stability(bounds: tuple[float, float]) -> float:
    """make_sum's map at one row on an unsized f64 vector in ``bounds`` (the release's chain)."""
    from ..domains import atom_domain, vector_domain
    from ..metrics import symmetric_distance
    from ..transformations import make_sum

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a size-limit warning is raised again at release
        t = make_sum(vector_domain(atom_domain(bounds=bounds, T="f64")), symmetric_distance())
    return float(t.map(1))


#: the grouped sum's size limit (make_grouped_sum's default)
_GROUPED_LIMIT = 1 << 40


def _rows_bound(spec: Sum | GroupedSum) -> int:
    """A public bound on the rows a float sum adds: ``max_rows``, or the sum's size limit
    (beyond which it saturates, so the interval is only claimed up to it)."""
    if isinstance(spec, GroupedSum):
        limit = _GROUPED_LIMIT
    else:
        from ..transformations.sum import default_size_limit

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            limit = default_size_limit("make_sum", "f64", *map(float, spec.bounds))
    if spec.max_rows is not None and spec.max_rows > limit:
        raise InvalidParameter(
            f"{spec.kind} {spec.name!r}: max_rows={spec.max_rows} exceeds the sum's size limit "
            f"{limit} (it saturates beyond it); narrow the bounds or split the data"
        )
    return spec.max_rows or limit


def _grid_of(spec: Spec) -> FloatGrid | None:
    """The float grid a sum is released on, or None for exact integer noise."""
    if isinstance(spec, GroupedSum):
        return FloatGrid.of(spec.bounds, integer=not spec.is_float)
    if isinstance(spec, Sum) and spec.is_float:
        return FloatGrid.of(spec.bounds, integer=False)
    return None


def value_accuracy(spec: Spec, scale: float, alpha: float, measure: str) -> float:
    """The stated half-width at level 1 − alpha of a count, sum or grouped value at ``scale``:
    the integer noise's accuracy, or for a float-grid sum the noise on the grid plus every
    rounding term (:class:`.floats.FloatGrid`)."""
    grid = _grid_of(spec)
    if grid is None:
        return noise_accuracy(scale, alpha, measure)
    assert isinstance(spec, (Sum, GroupedSum))  # noqa: S101 - _grid_of returned a grid
    return grid.half_width(grid_noise_accuracy(scale, alpha, measure), _rows_bound(spec))


def value_max_scale(spec: Spec, accuracy: float, alpha: float, measure: str) -> float:
    """The largest scale at which :func:`value_accuracy` is at most ``accuracy``."""
    grid = _grid_of(spec)
    if grid is None:
        return _max_scale(accuracy, alpha, measure)
    assert isinstance(spec, (Sum, GroupedSum))  # noqa: S101 - _grid_of returned a grid
    a = grid.noise_allowance(accuracy, _rows_bound(spec))
    return grid_noise_max_scale(a, alpha, measure) if a > 0 else 0.0


def _mean_sum_accuracy(spec: Mean, scale: float, alpha: float, measure: str) -> float:
    """a_S of a mean's sum: the integer noise's accuracy, or for float bounds the grid noise
    with the rounding terms that do not grow with the rows (those are :func:`_mean_c`)."""
    grid = _grid_of(spec)
    if grid is None:
        return noise_accuracy(scale, alpha, measure)
    return grid.half_width(grid_noise_accuracy(scale, alpha, measure), 0)


def _mean_sum_max_scale(spec: Mean, a_s: float, alpha: float, measure: str) -> float:
    grid = _grid_of(spec)
    if grid is None:
        return _max_scale(a_s, alpha, measure)
    a = grid.noise_allowance(a_s, 0)
    return grid_noise_max_scale(a, alpha, measure) if a > 0 else 0.0


def _mean_c(spec: Mean) -> float:
    """c: the float sum's error per row (0 for integer bounds)."""
    grid = _grid_of(spec)
    return 0.0 if grid is None else grid.per_row


def loss_of(unit: Unit, measure: str) -> float:
    """The unit's privacy loss (ε or ρ) at its scale, rounded up; ∞ at scale 0."""
    if unit.scale == math.inf:
        return 0.0
    if unit.scale <= 0:
        return math.inf
    d = ar.q(unit.sensitivity)
    s = ar.q(unit.scale)
    if unit.kind == "quantile":
        d = 2 * d
        return ar.up(d * d / s / s / 8) if measure == "zcdp" else ar.up(d / s)
    if measure == "zcdp":
        return ar.up(d * d / (2 * s * s))
    return ar.up(d / s)


def noise_accuracy(scale: float, alpha: float, measure: str) -> float:
    """a with Pr[|Z| >= a] <= alpha for the integer noise of a count or sum at ``scale``."""
    if scale == math.inf:
        return math.inf
    if measure == "zcdp":
        if scale >= _DG_LARGE:
            return _dg_tail_bound(scale, alpha)
        return discrete_gaussian_scale_to_accuracy(scale, alpha)
    return discrete_laplacian_scale_to_accuracy(scale, alpha)


#: above this scale the discrete Gaussian's accuracy is bounded in closed form (exact sums
#: over ~scale terms would be slow inside the search)
_DG_LARGE = 16.0


def _dg_tail_bound(scale: float, alpha: float) -> float:
    """⌈1 + scale·√2·erfc⁻¹(α)⌉ (with a 1e-9 relative margin): Pr[|Z| >= a] <= α for
    Z ~ 𝓝_ℤ(scale).  Each term e^{−i²/2σ²} (i >= 1) is at most ∫_{i−1}^{i} of the density's
    numerator, and the normaliser Σ_i e^{−i²/2σ²} >= σ√(2π) (Poisson summation), so
    Pr[|Z| >= m] <= erfc((m − 1)/(σ√2)) (docs/proofs/planner.md)."""
    return float(math.ceil(1 + gaussian_scale_to_accuracy(scale, alpha) * (1 + 1e-9)))


def _max_scale(accuracy: float, alpha: float, measure: str) -> float:
    """The largest scale (found by inversion, then checked) whose accuracy is <= accuracy."""
    if accuracy <= 0:
        return 0.0
    if measure == "zcdp":
        if accuracy < 1:  # the discrete Gaussian's interval is never tighter than ±1
            return 0.0
        big = (math.floor(accuracy) - 1) / (gaussian_scale_to_accuracy(1.0, alpha) * (1 + 2e-9))
        if big >= _DG_LARGE:
            s = big
        else:
            s = min(accuracy_to_discrete_gaussian_scale(accuracy, alpha), _DG_LARGE * (1 - 1e-12))
    else:
        s = accuracy_to_discrete_laplacian_scale(accuracy, alpha)
    while s > 0 and noise_accuracy(s, alpha, measure) > accuracy:
        s = s * (1 - 2**-20)
        if s < 1e-300:
            return 0.0
    return s


def quantile_accuracy(scale: float, n_candidates: int, alpha: float) -> float:
    """Rank slack t = scale·ln(|C|/α): the selected candidate's score exceeds the best score
    by more than t with probability at most α (union bound over the candidates, for the
    exponential and the Gumbel selection alike)."""
    if scale == math.inf:
        return math.inf
    return ar.mul_up(scale, ar.log_up(ar.q(n_candidates) / ar.q(alpha)))


def _quantile_max_scale(t: float, n_candidates: int, alpha: float) -> float:
    s = ar.down(ar.q(t) / ar.q(ar.log_up(ar.q(n_candidates) / ar.q(alpha))))
    while s > 0 and quantile_accuracy(s, n_candidates, alpha) > t:
        s = s * (1 - 2**-40)
    return s


def threshold_for(scale: float, delta: float) -> int:
    """The least integer threshold whose key release (``make_laplace_threshold`` at
    ``scale``, one row changing one key's count by one) has δ <= ``delta``."""
    if scale <= 0:
        return 1
    tau = 1 + max(0, math.ceil(scale * math.log(1 / (delta * (1 + math.exp(-1 / scale))))))
    m = _threshold_measurement(scale, tau)
    while m.map((1, 1, 1))[1] > delta:
        tau += 1
        m = _threshold_measurement(scale, tau)
    while tau > 1 and _threshold_measurement(scale, tau - 1).map((1, 1, 1))[1] <= delta:
        tau -= 1
    return tau


def _threshold_measurement(scale: float, tau: int) -> Any:
    from ..domains import atom_domain, map_domain
    from ..measurements.threshold import make_laplace_threshold
    from ..metrics import absolute_distance, l01inf_distance

    return make_laplace_threshold(
        map_domain(atom_domain(T=str), atom_domain(T="i64")),
        l01inf_distance(absolute_distance(T="i64")),
        scale,
        tau,
    )


@dataclass
class StatResult:
    """One statistic in a solved plan: its units, achieved half-width and loss share."""

    spec: Spec
    units: list[tuple[Any, ...]]
    achieved: float
    target: float
    alpha: float
    loss: float = 0.0  # its share: shared units split evenly among their users

    @property
    def ratio(self) -> float:
        """achieved / target (<= 1 when the target is met)."""
        return self.achieved / self.target


@dataclass
class Solution:
    """The solved workload: units with scales, per-statistic results and the total loss."""

    measure: str
    delta: float
    units: dict[tuple[Any, ...], Unit]
    stats: list[StatResult]
    total: float
    reuse: bool = True
    notes: list[str] = field(default_factory=list)


# -- building units ---------------------------------------------------------------------------


def _units_of(spec: Spec, reuse: bool) -> list[Unit]:
    """The units a statistic needs, keyed so that equal work has equal keys under reuse."""
    tag: tuple[Any, ...] = () if reuse else (spec.name,)
    rows = spec.rows
    if isinstance(spec, GroupedSum):
        gsum = Unit(
            ("gsum", rows, spec.by, spec.keys, spec.column, spec.bounds, *tag),
            "gsum",
            rows,
            column=spec.column,
            bounds=spec.bounds,
            by=spec.by,
            keys=spec.keys,
        )
        if spec.keys is None:
            keys = Unit(("keys", rows, spec.by, *tag), "keys", rows, by=spec.by)
            gsum.keys_unit = keys.key
            return [keys, gsum]
        return [gsum]
    if isinstance(spec, GroupedCount):
        if spec.keys is None:
            keys = Unit(("keys", rows, spec.by, *tag), "keys", rows, by=spec.by)
            if reuse:
                return [keys]
            return [
                keys,
                Unit(
                    ("gcount", rows, spec.by, None, *tag),
                    "gcount",
                    rows,
                    by=spec.by,
                    keys_unit=keys.key,
                ),
            ]
        return [
            Unit(
                ("gcount", rows, spec.by, spec.keys, *tag),
                "gcount",
                rows,
                by=spec.by,
                keys=spec.keys,
            )
        ]

    # a mean's sum and count are keyed as a Sum's and a Count's over the same rows, so they
    # are shared with them (one unit per key)
    def sum_unit(s: Sum | Mean) -> Unit:  # the one spelling of a sum's key
        return Unit(
            ("sum", rows, s.column, s.bounds, *tag), "sum", rows, column=s.column, bounds=s.bounds
        )

    count_unit = Unit(("count", rows, *tag), "count", rows)
    if isinstance(spec, Mean):
        return [sum_unit(spec), count_unit]
    if isinstance(spec, Sum):
        return [sum_unit(spec)]
    if isinstance(spec, Count):
        return [count_unit]
    if isinstance(spec, Quantile):
        return [
            Unit(
                ("quantile", rows, spec.column, spec.q, spec.candidates, *tag),
                "quantile",
                rows,
                column=spec.column,
                q=spec.q,
                candidates=spec.candidates,
            )
        ]
    raise NotImplementedForType(f"the planner does not know {type(spec).__name__}")


def _check_measure(measure: str, delta: float | None, specs: list[Spec]) -> float:
    if measure not in MEASURES:
        raise InvalidParameter(f"measure must be one of {MEASURES}, got {measure!r}")
    released = [s.name for s in specs if isinstance(s, GroupedCount) and s.keys is None]
    if measure != "approx":
        if released:
            raise NotImplementedForType(
                f"{released}: keys released from the data cost δ (a threshold); plan under "
                "measure='approx' with a delta, or declare the public keys"
            )
        return 0.0
    if delta is None or not 0 < delta < 1:
        raise InvalidParameter(f"measure='approx' needs 0 < delta < 1, got {delta!r}")
    return float(delta)


# -- solving ----------------------------------------------------------------------------------


def _mean_parts(spec: Mean, measure: str) -> tuple[float, float, float, int]:
    """(a, α/2, M, n_min) of a mean: the half-width, each part's level, the bound, rows."""
    what = f"mean {spec.name!r}"
    if spec.min_rows is None or spec.min_rows < 1:
        raise InvalidParameter(
            f"{what}: a mean needs min_rows, a public lower bound on the number of rows it "
            "averages (a public size, or a count released earlier); without it the noisy count "
            "can be near zero and no interval holds"
        )
    lb = spec.target.lower_bound
    if spec.target.relative and lb is None:
        spec.target.absolute(what)  # raises, naming the fix
    a = spec.target.absolute(what)
    return (
        a,
        spec.target.alpha / 2,
        float(max(abs(spec.bounds[0]), abs(spec.bounds[1]))),
        int(spec.min_rows),
    )


def _mean_sum_allowance(a: float, M: float, n_min: int, a_n: float, c: float = 0.0) -> float:
    """a_S with (a_S + (M + c)·a_N)/(n_min − a_N) + c <= a, rounded down (negative:
    impossible)."""
    if a_n >= n_min:
        return -1.0
    return ar.down(
        (ar.q(a) - ar.q(c)) * (ar.q(n_min) - ar.q(a_n)) - (ar.q(M) + ar.q(c)) * ar.q(a_n)
    )


def mean_half_width(a_s: float, a_n: float, M: float, rows: float, c: float = 0.0) -> float:
    """(a_S + (M + c)·a_N)/(rows − a_N) + c, rounded up: the mean's half-width when the
    count is at least ``rows`` (∞ if rows <= a_N); c is the float sum's error per row (0 for
    integer sums)."""
    if rows <= a_n:
        return math.inf
    num = ar.q(a_s) + (ar.q(M) + ar.q(c)) * ar.q(a_n)
    return ar.up(num / (ar.q(rows) - ar.q(a_n)) + ar.q(c))


def _direct_bounds(
    specs: list[Spec], measure: str, reuse: bool, delta_each: float
) -> tuple[dict[tuple[Any, ...], Unit], dict[tuple[Any, ...], float], list[tuple[Mean, Any, Any]]]:
    units: dict[tuple[Any, ...], Unit] = {}
    smax: dict[tuple[Any, ...], float] = {}
    means: list[tuple[Mean, Any, Any]] = []

    def cap(key: tuple[Any, ...], s: float) -> None:
        smax[key] = min(smax.get(key, math.inf), s)

    for spec in specs:
        us = _units_of(spec, reuse)
        for u in us:
            units.setdefault(u.key, u)
            smax.setdefault(u.key, math.inf)
        what = f"{spec.kind} {spec.name!r}"
        alpha = spec.target.alpha / spec.groups
        if isinstance(spec, Mean):
            means.append((spec, us[1].key, us[0].key))
            _mean_parts(spec, measure)
            continue
        a = spec.target.absolute(what)
        if isinstance(spec, Quantile):
            cap(us[0].key, _quantile_max_scale(a, len(spec.candidates), spec.target.alpha))
            continue
        if isinstance(spec, GroupedCount) and spec.keys is None:
            keys = units[us[0].key]
            r_alpha = min(keys.release_alpha or 1.0, spec.target.alpha)
            keys.release_alpha = r_alpha
            keys.release_size = min(keys.release_size or 2**62, int(spec.release_size or 0))
            keys.delta = delta_each
            value = us[-1]
            if isinstance(spec, GroupedSum) or not reuse:
                cap(value.key, value_max_scale(spec, a, alpha, measure))
            else:
                cap(keys.key, _max_scale(a, alpha, measure))
            continue
        cap(us[-1].key, value_max_scale(spec, a, alpha, measure))
    # key releases: the threshold must let groups of release_size rows through
    for key, u in units.items():
        if u.kind == "keys":
            cap(key, _keys_max_scale(u, measure))
    return units, smax, means


def _keys_max_scale(u: Unit, measure: str) -> float:
    """The largest scale at which a group of ``release_size`` rows is released with
    probability >= 1 − α: threshold(scale, δ) + a(scale, 2α) <= release_size."""
    size, alpha = int(u.release_size or 0), float(u.release_alpha or 0.05)

    def ok(s: float) -> bool:
        return threshold_for(s, u.delta) + noise_accuracy(s, min(2 * alpha, 0.999), measure) <= size

    hi = float(max(size, 1))
    if ok(hi):
        return hi
    lo = 0.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo


def _solve_count_group(
    count_key: tuple[Any, ...],
    s_cap: float,
    linked: list[tuple[Mean, Any]],
    sum_caps: dict[tuple[Any, ...], float],
    measure: str,
    units: dict[tuple[Any, ...], Unit],
) -> tuple[float, dict[tuple[Any, ...], float]]:
    """The count's scale (<= s_cap) minimising count + linked sums' loss, and the sums' scales."""

    def sums_at(s_n: float) -> dict[tuple[Any, ...], float] | None:
        out: dict[tuple[Any, ...], float] = {}
        for spec, sum_key in linked:
            a, half, M, n_min = _mean_parts(spec, measure)
            a_n = noise_accuracy(s_n, half, measure)
            a_s = _mean_sum_allowance(a, M, n_min, a_n, _mean_c(spec))
            if a_s <= 0:
                return None
            s = _mean_sum_max_scale(spec, a_s, half, measure)
            if s <= 0:
                return None
            out[sum_key] = min(out.get(sum_key, sum_caps.get(sum_key, math.inf)), s)
        return out

    def total(s_n: float) -> float:
        sums = sums_at(s_n)
        if sums is None:
            return math.inf
        t = loss_of(replace(units[count_key], scale=s_n), measure)
        for k, s in sums.items():
            t += loss_of(replace(units[k], scale=s), measure)
        return t

    if not linked:
        return s_cap, {}
    # the count's accuracy must stay below every linked mean's min_rows: s_n < max n_min
    hi = min(s_cap, float(max(_mean_parts(spec, measure)[3] for spec, _ in linked)))
    grid = [hi * 10 ** (-8 * i / 240) for i in range(241)]
    vals = [total(s) for s in grid]
    best = min(range(len(grid)), key=lambda i: vals[i])
    if vals[best] == math.inf:
        return 0.0, {}
    lo_s = grid[min(best + 1, len(grid) - 1)]
    hi_s = grid[max(best - 1, 0)]
    best_s, best_v = grid[best], vals[best]
    for _ in range(40):  # golden section on [lo_s, hi_s], keeping the best seen
        m1 = lo_s + 0.382 * (hi_s - lo_s)
        m2 = lo_s + 0.618 * (hi_s - lo_s)
        v1, v2 = total(m1), total(m2)
        for s, v in ((m1, v1), (m2, v2)):
            if v < best_v:
                best_s, best_v = s, v
        if v1 <= v2:
            hi_s = m2
        else:
            lo_s = m1
    sums = sums_at(best_s)
    assert sums is not None  # noqa: S101 - best_v is finite
    return best_s, sums


def solve(
    specs: list[Spec], measure: str = "pure", delta: float | None = None, reuse: bool = True
) -> Solution:
    """The least total loss (ε, ρ, or ε with δ fixed) meeting every target.

    Raises:
        InvalidParameter: a bad spec (relative target without a bound, mean without
            ``min_rows``), or :class:`Infeasible` when a target cannot be met at any loss.
        NotImplementedForType: released keys under a measure without δ.
    """
    if not specs:
        raise InvalidParameter("give at least one statistic")
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise InvalidParameter(f"statistic names must be unique, got {names}")
    dlt = _check_measure(measure, delta, specs)
    n_keys = len({u.key for s in specs for u in _units_of(s, reuse) if u.kind == "keys"})
    delta_each = dlt / n_keys if n_keys else 0.0
    units, smax, means = _direct_bounds(specs, measure, reuse, delta_each)
    linked: dict[tuple[Any, ...], list[tuple[Mean, Any]]] = {}
    for spec, count_key, sum_key in means:
        linked.setdefault(count_key, []).append((spec, sum_key))
    scales = dict(smax)
    for count_key, group in linked.items():
        s_n, sums = _solve_count_group(count_key, smax[count_key], group, smax, measure, units)
        if s_n <= 0:
            spec = group[0][0]
            raise Infeasible(
                f"mean {spec.name!r} cannot meet ±{spec.target.absolute(spec.name):.6g}: with "
                f"min_rows={spec.min_rows} the count's noise alone leaves no room. Needs: a "
                "coarser target, narrower bounds, or a larger min_rows",
                binding=spec.name,
                needs={"coarser_target": True, "narrower_bounds": True, "larger_min_rows": True},
            )
        scales[count_key] = s_n
        scales.update(sums)
    for key, u in units.items():
        u.scale = scales[key]
        if u.scale <= 0:
            who = [s.name for s in specs if key in [v.key for v in _units_of(s, reuse)]]
            raise Infeasible(
                f"{who[0]!r}: no noise scale meets its target ({u.describe()}): the integer "
                "noise cannot be that tight at that level. Needs: a coarser target or a lower "
                "level" + (", or a larger release_size" if u.kind == "keys" else ""),
                binding=who[0],
                needs={"coarser_target": True},
            )
        if u.kind == "keys":
            u.threshold = threshold_for(u.scale, u.delta)
    return _evaluate(specs, units, measure, dlt, reuse)


def achieved_of(
    spec: Spec, units: dict[tuple[Any, ...], Unit], keys: list[tuple[Any, ...]], measure: str
) -> tuple[float, float]:
    """(achieved half-width, target half-width) of a statistic at its units' scales."""
    what = f"{spec.kind} {spec.name!r}"
    alpha = spec.target.alpha / spec.groups
    if isinstance(spec, Mean):
        a, half, M, n_min = _mean_parts(spec, measure)
        a_s = _mean_sum_accuracy(spec, units[keys[0]].scale, half, measure)
        a_n = noise_accuracy(units[keys[1]].scale, half, measure)
        return mean_half_width(a_s, a_n, M, n_min, _mean_c(spec)), a
    a = spec.target.absolute(what)
    u = units[keys[-1]]
    if isinstance(spec, Quantile):
        return quantile_accuracy(u.scale, len(spec.candidates), spec.target.alpha), a
    return value_accuracy(spec, u.scale, alpha, measure), a


def _evaluate(
    specs: list[Spec], units: dict[tuple[Any, ...], Unit], measure: str, delta: float, reuse: bool
) -> Solution:
    users: dict[tuple[Any, ...], int] = {}
    per: list[list[tuple[Any, ...]]] = []
    for spec in specs:
        ks = [u.key for u in _units_of(spec, reuse)]
        per.append(ks)
        for k in ks:
            users[k] = users.get(k, 0) + 1
    stats = []
    for spec, ks in zip(specs, per, strict=True):
        achieved, target = achieved_of(spec, units, ks, measure)
        share = sum(loss_of(units[k], measure) / users[k] for k in ks)
        stats.append(StatResult(spec, ks, achieved, target, spec.target.alpha, share))
    total = 0.0  # added in release order (key releases first), rounding up, as the accountant
    for u in sorted(units.values(), key=lambda u: u.kind != "keys"):
        total = ar.add_up(total, loss_of(u, measure))
    return Solution(measure, delta, units, stats, total, reuse)


def _scaled_specs(specs: list[Spec], factor: float) -> list[Spec]:
    return [replace(s, target=s.target.scaled(factor)) for s in specs]


def solve_budget(
    specs: list[Spec],
    budget: float,
    measure: str = "pure",
    delta: float | None = None,
    reuse: bool = True,
) -> tuple[Solution, float]:
    """For a total ``budget`` (ε or ρ; δ as given), the plan whose worst achieved/target
    ratio is least, and that ratio (<= 1: every target met).

    Every target is scaled by one factor f and the least loss is found for each f; the loss
    decreases in f, so the least f whose loss fits is found by bisection.  At the optimum of
    the worst ratio all ratios can be brought to one common f, so this is optimal for it.

    Raises:
        Infeasible: if no factor up to 2^40 fits the budget.
    """
    if not (isinstance(budget, (int, float)) and budget > 0 and math.isfinite(budget)):
        raise InvalidParameter(f"budget must be finite and > 0, got {budget!r}")

    def fits(f: float) -> Solution | None:
        try:
            sol = solve(_scaled_specs(specs, f), measure, delta, reuse)
        except Infeasible:
            return None
        return sol if sol.total <= budget else None

    lo, hi = 2.0**-40, 1.0
    while fits(hi) is None:
        lo, hi = hi, hi * 2
        if hi > 2**40:
            raise Infeasible(
                f"no plan fits the budget {budget!r} even with every target 2^40 times coarser "
                "(released keys need their release_size whatever the budget): raise the budget "
                "or the release_size",
                needs={"more_budget": True},
            )
    for _ in range(50):
        mid = math.sqrt(lo * hi)
        if fits(mid) is None:
            lo = mid
        else:
            hi = mid
        if hi / lo < 1 + 1e-6:
            break
    best = fits(hi)
    assert best is not None  # noqa: S101 - hi fits by the loop invariant
    # report against the original targets
    for st, orig in zip(best.stats, specs, strict=True):
        st.target = (
            orig.target.absolute(orig.name)
            if not isinstance(orig, Mean)
            else (_mean_parts(orig, measure)[0])
        )
        st.spec = orig
    worst = max(st.ratio for st in best.stats)
    return best, worst


def explain(
    specs: list[Spec], budget: float, measure: str = "pure", delta: float | None = None
) -> Infeasible:
    """Why the targets do not fit ``budget``: the binding target and what it would need."""
    need = solve(specs, measure, delta)
    top = max(need.stats, key=lambda st: st.loss)
    others = [s for s in specs if s.name != top.spec.name]
    rest = solve(others, measure, delta).total if others else 0.0
    if rest >= budget:
        coarser = f"coarser targets elsewhere too (without it the rest needs {rest:.6g})"
    else:
        lo, hi = 1.0, 2.0
        while True:
            trial = [*others, replace(top.spec, target=top.spec.target.scaled(hi))]
            if solve(trial, measure, delta).total <= budget or hi > 2**30:
                break
            lo, hi = hi, hi * 2
        for _ in range(30):
            mid = (lo + hi) / 2
            trial = [*others, replace(top.spec, target=top.spec.target.scaled(mid))]
            if solve(trial, measure, delta).total <= budget:
                hi = mid
            else:
                lo = mid
        coarser = f"a target {hi:.3g}× coarser (±{top.target * hi:.6g})"
    kind = top.spec.kind
    bound = ", narrower bounds" if kind in ("sum", "mean", "grouped_sum") else ""
    size = (
        ", a larger release_size"
        if isinstance(top.spec, GroupedCount) and top.spec.keys is None
        else ""
    )
    rows = ", a larger min_rows" if kind == "mean" else ""
    return Infeasible(
        f"the targets need a total loss of {need.total:.6g}, over the budget {budget:.6g}. The "
        f"binding target is {top.spec.name!r} ({kind}, ±{top.target:.6g} at "
        f"{top.spec.target.level:.3g}), which takes {top.loss:.6g} of it. It would need: a "
        f"budget of {need.total:.6g}, or {coarser}{bound}{size}{rows}",
        binding=top.spec.name,
        needs={"budget": need.total},
    )
