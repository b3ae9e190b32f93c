"""OpenDP 0.16's feature names are accepted; a misspelt one is refused with a suggestion."""

from __future__ import annotations

import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import FeatureNotEnabled


@pytest.mark.parametrize(
    "name",
    ["contrib", "honest-but-curious", "floating-point", "idealized-numerics", "rust-stack-trace"],
)
def test_opendp_feature_names_are_accepted(name: str) -> None:
    dp.enable_features(name)
    dp.assert_features(name)
    dp.disable_features(name)
    with pytest.raises(FeatureNotEnabled):
        dp.assert_features(name)


def test_misspelt_feature_is_refused_with_a_suggestion() -> None:
    with pytest.raises(FeatureNotEnabled, match="did you mean 'honest-but-curious'"):
        dp.enable_features("honest-but-curios")
    with pytest.raises(FeatureNotEnabled, match="did you mean 'idealized-numerics'"):
        dp.enable_features("idealised-numerics")


def test_unrelated_feature_name_is_refused_without_enabling_anything() -> None:
    with pytest.raises(FeatureNotEnabled, match="unknown feature 'polars-magic'"):
        dp.enable_features("contrib", "polars-magic")
