"""The domains of the table API, as OpenDP 0.16 names them: series, frames, expressions.

* :func:`series_domain` - one named column: its element domain and whether it holds nulls;
* :func:`lazyframe_domain` - a frame: its columns (distinct names), and with
  :func:`with_margin` what is public about its groupings (see :meth:`LazyFrameDomain.get_margin`);
* :func:`wild_expr_domain` - where an expression runs: the columns it may read, and either
  row by row (no margin) or per group (a margin);
* the element domains Polars columns need besides ``atom_domain``: :func:`enum_domain`,
  :func:`datetime_domain` (and ``categorical_domain``, shared with the vector constructors).

Nothing here imports Polars: a Polars object is recognised by its class (its module and name),
and its schema read through the object's own methods.  Data types are named as the table plan
names them (:data:`opendp_lite.table.nodes.DType`: ``"Int64"``, ``("Enum", ("a", "b"))``,
``("Datetime", "us", None)``).

Membership checks the **schema**: column names and data types.  A Polars ``Series`` or
``DataFrame`` (in memory) is also checked value by value against the element domains (nulls in
a column that is not nullable, NaN where ``nan=False``, values outside bounds or categories);
a ``LazyFrame`` or another engine's frame is checked by its schema only, so the value-level
facts of its element domains are declarations, which the analysis must not rely on.

>>> import opendp_lite.prelude as dp
>>> a = dp.series_domain("A", dp.atom_domain(T=float))
>>> b = dp.series_domain("B", dp.option_domain(dp.atom_domain(T=dp.i32)))
>>> frame = dp.lazyframe_domain([a, b])
>>> a, b.nullable, frame
(SeriesDomain("A", f64), True, FrameDomain(A: f64, B: i32; margins=[]))
>>> frame.columns, frame.get_series_domain("B") == b
(['A', 'B'], True)
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import reduce
from typing import Any, Literal, cast

from ..core import Domain
from ..domains import AtomDomain, CategoricalDomain, OptionDomain, categorical_domain
from ..errors import InvalidParameter, NotImplementedForType, NotInDomain
from ..typing import _polars_kind
from . import nodes as n

__all__ = [
    "DataFrame",
    "DatetimeDomain",
    "EnumDomain",
    "Expr",
    "FrameMargin",
    "LazyFrame",
    "LazyFrameDomain",
    "Series",
    "SeriesDomain",
    "WildExprDomain",
    "categorical_domain",
    "datetime_domain",
    "dtype_of_polars",
    "enum_domain",
    "lazyframe_domain",
    "lazyframe_domain_from_schema",
    "polars_kind",
    "series_domain",
    "wild_expr_domain",
    "with_margin",
]

#: OpenDP's type names of the Polars carriers (``dp.RuntimeType.infer`` gives these)
Series = "Series"
DataFrame = "DataFrame"
LazyFrame = "LazyFrame"
Expr = "Expr"


def polars_kind(x: object) -> str | None:
    """``"Series"``, ``"DataFrame"``, ``"LazyFrame"`` or ``"Expr"`` for a Polars object of that
    class (or a subclass), else None; Polars is not imported.

    >>> polars_kind([1, 2]) is None
    True
    """
    return _polars_kind(x)


# ----------------------------------------------------------------------------------------------
# element domains that only columns have


_TIME_UNITS = {"ns": "Nanoseconds", "us": "Microseconds", "ms": "Milliseconds"}


@dataclass(frozen=True)
class DatetimeDomain(Domain[Any]):
    """Datetimes of one ``time_unit`` (``"ns"``, ``"us"``, ``"ms"``) and ``time_zone``."""

    time_unit: str = "us"
    time_zone: str | None = None

    def __repr__(self) -> str:
        zone = "None" if self.time_zone is None else f'Some("{self.time_zone}")'
        return f"DatetimeDomain {{ time_unit: {_TIME_UNITS[self.time_unit]}, time_zone: {zone} }}"

    @property
    def carrier_type(self) -> str:
        return "NaiveDateTime"

    def _normalize(self, x: object) -> Any:
        import datetime as _dt

        if not isinstance(x, _dt.datetime):
            raise NotInDomain(f"{type(x).__name__} is not a datetime, so not in {self!r}")
        return x


def datetime_domain(time_unit: str = "us", time_zone: str | None = None) -> DatetimeDomain:
    """The domain of datetimes in ``time_unit`` (``"ns"``, ``"us"`` or ``"ms"``) and
    ``time_zone`` (None: naive), as a column's element domain (OpenDP 0.16's).

    >>> datetime_domain(), datetime_domain("ms", "UTC")
    (DatetimeDomain { time_unit: Microseconds, time_zone: None }, DatetimeDomain { time_unit: Milliseconds, time_zone: Some("UTC") })

    Raises:
        InvalidParameter: for another time unit, or a time zone that is not a string.
    """  # noqa: E501
    if time_unit not in _TIME_UNITS:
        raise InvalidParameter(f"time_unit must be one of {sorted(_TIME_UNITS)}, got {time_unit!r}")
    if time_zone is not None and not isinstance(time_zone, str):
        raise InvalidParameter(f"time_zone must be a string or None, got {time_zone!r}")
    return DatetimeDomain(time_unit, time_zone)


@dataclass(frozen=True)
class EnumDomain(Domain[str]):
    """Strings from the fixed, ordered ``categories`` of a Polars ``Enum`` column."""

    categories: tuple[str, ...]

    def __repr__(self) -> str:
        return f"EnumDomain {{ categories: {list(self.categories)!r} }}"

    @property
    def carrier_type(self) -> str:
        return "String"

    def _normalize(self, x: object) -> str:
        if not isinstance(x, str) or x not in self.categories:
            raise NotInDomain(f"a value is not one of the categories of {self!r}")
        return x


def _strings(name: str, values: object) -> tuple[str, ...]:
    if isinstance(values, str):
        raise InvalidParameter(f"{name} must be a sequence of strings, got the string {values!r}")
    if polars_kind(values) == "Series":
        values = values.to_list()  # type: ignore[attr-defined]
    try:
        items: tuple[Any, ...] = tuple(values)  # type: ignore[arg-type]
    except TypeError:
        raise InvalidParameter(f"{name} must be a sequence of strings, got {values!r}") from None
    if not all(isinstance(c, str) for c in items):
        raise InvalidParameter(f"{name} must be strings, got {list(items)!r}")
    if len(set(items)) != len(items):
        raise InvalidParameter(f"{name} must be distinct, got {list(items)!r}")
    return items


def enum_domain(categories: Sequence[str] | Any) -> EnumDomain:
    """The domain of a Polars ``Enum`` column's values: one of ``categories`` (a list or a
    Polars Series of distinct strings, in the Enum's order).

    >>> enum_domain(["low", "high"])
    EnumDomain { categories: ['low', 'high'] }

    Raises:
        InvalidParameter: if the categories are not distinct strings.
    """
    return EnumDomain(_strings("categories", categories))


# ----------------------------------------------------------------------------------------------
# data types


_ATOM_DTYPES = {
    "f64": "Float64",
    "f32": "Float32",
    "i8": "Int8",
    "i16": "Int16",
    "i32": "Int32",
    "i64": "Int64",
    "u8": "UInt8",
    "u16": "UInt16",
    "u32": "UInt32",
    "u64": "UInt64",
    "bool": "Boolean",
    "String": "String",
    "NaiveDate": "Date",
    "NaiveTime": "Time",
}
_DTYPE_ATOMS = {v: k for k, v in _ATOM_DTYPES.items()}
#: OpenDP's short names of the data types (as Polars prints them), for reprs
_SHORT = {
    "Float64": "f64",
    "Float32": "f32",
    "Boolean": "bool",
    "String": "str",
    "Date": "date",
    "Time": "time",
}
_DT_SHORT = {"ns": "ns", "us": "μs", "ms": "ms"}


def _dtype_of_element(element: Domain[Any]) -> n.DType:
    if isinstance(element, AtomDomain):
        if element.T not in _ATOM_DTYPES:
            raise NotImplementedForType(
                f"a column cannot hold {element.T}; use one of {sorted(_ATOM_DTYPES)}"
            )
        return _ATOM_DTYPES[element.T]
    if isinstance(element, CategoricalDomain):
        return "Categorical"
    if isinstance(element, EnumDomain):
        return ("Enum", element.categories)
    if isinstance(element, DatetimeDomain):
        return ("Datetime", element.time_unit, element.time_zone)
    raise InvalidParameter(
        "a series' element domain is an atom_domain, categorical_domain, enum_domain or "
        f"datetime_domain (optionally in option_domain), got {element!r}"
    )


def _short_dtype(dtype: n.DType) -> str:
    if isinstance(dtype, tuple):
        if dtype[0] == "Enum":
            return "enum"
        unit = _DT_SHORT.get(dtype[1], dtype[1])
        return f"datetime[{unit}]" if dtype[2] is None else f"datetime[{unit}, {dtype[2]}]"
    if dtype == "Categorical":
        return "cat"
    if dtype in _SHORT:
        return _SHORT[dtype]
    return _DTYPE_ATOMS.get(dtype, dtype.lower())


def dtype_of_polars(dtype: Any) -> n.DType:
    """A Polars data type (a class or an instance) as the plan's :data:`~.nodes.DType`.

    Raises:
        NotImplementedForType: for a data type the table API has no column domain for.
    """
    name = dtype.__name__ if isinstance(dtype, type) else type(dtype).__name__
    if name == "Utf8":
        name = "String"
    if name in _DTYPE_ATOMS or name in ("Categorical", "Date", "Time"):
        return name
    if name == "Enum":
        return ("Enum", tuple(dtype.categories.to_list()))
    if name == "Datetime":
        return ("Datetime", getattr(dtype, "time_unit", None) or "us", dtype.time_zone)
    raise NotImplementedForType(
        f"the table API has no column domain for Polars data type {dtype}; cast the column to "
        "a numeric, String, Boolean, Categorical, Enum or Datetime type first"
    )


def _element_of_dtype(dtype: n.DType) -> Domain[Any]:
    """The widest element domain of a column of ``dtype`` (floats admit NaN, as in OpenDP)."""
    from ..domains import atom_domain

    if isinstance(dtype, tuple):
        if dtype[0] == "Enum":
            return EnumDomain(tuple(dtype[1]))
        return DatetimeDomain(dtype[1], dtype[2])
    if dtype == "Categorical":
        return categorical_domain()
    if dtype in _DTYPE_ATOMS:
        return atom_domain(T=_DTYPE_ATOMS[dtype])
    raise NotImplementedForType(
        f"the table API has no element domain for {dtype} columns yet; cast the column to a "
        "numeric, String, Boolean, Categorical, Enum or Datetime type first"
    )


# ----------------------------------------------------------------------------------------------
# series


@dataclass(frozen=True)
class SeriesDomain(Domain[Any]):
    """A named column whose values are in ``element_domain``, and null where ``nullable``."""

    name: str
    element_domain: Domain[Any]
    nullable: bool = False

    def __repr__(self) -> str:
        return f'SeriesDomain("{self.name}", {_short_dtype(self.dtype)})'

    @property
    def dtype(self) -> n.DType:
        """The column's data type, as the plan names it."""
        return _dtype_of_element(self.element_domain)

    @property
    def carrier_type(self) -> str:
        return "Series"

    def _normalize(self, x: object) -> Any:
        if polars_kind(x) != "Series":
            raise NotInDomain(f"expected Polars Series, got {type(x).__name__}")
        s: Any = x
        if s.name != self.name:
            raise NotInDomain(f"the series is named {s.name!r}, not {self.name!r}")
        _check_dtype(self, _dtype_or_refuse(s.dtype, self.name))
        _check_values(self, s)
        return x


