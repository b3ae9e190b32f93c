"""The :class:`Context`: a privacy budget around one dataset."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .. import _arith, _frames
from ..combinators.composition import (
    BudgetExceeded,
    OdometerQueryable,
    _PrivacyLoss,
)
from ..core import (
    Domain,
    Measure,
    Measurement,
    Metric,
    Queryable,
    _as_list_for,
    _holds_array,
)
from ..domains import (
    atom_domain,
    dataframe_domain,
    vector_domain,
)
from ..errors import InvalidParameter, NotImplementedForType
from ..measures import (
    Approximate,
)
from .compositor import _normalize_compositor
from .summary import Summary, _accuracy_of, _nested
from .units import domain_of, loss_of

if TYPE_CHECKING:
    from . import Query


class BudgetExhausted(BudgetExceeded, ValueError):
    """Every share of a split budget is spent: no query can be started.

    Also a ``ValueError``, which is what OpenDP raises here.
    """


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
        from ..table.query import context_domain  # the table API (a LazyFrame, or margins)

        table = context_domain(data, margins, domain)
        if margins and table is None:
            raise NotImplementedForType(
                "margins describe frames of the table API (a Polars LazyFrame, or a frame a "
                "table engine owns); got data of type " + type(data).__name__
            )
        schema = None if table is not None else _frames.schema(data)
        if table is not None:
            domain = table
        elif domain is None:
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
        from ..table.analysis import is_frame_domain

        if is_frame_domain(space[0]):  # frame data of the table API: its own query
            from ..table.query import LazyFrameQuery

            return LazyFrameQuery(self, space[0], measure, self.d_in, d_query)  # type: ignore[return-value]
        from . import Query  # the query module builds contexts too: imported when first used

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
