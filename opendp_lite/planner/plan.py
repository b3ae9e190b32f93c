"""The plan object: review it (summary, plot, JSON) before any data is touched, then release.

>>> import opendp_lite.prelude as dp
>>> from opendp_lite.planner import Count, Plan, Rows, within
>>> plan = Plan.minimize([Count("adults", within(20.0), rows=Rows("age", ">=", 18))])
>>> round(plan.total, 4)
0.1535
>>> Plan.from_json(plan.to_json()).total == plan.total
True
>>> out = plan.release({"age": list(range(100))})
>>> lo, hi = out["adults"].interval
>>> hi - lo <= 40.0, out.spent <= plan.total
(True, True)
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import InvalidParameter
from . import consistency as _cons
from .solver import (
    Infeasible,
    Solution,
    Unit,
    _evaluate,
    _mean_c,
    _mean_sum_accuracy,
    _units_of,
    explain,
    mean_half_width,
    noise_accuracy,
    quantile_accuracy,
    solve,
    solve_budget,
    threshold_for,
    value_accuracy,
)
from .specs import Count, GroupedCount, GroupedSum, Mean, Quantile, Spec, Sum, spec_from_dict

__all__ = ["Estimate", "Plan", "PlanRelease", "PlanSummary"]

_FORMAT = "opendp_lite.plan/1"


@dataclass(frozen=True)
class Estimate:
    """A released value with its half-width at ``level`` (for a quantile: rank slack in rows;
    for a grouped statistic, ``value`` and ``half_width`` hold per key)."""

    value: Any
    half_width: Any
    level: float

    @property
    def interval(self) -> Any:
        """``(value − h, value + h)``, per key for a grouped statistic."""
        if isinstance(self.value, dict):
            return {k: (v - self.half_width, v + self.half_width) for k, v in self.value.items()}
        return (self.value - self.half_width, self.value + self.half_width)


@dataclass
class PlanRelease:
    """The released statistics, by name, with the context that charged them."""

    estimates: dict[str, Estimate]
    spent: Any
    context: Any
    consistent: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Estimate:
        return self.estimates[name]


class PlanSummary:
    """The plan as a table, in the layout of ``Context.summary()``."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan

    def __repr__(self) -> str:
        return str(self)

    def __str__(self) -> str:
        from ..context.summary import _short

        sol = self.plan.solution
        head = ("#", "statistic", "privacy loss", "mechanism", "scale", "accuracy", "target")
        table = [head]
        users: dict[tuple[Any, ...], list[str]] = {}
        for st in sol.stats:
            for k in st.units:
                users.setdefault(k, []).append(st.spec.name)
        for i, st in enumerate(sol.stats, 1):
            units = [sol.units[k] for k in st.units]
            shared = any(len(users[k]) > 1 for k in st.units)
            scales = [u.scale for u in units]
            mech = _mechanism(units, sol.measure) + (" (shared)" if shared else "")
            table.append(
                (
                    str(i),
                    f"{st.spec.kind} {st.spec.name}",
                    _short(st.loss),
                    mech,
                    _short(scales[0] if len(scales) == 1 else scales),
                    f"±{_short(st.achieved)} at {st.spec.target.level:g}",
                    f"±{_short(st.target)}",
                )
            )
        widths = [max(len(row[j]) for row in table) for j in range(len(head))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in table]
        lines.insert(1, "  ".join("-" * w for w in widths))
        unit = {"pure": "ε", "zcdp": "ρ", "approx": "ε"}[sol.measure]
        tail = f"; δ: {_short(sol.delta)}" if sol.measure == "approx" else ""
        lines.append(
            f"total: {unit} = {_short(sol.total)}{tail}; budget: {_short(self.plan.budget)}"
        )
        for note in self.plan.notes:
            lines.append(note)
        return "\n".join(line.rstrip() for line in lines)


def _mechanism(units: list[Unit], measure: str) -> str:
    names = []
    for u in units:
        if u.kind == "quantile":
            names.append("gumbel" if measure == "zcdp" else "exponential")
        elif u.kind == "keys":
            names.append(f"laplace threshold {u.threshold}")
        else:
            names.append("gaussian" if measure == "zcdp" else "laplace")
    return " + ".join(names)


