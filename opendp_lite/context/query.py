"""The :class:`Query` builder: a chain of constructors built in a context, with its frame verbs."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar, cast

import numpy as np

from .. import _arith
from .. import measurements as _m
from .. import transformations as _t
from ..combinators.composition import (
    Odometer,
)
from ..combinators.conversions import (
    make_approximate,
    make_fix_delta,
    make_pureDP_to_zCDP,
    make_zCDP_to_approxDP,
)
from ..core import (
    Domain,
    Measure,
    Measurement,
    Metric,
    Transformation,
    check_fits,
)
from ..domains import (
    DataFrameDomain,
    atom_domain,
)
from ..errors import FailedMap, InvalidParameter, NotImplementedForType
from ..measures import (
    Approximate,
    MaxDivergence,
    ZeroConcentratedDivergence,
)
from ..metrics import (
    absolute_distance,
)
from ..search import binary_search
from .compositor import _normalize_compositor
from .core import Context
from .plugins import _constructor_names, _lookup
from .summary import _ACCURACY, _nested

_Out = TypeVar("_Out")

#: What a query's chain can be: a metric space, a transformation, a measurement, an
#: odometer, or a :class:`PartialChain` still missing one parameter.
Chain = Any


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
        _refuse_expression(column, what)
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
        for b in by:
            _refuse_expression(b, "group_by")
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


def _refuse_expression(column: Any, what: str) -> None:
    """A chain-style query names columns; a Polars or ``dp.col`` expression here means the
    caller writes the table API's queries (OpenDP's Polars style) on a context that serves the
    chain-style query: say how to get the table API instead of failing on the expression."""
    module = type(column).__module__.partition(".")[0]
    if module == "polars" or type(column).__module__.startswith("opendp_lite.table"):
        raise InvalidParameter(
            f"{what} of this query takes a column name, got an expression: this context serves "
            "the chain-style query (its data is a frame given without margins). Fix: for "
            "OpenDP's Polars-style queries (pl.col(...) and the .dp namespace), build the "
            "context with margins=[] (or margins=[dp.polars.Margin(...)]), or give the data "
            "as a Polars LazyFrame"
        )
