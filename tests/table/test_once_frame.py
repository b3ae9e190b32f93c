"""OnceFrame: collected once; lazy() behind honest-but-curious."""

from __future__ import annotations

import polars as pl
import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import FeatureNotEnabled, QueryableError
from opendp_lite.table.once_frame import OnceFrame


def test_collect_once() -> None:
    once = OnceFrame(pl.DataFrame({"a": [1]}))
    assert once.collect()["a"].to_list() == [1]
    with pytest.raises(QueryableError, match="already been collected"):
        once.collect()


def test_lazy_needs_honest_but_curious() -> None:
    once = OnceFrame(pl.DataFrame({"a": [1]}))
    dp.disable_features("honest-but-curious")
    with pytest.raises(FeatureNotEnabled, match="honest-but-curious"):
        once.lazy()
    dp.enable_features("honest-but-curious")
    try:
        assert once.lazy().collect()["a"].to_list() == [1]
        with pytest.raises(QueryableError):
            once.lazy()
    finally:
        dp.disable_features("honest-but-curious")
