"""One-call releases for everyday analyses, built only on the proven constructors.

Each helper builds a chain of public constructors (whose maps are proven in ``docs/proofs``),
finds the smallest noise scale whose privacy map fits the requested ε with
:func:`~opendp_lite.search.binary_search` (a search over the proven map, so the built
chain never spends more than asked), and releases it.  Nothing here adds a map of its own:
what a helper computes after the release (a ratio, a label, a debiased share) is
post-processing.

``data`` is a column: a pandas or Polars Series (``df["col"]``), a pyarrow array, a list or a
1-d numpy array; one individual adds or removes at most ``contributions`` records.  Its type
is read from its dtype, never from its values.  A float column may hold NaN (or None, pandas
NA, Polars null): the missing values are dropped first (``then_drop_null``).  ``data`` may also be a
:class:`~opendp_lite.context.Context` made by :func:`budget`: the release is then charged to
its budget, which refuses it (before any noise is drawn) if it does not fit, and the
context's privacy unit applies (a different ``contributions`` is refused).

>>> import numpy as np
>>> from opendp_lite.helpers import budget, dp_count, dp_mean
>>> ages = np.array([23.0, 35.0, 41.0, 52.0, 29.0] * 40)
>>> 0.0 <= dp_mean(ages, bounds=(18.0, 90.0), epsilon=1.0) <= 90.0
True
>>> session = budget(ages, epsilon=1.0)
>>> isinstance(dp_count(session, epsilon=0.25), int)
True
>>> session.remaining_privacy_loss()
0.75
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from . import _frames
from ._validate import check_finite_nonneg
from .accuracy import discrete_gaussian_scale_to_accuracy, discrete_laplacian_scale_to_accuracy
from .combinators import make_basic_composition, make_local_release
from .context import Context, _frame_domain, loss_of, unit_of
from .core import Measurement
from .domains import OptionDomain, VectorDomain, atom_domain, vector_domain
from .errors import FailedMap, InvalidParameter, NotImplementedForType
from .measurements import make_randomized_response_bool, then_private_quantile
from .measurements.noise import then_laplace
from .measures import MaxDivergence, ZeroConcentratedDivergence, max_divergence
from .metrics import hamming_distance, symmetric_distance
from .search import binary_search
from .transformations import (
    then_clamp,
    then_count,
    then_count_by_categories,
    then_drop_null,
    then_sum,
)

__all__ = [
    "Calibration",
    "budget",
    "calibrate",
    "debias_randomized_response",
    "dp_count",
    "dp_histogram",
    "dp_mean",
    "dp_median",
    "dp_mode",
    "dp_quantiles",
    "dp_sum",
    "randomized_response",
]

C = TypeVar("C", bound=Hashable)


def budget(data: Any, epsilon: float, contributions: int = 1) -> Context:
    """A pure-DP session over ``data`` holding the total budget ``epsilon``.

    Queries state their own ε and are charged as they come; one that would take the total
    past ``epsilon`` is refused with ``BudgetExceeded`` before anything is computed.  It is
    ``dp.Context.compositor(data=data, privacy_unit=dp.unit_of(contributions=contributions),
    privacy_loss=dp.loss_of(epsilon=epsilon))``.

    Raises:
        InvalidParameter: if ``epsilon`` is negative or not finite.

    >>> session = budget([1, 2, 3], epsilon=1.0)
    >>> session.remaining_privacy_loss()
    1.0
    """
    return Context.compositor(
        data=data,
        privacy_unit=unit_of(contributions=contributions),
        privacy_loss=loss_of(epsilon=_epsilon(epsilon)),
    )


def _epsilon(epsilon: object) -> float:
    eps = check_finite_nonneg("epsilon", epsilon)
    if eps == 0:
        raise InvalidParameter("epsilon must be > 0, got 0: no release is possible at ε = 0")
    return eps


def _target(data: Any, contributions: int) -> tuple[Any, Any, Callable[[Any], Any]]:
    """``(start, d_in, release)``: the space (minus nulls), the unit, and how to release."""
    if isinstance(data, Context):
        if data.d_mids is not None:
            raise InvalidParameter(
                "this context splits its budget up front; helpers state their own epsilon: "
                "make the context with budget(data, epsilon=...)"
            )
        if not isinstance(data.accountant.output_measure, MaxDivergence):
            raise NotImplementedForType(
                f"helpers release under pure DP; the context measures "
                f"{data.accountant.output_measure!r}: use context.query() instead"
            )
        if contributions not in (1, data.d_in):
            raise InvalidParameter(
                f"contributions={contributions!r} differs from this context's privacy unit "
                f"{data.d_in!r}; the context's unit applies to every release: make it with "
                f"budget(data, epsilon=..., contributions={contributions!r})"
            )
        space: Any = (data.accountant.input_domain, data.accountant.input_metric)
        d_in: Any = data.d_in
        release: Callable[[Any], Any] = data
    else:
        space = (_frame_domain(data, _frames.schema(data)), symmetric_distance())
        d_in = contributions

        def release(m: Any) -> Any:
            return m(data)

    domain = space[0]
    if not isinstance(domain, VectorDomain):
        fix = "pass one column: data['column']" if _frames.is_frame(data) else "pass a column"
        raise NotImplementedForType(
            f"helpers take one column (a Series, list or 1-d array), got data in {domain!r}. "
            f"Fix: {fix}; for a statistic per group use dp.c.grouped_sum / grouped_count / "
            "grouped_mean"
        )
    element = domain.element_domain
    if isinstance(element, OptionDomain) or getattr(element, "nan", False):
        return space >> then_drop_null(), d_in, release
    return space, d_in, release


def _param(
    build: Callable[[Any], Any], d_in: Any, d_out: Any, bounds: tuple[Any, Any] | None = None
) -> float:
    """The parameter nearest the boundary where ``build(param).check(d_in, d_out)`` holds.

    A parameter whose map fails (infinite loss at scale 0 or probability 1, say) counts as
    not fitting.
    """

    def fits(param: Any) -> bool:
        try:
            return bool(build(param).check(d_in, d_out))
        except (InvalidParameter, FailedMap):
            return False

    return float(binary_search(fits, bounds=bounds or (None, None), T=float))


def _solve(build: Callable[[float], Any], d_in: Any, epsilon: float) -> Any:
    """The chain at the smallest scale whose proven map gives at most ``epsilon``.

    The chain is built once at scale 1 first, so that a bad argument raises its own typed
    error rather than failing the search.
    """
    build(1.0)
    return build(_param(build, d_in, epsilon))


def dp_count(data: Any, epsilon: float, contributions: int = 1) -> int:
    """A DP count of the records, with discrete Laplace noise.

    Chain: ``then_count() >> then_laplace(scale)``, scale solved so that ε(contributions) <=
    ``epsilon``.

    Raises:
        InvalidParameter: if ``epsilon`` is not finite and > 0.

    >>> isinstance(dp_count(list(range(100)), epsilon=1.0), int)
    True
    """
    start, d_in, release = _target(data, contributions)
    eps = _epsilon(epsilon)
    return int(release(_solve(lambda s: start >> then_count() >> then_laplace(s), d_in, eps)))


def dp_sum(data: Any, bounds: tuple[Any, Any], epsilon: float, contributions: int = 1) -> Any:
    """A DP sum of the values clamped to ``bounds``, with (discrete) Laplace noise.

    Chain: ``then_clamp(bounds) >> then_sum() >> then_laplace(scale)``; the size of the data
    need not be known.  ``bounds`` are of the data's type (floats for a float column).

    Raises:
        InvalidParameter: if ``epsilon`` is not finite and > 0, or ``bounds`` are invalid.

    >>> 0.0 <= dp_sum([1.0, 2.0, 3.0] * 50, bounds=(0.0, 5.0), epsilon=1.0) < 1000.0
    True
    """
    start, d_in, release = _target(data, contributions)
    eps = _epsilon(epsilon)
    pre = start >> then_clamp(bounds) >> then_sum()
    return release(_solve(lambda s: pre >> then_laplace(s), d_in, eps))


def dp_mean(data: Any, bounds: tuple[Any, Any], epsilon: float, contributions: int = 1) -> float:
    """A DP mean of the values clamped to ``bounds``, when the number of records is private.

    A noisy sum and a noisy count released together (``make_basic_composition`` of
    ``clamp >> sum >> laplace(s·w)`` and ``count >> laplace(s)``, w = max(|L|, |U|), one
    scale s solved so that the composition spends at most ``epsilon``), divided, and clipped
    to ``bounds`` (post-processing).

    Raises:
        InvalidParameter: if ``epsilon`` is not finite and > 0, or ``bounds`` are invalid.

    >>> 40.0 <= dp_mean([50.0] * 1000, bounds=(0.0, 100.0), epsilon=1.0) <= 60.0
    True
    """
    start, d_in, release = _target(data, contributions)
    eps = _epsilon(epsilon)
    lo, hi = bounds
    width = max(abs(float(lo)), abs(float(hi)), 1.0)
    sums = start >> then_clamp(bounds) >> then_sum()
    counts = start >> then_count()

    def build(s: float) -> Measurement[Any, Any, Any, Any]:
        return make_basic_composition([sums >> then_laplace(s * width), counts >> then_laplace(s)])

    total, n = release(_solve(build, d_in, eps))
    return float(min(max(float(total) / max(int(n), 1), float(lo)), float(hi)))


def _candidates(start: Any, bounds: tuple[Any, Any], n: int = 1001) -> list[Any]:
    domain = start[0] if isinstance(start, tuple) else start.output_domain
    lo, hi = bounds
    grid = np.linspace(float(lo), float(hi), n)
    if domain.element_domain.T in ("f64", "f32"):
        return [float(v) for v in grid]
    return sorted({round(float(v)) for v in grid})


def dp_quantiles(
    data: Any,
    alphas: Sequence[float],
    bounds: tuple[Any, Any],
    epsilon: float,
    candidates: Sequence[Any] | None = None,
    contributions: int = 1,
) -> list[Any]:
    """DP quantiles (one per ``alphas``, e.g. 0.5 for the median), chosen among candidates.

    One ``make_private_quantile`` per alpha (the exponential mechanism on the quantile score),
    composed with ``make_basic_composition`` at one scale solved so that the total is at most
    ``epsilon``.  ``candidates`` default to 1001 evenly spaced values across ``bounds`` (the
    integers among them for an integer column).

    Raises:
        InvalidParameter: if ``epsilon`` is not finite and > 0, ``alphas`` is empty or an
            alpha is outside [0, 1].

    >>> q1, q3 = dp_quantiles(list(range(100)), [0.25, 0.75], bounds=(0, 99), epsilon=1.0)
    >>> isinstance(q1, int) and 0 <= q1 <= 99 and 0 <= q3 <= 99
    True
    """
    if not alphas:
        raise InvalidParameter("alphas must hold at least one quantile in [0, 1], got []")
    start, d_in, release = _target(data, contributions)
    eps = _epsilon(epsilon)
    cands = list(candidates) if candidates is not None else _candidates(start, bounds)

    def build(s: float) -> Measurement[Any, Any, Any, Any]:
        parts = [start >> then_private_quantile(max_divergence(), cands, a, s) for a in alphas]
        return make_basic_composition(parts)

    return list(release(_solve(build, d_in, eps)))


def dp_median(
    data: Any,
    bounds: tuple[Any, Any],
    epsilon: float,
    candidates: Sequence[Any] | None = None,
    contributions: int = 1,
) -> Any:
    """A DP median: :func:`dp_quantiles` at alpha 0.5.

    Raises:
        InvalidParameter: as :func:`dp_quantiles`.

    >>> 0 <= dp_median(list(range(100)), bounds=(0, 99), epsilon=1.0) <= 99
    True
    """
    return dp_quantiles(data, [0.5], bounds, epsilon, candidates, contributions)[0]


def dp_histogram(
    data: Any, categories: Sequence[C], epsilon: float, contributions: int = 1
) -> dict[C, int]:
    """DP counts of each category, keyed by category (values outside them are not shown).

    Chain: ``then_count_by_categories(categories) >> then_laplace(scale)`` (one person moves
    the counts by at most ``contributions`` in L1); the count of the other values is released
    by the chain too and dropped here.

    Raises:
        InvalidParameter: if ``epsilon`` is not finite and > 0, or categories repeat.

    >>> sorted(dp_histogram(["a", "b", "a"] * 50, ["a", "b"], epsilon=1.0))
    ['a', 'b']
    """
    start, d_in, release = _target(data, contributions)
    eps = _epsilon(epsilon)
    pre = start >> then_count_by_categories(list(categories))
    counts = release(_solve(lambda s: pre >> then_laplace(s), d_in, eps))
    return {c: int(v) for c, v in zip(categories, counts, strict=False)}


def dp_mode(data: Any, categories: Sequence[C], epsilon: float, contributions: int = 1) -> C:
    """The category with the largest noisy count (report noisy max with Laplace noise).

    The argmax of :func:`dp_histogram` (post-processing), so it costs ``epsilon``.

    Raises:
        InvalidParameter: as :func:`dp_histogram`, or if ``categories`` is empty.

    >>> dp_mode(["a"] * 500 + ["b"] * 10, ["a", "b"], epsilon=1.0)
    'a'
    """
    if not categories:
        raise InvalidParameter("categories must not be empty: list the public categories")
    counts = dp_histogram(data, categories, epsilon, contributions)
    return max(categories, key=lambda c: counts[c])


def _response_prob(epsilon: float) -> float:
    """The largest truthful-answer probability whose proven map is at most ``epsilon``."""
    return _param(make_randomized_response_bool, 1, _epsilon(epsilon), bounds=(0.5, 1.0))


def randomized_response(answers: Any, epsilon: float) -> npt.NDArray[np.bool_]:
    """Local DP: each yes/no answer is reported truthfully w.p. p, else flipped (ε-LDP each).

    ``make_local_release`` of ``make_randomized_response_bool(p)``, p solved so that each
    respondent's ε <= ``epsilon``.  In a real survey each respondent runs this on their own
    answer; the collector only ever sees the output.

    Raises:
        InvalidParameter: if ``epsilon`` is not finite and > 0.

    >>> randomized_response([True, False, True], epsilon=1.0).dtype
    dtype('bool')
    """
    rr = make_randomized_response_bool(_response_prob(epsilon))
    local = make_local_release(vector_domain(atom_domain(T=bool)), hamming_distance(), rr)
    return np.asarray(local(answers), dtype=bool)


def debias_randomized_response(reports: Any, epsilon: float) -> float:
    """The unbiased estimate of the true share of "yes" from :func:`randomized_response`.

    p̂ = (r − (1 − p)) / (2p − 1), r the share of "yes" reports and p the truthful-answer
    probability used at ``epsilon`` (post-processing: it reads only the reports).

    Raises:
        InvalidParameter: if ``epsilon`` is not finite and > 0, or there are no reports.

    >>> reports = randomized_response([True] * 2000 + [False] * 2000, epsilon=2.0)
    >>> 0.4 < debias_randomized_response(reports, epsilon=2.0) < 0.6
    True
    """
    r = np.asarray(reports, dtype=bool)
    if r.size == 0:
        raise InvalidParameter("reports must not be empty")
    p = _response_prob(epsilon)
    return float((float(r.mean()) - (1.0 - p)) / (2.0 * p - 1.0))


@dataclass(frozen=True)
class Calibration:
    """A measurement at the noise scale solved for a target loss, with its accuracy.

    ``accuracy`` is a such that Pr[|noise| >= a] <= ``alpha`` for integer (discrete Laplace
    or discrete Gaussian) noise, so ``release(data)`` returns the value and the interval
    [value − a, value + a], which covers the exact (unnoised) answer with probability at
    least 1 − ``alpha``.  It accounts for the noise only, not for clamping.
    """

    measurement: Measurement[Any, Any, Any, Any]
    scale: float
    alpha: float
    accuracy: float

    def release(self, data: Any) -> tuple[Any, tuple[float, float]]:
        """``(value, (value − accuracy, value + accuracy))``."""
        value = self.measurement(data)
        return value, (value - self.accuracy, value + self.accuracy)


def calibrate(
    make_chain: Callable[[float], Measurement[Any, Any, Any, Any]],
    d_out: float,
    d_in: Any = 1,
    alpha: float = 0.05,
) -> Calibration:
    """Solve ``make_chain(scale)`` for the smallest scale with privacy loss <= ``d_out``.

    ``make_chain`` ends in integer Laplace noise (ε, pure DP) or integer Gaussian noise (ρ,
    zCDP); the accuracy is ``discrete_laplacian_scale_to_accuracy`` or
    ``discrete_gaussian_scale_to_accuracy`` of the solved scale at ``alpha``.

    Raises:
        InvalidParameter: if ``d_out`` is not finite and > 0 or ``alpha`` is outside (0, 1).
        NotImplementedForType: if the chain's measure is neither pure DP nor zCDP.

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    >>> cal = calibrate(lambda s: space >> dp.t.then_count() >> dp.m.then_laplace(s), 1.0)
    >>> cal.scale, round(cal.accuracy, 2)
    (1.0, 3.38)
    """
    target = _epsilon(d_out)
    scale = _param(make_chain, d_in, target)
    measurement = make_chain(scale)
    measure = measurement.output_measure
    if isinstance(measure, MaxDivergence):
        accuracy = discrete_laplacian_scale_to_accuracy(scale, alpha)
    elif isinstance(measure, ZeroConcentratedDivergence):
        accuracy = discrete_gaussian_scale_to_accuracy(scale, alpha)
    else:
        raise NotImplementedForType(
            f"calibrate: the chain must measure pure DP or zCDP, got {measure!r}"
        )
    if math.isnan(accuracy):  # pragma: no cover - the accuracy functions refuse bad input
        raise InvalidParameter(f"no accuracy for scale {scale!r} at alpha {alpha!r}")
    return Calibration(measurement, scale, float(alpha), float(accuracy))
