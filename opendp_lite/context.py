"""The Context API of OpenDP 0.16: a privacy budget around one dataset, queried by chaining.

A :class:`Context` holds the data, the privacy unit and a compositor (the *accountant*) whose
queryable enforces the budget.  ``context.query()`` starts a :class:`Query`; each method call
``.x(...)`` appends the constructor ``then_x`` (or ``make_x``) of ``dp.t``/``dp.m``/``dp.c``;
``.release()`` submits the measurement to the accountant.  A constructor called with exactly
one required argument missing (``.laplace()`` without ``scale``) leaves it to be solved by a
binary search: the tightest value that fits the query's share of the budget.

>>> import opendp_lite.prelude as dp
>>> context = dp.Context.compositor(
...     data=[1, 2, 3, 4, 5],
...     privacy_unit=dp.unit_of(contributions=1),
...     privacy_loss=dp.loss_of(epsilon=1.0),
...     split_evenly_over=2,
... )
>>> count = context.query().count().laplace()
>>> count.param()
2.0
>>> isinstance(count.release(), int), context.remaining_privacy_loss()
(True, [0.5])

The budget is enforced by the accountant's queryable (a security boundary that also holds
for queries sent to ``context.queryable`` directly); a query the budget cannot afford is
refused with :class:`~opendp_lite.combinators.composition.BudgetExceeded` before anything is
computed, the session stays usable for cheaper queries, and the message says what remains.
"""

from __future__ import annotations

import inspect
import logging
import math
import re
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar, cast

import numpy as np

from . import _arith, _frames
from . import accuracy as _accuracy
from . import combinators as _c
from . import measurements as _m
from . import transformations as _t
from ._validate import check_finite_nonneg, check_int, is_int_value, is_real_value
from .combinators.composition import (
    BudgetExceeded,
    Odometer,
    OdometerQueryable,
    _PrivacyLoss,
    make_adaptive_composition,
    make_fully_adaptive_composition,
    make_privacy_filter,
)
from .combinators.conversions import (
    make_approximate,
    make_fix_delta,
    make_pureDP_to_zCDP,
    make_zCDP_to_approxDP,
)
from .core import (
    Domain,
    Measure,
    Measurement,
    Metric,
    Queryable,
    Transformation,
    _as_list_for,
    _holds_array,
    check_fits,
)
from .domains import (
    DataFrameDomain,
    atom_domain,
    dataframe_domain,
    map_domain,
    option_domain,
    vector_domain,
)
from .errors import FailedMap, InvalidParameter, NotImplementedForType
from .measures import (
    Approximate,
    MaxDivergence,
    ZeroConcentratedDivergence,
    approximate,
    max_divergence,
    zero_concentrated_divergence,
)
from .metrics import (
    absolute_distance,
    change_one_distance,
    discrete_distance,
    hamming_distance,
    insert_delete_distance,
    l1_distance,
    l2_distance,
    symmetric_distance,
)
from .search import binary_search
from .typing import _SENSITIVITY_METRICS, RuntimeType

__all__ = [
    "BudgetExhausted",
    "Chain",
    "Context",
    "PartialChain",
    "Query",
    "Summary",
    "domain_of",
    "loss_of",
    "metric_of",
    "register",
    "space_of",
    "unit_of",
]

logger = logging.getLogger(__name__)

_Out = TypeVar("_Out")

# constructors registered by plugins: name -> (constructor, takes input_domain/input_metric)
_REGISTERED: dict[str, tuple[Callable[..., Any], bool]] = {}

#: What a query's chain can be: a metric space, a transformation, a measurement, an
#: odometer, or a :class:`PartialChain` still missing one parameter.
Chain = Any


class BudgetExhausted(BudgetExceeded, ValueError):
    """Every share of a split budget is spent: no query can be started.

    Also a ``ValueError``, which is what OpenDP raises here.
    """


# ----------------------------------------------------------------------------------------------
# Spaces, units and losses


def domain_of(T: object, infer: bool = False) -> Domain[Any]:
    """The domain whose carrier type is ``T`` (``list[int]``, ``"Vec<int>"``, ``dp.i32`` ...).

    With ``infer=True``, ``T`` is a *public example* of the data and its type is inferred;
    never pass the sensitive data itself unless its structure is public.  As in OpenDP, a
    float domain admits NaN (``nan=True``): impute or pass ``domain=`` to exclude it.

    Raises:
        NotImplementedForType: if ``T`` names no supported carrier.

    >>> domain_of(list[int]), domain_of("Option<int>")
    (VectorDomain(AtomDomain(T=i32)), OptionDomain(AtomDomain(T=i32)))
    >>> domain_of([1.5], infer=True)
    VectorDomain(AtomDomain(nan=true, T=f64))
    """
    descriptor = RuntimeType.infer(T) if infer else RuntimeType.parse(T)
    return _domain_from(descriptor)


def _domain_from(descriptor: str) -> Domain[Any]:
    if isinstance(descriptor, RuntimeType):
        args = descriptor.args
        if descriptor.origin == "Vec" and len(args) == 1:
            return vector_domain(_domain_from(args[0]))
        if descriptor.origin == "Option" and len(args) == 1:
            return option_domain(_domain_from(args[0]))
        if descriptor.origin == "HashMap" and len(args) == 2:
            return map_domain(_domain_from(args[0]), _domain_from(args[1]))
        raise NotImplementedForType(f"no domain for carrier type {descriptor}")
    if descriptor in ("f32", "f64"):
        # as OpenDP's domain_of: a float domain built from a type admits NaN (impute first)
        return atom_domain(T=descriptor, nan=True)
    return atom_domain(T=descriptor)


def metric_of(M: object) -> Metric[Any]:
    """The metric of type ``M`` (``dp.L1Distance[float]``, ``"SymmetricDistance"`` ...).

    Raises:
        NotImplementedForType: if ``M`` names no supported metric.

    >>> metric_of("SymmetricDistance"), metric_of("L2Distance<f64>")
    (SymmetricDistance(), L2Distance(f64))
    """
    if isinstance(M, Metric):
        return M
    descriptor = RuntimeType.parse(M)
    if isinstance(descriptor, RuntimeType) and len(descriptor.args) == 1:
        sensitivity: dict[str, Callable[[object], Metric[Any]]] = {
            "AbsoluteDistance": absolute_distance,
            "L1Distance": l1_distance,
            "L2Distance": l2_distance,
        }
        if descriptor.origin in sensitivity:
            return sensitivity[descriptor.origin](descriptor.args[0])
    plain: dict[str, Callable[[], Metric[Any]]] = {
        "SymmetricDistance": symmetric_distance,
        "InsertDeleteDistance": insert_delete_distance,
        "ChangeOneDistance": change_one_distance,
        "HammingDistance": hamming_distance,
        "DiscreteDistance": discrete_distance,
    }
    if descriptor in plain:
        return plain[descriptor]()
    raise NotImplementedForType(f"unrecognized metric type M={M!r}")


