"""What the table API's constructors share (opendp_lite/table/constructors.py): a distance read
as rows, and a ``lazyframe_domain`` read as the analysis' table domain."""

from __future__ import annotations

import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import FailedMap
from opendp_lite.table.constructors import rows_of, table_domain


def test_rows_of_reads_the_least_row_total_a_bound_states() -> None:
    metric = dp.frame_distance(dp.symmetric_distance())
    Bound = dp.polars.Bound
    assert rows_of(dp.symmetric_distance(), 4) == 4
    assert rows_of(metric, 4) == 4
    assert (
        rows_of(metric, [Bound(by=[], per_group=5), Bound(by=["B"], per_group=1, num_groups=3)])
        == 3
    )
    with pytest.raises(FailedMap, match="identifier-level"):
        rows_of(metric, [Bound(by=["B"], per_group=2)])


def test_table_domain_keeps_the_schema_and_the_margins() -> None:
    frame = dp.lazyframe_domain(
        [
            dp.series_domain("A", dp.atom_domain(T=float)),
            dp.series_domain("B", dp.atom_domain(T=dp.i32)),
        ]
    )
    frame = dp.with_margin(frame, dp.polars.Margin(by=["B"], invariant="keys", max_length=7))
    td = table_domain(frame)
    assert [name for name, _ in td.columns] == ["A", "B"]
    (m,) = td.margins
    assert list(m.by) == ["B"] and m.invariant == "keys" and m.max_length == 7
