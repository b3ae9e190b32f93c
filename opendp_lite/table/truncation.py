"""The bounds a truncation establishes, where they hold, and the per-person bounds of an
aggregate (issue 25: ``truncate_per_group``/``truncate_num_groups`` under identifier units).

**Descriptors.**  ``truncate_per_group(k)`` states *each identifier holds at most k rows*;
``truncate_per_group(k, by=B)`` *at most k rows in any one group of B*;
``truncate_num_groups(k, by=B)`` *rows in at most k groups of B*.  Each :class:`Fact` is
attached to the columns it was computed on (the identifier's and B's), by their *version*: a
column keeps its version while it is passed through unchanged (``pl.col("b")`` in a
``select``), and gets a fresh one whenever a step writes it (a redefinition, a cast, an alias
onto its name).  A fact whose columns changed version, or were dropped, no longer holds: it
is dropped, and the step that dropped it is remembered for the refusal.  A ``filter`` keeps
every fact: it only removes rows, and each fact bounds a count of one identifier's rows (in
all, in a group, or of its groups), which removing rows can only lower (the predicate is
row by row, so no row is added or moved between groups).  An alias to another name gives the
new column a fresh version: the fact stays with the old name only.

**Per-person bounds.**  For an aggregate grouped by ``G`` (a set of plain columns; the whole
frame when ``G`` is None), per identifier: ``c`` rows in all, ``m`` rows in one group of G,
``k`` groups of G, from the facts:

* ``c = min(k_all, groups_B · rows_B for each B with both facts)``;
* ``m = min(c, rows_B for B ⊆ G)`` (a group of G lies inside one group of B);
* ``k = 1`` ungrouped, else ``min(c, groups_B for G ⊆ B)`` (a group of B lies inside one group
  of G, so an identifier touches at most as many groups of G as of B).

The unit then bounds one individual (:func:`person_bounds`); the triple feeds
``make_partition_by``'s map under ``symmetric_id_distance`` (``max_partitions``,
``max_contributions_per_partition``, ``max_contributions``): the proof is
``docs/proofs/table/truncation.md``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidParameter, NotImplementedForType
from . import nodes as n

__all__ = ["Fact", "PersonFacts", "UnitKind", "facts_after", "person_bounds", "unit_kind"]

_PER_GROUP_HINT = (
    "`per_group` contributions is unknown. This is likely due to a missing truncation: bound "
    "each identifier's rows with .truncate_per_group(k) (or .truncate_per_group(k, by=[...]) "
    "with .truncate_num_groups(n, by=[...]))"
)


@dataclass(frozen=True)
class UnitKind:
    """The context's unit as the truncation analysis reads it."""

    identifier: n.Expr | None  # None: each row is its own identifier (a row-level unit)
    factor: int  # 2 for changes (a change is a removal and an addition), else 1
    bounds: bool  # the distance is a list of dp.polars.Bound


def unit_kind(metric: Any) -> UnitKind | None:
    """The unit of ``metric`` when it is one of issue 25's (identifier units, or a row-level
    unit with per-group bounds), else None (the row-level units the table API had)."""
    from ..metrics import ChangeOneIdDistance, SymmetricIdDistance
    from .metrics import FrameDistance

    bounds = isinstance(metric, FrameDistance)
    inner = metric.inner_metric if bounds else metric
    if isinstance(inner, SymmetricIdDistance | ChangeOneIdDistance):
        ident = inner.identifier
        node = n.Col(ident) if isinstance(ident, str) else ident
        return UnitKind(node, 2 if isinstance(inner, ChangeOneIdDistance) else 1, bounds)
    if bounds:
        return UnitKind(None, 1, True)  # (insert-delete: the same counts, order-free aggregates)
    return None


@dataclass(frozen=True)
class Fact:
    """One bound a truncation established: ``kind`` is ``"rows"`` (rows per identifier in
    each group of ``by``; all its rows when ``by`` is empty) or ``"groups"`` (groups of
    ``by`` per identifier); ``versions`` are the versions of the columns it reads."""

    kind: str
    by: frozenset[str]
    k: int
    versions: tuple[tuple[str, object], ...]
    step: int


@dataclass(frozen=True)
class PersonFacts:
    """The facts that hold at the aggregation, and the steps that dropped others."""

    facts: tuple[Fact, ...]
    dropped: tuple[str, ...]


def _reads(e: n.Expr) -> set[str]:
    if isinstance(e, n.Col):
        return {e.name}
    return set().union(*(_reads(c) for c in n.children(e)))


def _by_names(by: tuple[n.Expr, ...], what: str) -> frozenset[str]:
    names = []
    for b in by:
        if not isinstance(b, n.Col):
            raise NotImplementedForType(
                f"{what}: by holds column names only. Fix: compute the grouping column first "
                "(.with_columns(name=expr)), then pass by=['name']"
            )
        names.append(b.name)
    return frozenset(names)