def space_of(T: object, M: object = None, infer: bool = False) -> tuple[Domain[Any], Metric[Any]]:
    """A metric space: ``(domain_of(T), metric_of(M))``.

    ``M`` defaults to the symmetric distance for vectors and the absolute distance (of the
    carrier type) for numbers.

    Raises:
        NotImplementedForType: if ``T``/``M`` are unsupported, or no default metric exists.

    >>> space_of(list[int])
    (VectorDomain(AtomDomain(T=i32)), SymmetricDistance())
    >>> space_of(float)
    (AtomDomain(nan=true, T=f64), AbsoluteDistance(f64))
    """
    domain = domain_of(T, infer=infer)
    carrier = RuntimeType.parse(domain.carrier_type)
    if M is None:
        if isinstance(carrier, RuntimeType) and carrier.origin == "Vec":
            M = "SymmetricDistance"
        elif not isinstance(carrier, RuntimeType) and carrier not in ("bool", "String"):
            M = RuntimeType("AbsoluteDistance", [carrier])
        else:
            raise NotImplementedForType(f"no default metric for domain {domain!r}; pass M")
    descriptor = M if isinstance(M, Metric) else RuntimeType.parse(M)
    if isinstance(M, Metric):
        return domain, M
    origin = descriptor.origin if isinstance(descriptor, RuntimeType) else descriptor
    if origin in _SENSITIVITY_METRICS and not getattr(descriptor, "args", None):
        # a distance type left open is the domain's atom type, as in OpenDP:
        # space_of(list[int], L2Distance) is (vector_domain(atom_domain(T=i32)), l2_distance(T=i32))
        atom = carrier
        while isinstance(atom, RuntimeType) and atom.origin in ("Vec", "HashMap", "Option"):
            atom = atom.args[-1]
        descriptor = RuntimeType(origin, [str(atom)])
    return domain, metric_of(descriptor)


def _range_note(name: str, value: float, usual: float, warn: float) -> None:
    if value > warn:
        logger.warning("%s = %r is larger than %r; the guarantee is weak", name, value, warn)
    elif value > usual:
        logger.info("%s = %r is larger than the usual %r", name, value, usual)


def _budget(name: str, value: object) -> float:
    """A budget: a number >= 0, not NaN; infinity means unbounded (an odometer)."""
    if is_real_value(value) and value == math.inf:
        return math.inf
    return check_finite_nonneg(name, value)


def loss_of(
    epsilon: float | None = None, delta: float | None = None, rho: float | None = None
) -> tuple[Measure[Any], Any]:
    """A privacy loss: the measure and the budget in it.

    ``epsilon`` gives ε-DP, ``rho`` ρ-zCDP; adding ``delta`` makes either approximate.
    An infinite ``epsilon``/``rho`` (without a split) gives a context that only tracks its
    spending.

    Raises:
        InvalidParameter: unless exactly one of ``epsilon``/``rho`` is given, or if a value is
            negative or NaN (an infinite ε or ρ asks for an unbounded odometer; δ must be
            finite and at most 1).

    >>> loss_of(epsilon=1.0), loss_of(rho=0.5, delta=1e-7)
    ((MaxDivergence, 1.0), (Approximate(ZeroConcentratedDivergence), (0.5, 1e-07)))
    """
    if (epsilon is None) == (rho is None):
        raise InvalidParameter(
            f"pass exactly one of epsilon or rho, got epsilon={epsilon!r}, rho={rho!r}"
        )
    measure: Measure[Any]
    if epsilon is not None:
        loss: Any = _budget("epsilon", epsilon)
        _range_note("epsilon", loss, 1.0, 5.0)
        measure = max_divergence()
    else:
        loss = _budget("rho", rho)
        _range_note("rho", loss, 0.25, 0.5)
        measure = zero_concentrated_divergence()
    if delta is None:
        return measure, loss
    d = check_finite_nonneg("delta", delta)
    if d > 1:
        raise InvalidParameter(f"delta must be at most 1, got {delta!r}")
    _range_note("delta", d, 1e-6, 1e-6)
    return approximate(measure), (loss, d)


def unit_of(
    *,
    contributions: int | None = None,
    changes: int | None = None,
    absolute: float | None = None,
    l1: float | None = None,
    l2: float | None = None,
    local: bool | None = None,
    identifier: object = None,
    ordered: bool = False,
    U: object = None,
) -> tuple[Metric[Any], Any]:
    """A privacy unit: the metric and the distance one individual can move the data.

    Exactly one of ``contributions`` (records added or removed), ``changes`` (records
    changed), ``absolute``/``l1``/``l2`` (distance of an aggregate, of type ``U``) or
    ``local=True`` (one individual's data) is given.  ``ordered=True`` selects the
    insert-delete / Hamming distance for ordered data.

    Raises:
        InvalidParameter: unless exactly one distance is given, or for ``ordered`` with a
            distance it does not apply to.
        NotImplementedForType: for ``identifier`` (identifier-level units need Polars) or a
            sequence of bounds for ``contributions``.

    >>> unit_of(contributions=3), unit_of(l1=2.0), unit_of(changes=1, ordered=True)
    ((SymmetricDistance(), 3), (L1Distance(f64), 2.0), (HammingDistance(), 1))
    """
    given = {
        "contributions": contributions,
        "changes": changes,
        "absolute": absolute,
        "l1": l1,
        "l2": l2,
        "local": local,
    }
    named = [k for k, v in given.items() if v is not None]
    if len(named) != 1:
        raise InvalidParameter(
            f"Must specify exactly one distance. Fix: pass exactly one of {sorted(given)}, "
            f"got {named}"
        )
    if identifier is not None:
        raise NotImplementedForType(
            "identifier-level privacy units need OpenDP's Polars integration, which opendp_lite "
            f"does not have; got identifier={identifier!r}"
        )
    if local is not None and (ordered or U is not None):
        raise InvalidParameter(
            '"local" must be the only parameter: unit_of(local=True) is (discrete_distance(), '
            "1). Fix: drop ordered= and U="
        )
    if ordered and contributions is None and changes is None:
        raise InvalidParameter("ordered=True is only valid with contributions or changes")
    if local is not None:
        return discrete_distance(), int(local)
    if contributions is not None:
        if not is_int_value(contributions):
            raise NotImplementedForType(
                "contributions must be an int (bounds per group need Polars), "
                f"got {contributions!r}"
            )
        return (insert_delete_distance() if ordered else symmetric_distance()), int(contributions)
    if changes is not None:
        return (hamming_distance() if ordered else change_one_distance()), changes
    value: Any = absolute if absolute is not None else l1 if l1 is not None else l2
    T = RuntimeType.parse_or_infer(U, value)
    make = (
        absolute_distance
        if absolute is not None
        else l1_distance
        if l1 is not None
        else l2_distance
    )
    return cast(Metric[Any], make(T)), value


# ----------------------------------------------------------------------------------------------
# Compositors


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


def _remaining_text(context: Context) -> str:
    try:
        return f"remaining privacy loss: {context.remaining_privacy_loss()!r}"
    except InvalidParameter:
        return "the privacy loss is unbounded"


