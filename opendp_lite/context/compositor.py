"""Compositor normalisation: the accountant (compositor or privacy filter) for a budget."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .._validate import check_finite_nonneg, check_int
from ..combinators.composition import (
    make_adaptive_composition,
    make_fully_adaptive_composition,
    make_privacy_filter,
)
from ..core import (
    Domain,
    Measure,
    Measurement,
    Metric,
)
from ..errors import FailedMap, InvalidParameter
from ..search import binary_search


def _scale(loss: Any, s: float) -> Any:
    if isinstance(loss, tuple):
        return tuple(x * s for x in loss)
    return loss * s


def _normalize_compositor(
    domain: Domain[Any],
    privacy_unit: tuple[Metric[Any], Any],
    privacy_loss: tuple[Measure[Any], Any],
    split_evenly_over: int | None = None,
    split_by_weights: Sequence[float] | None = None,
) -> tuple[Any, list[Any] | None, Any]:
    """The accountant for a budget: ``(accountant, d_mids, d_out)``.

    With a split, an adaptive compositor whose ``d_mids`` are proportional to the weights,
    scaled (by binary search) to the largest values whose composition fits ``d_out``.
    Without, a privacy filter on an odometer (or a bare odometer for an infinite budget).
    """
    input_metric, d_in = privacy_unit
    output_measure, d_out = privacy_loss
    if split_evenly_over is not None and split_by_weights is not None:
        raise InvalidParameter("pass at most one of split_evenly_over and split_by_weights")
    if split_evenly_over is not None:
        weights = [1.0] * check_int("split_evenly_over", split_evenly_over, min=1)
    elif split_by_weights is not None:
        weights = [check_finite_nonneg("split_by_weights[i]", w) for w in split_by_weights]
        if not weights or sum(weights) <= 0:
            raise InvalidParameter(
                "split_by_weights must hold weights >= 0 with a positive sum, "
                f"got {split_by_weights!r}"
            )
    else:
        odometer = make_fully_adaptive_composition(domain, input_metric, output_measure)
        budget = list(d_out) if isinstance(d_out, tuple) else [d_out]
        if any(isinstance(b, float) and math.isinf(b) for b in budget[:1]):
            return odometer, None, None
        return make_privacy_filter(odometer, d_in, d_out), None, d_out

    first = d_out[0] if isinstance(d_out, tuple) else d_out
    if isinstance(first, (int, float)) and math.isinf(first):
        raise InvalidParameter(f"a split budget must be finite, got privacy_loss={d_out!r}")
    parts = d_out if isinstance(d_out, tuple) else (d_out,)
    if all(isinstance(p, (int, float)) and p == 0 for p in parts):
        raise InvalidParameter(f"a split budget must be positive, got privacy_loss={d_out!r}")
    total = math.fsum(weights)
    unit = [w / total for w in weights]

    def make(s: float) -> Measurement[Any, Any, Any, Any]:
        return make_adaptive_composition(
            domain, input_metric, output_measure, d_in, [_scale(d_out, s * u) for u in unit]
        )

    def fits(s: float) -> bool:
        try:
            return make(s).check(d_in, d_out)
        except (InvalidParameter, FailedMap):
            return False

    s = binary_search(fits, bounds=(0.0, 2.0), T=float)
    d_mids = [_scale(d_out, s * u) for u in unit]
    return make(s), d_mids, None
