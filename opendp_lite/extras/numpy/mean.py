"""``make_private_np_mean``: a private sum divided by a public count."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ... import _arith as ar
from ..._registry import constructor
from ..._validate import check_finite_nonneg
from ...core import (
    Domain,
    Measurement,
    Metric,
    PartialMeasurement,
)
from ...errors import InvalidParameter
from ...measures import MaxDivergence, ZeroConcentratedDivergence
from ._inputs import _array2
from .clamp import make_np_clamp
from .sum import make_private_np_sum

Array = npt.NDArray[Any]

# ----------------------------------------------------------------------------------------------
# Mean


@constructor
def make_private_np_mean(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    scale: float,
    norm: float | None = None,
    p: Literal[1, 2] | None = 2,
    origin: Any = None,
) -> Measurement[Array, Array, int, float]:
    r"""The column means of ``size`` rows: a noisy :func:`make_np_sum` divided by ``size``.

    If ``norm`` is given the rows are first clamped (:func:`make_np_clamp` with ``norm``,
    ``p``, ``origin``).  The sum gets Laplace noise (p = 1, max divergence) or Gaussian noise
    (p = 2, zCDP) of scale ``scale · size``, so the mean's noise has scale ``scale``; the
    division is post-processing.  Privacy map: the noisy sum's, e.g.
    :math:`\varepsilon = (\Delta_1 + \text{penalty}_k)/(\text{scale}\cdot n)` for Laplace.

    Raises:
        InvalidParameter: if the domain has no ``size``, or the arguments of the clamp, the sum
            or the noise are invalid.
        NotImplementedForType: as :func:`make_np_sum`.

    Proof: docs/proofs/make_private_np_mean.md

    >>> import numpy as np
    >>> import opendp_lite.prelude as dp
    >>> space = dp.numpy.array2_domain(size=4, num_columns=2, T=float), dp.symmetric_distance()
    >>> m = space >> dp.numpy.then_private_np_mean(scale=0.1, norm=1.0, p=1)
    >>> m(np.ones((4, 2))).shape, m.output_measure
    ((2,), MaxDivergence)
    """
    who = "make_private_np_mean"
    dom = _array2(who, input_domain)
    chain: Any = None
    if norm is not None:
        chain = make_np_clamp(input_domain, input_metric, norm, p if p is not None else 2, origin)
        dom = _array2(who, chain.output_domain)
    if dom.size is None:
        raise InvalidParameter(f"{who} needs a known size: give array2_domain(size=...)")
    if dom.size == 0:
        raise InvalidParameter(f"{who} needs size >= 1, got {dom.size}")
    if dom.p is None:
        raise InvalidParameter(f"{who} needs rows of bounded norm: give norm and p")
    measure = MaxDivergence() if dom.p == 1 else ZeroConcentratedDivergence()
    s = check_finite_nonneg("scale", scale)
    n = dom.size
    m_sum = make_private_np_sum(dom, input_metric, measure, ar.up(ar.q(s) * n))
    meas = chain >> m_sum if chain is not None else m_sum

    def divide(sums: Array) -> Array:
        return np.asarray(sums, dtype=np.float64) / n

    return meas >> divide


@constructor
def then_private_np_mean(
    scale: float, norm: float | None = None, p: Literal[1, 2] | None = 2, origin: Any = None
) -> PartialMeasurement[Array, Array, int, float]:
    """Partial of :func:`make_private_np_mean`."""
    return PartialMeasurement(lambda d, m: make_private_np_mean(d, m, scale, norm, p, origin))