def _describe(i: int, step: n.Step) -> str:
    kind = type(step).__name__
    verb = {"WithColumns": "with_columns", "Select": "select"}.get(kind, kind)
    return f"step {i + 1} ({verb})"


def facts_after(schema: dict[str, Any], steps: tuple[n.Step, ...], unit: UnitKind) -> PersonFacts:
    """The truncation facts that hold after ``steps``.

    Raises:
        InvalidParameter: for a truncation without an identifier unit, or on an identifier
            that a step before it redefined.
        NotImplementedForType: for a truncation whose ``by`` holds an expression.
    """
    fresh = itertools.count()
    version: dict[str, object] = {c: ("input", c) for c in schema}
    facts: list[Fact] = []
    dropped: list[str] = []
    for i, step in enumerate(steps):
        if isinstance(step, n.TruncateRows | n.TruncateGroups):
            if unit.identifier is None:
                raise InvalidParameter(
                    "truncation is only valid when the privacy unit has an identifier. Fix: "
                    "dp.unit_of(contributions=..., identifier='person_id')"
                )
            reads = _reads(unit.identifier)
            moved = [c for c in sorted(reads) if version.get(c) != ("input", c)]
            if moved:
                raise InvalidParameter(
                    f"{_describe(i, step)} truncates by the identifier, but an earlier step "
                    f"redefined or dropped {moved}: the rows would no longer be grouped by "
                    "person. Fix: truncate before redefining the identifier's columns"
                )
            what = (
                "truncate_per_group"
                if isinstance(step, n.TruncateRows)
                else ("truncate_num_groups")
            )
            by = _by_names(step.by, what)
            cols = sorted(reads | by)
            facts.append(
                Fact(
                    "rows" if isinstance(step, n.TruncateRows) else "groups",
                    by,
                    step.k,
                    tuple((c, version.get(c)) for c in cols),
                    i,
                )
            )
            continue
        if isinstance(step, n.FilterRows):
            continue  # only removes rows: every fact's count can only go down
        written: dict[str, object] = {}
        outputs = (*step.by, *step.aggs) if isinstance(step, n.GroupAgg) else step.exprs
        for e in outputs:
            name = n.output_name(e)
            passthrough = isinstance(e, n.Col) and e.name == name
            written[name] = version.get(name) if passthrough else ("v", next(fresh))
        if isinstance(step, n.GroupAgg) and unit.identifier in step.by:
            _check_identifier(i, step, unit.identifier, version)
        version = written if isinstance(step, n.Select | n.GroupAgg) else {**version, **written}
        keep = []
        ident = _reads(unit.identifier) if unit.identifier is not None else set()
        for f in facts:
            # the identifier may be dropped (its rows stay the person's): only a new
            # definition of it ends the fact; a by column must stay what it was
            if all(version.get(c) == v or (c in ident and c not in version) for c, v in f.versions):
                keep.append(f)
            else:
                changed = sorted(c for c, v in f.versions if version.get(c) != v)
                verb = "truncate_per_group" if f.kind == "rows" else "truncate_num_groups"
                dropped.append(
                    f"{_describe(i, step)} redefined or dropped {changed}, so the bound of "
                    f"step {f.step + 1} ({verb}({f.k}, by={sorted(f.by)})) no longer holds"
                )
        facts = keep
        if isinstance(step, n.GroupAgg) and unit.identifier in step.by:
            # one row per identifier in each group of the other keys (their output columns)
            others = frozenset(n.output_name(b) for b in step.by if b != unit.identifier)
            cols = sorted(_reads(unit.identifier) | others)
            facts.append(Fact("rows", others, 1, tuple((c, version.get(c)) for c in cols), i))
    return PersonFacts(tuple(facts), tuple(dropped))


def _check_identifier(i: int, step: n.GroupAgg, ident: n.Expr, version: dict[str, object]) -> None:
    moved = [c for c in sorted(_reads(ident)) if version.get(c) != ("input", c)]
    if moved:
        raise InvalidParameter(
            f"step {i + 1} (group_by(...).agg) groups by the identifier, but an earlier step "
            f"redefined or dropped {moved}: the rows would no longer be grouped by person. "
            "Fix: group by the identifier before redefining its columns"
        )


def rows_bound_through(by: tuple[n.Expr, ...], bounds: Any) -> int:
    """``min(c, g)`` for one individual of a row-level unit given as ``dp.polars.Bound`` list:
    ``c`` its rows in all (``per_group`` of a bound without ``by``, or ``per_group ·
    num_groups``), ``g`` its groups of ``by`` (``num_groups`` of a bound whose ``by`` holds
    every key): the output rows of a stable ``group_by(by).agg`` it can change.

    Raises:
        InvalidParameter: when neither is known.
    """
    keys = set(by)
    total: int | None = None
    groups: int | None = None
    for b in bounds:
        bb = set(_nodes(b.by))
        if not bb and b.per_group is not None:
            total = _min(total, b.per_group)
        if bb and b.per_group is not None and b.num_groups is not None:
            total = _min(total, b.per_group * b.num_groups)
        if b.num_groups is not None and keys <= bb:
            groups = _min(groups, b.num_groups)
    bound = _min(total, groups)
    if bound is None:
        raise InvalidParameter(
            "a stable group_by(...).agg(...) needs the rows or the groups one individual "
            "contributes. Fix: dp.polars.Bound(per_group=k) (rows in all) or "
            "dp.polars.Bound(by=[the keys], num_groups=k) in the privacy unit"
        )
    return bound