class Context:
    """Coordinates queries against one accountant (a compositor over the data).

    Prefer :meth:`Context.compositor` to this constructor.
    """

    accountant: Any
    """The compositor measurement (or odometer) whose release is :attr:`queryable`."""
    queryable: Queryable[Any, Any]
    """Answers the queries and enforces the budget."""

    def __init__(
        self,
        accountant: Any,
        queryable: Queryable[Any, Any],
        d_in: Any,
        d_mids: list[Any] | None = None,
        d_out: Any = None,
        query_space: tuple[Domain[Any], Metric[Any]] | None = None,
    ) -> None:
        self.accountant = accountant
        self.queryable = queryable
        self.d_in = d_in
        self.d_mids = d_mids
        self.d_out = d_out
        self.d_mids_consumed: list[Any] = []
        self.query_space = query_space
        self.schema: dict[Any, str | None] | None = None
        """A frame's column names and carrier types (from its schema), or None."""
        self.library: str | None = None
        """``"pandas"``, ``"polars"``, ``"pyarrow"`` or ``"dask"`` for frame data, else None."""
        self.python_values = False
        """Whether the data held no array (e.g. a list): answers are then Python values, a
        vector answer a list, as in OpenDP (numpy data keeps numpy answers)."""
        self.log: list[dict[str, Any]] = []
        """One entry per released query: its steps, loss, mechanism and noise scale."""

    def __repr__(self) -> str:
        return (
            "Context(\n"
            f"    accountant = {_nested(self.accountant)},\n"
            f"    d_in       = {self.d_in!r},\n"
            f"    d_mids     = {self.d_mids!r},\n"
            f"    d_out      = {self.d_out!r})"
        )

    @staticmethod
    def compositor(
        data: Any,
        privacy_unit: tuple[Metric[Any], Any],
        privacy_loss: tuple[Measure[Any], Any],
        split_evenly_over: int | None = None,
        split_by_weights: Sequence[float] | None = None,
        domain: Domain[Any] | None = None,
        margins: Any = None,
    ) -> Context:
        """A context whose accountant composes queries on ``data`` within ``privacy_loss``.

        The domain is inferred from ``data`` if not given (its structure is then assumed
        public).  ``split_evenly_over``/``split_by_weights`` fix each query's share up front;
        with neither, queries are charged as they come, up to the total (a privacy filter).

        Raises:
            InvalidParameter: for both splits, a bad weight or budget.
            NotInDomain: if ``data`` is not in ``domain`` (before any query).
            NotImplementedForType: for ``margins`` (Polars only) or an unsupported measure.
        """
        if margins:
            raise NotImplementedForType(
                "margins describe Polars LazyFrames, which opendp_lite does not support"
            )
        schema = _frames.schema(data)
        if domain is None:
            domain = _frame_domain(data, schema)
        accountant, d_mids, d_out = _normalize_compositor(
            domain, privacy_unit, privacy_loss, split_evenly_over, split_by_weights
        )
        try:
            queryable = accountant(data)
        except TypeError as e:
            try:
                hint = vector_domain(domain) == domain_of(data, infer=True)
            except Exception:
                hint = False
            if hint:
                e.args = (
                    f"{e.args[0] if e.args else e}; the data is a vector: pass "
                    "domain=dp.vector_domain(domain)",
                )
            raise
        context = Context(accountant, queryable, privacy_unit[1], d_mids, d_out)
        context.schema = schema
        context.library = _frames.library_of(data)
        context.python_values = not _holds_array(data)
        return context

    def __call__(self, query: Any) -> Any:
        """Submit a measurement to the accountant and return its answer."""
        if isinstance(self.queryable, OdometerQueryable) and self.d_out is not None:
            # check before submitting: a privacy filter that refuses a query is exhausted,
            # while this refusal leaves the session usable for cheaper queries
            if isinstance(query, Measurement):
                pending = self.queryable.eval(_PrivacyLoss(self.d_in, query))
                if not self.accountant.output_measure._le(pending, self.d_out):
                    raise BudgetExceeded(
                        f"query refused: the privacy loss would become {pending!r}, over the "
                        f"budget {self.d_out!r}; {_remaining_text(self)}"
                    )
        try:
            answer = self.queryable(query)
        except BudgetExceeded as e:
            raise BudgetExceeded(f"{e}; {_remaining_text(self)}") from e
        if self.d_mids is not None:
            self.d_mids_consumed.append(self.d_mids.pop(0))
        else:
            self.d_mids_consumed.append(query.map(self.d_in))
        if self.python_values:  # as a measurement invoked on the list itself would answer
            answer = _as_list_for((), answer)
        return answer

    def query(self, **kwargs: Any) -> Query[Any]:
        """Start a query in this context.

        With a split budget the query's loss is the next share (pass no arguments);
        otherwise pass its loss as to :func:`loss_of` (``epsilon=``, ``delta=``, ``rho=``).

        Raises:
            InvalidParameter: for loss arguments with a split budget, or a loss in another
                measure than the context's.
            BudgetExhausted: if every share of a split budget is spent.
        """
        d_query: Any = None
        measure = self.accountant.output_measure
        if self.d_mids is not None:
            if kwargs:
                raise InvalidParameter(
                    f"this context splits its budget up front; expected no loss, got {kwargs}"
                )
            if not self.d_mids:
                raise BudgetExhausted(
                    f"privacy budget exhausted: all {len(self.d_mids_consumed)} shares are spent"
                )
            d_query = self.d_mids[0]
        elif kwargs:
            observed, d_query = loss_of(**kwargs)
            if observed != measure:
                hint = ""
                if isinstance(measure, Approximate) and "delta" not in kwargs:
                    hint = (
                        ". Consider setting `delta=0.0` in your query (an approximate-DP context)"
                    )
                raise InvalidParameter(
                    f"the context measures privacy in {measure!r}, got a loss in {observed!r}{hint}"
                )
        space = self.query_space or (self.accountant.input_domain, self.accountant.input_metric)
        return Query(space, measure, self.d_in, d_query, self)

    def summary(self, alpha: float = 0.05) -> Summary:
        """What each released query spent, its noise scale and its accuracy at level ``alpha``.

        The accuracy is the half-width ``a`` with ``Pr[|noise| > a] <= alpha`` per released
        number, from :mod:`opendp_lite.accuracy` (discrete for integer queries).  Printing the
        summary shows a table; :attr:`Summary.rows` holds the same as dicts.

        >>> import opendp_lite.prelude as dp
        >>> context = dp.Context.compositor(
        ...     data=[1, 2, 3], privacy_unit=dp.unit_of(contributions=1),
        ...     privacy_loss=dp.loss_of(epsilon=1.0), split_evenly_over=2)
        >>> _ = context.query().count().laplace().release()
        >>> row = context.summary(alpha=0.05).rows[0]
        >>> row["query"], row["mechanism"], row["scale"], round(row["accuracy"], 2)
        ('count >> laplace', 'laplace', 2.0, 6.43)
        """
        rows = []
        for entry in self.log:
            row = dict(entry)
            row["alpha"] = alpha
            row["accuracy"] = _accuracy_of(entry, alpha)
            rows.append(row)
        try:
            remaining: Any = self.remaining_privacy_loss()
        except InvalidParameter:
            remaining = "unbounded"
        return Summary(rows, self.current_privacy_loss(), remaining, alpha)

    def current_privacy_loss(self) -> Any:
        """The losses spent so far (a list, for a split budget) or the total (otherwise)."""
        if isinstance(self.queryable, OdometerQueryable):
            return self.queryable.privacy_loss(self.d_in)
        return list(self.d_mids_consumed)

    def remaining_privacy_loss(self) -> Any:
        """The shares left (a list, for a split budget) or the total left, rounded down.

        Raises:
            InvalidParameter: for an unbounded (odometer) context.
        """
        if isinstance(self.queryable, OdometerQueryable):
            if self.d_out is None:
                raise InvalidParameter(
                    "The privacy loss is unbounded: this context is an odometer (an infinite "
                    "epsilon or rho), so nothing remains to report. Fix: read the loss spent "
                    "so far with current_privacy_loss()"
                )
            spent = self.queryable.privacy_loss(self.d_in)
            if isinstance(self.d_out, tuple):
                return tuple(
                    max(0.0, _arith.down(_arith.q(a) - _arith.q(b)))
                    for a, b in zip(self.d_out, spent, strict=True)
                )
            return max(0.0, _arith.down(_arith.q(self.d_out) - _arith.q(spent)))
        return None if self.d_mids is None else list(self.d_mids)


