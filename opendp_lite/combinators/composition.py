"""Composition: non-interactive, interactive under a fixed budget, odometers and filters.

The interactive compositors are a security boundary.  Their state lives in a
:class:`~opendp_lite.core.Queryable`, whose lock serialises every query, so all accounting
below runs inside that lock: a query is checked against the budget and **charged before it
runs** (a query that raises has still spent its budget), a query that would exceed the budget
is refused with :class:`BudgetExceeded` before anything is computed, and concurrent callers
can never overspend together.  Queryables refuse copying and pickling (a copy would be a fresh
budget) and re-entrant queries.

Under measures for which concurrent composition is not established here (anything other than
pure DP, (ε, δ)-DP, zCDP and Rényi DP), every queryable created while a compositor answers a
query (its child, however the release wraps it: a list, a dict, a user object, a closure) and
every queryable that child creates in turn, is disabled as soon as the compositor answers
another query, so it cannot outlive its parent's sequential accounting.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

from .. import _arith
from .._registry import constructor
from .._spine import derive
from ..core import (
    Domain,
    Measure,
    Measurement,
    Metric,
    PartialTransformation,
    Queryable,
    Transformation,
    _InputTypes,
    _Sequencer,
    _space,
    _type_name,
    check_fits,
    invoke_private,
    make_chain_mt,
)
from ..errors import (
    DomainMismatch,
    FailedMap,
    InvalidParameter,
    MeasureMismatch,
    MetricMismatch,
    NotImplementedForType,
    QueryableError,
)
from ..measures import Approximate, MaxDivergence, RenyiDivergence, ZeroConcentratedDivergence

__all__ = [
    "BudgetExceeded",
    "Odometer",
    "OdometerQueryable",
    "make_adaptive_composition",
    "make_basic_composition",
    "make_composition",
    "make_fully_adaptive_composition",
    "make_privacy_filter",
    "make_sequential_composition",
    "then_adaptive_composition",
    "then_fully_adaptive_composition",
    "then_sequential_composition",
]

TI = TypeVar("TI")
DI = TypeVar("DI")
MO = TypeVar("MO")
_A = TypeVar("_A")
_B = TypeVar("_B")
_DA = TypeVar("_DA")
_DB = TypeVar("_DB")


class BudgetExceeded(QueryableError):
    """A query was refused because it would exceed the privacy budget; nothing was released."""


# ----------------------------------------------------------------------------------------------
# Composition of losses


def _is_ordered(measure: Measure[Any]) -> bool:
    """Whether losses in ``measure`` are compared by a total order (a budget can be checked)."""
    if isinstance(measure, (MaxDivergence, ZeroConcentratedDivergence)):
        return True
    return isinstance(measure, Approximate) and isinstance(
        measure.inner, (MaxDivergence, ZeroConcentratedDivergence)
    )


def _is_composable(measure: Measure[Any]) -> bool:
    return _is_ordered(measure) or isinstance(measure, RenyiDivergence)


def _is_concurrent(measure: Measure[Any]) -> bool:
    """Whether concurrent composition is established for ``measure``.

    Pure DP [VW21], (ε, δ)-DP [Lyu22, VZ23] and Rényi DP, hence zCDP [Lyu22].
    """
    if isinstance(measure, (MaxDivergence, ZeroConcentratedDivergence, RenyiDivergence)):
        return True
    return isinstance(measure, Approximate) and isinstance(measure.inner, MaxDivergence)


def _compose(measure: Measure[Any], losses: Sequence[Any]) -> Any:
    """The basic composition of ``losses`` in ``measure``: their exact sum, rounded up.

    δ sums are capped at 1 (a δ of 1 is vacuous); Rényi curves add pointwise.
    """
    if isinstance(measure, (MaxDivergence, ZeroConcentratedDivergence)):
        return _arith.add_up(0, *losses)
    if isinstance(measure, Approximate):
        inner = _compose(measure.inner, [loss[0] for loss in losses])
        return inner, min(1.0, _arith.add_up(0, *(loss[1] for loss in losses)))
    if isinstance(measure, RenyiDivergence):
        curves = list(losses)
        return lambda alpha: _arith.add_up(0, *(curve(alpha) for curve in curves))
    raise NotImplementedForType(f"composition is not implemented for {measure!r}")


class _RunningTotal:
    """The basic composition of a growing list of losses, in O(1) per loss added.

    Holds the exact sums (rationals) of the ε or ρ parts and of the δ parts, so that
    :meth:`total` equals :func:`_compose` over every loss added so far (and an optional
    pending one): the same exact sum, rounded up once.  Only for the ordered measures (pure
    DP, zCDP and their approximate), the ones an odometer accepts.
    """

    __slots__ = ("approximate", "delta", "eps", "mapped")

    def __init__(self, measure: Measure[Any]) -> None:
        self.approximate = isinstance(measure, Approximate)
        self.eps = _arith.q(0)
        self.delta = _arith.q(0)
        self.mapped = 0  # how many losses (history entries) the sums hold

    def add(self, loss: Any) -> None:
        if self.approximate:
            self.eps += _arith.q(loss[0])
            self.delta += _arith.q(loss[1])
        else:
            self.eps += _arith.q(loss)
        self.mapped += 1

    def total(self, pending: Any = None) -> Any:
        eps, delta = self.eps, self.delta
        if pending is not None:
            if self.approximate:
                eps, delta = eps + _arith.q(pending[0]), delta + _arith.q(pending[1])
            else:
                eps = eps + _arith.q(pending)
        if self.approximate:
            return _arith.up(eps), min(1.0, _arith.up(delta))
        return _arith.up(eps)


def _check_composable(measure: Measure[Any], ordered: bool) -> None:
    ok = _is_ordered(measure) if ordered else _is_composable(measure)
    if not ok:
        raise NotImplementedForType(
            f"output_measure must be one of MaxDivergence(), ZeroConcentratedDivergence() or "
            f"their approximate{'' if ordered else ', or RenyiDivergence()'}, got {measure!r}"
        )


def _check_query(
    query: object, domain: Domain[Any], metric: Metric[Any], measure: Measure[Any]
) -> Measurement[Any, Any, Any, Any]:
    if not isinstance(query, Measurement):
        raise QueryableError(f"a query must be a Measurement, got {type(query).__name__}")
    if query.input_domain != domain:
        raise DomainMismatch(domain, query.input_domain, "query")
    check_fits(domain, query.input_domain, "query")
    if query.input_metric != metric:
        raise MetricMismatch(metric, query.input_metric, "query")
    if query.output_measure != measure:
        raise MeasureMismatch(measure, query.output_measure, "query")
    return query


def _check_fully_adaptive(measure: Measure[Any], who: str) -> None:
    """Refuse the measures whose fully adaptive filter is not proved here.

    Pure DP, zCDP and (ε, δ)-DP are (see the proofs); δ-approximate zCDP is not: the running
    sums of ρ and of δ need a filter theorem of their own, which these proofs do not give.
    """
    _check_composable(measure, ordered=True)
    if isinstance(measure, Approximate) and isinstance(measure.inner, ZeroConcentratedDivergence):
        raise NotImplementedForType(
            f"{who} does not support {measure!r}: a fully adaptive filter for δ-approximate "
            "zCDP (parameters chosen adaptively) is not proved in this library; use "
            "zero_concentrated_divergence() without δ, or a non-adaptive compositor "
            "(make_adaptive_composition with fixed d_mids; in a Context, split_evenly_over "
            "or split_by_weights)"
        )


def _check_d_in(metric: Metric[Any], d_in: object, bound: Any) -> Any:
    d = metric._check_distance(d_in)
    try:
        exceeds = bool(d > bound)
    except Exception as e:  # a user distance whose comparison fails
        raise FailedMap(f"d_in {d!r} cannot be compared with the constructor's d_in: {e}") from e
    if exceeds:
        raise FailedMap(
            f"d_in from the privacy map must be no greater than the d_in of the constructor: "
            f"got {d!r} > {bound!r}"
        )
    return d


# ----------------------------------------------------------------------------------------------
# Non-interactive composition


@constructor
def make_composition(
    measurements: Sequence[Measurement[TI, Any, DI, MO]],
) -> Measurement[TI, list[Any], DI, MO]:
    r"""Release ``[m(x) for m in measurements]``: basic (sequential, non-adaptive) composition.

    Privacy map, the exact sum rounded up (δs summed and capped at 1; Rényi curves pointwise):
        d_out(d_in) = Σ_i map_i(d_in)

    Raises:
        InvalidParameter: if ``measurements`` is empty.
        DomainMismatch, MetricMismatch, MeasureMismatch: if the children's spaces differ.
        NotImplementedForType: if the measure has no composition rule here.

    Proof: docs/proofs/make_composition.md

    >>> import opendp_lite.prelude as dp
    >>> dp.enable_features("honest-but-curious")
    >>> space = dp.atom_domain(T=float), dp.absolute_distance(T=float)
    >>> child = dp.m.make_user_measurement(
    ...     *space, dp.max_divergence(), lambda x: x, lambda d: 0.1 * d)
    >>> both = dp.c.make_composition([child] * 5)
    >>> both(1.0), both.map(1.0)
    ([1.0, 1.0, 1.0, 1.0, 1.0], 0.5000000000000001)
    """
    children = list(measurements)
    if not children:
        raise InvalidParameter("measurements must hold at least one measurement, got []")
    first = children[0]
    # each child's declared column types are declared on the composition's input, so every
    # child's cells are checked where the data enters (a conflict is refused now)
    domain = first.input_domain
    for child in children[1:]:
        if child.input_domain != first.input_domain:
            raise DomainMismatch(first.input_domain, child.input_domain, "composition")
        check_fits(domain, child.input_domain, "composition")
        domain = domain._declaring(child.input_domain)
        if child.input_metric != first.input_metric:
            raise MetricMismatch(first.input_metric, child.input_metric, "composition")
        if child.output_measure != first.output_measure:
            raise MeasureMismatch(first.output_measure, child.output_measure, "composition")
    measure = first.output_measure
    _check_composable(measure, ordered=False)
    functions = [child.function for child in children]
    maps = [child.map for child in children]

    def function(x: TI) -> list[Any]:
        return [f(x) for f in functions]

    def privacy_map(d_in: DI) -> MO:
        loss: MO = _compose(measure, [m(d_in) for m in maps])
        return loss

    return Measurement(domain, first.input_metric, measure, function, privacy_map)


@constructor
def make_basic_composition(
    measurements: Sequence[Measurement[TI, Any, DI, MO]],
) -> Measurement[TI, list[Any], DI, MO]:
    r"""The former name of :func:`make_composition` (as in OpenDP): basic composition.

    Privacy map, the exact sum rounded up:
        d_out(d_in) = Σ_i map_i(d_in)

    Raises: as :func:`make_composition`.

    Proof: docs/proofs/make_basic_composition.md

    >>> import opendp_lite.prelude as dp
    >>> dp.enable_features("honest-but-curious")
    >>> space = dp.atom_domain(T=float), dp.absolute_distance(T=float)
    >>> child = dp.m.make_user_measurement(
    ...     *space, dp.zero_concentrated_divergence(), lambda x: x, lambda d: 0.25 * d)
    >>> dp.c.make_basic_composition([child, child]).map(1.0)
    0.5
    """
    return make_composition(measurements)


# ----------------------------------------------------------------------------------------------
# Interactive composition with a budget fixed up front


@constructor
def make_adaptive_composition(
    input_domain: Domain[TI],
    input_metric: Metric[DI],
    output_measure: Measure[MO],
    d_in: DI,
    d_mids: Sequence[MO],
) -> Measurement[TI, Queryable[Measurement[TI, Any, DI, MO], Any], DI, MO]:
    r"""An interactive compositor: its release is a queryable that answers measurements.

    The i-th query ``m`` is answered with ``m(x)`` if ``m.map(d_in) <= d_mids[i]``; it is
    charged ``d_mids[i]`` before it runs.  Queries past the last ``d_mid``, or whose loss
    exceeds the next ``d_mid``, are refused with :class:`BudgetExceeded` and release nothing.

    Privacy map, for d_in' <= d_in, the exact sum rounded up:
        d_out(d_in') = Σ_i d_mids[i]

    Raises:
        InvalidParameter: if ``d_mids`` is empty.
        FailedMap: if ``d_in`` or a ``d_mid`` is not a valid distance or loss.
        NotImplementedForType: unless the measure is pure DP, zCDP or their approximate.

    Proof: docs/proofs/make_adaptive_composition.md

    >>> import opendp_lite.prelude as dp
    >>> dp.enable_features("honest-but-curious")
    >>> space = dp.atom_domain(T=float), dp.absolute_distance(T=float)
    >>> compositor = dp.c.make_adaptive_composition(
    ...     *space, dp.max_divergence(), d_in=1.0, d_mids=[0.5, 0.5])
    >>> compositor.map(1.0)
    1.0
    >>> queryable = compositor(10.0)
    >>> query = dp.m.make_user_measurement(
    ...     *space, dp.max_divergence(), lambda x: x + 1, lambda d: 0.5 * d)
    >>> queryable(query), queryable(query)
    (11.0, 11.0)
    >>> queryable(query)
    Traceback (most recent call last):
    ...
    opendp_lite.combinators.composition.BudgetExceeded: out of queries: all 2 d_mids are spent
    """
    _check_composable(output_measure, ordered=True)
    d_in_checked = input_metric._check_distance(d_in)
    mids = [output_measure._check_loss(d) for d in d_mids]
    if not mids:
        raise InvalidParameter("d_mids must hold at least one privacy loss, got []")
    concurrent = _is_concurrent(output_measure)

    def function(data: TI) -> Queryable[Measurement[TI, Any, DI, MO], Any]:
        spent = [0]  # the number of d_mids charged so far
        sequencer = _Sequencer()

        def transition(query: Measurement[TI, Any, DI, MO]) -> Any:
            query = _check_query(query, input_domain, input_metric, output_measure)
            index = spent[0]
            if index >= len(mids):
                raise BudgetExceeded(f"out of queries: all {len(mids)} d_mids are spent")
            loss = query.map(d_in_checked)
            if not output_measure._le(loss, mids[index]):
                raise BudgetExceeded(
                    f"insufficient budget for query: its loss {loss!r} exceeds the next "
                    f"d_mid {mids[index]!r}"
                )
            spent[0] = index + 1  # charged before the query runs
            if concurrent:
                return invoke_private(query, data)
            # every queryable the query creates is disabled once this one answers another
            with sequencer.children(sequencer.advance()):
                return invoke_private(query, data)

        return Queryable(transition)

    def privacy_map(d_in_prime: DI) -> MO:
        _check_d_in(input_metric, d_in_prime, d_in_checked)
        loss: MO = _compose(output_measure, mids)
        return loss

    return Measurement(input_domain, input_metric, output_measure, function, privacy_map)


@constructor
def make_sequential_composition(
    input_domain: Domain[TI],
    input_metric: Metric[DI],
    output_measure: Measure[MO],
    d_in: DI,
    d_mids: Sequence[MO],
) -> Measurement[TI, Queryable[Measurement[TI, Any, DI, MO], Any], DI, MO]:
    r"""The former name of :func:`make_adaptive_composition` (as in OpenDP).

    Privacy map, for d_in' <= d_in, the exact sum rounded up:
        d_out(d_in') = Σ_i d_mids[i]

    Raises: as :func:`make_adaptive_composition`.

    Proof: docs/proofs/make_sequential_composition.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.atom_domain(T=float), dp.absolute_distance(T=float)
    >>> dp.c.make_sequential_composition(
    ...     *space, dp.zero_concentrated_divergence(), d_in=1.0, d_mids=[0.1, 0.2]).map(1.0)
    0.30000000000000004
    """
    return make_adaptive_composition(input_domain, input_metric, output_measure, d_in, d_mids)


class _PartialCompositor(Generic[TI, DI, MO]):
    """A compositor still waiting for its input space: ``space >> partial``.

    ``transformation >> partial`` (``Transformation.__rshift__`` returns ``NotImplemented``
    for it, so Python calls :meth:`__rrshift__`) builds the compositor on the transformation's
    output space and chains it after the transformation, when the compositor is a
    :class:`Measurement`; ``partial_transformation >> partial`` does the same once the space is
    known.
    """

    __slots__ = ("_make",)

    def __init__(self, make: Callable[[Domain[TI], Metric[DI]], Any]) -> None:
        self._make = make

    def __call__(self, input_domain: Domain[TI], input_metric: Metric[DI]) -> Any:
        return self._make(input_domain, input_metric)

    def __rrshift__(self, other: tuple[Domain[TI], Metric[DI]]) -> Any:
        return self._chain_after(other)

    def _chain_after(self, other: object) -> Any:
        if isinstance(other, PartialTransformation):
            left = other
            return type(self)(lambda d, m: self._chain_after(left(d, m)))
        if isinstance(other, Transformation):
            made = self._make(other.output_domain, other.output_metric)
            if not isinstance(made, Measurement):
                raise TypeError(
                    f"cannot chain {type(made).__name__} after a Transformation (as in "
                    "OpenDP 0.16): build it on the transformed data's space instead"
                )
            return make_chain_mt(made, other)
        return self._make(*_space(other))


class _ThenAdaptive(_PartialCompositor[Any, Any, MO]):
    """The partial of an adaptive compositor; ``left >> partial`` is typed by :meth:`_after`."""

    __slots__ = ()

    @overload
    def __rrshift__(
        self, other: tuple[Domain[_A], Metric[_DA]]
    ) -> Measurement[_A, Queryable[Measurement[_A, Any, _DA, MO], Any], _DA, MO]: ...
    @overload
    def __rrshift__(
        self, other: Transformation[Any, Any, Any, Any] | PartialTransformation[Any, Any, Any, Any]
    ) -> Any: ...
    def __rrshift__(self, other: object) -> Any:  # also after a (partial) transformation
        return self._chain_after(other)

    def _after(
        self, left: Transformation[_A, _B, _DA, _DB]
    ) -> Measurement[_A, Queryable[Measurement[_B, Any, _DB, MO], Any], _DA, MO]:
        return self._chain_after(left)  # type: ignore[no-any-return]


class _ThenOdometer(_PartialCompositor[Any, Any, MO]):
    """The partial of an odometer: ``space >> partial`` only (not after a transformation)."""

    __slots__ = ()

    def __rrshift__(self, other: tuple[Domain[_A], Metric[_DA]]) -> Odometer[_A, _DA, MO]:
        return self._chain_after(other)  # type: ignore[no-any-return]


_P = ParamSpec("_P")
_M = TypeVar("_M")  # the loss type, bound by the output measure given to the partial


def adaptive(
    make: Callable[Concatenate[Any, Any, Measure[Any], _P], Measurement[Any, Any, Any, Any]],
) -> Callable[Concatenate[Measure[_M], _P], _ThenAdaptive[_M]]:
    """The partial of an adaptive compositor ``make``, typed by :class:`_ThenAdaptive`.

    After a transformation, the compositor is built on its output space, as in OpenDP:
    ``transformation >> then_adaptive_composition(...)`` answers queries on transformed data.
    """
    return derive(make, _ThenAdaptive)


def odometer(
    make: Callable[Concatenate[Any, Any, Measure[Any], _P], Odometer[Any, Any, Any]],
) -> Callable[Concatenate[Measure[_M], _P], _ThenOdometer[_M]]:
    """The partial of an odometer ``make``, typed by :class:`_ThenOdometer`."""
    return derive(make, _ThenOdometer)


then_adaptive_composition = adaptive(make_adaptive_composition)
then_sequential_composition = adaptive(make_sequential_composition)


# ----------------------------------------------------------------------------------------------
# Odometers: fully adaptive composition


#: How many distinct d_in an odometer keeps a running total for (each costs O(1) memory).
_MAX_RUNNING_TOTALS = 64


class _PrivacyLoss:
    __slots__ = ("d_in", "pending")

    def __init__(self, d_in: Any, pending: Measurement[Any, Any, Any, Any] | None = None) -> None:
        self.d_in = d_in
        self.pending = pending


class OdometerQueryable(Queryable[Any, Any]):
    """The release of an odometer: answers measurements, and reports the loss spent so far.

    ``privacy_loss(d_in)`` composes the maps of every query answered (or attempted) so far.
    """

    __slots__ = ("_qb",)

    def __init__(self, transition: Callable[[Any], Any], QB: str = "u32") -> None:
        super().__init__(transition)
        self._qb = QB  # the input distance type, shown by repr as in OpenDP

    def invoke(self, query: Any) -> Any:
        """Answer ``query`` (a measurement), as ``self(query)``; OpenDP's method name."""
        return self(query)

    def privacy_loss(self, d_in: Any) -> Any:
        """The privacy loss spent so far, for inputs ``d_in`` apart (rounded up)."""
        return self.eval(_PrivacyLoss(d_in))

    def __repr__(self) -> str:
        return f"OdometerQueryable(Q=AnyMeasurement, QB={self._qb})"


class Odometer(_InputTypes, Generic[TI, DI, MO]):
    """An interactive mechanism with no limit set up front; its release tracks its own spend.

    Invoking it with data gives an :class:`OdometerQueryable`.
    """

    # ``_record``: the constructor call that built it (set by ``serialization``)
    __slots__ = ("_record", "function", "input_domain", "input_metric", "output_measure")

    def __init__(
        self,
        input_domain: Domain[TI],
        input_metric: Metric[DI],
        output_measure: Measure[MO],
        function: Callable[[TI], OdometerQueryable],
    ) -> None:
        self.input_domain = input_domain
        self.input_metric = input_metric
        self.output_measure = output_measure
        self.function = function

    @property
    def input_space(self) -> tuple[Domain[TI], Metric[DI]]:
        return self.input_domain, self.input_metric

    @property
    def output_distance_type(self) -> str:
        """The type of the privacy loss, e.g. ``"f64"``."""
        return _type_name(self.output_measure.distance_type)

    def invoke(self, arg: TI) -> OdometerQueryable:
        """Start an odometer on ``arg`` (checked against the input domain first)."""
        return self.function(self.input_domain._normalize(arg))

    def __call__(self, arg: TI) -> OdometerQueryable:
        return self.invoke(arg)

    def __repr__(self) -> str:
        return (
            "Odometer(\n"
            f"    input_domain   = {self.input_domain!r},\n"
            f"    input_metric   = {self.input_metric!r},\n"
            f"    output_measure = {self.output_measure!r})"
        )


@constructor
def make_fully_adaptive_composition(
    input_domain: Domain[TI],
    input_metric: Metric[DI],
    output_measure: Measure[MO],
) -> Odometer[TI, DI, MO]:
    r"""An odometer: answers any measurement, and reports the privacy loss spent so far.

    A query is recorded (charged) before it runs.  Privacy loss of the queryable after
    queries m_1, ..., m_k, the exact sum rounded up:
        privacy_loss(d_in) = Σ_i m_i.map(d_in)

    Raises:
        NotImplementedForType: unless the measure is pure DP, zCDP or approximate pure DP
            (approximate zCDP is refused: its fully adaptive filter is not proved here).

    Proof: docs/proofs/make_fully_adaptive_composition.md

    >>> import opendp_lite.prelude as dp
    >>> dp.enable_features("honest-but-curious")
    >>> space = dp.atom_domain(T=float), dp.absolute_distance(T=float)
    >>> odometer = dp.c.make_fully_adaptive_composition(*space, dp.zero_concentrated_divergence())
    >>> queryable = odometer(1.0)
    >>> query = dp.m.make_user_measurement(
    ...     *space, dp.zero_concentrated_divergence(), lambda x: x, lambda d: 0.1 * d)
    >>> queryable(query), queryable(query), queryable.privacy_loss(1.0)
    (1.0, 1.0, 0.2)
    """
    _check_fully_adaptive(output_measure, "make_fully_adaptive_composition")
    concurrent = _is_concurrent(output_measure)

    def function(data: TI) -> OdometerQueryable:
        history: list[Measurement[Any, Any, Any, Any]] = []
        sequencer = _Sequencer()
        # Running totals per d_in asked (a privacy filter always asks the same one): each past
        # query is mapped once per d_in, not once per privacy_loss call.  Maps are pure, so
        # the total is what re-mapping the whole history would give, bit for bit.
        totals: dict[tuple[type, Any], _RunningTotal] = {}
        # the last pending query's loss, reused when that query is then charged
        last_pending: list[Any] = [None, None, None]  # [query, key, loss]

        def privacy_loss(request: _PrivacyLoss) -> Any:
            d_in = input_metric._check_distance(request.d_in)
            key = (type(d_in), d_in)
            running = totals.get(key)
            if running is None:
                if len(totals) >= _MAX_RUNNING_TOTALS:
                    totals.pop(next(iter(totals)))  # the oldest d_in: re-mapped if asked again
                running = totals[key] = _RunningTotal(output_measure)
            while running.mapped < len(history):
                past = history[running.mapped]
                if past is last_pending[0] and key == last_pending[1]:
                    running.add(last_pending[2])
                else:
                    running.add(past.map(d_in))
            if request.pending is None:
                return running.total()
            loss = request.pending.map(d_in)
            last_pending[:] = [request.pending, key, loss]
            return running.total(loss)

        def transition(query: Any) -> Any:
            if isinstance(query, _PrivacyLoss):
                return privacy_loss(query)
            query = _check_query(query, input_domain, input_metric, output_measure)
            history.append(query)  # charged before it runs
            if concurrent:
                return invoke_private(query, data)
            # every queryable the query creates is disabled once this one answers another
            with sequencer.children(sequencer.advance()):
                return invoke_private(query, data)

        return OdometerQueryable(transition, _type_name(input_metric.distance_type))

    return Odometer(input_domain, input_metric, output_measure, function)


then_fully_adaptive_composition = odometer(make_fully_adaptive_composition)


@constructor
def make_privacy_filter(
    odometer: Odometer[TI, DI, MO], d_in: DI, d_out: MO
) -> Measurement[TI, OdometerQueryable, DI, MO]:
    r"""Limit an odometer to a budget: a measurement whose release is a budgeted queryable.

    A query is answered only if the odometer's loss *including it* stays within ``d_out`` at
    ``d_in``; otherwise it is refused with :class:`BudgetExceeded`, nothing is released, and
    the filter is exhausted (it refuses every later query), as in OpenDP.

    Privacy map, for d_in' <= d_in:
        d_out(d_in') = d_out

    Raises:
        FailedMap: if ``d_in`` or ``d_out`` is not a valid distance or loss.
        NotImplementedForType: unless the measure is pure DP, zCDP or approximate pure DP
            (approximate zCDP is refused: its fully adaptive filter is not proved here).

    Proof: docs/proofs/make_privacy_filter.md

    >>> import opendp_lite.prelude as dp
    >>> dp.enable_features("honest-but-curious")
    >>> space = dp.atom_domain(T=float), dp.absolute_distance(T=float)
    >>> odometer = dp.c.make_fully_adaptive_composition(*space, dp.max_divergence())
    >>> budgeted = dp.c.make_privacy_filter(odometer, d_in=1.0, d_out=1.0)
    >>> queryable = budgeted(3.0)
    >>> query = dp.m.make_user_measurement(
    ...     *space, dp.max_divergence(), lambda x: x, lambda d: 0.75 * d)
    >>> queryable(query), queryable.privacy_loss(1.0)
    (3.0, 0.75)
    >>> queryable(query)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    opendp_lite.combinators.composition.BudgetExceeded: filter exhausted: pending loss 1.5 ...
    """
    if not isinstance(odometer, Odometer):
        raise NotImplementedForType(f"odometer must be an Odometer, got {type(odometer).__name__}")
    measure = odometer.output_measure
    metric = odometer.input_metric
    _check_fully_adaptive(measure, "make_privacy_filter")
    d_in_checked = metric._check_distance(d_in)
    budget = measure._check_loss(d_out)

    def function(data: TI) -> OdometerQueryable:
        inner = odometer.function(data)
        exhausted = [False]

        def transition(query: Any) -> Any:
            if isinstance(query, _PrivacyLoss):
                return inner.eval(query)
            if exhausted[0]:
                raise BudgetExceeded("filter is exhausted: no more queries can be answered")
            query = _check_query(query, odometer.input_domain, metric, measure)
            pending = inner.eval(_PrivacyLoss(d_in_checked, query))
            if not measure._le(pending, budget):
                exhausted[0] = True
                raise BudgetExceeded(
                    f"filter exhausted: pending loss {pending!r} would exceed the budget {budget!r}"
                )
            return inner.eval(query)

        return OdometerQueryable(transition, inner._qb)

    def privacy_map(d_in_prime: DI) -> MO:
        _check_d_in(metric, d_in_prime, d_in_checked)
        return budget

    return Measurement(odometer.input_domain, metric, measure, function, privacy_map)