class Plan:
    """A solved workload: noise scales, thresholds and the total loss; no data.

    Build with :meth:`minimize` (least loss meeting every target) or :meth:`maximize` (for
    a budget, the least worst achieved/target ratio).
    """

    def __init__(
        self,
        specs: list[Spec],
        solution: Solution,
        budget: float | None = None,
        worst: float | None = None,
    ) -> None:
        self.specs = list(specs)
        self.solution = solution
        self.budget = budget
        self.worst = worst if worst is not None else max(s.ratio for s in solution.stats)
        self.notes = _consistency_notes(self.specs, solution)

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def minimize(
        cls,
        specs: list[Spec],
        measure: str = "pure",
        delta: float | None = None,
        budget: float | None = None,
        reuse: bool = True,
    ) -> Plan:
        """The least total loss meeting every target; with ``budget``, refuse (naming the
        binding target and what it needs) if that least loss exceeds it.

        Raises:
            Infeasible: no plan meets the targets (within ``budget``).
        """
        sol = solve(specs, measure, delta, reuse)
        if budget is not None and sol.total > budget:
            raise explain(specs, budget, measure, delta)
        return cls(specs, sol, budget)

    @classmethod
    def maximize(
        cls,
        specs: list[Spec],
        budget: float,
        measure: str = "pure",
        delta: float | None = None,
        reuse: bool = True,
    ) -> Plan:
        """For ``budget``, the split with the least worst achieved/target ratio."""
        sol, worst = solve_budget(specs, budget, measure, delta, reuse)
        return cls(specs, sol, budget, worst)

    @property
    def total(self) -> float:
        """The total loss: ε (pure, approx) or ρ (zCDP)."""
        return self.solution.total

    @property
    def measure(self) -> str:
        return self.solution.measure

    def summary(self) -> PlanSummary:
        """The plan as a table (statistic, loss share, mechanism, scale, accuracy, target)."""
        return PlanSummary(self)

    # -- serialisation -----------------------------------------------------------------------
    def to_json(self) -> str:
        """The plan as JSON: the statistics and the noise scales.  Losses, thresholds and
        accuracies are recomputed from these when read back."""
        sol = self.solution
        doc = {
            "format": _FORMAT,
            "measure": sol.measure,
            "delta": sol.delta,
            "reuse": sol.reuse,
            "budget": self.budget,
            "specs": [s.to_dict() for s in self.specs],
            "scales": [u.scale for u in sol.units.values()],
            "thresholds": [u.threshold for u in sol.units.values()],
        }
        return json.dumps(doc)

    @classmethod
    def from_json(cls, text: str) -> Plan:
        """Read a plan back.  The document is untrusted: every loss is recomputed from the
        scales, each threshold must be at least the one δ needs, and every target must hold.

        Raises:
            InvalidParameter: a malformed document, or a threshold below what δ needs.
            Infeasible: if the document's scales do not meet its targets.
        """
        doc = json.loads(text)
        if not isinstance(doc, dict) or doc.get("format") != _FORMAT:
            raise InvalidParameter(f"not a plan document (format {_FORMAT!r})")
        specs = [spec_from_dict(d) for d in doc["specs"]]
        measure, reuse = str(doc["measure"]), bool(doc["reuse"])
        delta = float(doc["delta"])
        ref = solve(specs, measure, delta if measure == "approx" else None, reuse)
        units = ref.units
        scales, thresholds = doc["scales"], doc["thresholds"]
        if len(scales) != len(units) or len(thresholds) != len(units):
            raise InvalidParameter("the plan document's scales do not match its statistics")
        for u, s, t in zip(units.values(), scales, thresholds, strict=True):
            if not isinstance(s, (int, float)) or not 0 < s < math.inf:
                raise InvalidParameter(f"bad scale {s!r} in the plan document")
            u.scale = float(s)
            if u.kind == "keys":
                need = threshold_for(u.scale, u.delta)
                if not isinstance(t, int) or t < need:
                    raise InvalidParameter(
                        f"the document's threshold {t!r} for {u.describe()} is below the {need} "
                        f"that δ = {u.delta:g} needs at scale {u.scale:g}"
                    )
                u.threshold = t
                alpha = min(2 * float(u.release_alpha or 0.05), 0.999)
                if t + noise_accuracy(u.scale, alpha, measure) > int(u.release_size or 0):
                    raise Infeasible(
                        f"the plan document's key release ({u.describe()}) does not release "
                        f"groups of {u.release_size} rows at the stated level"
                    )
        sol = _evaluate(specs, units, measure, ref.delta, reuse)
        bad = [st.spec.name for st in sol.stats if st.achieved > st.target]
        if bad:
            raise Infeasible(f"the plan document's scales do not meet the targets of {bad}")
        budget = doc.get("budget")
        if budget is not None and sol.total > float(budget):
            raise InvalidParameter("the plan document's total loss exceeds its budget")
        return cls(specs, sol, None if budget is None else float(budget))

    # -- the picture -------------------------------------------------------------------------
    def curves(
        self, factors: tuple[float, ...] = (0.5, 0.63, 0.79, 1.0, 1.26, 1.59, 2.0)
    ) -> dict[str, list[tuple[float, float]]]:
        """Per statistic: (total loss, achieved half-width) as its own target alone is scaled
        by each factor, the others held; factor 1 is the plan's point."""
        sol = self.solution
        out: dict[str, list[tuple[float, float]]] = {}
        for i, spec in enumerate(self.specs):
            pts = []
            for f in factors:
                trial = list(self.specs)
                trial[i] = replace(spec, target=spec.target.scaled(f))
                try:
                    s = solve(trial, sol.measure, sol.delta or None, sol.reuse)
                except Infeasible:
                    continue
                pts.append((s.total, s.stats[i].achieved))
            out[spec.name] = pts
        return out

    def plot(self, path: str | None = None) -> Any:
        """Accuracy against total loss for each statistic, the plan's point marked.

        Needs matplotlib (an optional dependency).  Returns the figure; saves it to ``path``.

        Raises:
            ImportError: if matplotlib is not installed (names the package to install).
        """
        try:
            import matplotlib.pyplot as plt
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("plan.plot() needs matplotlib: pip install matplotlib") from e
        curves = self.curves()
        n = len(curves)
        cols = min(4, n)
        rows = math.ceil(n / cols)
        fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.6 * rows), squeeze=False)
        unit = "ρ" if self.measure == "zcdp" else "ε"
        for ax, st in zip(axes.flat, self.solution.stats, strict=False):
            pts = curves[st.spec.name]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "-o", ms=3)
            ax.plot([self.total], [st.achieved], "r*", ms=10)
            ax.axhline(st.target, color="grey", lw=0.8, ls="--")
            ax.set_title(f"{st.spec.kind} {st.spec.name}", fontsize=8)
            ax.set_xlabel(f"total {unit}", fontsize=7)
            ax.set_ylabel(f"± at {st.spec.target.level:g}", fontsize=7)
            ax.tick_params(labelsize=6)
        for ax in list(axes.flat)[n:]:
            ax.axis("off")
        fig.tight_layout()
        if path is not None:
            fig.savefig(path, dpi=110)
        return fig

    # -- release -----------------------------------------------------------------------------
    def release(self, data: Any, contributions: int = 1) -> PlanRelease:
        """Run the plan on ``data`` (a pandas frame, a dict of columns, or a Polars
        (Lazy)Frame, collected to pandas first) under one Context whose budget is the plan's
        total; returns every statistic with its error bar.

        Raises:
            InvalidParameter: a column the plan reads is missing or not of an integer type
                where integer sums are planned (checked on the schema, before any release).
            BudgetExceeded: if the accountant's loss would exceed the plan's total (it
                cannot, the plan's total being the sum of the same maps).
        """
        from ..context import Context, unit_of
        from ..context import loss_of as ctx_loss

        sol = self.solution
        data = _as_frame(data)
        if sol.measure == "pure":
            budget = ctx_loss(epsilon=sol.total)
        elif sol.measure == "zcdp":
            budget = ctx_loss(rho=sol.total)
        else:
            budget = ctx_loss(epsilon=sol.total, delta=sol.delta)
        ctx = Context.compositor(
            data=data, privacy_unit=unit_of(contributions=contributions), privacy_loss=budget
        )
        schema = dict(getattr(ctx, "schema", None) or {})
        space = (ctx.accountant.input_domain, ctx.accountant.input_metric)
        _check_schema(sol, schema)
        out: dict[tuple[Any, ...], Any] = {}
        order = sorted(sol.units.values(), key=lambda u: u.kind != "keys")
        released_keys: dict[tuple[Any, ...], list[Any]] = {}
        for u in order:
            keys = u.keys
            if u.kind in ("gcount", "gsum") and keys is None:
                keys = tuple(released_keys[_keys_of(u, sol)])
                if not keys:
                    out[u.key] = {}
                    continue
            m = _measurement(u, keys, sol.measure, space, schema)
            value = ctx(m)
            if u.kind in ("gcount", "gsum"):
                value = {k: _py(v) for k, v in zip(keys or (), list(value), strict=True)}
            elif u.kind == "keys":
                value = {k: _py(v) for k, v in dict(value).items()}
                released_keys[u.key] = sorted(value, key=repr)
            else:
                value = _py(value)
            out[u.key] = value
        spent = ctx.current_privacy_loss()
        estimates = {st.spec.name: _estimate(st.spec, st.units, sol, out) for st in sol.stats}
        return PlanRelease(estimates, spent, ctx, _consistent(self.specs, sol, estimates))