def _frame_domain(data: Any, schema: dict[Any, str | None] | None) -> Domain[Any]:
    """The domain of ``data`` from its type and schema only (never its values).

    A frame's domain declares each column whose type is known by its schema (``select``'s
    vector domain of that type, a float column admitting NaN), so every cell is checked when
    the data owner builds the context, and a query reading a column as another type is
    refused when it is built (``Domain._conflict``).
    """
    if schema is not None:
        names = list(schema)
        declared = {name: T for name, T in schema.items() if T is not None}
        return dataframe_domain(type(names[0]) if names else str, columns=declared)
    if _frames.library_of(data) == "polars" and type(data).__name__ == "LazyFrame":
        raise NotImplementedForType(
            "a Polars LazyFrame is a query plan, not data: pass lazy_frame.collect() (OpenDP's "
            "LazyFrame plans are not supported)"
        )
    carrier = _frames.series_carrier(data)
    if carrier is not None:
        return vector_domain(
            atom_domain(T=carrier, nan=True if carrier in ("f32", "f64") else None)
        )
    return domain_of(data, infer=True)


#: noise mechanisms whose accuracy the summary reports: name -> (continuous, discrete) helper
_ACCURACY: dict[str, tuple[Callable[..., float], Callable[..., float]]] = {
    "laplace": (
        _accuracy.laplacian_scale_to_accuracy,
        _accuracy.discrete_laplacian_scale_to_accuracy,
    ),
    "geometric": (
        _accuracy.discrete_laplacian_scale_to_accuracy,
        _accuracy.discrete_laplacian_scale_to_accuracy,
    ),
    "gaussian": (
        _accuracy.gaussian_scale_to_accuracy,
        _accuracy.discrete_gaussian_scale_to_accuracy,
    ),
}


def _accuracy_of(entry: dict[str, Any], alpha: float) -> float | None:
    helpers = _ACCURACY.get(str(entry.get("mechanism")))
    scale = entry.get("scale")
    if helpers is None or not isinstance(scale, (int, float)):
        return None
    helper = helpers[1] if entry.get("discrete") else helpers[0]
    return helper(float(scale), alpha)


class Summary:
    """A printable account of a context: per query, its loss, noise scale and accuracy."""

    def __init__(self, rows: list[dict[str, Any]], spent: Any, remaining: Any, alpha: float):
        self.rows = rows
        """One dict per released query: ``query``, ``loss``, ``mechanism``, ``scale``,
        ``accuracy`` (at ``alpha``, per released number), ``alpha``."""
        self.spent = spent
        self.remaining = remaining
        self.alpha = alpha

    def __repr__(self) -> str:
        return str(self)

    def __str__(self) -> str:
        head = ("#", "query", "privacy loss", "mechanism", "scale", f"accuracy (α={self.alpha})")
        table = [head]
        for i, r in enumerate(self.rows, 1):
            acc = r.get("accuracy")
            table.append(
                (
                    str(i),
                    str(r.get("query")),
                    _short(r.get("loss")),
                    str(r.get("mechanism") or "-"),
                    _short(r.get("scale")),
                    "-" if acc is None else f"±{_short(acc)}",
                )
            )
        widths = [max(len(row[j]) for row in table) for j in range(len(head))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in table]
        lines.insert(1, "  ".join("-" * w for w in widths))
        lines.append(f"spent: {_short(self.spent)}; remaining: {_short(self.remaining)}")
        return "\n".join(line.rstrip() for line in lines)


def _nested(x: Any) -> str:
    """``repr(x)`` indented to sit inside another repr, as OpenDP prints a context."""
    return repr(x).replace("\n", "\n    ")


def _short(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:.6g}"
    if isinstance(x, (list, tuple)):
        inner = ", ".join(_short(v) for v in x)
        return f"[{inner}]" if isinstance(x, list) else f"({inner})"
    return "-" if x is None else str(x)


def _labelled(counts: Any, labels: list[Any], name: Any, library: str | None) -> Any:
    """Counts keyed by their labels, in the type of the context's data."""
    values = [v.item() if hasattr(v, "item") else v for v in list(counts)]
    if len(values) != len(labels):
        raise InvalidParameter(
            f"cannot label {len(values)} released values with {len(labels)} labels"
        )
    if library in ("pandas", "dask"):
        pd = __import__("pandas")
        return pd.Series(values, index=pd.Index(labels, name=name), name="count")
    if library == "polars":
        pl = __import__("polars")
        return pl.DataFrame({str(name or "category"): labels, "count": values}, strict=False)
    return dict(zip(labels, values, strict=True))


def _labelled_groups(
    released: Any, name: Any, library: str | None, keys: tuple[Any, ...] | None = None
) -> Any:
    """A grouped release ``{key: value}`` in the type of the context's data (a pandas Series
    indexed by key, a Polars DataFrame of keys and values); anything else is returned as is.

    A vector release over public ``keys`` (``grouped_sum``/``grouped_count`` and noise: one
    value per key, in the keys' order) is first keyed by them."""
    if keys is not None and not isinstance(released, dict):
        vector = np.asarray(released)
        if vector.ndim == 1 and len(vector) == len(keys):
            released = dict(zip(keys, vector.tolist(), strict=True))
    if not isinstance(released, dict) or library not in ("pandas", "dask", "polars"):
        return released
    labels, values = list(released), list(released.values())
    if library == "polars":
        pl = __import__("polars")
        label = "group" if isinstance(name, tuple) else str(name)
        return pl.DataFrame({label: labels, "value": values}, strict=False)
    pd = __import__("pandas")
    if isinstance(name, tuple):
        index = pd.MultiIndex.from_tuples(labels, names=list(name))
    else:
        index = pd.Index(labels, name=name)
    return pd.Series(values, index=index, name="value")


# ----------------------------------------------------------------------------------------------
# Queries


