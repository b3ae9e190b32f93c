"""User-defined measurements (trusted as written: needs ``honest-but-curious``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from .._registry import constructor
from .._spine import release
from ..core import Domain, Measure, Measurement, Metric, assert_features

__all__ = ["make_user_measurement", "then_user_measurement"]

TI = TypeVar("TI")
TO = TypeVar("TO")
DI = TypeVar("DI")
MO = TypeVar("MO")


@constructor
def make_user_measurement(
    input_domain: Domain[TI],
    input_metric: Metric[DI],
    output_measure: Measure[MO],
    function: Callable[[TI], TO],
    privacy_map: Callable[[DI], MO],
    TO: object = None,
) -> Measurement[TI, TO, DI, MO]:
    r"""A measurement from a user's randomised function and privacy map, trusted as written.

    Privacy map: :math:`\mathrm{privacy\_map}(d_{in})`, as the user states it; the library
    validates only that it returns a valid loss in ``output_measure``.

    Raises:
        FeatureNotEnabled: unless ``enable_features("honest-but-curious")`` was called.

    Proof: docs/proofs/make_user_measurement.md

    >>> import opendp_lite.prelude as dp
    >>> dp.enable_features("honest-but-curious")
    >>> const = dp.m.make_user_measurement(
    ...     dp.atom_domain(T=int), dp.absolute_distance(T=int), dp.max_divergence(),
    ...     lambda x: 0, lambda d: 0.0)
    >>> const(5), const.map(3)
    (0, 0.0)
    >>> space = dp.atom_domain(T=int), dp.absolute_distance(T=int)
    >>> (space >> dp.m.then_user_measurement(dp.max_divergence(), lambda x: 0, lambda d: 0.0))(5)
    0
    """
    assert_features("honest-but-curious")
    return Measurement(input_domain, input_metric, output_measure, function, privacy_map)


then_user_measurement = release(make_user_measurement)
