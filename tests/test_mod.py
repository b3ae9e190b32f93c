"""OpenDP's module paths: ``opendp.mod`` names and ``dp.__version__``."""

from __future__ import annotations

import pytest

import opendp_lite
import opendp_lite.prelude as dp
from opendp_lite import mod
from opendp_lite.errors import OpenDPLiteError


def test_mod_exports_the_core_classes() -> None:
    assert mod.Measurement is dp.Measurement and mod.Transformation is dp.Transformation
    for name in ("Domain", "Metric", "Measure", "Function", "Queryable", "Odometer"):
        assert isinstance(getattr(mod, name), type)
    assert mod.OpenDPException is OpenDPLiteError is dp.OpenDPException
    assert mod.ApproximateDivergence is type(dp.approximate(dp.max_divergence()))
    assert mod.binary_search_param is dp.binary_search_param
    for name in mod.__all__:
        assert hasattr(mod, name), name


def test_mod_feature_flags_share_one_state() -> None:
    mod.enable_features("honest-but-curious")
    assert "honest-but-curious" in mod.GLOBAL_FEATURES
    dp.assert_features("honest-but-curious")
    mod.disable_features("honest-but-curious")
    assert "honest-but-curious" not in mod.GLOBAL_FEATURES


def test_version() -> None:
    assert dp.__version__ == opendp_lite.__version__ == mod.__version__
    assert all(part.isdigit() for part in dp.__version__.split(".")[:2])


def test_opendp_exception_catches_library_errors() -> None:
    with pytest.raises(dp.OpenDPException):
        dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), -1.0)


def test_exponential_bounds_search_brackets_the_boundary() -> None:
    lower, upper = dp.exponential_bounds_search(lambda x: x >= 100.0)  # type: ignore[misc]
    assert lower < 100.0 <= upper
    lower, upper = mod.exponential_bounds_search(lambda x: x > -7, T=int)  # type: ignore[misc]
    assert lower <= -7 < upper
    assert mod.exponential_bounds_search(lambda x: True, T=int) is None  # as OpenDP
    assert dp.ApproximateDivergence is mod.ApproximateDivergence
    assert dp.GLOBAL_FEATURES is mod.GLOBAL_FEATURES
