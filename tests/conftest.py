"""Shared test configuration.

Slow statistical tests scale their sample size by ``OPENDP_LITE_SLOW_SCALE`` (default 1);
CI sets it below 1.  The significance level never changes, only the sample size.
"""

from __future__ import annotations

import os

import pytest

import opendp_lite.core as core

SLOW_SCALE = float(os.environ.get("OPENDP_LITE_SLOW_SCALE", "1"))


def scaled(n: int, minimum: int = 1000) -> int:
    """A slow test's sample size, scaled for CI but never below ``minimum``."""
    return max(minimum, int(n * SLOW_SCALE))


@pytest.fixture(autouse=True)
def _restore_features():
    """Each test starts with the feature flags it found, whatever it enables."""
    saved = set(core._FEATURES)
    yield
    core._FEATURES.clear()
    core._FEATURES.update(saved)
