"""Private selection from private candidates (Liu & Talwar 2019), with exact random stopping."""

from __future__ import annotations

import math
import numbers
from typing import Any, TypeVar

from .. import _arith
from .._registry import constructor
from .._validate import check_finite_nonneg, check_real
from ..core import Measurement
from ..errors import FailedFunction, InvalidParameter, NotImplementedForType
from ..measures import MaxDivergence
from ..samplers.bernoulli import sample_bernoulli

__all__ = ["make_select_private_candidate"]

TI = TypeVar("TI")
DI = TypeVar("DI")


@constructor
def make_select_private_candidate(
    measurement: Measurement[TI, Any, DI, float],
    stop_probability: float,
    threshold: float,
) -> Measurement[TI, Any, DI, float]:
    r"""Repeat a scored ε-DP release until its score reaches ``threshold``, or stop at random.

    ``measurement`` releases ``(score, candidate)``.  Each round runs it afresh; a round whose
    score is ``>= threshold`` is released; otherwise the loop stops with probability
    ``stop_probability`` (an exact Bernoulli draw on the rational value of the float) and
    releases ``None``.  With ``stop_probability = 0`` it runs until the threshold is reached.

    Privacy map (MaxDivergence), rounded up:
        ε'(d_in) = 2·ε(d_in)

    Raises:
        InvalidParameter: if ``stop_probability`` is not in [0, 1) or ``threshold`` is not
            finite.
        NotImplementedForType: if the output measure is not ``max_divergence()``.
        FailedFunction (at release): if a release is not a ``(score, candidate)`` pair with a
            real score.

    Proof: docs/proofs/make_select_private_candidate.md

    >>> import opendp_lite.prelude as dp
    >>> dp.enable_features("honest-but-curious")
    >>> space = dp.atom_domain(T=float), dp.absolute_distance(T=float)
    >>> scored = dp.m.make_user_measurement(
    ...     *space, dp.max_divergence(), lambda x: (x, "candidate"), lambda d: 0.5 * d)
    >>> select = dp.c.make_select_private_candidate(scored, stop_probability=0.0, threshold=1.0)
    >>> select(2.0), select.map(1.0)
    ((2.0, 'candidate'), 1.0)
    """
    if not isinstance(measurement.output_measure, MaxDivergence):
        raise NotImplementedForType(
            f"measurement must satisfy MaxDivergence(), got {measurement.output_measure!r}"
        )
    stop = check_finite_nonneg("stop_probability", stop_probability)
    if not stop < 1:
        raise InvalidParameter(f"stop_probability must be in [0, 1), got {stop_probability!r}")
    limit = check_real("threshold", threshold)
    if not math.isfinite(limit):
        raise InvalidParameter(f"threshold must be finite, got {threshold!r}")
    stop_exact = _arith.q(stop)
    inner = measurement.function
    inner_map = measurement.map

    def function(x: TI) -> Any:
        while True:
            release = inner(x)
            if not (isinstance(release, tuple | list) and len(release) == 2):
                raise FailedFunction(
                    f"measurement must release a (score, candidate) pair, got {type(release)}"
                )
            score = release[0]
            if isinstance(score, bool) or not isinstance(score, numbers.Real):
                raise FailedFunction(f"score must be a real number, got {score!r}")
            if float(score) >= limit:
                return release
            if stop > 0 and sample_bernoulli(stop_exact):
                return None

    def privacy_map(d_in: DI) -> float:
        return _arith.mul_up(2, inner_map(d_in))

    return Measurement(
        measurement.input_domain,
        measurement.input_metric,
        MaxDivergence(),
        function,
        privacy_map,
    )
