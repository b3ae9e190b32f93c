"""Plan a release from the accuracy you need: state targets, get the cheapest plan.

List the statistics with their targets (:mod:`.specs`), solve (:class:`Plan.minimize` for the
least loss meeting every target, :class:`Plan.maximize` for the best worst-case accuracy
within a budget), review the plan (``summary()``, ``plot()``, ``to_json()``), then
``release(data)`` under one Context.  See docs/how-to/plan-from-accuracy.md.

>>> from opendp_lite.planner import Count, Mean, Plan, within
>>> plan = Plan.minimize([
...     Count("people", within(25.0)),
...     Mean("age", within(1.0), column="age", bounds=(0, 100), min_rows=1000),
... ])
>>> [st.achieved <= st.target for st in plan.solution.stats]
[True, True]
"""

from .plan import Estimate, Plan, PlanRelease, PlanSummary
from .solver import Infeasible, explain, solve, solve_budget
from .specs import Count, GroupedCount, GroupedSum, Mean, Quantile, Rows, Spec, Sum, Target, within
from .table import specs_from_query, specs_from_table

__all__ = [
    "Count",
    "Estimate",
    "GroupedCount",
    "GroupedSum",
    "Infeasible",
    "Mean",
    "Plan",
    "PlanRelease",
    "PlanSummary",
    "Quantile",
    "Rows",
    "Spec",
    "Sum",
    "Target",
    "explain",
    "solve",
    "solve_budget",
    "specs_from_query",
    "specs_from_table",
    "within",
]
