"""Measures print as OpenDP 0.16 prints them: ``MaxDivergence``, not ``MaxDivergence()``.

OpenDP's user guide shows ``print(meas)`` ending in ``output_measure = MaxDivergence)`` and
``dp.loss_of(epsilon=1.0)`` as ``(MaxDivergence, 1.0)``; metrics keep their parentheses
(``SymmetricDistance()``).  Compared with the installed OpenDP where it is available.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

import opendp_lite.prelude as dp

HAVE_OPENDP = importlib.util.find_spec("opendp") is not None


def _reprs(lib: Any) -> list[str]:
    return [
        repr(lib.max_divergence()),
        repr(lib.zero_concentrated_divergence()),
        repr(lib.approximate(lib.max_divergence())),
        repr(lib.approximate(lib.zero_concentrated_divergence())),
        repr(lib.renyi_divergence()),
        repr(lib.smoothed_max_divergence()),
        repr(lib.symmetric_distance()),
        str(lib.loss_of(epsilon=1.0)),
    ]


def test_measures_print_without_parentheses() -> None:
    assert _reprs(dp) == [
        "MaxDivergence",
        "ZeroConcentratedDivergence",
        "Approximate(MaxDivergence)",
        "Approximate(ZeroConcentratedDivergence)",
        "RenyiDivergence",
        "SmoothedMaxDivergence",
        "SymmetricDistance()",
        "(MaxDivergence, 1.0)",
    ]
    dp.enable_features("contrib")
    space = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    meas = space >> dp.t.then_count() >> dp.m.then_laplace(scale=1.0)
    assert str(meas).rstrip().endswith("output_measure = MaxDivergence)")


@pytest.mark.skipif(not HAVE_OPENDP, reason="OpenDP 0.16 not installed")
def test_the_same_as_opendp() -> None:
    import opendp.prelude as odp

    assert _reprs(dp) == _reprs(odp)
