"""Helpers under an identifier: truncation to max_rows_per_id is enforced; without one,
contributions is a claim (and a frame with an id-looking column says so)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite import helpers as h
from opendp_lite.errors import InvalidParameter

UNIT = dp.unit_of(identifier="pid", contributions=1)


def _frame(n_people: int = 400, rows: int = 20) -> dict[str, np.ndarray]:
    return {
        "pid": np.repeat(np.arange(n_people), rows),
        "income": np.tile(np.linspace(0.0, 100.0, rows), n_people),
    }


def test_every_helper_truncates_to_max_rows_per_id() -> None:
    """One person with many rows cannot move a count by more than k: the count of rows after
    truncation to k = 2 is 2 per person (noise at ε = 50 is well under 1)."""
    frame = _frame()
    kw = {"column": "income", "privacy_unit": UNIT, "max_rows_per_id": 2}
    assert abs(h.dp_count(frame, epsilon=50.0, **kw) - 800) <= 2
    assert 0.0 <= h.dp_mean(frame, bounds=(0.0, 100.0), epsilon=1.0, **kw) <= 100.0
    assert isinstance(h.dp_sum(frame, bounds=(0.0, 100.0), epsilon=1.0, **kw), float)
    assert 0.0 <= h.dp_median(frame, bounds=(0.0, 100.0), epsilon=1.0, **kw) <= 100.0
    assert len(h.dp_quantiles(frame, [0.1, 0.9], bounds=(0.0, 100.0), epsilon=1.0, **kw)) == 2
    hist = h.dp_histogram(frame, [0.0, 100.0], epsilon=50.0, **kw)
    assert sum(hist.values()) <= 800 + 4
    assert h.dp_mode(frame, [0.0, 100.0], epsilon=1.0, **kw) in (0.0, 100.0)


def test_frames_of_every_library_and_a_context() -> None:
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    pa = pytest.importorskip("pyarrow")
    df = pd.DataFrame(_frame(100, 10))
    for data in (df, pl.from_pandas(df), pa.Table.from_pandas(df)):
        n = h.dp_count(data, epsilon=50.0, column="income", privacy_unit=UNIT, max_rows_per_id=3)
        assert abs(n - 300) <= 2
    ctx = dp.Context.compositor(data=df, privacy_unit=UNIT, privacy_loss=dp.loss_of(epsilon=2.0))
    assert abs(h.dp_count(ctx, epsilon=1.5, column="income", max_rows_per_id=3) - 300) <= 30
    assert ctx.remaining_privacy_loss() == pytest.approx(0.5)


def test_an_identifier_unit_without_a_bound_is_refused_with_the_fix() -> None:
    with pytest.raises(InvalidParameter, match="max_rows_per_id=k"):
        h.dp_mean(_frame(), bounds=(0.0, 100.0), epsilon=1.0, column="income", privacy_unit=UNIT)
    with pytest.raises(InvalidParameter, match="needs an identifier"):
        h.dp_count(_frame(), epsilon=1.0, column="income", max_rows_per_id=2)
    with pytest.raises(InvalidParameter, match="column="):
        h.dp_count(_frame(), epsilon=1.0, privacy_unit=UNIT, max_rows_per_id=2)


def test_contributions_without_identifier_is_a_claim_and_an_id_column_is_flagged() -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"pid": [10_001, 10_002] * 50, "income": [1.0, 2.0] * 50})
    with pytest.warns(h.ClaimWarning, match="'pid'") as caught:
        h.dp_count(df, epsilon=1.0, column="income")
    assert "10001" not in str(caught[0].message) and "10_001" not in str(caught[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        h.dp_count(df["income"], epsilon=1.0)  # a column alone: no schema to read, no warning


def test_suggest_max_rows_per_id_is_charged_and_near_the_quantile() -> None:
    pd = pytest.importorskip("pandas")
    rows = np.array([3] * 900 + [40] * 100)  # 90% of people hold 3 rows
    df = pd.DataFrame({"pid": np.repeat(np.arange(1000), rows), "x": 1.0})
    assert h.suggest_max_rows_per_id(df, epsilon=5.0, identifier="pid", alpha=0.5) == 3
    ctx = dp.Context.compositor(data=df, privacy_unit=UNIT, privacy_loss=dp.loss_of(epsilon=1.0))
    k = h.suggest_max_rows_per_id(ctx, epsilon=0.25, alpha=0.5)
    assert 1 <= k <= 100
    assert ctx.remaining_privacy_loss() == pytest.approx(0.75)
    with pytest.raises(InvalidParameter, match="identifier"):
        h.suggest_max_rows_per_id(df, epsilon=1.0)