def _dtype_or_refuse(dtype: Any, column: str) -> n.DType:
    try:
        return dtype_of_polars(dtype)
    except NotImplementedForType:
        raise NotInDomain(
            f"column {column!r} has type {dtype}, which no column domain holds"
        ) from None


def _check_dtype(sd: SeriesDomain, dtype: n.DType) -> None:
    if dtype != sd.dtype:
        raise NotInDomain(f"column {sd.name!r} has type {dtype}, but {sd!r} needs {sd.dtype}")


def _check_values(sd: SeriesDomain, s: Any) -> None:
    """The value-level facts of ``sd`` on an in-memory Polars series (messages carry no value
    of the data)."""
    where = f"column {sd.name!r}"
    if not sd.nullable and s.null_count():
        raise NotInDomain(f"{where} holds nulls, but {sd!r} is not nullable")
    el = sd.element_domain
    values = s.drop_nulls()
    if isinstance(el, AtomDomain):
        if el.T in ("f64", "f32") and not el.nan and bool(values.is_nan().any()):
            raise NotInDomain(f"{where} holds NaN, but its element domain {el!r} does not")
        if el.bounds is not None and len(values):
            lo, hi = el.bounds
            inside = values.is_between(lo, hi)
            if not bool(inside.all()):
                raise NotInDomain(f"{where} holds values outside the bounds of {el!r}")
    elif isinstance(el, CategoricalDomain) and el.categories is not None:
        cats = set(el.categories)
        if not all(v in cats for v in values.cast(str).unique().to_list()):
            raise NotInDomain(f"{where} holds values outside the categories of {el!r}")


