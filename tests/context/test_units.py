"""unit_of with an identifier: OpenDP 0.16's semantics (individuals, not rows)."""

from __future__ import annotations

import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import InvalidParameter, NotImplementedForType


def test_identifier_units_count_individuals_as_opendp() -> None:
    assert dp.unit_of(contributions=2, identifier="pid") == (dp.symmetric_id_distance("pid"), 2)
    assert dp.unit_of(changes=1, identifier="pid") == (dp.change_one_id_distance("pid"), 1)
    assert dp.unit_of(contributions=1) == (dp.symmetric_distance(), 1)  # unchanged


def test_identifier_units_refuse_what_opendp_refuses_with_the_fix() -> None:
    with pytest.raises(InvalidParameter, match="ordered"):
        dp.unit_of(contributions=1, identifier="pid", ordered=True)
    with pytest.raises(InvalidParameter, match="local"):
        dp.unit_of(local=True, identifier="pid")
    with pytest.raises(InvalidParameter, match=r"contributions= .*or changes="):
        dp.unit_of(l1=1.0, identifier="pid")
    with pytest.raises(InvalidParameter, match="exactly one"):
        dp.unit_of(identifier="pid")
    with pytest.raises(InvalidParameter, match="int >= 0"):
        dp.unit_of(contributions=1.5, identifier="pid")
    with pytest.raises(NotImplementedForType, match="Polars expression"):
        dp.unit_of(contributions=1, identifier=object())


def test_a_context_with_an_identifier_unit_is_built_over_a_frame() -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"pid": [1, 1, 2], "x": [1.0, 2.0, 3.0]})
    ctx = dp.Context.compositor(
        data=df,
        privacy_unit=dp.unit_of(changes=1, identifier="pid"),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=1,
    )
    # OpenDP's test_lazyframe_bounded_dp_truncation: changes=1, k=3: count scale 2·3 at ε=1
    assert ctx.query().truncate_per_id(k=3).count().laplace().param() == 6.0