class PartialChain:
    """A transformation or measurement still missing one numeric parameter.

    ``fix(d_in, d_out)`` finds the parameter by binary search and returns the chain built
    with it; ``Query.param()`` returns the parameter itself.
    """

    def __init__(self, f: Callable[[Any], Any]) -> None:
        self.partial = f

    def __call__(self, v: Any) -> Any:
        return self.partial(v)

    def fix(
        self,
        d_in: Any,
        d_out: Any,
        output_measure: Measure[Any] | None = None,
        bounds: tuple[Any, Any] | None = None,
        T: object = None,
    ) -> Any:
        """The chain built with the parameter nearest the boundary at which it fits.

        Raises:
            ValueError: if no parameter fits (from the search).
        """
        return self._solve(d_in, d_out, output_measure, bounds, T)[1]

    def _solve(
        self,
        d_in: Any,
        d_out: Any,
        output_measure: Measure[Any] | None = None,
        bounds: tuple[Any, Any] | None = None,
        T: object = None,
    ) -> tuple[Any, Any]:
        """``(parameter, chain)``, as :meth:`fix`."""
        approx_only_eps = isinstance(output_measure, Approximate) and isinstance(d_out, tuple)

        def fits(param: Any) -> bool:
            try:
                chain = _cast_measure(self(param), output_measure, d_out)
                if approx_only_eps and isinstance(chain, Measurement):
                    eps, delta = chain.map(d_in)
                    return bool(eps <= d_out[0] and delta <= d_out[1])
                return bool(chain.check(d_in, d_out))
            except FailedMap:  # an infinite loss (e.g. scale 0) does not fit
                return False
            # a parameter the constructor refuses raises (as in OpenDP): the search infers the
            # parameter's type from it and restarts inside the region where the chain builds

        param = binary_search(fits, bounds=(None, None) if bounds is None else bounds, T=T)
        return param, self(param)

    def __rshift__(self, other: Any) -> PartialChain:
        return PartialChain(lambda v: self(v) >> other)

    def __rrshift__(self, other: Any) -> PartialChain:
        return PartialChain(lambda v: other >> self(v))


def _cast_measure(chain: Any, to_measure: Measure[Any] | None, d_to: Any) -> Any:
    """Restate ``chain``'s privacy loss in ``to_measure`` where a conversion applies."""
    if to_measure is None or not isinstance(chain, Measurement):
        return chain
    frm = chain.output_measure
    if frm == to_measure:
        return chain
    if isinstance(to_measure, Approximate) and frm == to_measure.inner:
        return make_approximate(chain)
    if isinstance(frm, MaxDivergence) and isinstance(to_measure, ZeroConcentratedDivergence):
        return make_pureDP_to_zCDP(chain)
    if (
        isinstance(to_measure, Approximate)
        and isinstance(to_measure.inner, MaxDivergence)
        and isinstance(d_to, tuple)
    ):
        inner = chain
        if isinstance(frm, Approximate) and isinstance(frm.inner, ZeroConcentratedDivergence):
            raise NotImplementedForType(
                f"cannot restate {frm!r} as {to_measure!r}; use a zCDP query without delta"
            )
        if isinstance(frm, ZeroConcentratedDivergence):
            return make_fix_delta(make_zCDP_to_approxDP(inner), d_to[1])
    raise NotImplementedForType(f"cannot restate a query in {frm!r} as {to_measure!r}")


def _lookup(name: str) -> tuple[Callable[..., Any], str]:
    """The constructor for ``query.name(...)`` and how it takes the chain.

    Kinds: ``"then"`` (returns a partial taking domain and metric), ``"space"`` (``make_x``
    whose first two parameters are the input domain and metric), ``"measurement"`` /
    ``"transformation"`` (a combinator of the chain itself), ``"plain"`` (anything else).
    """
    if name in _REGISTERED:
        f, partial = _REGISTERED[name]
        return f, "space" if partial else "plain"
    for module in (_t, _m, _c):
        then = getattr(module, f"then_{name}", None)
        if callable(then):
            return then, "then"
    for module in (_t, _m, _c):
        make = getattr(module, f"make_{name}", None)
        if callable(make):
            return make, _kind(make)
    raise AttributeError(
        f"unrecognized constructor: {name!r} (no then_{name} or make_{name} in dp.t, dp.m, dp.c"
        " or the plugins); did you mean to .release() first?"
    )


def _kind(f: Callable[..., Any]) -> str:
    names = list(inspect.signature(f).parameters)
    if names[:2] == ["input_domain", "input_metric"]:
        return "space"
    if names[:1] in (["measurement"], ["transformation"]):
        return names[0]
    return "plain"


def _constructor_names() -> list[str]:
    names = set(_REGISTERED)
    for module in (_t, _m, _c):
        for attr in dir(module):
            for prefix in ("then_", "make_"):
                if attr.startswith(prefix):
                    names.add(attr[len(prefix) :])
    return sorted(names)


def _space_of_chain(chain: Any) -> tuple[Domain[Any], Metric[Any]]:
    if isinstance(chain, tuple):
        return chain[0], chain[1]
    if isinstance(chain, Transformation):
        return chain.output_domain, chain.output_metric
    raise TypeError(
        f"a constructor cannot follow a {type(chain).__name__}; only post-processing can"
    )


def _append(chain: Any, f: Callable[..., Any], kind: str, args: Any, kwargs: Any) -> Any:
    """``chain`` followed by the constructor ``f(*args, **kwargs)`` of the given kind."""
    if kind == "then":
        step = f(*args, **kwargs)
        if isinstance(chain, tuple):
            return _head(chain, chain >> step)
        domain, metric = _space_of_chain(chain)
        return chain >> step(domain, metric)
    if kind == "space":
        domain, metric = _space_of_chain(chain)
        built = f(domain, metric, *args, **kwargs)
        return _head(chain, built) if isinstance(chain, tuple) else chain >> built
    if kind in ("measurement", "transformation"):
        return f(chain, *args, **kwargs)
    built = f(*args, **kwargs)
    return _head(chain, built) if isinstance(chain, tuple) else chain >> built


def _head(space: tuple[Domain[Any], Metric[Any]], step: Any) -> Any:
    """The first step of a query on ``space``: refused now if it reads a column as another
    type than the context's domain declares (its schema), naming the column and both types."""
    inner = getattr(step, "input_domain", None)
    if isinstance(inner, Domain):
        check_fits(space[0], inner, "the query and the context's schema")
    return step


def _missing(f: Callable[..., Any], kind: str, name: str, args: Any, kwargs: Any) -> str | None:
    """The one required parameter not given (None if all are given)."""
    params = list(inspect.signature(f).parameters.values())
    if kind == "space":
        params = params[2:]
    elif kind in ("measurement", "transformation"):
        params = params[1:]
    sig = inspect.Signature(params)
    try:
        bound = sig.bind_partial(*args, **kwargs)
    except TypeError as e:
        raise InvalidParameter(f"{name}: {e}") from e
    missing = [
        p.name
        for p in params
        if p.name not in bound.arguments
        and p.default is inspect.Parameter.empty
        and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]
    if len(missing) > 1:
        raise InvalidParameter(f"{name} is missing {len(missing)} parameters: {missing}")
    return missing[0] if missing else None


