"""``make_np_count``: the number of rows."""

from __future__ import annotations

from typing import Any

import numpy.typing as npt

from ..._registry import constructor
from ...core import (
    Domain,
    Metric,
    PartialTransformation,
    Transformation,
)
from ...domains import atom_domain
from ...metrics import absolute_distance
from ._inputs import _array2, _symmetric

Array = npt.NDArray[Any]

# ----------------------------------------------------------------------------------------------
# Count

_I32_MAX = 2**31 - 1


@constructor
def make_np_count(
    input_domain: Domain[Any], input_metric: Metric[Any]
) -> Transformation[Array, int, int, int]:
    r"""The number of rows (the length of axis 0), as an ``i32`` (saturating at 2^31 − 1).

    If the domain fixes ``size``, the output is that constant.  Stability map (symmetric
    distance): :math:`d_{out} = 0` with a known size, else :math:`d_{out} = d_{in}`.

    Raises:
        NotImplementedForType: if the input is not an ``array2_domain`` or the metric is not
            ``symmetric_distance()``.

    Proof: docs/proofs/make_np_count.md

    >>> import numpy as np
    >>> import opendp_lite.prelude as dp
    >>> space = dp.numpy.array2_domain(T=float), dp.symmetric_distance()
    >>> count = space >> dp.numpy.then_np_count()
    >>> count(np.zeros((5, 3))), count.map(2)
    (5, 2)
    """
    who = "make_np_count"
    dom = _array2(who, input_domain)
    _symmetric(who, input_metric)
    size = dom.size

    def function(arg: Array) -> int:
        return min(int(arg.shape[0]), _I32_MAX) if size is None else min(size, _I32_MAX)

    def stability_map(d_in: int) -> int:
        return 0 if size is not None else d_in

    return Transformation(
        input_domain,
        input_metric,
        atom_domain(T="i32"),
        absolute_distance(T="i32"),
        function,
        stability_map,
    )


@constructor
def then_np_count() -> PartialTransformation[Array, int, int, int]:
    """Partial of :func:`make_np_count`."""
    return PartialTransformation(make_np_count)