def series_domain(name: str, element_domain: Domain[Any], nullable: bool = False) -> SeriesDomain:
    """The domain of a column ``name`` whose values are in ``element_domain``.

    Wrapping the element domain in ``option_domain`` (OpenDP's spelling) or passing
    ``nullable=True`` lets the column hold nulls.

    >>> import opendp_lite.prelude as dp
    >>> dp.series_domain("age", dp.atom_domain(T=dp.i64)), dp.series_domain("x", dp.enum_domain(["a"]))
    (SeriesDomain("age", i64), SeriesDomain("x", enum))

    Raises:
        InvalidParameter: if ``name`` is not a string.
        InvalidParameter: for an element domain a column cannot have (a vector domain, ...).
    """  # noqa: E501
    if not isinstance(name, str):
        raise InvalidParameter(f"name must be a string, got {name!r}")
    if isinstance(element_domain, OptionDomain):
        element_domain, nullable = element_domain.element_domain, True
    _dtype_of_element(element_domain)  # refuses what a column cannot hold
    return SeriesDomain(name, element_domain, bool(nullable))


# ----------------------------------------------------------------------------------------------
# margins


_INVARIANT_RANK = {None: 0, "keys": 1, "lengths": 2}
#: a margin as plain values: (column names, max_length, max_groups, invariant)
_Spec = tuple[tuple[str, ...], int | None, int | None, str | None]


