"""``make_np_clamp``: every row into the norm ball."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ..._registry import constructor
from ..._types import carrier_dtype, is_float
from ...core import (
    Domain,
    Metric,
    PartialTransformation,
    Transformation,
)
from ...errors import NotImplementedForType
from ._checks import _SHRINKS, _STAT_MIN, _row_stats, _rows_in_ball
from ._inputs import _array2, _symmetric
from .domain import array2_domain

Array = npt.NDArray[Any]

# ----------------------------------------------------------------------------------------------
# Clamp


@constructor
def make_np_clamp(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    norm: float,
    p: Literal[1, 2],
    origin: Any = None,
) -> Transformation[Array, Array, int, int]:
    r"""Clamp each row to the L``p`` ball of radius ``norm`` around ``origin`` (default 0).

    A row ``x`` already in the ball (exactly) is returned unchanged.  Any other row has NaN
    replaced by 0 and ±inf by ±max, and is scaled towards the origin:
    :math:`o + (x - o)\cdot c\cdot s` with :math:`c \approx \min(1, R/\lVert x - o\rVert_p)`,
    ``s`` the first of :math:`1 - 2^{-40}, \dots, 1 - 2^{-10}, 2^{-1}, \dots, 2^{-64}` for which
    the rounded row passes the domain's exact membership test, or ``o`` itself if none
    does.  Every output row is therefore a member of the output domain
    ``array2_domain(norm, p, origin, size, num_columns, nan=False, T)``.  Stability map (row by
    row, symmetric distance): :math:`d_{out} = d_{in}`.

    Raises:
        NotImplementedForType: if the input is not an ``array2_domain`` of float ``T``, or the
            metric is not ``symmetric_distance()``.
        InvalidParameter: if ``norm``, ``p`` or ``origin`` are invalid (see ``array2_domain``),
            or the origin does not match ``num_columns``.

    Proof: docs/proofs/make_np_clamp.md

    >>> import numpy as np
    >>> import opendp_lite.prelude as dp
    >>> space = dp.numpy.array2_domain(T=float, num_columns=2), dp.symmetric_distance()
    >>> clamp = space >> dp.numpy.then_np_clamp(norm=1.0, p=2)
    >>> clamp(np.array([[0.3, 0.4], [3.0, 4.0]])).round(6).tolist(), clamp.map(1)
    ([[0.3, 0.4], [0.6, 0.8]], 1)
    """
    who = "make_np_clamp"
    dom = _array2(who, input_domain)
    _symmetric(who, input_metric)
    if not is_float(dom.T):
        raise NotImplementedForType(f"{who} needs a float T, got T={dom.T}")
    out = array2_domain(
        norm=norm,
        p=p,
        origin=origin,
        size=dom.size,
        num_columns=dom.num_columns,
        nan=False,
        T=dom.T,
    )
    assert out.norm is not None and out.p is not None and out.origin is not None  # noqa: S101
    R, pp, o = out.norm, out.p, out.origin
    dtype = np.dtype(carrier_dtype(dom.T))
    big = float(np.finfo(dtype).max)

    zero_origin = not any(o) if isinstance(o, tuple) else o == 0
    shrinks = [*_SHRINKS, *(0.5**j for j in range(1, 65))]

    def shrink_rows(result: Array, idx: Array, dev: Array, factor: Array, start: int) -> None:
        """Rows ``idx`` of ``result`` become ``o + dev·(factor·s)`` for the first ``s`` of
        ``shrinks[start:]`` whose rounded row passes the exact test, else ``o``."""
        origin_row = np.broadcast_to(np.asarray(o, dtype=np.float64), (result.shape[1],))
        for shrink in shrinks[start:]:
            with np.errstate(all="ignore"):
                cand = (origin_row + dev * (factor * shrink)[:, None]).astype(dtype)
            ok = _rows_in_ball(cand, o, R, pp)
            result[idx[ok]] = cand[ok]
            if ok.all():
                return
            idx, dev, factor = idx[~ok], dev[~ok], factor[~ok]
        result[idx] = origin_row.astype(dtype)  # the origin itself: norm 0, always a member

    def slow_factor(dev: Array) -> Array:
        """``c`` for rows whose statistic is not usable (non-finite values, overflow, tiny):
        the norm of each row computed on the row divided by its largest |value|, so that no
        square overflows (NaN in ``dev`` already 0, ±inf ±max)."""
        with np.errstate(all="ignore"):
            top = np.max(np.abs(dev), axis=1)
            unit = np.linalg.norm(dev / np.where(top > 0, top, 1.0)[:, None], ord=pp, axis=1)
            factor = np.minimum(np.where(top > 0, R / unit / top, 0.0), 1.0)
            out: Array = np.nan_to_num(factor, nan=0.0, posinf=0.0)
        return out

    def function(arg: Array) -> Array:
        x = np.asarray(arg, dtype=dtype)
        if x.shape[0] == 0 or x.shape[1] == 0:
            return x.copy()
        stats = _row_stats(x, o, pp)
        inside = _rows_in_ball(x, o, R, pp, stats)
        if inside.all():
            return x.copy()
        # c from the statistic already computed: sqrt(s) (p = 2) or s (p = 1) approximates
        # ‖x − o‖_p to a few ulps when s is finite and not tiny; any rounding in c is caught
        # by the exact test of the candidate below
        result: Array
        with np.errstate(all="ignore"):
            usable = np.isfinite(stats) & (stats >= _STAT_MIN)
            factor = np.minimum(R / (np.sqrt(stats) if pp == 2 else stats), 1.0)
            factor *= _SHRINKS[0]
            factor[inside | ~usable] = 1.0
            if zero_origin:
                # x·1 = x exactly: rows inside the ball come out unchanged
                result = np.multiply(x, factor[:, None], dtype=np.float64).astype(dtype, copy=False)
            else:
                dev_all = np.subtract(x, np.asarray(o, dtype=np.float64), dtype=np.float64)
                dev_all *= factor[:, None]
                dev_all += np.asarray(o, dtype=np.float64)
                result = dev_all.astype(dtype, copy=False)
                np.copyto(result, x, where=inside[:, None])
        easy = usable & ~inside
        passed = _rows_in_ball(result, o, R, pp)
        np.copyto(result, x, where=~usable[:, None])
        # rows scaled from their statistic that failed at the first shrink go on with the
        # same c; rows without a usable statistic start from c computed row by row
        origin_row = np.asarray(o, dtype=np.float64)
        redo = np.flatnonzero(easy & ~passed)
        if redo.size:
            dev = np.subtract(x[redo], origin_row, dtype=np.float64)
            c = np.minimum(R / (np.sqrt(stats[redo]) if pp == 2 else stats[redo]), 1.0)
            shrink_rows(result, redo, dev, c, 1)
        hard = np.flatnonzero(~inside & ~usable)
        if hard.size:
            with np.errstate(all="ignore"):
                dev = np.nan_to_num(
                    np.subtract(x[hard], origin_row, dtype=np.float64),
                    nan=0.0,
                    posinf=big,
                    neginf=-big,
                )
            shrink_rows(result, hard, dev, slow_factor(dev), 0)
        return result

    return Transformation(input_domain, input_metric, out, input_metric, function, lambda d: d)


@constructor
def then_np_clamp(
    norm: float, p: Literal[1, 2], origin: Any = None
) -> PartialTransformation[Array, Array, int, int]:
    """Partial of :func:`make_np_clamp`: ``space >> then_np_clamp(norm, p, origin)``."""
    return PartialTransformation(lambda d, m: make_np_clamp(d, m, norm, p, origin))