def _as_frame(data: Any) -> Any:
    """A dict of columns or a Polars (Lazy)Frame as a pandas frame: the data owner's call, at
    the data boundary (a LazyFrame is collected here; its schema types carry over)."""
    import importlib

    if isinstance(data, dict):
        pd: Any = importlib.import_module("pandas")
        return pd.DataFrame(data)
    mod = type(data).__module__.partition(".")[0]
    if mod == "polars" and type(data).__name__ in ("LazyFrame", "DataFrame"):
        frame = data.collect() if type(data).__name__ == "LazyFrame" else data
        return frame.to_pandas()
    return data


def _py(v: Any) -> Any:
    return v.item() if hasattr(v, "item") else v


def _keys_of(u: Unit, sol: Solution) -> tuple[Any, ...]:
    assert u.keys_unit is not None  # noqa: S101 - set for every unit over released keys
    return u.keys_unit


_INT_TYPES = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")


def _check_schema(sol: Solution, schema: dict[Any, Any]) -> None:
    for u in sol.units.values():
        cols = [c for c in (u.column, u.by, u.rows.column) if c is not None]
        for c in cols:
            if c not in schema:
                raise InvalidParameter(f"the plan reads column {c!r}, which the data lacks")
        if u.kind not in ("sum", "gsum"):
            continue
        assert u.bounds is not None  # noqa: S101 - sums carry bounds
        if isinstance(u.bounds[0], float):
            if schema[u.column] != "f64":
                raise InvalidParameter(
                    f"the plan sums column {u.column!r} with float bounds, but its type is "
                    f"{schema[u.column]!r}: cast it to f64, or give integer bounds for an "
                    "integer column"
                )
        elif schema[u.column] not in _INT_TYPES:
            raise InvalidParameter(
                f"the plan sums column {u.column!r} with integer bounds, but its type is "
                f"{schema[u.column]!r}: give float bounds (lo, hi) for an f64 column, or cast "
                "it to integer units"
            )