@dataclass(frozen=True)
class FrameMargin:
    """What is public about the frame grouped by ``by`` (a set of expression nodes).

    ``max_length``: no group has more rows; ``max_groups``: there are no more groups;
    ``invariant``: ``"keys"`` (the set of keys is public) or ``"lengths"`` (the keys and each
    group's length are public), or None.
    """

    by: frozenset[n.Expr]
    max_length: int | None = None
    max_groups: int | None = None
    invariant: Literal["keys", "lengths"] | None = None

    def by_repr(self) -> str:
        return "{" + ", ".join(sorted(_expr_repr(e) for e in self.by)) + "}"


def _expr_repr(e: n.Expr) -> str:
    return f'col("{e.name}")' if isinstance(e, n.Col) else repr(e)


def _by_node(b: object) -> n.Expr:
    if isinstance(b, str):
        return n.Col(b)
    if polars_kind(b) == "Expr":
        meta: Any = b.meta  # type: ignore[attr-defined]
        if meta.is_column():
            return n.Col(meta.output_name())
    if isinstance(b, n.Col | n.Alias | n.Binary | n.Unary | n.Cast | n.Clip | n.Cut):
        return b
    try:  # another expression: the table API's builder reads it (fail-closed) if present
        builder: Any = importlib.import_module("opendp_lite.table.builder")
        node: n.Expr = builder.to_node(b)
        return node
    except ImportError:
        pass
    raise InvalidParameter(f"a margin's 'by' holds column names or column expressions, got {b!r}")


