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
import warnings
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from . import _frames
from ._types import carrier_name
from ._validate import check_finite_nonneg
from .accuracy import discrete_gaussian_scale_to_accuracy, discrete_laplacian_scale_to_accuracy
from .combinators import make_basic_composition, make_local_release
from .context import Context, _frame_domain, loss_of, unit_of
from .core import Measurement
from .domains import (
    DataFrameDomain,
    OptionDomain,
    VectorDomain,
    atom_domain,
    dataframe_domain,
    vector_domain,
)
from .errors import FailedMap, InvalidParameter, NotImplementedForType
from .measurements import make_randomized_response_bool, then_private_quantile
from .measurements.noise import then_laplace
from .measures import MaxDivergence, ZeroConcentratedDivergence, max_divergence
from .metrics import (
    ChangeOneIdDistance,
    SymmetricIdDistance,
    hamming_distance,
    symmetric_distance,
    symmetric_id_distance,
)
from .search import binary_search
from .transformations import (
    make_select_column,
    then_clamp,
    then_count,
    then_count_by_categories,
    then_count_per_id,
    then_drop_null,
    then_sum,
    then_truncate_per_id,
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
    "suggest_max_rows_per_id",
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


@dataclass(frozen=True)
class _Unit:
    """Who the individual is, for a helper: ``column`` of a frame, ``privacy_unit`` (as
    :func:`~opendp_lite.context.unit_of` gives it) and the truncation bound."""

    column: Any = None
    privacy_unit: tuple[Any, Any] | None = None
    max_rows_per_id: int | None = None
    keep: object = "sample"


#: column names that look like an identifier (read from the schema, never from the values)
_ID_NAMES = (
    "id",
    "person",
    "person_id",
    "user",
    "user_id",
    "customer",
    "customer_id",
    "patient",
    "patient_id",
    "client_id",
    "account_id",
    "uid",
    "pid",
)


def _looks_like_id(name: object) -> bool:
    n = str(name).lower()
    return n in _ID_NAMES or n.endswith("_id")


def _column_carrier(data: Any, schema: dict[Any, str | None] | None, column: Any) -> str:
    if schema is not None:
        if column not in schema:
            raise InvalidParameter(f"the frame has no column {column!r}; columns: {list(schema)}")
        T = schema[column]
    elif isinstance(data, dict) and column in data:
        dt = np.asarray(data[column]).dtype
        T = "String" if dt.kind in "UO" else _numpy_carrier(dt)
    else:
        raise InvalidParameter(f"the frame has no column {column!r}")
    if T is None:
        raise NotImplementedForType(
            f"column {column!r} has no supported type (read from the schema); cast it first"
        )
    return T


def _numpy_carrier(dt: Any) -> str | None:
    try:
        return carrier_name(dt.type)
    except Exception:
        return None


def _is_id_metric(metric: object) -> bool:
    return isinstance(metric, SymmetricIdDistance | ChangeOneIdDistance)


def _frame_start(space: Any, unit: _Unit, data: Any, schema: dict[Any, str | None] | None) -> Any:
    """``space >> truncate_per_id (under an identifier unit) >> select_column``."""
    metric = space[1]
    if unit.column is None:
        raise InvalidParameter("the data is a frame: name the column to release with column='...'")
    start: Any = space
    if _is_id_metric(metric):
        if unit.max_rows_per_id is None:
            raise InvalidParameter(
                f"privacy_unit={space[1]!r} counts individuals (as OpenDP's unit_of(identifier="
                "...)), not rows: an individual may hold any number of rows. Fix: pass "
                "max_rows_per_id=k to keep at most k rows of each individual (enforced by "
                "truncation); opendp_lite.helpers.suggest_max_rows_per_id suggests k"
            )
        start = start >> then_truncate_per_id(unit.max_rows_per_id, keep=unit.keep)
    elif unit.max_rows_per_id is not None:
        raise InvalidParameter(
            "max_rows_per_id needs an identifier: pass privacy_unit=dp.unit_of("
            "identifier='...', contributions=1)"
        )
    T = _column_carrier(data, schema, unit.column)
    select = make_select_column(unit.column, TOA=T, K=type(unit.column))
    if isinstance(start, tuple):
        if _frame_domain is not None and isinstance(start[0], DataFrameDomain):
            return select
        raise NotImplementedForType(f"column= needs a frame, got data in {start[0]!r}")
    return start >> select


def _target(
    data: Any, contributions: int, unit: _Unit | None = None
) -> tuple[Any, Any, Callable[[Any], Any]]:
    """``(start, d_in, release)``: the space (minus nulls), the unit, and how to release."""
    unit = unit or _Unit()
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
        if contributions not in (1, data.d_in) or unit.privacy_unit is not None:
            raise InvalidParameter(
                f"contributions={contributions!r} (or privacy_unit=) differs from this "
                f"context's privacy unit {data.d_in!r}; the context's unit applies to every "
                "release: make it with budget(data, epsilon=..., ...)"
            )
        space: Any = (data.accountant.input_domain, data.accountant.input_metric)
        d_in: Any = data.d_in
        release: Callable[[Any], Any] = data
        if unit.column is not None or _is_id_metric(space[1]):
            space = _frame_start(space, unit, data, getattr(data, "schema", None))
    else:
        schema = _frames.schema(data)
        metric: Any = symmetric_distance()
        d_in = contributions
        if unit.privacy_unit is not None:
            metric, d_in = unit.privacy_unit
            if contributions != 1 and contributions != d_in:
                raise InvalidParameter(
                    f"pass either contributions={contributions!r} or privacy_unit=, not both"
                )
        if unit.column is not None or _is_id_metric(metric):
            frame_domain = _frame_domain(data, schema) if schema is not None else dataframe_domain()
            if not _is_id_metric(metric) and schema is not None:
                _warn_claim(schema, d_in)
            space = _frame_start((frame_domain, metric), unit, data, schema)
        else:
            space = (_frame_domain(data, schema), metric)

        def release(m: Any) -> Any:
            return m(data)

    domain = space[0] if isinstance(space, tuple) else space.output_domain
    if not isinstance(domain, VectorDomain):
        fix = (
            "pass one column: data['column'], or the frame with column='...' (and, when an "
            "individual may hold several rows, "
            "privacy_unit=dp.unit_of(identifier='...', contributions=1), max_rows_per_id=k)"
            if _frames.is_frame(data)
            else "pass a column"
        )
        raise NotImplementedForType(
            f"helpers take one column (a Series, list or 1-d array), got data in {domain!r}. "
            f"Fix: {fix}; for a statistic per group use dp.c.grouped_sum / grouped_count / "
            "grouped_mean"
        )
    element = domain.element_domain
    if isinstance(element, OptionDomain) or getattr(element, "nan", False):
        return space >> then_drop_null(), d_in, release
    return space, d_in, release


def _warn_claim(schema: dict[Any, str | None], d_in: Any) -> None:
    """Without an identifier, ``contributions`` is a claim: say so when a column looks like
    one (by its name, from the schema; never a value)."""
    ids = [c for c in schema if _looks_like_id(c)]
    if ids:
        warnings.warn(
            f"contributions={d_in!r} is a claim taken on trust: each individual holds at most "
            f"{d_in!r} row(s). The frame has a column {ids[0]!r} that looks like an identifier; "
            "if an individual may hold more rows, enforce a bound: privacy_unit=dp.unit_of("
            f"identifier={ids[0]!r}, contributions=1), max_rows_per_id=k",
            ClaimWarning,
            stacklevel=4,
        )


class ClaimWarning(UserWarning):
    """A helper's ``contributions`` is taken on trust where the data suggests an identifier."""


def _tail(start: Any) -> tuple[Any, Any]:
    """``(prefix, space)``: a chain's transformation and the space after it, so a composition
    of releases runs on one truncated sample (``prefix`` is ``None`` for a bare space)."""
    if isinstance(start, tuple):
        return None, start
    return start, (start.output_domain, start.output_metric)


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


def dp_count(
    data: Any,
    epsilon: float,
    contributions: int = 1,
    *,
    column: Any = None,
    privacy_unit: tuple[Any, Any] | None = None,
    max_rows_per_id: int | None = None,
    keep: object = "sample",
) -> int:
    """A DP count of the records, with discrete Laplace noise.

    Chain: ``then_count() >> then_laplace(scale)``, scale solved so that ε(contributions) <=
    ``epsilon``.

    Raises:
        InvalidParameter: if ``epsilon`` is not finite and > 0.

    >>> isinstance(dp_count(list(range(100)), epsilon=1.0), int)
    True
    """
    start, d_in, release = _target(
        data, contributions, _Unit(column, privacy_unit, max_rows_per_id, keep)
    )
    eps = _epsilon(epsilon)
    return int(release(_solve(lambda s: start >> then_count() >> then_laplace(s), d_in, eps)))


def dp_sum(
    data: Any,
    bounds: tuple[Any, Any],
    epsilon: float,
    contributions: int = 1,
    *,
    column: Any = None,
    privacy_unit: tuple[Any, Any] | None = None,
    max_rows_per_id: int | None = None,
    keep: object = "sample",
) -> Any:
    """A DP sum of the values clamped to ``bounds``, with (discrete) Laplace noise.

    Chain: ``then_clamp(bounds) >> then_sum() >> then_laplace(scale)``; the size of the data
    need not be known.  ``bounds`` are of the data's type (floats for a float column).

    Raises:
        InvalidParameter: if ``epsilon`` is not finite and > 0, or ``bounds`` are invalid.

    >>> 0.0 <= dp_sum([1.0, 2.0, 3.0] * 50, bounds=(0.0, 5.0), epsilon=1.0) < 1000.0
    True
    """
    start, d_in, release = _target(
        data, contributions, _Unit(column, privacy_unit, max_rows_per_id, keep)
    )
    eps = _epsilon(epsilon)
    pre = start >> then_clamp(bounds) >> then_sum()
    return release(_solve(lambda s: pre >> then_laplace(s), d_in, eps))


def dp_mean(
    data: Any,
    bounds: tuple[Any, Any],
    epsilon: float,
    contributions: int = 1,
    *,
    column: Any = None,
    privacy_unit: tuple[Any, Any] | None = None,
    max_rows_per_id: int | None = None,
    keep: object = "sample",
) -> float:
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
    start, d_in, release = _target(
        data, contributions, _Unit(column, privacy_unit, max_rows_per_id, keep)
    )
    eps = _epsilon(epsilon)
    lo, hi = bounds
    width = max(abs(float(lo)), abs(float(hi)), 1.0)
    prefix, vec = _tail(start)  # one truncated sample feeds both releases
    sums = vec >> then_clamp(bounds) >> then_sum()
    counts = vec >> then_count()

    def build(s: float) -> Measurement[Any, Any, Any, Any]:
        both = make_basic_composition([sums >> then_laplace(s * width), counts >> then_laplace(s)])
        return both if prefix is None else prefix >> both

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
    *,
    column: Any = None,
    privacy_unit: tuple[Any, Any] | None = None,
    max_rows_per_id: int | None = None,
    keep: object = "sample",
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
    start, d_in, release = _target(
        data, contributions, _Unit(column, privacy_unit, max_rows_per_id, keep)
    )
    eps = _epsilon(epsilon)
    cands = list(candidates) if candidates is not None else _candidates(start, bounds)

    prefix, vec = _tail(start)  # one truncated sample feeds every quantile

    def build(s: float) -> Measurement[Any, Any, Any, Any]:
        parts = [vec >> then_private_quantile(max_divergence(), cands, a, s) for a in alphas]
        both = make_basic_composition(parts)
        return both if prefix is None else prefix >> both

    return list(release(_solve(build, d_in, eps)))


def dp_median(
    data: Any,
    bounds: tuple[Any, Any],
    epsilon: float,
    candidates: Sequence[Any] | None = None,
    contributions: int = 1,
    *,
    column: Any = None,
    privacy_unit: tuple[Any, Any] | None = None,
    max_rows_per_id: int | None = None,
    keep: object = "sample",
) -> Any:
    """A DP median: :func:`dp_quantiles` at alpha 0.5.

    Raises:
        InvalidParameter: as :func:`dp_quantiles`.

    >>> 0 <= dp_median(list(range(100)), bounds=(0, 99), epsilon=1.0) <= 99
    True
    """
    return dp_quantiles(
        data,
        [0.5],
        bounds,
        epsilon,
        candidates,
        contributions,
        column=column,
        privacy_unit=privacy_unit,
        max_rows_per_id=max_rows_per_id,
        keep=keep,
    )[0]


def dp_histogram(
    data: Any,
    categories: Sequence[C],
    epsilon: float,
    contributions: int = 1,
    *,
    column: Any = None,
    privacy_unit: tuple[Any, Any] | None = None,
    max_rows_per_id: int | None = None,
    keep: object = "sample",
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
    start, d_in, release = _target(
        data, contributions, _Unit(column, privacy_unit, max_rows_per_id, keep)
    )
    eps = _epsilon(epsilon)
    pre = start >> then_count_by_categories(list(categories))
    counts = release(_solve(lambda s: pre >> then_laplace(s), d_in, eps))
    return {c: int(v) for c, v in zip(categories, counts, strict=False)}


def dp_mode(
    data: Any,
    categories: Sequence[C],
    epsilon: float,
    contributions: int = 1,
    *,
    column: Any = None,
    privacy_unit: tuple[Any, Any] | None = None,
    max_rows_per_id: int | None = None,
    keep: object = "sample",
) -> C:
    """The category with the largest noisy count (report noisy max with Laplace noise).

    The argmax of :func:`dp_histogram` (post-processing), so it costs ``epsilon``.

    Raises:
        InvalidParameter: as :func:`dp_histogram`, or if ``categories`` is empty.

    >>> dp_mode(["a"] * 500 + ["b"] * 10, ["a", "b"], epsilon=1.0)
    'a'
    """
    if not categories:
        raise InvalidParameter("categories must not be empty: list the public categories")
    counts = dp_histogram(
        data,
        categories,
        epsilon,
        contributions,
        column=column,
        privacy_unit=privacy_unit,
        max_rows_per_id=max_rows_per_id,
        keep=keep,
    )
    return max(categories, key=lambda c: counts[c])


def suggest_max_rows_per_id(
    data: Any,
    epsilon: float,
    identifier: Any = None,
    alpha: float = 0.9,
    candidates: Sequence[int] | None = None,
    privacy_unit: tuple[Any, Any] | None = None,
) -> int:
    """A DP suggestion for ``max_rows_per_id``: the ``alpha``-quantile of the number of rows
    each individual holds, so truncating to it keeps every row of about ``alpha`` of them.

    Chain: ``then_count_per_id() >> then_private_quantile(candidates, alpha, scale)``: one count
    per individual, so one individual moves that vector by one record (two under
    ``change_one_id_distance``); the scale is solved so that the release costs ``epsilon``,
    charged like any other release (to the context, when ``data`` is a
    :class:`~opendp_lite.context.Context` over a frame with an identifier unit).  The
    suggestion is itself DP: use it as ``max_rows_per_id`` in later releases, whose costs add
    to this one.  ``candidates`` default to ``1, 2, ..., 100``.

    Raises:
        InvalidParameter: if ``epsilon`` is not finite and > 0, no identifier is named (pass
            ``identifier=`` or ``privacy_unit=dp.unit_of(identifier=..., ...)``), or
            ``alpha`` is outside [0, 1].

    >>> ids = [i // 3 for i in range(3000)]  # 1000 people, 3 rows each
    >>> 1 <= suggest_max_rows_per_id({"id": ids}, epsilon=1.0, identifier="id") <= 100
    True
    """
    eps = _epsilon(epsilon)
    cands = list(candidates) if candidates is not None else list(range(1, 101))
    if isinstance(data, Context):
        metric = data.accountant.input_metric
        if not _is_id_metric(metric):
            raise InvalidParameter(
                "suggest_max_rows_per_id needs a context whose privacy unit names an "
                "identifier: dp.unit_of(identifier='...', contributions=1)"
            )
        if not isinstance(data.accountant.output_measure, MaxDivergence):
            raise NotImplementedForType(
                f"helpers release under pure DP; the context measures "
                f"{data.accountant.output_measure!r}: use context.query() instead"
            )
        space: Any = (data.accountant.input_domain, metric)
        d_in: Any = data.d_in
        release: Callable[[Any], Any] = data
    else:
        if privacy_unit is not None:
            metric, d_in = privacy_unit
        elif identifier is not None:
            metric, d_in = symmetric_id_distance(identifier), 1
        else:
            raise InvalidParameter(
                "name the identifier: identifier='person_id' (or privacy_unit=dp.unit_of("
                "identifier='person_id', contributions=1))"
            )
        if not _is_id_metric(metric):
            raise InvalidParameter(f"privacy_unit must name an identifier, got {metric!r}")
        schema = _frames.schema(data)
        space = (_frame_domain(data, schema) if schema is not None else dataframe_domain(), metric)

        def release(m: Any) -> Any:
            return m(data)

    counts = space >> then_count_per_id()
    found = release(
        _solve(
            lambda s: counts >> then_private_quantile(max_divergence(), cands, alpha, s), d_in, eps
        )
    )
    return int(found)


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
