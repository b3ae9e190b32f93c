"""``make_np_sum`` (exact column sums) and ``make_private_np_sum``."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ... import _arith as ar
from ..._registry import constructor
from ..._types import carrier_dtype
from ...core import (
    Domain,
    Measure,
    Measurement,
    Metric,
    PartialMeasurement,
    PartialTransformation,
    Transformation,
)
from ...domains import atom_domain, vector_domain
from ...errors import NotImplementedForType
from ...measurements import make_gaussian, make_laplace
from ...measures import MaxDivergence, ZeroConcentratedDivergence
from ...metrics import l1_distance, l2_distance
from ...transformations._aggregate import _scales, to_carrier
from ...transformations.sum import FloatSumPlan, default_size_limit
from ._inputs import _array2, _bounded, _norm_up, _root_up, _symmetric

Array = npt.NDArray[Any]

# ----------------------------------------------------------------------------------------------
# Sum


#: Rows of a 2-d array scaled and summed at a time (a cache-sized block), and the rows whose
#: grid values are summed in floats: 64 values of magnitude <= 2^46 sum below 2^52.
_SUM_ROWS = 1 << 13
_FLOAT_GROUP = 64


def grid_column_sums(x: Array, p: int) -> list[int]:
    """The exact ``Σ_i trunc(x_ij · 2^p)`` of each column ``j`` (as :func:`grid_sums` column by
    column, without copying the columns out).

    Requires ``|x_ij| · 2^p <= 2^46``.  Each block of :data:`_SUM_ROWS` rows is scaled by
    ``2^p`` (exact: one or two power-of-two factors) and truncated (exact) into a float64
    buffer laid out column by column; groups of :data:`_FLOAT_GROUP` consecutive values of a
    column are summed in float64, exactly, since every partial sum, in any order, is an
    integer below ``64 · 2^46 = 2^52``; the group sums are cast to int64 (exact integers) and
    summed there (a block's total is below ``2^13 · 2^46 = 2^59``), blocks as Python ints.
    Summing integers held as floats avoids a float -> int64 cast of every value.
    """
    n, d = x.shape
    s1, s2 = _scales(p)
    totals = [0] * d
    buf = np.empty((d, min(n, _SUM_ROWS)), dtype=np.float64)
    for i in range(0, n, _SUM_ROWS):
        block = x[i : i + _SUM_ROWS]
        m = block.shape[0]
        b = buf[:, :m]
        np.multiply(block.T, s1, out=b, dtype=np.float64)
        if s2 != 1.0:
            np.multiply(b, s2, out=b)
        np.trunc(b, out=b)  # the grid values k, integers with |k| <= 2^46
        full = m - m % _FLOAT_GROUP
        part = np.zeros(d, dtype=np.int64)
        if full:
            groups = np.add.reduce(b[:, :full].reshape(d, -1, _FLOAT_GROUP), axis=2)
            part += np.add.reduce(groups, axis=1, dtype=np.int64)
        if full < m:
            part += np.add.reduce(b[:, full:], axis=1, dtype=np.int64)
        totals = [t + int(v) for t, v in zip(totals, part.tolist(), strict=True)]
    return totals


@constructor
def make_np_sum(
    input_domain: Domain[Any], input_metric: Metric[Any]
) -> Transformation[Array, Array, int, float]:
    r"""The column sums of an array whose rows lie in an L``p`` ball: a vector of ``d`` floats.

    Each value is truncated to the grid :math:`2^{-g}` (``g`` keeps 46 bits of
    :math:`M = R + \max_j |o_j|`, which bounds every value), each column is summed exactly,
    saturated at :math:`\pm L\cdot M'` (``L`` = ``size``, or the default size limit of
    ``make_sum`` when the size is unknown) and rounded once to ``T``.  Output metric:
    ``l1_distance`` for p = 1, ``l2_distance`` for p = 2.  Stability map, with :math:`e` the
    one-rounding relaxation of ``make_sum`` (zero when no rounding can happen):

    .. math::

        d_{out} = \begin{cases}
            d_{in}\,(R + \lVert o\rVert_p) + d^{1/p}\,e & \text{unknown size} \\
            \lfloor d_{in}/2\rfloor \min(2R + d^{1/p} 2^{-g},\ 2(R + \lVert o\rVert_p))
              + d^{1/p}\,e & \text{known size}
        \end{cases}

    with every root and norm rounded up.

    Raises:
        NotImplementedForType: if the input is not an ``array2_domain`` or the metric is not
            ``symmetric_distance()``.
        InvalidParameter: if the domain has no norm or no ``num_columns``, or
            ``L · M`` could overflow ``T``.

    Proof: docs/proofs/make_np_sum.md

    >>> import numpy as np
    >>> import opendp_lite.prelude as dp
    >>> dom = dp.numpy.array2_domain(norm=1.0, p=1, size=3, num_columns=2, T=float)
    >>> space = dom, dp.symmetric_distance()
    >>> sum_ = space >> dp.numpy.then_np_sum()
    >>> sum_(np.array([[0.5, 0.5], [0.25, -0.75], [0.0, 1.0]])).tolist(), sum_.map(2)
    ([0.75, 0.75], 2.0)
    """
    who = "make_np_sum"
    dom = _array2(who, input_domain)
    _symmetric(who, input_metric)
    R, p, origin, d = _bounded(who, dom)
    m_up = ar.up(ar.q(R) + max((abs(ar.q(v)) for v in origin), default=ar.q(0)))
    limit = dom.size if dom.size is not None else default_size_limit(who, dom.T, -m_up, m_up)
    plan = FloatSumPlan(who, dom.T, -m_up, m_up, max(limit, 1))
    T = dom.T
    o_norm = _norm_up(origin, p)
    relax = _root_up(d, p) * plan.relax
    if dom.size is None:

        def stability_map(d_in: int) -> float:
            return ar.up(d_in * (ar.q(R) + o_norm) + relax)
    else:
        width = min(2 * ar.q(R) + _root_up(d, p) * ar.q(2) ** -plan.p, 2 * (ar.q(R) + o_norm))

        def stability_map(d_in: int) -> float:
            return ar.up((d_in // 2) * width + relax)

    def function(arg: Array) -> Array:
        cap = plan.c_int
        sums = [
            to_carrier(min(max(k, -cap), cap), 1, plan.p, T) for k in grid_column_sums(arg, plan.p)
        ]
        return np.asarray(sums, dtype=carrier_dtype(T))

    metric = l1_distance(T=T) if p == 1 else l2_distance(T=T)
    out: Domain[Any] = vector_domain(atom_domain(T=T, nan=False), size=d)
    return Transformation(
        input_domain,
        input_metric,
        out,
        metric,
        function,
        stability_map,
    )


@constructor
def then_np_sum() -> PartialTransformation[Array, Array, int, float]:
    """Partial of :func:`make_np_sum`."""
    return PartialTransformation(make_np_sum)


def _noise(measure: Measure[Any], scale: float) -> Any:
    if isinstance(measure, MaxDivergence):
        return lambda d, m: make_laplace(d, m, scale)
    if isinstance(measure, ZeroConcentratedDivergence):
        return lambda d, m: make_gaussian(d, m, scale)
    raise NotImplementedForType(
        "privacy_measure must be max_divergence() or zero_concentrated_divergence(), "
        f"got {measure!r}"
    )


@constructor
def make_private_np_sum(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    privacy_measure: Measure[Any],
    scale: float,
) -> Measurement[Array, Array, int, float]:
    r""":func:`make_np_sum` followed by vector Laplace (max divergence, p = 1) or Gaussian (zCDP,
    p = 2) noise of ``scale``.

    Privacy map: the noise mechanism's map at the sum's :math:`d_{out}`, e.g.
    :math:`\varepsilon = (\Delta_1 + \text{penalty}_k)/\text{scale}` for Laplace.

    Raises:
        NotImplementedForType: as :func:`make_np_sum`, or if the measure is neither
            max nor zero-concentrated divergence, or does not fit ``p`` (Laplace needs an
            L1 norm, Gaussian an L2 norm).
        InvalidParameter: as :func:`make_np_sum` and the noise mechanism.

    Proof: docs/proofs/make_private_np_sum.md

    >>> import numpy as np
    >>> import opendp_lite.prelude as dp
    >>> dom = dp.numpy.array2_domain(norm=1.0, p=1, num_columns=2, T=float)
    >>> space = dom, dp.symmetric_distance()
    >>> m = space >> dp.numpy.then_private_np_sum(dp.max_divergence(), scale=10.0)
    >>> m(np.array([[0.5, 0.5]])).shape, round(m.map(1), 6)
    ((2,), 0.100049)
    """
    t_sum = make_np_sum(input_domain, input_metric)
    return t_sum >> PartialMeasurement(_noise(privacy_measure, scale))


@constructor
def then_private_np_sum(
    privacy_measure: Measure[Any], scale: float
) -> PartialMeasurement[Array, Array, int, float]:
    """Partial of :func:`make_private_np_sum`."""
    return PartialMeasurement(lambda d, m: make_private_np_sum(d, m, privacy_measure, scale))
