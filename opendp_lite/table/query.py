"""The table query: ``context.query()`` on frame data (a Polars LazyFrame, or any frame the
table engines own), OpenDP 0.16's ``LazyFrameQuery`` surface on opendp_lite's own plan.

Design note.

* **A plan is a value.**  A :class:`LazyFrameQuery` is immutable: each verb (``select``,
  ``with_columns``, ``filter``, ``group_by(...).agg``, ``with_keys``, ``sort``, ``join``)
  returns a new query holding a longer tuple of :mod:`.nodes` steps.  Nothing is forwarded to
  Polars: an unknown attribute raises :class:`~opendp_lite.errors.NotImplementedForType` naming
  the method and the supported ones, and Polars' plan format is never read.
* **Shape is checked when the query is built.**  Each verb runs the descriptor walk of
  :mod:`.analysis` against the context's declared schema, so an unknown column, a wrong type, a
  sum without ``max_length`` or private keys without δ are refused before any data is read.
* **The loss comes from proven constructors.**  :mod:`.analysis` maps each private aggregate
  to the equivalent chain (``make_partition_by``, ``make_grouped_count``/``make_grouped_sum``/
  ``make_grouped``, ``make_laplace``/``make_gaussian``, the thresholds) and composes them with
  ``make_composition``; as in OpenDP, one *global scale* is searched (each aggregate's noise
  scale is it times the aggregate's sensitivity), then, under approximate DP, the smallest
  threshold whose δ fits.
* **Execution.**  The exact aggregates run on the frame's own engine
  (``backends.tables.of_table(data).run``); noise is added after, by the same noise
  constructors (one coordinate per group), and the release is assembled as a Polars
  DataFrame with OpenDP's column names and dtypes (counts ``UInt32`` unless ``signed=True``,
  integer sums ``Int64``, float sums and means ``Float64``).
* **Public and private keys.**  Keys are public when a margin declares them invariant
  (``invariant="keys"``/``"lengths"`` on the grouping columns, unchanged since the input;
  after a filter the key set is read from the input, so a group emptied by the filter is still
  released, with zero counts) or when given by ``with_keys``; otherwise they are private and
  released by the threshold mechanism on the query's ``dp.len()`` (approximate DP only).
* **Domains.**  The context's domain is OpenDP's ``lazyframe_domain`` of the frame's schema
  with its margins (``dp.Context.compositor(data=<LazyFrame>, margins=[...])``, or
  ``domain=dp.lazyframe_domain(...)``); the analysis reads its schema and margins
  (:func:`.analysis.as_table_domain`).  Units: ``contributions=k`` is k added or removed rows,
  ``changes=k`` 2k between frames of equal length: ungrouped integer sums, counts and the
  frame length are then charged as sums of one term per row (``analysis.same_size_range``),
  and ``pl.len()`` of an unfiltered frame is released exact.
* **Hooks for issue 25.**  ``truncate_per_group``/``truncate_num_groups`` and identifier units
  raise a typed error naming that feature.

>>> import polars as pl
>>> import opendp_lite.prelude as dp
>>> lf = pl.LazyFrame({"g": ["a", "b"] * 50, "x": [1.0, 2.0] * 50})
>>> context = dp.Context.compositor(
...     data=lf, privacy_unit=dp.unit_of(contributions=1),
...     privacy_loss=dp.loss_of(epsilon=1.0), split_evenly_over=1,
...     margins=[dp.polars.Margin(by=["g"], invariant="keys", max_length=100)])
>>> query = context.query().group_by("g").agg(
...     dp.len(signed=True), dp.col("x").fill_null(0.0).dp.sum((0.0, 2.0)))
>>> query.summarize()["scale"].to_list()
[2.0, 4.0]
>>> release = query.release().collect()
>>> release.columns, release["g"].to_list()
(['g', 'len', 'x'], ['a', 'b'])
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..core import Measurement
from ..errors import FailedMap, InvalidParameter, NotImplementedForType
from ..measures import Approximate
from ..metrics import symmetric_distance
from . import analysis as an
from . import nodes as n
from . import truncation as _tr
from .builder import to_node
from .once_frame import OnceFrame

__all__ = ["LazyFrameQuery", "LazyGroupBy", "UnsupportedMethod"]


class UnsupportedMethod(NotImplementedForType, ValueError):
    """A method the private table query does not have (never passed on to Polars); also a
    ``ValueError``, which is what OpenDP raises for ``collect()`` before a release."""


_SUPPORTED = (
    "select, with_columns, filter, group_by(...).agg (private, or stable: min, max, mean, "
    "median, sum, len, ... before the private aggregation), with_keys, sort (before the "
    "aggregation), join (key set), collect_schema, explain, polars_plan, release, resolve, "
    "summarize"
)
_HUGE_THRESHOLD = 2**32 - 1


def _flatten(exprs: tuple[Any, ...], named: dict[str, Any] | None = None) -> tuple[n.Expr, ...]:
    """The nodes of a verb's arguments, as Polars reads them: expressions, lists, tuples or
    iterators of them (a generator), then ``name=expr`` keywords as aliases."""
    out: list[n.Expr] = []
    for e in exprs:
        if isinstance(e, list | tuple | Iterator):
            out.extend(to_node(x) for x in e)
        else:
            out.append(to_node(e))
    for name, e in (named or {}).items():
        out.append(n.Alias(to_node(e), name))
    return tuple(out)


def _exact_len(e: n.Expr) -> n.Expr:
    """``pl.len()`` (aliased or not) as the frame length released without noise, under a
    change unit (OpenDP's bounded DP: its sensitivity is 0, ``analysis.same_size_range``)."""
    if isinstance(e, n.Len):
        return n.DPAgg("len", e, scale=0.0, signed=False)
    if isinstance(e, n.Alias) and isinstance(e.expr, n.Len):
        return n.Alias(_exact_len(e.expr), e.name)
    return e


def _has_agg(e: n.Expr) -> bool:
    return isinstance(e, n.DPAgg) or any(_has_agg(c) for c in n.children(e))


@dataclass(frozen=True)
class _State:
    steps: tuple[n.Step, ...] = ()
    by: tuple[n.Expr, ...] | None = None
    aggs: tuple[n.Expr, ...] | None = None
    keys: dict[str, list[Any]] | None = None


class LazyFrameQuery:
    """A query on a frame in a context (OpenDP's ``LazyFrameQuery``).

    Build it from ``context.query()``; each verb returns a new query.
    """

    def __init__(
        self,
        context: Any,
        domain: Any,
        measure: Any,
        d_in: Any,
        d_out: Any,
        state: _State | None = None,
    ) -> None:
        self._context = context
        self._domain = domain  # the context's (its accountant's input domain)
        self._table = an.as_table_domain(domain)  # what the analysis reads of it
        self._measure = measure
        self._metric = symmetric_distance() if context is None else context.accountant.input_metric
        self._unit = _tr.unit_kind(self._metric)
        self._factor = 1 if self._unit is not None else _symmetric_factor(self._metric)
        self._d_in = d_in
        self._d_out = d_out
        self._state = state or _State()

    def __repr__(self) -> str:
        return f"LazyFrameQuery(steps={len(self._state.steps)}, measure={self._measure!r})"

    def _with(self, **kw: Any) -> LazyFrameQuery:
        new = LazyFrameQuery(
            self._context,
            self._domain,
            self._measure,
            self._d_in,
            self._d_out,
            replace(self._state, **kw),
        )
        new._check()
        return new

    def _check(self) -> None:
        """The shape check at build time (columns, types, margins, δ for private keys)."""
        s = self._state
        if any(isinstance(st, n.TruncateRows | n.TruncateGroups | n.GroupAgg) for st in s.steps):
            an.walk_steps(self._table.schema(), s.steps)
            _tr.facts_after(self._table.schema(), s.steps, self._unit or _ROWS)
        if s.aggs is None:
            an.walk_steps(self._table.schema(), s.steps)
        else:
            tp = self._plan(building=True)
            # the constructors behind each aggregate refuse bad parameters now (candidates
            # out of order, bounds of the wrong type...), not at release
            an.composed(tp, self._measure, {it.name: 1.0 for it in tp.items}, None)

    def _plan(self, building: bool = False) -> an.TablePlan:
        s = self._state
        if s.aggs is None:
            raise InvalidParameter(
                "the query has no private aggregate yet. Fix: end it with .select(dp.len(), "
                "...) or .group_by(...).agg(...)"
            )
        tp = an.plan_query(self._table, s.steps, s.by, s.aggs, s.keys, self._measure, building)
        regrouped = any(isinstance(st, n.GroupAgg) for st in s.steps)
        if self._factor == 2 and tp.keys == "none" and not regrouped:  # (the same length)
            _, filtered = an.walk_steps(self._table.schema(), s.steps)
            items = tuple(
                replace(it, same_size=an.same_size_range(it, filtered)) for it in tp.items
            )
            if filtered and any(it.scale == 0 and it.same_size == (0, 1) for it in items):
                raise NotImplementedForType(
                    "the frame's length after a filter differs between neighbours: release it "
                    "with noise (dp.len()), not exact (pl.len() or scale=0)"
                )
            tp = replace(tp, items=items)
        return tp

    def _open(self, what: str) -> None:
        if self._state.aggs is not None:
            raise InvalidParameter(
                f"{what} cannot follow the aggregation: a released frame is post-processed "
                "after .release().collect()"
            )

    # -- the verbs --------------------------------------------------------------------------

    def select(self, *exprs: Any, **named: Any) -> LazyFrameQuery:
        """Columns (row by row), or private aggregates of the whole frame (a release)."""
        self._open("select")
        nodes = _flatten(exprs, named)
        if self._factor == 2 and not any(isinstance(st, n.GroupAgg) for st in self._state.steps):
            # changed rows: the frame's length is the same in neighbours
            nodes = tuple(_exact_len(e) for e in nodes)
        if any(_has_agg(e) for e in nodes):
            return self._with(aggs=nodes, by=None)
        return self._with(steps=(*self._state.steps, n.Select(nodes)))

    def with_columns(self, *exprs: Any, **named: Any) -> LazyFrameQuery:
        """New or redefined columns, row by row (a redefinition drops what held of the old)."""
        self._open("with_columns")
        return self._with(steps=(*self._state.steps, n.WithColumns(_flatten(exprs, named))))

    def filter(self, *predicates: Any) -> LazyFrameQuery:
        """Keep the rows where every predicate holds (row by row: no privacy cost)."""
        self._open("filter")
        nodes = _flatten(predicates)
        if not nodes:
            raise InvalidParameter("filter needs a predicate")
        pred = nodes[0]
        for p in nodes[1:]:
            pred = n.Binary("&", pred, p)
        return self._with(steps=(*self._state.steps, n.FilterRows(pred)))

    def group_by(self, *by: Any, maintain_order: bool = False) -> LazyGroupBy:
        """Group the rows by ``by`` (columns or expressions); then ``.agg(...)``."""
        self._open("group_by")
        nodes = _flatten(by)
        if not nodes:
            raise InvalidParameter("group_by needs at least one key column")
        return LazyGroupBy(self, nodes)

    def agg(self, *exprs: Any, **named: Any) -> LazyFrameQuery:
        """Private aggregates of the whole frame (as ``select``)."""
        return self.select(*exprs, **named)

    def with_keys(self, keys: Any, on: Sequence[str] | None = None) -> LazyFrameQuery:
        """Release exactly the groups of the public ``keys`` (a Polars DataFrame/LazyFrame or a
        dict of columns): a left join of the keys with the aggregates; absent groups get
        zero counts and sums.

        Raises:
            InvalidParameter: before a group_by/agg, if the keys' columns are not the
                group_by columns, or if a key is given twice.
        """
        s = self._state
        if s.aggs is None or s.by is None:
            raise InvalidParameter("with_keys follows group_by(...).agg(...)")
        names = [n.output_name(b) for b in s.by]
        cols = _key_columns(keys)
        if on is not None and sorted(on) != sorted(names):
            raise InvalidParameter(f"with_keys: on={list(on)} must be the group_by columns {names}")
        if sorted(cols) != sorted(names):
            raise InvalidParameter(
                f"with_keys: the keys' columns {sorted(cols)} must be the group_by columns {names}"
            )
        ordered = {k: cols[k] for k in names}
        from .._order import group_key

        rows = list(zip(*ordered.values(), strict=True)) if ordered else []
        if len({tuple(group_key(v) for v in r) for r in rows}) != len(rows):
            # a key twice would release its group's aggregates twice, each charged once
            raise InvalidParameter("with_keys: the keys must be distinct")
        return self._with(keys=ordered)

    def join(self, other: Any, on: Any = None, how: str = "right", **kwargs: Any) -> LazyFrameQuery:
        """A join with a public key set only (``how="right"`` after the aggregation, as
        OpenDP's ``with_keys``).

        Raises:
            NotImplementedForType: for any other join.
        """
        if how in ("right", "left") and self._state.aggs is not None and not kwargs:
            on_list = [on] if isinstance(on, str) else on
            return self.with_keys(other, on=on_list)
        raise NotImplementedForType(
            "join: only a join of the released groups with a public key set is supported "
            "(after group_by(...).agg(...): .join(keys, on=..., how='right'), i.e. with_keys)"
        )

    def sort(self, *by: Any, **kwargs: Any) -> LazyFrameQuery:
        """Sort the rows: before the aggregation it cannot change a release (the aggregates
        are order-free), so it is accepted and dropped.

        Raises:
            UnsupportedMethod: after the aggregation (as OpenDP: sort the collected release).
        """
        if self._state.aggs is not None:
            raise UnsupportedMethod(
                "Found sort in query plan. A release's rows are sorted after it is collected: "
                ".release().collect().sort(...)"
            )
        return self

    def collect_schema(self) -> Any:
        """The columns and dtypes of the query's frame (before any aggregation), from the
        declared schema: no data is read."""
        import polars as pl

        from ..backends.tables.polars import polars_dtype

        if self._state.aggs is not None:
            raise UnsupportedMethod("collect_schema: the release's schema is known once collected")
        env, _ = an.walk_steps(self._table.schema(), self._state.steps)
        return pl.Schema({k: polars_dtype(v.dtype) for k, v in env.items()})

    @property
    def polars_plan(self) -> Any:
        """A Polars LazyFrame that stands for the query, without its data (OpenDP's shim):
        the input's schema and the row steps; collecting it fails with Polars' ComputeError
        once the query has private aggregates (``table.polars_plan.shim_plan``)."""
        from .polars_plan import shim_plan

        s = self._state
        return shim_plan(self._table.schema(), s.steps, s.aggs is not None)

    def explain(self, **kwargs: Any) -> str:
        """Polars' ``explain`` of :attr:`polars_plan` (the steps, on no data)."""
        return str(self.polars_plan.explain(**kwargs))

    def truncate_per_group(
        self, k: int, by: Sequence[Any] | None = None, keep: Any = "sample"
    ) -> LazyFrameQuery:
        """Keep at most ``k`` rows of each identifier (the privacy unit's ``identifier``) in
        each group of ``by`` (all its rows when ``by`` is None).  ``keep``: ``"sample"`` (a
        uniform choice, from the library's randomness), ``"first"``/``"last"`` (in the total
        order of the whole row) or ``dp.polars.SortBy(...)``; which rows are kept depends on
        the identifier's own rows only.

        What it establishes, per identifier: ``rows_B ≤ k`` (rows in any one group of B = ``by``;
        rows in all when ``by`` is None).  An aggregate grouped by G with B ⊆ G is then charged,
        for one identifier (``make_partition_by`` under ``symmetric_id_distance``), at
        ``d ↦ (d·min(k_G, c), d·min(k_G·m, c), d·min(m, c))`` with ``m = min(k, c)``, ``c`` the
        identifier's rows in all and ``k_G`` its groups of G (from ``truncate_num_groups``);
        ``d`` identifiers, doubled under ``changes=`` (proof: docs/proofs/table/truncation.md).
        A later step that redefines, casts, aliases onto or drops the identifier's or B's
        columns drops the bound (the release is refused, naming the step); a filter keeps it.

        Raises:
            InvalidParameter: without an identifier unit, for ``k`` not a positive int, ``by``
                a str, an unknown column, or an unknown ``keep``.
            NotImplementedForType: for a ``by`` holding an expression.
        """
        self._open("truncate_per_group")
        step = n.TruncateRows(
            self._identifier("truncate_per_group"),
            _trunc_by(by, "truncate_per_group"),
            _positive(k, "truncate_per_group"),
            _keep(keep, sort=True),
        )
        return self._with(steps=(*self._state.steps, step))

    def truncate_num_groups(
        self, k: int, by: Sequence[Any], keep: Any = "sample"
    ) -> LazyFrameQuery:
        """Keep each identifier's rows in at most ``k`` of the groups of ``by`` it has rows in
        (all its rows in a kept group).  ``keep``: ``"sample"`` (uniform over its groups, from
        the library's randomness), ``"first"``/``"last"`` (in the total order of the group
        keys); which groups are kept depends on the identifier's own group keys only.

        What it establishes, per identifier: ``groups_B ≤ k`` (B = ``by``).  An aggregate
        grouped by G ⊆ B is charged with ``k_G = min(k, c)`` groups per identifier in
        ``make_partition_by``'s map ``d ↦ (d·min(k_G, c), d·min(k_G·m, c), d·min(m, c))``
        (``m`` rows per group from ``truncate_per_group``; ``c`` rows in all, at most
        ``k·rows_B`` when both are known); ``d`` identifiers, doubled under ``changes=``
        (proof: docs/proofs/table/truncation.md).

        Raises:
            InvalidParameter: without an identifier unit, for ``k`` not a positive int, ``by``
                a str or empty, an unknown column, or an unknown ``keep``.
            NotImplementedForType: for a ``by`` holding an expression.
        """
        self._open("truncate_num_groups")
        nodes = _trunc_by(by, "truncate_num_groups")
        if not nodes:
            raise InvalidParameter("truncate_num_groups needs by=[...] (the grouping columns)")
        step = n.TruncateGroups(
            self._identifier("truncate_num_groups"),
            nodes,
            _positive(k, "truncate_num_groups"),
            _keep(keep, sort=False),  # type: ignore[arg-type]
        )
        return self._with(steps=(*self._state.steps, step))

    def _stable_group_by(self, by: tuple[n.Expr, ...], aggs: tuple[n.Expr, ...]) -> LazyFrameQuery:
        """``group_by(by).agg(aggs)`` with no DP aggregate: a stable step, one row per group
        (the keys, then each aggregate of the whitelist ``nodes.STABLE_AGG_KINDS``, a function
        of the group's multiset of values, computed exactly).

        Its map (proof: docs/proofs/table/group-by-stable.md):

        * ``by`` holds the unit's identifier: a truncation, no distance changes; per
          identifier ``rows_B ≤ 1`` with ``B = by \\ {identifier}`` (as ``truncate_per_group(1,
          by=B)``), combined with the unit's bounds as for any truncation;
        * a row-level unit (``contributions=d``, ``changes=d``): ``d_out = 2·f·d``
          (``f = 2`` for changes), one changed row changing one output row, a removal and an
          addition; under a list of ``dp.polars.Bound``: ``d_out = 2·min(c, g)`` with ``c``
          the rows of one individual in all and ``g`` its groups of ``by`` (a bound whose
          ``by`` holds these keys).

        Later aggregates read the output's schema only; a margin survives when its ``by`` is
        a subset of the keys, without its invariant.

        Raises:
            InvalidParameter: under an identifier unit when ``by`` lacks the identifier.
            NotImplementedForType: for an aggregation outside the whitelist (``first``,
                ``last``: the rows' order is protected).
        """
        ident = self._unit.identifier if self._unit is not None else None
        if ident is not None and ident not in by:
            raise InvalidParameter(
                f"group_by(...).agg(...) without a private aggregate under an identifier unit "
                f"must group by the identifier {ident!r}: grouping by other keys would mix "
                "several people's rows into one. Fix: add the identifier to the group_by keys "
                "(a truncation to one row per person and group), or end the query with a "
                "private aggregate (.dp.*)"
            )
        return self._with(steps=(*self._state.steps, n.GroupAgg(by, aggs)))

    def _identifier(self, what: str) -> tuple[n.Expr, ...]:
        if self._unit is None or self._unit.identifier is None:
            raise InvalidParameter(
                f"{what}: truncation is only valid when the privacy unit has an identifier. "
                "Fix: dp.unit_of(contributions=..., identifier='person_id')"
            )
        return (self._unit.identifier,)

    def _person(self, tp: an.TablePlan, d: Any) -> tuple[an.Person, Any]:
        """The per-person bounds of the query's aggregates and the distance they are taken
        at: ``(None, factor·d)`` for a row-level unit (a symmetric distance), else
        ``((L0, L∞, L1), d')`` for ``make_partition_by`` under ``symmetric_id_distance``."""
        groupings = [st for st in self._state.steps if isinstance(st, n.GroupAgg)]
        if self._unit is None:
            return None, self._factor * d * 2 ** len(groupings)
        if self._unit.identifier is None and groupings:  # a row-level unit with Bounds
            d_sym = 2 * _tr.rows_bound_through(groupings[0].by, d)
            return None, d_sym * 2 ** (len(groupings) - 1)
        facts = _tr.facts_after(self._table.schema(), self._state.steps, self._unit)
        by = self._state.by
        group: frozenset[str] | None = None
        if by is not None:
            group = frozenset(b.name if isinstance(b, n.Col) else "#expr" for b in by)
        return _tr.person_bounds(facts, group, self._unit, d)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise UnsupportedMethod(
            f"{name} is not supported on a private table query (it is never passed on to "
            f"Polars); supported: {_SUPPORTED}"
        )

    # -- the release --------------------------------------------------------------------------

    def _params(self) -> tuple[an.TablePlan, dict[str, float], int | None]:
        """The plan, each item's scale and the threshold, found by binary search."""
        from ..search import binary_search

        tp = self._plan()
        measure, d_out = self._measure, self._d_out
        # as a symmetric distance between multisets of rows, or of identifiers' blocks
        person, d_in = self._person(tp, self._d_in)
        if d_out is None:
            raise InvalidParameter(
                "the query's privacy loss is unknown: pass it to context.query(epsilon=...)"
            )
        approx = isinstance(measure, Approximate)
        need_thr = tp.threshold_item is not None

        def fits(s: float) -> bool:
            try:
                scales = an.scales_of(tp, measure, d_in, s, person)
                thr = _HUGE_THRESHOLD if need_thr else None
                m, _ = an.composed(tp, measure, scales, thr, person)
                loss = m.map(d_in)
            except FailedMap:
                return False
            if approx:
                return bool(loss[0] <= d_out[0])
            return bool(measure._le(loss, d_out))

        if all(it.scale is not None for it in tp.items) or fits(0.0):  # (0: no sensitivity)
            scales = an.scales_of(tp, measure, d_in, 0.0, person)
        else:
            try:
                s = binary_search(fits, bounds=(0.0, None), T=float)
            except ValueError as e:
                raise InvalidParameter(
                    f"no noise scale fits the query's privacy loss {d_out!r}: {e}"
                ) from None
            scales = an.scales_of(tp, measure, d_in, s, person)
        threshold = None
        if need_thr:

            def fits_t(t: int) -> bool:
                try:
                    m, _ = an.composed(tp, measure, scales, t, person)
                    return bool(measure._le(m.map(d_in), d_out))
                except FailedMap:
                    return False

            try:
                threshold = binary_search(fits_t, bounds=(0, _HUGE_THRESHOLD), T=int)
            except ValueError:
                raise InvalidParameter(
                    f"no threshold fits the query's delta within {d_out!r}: raise delta"
                ) from None
        return tp, scales, threshold

    def resolve(self) -> Measurement[Any, Any, Any, Any]:
        """The measurement this query is (scales and threshold solved for): its map is the
        composition of the aggregates' maps; its function runs the query on a frame and
        returns the release as a :class:`OnceFrame` (as OpenDP's).

        Raises:
            InvalidParameter: if the query is not a release, or no scale fits the budget.
        """
        tp, scales, threshold = self._params()
        if tp.clash is not None:
            raise InvalidParameter(
                f"the output column {tp.clash!r} is given twice (or is a group key): name each "
                "with .alias(...)"
            )
        person, _ = self._person(tp, self._d_in)
        m, thr = an.composed(tp, self._measure, scales, threshold, person)
        measure = self._measure

        def function(data: Any) -> OnceFrame:  # as OpenDP's: the release, read once
            return OnceFrame(_run(tp, measure, scales, thr, data))

        def privacy_map(d: Any) -> Any:
            p, d_sym = self._person(tp, d)  # (a list of bounds: its own per-person bounds)
            if p == person:
                return m.map(d_sym)
            mp, _ = an.composed(tp, measure, scales, threshold, p)
            return mp.map(d_sym)

        return Measurement(self._domain, self._metric, measure, function, privacy_map)

    def release(self) -> OnceFrame:
        """Charge the context and run the query; the release is collected once.

        Raises:
            BudgetExceeded: if the context cannot afford it (nothing is run).
        """
        measurement = self.resolve()
        if self._context is None:
            raise InvalidParameter("this query has no context to release it")
        once: OnceFrame = self._context(measurement)
        self._context.log.append(
            {
                "query": "table: " + ", ".join(o.name for o in self._plan().outputs),
                "loss": self._context.d_mids_consumed[-1],
                "mechanism": "table",
                "scale": None,
                "discrete": False,
            }
        )
        return once

    def summarize(self, alpha: float | None = None) -> Any:
        """One row per noisy release: column, aggregate, distribution, scale, and with
        ``alpha`` the accuracy (the half-width ``a`` with Pr[|noise| > a] <= alpha; 0 at zero
        noise), and the threshold under private keys (OpenDP's columns and dtypes).
        """
        import polars as pl

        tp, scales, threshold = self._params()
        rows: dict[str, list[Any]] = {
            "column": [],
            "aggregate": [],
            "distribution": [],
            "scale": [],
        }
        acc: list[Any] = []
        thr: list[Any] = []
        for it in tp.items:
            mech = an._native_mechanism(it, self._measure)
            if it.same_size is not None and it.same_size[0] == it.same_size[1]:
                # every row adds the same term between neighbours of equal length (pl.len()
                # under a change unit): public, released without noise, as OpenDP shows it
                rows["column"].append(it.column)
                rows["aggregate"].append(it.aggregate)
                rows["distribution"].append(None)
                rows["scale"].append(None)
                if alpha is not None:
                    acc.append(0.0)
                thr.append(threshold if it.name == tp.threshold_item else None)
                continue
            if it.family == "quantile":
                dist = "ExponentialMin" if mech == "laplace" else "GumbelMin"
            else:
                dist = ("Integer " if it.integer else "Float ") + mech.capitalize()
            scale = scales[it.name]
            rows["column"].append(it.column)
            rows["aggregate"].append(it.aggregate)
            rows["distribution"].append(dist)
            rows["scale"].append(float(scale))
            if alpha is not None:
                acc.append(_accuracy(it, mech, float(scale), alpha))
            thr.append(threshold if it.name == tp.threshold_item else None)
        schema: dict[str, Any] = {
            "column": pl.String,
            "aggregate": pl.String,
            "distribution": pl.String,
            "scale": pl.Float64,
        }
        data: dict[str, list[Any]] = dict(rows)
        if alpha is not None:
            data["accuracy"] = acc
            schema["accuracy"] = pl.Float64
        if tp.threshold_item is not None:
            data["threshold"] = thr
            schema["threshold"] = pl.UInt32
        return pl.DataFrame(data, schema=schema)


#: the analysis of a row-level unit (truncation refuses it)
_ROWS = _tr.UnitKind(None, 1, False)


def _positive(k: Any, what: str) -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise InvalidParameter(f"{what}: k must be a positive int, got {k!r}")
    return int(k)


def _trunc_by(by: Any, what: str) -> tuple[n.Expr, ...]:
    from .margins import by_nodes

    if by is None:
        return ()
    if isinstance(by, str):
        raise InvalidParameter(
            f"{what}: by is a list of columns, got the str {by!r}. Fix: by=[{by!r}]"
        )
    return by_nodes(by)


def _keep(keep: Any, sort: bool) -> n.Keep:
    from .margins import SortBy

    if isinstance(keep, str) and keep in ("sample", "first", "last"):
        return keep  # type: ignore[return-value]
    if sort and isinstance(keep, SortBy):
        return keep.to_node()
    if sort and isinstance(keep, n.SortKey):
        return keep
    raise InvalidParameter(
        'keep is "sample", "first" or "last"'
        + (" or dp.polars.SortBy(...)" if sort else "")
        + f", got {keep!r}"
    )


def _symmetric_factor(metric: Any) -> int:
    """c with symmetric distance <= c·d for the context's unit: 1 for added/removed rows
    (symmetric, insert-delete), 2 for changed rows (change-one, Hamming: a change is one
    removal and one addition).

    Raises:
        NotImplementedForType: for another unit (identifier-level units are issue 25).
    """
    name = type(metric).__name__
    if name in ("SymmetricDistance", "InsertDeleteDistance"):
        return 1
    if name in ("ChangeOneDistance", "HammingDistance"):
        return 2
    raise NotImplementedForType(
        f"the table API supports dp.unit_of(contributions=k) or changes=k, got {metric!r} "
        "(identifier-level units are the next issue)"
    )


def _accuracy(item: an.Item, mech: str, scale: float, alpha: float) -> float | None:
    from .. import accuracy as acc

    if item.family == "quantile":
        return None
    if scale == 0:
        return 0.0
    if mech == "laplace":
        f = (
            acc.discrete_laplacian_scale_to_accuracy
            if item.integer
            else acc.laplacian_scale_to_accuracy
        )
    else:
        f = (
            acc.discrete_gaussian_scale_to_accuracy
            if item.integer
            else acc.gaussian_scale_to_accuracy
        )
    return float(f(scale, alpha))


class LazyGroupBy:
    """``query.group_by(...)``: ``.agg(...)`` ends the grouped query."""

    def __init__(self, query: LazyFrameQuery, by: tuple[n.Expr, ...]) -> None:
        self._query = query
        self._by = by

    def agg(self, *exprs: Any, **named: Any) -> LazyFrameQuery:
        """Private aggregates per group; or, with no ``.dp`` aggregate, a stable step (see
        :meth:`LazyFrameQuery._stable_group_by`) whose output frame the later verbs read."""
        nodes = _flatten(exprs, named)
        if nodes and not any(_has_agg(e) for e in nodes):
            return self._query._stable_group_by(self._by, nodes)
        return self._query._with(by=self._by, aggs=nodes)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise NotImplementedForType(
            f"group_by(...).{name} is not supported on a private table query; use .agg(...)"
        )


def _key_columns(keys: Any) -> dict[str, list[Any]]:
    if isinstance(keys, dict):
        return {str(k): list(v) for k, v in keys.items()}
    if hasattr(keys, "collect") and type(keys).__name__ == "LazyFrame":
        keys = keys.collect()
    if hasattr(keys, "to_dict") and hasattr(keys, "columns"):
        try:
            return {str(c): list(keys[c].to_list()) for c in keys.columns}
        except AttributeError:
            return {str(c): list(keys[c]) for c in keys.columns}
    raise InvalidParameter(
        f"keys must be a Polars DataFrame/LazyFrame or a dict of columns, got {type(keys).__name__}"
    )


def _sum_series(item: an.Item, values: Any) -> Any:
    """A noisy sum in the summed column's dtype, as OpenDP (an integer saturated into it)."""
    import polars as pl

    from ..backends.tables.polars import polars_dtype

    target = an._out_dtype(n.Col(item.name), {item.name: item})
    if item.family == "fsum":
        s = pl.Series(item.name, np.asarray(values, dtype=np.float64), dtype=pl.Float64)
        return s.cast(polars_dtype(target))
    info = np.iinfo(_NP_INTS.get(an.base(target), np.int64))
    arr = np.clip(np.asarray(values, dtype=np.int64), info.min, info.max)
    return pl.Series(item.name, arr, dtype=pl.Int64).cast(polars_dtype(target))


#: the numpy range of each integer dtype (UInt64 and Int128 saturate at Int64's)
_NP_INTS: dict[str, Any] = {
    "Int8": np.int8,
    "Int16": np.int16,
    "Int32": np.int32,
    "Int64": np.int64,
    "UInt8": np.uint8,
    "UInt16": np.uint16,
    "UInt32": np.uint32,
}


def _run(tp: an.TablePlan, measure: Any, scales: dict[str, float], thr: Any, data: Any) -> Any:
    """Run the plan on ``data``'s engine, add the noise, assemble the release."""
    import polars as pl

    from ..backends.tables import of_table
    from ..backends.tables.polars import compile_expr, polars_dtype
    from ..transformations.quantile import _alpha_fraction

    engine = of_table(data)
    if engine is None:  # the domain refused it already
        raise NotImplementedForType("no table engine owns this frame")
    plan = tp.plan
    if tp.key_pass is not None:
        kr = engine.run(data, tp.key_pass)
        plan = replace(plan, keys=kr.keys)
    res = engine.run(data, plan)
    groups = len(next(iter(res.values.values()))) if res.values else 0
    keep = list(range(groups))
    cols: dict[str, Any] = {}
    if tp.threshold_item is not None:
        counts = res.values[tp.sources[tp.threshold_item]]
        released = thr.function({i: int(c) for i, c in enumerate(counts)})
        keep = [i for i in range(groups) if i in released]
        cols[tp.threshold_item] = np.array([int(released[i]) for i in keep], dtype=np.int64)
    for it in tp.items:
        if it.name in cols:
            continue
        mech = an._native_mechanism(it, measure)
        values = [res.values[tp.sources[it.name]][i] for i in keep]
        if it.family == "quantile":
            assert it.candidates is not None and it.alpha is not None  # noqa: S101
            num, den = _alpha_fraction("quantile", it.alpha)
            sel = an.quantile_selector(it, mech, scales[it.name], len(it.candidates))
            out = []
            for lt, gt in values:
                scores = np.abs(
                    (den - num) * np.asarray(lt, dtype=object) - num * np.asarray(gt, dtype=object)
                )
                idx = sel(np.asarray(scores.tolist(), dtype=np.uint64))
                out.append(it.candidates[int(idx)])
            cols[it.name] = out
            continue
        exact = an.exact_values(it, values)
        if len(exact):
            noise = an.noise_for(it, mech, scales[it.name])
            cols[it.name] = np.asarray(noise(exact))
        else:
            cols[it.name] = exact
    series = []
    for b, dt in zip(tp.by_names, tp.by_dtypes, strict=True):
        vals = [res.keys[b][i] for i in keep]
        series.append(pl.Series(b, vals, dtype=polars_dtype(dt), strict=False))
    for it in tp.items:
        v = cols[it.name]
        if it.family == "count":
            arr = np.asarray(v, dtype=np.int64)
            if not it.signed:
                arr = np.clip(arr, 0, 2**32 - 1)
                series.append(pl.Series(it.name, arr, dtype=pl.UInt32))
            else:
                series.append(pl.Series(it.name, arr, dtype=pl.Int64))
        elif it.family in ("isum", "fsum"):
            series.append(_sum_series(it, v))
        else:
            qdt = pl.Float64 if it.float_out else pl.Int64
            series.append(pl.Series(it.name, list(v), dtype=qdt, strict=False))
    frame = pl.DataFrame(series) if series else pl.DataFrame()
    if not series:
        frame = pl.DataFrame({"#": [0] * len(keep)})
    exprs = [pl.col(b) for b in tp.by_names]
    for output in tp.outputs:
        exprs.append(compile_expr(output.expr).alias(output.name))
    return frame.select(exprs)


def context_domain(data: Any, margins: Any, domain: Any = None) -> Any:
    """The context's domain for frame ``data`` when the table API serves it, else None.

    The table API serves a Polars LazyFrame, any frame a table engine owns when ``margins``
    are given (an empty list too: ``margins=[]`` asks for the table API), and any data given
    with a frame domain (``dp.lazyframe_domain``); other data
    keeps the chain-style :class:`~opendp_lite.context.Query` (a pandas or Polars DataFrame
    without margins).  The domain is OpenDP's ``lazyframe_domain`` of the frame's schema (read,
    never the values) with the margins, or, for a column type it has no domain for, the table
    API's :class:`~.analysis.TableDomain`.
    """
    from ..backends.tables import of_table
    from .margins import check_margins

    register_polars_namespace()
    if domain is not None:
        return domain if an.is_frame_domain(domain) else None
    engine = of_table(data)
    lazy = (
        type(data).__module__.partition(".")[0] == "polars" and type(data).__name__ == "LazyFrame"
    )
    if engine is None or not (lazy or margins is not None):  # margins=[]: the table API too
        return None
    schema = engine.schema(data)
    checked = check_margins(margins)
    try:
        from .domains import lazyframe_domain_from_schema, with_margin

        frame = lazyframe_domain_from_schema(schema)
        for m in checked:
            frame = with_margin(frame, m)
        return frame
    except (ImportError, NotImplementedForType):
        return an.TableDomain(tuple(schema.items()), checked)


class _PolarsNamespace:
    """``dp.polars``: OpenDP's Polars helpers (``Margin``, ``Bound``, ``OnceFrame``,
    ``LazyFrameQuery``), Polars-free themselves."""

    def __init__(self) -> None:
        from .margins import Bound, Margin, SortBy

        self.Margin = Margin
        self.Bound = Bound
        self.SortBy = SortBy
        self.OnceFrame = OnceFrame
        self.LazyFrameQuery = LazyFrameQuery
        self.LazyGroupBy = LazyGroupBy

    def __repr__(self) -> str:
        return "<namespace dp.polars>"

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise NotImplementedForType(
            f"dp.polars.{name} is not supported; dp.polars has Margin, Bound, SortBy, "
            "OnceFrame, LazyFrameQuery"
        )


#: ``dp.polars``
polars_namespace = _PolarsNamespace()


def register_polars_namespace() -> None:
    """Register ``.dp`` on ``pl.Expr`` now if Polars is imported, else when it is
    (:mod:`._polars_entry`, which never imports Polars itself); called when a context is built
    on a frame, so OpenDP's ``pl.col(...).dp.sum(...)`` reads."""
    from ._polars_entry import register_on_import

    register_on_import()
