"""The plan object: summary, JSON (untrusted on the way in), plot, release under one Context."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest

from opendp_lite.errors import InvalidParameter
from opendp_lite.planner import (
    Count,
    GroupedCount,
    GroupedSum,
    Infeasible,
    Mean,
    Plan,
    Quantile,
    Rows,
    Sum,
    within,
)

ADULTS = Rows("age", ">=", 18)
SPECS = [
    Count("n", within(30.0)),
    Count("adults", within(25.0), rows=ADULTS),
    Mean("mean_inc", within(500.0), column="inc", bounds=(0, 100_000), rows=ADULTS, min_rows=1_000),
    GroupedCount("by_sex", within(40.0), by="sex", keys=("F", "M"), exhaustive=True),
    Quantile("median", within(60.0), column="inc", q=0.5, candidates=tuple(range(0, 100_001, 500))),
]


def frame(n: int = 3000) -> pd.DataFrame:
    ages = np.arange(n) % 90
    return pd.DataFrame(
        {
            "age": ages,
            "inc": (ages * 997) % 90_000,
            "sex": np.where(np.arange(n) % 3 == 0, "F", "M"),
            "region": np.array([f"r{i % 7}" for i in range(n)]),
        }
    )


def test_summary_is_a_table_in_the_context_layout():
    text = str(Plan.minimize(SPECS).summary())
    lines = text.splitlines()
    assert lines[0].split()[:3] == ["#", "statistic", "privacy"]
    assert set(lines[1].replace(" ", "")) == {"-"}
    assert len(lines) >= 2 + len(SPECS) + 1
    assert "(shared)" in text  # the adults' count is the mean's count
    assert lines[2 + len(SPECS)].startswith("total: ε =")
    assert "consistency: by_sex" in text and "RMSE gain" in text


def test_json_round_trip_and_untrusted_documents():
    plan = Plan.minimize(SPECS)
    back = Plan.from_json(plan.to_json())
    assert back.total == plan.total
    assert [u.scale for u in back.solution.units.values()] == [
        u.scale for u in plan.solution.units.values()
    ]
    doc = json.loads(plan.to_json())
    # a document cannot lower the loss: it is recomputed from the scales
    doc2 = dict(doc, scales=[s / 2 for s in doc["scales"]])
    assert Plan.from_json(json.dumps(doc2)).total > plan.total
    # scales that do not meet the targets are refused
    doc3 = dict(doc, scales=[s * 2 for s in doc["scales"]])
    with pytest.raises(Infeasible, match="do not meet"):
        Plan.from_json(json.dumps(doc3))
    with pytest.raises(InvalidParameter, match="not a plan"):
        Plan.from_json(json.dumps({"format": "x"}))


def test_a_document_threshold_below_what_delta_needs_is_refused():
    gs = GroupedSum(
        "gs",
        within(3e5),
        by="region",
        column="inc",
        bounds=(0, 100_000),
        max_groups=10,
        release_size=150,
    )
    plan = Plan.minimize([gs], "approx", delta=1e-6)
    doc = json.loads(plan.to_json())
    doc["thresholds"] = [t - 1 if t is not None else None for t in doc["thresholds"]]
    with pytest.raises(InvalidParameter, match="below"):
        Plan.from_json(json.dumps(doc))
    # an infinite scale (zero loss) is refused
    doc = json.loads(plan.to_json())
    doc["scales"][0] = float("inf")
    with pytest.raises(InvalidParameter, match="bad scale"):
        Plan.from_json(json.dumps(doc))
    # a key release whose threshold stops groups of release_size rows is refused
    doc = json.loads(plan.to_json())
    doc["thresholds"][0] += 200
    with pytest.raises(Infeasible, match="does not release"):
        Plan.from_json(json.dumps(doc))


@pytest.mark.parametrize("measure", ["pure", "zcdp"])
def test_release_runs_under_one_context_within_the_plan(measure):
    plan = Plan.minimize(SPECS, measure)
    data = frame()
    out = plan.release(data)
    spent = out.spent
    assert spent <= plan.total
    assert spent == pytest.approx(plan.total, rel=1e-12)
    assert len(out.context.d_mids_consumed) == len(plan.solution.units)
    assert set(out.estimates) == {s.name for s in SPECS}
    assert isinstance(out["n"].value, int)
    lo, hi = out["n"].interval
    assert hi - lo == pytest.approx(2 * out["n"].half_width)
    assert set(out["by_sex"].value) == {"F", "M"}
    t = out.consistent["n"]
    assert sum(out.consistent["by_sex"].values()) == pytest.approx(t)
    assert out.consistent["by_sex:rmse_gain"]["total"] > 1


def test_release_with_released_keys_under_approximate_dp():
    specs = [
        GroupedCount("gc", within(40.0), by="region", max_groups=10, release_size=200),
        GroupedSum(
            "gs",
            within(4e5),
            by="region",
            column="inc",
            bounds=(0, 100_000),
            max_groups=10,
            release_size=200,
        ),
    ]
    plan = Plan.minimize(specs, "approx", delta=1e-6)
    out = plan.release(frame(7 * 400))
    eps, delta = out.spent
    assert eps <= plan.total and delta <= 1e-6
    # every region has 400 rows, well above the release size: all are released, and the
    # grouped sum runs over exactly the released keys
    assert set(out["gc"].value) == {f"r{i}" for i in range(7)}
    assert set(out["gs"].value) == set(out["gc"].value)


def test_release_refuses_a_float_column_for_an_integer_sum_before_any_noise():
    plan = Plan.minimize([Sum("s", within(1e4), column="x", bounds=(0, 10))])
    with pytest.raises(InvalidParameter, match="integer units"):
        plan.release(pd.DataFrame({"x": [1.5, 2.5]}))
    with pytest.raises(InvalidParameter, match="lacks"):
        plan.release(pd.DataFrame({"y": [1, 2]}))


def test_maximize_fits_the_budget_and_reports_the_worst_ratio():
    need = Plan.minimize(SPECS).total
    plan = Plan.maximize(SPECS, need / 3)
    assert plan.total <= need / 3
    assert plan.worst > 1.5
    assert "budget:" in str(plan.summary())


def test_plot(tmp_path):
    pytest.importorskip("matplotlib")
    plan = Plan.minimize(SPECS[:3])
    curves = plan.curves()
    for st in plan.solution.stats:
        pts = curves[st.spec.name]
        assert (plan.total, st.achieved) in [(pytest.approx(x), pytest.approx(y)) for x, y in pts]
        # coarser targets cost less in total
        xs = [x for x, _ in pts]
        assert all(b <= a * (1 + 1e-9) for a, b in itertools.pairwise(xs))
    fig = plan.plot(str(tmp_path / "plan.png"))
    assert (tmp_path / "plan.png").stat().st_size > 1000
    assert len(fig.axes) >= 3


def test_an_exhaustive_grouped_sum_is_made_consistent_with_its_total_sum():
    """Grouped sums over public keys covering every row sum to the total sum over the same
    rows, column and bounds; the plan reports the least-squares gain and releases both."""
    specs = [
        Sum("total", within(20_000.0), column="inc", bounds=(0, 100_000)),
        GroupedSum(
            "by_sex",
            within(20_000.0),
            by="sex",
            keys=("F", "M"),
            column="inc",
            bounds=(0, 100_000),
            exhaustive=True,
            max_rows=10_000,
        ),
    ]
    plan = Plan.minimize(specs)
    assert any(note.startswith("consistency: by_sex made to sum to total") for note in plan.notes)
    out = plan.release(frame())
    t = out.consistent["total"]
    assert sum(out.consistent["by_sex"].values()) == pytest.approx(t)
    assert out.consistent["by_sex:rmse_gain"]["total"] > 1.2