class Query(Generic[_Out]):
    """A chain being built in a context; typed by what ``release()`` will return.

    ``query.x(...)`` appends ``then_x``/``make_x``.  The common steps are typed methods
    (``count``, ``laplace``, ...); any other constructor is found by name at run time.
    """

    def __init__(
        self,
        chain: Chain,
        output_measure: Measure[Any],
        d_in: Any = None,
        d_out: Any = None,
        context: Context | None = None,
        _wrap_release: Callable[[Any], Any] | None = None,
    ) -> None:
        self._chain = chain
        self._output_measure = output_measure
        self._d_in = d_in
        self._d_out = d_out
        self._context = context
        self._wrap_release = _wrap_release
        self._steps: list[str] = []
        self._noise: dict[str, Any] = {}

    def __repr__(self) -> str:
        return (
            "Query(\n"
            f"    chain          = {self._chain!r},\n"
            f"    output_measure = {self._output_measure!r},\n"
            f"    d_in           = {self._d_in!r},\n"
            f"    d_out          = {self._d_out!r}"
            + ("" if self._context is None else f",\n    context        = {_nested(self._context)}")
            + ")"
        )

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(_constructor_names()))

    def __getattr__(self, name: str) -> Callable[..., Query[Any]]:
        if name.startswith("__"):
            raise AttributeError(name)
        f, kind = _lookup(name)

        def step(*args: Any, **kwargs: Any) -> Query[Any]:
            return self._then(name, f, kind, args, kwargs)

        return step

    def _then(
        self, name: str, f: Callable[..., Any], kind: str, args: Any, kwargs: Any
    ) -> Query[Any]:
        missing = _missing(f, kind, name, args, kwargs)
        if missing is None:
            chain = self._chain
            if isinstance(chain, PartialChain):
                new: Any = PartialChain(lambda v: _append(chain(v), f, kind, args, kwargs))
            else:
                new = _append(chain, f, kind, args, kwargs)
        else:
            if isinstance(self._chain, PartialChain):
                raise InvalidParameter(
                    f"{name} is missing 1 parameter ({missing!r}) while the query already "
                    f"leaves one to solve for; at most one parameter may be left to solve for. "
                    f"Fix: pass {missing}=..."
                )
            chain = self._chain
            new = PartialChain(lambda v: _append(chain, f, kind, args, {**kwargs, missing: v}))
        query = self.new_with(chain=new)
        query._steps = [*self._steps, name]
        if name in _ACCURACY:
            query._noise = _noise_of(name, self._chain, f, kind, args, kwargs, missing)
        return query

    def _named(self, name: str, args: Any, kwargs: Any) -> Query[Any]:
        f, kind = _lookup(name)
        return self._then(name, f, kind, args, kwargs)

    # the typed steps (any other constructor goes through __getattr__)
    def count(self, *args: Any, **kwargs: Any) -> Query[int]:
        """``then_count``: the number of records (on a frame: of rows).

        On a frame the rows are counted through one column: a float column if there is one
        (its missing values are NaN, members of its domain), else the first column (a frame's
        context refuses missing values in non-float columns when it is built, so the count
        never fails on the data); ``.select(column).count()`` picks it yourself.
        """
        if self._holds_frame():
            return self._rows()._named("count", args, kwargs)
        return self._named("count", args, kwargs)

    def _holds_frame(self) -> bool:
        if isinstance(self._chain, PartialChain):
            return False
        try:
            return isinstance(_space_of_chain(self._chain)[0], DataFrameDomain)
        except TypeError:
            return False

    def _rows(self) -> Query[Any]:
        """The frame's rows as a vector, to count them: a float column if there is one (its
        missing values are NaN, members of its domain), else the first column."""
        schema = self._schema()
        if not schema:
            raise InvalidParameter(
                "counting the rows of a dict of columns needs a column: .select(name).count()"
            )
        floats = [c for c, t in schema.items() if t in ("f32", "f64")]
        column = floats[0] if floats else next(iter(schema))
        rows = self.select(column)
        rows._steps[-1] = "rows"
        return rows

    def count_distinct(self, *args: Any, **kwargs: Any) -> Query[int]:
        """``then_count_distinct``: the number of distinct records."""
        return self._named("count_distinct", args, kwargs)

    def mean(self, *args: Any, **kwargs: Any) -> Query[float]:
        """``then_mean``: the mean of bounded, sized float data."""
        return self._named("mean", args, kwargs)

    def variance(self, *args: Any, **kwargs: Any) -> Query[float]:
        """``then_variance``: the variance of bounded, sized float data."""
        return self._named("variance", args, kwargs)

    def clamp(self, *args: Any, **kwargs: Any) -> Query[_Out]:
        """``then_clamp``: clamp each record to ``bounds``."""
        return self._named("clamp", args, kwargs)

    def laplace(self, *args: Any, **kwargs: Any) -> Query[_Out]:
        """``then_laplace``: Laplace noise (``scale`` is solved for if omitted)."""
        return self._named("laplace", args, kwargs)

    def gaussian(self, *args: Any, **kwargs: Any) -> Query[_Out]:
        """``then_gaussian``: Gaussian noise (``scale`` is solved for if omitted)."""
        return self._named("gaussian", args, kwargs)

    def geometric(self, *args: Any, **kwargs: Any) -> Query[_Out]:
        """``then_geometric``: geometric noise (``scale`` is solved for if omitted)."""
        return self._named("geometric", args, kwargs)

    def new_with(
        self, *, chain: Chain, wrap_release: Callable[[Any], Any] | None = None
    ) -> Query[Any]:
        """This query with another chain (same loss and context).

        Raises:
            DomainMismatch: if the chain reads a column as another type than the context's
                domain declares (its schema): refused now, naming the column and both types.
        """
        inner = getattr(chain, "input_domain", None)
        if self._context is not None and isinstance(inner, Domain):
            context = self._context
            space = context.query_space or (context.accountant.input_domain, None)
            check_fits(space[0], inner, "the query and the context's schema")
        query: Query[Any] = Query(
            chain,
            self._output_measure,
            self._d_in,
            self._d_out,
            self._context,
            wrap_release or self._wrap_release,
        )
        query._steps = list(self._steps)
        query._noise = dict(self._noise)
        return query

    # -- frames: columns, public filters, labelled histograms ----------------------------------

    def _frame_space(self, what: str) -> DataFrameDomain:
        if isinstance(self._chain, PartialChain):
            raise InvalidParameter(f"{what} cannot follow a step with a missing parameter")
        domain, _ = _space_of_chain(self._chain)
        if not isinstance(domain, DataFrameDomain):
            raise InvalidParameter(
                f"{what} needs a data frame, but the query holds {domain!r}. Fix: pass a "
                "DataFrame (pandas, Polars, pyarrow, Dask) or a dict of columns as the "
                "context's data, and call it before the column is selected"
            )
        return domain

    def _schema(self) -> dict[Any, str | None]:
        return (self._context.schema if self._context is not None else None) or {}

    def _column_type(self, column: Any, given: object, what: str) -> object:
        if given is not None:
            return given
        schema = self._schema()
        if column not in schema:
            known = list(schema) if schema else "unknown (the data is a dict)"
            raise InvalidParameter(
                f"{what}: no type for column {column!r}; columns: {known}. Fix: pass one of "
                "the columns, or the type of its cells, e.g. TOA=float"
            )
        carrier = schema[column]
        if carrier is None:
            raise InvalidParameter(
                f"{what}: column {column!r} has a type opendp_lite does not read (dates, "
                "lists...). Fix: convert it in the frame, or pass TOA= for its cells"
            )
        return carrier

    def select(self, column: Any, TOA: object = None, fill: Any = None) -> Query[Any]:
        """Select one column of the frame as a vector (``make_select_column``).

        ``TOA`` (the type of its cells) is read from the frame's schema when omitted.  A float
        column may hold NaN (a missing value): ``fill=v`` replaces it with ``v``
        (``then_impute_constant``), as clamping and sums need; or chain ``.drop_null()``.  A
        missing value in a non-float column of a frame is refused when the data owner builds
        the context (its domain declares the schema's column types).

        Raises:
            InvalidParameter: if the query does not hold a frame, or the column is unknown.
            DomainMismatch: if ``TOA`` is not the type the context's schema declares for the
                column (naming the column and both types, never data).
        """
        domain = self._frame_space("select")
        T = self._column_type(column, TOA, "select")
        step = _t.make_select_column(column, TOA=T, K=domain.K)
        query = self.new_with(chain=_append(self._chain, lambda: step, "plain", (), {}))
        query._steps = [*self._steps, f"select({column!r})"]
        if fill is not None:
            query = query._named("impute_constant", (fill,), {})
        return query

    def filter(self, column: Any, op: str, value: Any, TIA: object = None) -> Query[_Out]:
        """Keep the rows whose ``column`` satisfies ``op value`` (``make_filter_rows``).

        A public predicate on one row is a 1-stable transformation: the filter costs no
        privacy budget (docs/proofs/make_filter_rows.md).  ``op`` is one of ``==``, ``!=``,
        ``<``, ``<=``, ``>``, ``>=``, ``in``, ``not in``.

        Raises:
            InvalidParameter: if the query does not hold a frame, or for a bad ``op``.
        """
        self._frame_space("filter")
        T = self._column_type(column, TIA, "filter")
        step = _t.then_filter_rows(column, op, value, TIA=T)
        query = self.new_with(chain=_append(self._chain, lambda: step, "then", (), {}))
        query._steps = [*self._steps, f"filter({column!r} {op} {value!r})"]
        return query

    def histogram(
        self,
        column: Any = None,
        categories: Sequence[Any] | None = None,
        other: Any = "other",
        TOA: object = None,
    ) -> Query[Any]:
        """Count the records in each of the public ``categories``; released *labelled*.

        Chain a noise mechanism after it (``.laplace()``, ``.gaussian()``); the release is
        keyed by category, with one more entry labelled ``other`` for the records in no
        category: a pandas Series (index = categories) for pandas or Dask data, a Polars
        DataFrame (columns ``column``, ``count``) for Polars data, else a ``dict``.  The
        categories are never read from the data (that would release them): pass them.

        ``column`` selects a column of a frame first (``.select(column)``); leave it out when
        the query already holds a vector.

        Raises:
            InvalidParameter: without ``categories``, or if ``other`` is one of them.
        """
        if categories is None:
            raise InvalidParameter(
                "histogram needs the public list of categories; they are not read from the "
                "data (that would release them). Fix: pass categories=[...], e.g. "
                "categories=['north', 'south']"
            )
        labels = list(categories)
        if other in labels:
            raise InvalidParameter(
                f"other={other!r} is also a category; pass another label, e.g. other='(other)'"
            )
        query: Query[Any] = self.select(column, TOA) if column is not None else self
        counted = query._named("count_by_categories", (), {"categories": labels})
        library = self._context.library if self._context is not None else None
        all_labels = [*labels, other]
        counted._wrap_release = lambda counts: _labelled(counts, all_labels, column, library)
        return counted

    def group_by(self, *by: Any, **kwargs: Any) -> Query[Any]:
        """Partition the frame's rows by the key columns ``by`` (the grouped-aggregate hook).

        This forwards to the grouped-aggregate constructor ``then_partition_by(by, ...)`` when
        it is installed (``keys=``, the contribution bounds ...: its parameters); the per-group
        release then follows as a query step, e.g. ``.grouped(count_measurement)``
        (``then_grouped``), which labels its release by group.

        Raises:
            NotImplementedForType: if no grouped-aggregate constructor is installed.
        """
        self._frame_space("group_by")
        try:
            f, kind = _lookup("partition_by")
        except AttributeError:
            raise NotImplementedForType(
                "group_by needs the grouped-aggregate constructors (make_partition_by), which "
                "this build does not have"
            ) from None
        key = by[0] if len(by) == 1 else list(by)  # one column: scalar group labels
        grouped = self._then("partition_by", f, kind, (key,), kwargs)
        library = self._context.library if self._context is not None else None
        name = by[0] if len(by) == 1 else tuple(by)
        keys = getattr(getattr(grouped._chain, "output_domain", None), "keys", None)
        grouped._wrap_release = lambda released: _labelled_groups(released, name, library, keys)
        return grouped

    def _fixed(self, bounds: tuple[Any, Any] | None, T: object) -> tuple[Any, Any]:
        """``(param or None, chain)`` with a missing parameter solved for."""
        if isinstance(self._chain, PartialChain):
            if self._d_in is None or self._d_out is None:
                raise InvalidParameter(
                    "solving for a missing parameter needs d_in and d_out (a context's query)"
                )
            return self._chain._solve(self._d_in, self._d_out, self._output_measure, bounds, T)
        return None, self._chain

    def resolve(
        self,
        allow_transformations: bool = False,
        bounds: tuple[Any, Any] | None = None,
        T: object = None,
    ) -> Any:
        """The measurement (or odometer) this query builds, its missing parameter solved.

        Raises:
            InvalidParameter: if the chain is still a transformation (unless allowed).
            NotImplementedForType: if its measure cannot be restated in the context's.
        """
        _, chain = self._fixed(bounds, T)
        return self._measurement_of(chain, allow_transformations)

    def _measurement_of(self, chain: Any, allow_transformations: bool = False) -> Any:
        if isinstance(chain, tuple) or (
            isinstance(chain, Transformation) and not allow_transformations
        ):
            raise InvalidParameter(
                "Query is not yet a measurement. Fix: add a noise mechanism, e.g. "
                ".laplace() or .gaussian() (its scale is solved for if omitted)"
            )
        return _cast_measure(chain, self._output_measure, self._d_out)

    def param(
        self,
        allow_transformations: bool = False,
        bounds: tuple[Any, Any] | None = None,
        T: object = None,
    ) -> Any:
        """The solved-for parameter (None if no parameter was missing)."""
        if not allow_transformations:
            self.resolve(False, bounds, T)
        param, _ = self._fixed(bounds, T)
        return param

    def release(
        self, data: Any = None, bounds: tuple[Any, Any] | None = None, T: object = None
    ) -> _Out:
        """Release the query: submit it to its context (or run it on ``data`` if it has none).

        Raises:
            BudgetExceeded: if the context's budget cannot afford it (nothing is released).
            InvalidParameter: for data given to a query in a context, or neither.
        """
        if self._context is not None and data is not None:
            raise InvalidParameter(
                "Cannot specify data when the query is part of a context: a query in a context "
                "is released on the context's data. Fix: call .release() without data"
            )
        param, chain = self._fixed(bounds, T)
        measurement = self._measurement_of(chain)
        if self._context is not None:
            answer = self._context(measurement)
            self._context.log.append(
                {
                    "query": " >> ".join(self._steps) or "(measurement)",
                    "loss": self._context.d_mids_consumed[-1],
                    "mechanism": self._noise.get("mechanism"),
                    "scale": self._noise.get("scale", param),
                    "discrete": self._noise.get("discrete", False),
                }
            )
        elif data is not None:
            answer = measurement(data)
        else:
            raise InvalidParameter(
                "Cannot release query without data or context: a query needs a context or data "
                "to be released. Fix: pass data to release(), or build the query from a Context"
            )
        if self._wrap_release is not None:
            answer = self._wrap_release(answer)
        return cast(_Out, answer)

    def compositor(
        self,
        split_evenly_over: int | None = None,
        split_by_weights: Sequence[float] | None = None,
        d_out: Any = None,
        output_measure: Measure[Any] | None = None,
        alpha: float | None = None,
    ) -> Query[Context]:
        """A nested compositor over this query's loss; its release is a new :class:`Context`.

        ``output_measure`` may differ from the query's: pure DP under approximate DP (δ = 0);
        zCDP under approximate DP, with the largest ρ that ``make_zCDP_to_approxDP`` then
        ``make_fix_delta`` restate within the query's (ε, δ); approximate zCDP under
        approximate DP, which keeps ``alpha``·δ for itself and converts within the rest.

        Raises:
            InvalidParameter: if the loss is unknown, or ``alpha`` is missing or outside
                [0, 1) for an approximate-zCDP compositor.
            NotImplementedForType: for another ``output_measure``, or ``alpha`` elsewhere.
        """
        d_out = self._d_out if d_out is None else d_out
        if d_out is None:
            raise InvalidParameter("the query's privacy loss is unknown; pass d_out")
        measure = self._output_measure
        # a zCDP compositor under an (ε, δ) query: its release is restated as (ε, δ) with
        # make_fix_delta(make_zCDP_to_approxDP(.), fix_delta), as OpenDP does
        fix_delta: float | None = None
        parent_measure, parent_d_out = measure, d_out
        if output_measure is not None and output_measure != measure:
            approx_dp = isinstance(measure, Approximate) and isinstance(
                measure.inner, MaxDivergence
            )
            if isinstance(output_measure, Approximate) and output_measure.inner == measure:
                d_out = (d_out, 0.0)
                measure = output_measure
            elif approx_dp and isinstance(output_measure, ZeroConcentratedDivergence):
                fix_delta = float(d_out[1])
                d_out = _rho_within(d_out[0], fix_delta)
                measure = output_measure
            elif (
                approx_dp
                and isinstance(output_measure, Approximate)
                and isinstance(output_measure.inner, ZeroConcentratedDivergence)
            ):
                if alpha is None or not 0 <= alpha < 1:
                    raise InvalidParameter(
                        f"alpha must be in [0, 1), got {alpha!r}: the share of delta the "
                        "approximate-zCDP compositor spends itself (the rest converts zCDP)"
                    )
                # δ·α is the compositor's own δ; the rest, δ − δ₀ for the δ₀ it spends, goes to
                # the zCDP-to-(ε, δ) conversion (make_fix_delta is given the total δ)
                epsilon, fix_delta = float(d_out[0]), float(d_out[1])
                inner_delta = _arith.down(_arith.q(fix_delta) * _arith.q(alpha))
                profile_delta = _arith.down(_arith.q(fix_delta) - _arith.q(inner_delta))
                profile_delta = float(np.nextafter(profile_delta, 0.0))  # make_fix_delta's rounding
                d_out = (_rho_within(epsilon, profile_delta), inner_delta)
                measure = output_measure
                alpha = None
            else:
                raise NotImplementedForType(
                    f"a nested compositor in {output_measure!r} under a {measure!r} context is "
                    "not supported here"
                )
        if alpha is not None:
            raise NotImplementedForType(
                "alpha applies to an approximate-zCDP compositor under an approximate-DP query"
            )
        if isinstance(self._chain, PartialChain):
            raise InvalidParameter("a compositor cannot follow a chain with a missing parameter")
        chain = self._chain
        domain, metric = _space_of_chain(chain)
        d_in = self._d_in
        if isinstance(chain, Transformation):
            d_in = chain.map(d_in)
        accountant, d_mids, filter_d_out = _normalize_compositor(
            domain, (metric, d_in), (measure, d_out), split_evenly_over, split_by_weights
        )
        whole = accountant if isinstance(chain, tuple) else chain >> accountant
        if isinstance(whole, Odometer):
            raise NotImplementedForType("a nested context needs a finite budget")
        released = whole
        if fix_delta is not None:
            released = make_fix_delta(make_zCDP_to_approxDP(whole), fix_delta)

        parent = self._context

        def wrap(queryable: Any) -> Context:
            nested = Context(whole, queryable, d_in, d_mids, filter_d_out, (domain, metric))
            if parent is not None and isinstance(chain, tuple):  # the same frame: same schema
                nested.schema, nested.library = parent.schema, parent.library
            if parent is not None:
                nested.python_values = parent.python_values
            return nested

        nested = self.new_with(chain=released, wrap_release=wrap)
        nested._output_measure = measure if fix_delta is None else parent_measure
        nested._d_out = d_out if fix_delta is None else parent_d_out
        return cast(Query[Context], nested)