def _measurement(u: Unit, keys: Any, measure: str, space: Any, schema: dict[Any, Any]) -> Any:
    from .. import combinators as c
    from .. import measurements as m
    from .. import transformations as t
    from ..measures import max_divergence, zero_concentrated_divergence

    base: Any = space
    bounds: Any = u.bounds
    if not u.rows.everything:
        value = list(u.rows.value) if isinstance(u.rows.value, tuple) else u.rows.value
        base = space >> t.then_filter_rows(
            u.rows.column, str(u.rows.op), value, TIA=schema[u.rows.column]
        )

    def select(col: Any) -> Any:
        sel = t.make_select_column(col, TOA=schema[col])
        return sel if isinstance(base, tuple) else base >> sel

    def noise(chain: Any) -> Any:
        if measure == "zcdp":
            return chain >> m.then_gaussian(u.scale)
        out = chain >> m.then_laplace(u.scale)
        return c.make_approximate(out) if measure == "approx" else out

    if u.kind == "count":
        col = u.rows.column if u.rows.column is not None else next(iter(schema))
        return noise(select(col) >> t.then_count())
    if u.kind == "sum":
        col = select(u.column)
        if isinstance(bounds[0], float):  # a missing value adds clamp(0), as make_grouped_sum
            col = col >> t.then_impute_constant(0.0)
        return noise(col >> t.then_clamp(bounds) >> t.then_sum())
    if u.kind in ("gcount", "gsum"):
        part = base >> t.then_partition_by(u.by, keys=list(keys))
        norm = 2 if measure == "zcdp" else 1
        agg = (
            t.then_grouped_count(norm=norm)
            if u.kind == "gcount"
            else t.then_grouped_sum(u.column, bounds=bounds, norm=norm)
        )
        return noise(part >> agg)
    if u.kind == "keys":
        return (
            select(u.by)
            >> t.then_count_by()
            >> m.then_laplace_threshold(scale=u.scale, threshold=u.threshold)
        )
    col = select(u.column)
    if schema[u.column] in ("f32", "f64"):
        col = col >> t.then_drop_null()
    mo = zero_concentrated_divergence() if measure == "zcdp" else max_divergence()
    q = col >> m.then_private_quantile(
        mo, candidates=list(u.candidates or ()), alpha=float(u.q or 0.0), scale=u.scale
    )
    return c.make_approximate(q) if measure == "approx" else q