def _min(*vs: int | None) -> int | None:
    known = [v for v in vs if v is not None]
    return min(known) if known else None


def per_identifier(
    pf: PersonFacts, group: frozenset[str] | None
) -> tuple[int | None, int | None, int | None]:
    """``(k, m, c)``: groups of ``group``, rows in one group, rows in all, per identifier
    (None: unbounded)."""
    rows = {f.by: f.k for f in pf.facts if f.kind == "rows"}
    groups = {f.by: f.k for f in pf.facts if f.kind == "groups"}
    rows_min: dict[frozenset[str], int] = {}
    for f in pf.facts:
        if f.kind == "rows":
            rows_min[f.by] = min(rows_min.get(f.by, f.k), f.k)
    groups_min: dict[frozenset[str], int] = {}
    for f in pf.facts:
        if f.kind == "groups":
            groups_min[f.by] = min(groups_min.get(f.by, f.k), f.k)
    del rows, groups
    c = _min(
        rows_min.get(frozenset()),
        *(groups_min[b] * rows_min[b] for b in groups_min if b in rows_min),
    )
    g = frozenset() if group is None else group
    m = _min(c, *(k for b, k in rows_min.items() if b <= g))
    if group is None:
        k: int | None = 1
    else:
        k = _min(c, *(v for b, v in groups_min.items() if g <= b))
    return k, m, c


def person_bounds(
    pf: PersonFacts,
    group: frozenset[str] | None,
    unit: UnitKind,
    d_in: Any,
) -> tuple[tuple[int, int, int | None], int]:
    """``((L0, L∞, L1), d)``: the bounds on one of the ``d`` units a neighbouring dataset
    differs by, over the groups of ``group``: groups touched, rows in one group, rows in all
    (``make_partition_by``'s ``max_partitions``, ``max_contributions_per_partition``,
    ``max_contributions``, whose map at ``d`` is the aggregate's distance).

    Raises:
        InvalidParameter: when a bound is unknown (a missing truncation, or one a later step
            dropped: the message names the step).
    """
    if unit.identifier is None:
        k_id, m_id, c_id = 1, 1, 1  # each row is its own identifier
    else:
        k_id, m_id, c_id = per_identifier(pf, group)  # type: ignore[assignment]
    if not unit.bounds:
        if k_id is None:
            raise InvalidParameter(_why(pf, group, "num_groups"))
        if m_id is None:
            raise InvalidParameter(_why(pf, group, "per_group"))
        return (k_id, m_id, c_id), unit.factor * int(d_in)
    g = frozenset() if group is None else group
    total: int | None = None
    per_g: list[int] = []
    n_g: list[int] = []
    for b in d_in:
        bb = _by_names(tuple(_nodes(b.by)), "dp.polars.Bound")
        if not bb and b.per_group is not None:
            total = _min(total, b.per_group)
        if bb and b.per_group is not None and b.num_groups is not None:
            total = _min(total, b.per_group * b.num_groups)  # p in each of g groups
        if b.per_group is not None and bb <= g:
            per_g.append(b.per_group)
        if b.num_groups is not None and g <= bb and group is not None:
            n_g.append(b.num_groups)
    ids_in_group = _min(total, *per_g)
    if m_id is None or ids_in_group is None:
        raise InvalidParameter(_why(pf, group, "per_group"))
    linf = ids_in_group * m_id
    l0: int | None
    if group is None:
        l0 = 1
    else:
        l0 = _min(*n_g, None if total is None or k_id is None else total * k_id)
    if l0 is None:
        raise InvalidParameter(_why(pf, group, "num_groups"))
    l1 = _min(l0 * linf, None if total is None or c_id is None else total * c_id)
    return (l0, linf, l1), unit.factor


def _nodes(by: Any) -> tuple[n.Expr, ...]:
    from .margins import by_nodes

    return by_nodes(by)


def _why(pf: PersonFacts, group: frozenset[str] | None, what: str) -> str:
    cols = "[]" if not group else "[" + ", ".join(f'col("{c}")' for c in sorted(group)) + "]"
    if what == "per_group":
        msg = _PER_GROUP_HINT
    else:
        msg = (
            f"`num_groups` contributions is unknown for the groups of {cols}. To bound "
            f"`num_groups` in the Context API, try using `.truncate_num_groups(num_groups, "
            f"by={cols})`. To bound `per_group` in the Context API, try using "
            f"`.truncate_per_group(per_group, by={cols})`."
        )
    if pf.dropped:
        msg += " (" + "; ".join(pf.dropped) + ")"
    return msg