def _rho_within(epsilon: float, delta: float) -> float:
    """The largest zCDP budget ρ (on a search grid) whose restatement at ``delta`` is within
    ``epsilon``: ``make_fix_delta(make_zCDP_to_approxDP(m), delta)`` of a measurement with
    loss ρ has ε' <= ``epsilon`` (the map is increasing in ρ, so a smaller loss fits too)."""
    space = atom_domain(T=int), absolute_distance(T=int)

    def fits(scale: float) -> bool:
        try:
            m = make_fix_delta(make_zCDP_to_approxDP(_m.make_gaussian(*space, scale)), delta)
            return bool(m.map(1)[0] <= epsilon)
        except FailedMap:
            return False

    scale = binary_search(fits, bounds=(0.0, None), T=float)
    return float(_m.make_gaussian(*space, scale).map(1))


def _noise_of(
    name: str, chain: Any, f: Any, kind: str, args: Any, kwargs: Any, missing: str | None
) -> dict[str, Any]:
    """What the summary reports about a noise step: mechanism, given scale, discreteness."""
    out: dict[str, Any] = {"mechanism": name}
    if missing is None:
        params = list(inspect.signature(f).parameters)
        if kind == "space":
            params = params[2:]
        bound = dict(zip(params, args, strict=False)) | dict(kwargs)
        if "scale" in bound:
            out["scale"] = bound["scale"]
    try:
        domain = _space_of_chain(chain)[0]
        carrier = domain.carrier_type
        out["discrete"] = re.search(r"(?<![A-Za-z])([iu](8|16|32|64)|usize)\b", carrier) is not None
    except (TypeError, AttributeError):
        pass
    return out


def register(constructor: Callable[..., Any], name: str | None = None) -> None:
    """Make ``query.<name>(...)`` call ``constructor`` (a plugin's transformation/measurement).

    If its first two parameters are ``input_domain`` and ``input_metric``, the query supplies
    them.  ``name`` defaults to the constructor's name without its ``make_`` prefix.

    Raises:
        InvalidParameter: if the name is taken, or missing and not derivable.
    """
    if name is None:
        fname = getattr(constructor, "__name__", "")
        if not fname.startswith("make_"):
            raise InvalidParameter(
                f"constructor.__name__ must start with 'make_' (or pass name=), got {fname!r}"
            )
        name = fname[len("make_") :]
    if name in _REGISTERED or name in _constructor_names():
        raise InvalidParameter(f"{name!r} is already a constructor of the Context API")
    _REGISTERED[name] = (constructor, _kind(constructor) == "space")
