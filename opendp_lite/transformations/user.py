"""User-defined transformations (trusted as written: needs ``honest-but-curious``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from .._registry import constructor
from ..core import Domain, Metric, Transformation, assert_features

__all__ = ["make_user_transformation"]

TI = TypeVar("TI")
TO = TypeVar("TO")
DI = TypeVar("DI")
DO = TypeVar("DO")


@constructor
def make_user_transformation(
    input_domain: Domain[TI],
    input_metric: Metric[DI],
    output_domain: Domain[TO],
    output_metric: Metric[DO],
    function: Callable[[TI], TO],
    stability_map: Callable[[DI], DO],
) -> Transformation[TI, TO, DI, DO]:
    r"""A transformation from a user's function and stability map, trusted as written.

    Stability map: :math:`d_{out} = \mathrm{stability\_map}(d_{in})`, as the user states it;
    the library validates only that it returns a finite, non-negative distance.

    Raises:
        FeatureNotEnabled: unless ``enable_features("honest-but-curious")`` was called.

    Proof: docs/proofs/make_user_transformation.md

    >>> import opendp_lite.prelude as dp
    >>> dp.enable_features("honest-but-curious")
    >>> space = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    >>> trans = dp.t.make_user_transformation(*space, *space, lambda x: x[:2], lambda d: d)
    >>> trans([1, 2, 3]), trans.map(1)
    ([1, 2], 1)
    """
    assert_features("honest-but-curious")
    return Transformation(
        input_domain, input_metric, output_domain, output_metric, function, stability_map
    )