def _by_set(by: object, what: str = "by") -> frozenset[n.Expr]:
    if isinstance(by, str):
        raise InvalidParameter(f'{what} ({by}) must be a sequence type; Did you mean ["{by}"]?')
    if not isinstance(by, Iterable):
        raise InvalidParameter(f"{what} must be a sequence type, got {by!r}")
    return frozenset(_by_node(b) for b in by)


def _as_frame_margin(margin: object) -> FrameMargin:
    if isinstance(margin, FrameMargin):
        return margin
    fields = ("by", "max_length", "max_groups", "invariant")
    if not all(hasattr(margin, f) for f in fields):
        raise InvalidParameter(f"margin must be a dp.polars.Margin, got {margin!r}")
    m: Any = margin
    for name in ("max_length", "max_groups"):
        v = getattr(m, name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
            raise InvalidParameter(f"margin {name} must be a non-negative int, got {v!r}")
    invariant = m.invariant.lower() if isinstance(m.invariant, str) else m.invariant
    if invariant not in _INVARIANT_RANK:
        raise InvalidParameter(
            f'margin invariant must be "keys", "lengths" or None, got {m.invariant!r}'
        )
    inv = cast(Literal["keys", "lengths"] | None, invariant)  # checked just above
    return FrameMargin(_by_set(m.by), m.max_length, m.max_groups, inv)


def _min_covering(
    must_cover: frozenset[n.Expr], sets: list[tuple[frozenset[n.Expr], int]]
) -> list[int] | None:
    """Greedy cover of ``must_cover`` by the ``sets`` (each with its max_groups): the chosen
    max_groups, or None if some column of ``must_cover`` is in no set."""
    left = set(must_cover)
    chosen: list[int] = []
    while left:
        best = max(sets, key=lambda s: (len(s[0] & left), -len(s[0]), -s[1]), default=None)
        if best is None or not (best[0] & left):
            return None
        left -= best[0]
        chosen.append(best[1])
    return chosen


# ----------------------------------------------------------------------------------------------
# frames


def _margin_class() -> Any:
    """``dp.polars.Margin`` (the query layer's class), or this module's :class:`FrameMargin`."""
    try:
        return importlib.import_module("opendp_lite.table.margins").Margin
    except ImportError:  # pragma: no cover - the query layer is not installed
        return None


@dataclass(frozen=True)
class LazyFrameDomain(Domain[Any]):
    """Frames with the columns ``series_domains`` (in order), and the public ``margins``.

    Equality compares the columns and the margins.  See the module for what membership
    checks.
    """

    series_domains: tuple[SeriesDomain, ...]
    margins: tuple[FrameMargin, ...] = field(default=())

    def __repr__(self) -> str:
        cols = ", ".join(f"{s.name}: {_short_dtype(s.dtype)}" for s in self.series_domains)
        margins = ", ".join(m.by_repr() for m in self.margins)
        return f"FrameDomain({cols}; margins=[{margins}])"

    @property
    def carrier_type(self) -> str:
        return "LazyFrame"

    @property
    def columns(self) -> list[str]:
        """The column names, in order."""
        return [s.name for s in self.series_domains]

    @property
    def schema(self) -> dict[str, n.DType]:
        """Column name -> data type, as the plan names it."""
        return {s.name: s.dtype for s in self.series_domains}

    def get_series_domain(self, name: str) -> SeriesDomain:
        """The domain of column ``name``.

        Raises:
            InvalidParameter: if there is no such column (the message lists the columns).
        """
        for s in self.series_domains:
            if s.name == name:
                return s
        raise InvalidParameter(f"unrecognized column {name!r}; the columns are {self.columns}")

    def margin_facts(self, by: object) -> FrameMargin:
        """What the margins imply of the frame grouped by ``by`` (OpenDP's rules):

        * ``max_length``: the least of the margins grouping by a subset of ``by`` (a group of
          a finer grouping lies inside one group of a coarser one);
        * ``max_groups``: the product of the ``max_groups`` of margins covering ``by``
          (greedy cover; a grouping by no columns has one group);
        * ``invariant``: the strongest of the margins grouping by a superset of ``by`` (the
          keys or lengths of a coarser grouping follow from those of a finer one).

        Raises:
            InvalidParameter: if ``by`` is not a sequence of columns (a string is refused,
                naming the list it likely means).
        """
        keys = _by_set(by)
        lengths = [m.max_length for m in self.margins if m.by <= keys and m.max_length is not None]
        cover = _min_covering(
            keys, [(m.by, m.max_groups) for m in self.margins if m.max_groups is not None]
        )
        max_groups = None if cover is None else reduce(lambda a, b: a * b, cover, 1)
        invariants = [m.invariant for m in self.margins if keys <= m.by]
        invariant = max(invariants, key=_INVARIANT_RANK.__getitem__, default=None)
        return FrameMargin(keys, min(lengths, default=None), max_groups, invariant)

    def get_margin(self, by: object) -> Any:
        """:meth:`margin_facts` as a ``dp.polars.Margin`` (OpenDP 0.16's ``get_margin``).

        Raises:
            InvalidParameter: if ``by`` is not a sequence of columns.
        """
        facts = self.margin_facts(by)
        cls = _margin_class()
        if cls is None:  # pragma: no cover
            return facts
        assert not isinstance(by, str)  # noqa: S101 - margin_facts refused it
        return cls(
            by=list(by),  # type: ignore[call-overload]
            max_length=facts.max_length,
            max_groups=facts.max_groups,
            invariant=facts.invariant,
        )

    def _normalize(self, x: object) -> Any:
        kind = polars_kind(x)
        if kind in ("LazyFrame", "DataFrame"):
            frame: Any = x
            schema = dict(frame.collect_schema())
            self._check_schema({k: _dtype_or_refuse(v, k) for k, v in schema.items()})
            if kind == "DataFrame":
                for s in self.series_domains:
                    _check_values(s, frame.get_column(s.name))
            return x
        engine = _engine_of(x)
        if engine is None:
            raise NotInDomain(
                f"expected Polars LazyFrame (or a DataFrame, or a frame of a registered table "
                f"engine), got {type(x).__name__}"
            )
        self._check_schema(dict(engine.schema(x)))
        return x

    @property
    def margin_specs(self) -> tuple[_Spec, ...]:
        """The margins as plain values (for serialization; margins by columns only)."""
        return tuple(_margin_spec(m) for m in self.margins)

    def _check_schema(self, schema: dict[str, n.DType]) -> None:
        if list(schema) != self.columns:
            raise NotInDomain(f"the frame's columns are {list(schema)}, not {self.columns}")
        for s in self.series_domains:
            _check_dtype(s, schema[s.name])


def _engine_of(x: object) -> Any:
    try:
        from ..backends.tables import of_table
    except ImportError:  # pragma: no cover
        return None
    return of_table(x)


def lazyframe_domain(series_domains: Sequence[SeriesDomain]) -> LazyFrameDomain:
    """The domain of frames whose columns are ``series_domains`` (distinct names, in order).

    >>> import opendp_lite.prelude as dp
    >>> dp.lazyframe_domain([dp.series_domain("A", dp.atom_domain(T=bool))])
    FrameDomain(A: bool; margins=[])

    Raises:
        InvalidParameter: if an item is not a series domain, or two share a name.
    """
    items = tuple(series_domains)
    if not all(isinstance(s, SeriesDomain) for s in items):
        raise InvalidParameter(f"series_domains must be series_domain(...)s, got {list(items)!r}")
    names = [s.name for s in items]
    if len(set(names)) != len(names):
        raise InvalidParameter(f"column names must be distinct, got {names}")
    return LazyFrameDomain(items)


def lazyframe_domain_from_schema(schema: dict[str, Any]) -> LazyFrameDomain:
    """The widest frame domain of a schema (Polars data types, or the plan's names): every
    column nullable, floats admitting NaN, as OpenDP 0.16 infers it from a LazyFrame.

    Raises:
        NotImplementedForType: for a column type the table API has no domain for.
    """
    domains = []
    for name, dtype in schema.items():
        dt = dtype if isinstance(dtype, str | tuple) else dtype_of_polars(dtype)
        domains.append(SeriesDomain(name, _element_of_dtype(dt), True))
    return lazyframe_domain(domains)


def with_margin(frame_domain: LazyFrameDomain, margin: Any) -> LazyFrameDomain:
    """``frame_domain`` with one more public ``margin`` (a ``dp.polars.Margin``).

    >>> import opendp_lite.prelude as dp
    >>> frame = dp.lazyframe_domain([dp.series_domain("A", dp.atom_domain(T=dp.i32))])
    >>> from types import SimpleNamespace as Margin  # dp.polars.Margin, once the query layer is in
    >>> margin = Margin(by=["A"], max_length=None, max_groups=20, invariant="keys")
    >>> frame = dp.with_margin(frame, margin)
    >>> frame, frame.margin_facts([]).max_groups
    (FrameDomain(A: i32; margins=[{col("A")}]), 1)

    Raises:
        InvalidParameter: if ``frame_domain`` is not a frame domain, if the margin groups by
            a column the frame does not have, or the frame already has a margin with the same
            ``by``.
    """
    if not isinstance(frame_domain, LazyFrameDomain):
        raise InvalidParameter(f"with_margin needs a lazyframe_domain, got {frame_domain!r}")
    m = _as_frame_margin(margin)
    for e in m.by:
        for name in _root_names(e):
            frame_domain.get_series_domain(name)
    if any(old.by == m.by for old in frame_domain.margins):
        raise InvalidParameter(f"margin ({m.by_repr()}) is already present in the domain")
    return LazyFrameDomain(frame_domain.series_domains, (*frame_domain.margins, m))


def _root_names(e: n.Expr) -> list[str]:
    if isinstance(e, n.Col):
        return [e.name]
    return [name for c in n.children(e) for name in _root_names(c)]


# ----------------------------------------------------------------------------------------------
# expressions


@dataclass(frozen=True)
class WildExprDomain(Domain[Any]):
    """Where an expression runs: over ``columns``, row by row (``margin`` None) or per group
    of ``margin.by`` (an aggregation, with what the margin makes public)."""

    columns: tuple[SeriesDomain, ...]
    margin: FrameMargin | None = None

    def __repr__(self) -> str:
        cols = ", ".join(repr(c) for c in self.columns)
        if self.margin is None:
            context = "RowByRow"
        else:
            m = self.margin
            inv = "None" if m.invariant is None else m.invariant.capitalize()
            opt = {v: "None" if v is None else f"Some({v})" for v in (m.max_length, m.max_groups)}
            context = (
                f"Aggregation {{ margin: Margin {{ by: {m.by_repr()}, max_length: "
                f"{opt[m.max_length]}, max_groups: {opt[m.max_groups]}, invariant: {inv} }} }}"
            )
        return f"WildExprDomain {{ columns: [{cols}], context: {context} }}"

    @property
    def carrier_type(self) -> str:
        return "Expr"

    @property
    def frame_domain(self) -> LazyFrameDomain:
        """The frames the expression reads (its columns, and its margin if any)."""
        margins = () if self.margin is None else (self.margin,)
        return LazyFrameDomain(self.columns, margins)

    @property
    def margin_spec(self) -> _Spec | None:
        """The margin as a plain value (for serialization)."""
        return None if self.margin is None else _margin_spec(self.margin)

    def _normalize(self, x: object) -> Any:
        if polars_kind(x) == "Expr" or isinstance(x, (n.Col, n.Lit, n.Alias, n.DPAgg)):
            return x
        raise NotInDomain(f"expected Polars Expr (or an expression node), got {type(x).__name__}")


def wild_expr_domain(columns: Sequence[SeriesDomain], margin: Any = None) -> WildExprDomain:
    """The domain of expressions over ``columns``: row by row, or, given ``margin`` (a
    ``dp.polars.Margin``), an aggregation per group of ``margin.by``.

    >>> import opendp_lite.prelude as dp
    >>> dp.wild_expr_domain([dp.series_domain("A", dp.atom_domain(T=float))])
    WildExprDomain { columns: [SeriesDomain("A", f64)], context: RowByRow }

    Raises:
        InvalidParameter: if the columns are not distinct series domains, or the margin
            groups by an unknown column.
    """
    frame = lazyframe_domain(columns)
    if margin is None:
        return WildExprDomain(frame.series_domains)
    m = _as_frame_margin(margin)
    for e in m.by:
        for name in _root_names(e):
            frame.get_series_domain(name)
    return WildExprDomain(frame.series_domains, m)


# ----------------------------------------------------------------------------------------------
# serialization: each domain is written as the call of its public constructor


def _margin_spec(m: FrameMargin) -> _Spec:
    from ..errors import SerializationError

    if not all(isinstance(e, n.Col) for e in m.by):
        raise SerializationError(
            f"a margin grouping by expressions ({m.by_repr()}) cannot be serialized yet; "
            "group the margin by columns"
        )
    names = tuple(sorted(e.name for e in m.by if isinstance(e, n.Col)))
    return (names, m.max_length, m.max_groups, m.invariant)


def _margin_of_spec(spec: object) -> FrameMargin:
    """A margin from a document.  An ``invariant`` is a claim that no check can verify and that
    removes a release's cost (invariant keys are released without a threshold), so an
    untrusted document may not carry one: the reader vouches with ``trust_claims=True``."""
    from ..core import _UNTRUSTED_DOCUMENT
    from ..errors import SerializationError

    if not (isinstance(spec, tuple) and len(spec) == 4 and isinstance(spec[0], tuple)):
        raise SerializationError(f"a margin is (by, max_length, max_groups, invariant): {spec!r}")
    by, max_length, max_groups, invariant = spec
    if invariant is not None and _UNTRUSTED_DOCUMENT.get():
        raise SerializationError(
            f"the document declares the margin by {list(by)} invariant ({invariant!r}): its keys "
            "would be released without a threshold, a claim a document must not make. Fix: if "
            "you wrote the document, deserialize(text, trust_claims=True)"
        )
    return _as_frame_margin(FrameMargin(_by_set(by), max_length, max_groups, invariant))


def _lazyframe_domain_doc(series_domains: Any, margin_specs: Any = ()) -> LazyFrameDomain:
    """``lazyframe_domain`` then ``with_margin`` for each margin, every check run again."""
    from ..errors import SerializationError

    if not isinstance(margin_specs, tuple):
        raise SerializationError(f"a frame domain's margins are a tuple, got {margin_specs!r}")
    out = lazyframe_domain(series_domains)
    for spec in margin_specs:
        out = with_margin(out, _as_frame_margin_checked(_margin_of_spec(spec)))
    return out


def _as_frame_margin_checked(m: FrameMargin) -> FrameMargin:
    for name in ("max_length", "max_groups"):
        v = getattr(m, name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
            raise InvalidParameter(f"margin {name} must be a non-negative int, got {v!r}")
    if m.invariant not in _INVARIANT_RANK:
        raise InvalidParameter(f"margin invariant must be keys, lengths or None: {m.invariant!r}")
    return m


def _wild_expr_domain_doc(columns: Any, margin_spec: Any = None) -> WildExprDomain:
    out = wild_expr_domain(columns)
    if margin_spec is None:
        return out
    m = _as_frame_margin_checked(_margin_of_spec(margin_spec))
    return wild_expr_domain(columns, m)


def _register() -> None:
    from ..serialization._tables import register_space

    register_space(
        SeriesDomain, "series_domain", series_domain, ("name", "element_domain", "nullable")
    )
    register_space(EnumDomain, "enum_domain", enum_domain, ("categories",))
    register_space(DatetimeDomain, "datetime_domain", datetime_domain, ("time_unit", "time_zone"))
    register_space(
        LazyFrameDomain,
        "lazyframe_domain",
        _lazyframe_domain_doc,
        ("series_domains", "margin_specs"),
    )
    register_space(
        WildExprDomain, "wild_expr_domain", _wild_expr_domain_doc, ("columns", "margin_spec")
    )


_register()