def _estimate(
    spec: Spec, keys: list[tuple[Any, ...]], sol: Solution, out: dict[tuple[Any, ...], Any]
) -> Estimate:
    level = spec.target.level
    meas = sol.measure
    if isinstance(spec, Mean):
        half = spec.target.alpha / 2
        s_val, n_val = out[keys[0]], out[keys[1]]
        a_s = _mean_sum_accuracy(spec, sol.units[keys[0]].scale, half, meas)
        a_n = noise_accuracy(sol.units[keys[1]].scale, half, meas)
        M = float(max(abs(spec.bounds[0]), abs(spec.bounds[1])))
        n_min = float(spec.min_rows or 1)
        denom = max(float(n_val), n_min - a_n)
        value = s_val / n_val if n_val > 0 else math.nan
        # on the event |noise| < a for both, N >= ñ − a_N and N >= min_rows, so
        # |S̃/Ñ − S/N| <= (a_S + (M + c)·a_N)/Ñ + c, and Ñ >= min_rows − a_N
        h = mean_half_width(a_s, a_n, M, denom + a_n, _mean_c(spec))
        return Estimate(value, h, level)
    u = sol.units[keys[-1]]
    if isinstance(spec, Quantile):
        return Estimate(
            out[u.key], quantile_accuracy(u.scale, len(spec.candidates), spec.target.alpha), level
        )
    if isinstance(spec, GroupedCount):
        val = out[u.key]
        g = spec.groups
        if spec.simultaneous and spec.keys is None:
            g = max(g, len(val))
        return Estimate(val, value_accuracy(spec, u.scale, spec.target.alpha / g, meas), level)
    return Estimate(out[u.key], value_accuracy(spec, u.scale, spec.target.alpha, meas), level)


def _pairs(specs: list[Spec]) -> list[tuple[Spec, GroupedCount]]:
    """(total, groups) pairs whose groups publicly sum to the total: an exhaustive grouped
    count with the count over the same rows, and an exhaustive grouped sum with the sum over
    the same rows, column and bounds (the same clamp, every row in one public key)."""
    counts = {s.rows: s for s in specs if type(s) is Count}
    sums = {(s.rows, s.column, s.bounds): s for s in specs if type(s) is Sum}
    out: list[tuple[Spec, GroupedCount]] = []
    for s in specs:
        if type(s) is GroupedCount and s.exhaustive and s.rows in counts:
            out.append((counts[s.rows], s))
        if isinstance(s, GroupedSum) and s.exhaustive:
            total = sums.get((s.rows, s.column, s.bounds))
            if total is not None:
                out.append((total, s))
    return out


def _variance(u: Unit, measure: str) -> float:
    """The noise's variance: s² bounds the discrete Gaussian's; the discrete Laplace's exactly
    on integers, its fine-grid limit 2s² for a release on the float grid."""
    if measure == "zcdp":
        return u.scale**2
    float_grid = u.kind == "gsum" or (u.bounds is not None and isinstance(u.bounds[0], float))
    return 2 * u.scale**2 if float_grid else _cons.discrete_laplace_variance(u.scale)


def _consistency_notes(specs: list[Spec], sol: Solution) -> list[str]:
    notes = []
    for total, groups in _pairs(specs):
        v0 = _variance(sol.units[_units_of(total, sol.reuse)[0].key], sol.measure)
        v1 = _variance(sol.units[_units_of(groups, sol.reuse)[0].key], sol.measure)
        g = _cons.gain(v0, v1, len(groups.keys or ()))
        notes.append(
            f"consistency: {groups.name} made to sum to {total.name} (least squares); RMSE "
            f"gain ×{g['total']:.3g} on the total, ×{g['group']:.3g} per group"
        )
    return notes


def _consistent(specs: list[Spec], sol: Solution, est: dict[str, Estimate]) -> dict[str, Any]:
    res: dict[str, Any] = {}
    for total, groups in _pairs(specs):
        v0 = _variance(sol.units[_units_of(total, sol.reuse)[0].key], sol.measure)
        v1 = _variance(sol.units[_units_of(groups, sol.reuse)[0].key], sol.measure)
        marg = est[groups.name].value
        t_hat, m_hat = _cons.least_squares(est[total.name].value, v0, list(marg.values()), v1)
        res[total.name] = t_hat
        res[groups.name] = dict(zip(marg, m_hat, strict=True))
        res[f"{groups.name}:rmse_gain"] = _cons.gain(v0, v1, len(marg))
    return res
