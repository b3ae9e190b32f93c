"""dp.polars.Margin and Bound: fields, 0.13's aliases, the moved fields."""

from __future__ import annotations

import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import InvalidParameter


def test_deprecated_aliases_warn_and_alias() -> None:
    m = dp.polars.Margin(by=["a"], max_length=5, max_groups=3, invariant="keys")
    with pytest.warns(DeprecationWarning, match="max_length"):
        assert m.max_partition_length == 5
    with pytest.warns(DeprecationWarning, match="max_groups"):
        assert m.max_num_partitions == 3
    with pytest.warns(DeprecationWarning, match="invariant"):
        assert m.public_info == "keys"
    with pytest.warns(DeprecationWarning):
        m.max_partition_length = 7
    assert m.max_length == 7


def test_moved_fields_raise_the_opendp_message() -> None:
    m = dp.polars.Margin()
    with pytest.raises(NotImplementedError, match=r"dp.polars.Bound\(per_group=...\)"):
        _ = m.max_partition_contributions
    with pytest.raises(NotImplementedError, match=r"dp.polars.Bound\(num_groups=...\)"):
        m.max_influenced_partitions = 2


def test_by_is_a_set_and_values_are_checked() -> None:
    assert dp.polars.Margin(by=["a", "b"]) == dp.polars.Margin(by=["b", "a"], max_length=None)
    assert dp.polars.Margin(by=["a"]) != dp.polars.Margin(by=["a"], max_length=2)
    with pytest.raises(InvalidParameter, match="max_length"):
        dp.polars.Margin(max_length=0)
    with pytest.raises(InvalidParameter, match="invariant"):
        dp.polars.Margin(invariant="everything")
    assert dp.polars.Bound(by=["a"], per_group=2) == dp.polars.Bound(by=["a"], per_group=2)
    with pytest.raises(InvalidParameter):
        dp.polars.Bound(num_groups=-1)


def test_margins_need_table_data() -> None:
    with pytest.raises(Exception, match="margins"):
        dp.Context.compositor(
            data=[1, 2],
            privacy_unit=dp.unit_of(contributions=1),
            privacy_loss=dp.loss_of(epsilon=1.0),
            margins=[dp.polars.Margin(max_length=2)],
        )


def test_a_margin_dict_warns_and_its_keys_become_the_margins_by() -> None:
    """OpenDP 0.13's ``{by: Margin(...)}``: DeprecationWarning, and the key is the margin's
    ``by`` (it was dropped: the margin applied to the whole frame)."""
    from opendp_lite.table.margins import check_margins

    with pytest.warns(DeprecationWarning, match="Margin dicts should be replaced with lists"):
        (m, s) = check_margins(
            {("a", "b"): dp.polars.Margin(invariant="keys"), "c": dp.polars.Margin(max_length=3)}
        )
    assert m == dp.polars.Margin(by=["a", "b"], invariant="keys")
    assert s == dp.polars.Margin(by=["c"], max_length=3)
    with pytest.warns(DeprecationWarning), pytest.raises(InvalidParameter, match="differ"):
        check_margins({("a",): dp.polars.Margin(by=["b"])})
